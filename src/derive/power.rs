//! Power metrics: thermal-throttle events and the share of time throttled per core and per
//! package, with how busy its CPUs were; RAPL watts per zone (energy deltas, one wrap undone).

use super::{finite, Interval};
use crate::sample::{RaplZone, Sample, Throttle, ThrottleScope};
use serde::Serialize;
use std::collections::HashMap;

#[derive(Debug, Clone, Default, Serialize)]
pub struct PowerMetrics {
    pub throttle: Vec<ThrottleMetrics>,
    /// Why `throttle` is empty: no `thermal_throttle` in sysfs, or an older recording.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttle_unknown: Option<String>,
    pub rapl: Vec<RaplMetrics>,
    /// Sum of the `package-N` zones: what the CPU headline shows.
    pub package_watts: Option<f64>,
    /// Why `package_watts` is unknown where there are RAPL zones (not root), or why there
    /// are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rapl_unknown: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ThrottleMetrics {
    pub scope: ThrottleScope,
    pub package: Option<u32>,
    pub core: Option<u32>,
    /// The online CPUs the counters cover (the package's, or the core's SMT siblings).
    pub cpus: Vec<u32>,
    /// Times the limit was hit, per second, over the interval (or the core's own interval
    /// when read in turns).
    pub events_per_s: Option<f64>,
    /// Share of the interval spent throttled, % (`*_total_time_ms` growth).
    pub throttled_pct: Option<f64>,
    /// Mean C0% of `cpus` over the sample interval.
    pub busy_pct: Option<f64>,
    pub count: Option<u64>,
    pub time_ms: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct RaplMetrics {
    pub zone: String,
    pub name: Option<String>,
    pub watts: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

pub fn derive_power(
    iv: Interval,
    prev: Option<&Sample>,
    cur: &Sample,
    cpus: &[super::CpuMetrics],
) -> PowerMetrics {
    let Some(p) = &cur.power else {
        let old = "not in this recording (made before perftop read power)".to_string();
        return PowerMetrics {
            throttle_unknown: Some(old.clone()),
            rapl_unknown: Some(old),
            ..PowerMetrics::default()
        };
    };
    let prev_power = prev.and_then(|s| s.power.as_ref());
    // Looked up by key, not scanned: a 4096-CPU host has a core row per CPU, and scanning
    // the previous rows and the CPUs for each row was 16M comparisons a sample (a fifth of
    // its CPU time).
    let before: HashMap<(ThrottleScope, u32), &Throttle> = prev_power
        .map(|pp| pp.throttle.iter().map(|x| ((x.scope, x.cpu), x)).collect())
        .unwrap_or_default();
    let covers = Covers::of(cpus);
    let throttle: Vec<ThrottleMetrics> = p
        .throttle
        .iter()
        .map(|t| {
            let before = before.get(&(t.scope, t.cpu)).copied();
            derive_throttle(iv, before, t, &covers)
        })
        .collect();
    let throttle_unknown = throttle.is_empty().then(|| match cur.cpu.detail_pending {
        true => "not read yet (the first look at a big host: with the next sample)".into(),
        false => "no thermal_throttle in sysfs (a VM, or a CPU without the counters)".into(),
    });
    let rapl: Vec<RaplMetrics> = p
        .rapl
        .iter()
        .map(|z| {
            let before = prev_power.and_then(|pp| pp.rapl.iter().find(|x| x.zone == z.zone));
            derive_zone(iv, before, z)
        })
        .collect();
    let packages: Vec<&RaplMetrics> = rapl
        .iter()
        .filter(|z| z.zone.matches(':').count() == 1)
        .filter(|z| z.name.as_deref().is_some_and(|n| n.starts_with("package")))
        .collect();
    let package_watts = if packages.is_empty() || packages.iter().any(|z| z.watts.is_none()) {
        None
    } else {
        finite(packages.iter().filter_map(|z| z.watts).sum())
    };
    let rapl_unknown = if rapl.is_empty() {
        Some("no RAPL powercap zones (a VM, or no RAPL driver loaded)".to_string())
    } else if package_watts.is_none() {
        packages
            .iter()
            .find_map(|z| z.unknown.clone())
            .or_else(|| Some("no package zone, or rates from the next sample".into()))
    } else {
        None
    };
    PowerMetrics {
        throttle,
        throttle_unknown,
        rapl,
        package_watts,
        rapl_unknown,
    }
}

/// The online CPUs by package, by core and by id, in CPU order: what a throttle row covers.
struct Covers<'a> {
    package: HashMap<Option<u32>, Vec<&'a super::CpuMetrics>>,
    core: HashMap<(Option<u32>, u32), Vec<&'a super::CpuMetrics>>,
    cpu: HashMap<u32, &'a super::CpuMetrics>,
}

impl<'a> Covers<'a> {
    fn of(cpus: &'a [super::CpuMetrics]) -> Covers<'a> {
        let mut c = Covers {
            package: HashMap::new(),
            core: HashMap::new(),
            cpu: HashMap::new(),
        };
        for m in cpus.iter().filter(|m| m.online) {
            c.package.entry(m.package).or_default().push(m);
            if let Some(core) = m.core {
                c.core.entry((m.package, core)).or_default().push(m);
            }
            c.cpu.insert(m.cpu, m);
        }
        c
    }

    /// A package row: the package's CPUs. A core row: the CPU it was read from and the
    /// core's SMT siblings.
    fn of_row(&self, t: &Throttle) -> Vec<&'a super::CpuMetrics> {
        match t.scope {
            ThrottleScope::Package => self.package.get(&t.package).cloned().unwrap_or_default(),
            ThrottleScope::Core => {
                let mut v: Vec<&super::CpuMetrics> = match t.core {
                    Some(core) => self
                        .core
                        .get(&(t.package, core))
                        .cloned()
                        .unwrap_or_default(),
                    None => Vec::new(),
                };
                if let Some(m) = self.cpu.get(&t.cpu) {
                    if !v.iter().any(|x| x.cpu == m.cpu) {
                        v.push(m);
                        v.sort_by_key(|x| x.cpu);
                    }
                }
                v
            }
        }
    }
}

fn derive_throttle(
    iv: Interval,
    prev: Option<&Throttle>,
    t: &Throttle,
    covers: &Covers,
) -> ThrottleMetrics {
    // Read in turns: over the core's own two reads; else over the sample interval.
    let (iv, before_count, before_time) = match &t.turn {
        Some(turn) => match &turn.before {
            Some(b) => (
                Interval::of_times(Some(&b.at), &turn.at),
                b.count,
                b.time_ms,
            ),
            None => (Interval::default(), None, None),
        },
        None => (iv, prev.and_then(|p| p.count), prev.and_then(|p| p.time_ms)),
    };
    let events_per_s = t.count.and_then(|c| iv.rate(iv.d64(before_count, c)));
    let throttled_pct = t
        .time_ms
        .and_then(|ms| iv.rate(iv.d64(before_time, ms)))
        // ms per second → % of the interval; a clamp for the 1 ms jitter of two reads.
        .map(|ms_per_s| (ms_per_s / 10.0).min(100.0));
    let covered = covers.of_row(t);
    let busy: Vec<f64> = covered.iter().filter_map(|c| c.c0_pct).collect();
    let busy_pct = (!busy.is_empty()).then(|| busy.iter().sum::<f64>() / busy.len() as f64);
    ThrottleMetrics {
        scope: t.scope,
        package: t.package,
        core: t.core,
        cpus: covered.iter().map(|c| c.cpu).collect(),
        events_per_s,
        throttled_pct,
        busy_pct,
        count: t.count,
        time_ms: t.time_ms,
    }
}

fn derive_zone(iv: Interval, prev: Option<&RaplZone>, z: &RaplZone) -> RaplMetrics {
    let watts = z.energy_uj.and_then(|e| {
        let p = if iv.since_boot {
            // A since-boot average of a counter that wraps every few minutes means nothing.
            return None;
        } else {
            prev?.energy_uj?
        };
        let delta = if e >= p {
            e - p
        } else {
            // One wrap at max_energy_range_uj (the counter restarts at 0).
            let max = z.max_energy_range_uj?;
            (max.checked_sub(p)?).checked_add(e)?
        };
        finite(delta as f64 / 1e6 / iv.secs?)
    });
    RaplMetrics {
        zone: z.zone.clone(),
        name: z.name.clone(),
        watts,
        unknown: z.unknown.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::{PowerSample, SampleTime};

    fn at(s: f64) -> SampleTime {
        SampleTime {
            uptime_s: Some(s),
            ..SampleTime::default()
        }
    }

    fn zone(e: u64) -> RaplZone {
        RaplZone {
            zone: "intel-rapl:0".into(),
            name: Some("package-0".into()),
            energy_uj: Some(e),
            max_energy_range_uj: Some(262_143_328_850),
            unknown: None,
        }
    }

    fn sample(t: f64, z: RaplZone, count: u64, ms: u64) -> Sample {
        Sample {
            time: at(t),
            power: Some(PowerSample {
                throttle: vec![Throttle {
                    scope: ThrottleScope::Package,
                    cpu: 0,
                    package: Some(0),
                    count: Some(count),
                    time_ms: Some(ms),
                    ..Throttle::default()
                }],
                rapl: vec![z],
            }),
            ..Sample::default()
        }
    }

    #[test]
    fn watts_and_one_wrap() {
        // 90 J over 2 s = 45 W.
        let (a, b) = (
            sample(10.0, zone(1_000_000), 5, 100),
            sample(12.0, zone(91_000_000), 9, 600),
        );
        let m = derive_power(Interval::between(Some(&a), &b), Some(&a), &b, &[]);
        assert_eq!(m.package_watts, Some(45.0));
        // 2 events/s, 500 ms of 2 s throttled = 25%.
        assert_eq!(m.throttle[0].events_per_s, Some(2.0));
        assert_eq!(m.throttle[0].throttled_pct, Some(25.0));
        // Wrap: 262_143_328_850 - 262_100_000_000 + 46_671_150 = 90 J over 2 s.
        let (a, b) = (
            sample(10.0, zone(262_100_000_000), 5, 100),
            sample(12.0, zone(46_671_150), 5, 100),
        );
        let m = derive_power(Interval::between(Some(&a), &b), Some(&a), &b, &[]);
        assert_eq!(m.package_watts, Some(45.0));
        assert_eq!(m.throttle[0].events_per_s, Some(0.0));
        // Since boot: no watts (the counter wraps), unknown said.
        let m = derive_power(Interval::between(None, &b), None, &b, &[]);
        assert_eq!(m.package_watts, None);
        assert!(m.rapl_unknown.is_some());
    }

    #[test]
    fn unreadable_energy_is_unknown_with_the_reason() {
        let mut z = zone(0);
        z.energy_uj = None;
        z.unknown = Some("energy_uj is readable by root only".into());
        let (a, b) = (sample(10.0, z.clone(), 0, 0), sample(11.0, z, 0, 0));
        let m = derive_power(Interval::between(Some(&a), &b), Some(&a), &b, &[]);
        assert_eq!(m.package_watts, None);
        assert_eq!(
            m.rapl_unknown.as_deref(),
            Some("energy_uj is readable by root only")
        );
    }
}
