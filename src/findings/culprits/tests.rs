//! Culprits grouped by command and cgroup, the share rule, short-lived tasks, flushers and
//! v1 groups, on hand-made intervals.

use super::*;
use crate::derive::{CgroupMetrics, CpuMetrics};

fn proc(pid: u32, comm: &str, cpu: f64, cgroup: &str) -> ProcessMetrics {
    ProcessMetrics {
        pid,
        comm: comm.into(),
        state: "R".into(),
        cpu_pct: Some(cpu),
        cgroup: Some(cgroup.into()),
        ..ProcessMetrics::default()
    }
}

/// A derived interval whose CPUs did `busy` % of one CPU of user + system time in all.
fn host(busy: f64, procs: Vec<ProcessMetrics>) -> Derived {
    let mut d = crate::derive::derive(None, &crate::sample::Sample::default());
    d.since_boot = false;
    d.cpus = (0..2)
        .map(|cpu| CpuMetrics {
            cpu,
            online: true,
            user_pct: Some(busy / 2.0),
            system_pct: Some(0.0),
            ..CpuMetrics::default()
        })
        .collect();
    d.processes = procs;
    d
}

/// `stress-ng --cpu 4` on 2 CPUs: four workers of one command are one culprit with
/// `tasks` 4 and their sum; the 1% `cargo` beside them explains under 20% and is not named.
#[test]
fn workers_of_one_command_are_one_culprit() {
    let mut v: Vec<ProcessMetrics> = (0..4)
        .map(|i| proc(100 + i, "stress-ng-cpu", 45.0 + f64::from(i), "/user.slice"))
        .collect();
    v.push(proc(7, "cargo", 1.0, "/user.slice"));
    let d = host(190.0, v);
    let c = top(&d, CPU, |_| true);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!((c[0].kind.as_str(), c[0].tasks), ("command", 4));
    assert_eq!(c[0].value, 45.0 + 46.0 + 47.0 + 48.0);
    assert_eq!(c[0].pid, 103, "the busiest member");
    assert_eq!(c[0].short(), "stress-ng-cpu x4 186%");
}

/// 63% of CPU pressure is not blamed on `cargo 1%`: without a fork storm nobody is named;
/// with one, the unexplained CPU is short-lived tasks in the group whose CPU grew.
#[test]
fn little_explained_is_short_lived_tasks() {
    let mut d = host(63.0, vec![proc(7, "cargo", 1.0, "/user.slice/build")]);
    assert_eq!(top(&d, CPU, |_| true), Vec::new());
    d.host.forks_per_s = Some(400.0);
    d.cgroups = vec![
        CgroupMetrics {
            path: "/user.slice".into(),
            cpu_pct: Some(62.0),
            ..CgroupMetrics::default()
        },
        CgroupMetrics {
            path: "/user.slice/build".into(),
            cpu_pct: Some(61.0),
            ..CgroupMetrics::default()
        },
    ];
    let c = top(&d, CPU, |_| true);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].kind, "short_lived");
    assert_eq!(c[0].value, 62.0);
    assert_eq!(c[0].cgroup.as_deref(), Some("/user.slice/build"));
    assert_eq!(
        c[0].short(),
        "short-lived tasks (400 forks/s) in /user.slice/build 62%"
    );
}

/// A container whose two commands together do more than any single command is named as
/// the group, before the commands.
#[test]
fn a_cgroup_that_explains_more_than_any_command() {
    let g = "/system.slice/docker-ab12.scope";
    let d = host(
        100.0,
        vec![
            proc(1, "nginx", 35.0, g),
            proc(2, "php-fpm", 35.0, g),
            proc(3, "backup", 30.0, "/system.slice/backup.service"),
        ],
    );
    let c = top(&d, CPU, |_| true);
    assert_eq!(c[0].kind, "cgroup");
    assert_eq!((c[0].tasks, c[0].value), (2, 70.0));
    assert_eq!(c[0].cgroup.as_deref(), Some(g));
    let rest: Vec<&str> = c[1..].iter().map(|c| c.comm.as_str()).collect();
    assert_eq!(rest, ["backup"], "its own commands are not named again");
}

/// v1: a group in the memory hierarchy alone names the processes whose memory
/// controller's path is in it, with that path, whatever their name=systemd path.
#[test]
fn a_v1_memory_group_names_its_processes_by_the_memory_path() {
    let mut p = proc(9, "perl", 0.0, "/user.slice/session-1.scope");
    p.memory_cgroup = Some("/oomtest".into());
    p.rss_kb = Some(50_000);
    let d = host(
        10.0,
        vec![p, proc(10, "other", 0.0, "/user.slice/session-1.scope")],
    );
    let c = in_group(&d, "/oomtest", true);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!((c[0].pid, c[0].cgroup.as_deref()), (9, Some("/oomtest")));
    assert_eq!(
        in_group(&d, "/oomtest", false),
        Vec::new(),
        "not in its cpu group"
    );
}

/// The writeback flusher writes what others dirtied: the dirtier is named, never it.
#[test]
fn the_flusher_is_never_a_writer() {
    let mut flusher = proc(50, "kworker/u8:4-flush-7:0", 3.0, "/");
    flusher.kernel_thread = true;
    flusher.write_kb_per_s = Some(80_000.0);
    let mut dd = proc(60, "dd", 40.0, "/user.slice");
    dd.write_kb_per_s = Some(60_000.0);
    let d = host(50.0, vec![flusher, dd]);
    let mut f = vec![Finding {
        id: "dirty.throttled".into(),
        severity: super::super::Severity::Warn,
        message: String::new(),
        pane: crate::pane::Pane::Dirty,
        tweak: None,
        culprits: Vec::new(),
        event: false,
    }];
    attach(&mut f, &d);
    let names: Vec<&str> = f[0].culprits.iter().map(|c| c.comm.as_str()).collect();
    assert_eq!(names, ["dd"]);
}

#[test]
fn a_process_is_inside_its_group_and_the_groups_below() {
    let g = "/system.slice/docker-ab12.scope";
    assert!(inside(Some(g), g));
    assert!(inside(Some("/system.slice/docker-ab12.scope/init"), g));
    assert!(!inside(Some("/system.slice/docker-ab123.scope"), g));
    assert!(!inside(Some("/user.slice"), g));
    assert!(!inside(None, g));
    assert!(inside(Some("/user.slice"), "/"));
}
