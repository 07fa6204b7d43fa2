//! Which groups are read: a walk of each hierarchy (top level, children, `kubepods*` down to
//! the containers), capped at `MAX_GROUPS` by CPU used since the last listing.

use super::layout::{dirs, Layout};
use super::{key_values, CgroupCache, KUBEPODS_DEPTH, MAX_CANDIDATES, MAX_GROUPS};
use crate::source::parse::dec;
use crate::source::Probe;
use foldhash::HashMap;

/// Lists the candidate groups of every hierarchy and keeps at most `MAX_GROUPS`.
pub(super) fn list(probe: &mut Probe, cache: &mut CgroupCache, layout: &Layout) {
    let mut found: Vec<String> = Vec::new();
    cache.present.clear();
    for m in dirs(layout) {
        let from = found.len();
        walk(probe, &m.dir, "", 1, &mut found);
        // v1 hierarchies hold different groups (a group made in `memory` only): remember where
        // each is, so a sample does not ask the others for files that are not there.
        let here = found[from..].iter().map(|rel| format!("{}/{rel}", m.dir));
        cache.present.extend(here);
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

#[cfg(test)]
mod tests {
    use super::super::{read_cgroups, CgroupCache, MAX_GROUPS, RELIST_SAMPLES};
    use crate::root::Root;
    use crate::source::Probe;
    use std::fs;

    /// `a.slice` with 100 services (service N has used N µs), `b.slice`; v2 at sys/fs/cgroup.
    fn host(dir: &std::path::Path) {
        let w = |rel: &str, text: &str| {
            let p = dir.join(rel);
            fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            fs::write(p, text).expect("write");
        };
        w(
            "proc/self/mountinfo",
            "27 22 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
        );
        w("sys/fs/cgroup/b.slice/cpu.stat", "usage_usec 1\n");
        for n in 0..100 {
            let stat = format!("usage_usec {n}\n");
            w(
                &format!("sys/fs/cgroup/a.slice/s{n:03}.service/cpu.stat"),
                &stat,
            );
        }
        w("sys/fs/cgroup/a.slice/cpu.stat", "usage_usec 4950\n");
    }

    #[test]
    fn too_many_groups_keep_the_busiest_and_count_the_rest() {
        let dir = tempfile::tempdir().expect("tempdir");
        host(dir.path());
        let mut probe = Probe::new(Root::new(dir.path()));
        let mut cache = CgroupCache::default();
        let paths = |c: &crate::sample::Cgroups| -> Vec<String> {
            c.groups.iter().map(|g| g.path.clone()).collect()
        };
        let c = read_cgroups(&mut probe, &mut cache, None);
        // 102 groups: both top-level ones, then the 62 that used the most CPU (s038..s099).
        assert_eq!((c.groups.len(), c.left_out), (MAX_GROUPS, 38));
        let p = paths(&c);
        assert!(p.contains(&"/a.slice".to_string()) && p.contains(&"/b.slice".to_string()));
        assert!(p.contains(&"/a.slice/s038.service".to_string()));
        assert!(!p.contains(&"/a.slice/s037.service".to_string()));
        // s000..s004 get busy; a new top-level group appears. Neither shows before the next
        // listing, RELIST_SAMPLES samples after the first; then the busy ones rank by growth.
        for n in 0..5 {
            let stat = dir
                .path()
                .join(format!("sys/fs/cgroup/a.slice/s{n:03}.service/cpu.stat"));
            fs::write(stat, "usage_usec 1000000\n").expect("write");
        }
        fs::create_dir_all(dir.path().join("sys/fs/cgroup/c.slice")).expect("mkdir");
        fs::write(
            dir.path().join("sys/fs/cgroup/c.slice/cpu.stat"),
            "usage_usec 0\n",
        )
        .expect("write");
        for _ in 1..RELIST_SAMPLES {
            let c = read_cgroups(&mut probe, &mut cache, None);
            assert!(!paths(&c).contains(&"/c.slice".to_string()));
        }
        let c = read_cgroups(&mut probe, &mut cache, None);
        let p = paths(&c);
        assert_eq!((c.groups.len(), c.left_out), (MAX_GROUPS, 39));
        assert!(p.contains(&"/c.slice".to_string()));
        assert!(p.contains(&"/a.slice/s000.service".to_string()));
        assert!(p.contains(&"/a.slice/s004.service".to_string()));
        assert!(probe.problems.is_empty(), "{:?}", probe.problems);
    }
}
