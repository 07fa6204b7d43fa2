//! Power as the kernel counts it: thermal-throttle events and time per core and per package
//! (`cpuN/thermal_throttle/`), and RAPL energy counters (`/sys/class/powercap/intel-rapl:*`).
//! Raw cumulative counters only; derive turns them into rates and watts.

use super::SampleTime;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PowerSample {
    /// One entry per core (read from its first online CPU) and one per package; empty where
    /// the kernel has no `thermal_throttle` directory (VMs, most non-Intel CPUs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throttle: Vec<Throttle>,
    /// Top-level RAPL zones (`package-N`, `psys`) and their subzones (`core`, `uncore`,
    /// `dram`), in zone order; empty where there is no powercap RAPL driver.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rapl: Vec<RaplZone>,
}

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ThrottleScope {
    /// `core_throttle_*`: this core's own thermal limit (PROCHOT on the core).
    #[default]
    Core,
    /// `package_throttle_*`: the package limit, the same counters on every CPU of the package.
    Package,
}

impl ThrottleScope {
    pub fn as_str(self) -> &'static str {
        match self {
            ThrottleScope::Core => "core",
            ThrottleScope::Package => "package",
        }
    }
}

/// One core's or package's throttle counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Throttle {
    pub scope: ThrottleScope,
    /// The CPU whose `thermal_throttle/` was read.
    pub cpu: u32,
    pub package: Option<u32>,
    pub core: Option<u32>,
    /// `*_throttle_count`: times the limit was hit since boot.
    pub count: Option<u64>,
    /// `*_throttle_total_time_ms`: time spent throttled since boot (Linux 5.18+).
    pub time_ms: Option<u64>,
    /// On a big host core counters are read in turns with the CPU's other detail: when this
    /// read was taken and the read before it, so the rate is over the core's own interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<ThrottleTurn>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThrottleTurn {
    pub at: SampleTime,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<ThrottleRead>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThrottleRead {
    pub at: SampleTime,
    pub count: Option<u64>,
    pub time_ms: Option<u64>,
}

/// One powercap RAPL zone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RaplZone {
    /// The sysfs directory name: `intel-rapl:0`, `intel-rapl:0:1`.
    pub zone: String,
    /// `name`: `package-0`, `core`, `uncore`, `dram`, `psys`.
    pub name: Option<String>,
    /// `energy_uj`, cumulative µJ; wraps at `max_energy_range_uj`.
    pub energy_uj: Option<u64>,
    pub max_energy_range_uj: Option<u64>,
    /// Why `energy_uj` is unknown (it is readable by root only since Linux 5.10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

impl RaplZone {
    /// A top-level zone (`intel-rapl:N`), not a subzone of one.
    pub fn is_top(&self) -> bool {
        self.zone.matches(':').count() == 1
    }
}
