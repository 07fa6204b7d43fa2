//! Who a kept process is beside its counters: its cgroup paths (on v1 each controller's
//! own) and, for a task in D, what it waits in (`/proc/PID/wchan`).

use super::{parse_cgroups, CgroupPaths};
use crate::source::Probe;
use foldhash::HashMap;

/// What a task in D waits in: one small read, for the few in D (`None` for other states,
/// and where the kernel says `0`: another user's task without root).
pub(super) fn wchan_of(probe: &mut Probe, pid: u32, state: char) -> Option<String> {
    (state == 'D')
        .then(|| probe.quiet_text(&format!("proc/{pid}"), "wchan"))
        .flatten()
        .map(|w| w.trim().to_string())
        .filter(|w| !w.is_empty() && w != "0" && w.len() <= 128)
}

/// The cgroup paths of a kept process, read once per process (and again with the static
/// caches); none when it vanished or the file says nothing usable.
pub(super) fn cgroup_of(
    probe: &mut Probe,
    cache: &mut HashMap<u32, (u64, CgroupPaths)>,
    pid: u32,
    start: u64,
) -> CgroupPaths {
    if let Some((s, paths)) = cache.get(&pid) {
        if *s == start {
            return paths.clone();
        }
    }
    let paths = probe
        .quiet_text(&format!("proc/{pid}"), "cgroup")
        .map(|t| parse_cgroups(&t))
        .unwrap_or_default();
    cache.insert(pid, (start, paths.clone()));
    paths
}
