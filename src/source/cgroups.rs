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

use super::parse::dec;
use super::pressure;
use super::Probe;
use crate::sample::{
    CgroupIo, CgroupPressure, CgroupSample, CgroupVersion, Cgroups, Limit, PsiResource,
};
use std::collections::HashMap;

/// Most groups read per sample (each is ~10 small reads).
pub const MAX_GROUPS: usize = 64;
/// Samples between two listings of the hierarchy.
pub const RELIST_SAMPLES: u32 = 10;
/// Most directories one listing looks at (a host with 10,000 pods is not walked whole).
const MAX_CANDIDATES: usize = 4096;
/// How deep under a `kubepods*` top-level group the listing goes: QoS class, pod, container.
const KUBEPODS_DEPTH: usize = 4;

/// A mounted hierarchy: its mount point under the root (no leading slash) and the path of the
/// hierarchy it shows (`/` unless perftop runs in a cgroup namespace or a container).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub dir: String,
    pub root: String,
}

/// What `mountinfo` says is mounted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mounts {
    pub v2: Option<Mount>,
    pub cpu: Option<Mount>,
    pub cpuacct: Option<Mount>,
    pub memory: Option<Mount>,
}

/// Where the numbers are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Layout {
    None,
    V1(Mounts),
    V2(Mount),
}

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
}

impl CgroupCache {
    /// Forgets everything: mounts and groups are found again on the next sample.
    pub fn forget(&mut self) {
        *self = CgroupCache::default();
    }
}

/// `mountinfo` lines: `36 35 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu`.
/// The first mount of each hierarchy wins, one showing the hierarchy's root (`/`) before any
/// other (a bind mount of a subtree).
pub fn parse_mountinfo(text: &str) -> Mounts {
    mountinfo_lines(text).0
}

/// The mounts, and how many lines were mount lines at all (none: not a mountinfo).
fn mountinfo_lines(text: &str) -> (Mounts, usize) {
    let mut m = Mounts::default();
    let mut good = 0;
    let put = |slot: &mut Option<Mount>, mount: &Mount| {
        let better = slot
            .as_ref()
            .is_none_or(|s| s.root != "/" && mount.root == "/");
        if better {
            *slot = Some(mount.clone());
        }
    };
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split_ascii_whitespace().collect();
        let r: Vec<&str> = right.split_ascii_whitespace().collect();
        let (Some(root), Some(point), Some(fstype)) = (l.get(3), l.get(4), r.first()) else {
            continue;
        };
        good += 1;
        let mount = Mount {
            dir: unescape(point).trim_start_matches('/').to_string(),
            root: unescape(root),
        };
        match *fstype {
            "cgroup2" => put(&mut m.v2, &mount),
            "cgroup" => {
                let opts = r.get(2).copied().unwrap_or("");
                for o in opts.split(',') {
                    match o {
                        "cpu" => put(&mut m.cpu, &mount),
                        "cpuacct" => put(&mut m.cpuacct, &mount),
                        "memory" => put(&mut m.memory, &mount),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    (m, good)
}

/// mountinfo writes space, tab, newline and backslash in paths as `\040`-style octal.
fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], oct) {
            (b'\\', Some(d)) => {
                let v = d.iter().fold(0u32, |a, c| a * 8 + u32::from(c - b'0'));
                out.push(u8::try_from(v).unwrap_or(b'?'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The layout from the mounts: v1 when any of cpu, cpuacct or memory is bound to a v1
/// hierarchy (then a cgroup2 mount beside them is systemd's hybrid tree, which holds none of
/// those controllers), else v2 when a cgroup2 hierarchy is mounted.
fn layout_of(m: Mounts) -> Layout {
    if m.cpu.is_some() || m.cpuacct.is_some() || m.memory.is_some() {
        Layout::V1(Mounts { v2: None, ..m })
    } else if let Some(v2) = m.v2 {
        Layout::V2(v2)
    } else {
        Layout::None
    }
}

/// Mounts from `proc/self/mountinfo`; without one (a hand-made fixture), the usual places.
fn detect(probe: &mut Probe) -> Layout {
    const MOUNTINFO: &str = "proc/self/mountinfo";
    if let Some((m, good)) = probe.with_text(MOUNTINFO, false, |_, t| mountinfo_lines(t)) {
        if good == 0 {
            probe.note(MOUNTINFO, "no mount line in the kernel's format");
        }
        return layout_of(m);
    }
    let at = |dir: &str| Mount {
        dir: format!("sys/fs/cgroup/{dir}")
            .trim_end_matches('/')
            .to_string(),
        root: "/".into(),
    };
    let root = &probe.root;
    if root.exists("sys/fs/cgroup/cgroup.controllers") {
        return Layout::V2(at(""));
    }
    let v1 = |dirs: &[&str], file: &str| {
        dirs.iter()
            .map(|d| at(d))
            .find(|m| root.exists(&format!("{}/{file}", m.dir)))
    };
    layout_of(Mounts {
        v2: None,
        cpu: v1(&["cpu", "cpu,cpuacct"], "cpu.cfs_period_us"),
        cpuacct: v1(&["cpuacct", "cpu,cpuacct"], "cpuacct.usage"),
        memory: v1(&["memory"], "memory.usage_in_bytes"),
    })
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
            Layout::V1(m) => read_v1(probe, m, rel, mem_total_kb),
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
    }
}

/// The hierarchies' directories, of those the layout names.
fn dirs(layout: &Layout) -> Vec<&Mount> {
    match layout {
        Layout::None => Vec::new(),
        Layout::V2(m) => vec![m],
        Layout::V1(m) => [&m.cpu, &m.cpuacct, &m.memory]
            .into_iter()
            .flatten()
            .collect(),
    }
}

fn mounted(probe: &Probe, layout: &Layout) -> bool {
    dirs(layout).iter().any(|m| probe.root.is_dir(&m.dir))
}

/// `path` of a group as its sample names it: the hierarchy's root joined with `rel`.
fn display_path(root: &str, rel: &str) -> String {
    format!("{}/{rel}", root.trim_end_matches('/'))
}

/// Lists the candidate groups of every hierarchy and keeps at most `MAX_GROUPS`.
fn list(probe: &mut Probe, cache: &mut CgroupCache, layout: &Layout) {
    let mut found: Vec<String> = Vec::new();
    for m in dirs(layout) {
        walk(probe, &m.dir, "", 1, &mut found);
    }
    found.sort();
    found.dedup();
    if found.len() <= MAX_GROUPS {
        cache.left_out = 0;
        cache.groups = found;
        cache.usage_at_listing.clear();
        return;
    }
    // Too many: rank by CPU used since the last listing (since creation the first time), top
    // level groups first (they sum their children, and there are few of them).
    let usage: HashMap<String, u64> = found
        .iter()
        .filter_map(|rel| Some((rel.clone(), usage_us(probe, layout, rel)?)))
        .collect();
    let score = |rel: &String| {
        let now = usage.get(rel).copied().unwrap_or(0);
        match cache.usage_at_listing.get(rel) {
            Some(&before) => now.saturating_sub(before),
            None => now,
        }
    };
    let mut ranked: Vec<(bool, u64, String)> = found
        .into_iter()
        .map(|rel| (rel.contains('/'), score(&rel), rel))
        .collect();
    ranked.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    cache.left_out = u32::try_from(ranked.len() - MAX_GROUPS).unwrap_or(u32::MAX);
    cache.groups = ranked.into_iter().take(MAX_GROUPS).map(|r| r.2).collect();
    cache.groups.sort();
    cache.usage_at_listing = usage;
}

/// Children of `rel` (depth `depth`) and, under `kubepods*`, their children down to
/// `KUBEPODS_DEPTH`; depth 1 and 2 everywhere else.
fn walk(probe: &mut Probe, base: &str, rel: &str, depth: usize, found: &mut Vec<String>) {
    let dir = if rel.is_empty() {
        base.to_string()
    } else {
        format!("{base}/{rel}")
    };
    for name in probe.root.subdirs(&dir) {
        if found.len() >= MAX_CANDIDATES {
            return;
        }
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        found.push(child.clone());
        let max = if child.starts_with("kubepods") {
            KUBEPODS_DEPTH
        } else {
            2
        };
        if depth < max {
            walk(probe, base, &child, depth + 1, found);
        }
    }
}

/// The group's cumulative CPU time, for ranking.
fn usage_us(probe: &mut Probe, layout: &Layout, rel: &str) -> Option<u64> {
    match layout {
        Layout::None => None,
        Layout::V2(m) => {
            let text = probe.quiet_text(&format!("{}/{rel}", m.dir), "cpu.stat")?;
            key_values(&text, &["usage_usec"])[0]
        }
        Layout::V1(m) => {
            let dir = format!("{}/{rel}", m.cpuacct.as_ref()?.dir);
            let text = probe.quiet_text(&dir, "cpuacct.usage")?;
            dec(text.trim()).map(|ns| ns / 1000)
        }
    }
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
    if let Some((quota, period)) = parsed(probe, &dir, "cpu.max", parse_cpu_max) {
        (g.quota_us, g.period_us) = (Some(quota), Some(period));
    }
    g.mem_bytes = number(probe, &dir, "memory.current");
    let first = |t: &str| t.split_ascii_whitespace().next().and_then(parse_limit);
    g.mem_high = parsed(probe, &dir, "memory.high", first);
    g.mem_max = parsed(probe, &dir, "memory.max", first);
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
) -> Option<CgroupSample> {
    let root = [&m.cpu, &m.cpuacct, &m.memory]
        .into_iter()
        .flatten()
        .next()
        .map_or("/", |m| m.root.as_str());
    let mut g = CgroupSample {
        path: display_path(root, rel),
        ..CgroupSample::default()
    };
    if let Some(acct) = &m.cpuacct {
        let dir = format!("{}/{rel}", acct.dir);
        g.usage_us = number(probe, &dir, "cpuacct.usage").map(|ns| ns / 1000);
    }
    if let Some(cpu) = &m.cpu {
        let dir = format!("{}/{rel}", cpu.dir);
        g.quota_us = parsed(probe, &dir, "cpu.cfs_quota_us", parse_cfs_quota);
        g.period_us = number(probe, &dir, "cpu.cfs_period_us").filter(|p| *p > 0);
        let keys = ["nr_periods", "nr_throttled", "throttled_time"];
        if let Some([periods, throttled, ns]) = table(probe, &dir, "cpu.stat", &keys) {
            (g.nr_periods, g.nr_throttled) = (periods, throttled);
            g.throttled_us = ns.map(|ns| ns / 1000);
        }
    }
    if let Some(mem) = &m.memory {
        let dir = format!("{}/{rel}", mem.dir);
        g.mem_bytes = number(probe, &dir, "memory.usage_in_bytes");
        g.mem_max = number(probe, &dir, "memory.limit_in_bytes").map(Limit::Value);
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
    let any = g.usage_us.is_some()
        || g.nr_periods.is_some()
        || g.quota_us.is_some()
        || g.mem_bytes.is_some()
        || g.mem_max.is_some()
        || g.pressure.is_some()
        || g.io.is_some();
    any.then_some(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_of_hybrid_v1_and_unified_hosts() {
        // This VM (6.18, v1 controllers and an empty cgroup2 beside them).
        let hybrid = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
            32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n\
            33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n\
            35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
            40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n\
            41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let m = parse_mountinfo(hybrid);
        assert_eq!(
            m.cpu.as_ref().map(|m| m.dir.as_str()),
            Some("sys/fs/cgroup/cpu")
        );
        assert_eq!(
            m.memory.as_ref().map(|m| m.dir.as_str()),
            Some("sys/fs/cgroup/memory")
        );
        assert_eq!(
            m.v2.as_ref().map(|m| m.dir.as_str()),
            Some("sys/fs/cgroup/unified")
        );
        assert!(matches!(layout_of(m), Layout::V1(v) if v.v2.is_none()));
        // Co-mounted cpu,cpuacct (older distributions), an optional field before the `-`.
        let co =
            "25 18 0:22 / /sys/fs/cgroup/cpu,cpuacct rw shared:9 - cgroup cgroup rw,cpu,cpuacct\n";
        let m = parse_mountinfo(co);
        assert_eq!(m.cpu, m.cpuacct);
        // Unified (systemd 248+ default), a bind mount of a subtree listed first.
        let v2 = "50 1 0:40 /kubepods /mnt/x rw - cgroup2 cgroup2 rw\n\
            27 22 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(
            layout_of(parse_mountinfo(v2)),
            Layout::V2(Mount {
                dir: "sys/fs/cgroup".into(),
                root: "/".into()
            })
        );
        let spaced = "1 1 0:1 / /a\\040b rw - cgroup2 none rw\n";
        assert_eq!(
            parse_mountinfo(spaced).v2.map(|m| m.dir),
            Some("a b".into())
        );
        assert_eq!(layout_of(parse_mountinfo("garbage\n - \n")), Layout::None);
    }

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
