//! cgroups: which hierarchies are mounted (`proc/self/mountinfo` through the root, so a fixture
//! works), a bounded set of control groups in them, and per group its CPU, throttling, memory,
//! I/O and PSI counters and its limits.
//!
//! The set is the top-level groups, their children, and under a `kubepods*` group the QoS
//! classes, pods and containers (depth 4), at most `MAX_GROUPS`; when there are more, the groups
//! that used the most CPU since the last listing are kept and the rest counted (`left_out`).
//! Listing walks directories, so it is done every `RELIST_SAMPLES` samples and as soon as a
//! group vanished (a container stopped), not every sample; the mounts are read again when the
//! reader's caches are dropped or a hierarchy's directory is gone.
//!
//! Every per-group file is read quietly: a group can be removed between listing and reading
//! (ENOENT, ENODEV), which is no problem, only unknown. A file that is there but garbled is
//! listed in the sample's problems.

mod layout;
mod listing;

pub use layout::{parse_mountinfo, Mount, Mounts};

use super::parse::dec;
use super::pressure;
use super::Probe;
use crate::sample::{
    CgroupIo, CgroupPressure, CgroupSample, CgroupVersion, Cgroups, Limit, PsiResource,
};
use foldhash::HashMap;
use layout::{detect, mounted, Layout};
use listing::list;
use std::collections::HashSet;

/// Most groups read per sample (each is ~10 small reads).
pub const MAX_GROUPS: usize = 64;
/// Samples between two listings of the hierarchy.
pub const RELIST_SAMPLES: u32 = 10;
/// Most directories one listing looks at (a host with 10,000 pods is not walked whole).
const MAX_CANDIDATES: usize = 4096;
/// How deep under a `kubepods*` top-level group the listing goes: QoS class, pod, container.
const KUBEPODS_DEPTH: usize = 4;

/// What the reader keeps between samples: the layout and the listed groups.
#[derive(Debug, Default)]
pub struct CgroupCache {
    layout: Option<Layout>,
    /// Paths of the chosen groups relative to the hierarchy root, sorted.
    groups: Vec<String>,
    left_out: u32,
    /// Samples read since the last listing (`None`: list now).
    since_listing: Option<u32>,
    /// CPU usage (µs) of every candidate at the last listing, to rank by growth.
    usage_at_listing: HashMap<String, u64>,
    /// `mount dir/group` of every group the last listing found, per hierarchy.
    present: HashSet<String>,
}

impl CgroupCache {
    /// Forgets everything: mounts and groups are found again on the next sample.
    pub fn forget(&mut self) {
        *self = CgroupCache::default();
    }
}

/// The cgroups of one sample. `mem_total_kb` tells a real v1 memory limit from "none".
pub fn read_cgroups(
    probe: &mut Probe,
    cache: &mut CgroupCache,
    mem_total_kb: Option<u64>,
) -> Cgroups {
    let layout = match &cache.layout {
        Some(l) => l.clone(),
        None => {
            let l = detect(probe);
            cache.layout = Some(l.clone());
            cache.since_listing = None;
            l
        }
    };
    let version = match &layout {
        Layout::None => return Cgroups::default(),
        Layout::V1(_) => CgroupVersion::V1,
        Layout::V2(_) => CgroupVersion::V2,
    };
    if cache.since_listing.is_none_or(|n| n >= RELIST_SAMPLES) {
        if !mounted(probe, &layout) {
            // Unmounted (or a fixture without the tree): look again next time.
            cache.forget();
            return Cgroups {
                version: Some(version),
                ..Cgroups::default()
            };
        }
        list(probe, cache, &layout);
        cache.since_listing = Some(0);
    }
    cache.since_listing = cache.since_listing.map(|n| n + 1);
    let mut groups = Vec::with_capacity(cache.groups.len());
    for rel in &cache.groups {
        let g = match &layout {
            Layout::V2(m) => read_v2(probe, m, rel, mem_total_kb),
            Layout::V1(m) => read_v1(probe, m, rel, mem_total_kb, &cache.present),
            Layout::None => None,
        };
        match g {
            Some(g) => groups.push(g),
            // Gone (a container stopped): list again on the next sample.
            None => cache.since_listing = None,
        }
    }
    Cgroups {
        version: Some(version),
        groups,
        left_out: cache.left_out,
        turn: None,
        at: None,
    }
}

/// `path` of a group as its sample names it: the hierarchy's root joined with `rel`.
fn display_path(root: &str, rel: &str) -> String {
    format!("{}/{rel}", root.trim_end_matches('/'))
}

/// The values of `keys` in `key value` lines (`cpu.stat`, `memory.events`, `memory.stat`,
/// `memory.oom_control`), in the order asked; absent or garbled keys are `None`.
pub fn key_values<const N: usize>(text: &str, keys: &[&str; N]) -> [Option<u64>; N] {
    let mut out = [None; N];
    for line in text.lines() {
        let mut w = line.split_ascii_whitespace();
        let (Some(k), Some(v), None) = (w.next(), w.next(), w.next()) else {
            continue;
        };
        if let Some(i) = keys.iter().position(|x| *x == k) {
            out[i] = dec(v);
        }
    }
    out
}

/// A limit file's first word: `max`, or a number.
pub fn parse_limit(word: &str) -> Option<Limit<u64>> {
    match word {
        "max" => Some(Limit::Max),
        w => dec(w).map(Limit::Value),
    }
}

/// v2 `cpu.max`: `max 100000` or `20000 100000` (quota, period in µs).
pub fn parse_cpu_max(text: &str) -> Option<(Limit<u64>, u64)> {
    let mut w = text.split_ascii_whitespace();
    let quota = parse_limit(w.next()?)?;
    let period = dec(w.next()?).filter(|p| *p > 0)?;
    w.next().is_none().then_some((quota, period))
}

/// v1 `cpu.cfs_quota_us`: -1 (no quota) or a positive number of µs.
pub fn parse_cfs_quota(text: &str) -> Option<Limit<u64>> {
    match text.trim() {
        "-1" => Some(Limit::Max),
        t => dec(t).map(Limit::Value),
    }
}

/// v2 `io.stat`: `8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0` per device, summed.
/// `None` when a line is not of that shape (an empty file is no I/O yet: all zero).
pub fn parse_io_stat(text: &str) -> Option<CgroupIo> {
    let mut io = CgroupIo::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut w = line.split_ascii_whitespace();
        let dev = w.next()?;
        let (major, minor) = dev.split_once(':')?;
        dec(major)?;
        dec(minor)?;
        for kv in w {
            let (k, v) = kv.split_once('=')?;
            let slot = match k {
                "rbytes" => &mut io.rbytes,
                "wbytes" => &mut io.wbytes,
                "rios" => &mut io.rios,
                "wios" => &mut io.wios,
                _ => continue,
            };
            *slot = slot.saturating_add(dec(v)?);
        }
    }
    Some(io)
}

/// A file of one number; garbled is listed and unknown.
fn number(probe: &mut Probe, dir: &str, name: &str) -> Option<u64> {
    let text = probe.quiet_text(dir, name)?;
    let t = text.trim();
    let v = dec(t);
    if v.is_none() {
        let what = format!("not a number: {:?}", super::parse::clip(t));
        probe.note(&format!("{dir}/{name}"), what);
    }
    v
}

/// A file parsed by `f`; garbled (`f` gives `None`) is listed and unknown.
fn parsed<T>(
    probe: &mut Probe,
    dir: &str,
    name: &str,
    f: impl FnOnce(&str) -> Option<T>,
) -> Option<T> {
    let text = probe.quiet_text(dir, name)?;
    let v = f(&text);
    if v.is_none() {
        probe.note(&format!("{dir}/{name}"), "not in the kernel's format");
    }
    v
}

/// A limit (quota, period, memory.high/max): only an administrator changes it, so it is read
/// in the settings tier (see the `source` module comment), quietly; garbled is listed.
fn setting<T>(
    probe: &mut Probe,
    dir: &str,
    name: &str,
    f: impl FnOnce(&str) -> Option<T>,
) -> Option<T> {
    let line = probe.quiet_setting(dir, name)?;
    let v = f(&line);
    if v.is_none() {
        probe.note(&format!("{dir}/{name}"), "not in the kernel's format");
    }
    v
}

/// A `key value` table, of which at least one of `keys` must be there.
fn table<const N: usize>(
    probe: &mut Probe,
    dir: &str,
    name: &str,
    keys: &[&str; N],
) -> Option<[Option<u64>; N]> {
    parsed(probe, dir, name, |t| {
        let v = key_values(t, keys);
        v.iter().any(Option::is_some).then_some(v)
    })
}

/// Whether `memory.stat` is worth its cost (the kernel sums ~40 counters over the subtree):
/// only for a group at half a limit or more, where page cache decides how near it really is.
fn near_a_limit(g: &CgroupSample, mem_total_kb: Option<u64>) -> bool {
    let Some(used) = g.mem_bytes else {
        return false;
    };
    [g.mem_high, g.mem_max]
        .into_iter()
        .flatten()
        .filter_map(|l| l.real_bytes(mem_total_kb).value())
        .any(|lim| used.saturating_mul(2) >= lim)
}

fn read_v2(
    probe: &mut Probe,
    m: &Mount,
    rel: &str,
    mem_total_kb: Option<u64>,
) -> Option<CgroupSample> {
    let dir = format!("{}/{rel}", m.dir);
    let mut g = CgroupSample {
        path: display_path(&m.root, rel),
        ..CgroupSample::default()
    };
    let keys = ["usage_usec", "nr_periods", "nr_throttled", "throttled_usec"];
    if let Some([usage, periods, throttled, t_us]) = table(probe, &dir, "cpu.stat", &keys) {
        (g.usage_us, g.nr_periods, g.nr_throttled, g.throttled_us) =
            (usage, periods, throttled, t_us);
    }
    if let Some((quota, period)) = setting(probe, &dir, "cpu.max", parse_cpu_max) {
        (g.quota_us, g.period_us) = (Some(quota), Some(period));
    }
    g.mem_bytes = number(probe, &dir, "memory.current");
    let first = |t: &str| t.split_ascii_whitespace().next().and_then(parse_limit);
    g.mem_high = setting(probe, &dir, "memory.high", first);
    g.mem_max = setting(probe, &dir, "memory.max", first);
    if let Some([high, max, kills]) =
        table(probe, &dir, "memory.events", &["high", "max", "oom_kill"])
    {
        (g.high_events, g.max_events, g.oom_kills) = (high, max, kills);
    }
    if near_a_limit(&g, mem_total_kb) {
        g.inactive_file_bytes =
            table(probe, &dir, "memory.stat", &["inactive_file"]).and_then(|v| v[0]);
    }
    let mut psi = |name: &str| {
        let r = pressure::parse(&probe.quiet_text(&dir, name)?);
        if r.is_none() {
            probe.note(&format!("{dir}/{name}"), "no some/full line");
        }
        r
    };
    let (cpu, mem, io) = (
        psi("cpu.pressure"),
        psi("memory.pressure"),
        psi("io.pressure"),
    );
    if cpu.is_some() || mem.is_some() || io.is_some() {
        let total = |r: &Option<PsiResource>, full: bool| {
            let r = r.as_ref()?;
            if full { r.full } else { r.some }.map(|l| l.total_us)
        };
        g.pressure = Some(CgroupPressure {
            cpu_some_us: total(&cpu, false),
            cpu_full_us: total(&cpu, true),
            mem_some_us: total(&mem, false),
            mem_full_us: total(&mem, true),
            io_some_us: total(&io, false),
            io_full_us: total(&io, true),
        });
    }
    if let Some(text) = probe.quiet_table(&dir, "io.stat") {
        g.io = parse_io_stat(&text);
        if g.io.is_none() {
            probe.note(&format!("{dir}/io.stat"), "not in the kernel's format");
        }
    }
    known(g)
}

fn read_v1(
    probe: &mut Probe,
    m: &Mounts,
    rel: &str,
    mem_total_kb: Option<u64>,
    present: &HashSet<String>,
) -> Option<CgroupSample> {
    // Only the hierarchies the listing found the group in (ENOENT costs as much as a read).
    let at = |m: &Option<Mount>| {
        let dir = format!("{}/{rel}", m.as_ref()?.dir);
        present.contains(&dir).then_some(dir)
    };
    let root = [&m.cpu, &m.cpuacct, &m.memory]
        .into_iter()
        .flatten()
        .next()
        .map_or("/", |m| m.root.as_str());
    let mut g = CgroupSample {
        path: display_path(root, rel),
        ..CgroupSample::default()
    };
    if let Some(dir) = at(&m.cpuacct) {
        g.usage_us = number(probe, &dir, "cpuacct.usage").map(|ns| ns / 1000);
    }
    if let Some(dir) = at(&m.cpu) {
        g.quota_us = setting(probe, &dir, "cpu.cfs_quota_us", parse_cfs_quota);
        g.period_us = setting(probe, &dir, "cpu.cfs_period_us", dec).filter(|p| *p > 0);
        let keys = ["nr_periods", "nr_throttled", "throttled_time"];
        if let Some([periods, throttled, ns]) = table(probe, &dir, "cpu.stat", &keys) {
            (g.nr_periods, g.nr_throttled) = (periods, throttled);
            g.throttled_us = ns.map(|ns| ns / 1000);
        }
    }
    if let Some(dir) = at(&m.memory) {
        g.mem_bytes = number(probe, &dir, "memory.usage_in_bytes");
        g.mem_max = setting(probe, &dir, "memory.limit_in_bytes", |l| {
            dec(l).map(Limit::Value)
        });
        g.max_events = number(probe, &dir, "memory.failcnt");
        // `oom_kill` since 4.13; older kernels have only oom_kill_disable and under_oom.
        let oom = ["oom_kill", "under_oom"];
        g.oom_kills = table(probe, &dir, "memory.oom_control", &oom).and_then(|v| v[0]);
        if near_a_limit(&g, mem_total_kb) {
            let keys = ["total_inactive_file"];
            g.inactive_file_bytes = table(probe, &dir, "memory.stat", &keys).and_then(|v| v[0]);
        }
    }
    known(g)
}

/// `None` when nothing at all could be read: the group is gone.
fn known(g: CgroupSample) -> Option<CgroupSample> {
    // Limits are left out: they come from the settings tier, read before the group vanished.
    let any = g.usage_us.is_some()
        || g.nr_periods.is_some()
        || g.mem_bytes.is_some()
        || g.pressure.is_some()
        || g.io.is_some();
    any.then_some(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_file_shapes() {
        assert_eq!(parse_cpu_max("max 100000\n"), Some((Limit::Max, 100_000)));
        assert_eq!(
            parse_cpu_max("20000 100000\n"),
            Some((Limit::Value(20_000), 100_000))
        );
        assert_eq!(parse_cpu_max("20000\n"), None);
        assert_eq!(parse_cpu_max("20000 0\n"), None);
        assert_eq!(parse_cfs_quota("-1\n"), Some(Limit::Max));
        assert_eq!(parse_cfs_quota("20000\n"), Some(Limit::Value(20_000)));
        assert_eq!(parse_cfs_quota("-5x\n"), None);
        // Copied from a 6.8 host's `system.slice/docker.service/io.stat`.
        let io = parse_io_stat(
            "259:0 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n\
             8:0 rbytes=100 wbytes=200 rios=3 wios=4 dbytes=0 dios=0\n",
        );
        assert_eq!(
            io,
            Some(CgroupIo {
                rbytes: 4196,
                wbytes: 8392,
                rios: 4,
                wios: 6
            })
        );
        assert_eq!(parse_io_stat(""), Some(CgroupIo::default()));
        assert_eq!(parse_io_stat("8:0 rbytes=x\n"), None);
        assert_eq!(parse_io_stat("sda rbytes=1\n"), None);
        let ev = "low 0\nhigh 12\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n";
        assert_eq!(
            key_values(ev, &["high", "max", "oom_kill"]),
            [Some(12), Some(3), Some(1)]
        );
        assert_eq!(
            key_values("high\nmax 1 2\n", &["high", "max"]),
            [None, None]
        );
    }
}
