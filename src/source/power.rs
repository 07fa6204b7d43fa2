//! Power readers: thermal-throttle counters (one CPU per core and one per package, from
//! `cpuN/thermal_throttle/`) and RAPL energy counters (`class/powercap/intel-rapl:*`).
//!
//! The package counters are the same file on every CPU of a package and the core counters the
//! same on SMT siblings, so one CPU of each is read: on a 2-socket, 56-core host that is 114
//! reads of 2 files, not 224. Where per-CPU detail is read in turns (`turns`), core counters
//! follow the same schedule and carry the read before, so rates stay exact over each core's
//! own interval; package counters, a handful of files, are read every sample.

use super::{turns, Probe};
use crate::root::ReadError;
use crate::sample::{
    CpuSample, PowerSample, RaplZone, SampleTime, Throttle, ThrottleRead, ThrottleScope,
    ThrottleTurn,
};
use std::collections::{BTreeMap, BTreeSet};

const CPU_DIR: &str = "sys/devices/system/cpu";
const POWERCAP: &str = "sys/class/powercap";

/// The last read of each core's counters when they are read in turns, by CPU read.
#[derive(Debug, Default)]
pub(crate) struct PowerState {
    last: BTreeMap<u32, ThrottleRead>,
    before: BTreeMap<u32, ThrottleRead>,
}

impl PowerState {
    pub(crate) fn forget(&mut self) {
        self.last.clear();
        self.before.clear();
    }
}

pub(crate) fn read_power(
    probe: &mut Probe,
    cpu: &CpuSample,
    time: &SampleTime,
    state: &mut PowerState,
) -> PowerSample {
    PowerSample {
        throttle: read_throttle(probe, cpu, time, state),
        rapl: read_rapl(probe),
    }
}

/// Which of the throttle files this kernel has (`*_total_time_ms` came in Linux 5.18).
struct Files {
    core_count: bool,
    core_time: bool,
    package_count: bool,
    package_time: bool,
}

fn read_throttle(
    probe: &mut Probe,
    cpu: &CpuSample,
    time: &SampleTime,
    state: &mut PowerState,
) -> Vec<Throttle> {
    let online: Vec<_> = cpu.cpus.iter().filter(|c| c.online).collect();
    // The first look leaves per-CPU detail for the next sample; counters start there.
    if cpu.detail_pending {
        return Vec::new();
    }
    let Some(first) = online.first() else {
        return Vec::new();
    };
    let dir = format!("{CPU_DIR}/cpu{}/thermal_throttle", first.id);
    if !probe.static_is_dir(&dir) {
        state.forget();
        return Vec::new();
    }
    let names = probe.static_list_dir(&dir);
    let has = |n: &str| names.iter().any(|x| x == n);
    let files = Files {
        core_count: has("core_throttle_count"),
        core_time: has("core_throttle_total_time_ms"),
        package_count: has("package_throttle_count"),
        package_time: has("package_throttle_total_time_ms"),
    };
    let every = cpu.detail_every.unwrap_or(1);
    let sample_no = probe.tier.sample_no;
    let mut out = Vec::new();
    let mut cores = BTreeSet::new();
    let mut packages = BTreeSet::new();
    // `i` is the CPU's index in the sample's CPU list, as the idle-state turns count it.
    for (i, c) in cpu.cpus.iter().enumerate().filter(|(_, c)| c.online) {
        // SMT siblings share a core's counters: the first CPU of each core is read.
        let core_key = (
            c.package,
            c.die,
            c.core.map_or(u64::from(c.id) << 32, u64::from),
        );
        if (files.core_count || files.core_time) && cores.insert(core_key) {
            let due =
                every <= 1 || !state.last.contains_key(&c.id) || turns::due(i, sample_no, every);
            let dir = format!("{CPU_DIR}/cpu{}/thermal_throttle", c.id);
            let mut t = Throttle {
                scope: ThrottleScope::Core,
                cpu: c.id,
                package: c.package,
                core: c.core,
                ..Throttle::default()
            };
            if every <= 1 {
                state.last.remove(&c.id);
                state.before.remove(&c.id);
                t.count = counter(probe, &dir, "core_throttle_count", files.core_count);
                t.time_ms = counter(probe, &dir, "core_throttle_total_time_ms", files.core_time);
            } else {
                if due {
                    let read = ThrottleRead {
                        at: time.clone(),
                        count: counter(probe, &dir, "core_throttle_count", files.core_count),
                        time_ms: counter(
                            probe,
                            &dir,
                            "core_throttle_total_time_ms",
                            files.core_time,
                        ),
                    };
                    if let Some(old) = state.last.insert(c.id, read) {
                        state.before.insert(c.id, old);
                    }
                }
                if let Some(last) = state.last.get(&c.id) {
                    t.count = last.count;
                    t.time_ms = last.time_ms;
                    t.turn = Some(ThrottleTurn {
                        at: last.at.clone(),
                        before: state.before.get(&c.id).cloned(),
                    });
                }
            }
            out.push(t);
        }
        if (files.package_count || files.package_time)
            && packages.insert(c.package.unwrap_or(u32::MAX - c.id))
        {
            let dir = format!("{CPU_DIR}/cpu{}/thermal_throttle", c.id);
            out.push(Throttle {
                scope: ThrottleScope::Package,
                cpu: c.id,
                package: c.package,
                core: None,
                count: counter(probe, &dir, "package_throttle_count", files.package_count),
                time_ms: counter(
                    probe,
                    &dir,
                    "package_throttle_total_time_ms",
                    files.package_time,
                ),
                turn: None,
            });
        }
    }
    // Packages first, then cores, each by CPU: a stable order for pairing and for the eye.
    out.sort_by_key(|t| (std::cmp::Reverse(t.scope), t.cpu));
    out
}

/// A counter file the listing said is there (no ENOENT probing for the others).
fn counter(probe: &mut Probe, dir: &str, name: &str, listed: bool) -> Option<u64> {
    if listed {
        probe.u64_in(dir, name)
    } else {
        None
    }
}

/// `intel-rapl:N` and `intel-rapl:N:M` zones. The MMIO interface (`intel-rapl-mmio:N`) is
/// left out: on Tiger Lake and later it repeats the package zone, and adding both would count
/// the package twice.
fn read_rapl(probe: &mut Probe) -> Vec<RaplZone> {
    let mut zones: Vec<String> = probe
        .static_list_dir(POWERCAP)
        .iter()
        .filter(|n| {
            n.strip_prefix("intel-rapl:")
                .is_some_and(|r| !r.is_empty() && r.split(':').all(|p| p.parse::<u32>().is_ok()))
        })
        .cloned()
        .collect();
    zones.sort_by_key(|z| zone_key(z));
    zones
        .into_iter()
        .map(|zone| {
            let dir = format!("{POWERCAP}/{zone}");
            let name = probe.static_line(&format!("{dir}/name"));
            let max_energy_range_uj = probe.static_u64(&format!("{dir}/max_energy_range_uj"));
            let (energy_uj, unknown) = match probe.try_text(&dir, "energy_uj") {
                Ok(text) => match text.trim().parse::<u64>() {
                    Ok(v) => (Some(v), None),
                    Err(_) => {
                        let what = format!("not a number: {:?}", text.trim());
                        probe.note(&format!("{dir}/energy_uj"), what.clone());
                        (None, Some(what))
                    }
                },
                // Readable by root only since Linux 5.10 (the PLATYPUS side channel).
                Err(ReadError::Denied) => (None, Some("energy_uj is readable by root only".into())),
                Err(ReadError::Missing) => (None, Some("no energy_uj".into())),
                Err(e) => (None, Some(e.to_string())),
            };
            RaplZone {
                zone,
                name,
                energy_uj,
                max_energy_range_uj,
                unknown,
            }
        })
        .collect()
}

/// `intel-rapl:1:0` → [1, 0], for numeric order (`:10` after `:9`).
fn zone_key(zone: &str) -> Vec<u32> {
    zone.split(':')
        .skip(1)
        .filter_map(|p| p.parse().ok())
        .collect()
}
