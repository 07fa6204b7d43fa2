//! Where the cgroup hierarchies are: `proc/self/mountinfo` (through the root, so a fixture
//! works), else the usual mount points; and which of them perftop reads (v1 or v2).

use super::Probe;

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
pub(super) enum Layout {
    None,
    V1(Mounts),
    V2(Mount),
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
pub(super) fn detect(probe: &mut Probe) -> Layout {
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

/// The hierarchies' directories, of those the layout names.
pub(super) fn dirs(layout: &Layout) -> Vec<&Mount> {
    match layout {
        Layout::None => Vec::new(),
        Layout::V2(m) => vec![m],
        Layout::V1(m) => [&m.cpu, &m.cpuacct, &m.memory]
            .into_iter()
            .flatten()
            .collect(),
    }
}

pub(super) fn mounted(probe: &Probe, layout: &Layout) -> bool {
    dirs(layout).iter().any(|m| probe.root.is_dir(&m.dir))
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
}
