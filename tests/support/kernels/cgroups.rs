//! The cgroup trees of the kernels in the field, in each kernel's format, with the
//! `proc/self/mountinfo` lines that make perftop find them as on a real host.
//!
//! Layouts (systemd's default per distribution): RHEL 7 and RHEL 8 mount the v1 controllers only
//! ("legacy"; RHEL 7 co-mounts `cpuacct,cpu` in that order, and its 3.10 still counts memory in
//! `res_counter`s, so "no limit" is `LLONG_MAX`, 9223372036854775807, where 3.19's page
//! counters print 9223372036854771712); Ubuntu 20.04 adds an empty cgroup2 at
//! `/sys/fs/cgroup/unified` ("hybrid"); Ubuntu 22.04 and 24.04 mount only cgroup2 ("unified");
//! the 6.12 host (RHEL 10) has no v1 at all and runs Kubernetes.
//!
//! File contents follow Documentation/admin-guide/cgroup-v1/{cpuacct,memory}.rst,
//! scheduler/sched-bwc.rst and cgroup-v2.rst of each release: v1 `memory.oom_control` gains
//! `oom_kill` in 4.13; v2 `cpu.stat` gains `nr_bursts`/`burst_usec` in 5.14, `memory.events`
//! `oom_group_kill` in 5.13, and every group an `irq.pressure` in 6.1.
//!
//! Over the capture's 10.00 s interval one container (`CONTAINER_ID`, a docker scope, or a
//! containerd scope in a burstable pod on the 6.12 host) is capped at 1 CPU and uses
//! `CONTAINER_CPU_S` of it, throttled in `THROTTLED` of `PERIODS` periods for `THROTTLED_S`;
//! it holds 900 MiB of its 1 GiB limit, 100 MiB of it inactive page cache, hits the limit
//! `FAILS` times and has one OOM kill; on v2 it stalls on memory and I/O (`MEM_SOME_US`,
//! `IO_SOME_US`) and writes `WRITTEN` bytes in `WIOS` writes to vda (254:0), which the
//! capture's diskstats cover (12.5 MB/s, 5.4 w/s). Its parents sum it (v1 and v2 CPU and
//! memory are hierarchical; v2 `memory.events` and PSI too).

use std::path::Path;

/// The busy container's id (docker, containerd).
pub const CONTAINER_ID: &str = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00998877665544332211";
/// The pod the container runs in on the Kubernetes host.
pub const POD_UID: &str = "8a2f0c1e_5b3d_4c7a_9e6f_0d1c2b3a4f5e";
/// CPU time the container used between t0 and t1, seconds (of its 1-CPU quota).
pub const CONTAINER_CPU_S: u64 = 9;
/// CFS periods, throttled periods and time throttled (s) between t0 and t1.
pub const PERIODS: u64 = 100;
pub const THROTTLED: u64 = 40;
pub const THROTTLED_S: u64 = 2;
/// Times the container hit its memory limit between t0 and t1 (v1 failcnt, v2 events max).
pub const FAILS: u64 = 3;
/// The container's memory stall time (PSI some / full) and I/O stall (some) between t0 and t1.
pub const MEM_SOME_US: u64 = 500_000;
pub const MEM_FULL_US: u64 = 200_000;
pub const IO_SOME_US: u64 = 1_000_000;
/// Bytes and requests the container wrote to vda between t0 and t1.
pub const WRITTEN: u64 = 20 << 20;
pub const WIOS: u64 = 50;

const MIB: u64 = 1 << 20;

/// Which cgroup hierarchies a host mounts, and the format details that change with the kernel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Layout {
    /// v1 controllers only; `oom_kill` in `memory.oom_control` (4.13+); 3.10's `res_counter`.
    Legacy { oom_kill: bool, res_counter: bool },
    /// v1 controllers and an empty cgroup2 at `/sys/fs/cgroup/unified`.
    Hybrid,
    /// cgroup2 at `/sys/fs/cgroup`; `irq.pressure` per group from 6.1.
    Unified { irq: bool },
    /// cgroup2 only, v1 not built (6.11+ `CONFIG_MEMCG_V1=n`), a Kubernetes node.
    V2Only,
}

/// One group's counters at t0 (`step` 0) or t1 (`step` 1).
struct Group {
    path: String,
    /// CPU used at t0 and the growth to t1, µs.
    cpu_us: (u64, u64),
    quota_us: Option<u64>,
    mem: u64,
    limit: Option<u64>,
    inactive_file: u64,
    /// The container (throttled, OOM, stalls, writes) or a parent summing it.
    busy: bool,
    /// The container itself, not a parent.
    own: bool,
}

impl Group {
    fn cpu(&self, step: u64) -> u64 {
        self.cpu_us.0 + step * self.cpu_us.1
    }
}

/// The groups of a host: the container, its parents and the other top-level groups.
fn groups(layout: Layout) -> Vec<Group> {
    let c = CONTAINER_CPU_S * 1_000_000;
    let g = |path: &str, cpu_us: (u64, u64), mem: u64, busy: bool| Group {
        path: path.to_string(),
        cpu_us,
        quota_us: None,
        mem,
        limit: None,
        inactive_file: mem / 4,
        busy,
        own: false,
    };
    let container = |path: String| Group {
        path,
        cpu_us: (50_000_000, c),
        quota_us: Some(100_000),
        mem: 900 * MIB,
        limit: Some(1024 * MIB),
        inactive_file: 100 * MIB,
        busy: true,
        own: true,
    };
    let mut out = vec![
        g("user.slice", (30_000_000, 1_000_000), 300 * MIB, false),
        g(
            "user.slice/user-1000.slice",
            (28_000_000, 1_000_000),
            280 * MIB,
            false,
        ),
        g("init.scope", (2_000_000, 10_000), 12 * MIB, false),
    ];
    if layout == Layout::V2Only {
        let pod = format!(
            "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{POD_UID}.slice"
        );
        let mut p = g(&pod, (52_000_000, c + 100_000), 950 * MIB, true);
        p.quota_us = Some(200_000);
        out.extend([
            g("system.slice", (80_000_000, 2_000_000), 600 * MIB, false),
            g(
                "system.slice/kubelet.service",
                (60_000_000, 1_500_000),
                120 * MIB,
                false,
            ),
            g(
                "kubepods.slice",
                (60_000_000, c + 300_000),
                1100 * MIB,
                true,
            ),
            g(
                "kubepods.slice/kubepods-burstable.slice",
                (55_000_000, c + 200_000),
                1000 * MIB,
                true,
            ),
            p,
            container(format!("{pod}/cri-containerd-{CONTAINER_ID}.scope")),
        ]);
    } else {
        out.extend([
            g(
                "system.slice",
                (130_000_000, c + 2_000_000),
                1536 * MIB,
                true,
            ),
            g(
                "system.slice/sshd.service",
                (3_000_000, 20_000),
                8 * MIB,
                false,
            ),
            container(format!("system.slice/docker-{CONTAINER_ID}.scope")),
        ]);
    }
    out
}

fn put(dir: &Path, name: &str, text: impl AsRef<str>) {
    std::fs::create_dir_all(dir).expect("mkdir cgroup");
    std::fs::write(dir.join(name), text.as_ref()).expect("write cgroup file");
}

/// The tree and mountinfo of `layout` under `root` (a `tN/` directory), for t0 or t1.
pub fn write(layout: Layout, root: &Path, step: u64) {
    put(&root.join("proc/self"), "mountinfo", mountinfo(layout));
    let cg = root.join("sys/fs/cgroup");
    let groups = groups(layout);
    match layout {
        Layout::Legacy {
            oom_kill,
            res_counter,
        } => v1(&cg, &groups, step, oom_kill, res_counter),
        Layout::Hybrid => {
            v1(&cg, &groups, step, true, false);
            // systemd's own tree: groups, no controllers (`cgroup.controllers` empty).
            let u = cg.join("unified");
            put(&u, "cgroup.controllers", "");
            for g in &groups {
                put(&u.join(&g.path), "cgroup.controllers", "");
                put(&u.join(&g.path), "cgroup.procs", "");
            }
        }
        Layout::Unified { irq } => v2(&cg, &groups, step, irq),
        Layout::V2Only => v2(&cg, &groups, step, true),
    }
}

/// What `/proc/self/mountinfo` says of the root, `/proc`, `/sys` and the cgroup mounts.
fn mountinfo(layout: Layout) -> String {
    let mut s = String::from(
        "22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n\
         23 22 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n\
         24 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n",
    );
    let v1 = |s: &mut String, cpu_opts: &str, systemd: &str| {
        s.push_str(
            "25 23 0:23 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:8 - tmpfs tmpfs ro,mode=755\n",
        );
        s.push_str(&format!(
            "26 25 0:24 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,xattr,{systemd}name=systemd\n"
        ));
        let ctl = [
            ("cpuset", "cpuset"),
            ("cpu,cpuacct", cpu_opts),
            ("memory", "memory"),
            ("blkio", "blkio"),
            ("devices", "devices"),
            ("freezer", "freezer"),
            ("net_cls,net_prio", "net_cls,net_prio"),
            ("perf_event", "perf_event"),
            ("hugetlb", "hugetlb"),
            ("pids", "pids"),
        ];
        for (i, (dir, opts)) in ctl.iter().enumerate() {
            s.push_str(&format!(
                "{} 25 0:{} / /sys/fs/cgroup/{dir} rw,nosuid,nodev,noexec,relatime shared:{} - cgroup cgroup rw,{opts}\n",
                27 + i,
                25 + i,
                10 + i
            ));
        }
    };
    match layout {
        // RHEL 7's kernel orders the co-mounted controllers `cpuacct,cpu`.
        Layout::Legacy { res_counter: true, .. } => v1(
            &mut s,
            "cpuacct,cpu",
            "release_agent=/usr/lib/systemd/systemd-cgroups-agent,",
        ),
        Layout::Legacy { .. } => v1(
            &mut s,
            "cpu,cpuacct",
            "release_agent=/usr/lib/systemd/systemd-cgroups-agent,",
        ),
        Layout::Hybrid => {
            v1(&mut s, "cpu,cpuacct", "");
            s.push_str(
                "40 25 0:35 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:23 - cgroup2 cgroup2 rw,nsdelegate\n",
            );
        }
        Layout::Unified { .. } | Layout::V2Only => s.push_str(
            "25 23 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:8 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
        ),
    }
    s
}

/// v1: `cpu,cpuacct` (cpuacct.usage in ns, CFS bandwidth), `memory`, `blkio` (not read).
fn v1(cg: &Path, groups: &[Group], step: u64, oom_kill: bool, res_counter: bool) {
    let unlimited: u64 = if res_counter {
        9_223_372_036_854_775_807
    } else {
        9_223_372_036_854_771_712
    };
    let cpu_root = cg.join("cpu,cpuacct");
    let mem_root = cg.join("memory");
    let total: u64 = groups
        .iter()
        .filter(|g| !g.path.contains('/'))
        .map(|g| g.cpu(step))
        .sum();
    put(
        &cpu_root,
        "cpuacct.usage",
        format!("{}\n", (total + 900_000_000 + step * 30_000_000) * 1000),
    );
    put(&cpu_root, "cpu.cfs_period_us", "100000\n");
    put(&cpu_root, "cpu.cfs_quota_us", "-1\n");
    put(&mem_root, "memory.use_hierarchy", "1\n");
    for g in groups {
        let d = cpu_root.join(&g.path);
        put(&d, "cgroup.procs", "");
        put(&d, "tasks", "");
        put(&d, "cpu.shares", "1024\n");
        put(&d, "cpu.cfs_period_us", "100000\n");
        let quota = g.quota_us.map_or("-1".to_string(), |q| q.to_string());
        put(&d, "cpu.cfs_quota_us", format!("{quota}\n"));
        let (periods, thr, thr_ns) = if g.own {
            (
                2_000 + step * PERIODS,
                300 + step * THROTTLED,
                (20 + step * THROTTLED_S) * 1_000_000_000,
            )
        } else {
            (0, 0, 0)
        };
        put(
            &d,
            "cpu.stat",
            format!("nr_periods {periods}\nnr_throttled {thr}\nthrottled_time {thr_ns}\n"),
        );
        let ns = g.cpu(step) * 1000;
        put(&d, "cpuacct.usage", format!("{ns}\n"));
        // USER_HZ ticks, 70 % user.
        let ticks = g.cpu(step) / 10_000;
        put(
            &d,
            "cpuacct.stat",
            format!(
                "user {}\nsystem {}\n",
                ticks * 7 / 10,
                ticks - ticks * 7 / 10
            ),
        );

        let m = mem_root.join(&g.path);
        put(&m, "cgroup.procs", "");
        put(
            &m,
            "memory.usage_in_bytes",
            format!("{}\n", g.mem + step * MIB),
        );
        put(
            &m,
            "memory.max_usage_in_bytes",
            format!("{}\n", g.limit.unwrap_or(g.mem + 64 * MIB)),
        );
        let limit = g.limit.unwrap_or(unlimited);
        put(&m, "memory.limit_in_bytes", format!("{limit}\n"));
        put(&m, "memory.soft_limit_in_bytes", format!("{unlimited}\n"));
        let fails = if g.own { 12 + step * FAILS } else { 0 };
        put(&m, "memory.failcnt", format!("{fails}\n"));
        let under = 0;
        let oom = if oom_kill {
            format!(
                "oom_kill_disable 0\nunder_oom {under}\noom_kill {}\n",
                if g.own { step } else { 0 }
            )
        } else {
            format!("oom_kill_disable 0\nunder_oom {under}\n")
        };
        put(&m, "memory.oom_control", oom);
        put(
            &m,
            "memory.stat",
            v1_memory_stat(g, step, limit, res_counter),
        );
        put(&m, "memory.swappiness", "60\n");
        put(&m, "memory.use_hierarchy", "1\n");

        let b = cg.join("blkio").join(&g.path);
        put(&b, "cgroup.procs", "");
        let w = if g.busy { 40 * MIB + step * WRITTEN } else { 0 };
        put(
            &b,
            "blkio.throttle.io_service_bytes",
            format!("254:0 Read 0\n254:0 Write {w}\n254:0 Sync 0\n254:0 Async {w}\n254:0 Total {w}\nTotal {w}\n"),
        );
    }
}

/// v1 `memory.stat`: the group's own counters, then the `total_` ones of its subtree (here
/// the same: the fixture's leaves hold the pages). 3.10 has no `shmem`/`dirty` lines.
fn v1_memory_stat(g: &Group, step: u64, limit: u64, res_counter: bool) -> String {
    let used = g.mem + step * MIB;
    let inactive_file = g.inactive_file;
    let active_file = used / 5;
    let cache = inactive_file + active_file;
    let rss = used - cache;
    let mut own: Vec<(&str, u64)> = vec![("cache", cache), ("rss", rss), ("rss_huge", 0)];
    if !res_counter {
        own.push(("shmem", 0));
    }
    own.extend([("mapped_file", active_file / 2)]);
    if !res_counter {
        own.push(("dirty", 0));
    }
    own.extend([
        ("writeback", 0),
        ("swap", 0),
        ("pgpgin", 1_000_000 + step * 2_000),
        ("pgpgout", 900_000 + step * 1_800),
        ("pgfault", 2_000_000 + step * 5_000),
        ("pgmajfault", 100),
        ("inactive_anon", 0),
        ("active_anon", rss),
        ("inactive_file", inactive_file),
        ("active_file", active_file),
        ("unevictable", 0),
    ]);
    let mut s: String = own.iter().map(|(k, v)| format!("{k} {v}\n")).collect();
    s.push_str(&format!(
        "hierarchical_memory_limit {limit}\nhierarchical_memsw_limit {limit}\n"
    ));
    for (k, v) in &own {
        s.push_str(&format!("total_{k} {v}\n"));
    }
    s
}

/// A PSI file's two lines with the given totals (µs); the averages are the last 10 s's share.
fn psi(some: u64, full: u64, secs: f64) -> String {
    let pct = |us: u64| us as f64 / (secs * 1e6) * 100.0;
    format!(
        "some avg10={:.2} avg60=0.00 avg300=0.00 total={some}\nfull avg10={:.2} avg60=0.00 avg300=0.00 total={full}\n",
        pct(some),
        pct(full)
    )
}

/// v2: every controller in one tree; PSI and `io.stat` per group.
fn v2(cg: &Path, groups: &[Group], step: u64, irq: bool) {
    put(
        cg,
        "cgroup.controllers",
        "cpuset cpu io memory hugetlb pids rdma misc\n",
    );
    put(cg, "cgroup.subtree_control", "cpuset cpu io memory pids\n");
    put(cg, "cgroup.procs", "1\n");
    for g in groups {
        let d = cg.join(&g.path);
        put(&d, "cgroup.controllers", "cpuset cpu io memory pids\n");
        put(&d, "cgroup.procs", "");
        let usage = g.cpu(step);
        let (periods, thr, thr_us) = if g.own {
            (
                2_000 + step * PERIODS,
                300 + step * THROTTLED,
                (20 + step * THROTTLED_S) * 1_000_000,
            )
        } else {
            (0, 0, 0)
        };
        put(
            &d,
            "cpu.stat",
            format!(
                "usage_usec {usage}\nuser_usec {}\nsystem_usec {}\nnr_periods {periods}\nnr_throttled {thr}\nthrottled_usec {thr_us}\nnr_bursts 0\nburst_usec 0\n{}",
                usage * 7 / 10,
                usage - usage * 7 / 10,
                if irq { "core_sched.force_idle_usec 0\n" } else { "" }
            ),
        );
        let quota = g.quota_us.map_or("max".to_string(), |q| q.to_string());
        put(&d, "cpu.max", format!("{quota} 100000\n"));
        put(&d, "cpu.weight", "100\n");
        let used = g.mem + step * MIB;
        put(&d, "memory.current", format!("{used}\n"));
        put(&d, "memory.high", "max\n");
        let max = g.limit.map_or("max".to_string(), |l| l.to_string());
        put(&d, "memory.max", format!("{max}\n"));
        put(&d, "memory.min", "0\n");
        put(&d, "memory.low", "0\n");
        put(&d, "memory.swap.current", "0\n");
        put(&d, "memory.swap.max", "max\n");
        let (max_ev, kills) = if g.busy {
            (12 + step * FAILS, step)
        } else {
            (0, 0)
        };
        put(
            &d,
            "memory.events",
            format!(
                "low 0\nhigh 0\nmax {max_ev}\noom {kills}\noom_kill {kills}\noom_group_kill 0\n"
            ),
        );
        let file = g.inactive_file + used / 5;
        put(
            &d,
            "memory.stat",
            format!(
                "anon {}\nfile {file}\nkernel {}\nkernel_stack 0\npagetables 0\nsock 0\nshmem 0\n\
                 file_mapped {}\nfile_dirty 0\nfile_writeback 0\ninactive_anon 0\nactive_anon {}\n\
                 inactive_file {}\nactive_file {}\nunevictable 0\nslab_reclaimable 0\n\
                 slab_unreclaimable 0\npgfault {}\npgmajfault 100\n",
                used - file,
                0,
                file / 2,
                used - file,
                g.inactive_file,
                used / 5,
                2_000_000 + step * 5_000
            ),
        );
        let (ms, mf, is) = if g.busy {
            (
                4_000_000 + step * MEM_SOME_US,
                1_000_000 + step * MEM_FULL_US,
                8_000_000 + step * IO_SOME_US,
            )
        } else {
            (0, 0, 0)
        };
        put(&d, "cpu.pressure", psi(0, 0, 10.0));
        put(&d, "memory.pressure", psi(ms, mf, 10.0));
        put(&d, "io.pressure", psi(is, is / 2, 10.0));
        if irq {
            put(
                &d,
                "irq.pressure",
                "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
            );
        }
        let (wb, wios) = if g.busy {
            (40 * MIB + step * WRITTEN, 100 + step * WIOS)
        } else {
            (0, 0)
        };
        put(
            &d,
            "io.stat",
            if wb > 0 {
                format!("254:0 rbytes=0 wbytes={wb} rios=0 wios={wios} dbytes=0 dios=0\n")
            } else {
                String::new()
            },
        );
        put(&d, "pids.current", "1\n");
        put(&d, "pids.max", "max\n");
    }
}
