//! Filesystem space and temperatures as shown: the sysinfo thread's latest reads (see
//! `source::filesystems`) with used %, their age, and a note when they are missing or old.
//!
//! These are gauges, not rates: they come from the current sample alone. What they cannot come
//! from is a fixture root (nothing there to `statvfs`) or a recording made before perftop read
//! them: unknown, with the reason, never an empty disk.

use crate::sample::{ReadAt, Sample, Sensor};
use serde::Serialize;

/// Why a `--root` fixture or an older recording has no filesystems or sensors.
pub const LIVE_ONLY: &str = "live host only";

/// A read older than this many of the thread's periods is stale: the thread is stuck, and the
/// only call in its loop that can stick is `statvfs` on a mount that does not answer.
pub const STALE_PERIODS: u64 = 3;

#[derive(Debug, Clone, Default, Serialize)]
pub struct FsMetrics {
    pub mount: String,
    pub device: String,
    pub fstype: String,
    pub size_bytes: u64,
    /// size − free (`f_bfree`), as df's "Used".
    pub used_bytes: u64,
    /// What an unprivileged writer can still use (`f_bavail`), as df's "Avail".
    pub avail_bytes: u64,
    /// used / (used + avail), as df's Use% (not rounded up): root's reserve is no room for the
    /// writers that fill a filesystem, so 100% means they get ENOSPC.
    pub used_pct: Option<f64>,
    /// Inodes in use as a share of all, %: a filesystem out of inodes is full too.
    pub inodes_used_pct: Option<f64>,
    pub read_only: bool,
    /// Seconds since the thread read these figures.
    pub age_s: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct TempMetrics {
    pub label: String,
    pub celsius: Option<f64>,
    pub max_c: Option<f64>,
    pub critical_c: Option<f64>,
}

/// What the CPU headline shows: the hottest CPU sensor of a fresh read (label, °C), or why
/// there is none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hottest {
    pub sensor: Option<(String, f64)>,
    pub unknown: Option<String>,
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// (age of the read in s, why it is missing or stale) for one of the thread's reads.
fn freshness(what: &str, at: &ReadAt, now_ns: Option<u64>) -> (Option<f64>, Option<String>) {
    let Some(now) = now_ns else {
        return (None, None);
    };
    let stale_ns = at.period_ms.saturating_mul(1_000_000 * STALE_PERIODS);
    match at.read_ns {
        Some(read) => {
            let age = now.saturating_sub(read);
            let note = (age > stale_ns).then(|| {
                format!(
                    "{what}: not refreshed for {:.0} s (a mount is not answering)",
                    secs(age)
                )
            });
            (Some(secs(age)), note)
        }
        None => {
            let waited = now.saturating_sub(at.started_ns);
            let note = if waited > stale_ns {
                format!(
                    "{what}: no answer for {:.0} s since perftop started (a mount is not answering)",
                    secs(waited)
                )
            } else {
                format!("{what}: first read under way")
            };
            (None, Some(note))
        }
    }
}

pub fn derive_filesystems(cur: &Sample) -> (Vec<FsMetrics>, Option<String>) {
    let Some(f) = &cur.filesystems else {
        return (Vec::new(), Some(format!("filesystems: {LIVE_ONLY}")));
    };
    let (age_s, note) = freshness("filesystems", &f.at, cur.time.boottime_ns);
    let rows = f
        .mounts
        .iter()
        .map(|m| {
            let used = m.size_bytes.saturating_sub(m.free_bytes);
            let room = used.saturating_add(m.avail_bytes);
            let inodes_used = m
                .inodes
                .zip(m.inodes_free)
                .and_then(|(n, free)| super::ratio(n.saturating_sub(free) as f64, n as f64));
            FsMetrics {
                mount: m.mount.clone(),
                device: m.device.clone(),
                fstype: m.fstype.clone(),
                size_bytes: m.size_bytes,
                used_bytes: used,
                avail_bytes: m.avail_bytes,
                used_pct: super::ratio(used as f64, room as f64).map(|r| r * 100.0),
                inodes_used_pct: inodes_used.map(|r| r * 100.0),
                read_only: m.read_only,
                age_s,
            }
        })
        .collect();
    (rows, note)
}

/// Sensors that measure the CPU itself (not a disk's or the board's): Intel's package and
/// cores, AMD's Tctl/Tdie, the ACPI/ARM SoC zones named after the CPU.
fn is_cpu_sensor(label: &str) -> bool {
    let l = label.to_ascii_lowercase();
    [
        "coretemp", "k10temp", "zenpower", "package", "tctl", "tdie", "cpu", "x86_pkg", "soc",
    ]
    .iter()
    .any(|k| l.contains(k))
}

pub fn derive_temperatures(cur: &Sample) -> (Vec<TempMetrics>, Hottest) {
    let Some(t) = &cur.temperatures else {
        let none = Hottest {
            sensor: None,
            unknown: Some(format!("temperatures: {LIVE_ONLY}")),
        };
        return (Vec::new(), none);
    };
    let (_, stale) = freshness("temperatures", &t.at, cur.time.boottime_ns);
    let rows: Vec<TempMetrics> = t.sensors.iter().map(metrics).collect();
    let hottest = rows
        .iter()
        .filter(|r| is_cpu_sensor(&r.label))
        .filter_map(|r| Some((r.label.clone(), r.celsius?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let why = match (&stale, &hottest, t.at.read_ns) {
        (Some(s), _, _) => Some(s.clone()),
        (None, None, Some(_)) if t.sensors.is_empty() => {
            Some("temperatures: no hwmon sensor on this host".to_string())
        }
        (None, None, Some(_)) => Some("temperatures: no CPU sensor among the hwmon ones".into()),
        _ => None,
    };
    let shown = Hottest {
        // A stale temperature says nothing about the MHz now.
        sensor: hottest.filter(|_| stale.is_none()),
        unknown: why,
    };
    (rows, shown)
}

fn metrics(s: &Sensor) -> TempMetrics {
    TempMetrics {
        label: s.label.clone(),
        celsius: s.celsius,
        max_c: s.max_c,
        critical_c: s.critical_c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::{Filesystem, Filesystems, Temperatures};

    fn sample(read_ns: Option<u64>, now_ns: u64) -> Sample {
        let mut s = Sample::default();
        s.time.boottime_ns = Some(now_ns);
        let at = ReadAt {
            read_ns,
            started_ns: 0,
            period_ms: 5000,
        };
        s.filesystems = Some(Filesystems {
            at,
            mounts: vec![Filesystem {
                mount: "/".into(),
                size_bytes: 1000,
                free_bytes: 300,
                avail_bytes: 250,
                inodes: Some(100),
                inodes_free: Some(75),
                ..Filesystem::default()
            }],
        });
        s.temperatures = Some(Temperatures {
            at,
            sensors: vec![
                Sensor {
                    label: "nvme Composite".into(),
                    celsius: Some(99.0),
                    ..Sensor::default()
                },
                Sensor {
                    label: "coretemp Package id 0".into(),
                    celsius: Some(87.0),
                    ..Sensor::default()
                },
            ],
        });
        s
    }

    #[test]
    fn used_is_df_used_over_used_plus_avail() {
        let (rows, note) = derive_filesystems(&sample(Some(1_000_000_000), 3_000_000_000));
        assert_eq!(note, None);
        let r = &rows[0];
        assert_eq!((r.used_bytes, r.avail_bytes), (700, 250));
        // 700 / (700 + 250): the 50 reserved bytes are no room for a writer.
        assert!((r.used_pct.unwrap_or(0.0) - 73.684_210_526).abs() < 1e-6);
        assert_eq!(r.inodes_used_pct, Some(25.0));
        assert_eq!(r.age_s, Some(2.0));
    }

    #[test]
    fn old_missing_and_fixture_reads_say_why() {
        // 15 s is three 5 s periods: still fresh; just over is stale.
        let (_, note) = derive_filesystems(&sample(Some(0), 15_000_000_000));
        assert_eq!(note, None);
        let (rows, note) = derive_filesystems(&sample(Some(0), 40_000_000_000));
        assert_eq!(rows.len(), 1, "old figures are kept, and said to be old");
        assert_eq!(
            note.as_deref(),
            Some("filesystems: not refreshed for 40 s (a mount is not answering)")
        );
        let (_, note) = derive_filesystems(&sample(None, 1_000_000_000));
        assert_eq!(note.as_deref(), Some("filesystems: first read under way"));
        let (_, note) = derive_filesystems(&sample(None, 20_000_000_000));
        assert!(note.is_some_and(|n| n.contains("no answer for 20 s")));
        let (rows, note) = derive_filesystems(&Sample::default());
        assert!(rows.is_empty());
        assert_eq!(note.as_deref(), Some("filesystems: live host only"));
    }

    #[test]
    fn hottest_cpu_sensor_only_while_fresh() {
        let (rows, n) = derive_temperatures(&sample(Some(0), 1_000_000_000));
        assert_eq!(rows.len(), 2);
        assert_eq!(n.sensor, Some(("coretemp Package id 0".into(), 87.0)));
        assert_eq!(n.unknown, None);
        let (_, n) = derive_temperatures(&sample(Some(0), 60_000_000_000));
        assert_eq!(n.sensor, None, "a stale temperature is not shown as now");
        let mut s = sample(Some(0), 1_000_000_000);
        if let Some(t) = &mut s.temperatures {
            t.sensors.clear();
        }
        let (_, n) = derive_temperatures(&s);
        assert_eq!(
            n.unknown.as_deref(),
            Some("temperatures: no hwmon sensor on this host")
        );
        let (_, n) = derive_temperatures(&Sample::default());
        assert_eq!(n.unknown.as_deref(), Some("temperatures: live host only"));
    }
}
