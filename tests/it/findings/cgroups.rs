//! cgroups: the v1 and v2 fixture trees (`tests/fixtures/cgroups`, values computed by hand in
//! its README) through the reader, derive and the rules; each rule at and just under its
//! thresholds; groups that vanish, appear, or are too many to read.

use super::*;
use perftop::derive::CgroupMetrics;
use perftop::sample::{CgroupSample, CgroupVersion, Cgroups, Limit};
use serde_json::json;

fn cg_fixture(rel: &str) -> PathBuf {
    support::fixture("cgroups").join(rel)
}

fn pair(version: &str) -> Assessed {
    let a = read_root(&cg_fixture(&format!("{version}/t0")));
    let b = read_root(&cg_fixture(&format!("{version}/t1")));
    for s in [&a, &b] {
        let ours: Vec<_> = s
            .problems
            .iter()
            .filter(|p| p.path.contains("cgroup"))
            .collect();
        assert!(ours.is_empty(), "{ours:?}");
    }
    derive(Some(&a), &b)
}

fn group<'a>(d: &'a Assessed, name: &str) -> &'a CgroupMetrics {
    d.cgroups
        .iter()
        .find(|g| g.name == name)
        .unwrap_or_else(|| panic!("no group {name}: {:?}", names(d)))
}

fn names(d: &Assessed) -> Vec<&str> {
    d.cgroups.iter().map(|g| g.name.as_str()).collect()
}

fn json_of(g: &CgroupMetrics) -> serde_json::Value {
    serde_json::to_value(g).expect("serializes")
}

#[test]
fn v2_fixture_rates_limits_names_and_findings() {
    let d = pair("v2");
    assert_eq!(d.interval_s, Some(2.0));
    assert_eq!(d.host.cgroup_version.as_deref(), Some("v2"));
    assert_eq!(d.host.cgroups_left_out, Some(0));
    // Top level, their children, kubepods down to the container; not nginx's `worker`
    // (depth 3), not `gone.service` (only in t0).
    assert_eq!(
        names(&d),
        [
            "init.scope",
            "kubepods.slice",
            "kubepods-burstable.slice",
            "k8s:pod8a2f0c1e",
            "k8s:pod8a2f0c1e/0a1b2c3d4e5f",
            "system.slice",
            "docker:3f4e5d6c7b8a",
            "new.service",
            "nginx.service",
            "user.slice",
            "user-1000.slice",
        ]
    );
    // 600 ms of CPU in 2 s.
    let sys = group(&d, "system.slice");
    assert_eq!(sys.cpu_pct, Some(30.0));
    assert_eq!(
        sys.throttled_pct,
        Some(0.0),
        "no period elapsed: none throttled"
    );
    assert_eq!(sys.mem_kb, Some(1024 * 1024));
    assert_eq!(json_of(sys)["cpu_quota_cpus"], json!("max"));
    assert_eq!(json_of(sys)["mem_max_kb"], json!("max"));
    assert_eq!(sys.mem_of_limit_pct, None);
    // The container: 1 s of CPU in 2 s under `50000 100000`; 16 of 20 periods throttled,
    // 800 ms throttled in 2 s; PSI memory some 400 ms, full 100 ms, io some 200 ms of 2 s;
    // 4 MiB read and 2 MiB written over two devices, 400 reads and 200 writes.
    let c = group(&d, "docker:3f4e5d6c7b8a");
    let docker = format!(
        "/system.slice/docker-{}.scope",
        "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00998877665544332211"
    );
    assert_eq!(c.path, docker);
    assert_eq!(c.cpu_pct, Some(50.0));
    assert_eq!(json_of(c)["cpu_quota_cpus"], json!(0.5));
    assert_eq!(c.cpu_of_quota_pct, Some(100.0));
    assert_eq!(c.throttled_pct, Some(80.0));
    assert_eq!(c.throttled_ms_per_s, Some(400.0));
    assert_eq!(
        (c.mem_kb, c.mem_of_limit_pct),
        (Some(102_400), Some(9.765625))
    );
    assert_eq!((c.mem_some_pct, c.mem_full_pct), (Some(20.0), Some(5.0)));
    assert_eq!((c.io_some_pct, c.io_full_pct), (Some(10.0), Some(0.0)));
    assert_eq!(
        (c.read_kb_per_s, c.write_kb_per_s),
        (Some(2048.0), Some(1024.0))
    );
    assert_eq!((c.read_iops, c.write_iops), (Some(200.0), Some(100.0)));
    // nginx: 950 MiB charged, 10 MiB of it inactive page cache, against 1 GiB: 940/1024.
    let n = group(&d, "nginx.service");
    assert_eq!(n.mem_working_set_kb, Some(940 * 1024));
    assert_eq!(n.mem_of_limit_pct, Some(91.796875));
    assert_eq!(n.mem_max_events, Some(4));
    // 600 MiB less 50 MiB inactive against memory.high 512 MiB.
    let u = group(&d, "user-1000.slice");
    assert_eq!(u.mem_of_limit_pct, Some(550.0 / 512.0 * 100.0));
    assert_eq!(u.mem_high_events, Some(0));
    assert_eq!(json_of(u)["mem_high_kb"], json!(512 * 1024));
    // 200 ms in 2 s; the pod's quota is 2 CPUs.
    assert_eq!(
        group(&d, "k8s:pod8a2f0c1e/0a1b2c3d4e5f").cpu_pct,
        Some(10.0)
    );
    assert_eq!(
        json_of(group(&d, "k8s:pod8a2f0c1e"))["cpu_quota_cpus"],
        json!(2.0)
    );
    // Started between the samples: no rate.
    assert_eq!(group(&d, "new.service").cpu_pct, None);

    let f = d.findings.iter().find(|f| f.id == "cgroup.throttled");
    let f = f.expect("cgroup.throttled");
    assert_eq!((f.severity, f.pane.as_str()), (Severity::Crit, "procs"));
    assert_eq!(
        f.message,
        "docker:3f4e5d6c7b8a throttled 80% of periods, 400 ms/s: uses 0.5 of 0.5 CPU"
    );
    let f = d.findings.iter().find(|f| f.id == "cgroup.memory_high");
    let f = f.expect("cgroup.memory_high");
    assert_eq!(f.severity, Severity::Crit, "memory.events max grew by 4");
    assert_eq!(
        f.message,
        "nginx.service uses 940M = 92% of its 1.0G memory limit, hit it 4x (+1 more)"
    );
}

#[test]
fn v1_fixture_rates_limits_and_findings() {
    let d = pair("v1");
    assert_eq!(d.host.cgroup_version.as_deref(), Some("v1"));
    // The hybrid layout's cgroup2 tree (`unified/ignored.slice`) is not read.
    assert_eq!(
        names(&d),
        [
            "big",
            "burner",
            "idle",
            "process_api",
            "process_api/b29ed4c4e2e8fc2a4592563666fd86a7",
            "squeeze"
        ]
    );
    // 400 ms of cpuacct.usage (ns) in 2 s under a 20000/100000 µs quota; 19 of 20 periods
    // throttled, 1.6 s of throttled_time (ns) in 2 s.
    let b = group(&d, "burner");
    assert_eq!(b.cpu_pct, Some(20.0));
    assert_eq!(json_of(b)["cpu_quota_cpus"], json!(0.2));
    assert_eq!(b.throttled_pct, Some(95.0));
    assert_eq!(b.throttled_ms_per_s, Some(800.0));
    assert_eq!(
        (b.mem_kb, b.mem_some_pct, b.read_kb_per_s),
        (None, None, None)
    );
    assert_eq!(json_of(group(&d, "idle"))["cpu_quota_cpus"], json!("max"));
    // 62 MiB used, 1 MiB inactive file, 64 MiB limit; failcnt +15, one OOM kill.
    let s = group(&d, "squeeze");
    assert_eq!(s.mem_of_limit_pct, Some(61.0 / 64.0 * 100.0));
    assert_eq!((s.mem_max_events, s.oom_kills), (Some(15), Some(1)));
    // The kernel's default limit (2^63 - 4096) and a limit above MemTotal (100 GiB of 16) are
    // no limit.
    for name in ["process_api", "big"] {
        assert_eq!(
            json_of(group(&d, name))["mem_max_kb"],
            json!("max"),
            "{name}"
        );
    }
    let msg = |id: &str| {
        let f = d.findings.iter().find(|f| f.id == id).expect(id);
        (f.severity, f.message.clone())
    };
    assert_eq!(
        msg("cgroup.throttled"),
        (
            Severity::Crit,
            "burner throttled 95% of periods, 800 ms/s: uses 0.2 of 0.2 CPU".into()
        )
    );
    assert_eq!(
        msg("cgroup.memory_high"),
        (
            Severity::Crit,
            "squeeze: 1 OOM kill in the group at its 64M limit".into()
        )
    );
}

#[test]
fn since_boot_and_old_recordings_have_no_group_rates() {
    let b = read_root(&cg_fixture("v1/t1"));
    let d = derive(None, &b);
    assert!(d
        .cgroups
        .iter()
        .all(|g| g.cpu_pct.is_none() && g.oom_kills.is_none()));
    assert!(d.findings.is_empty());
    let mut old = b.clone();
    old.cgroups = None;
    let d = derive(Some(&old), &old);
    assert!(d.cgroups.is_empty());
    assert_eq!(
        d.host.cgroups_unknown.as_deref(),
        Some(perftop::derive::cgroups::CGROUPS_NOT_RECORDED)
    );
    // A root with no cgroup hierarchy says so.
    let none = read_root(&fixture("vm-idle/t1"));
    assert_eq!(
        derive(None, &none).host.cgroups_unknown.as_deref(),
        Some(perftop::derive::cgroups::CGROUPS_NOT_MOUNTED)
    );
    // A group of another version (the host was rebooted into v2) is not paired.
    let mut v2 = b.clone();
    if let Some(c) = v2.cgroups.as_mut() {
        c.version = Some(CgroupVersion::V2);
    }
    let d = derive(Some(&b), &v2);
    assert!(d.cgroups.iter().all(|g| g.cpu_pct.is_none()));
}

/// A pair of samples 2 s apart with one group.
fn one_group(p: &mut Pair, a: CgroupSample, b: CgroupSample) {
    p.a.cgroups = Some(Cgroups {
        version: Some(CgroupVersion::V2),
        groups: vec![a],
        left_out: 0,
        turn: None,
        at: None,
    });
    p.b.cgroups = Some(Cgroups {
        version: Some(CgroupVersion::V2),
        groups: vec![b],
        left_out: 0,
        turn: None,
        at: None,
    });
}

/// A group with a 1-CPU quota: `share` % of 20 periods throttled, `ms_per_s` throttled.
fn throttled(p: &mut Pair, share: f64, ms_per_s: f64) {
    let base = CgroupSample {
        path: "/system.slice/app.service".into(),
        usage_us: Some(1_000_000),
        quota_us: Some(Limit::Value(100_000)),
        period_us: Some(100_000),
        nr_periods: Some(1_000),
        nr_throttled: Some(100),
        throttled_us: Some(5_000_000),
        ..CgroupSample::default()
    };
    let periods = (p.secs * 10.0).round() as u64;
    let n = (share / 100.0 * periods as f64).round() as u64;
    let us = (ms_per_s * 1000.0 * p.secs).round() as u64;
    let next = CgroupSample {
        usage_us: Some(1_000_000 + (0.95 * p.secs * 1e6) as u64),
        nr_periods: Some(1_000 + periods),
        nr_throttled: Some(100 + n),
        throttled_us: Some(5_000_000 + us),
        ..base.clone()
    };
    one_group(p, base, next);
}

#[test]
fn throttled_at_and_under_its_thresholds() {
    let mut p = Pair::quiet(10.0);
    // 100 periods in 10 s: 10 throttled, 50 ms/s.
    throttled(&mut p, 10.0, 50.0);
    let f = p.fires("cgroup.throttled");
    assert_eq!(f.severity, Severity::Warn);
    assert_eq!(
        f.message,
        "app.service throttled 10% of periods, 50 ms/s: uses 0.95 of 1 CPU"
    );
    throttled(&mut p, 9.0, 50.0);
    p.silent("cgroup.throttled");
    throttled(&mut p, 10.0, 49.0);
    p.silent("cgroup.throttled");
    throttled(&mut p, 50.0, 50.0);
    assert_eq!(p.fires("cgroup.throttled").severity, Severity::Crit);
    throttled(&mut p, 49.0, 50.0);
    assert_eq!(p.fires("cgroup.throttled").severity, Severity::Warn);
}

/// A v2 group using `used_mib` (with `inactive_mib` of inactive page cache) under
/// memory.max 1000 MiB and memory.high `high_mib`; `events` max events and `kills` OOM kills
/// in the interval.
fn memory(
    p: &mut Pair,
    used_mib: u64,
    inactive_mib: Option<u64>,
    high_mib: Option<u64>,
    events: u64,
    kills: u64,
) {
    const MIB: u64 = 1 << 20;
    let base = CgroupSample {
        path: "/system.slice/db.service".into(),
        mem_bytes: Some(used_mib * MIB),
        inactive_file_bytes: inactive_mib.map(|m| m * MIB),
        mem_high: Some(high_mib.map_or(Limit::Max, |h| Limit::Value(h * MIB))),
        mem_max: Some(Limit::Value(1000 * MIB)),
        high_events: Some(7),
        max_events: Some(7),
        oom_kills: Some(2),
        ..CgroupSample::default()
    };
    let next = CgroupSample {
        max_events: Some(7 + events),
        oom_kills: Some(2 + kills),
        ..base.clone()
    };
    one_group(p, base, next);
}

#[test]
fn memory_high_at_and_under_its_thresholds() {
    let mut p = Pair::quiet(2.0);
    memory(&mut p, 900, None, None, 0, 0);
    let f = p.fires("cgroup.memory_high");
    assert_eq!(f.severity, Severity::Warn);
    assert_eq!(
        f.message,
        "db.service uses 900M = 90% of its 1000M memory limit"
    );
    memory(&mut p, 899, None, None, 0, 0);
    p.silent("cgroup.memory_high");
    // At the limit but half of it page cache the kernel drops first: not short of memory,
    // even while the limit is hit (cache reclaim at the limit is how v1/v2 keep to it).
    memory(&mut p, 950, Some(500), None, 30, 0);
    p.silent("cgroup.memory_high");
    memory(&mut p, 950, Some(10), None, 3, 0);
    let f = p.fires("cgroup.memory_high");
    assert_eq!(f.severity, Severity::Crit);
    assert_eq!(
        f.message,
        "db.service uses 940M = 94% of its 1000M memory limit, hit it 3x"
    );
    // At memory.high (600 MiB), far from max.
    memory(&mut p, 600, None, Some(600), 0, 0);
    let f = p.fires("cgroup.memory_high");
    assert_eq!(
        (f.severity, f.message.as_str()),
        (
            Severity::Warn,
            "db.service uses 600M over its memory.high 600M: throttled"
        )
    );
    memory(&mut p, 599, None, Some(600), 0, 0);
    p.silent("cgroup.memory_high");
    // An OOM kill is crit whatever the usage after it.
    memory(&mut p, 100, None, None, 0, 2);
    let f = p.fires("cgroup.memory_high");
    assert_eq!(
        (f.severity, f.message.as_str()),
        (
            Severity::Crit,
            "db.service: 2 OOM kills in the group at its 1000M limit"
        )
    );
}

/// `(pid, comm, cgroup, CPU ticks over the interval, RSS MiB at the start, RSS MiB growth)`
/// as kept tasks in both samples (4 kB pages; derive computes the rates).
fn tasks(p: &mut Pair, list: &[(u32, &str, &str, u64, u64, u64)]) {
    use perftop::sample::{Processes, Task, TaskCounters};
    let page_kb = 4;
    let base_wall_ms = p.a.time.wall_ms;
    let at = |ticks: u64, rss_mib: u64| TaskCounters {
        ticks,
        rss_pages: rss_mib * 1024 / page_kb,
        ..TaskCounters::default()
    };
    for (s, later) in [(&mut p.a, false), (&mut p.b, true)] {
        s.memory.page_kb = Some(page_kb);
        let tasks = list
            .iter()
            .map(|&(pid, comm, cg, ticks, rss, growth)| Task {
                pid,
                comm: comm.into(),
                state: 'S',
                start: 1,
                threads: 1,
                cgroup: Some(cg.into()),
                counters: if later {
                    at(1_000 + ticks, rss + growth)
                } else {
                    at(1_000, rss)
                },
                ..Task::default()
            })
            .collect();
        s.processes = Some(Processes {
            total: list.len() as u32,
            base_wall_ms: Some(base_wall_ms),
            tasks,
            ..Processes::default()
        });
    }
}

fn culprit_list(f: &Finding) -> Vec<(u32, String, f64)> {
    f.culprits
        .iter()
        .map(|c| (c.pid, c.metric.clone(), (c.value * 10.0).round() / 10.0))
        .collect()
}

#[test]
fn cgroup_findings_name_the_processes_inside_the_group() {
    let mut p = Pair::quiet(10.0);
    throttled(&mut p, 50.0, 50.0);
    // In 10 s: 500 ticks = 50%, 900 ticks = 90%; the busiest process of the host is in
    // another group, one is in a sub-group of the throttled one, one in a group whose name
    // only starts like it.
    tasks(
        &mut p,
        &[
            (10, "worker", "/system.slice/app.service", 500, 10, 0),
            (11, "child", "/system.slice/app.service/sub", 300, 10, 0),
            (12, "other", "/system.slice/app.service2", 950, 10, 0),
            (13, "outside", "/user.slice", 990, 10, 0),
        ],
    );
    let f = p.fires("cgroup.throttled");
    assert_eq!(
        culprit_list(&f),
        [(10, "cpu_pct".into(), 50.0), (11, "cpu_pct".into(), 30.0)]
    );
    // The memory finding: RSS growth first (2 MiB in 2 s = 1024 kB/s), then the largest RSS;
    // `small` (40 MB of the group's 840 MB, 5%) explains under 20% and is not named.
    let mut p = Pair::quiet(2.0);
    memory(&mut p, 950, None, None, 0, 0);
    tasks(
        &mut p,
        &[
            (20, "grower", "/system.slice/db.service", 0, 100, 2),
            (21, "big", "/system.slice/db.service", 0, 700, 0),
            (22, "small", "/system.slice/db.service", 0, 40, 0),
            (23, "huge", "/user.slice", 0, 5000, 0),
        ],
    );
    let f = p.fires("cgroup.memory_high");
    assert_eq!(
        culprit_list(&f),
        [
            (20, "rss_growth_kb_per_s".into(), 1024.0),
            (21, "rss_kb".into(), 716_800.0),
        ]
    );
}

/// A kill in a group is an event (issue 39): the group's usage falls right after it, and on
/// the strip the group's finding used to vanish within a second while the host's
/// `memory.oom_kill` stayed. Both now stay `oom_kill_hold_s`, even after the group is removed.
#[test]
fn a_groups_oom_kill_stays_on_the_strip_like_the_hosts() {
    let mut p = Pair::quiet(1.0);
    memory(&mut p, 100, None, None, 0, 1);
    p.a.memory.vmstat.oom_kill = Some(4);
    p.b.memory.vmstat.oom_kill = Some(5);
    let f = p.fires("cgroup.memory_high");
    assert!(f.event, "{f:?}");
    assert_eq!(
        f.message,
        "db.service: 1 OOM kill in the group at its 1000M limit"
    );
    // A level is no event: the same group near its limit without a kill.
    let mut q = Pair::quiet(1.0);
    memory(&mut q, 950, None, None, 0, 0);
    assert!(!q.fires("cgroup.memory_high").event);

    let mut t = FindingTracker::new(Thresholds::default());
    let kill = derive(Some(&p.a), &p.b).derived;
    let ids = |v: &[ActiveFinding]| {
        let mut v: Vec<String> = v.iter().map(|a| a.finding.id.clone()).collect();
        v.sort();
        v
    };
    assert_eq!(
        ids(&t.update(&kill)),
        ["cgroup.memory_high", "memory.oom_kill"]
    );
    let mut prev = p.b.clone();
    for second in 1..=61 {
        let mut next = prev.clone();
        next.time.uptime_s = prev.time.uptime_s.map(|u| u + 1.0);
        next.time.wall_ms = prev.time.wall_ms + 1000;
        if let Some(c) = next.cgroups.as_mut() {
            // The group is removed two seconds after the kill.
            if second >= 2 {
                c.groups.clear();
            }
        }
        let d = derive(Some(&prev), &next).derived;
        let now = t.update(&d);
        if second < 60 {
            assert_eq!(
                ids(&now),
                ["cgroup.memory_high", "memory.oom_kill"],
                "second {second}"
            );
            assert!(now.iter().all(|a| a.clearing.is_none()), "{now:?}");
        } else {
            assert!(now.is_empty(), "second {second}: {now:?}");
        }
        prev = next;
    }
}
