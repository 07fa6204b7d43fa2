//! When a sample was read (its clocks), "seconds between two samples" (the one definition the
//! readers' turn-taking and derive's rates share), and how old a sample's static settings may be.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleTime {
    /// Seconds since boot from the root's `proc/uptime` (iostat's time base).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uptime_s: Option<f64>,
    /// CLOCK_BOOTTIME in ns, only when reading the live system (finer than uptime's 10 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boottime_ns: Option<u64>,
    /// Wall clock, ms since the Unix epoch.
    pub wall_ms: i64,
}

/// Files that do not change while the system runs (names, topology, hardware limits) are read
/// once and re-read after this many samples, in case a driver was loaded or a CPU hot-added.
pub const STATIC_REFRESH_SAMPLES: u32 = 300;
// (A sample's static settings are that many samples old at most: the panes say so.)

/// Shortest interval between two samples that counts as one (see `SampleTime::secs_since`).
pub const MIN_INTERVAL_S: f64 = 1e-3;

impl SampleTime {
    /// Seconds from `prev` to this read: the boot clock when both have it, else
    /// `/proc/uptime`. `None` when either is unknown or the gap is under `MIN_INTERVAL_S`:
    /// the clocks perftop reads tick in ms (uptime in 10 ms), and dividing by a subnormal gap
    /// gives inf/NaN rates and messages. The one definition of "seconds between two samples"
    /// for the readers (turn-taking) and derive (rates).
    pub fn secs_since(&self, prev: &SampleTime) -> Option<f64> {
        let secs = match (prev.boottime_ns, self.boottime_ns) {
            (Some(a), Some(b)) => Some((b as f64 - a as f64) / 1e9),
            _ => match (prev.uptime_s, self.uptime_s) {
                (Some(a), Some(b)) => Some(b - a),
                _ => None,
            },
        };
        secs.filter(|s| s.is_finite() && *s >= MIN_INTERVAL_S)
    }
}
