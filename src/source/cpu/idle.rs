//! A CPU's idle states (`cpuN/cpuidle/stateK/`): their names and limits, read once per
//! refresh, and their counters, read in one file a sample while a state is not entered.

use super::quiet_u64;
use crate::sample::IdleState;
use crate::source::{Cached, Probe};

#[derive(Debug, Clone)]
pub(super) struct StateStatic {
    index: u32,
    dir: String,
    name: String,
    latency_us: Option<u64>,
    target_residency_us: Option<u64>,
    /// `disable`: set by an administrator (`cpupower idle-set`), never by perftop; a setting.
    disable: Option<Cached<u64>>,
    /// The last read's `usage`, `time`, `above` and `below` (see `idle_counters`).
    last: Option<[u64; 4]>,
}

/// The named idle states of one CPU, with what does not change: name, exit latency and
/// target residency (a state without a name is skipped).
pub(super) fn idle_state_names(probe: &mut Probe, cpu_dir: &str) -> Vec<StateStatic> {
    let base = format!("{cpu_dir}/cpuidle");
    let mut states = Vec::new();
    for index in probe.root.numbered_entries(&base, "state") {
        let dir = format!("{base}/state{index}");
        let Some(name) = probe.line_in(&dir, "name") else {
            continue;
        };
        states.push(StateStatic {
            index,
            latency_us: quiet_u64(probe, &dir, "latency"),
            target_residency_us: quiet_u64(probe, &dir, "residency"),
            name,
            dir,
            disable: None,
            last: None,
        });
    }
    states
}

pub(super) fn read_idle_states(
    probe: &mut Probe,
    cpu: u32,
    states: &mut [StateStatic],
) -> Vec<IdleState> {
    states
        .iter_mut()
        .map(|s| {
            let [usage, time_us, above, below] = idle_counters(probe, s);
            IdleState {
                index: s.index,
                name: s.name.clone(),
                latency_us: s.latency_us,
                target_residency_us: s.target_residency_us,
                usage,
                time_us,
                above,
                below,
                // `disable` is a bitmask-ish integer on some kernels: any non-zero is disabled.
                disabled: probe
                    .setting_in(
                        &mut s.disable,
                        &s.dir,
                        "disable",
                        u64::from(cpu) + u64::from(s.index),
                        crate::source::parse_u64,
                    )
                    .map(|v| v != 0),
            }
        })
        .collect()
}

/// An idle state's `usage`, `time`, `above` and `below`. The kernel adds to all four at
/// once, when a CPU leaves the state (`cpuidle_enter_state`), so while `usage` has not moved
/// since the last read neither have the others: their last read is theirs now, and a state
/// no CPU enters (POLL on a VM, a deep C-state on a busy host, a disabled one) costs one
/// file a sample instead of four.
fn idle_counters(probe: &mut Probe, s: &mut StateStatic) -> [Option<u64>; 4] {
    let usage = probe.u64_in(&s.dir, "usage");
    if let (Some(u), Some(last)) = (usage, s.last) {
        if last[0] == u {
            return last.map(Some);
        }
    }
    let read = [
        usage,
        probe.u64_in(&s.dir, "time"),
        probe.u64_in(&s.dir, "above"),
        probe.u64_in(&s.dir, "below"),
    ];
    s.last = match read {
        [Some(a), Some(b), Some(c), Some(d)] => Some([a, b, c, d]),
        _ => None,
    };
    read
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::root::Root;
    use std::fs;

    fn write_state(base: &std::path::Path, k: u32, name: &str, counters: [u64; 4]) {
        let d = base.join(format!("sys/devices/system/cpu/cpu0/cpuidle/state{k}"));
        fs::create_dir_all(&d).expect("mkdir");
        fs::write(d.join("name"), format!("{name}\n")).expect("name");
        for (file, v) in ["usage", "time", "above", "below"].iter().zip(counters) {
            fs::write(d.join(file), format!("{v}\n")).expect("counter");
        }
    }

    /// A state whose `usage` did not move is one file a sample, its other counters as last
    /// read; one whose `usage` moved is read in full.
    #[test]
    fn a_state_not_entered_costs_one_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        write_state(dir.path(), 0, "POLL", [0, 0, 0, 0]);
        write_state(dir.path(), 1, "C1", [100, 5_000, 3, 7]);
        let mut probe = Probe::new(Root::new(dir.path()));
        let mut states = idle_state_names(&mut probe, "sys/devices/system/cpu/cpu0");
        assert_eq!(states.len(), 2);
        let counters = |s: &[IdleState]| -> Vec<_> {
            s.iter()
                .map(|s| (s.usage, s.time_us, s.above, s.below))
                .collect()
        };
        let first = read_idle_states(&mut probe, 0, &mut states);
        assert_eq!(
            counters(&first),
            [
                (Some(0), Some(0), Some(0), Some(0)),
                (Some(100), Some(5_000), Some(3), Some(7))
            ]
        );
        // C1 entered 20 more times; POLL not at all.
        write_state(dir.path(), 1, "C1", [120, 9_000, 4, 9]);
        let before = probe.root.opened();
        let second = read_idle_states(&mut probe, 0, &mut states);
        let opened = probe.root.opened().since(before);
        assert_eq!(
            counters(&second),
            [
                (Some(0), Some(0), Some(0), Some(0)),
                (Some(120), Some(9_000), Some(4), Some(9))
            ]
        );
        // POLL's usage, C1's four (the `disable` settings are not due).
        assert_eq!(opened.files - opened.missing, 5);
        // A counter that cannot be read is read again next time, not taken from the cache.
        fs::remove_file(
            dir.path()
                .join("sys/devices/system/cpu/cpu0/cpuidle/state1/above"),
        )
        .expect("rm");
        write_state(dir.path(), 1, "C1", [130, 9_500, 4, 9]);
        fs::remove_file(
            dir.path()
                .join("sys/devices/system/cpu/cpu0/cpuidle/state1/above"),
        )
        .expect("rm");
        let third = read_idle_states(&mut probe, 0, &mut states);
        assert_eq!(counters(&third)[1], (Some(130), Some(9_500), None, Some(9)));
        let fourth = read_idle_states(&mut probe, 0, &mut states);
        assert_eq!(
            counters(&fourth)[1],
            (Some(130), Some(9_500), None, Some(9))
        );
    }
}
