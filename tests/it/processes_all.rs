//! The Processes pane's full list over a synthetic `/proc` (through `--root`, as on a host):
//! rates, run delay, swap, user, threads and a D task's stack by construction; a pid reused
//! between reads gets no rate from the process before it; and the zoomed pane at several
//! sizes (snapshots).

use crate::support;

use perftop::root::Root;
use perftop::source::processes::everyone::{Entry, Everyone};
use perftop::source::Reader;
use std::fs;
use std::path::Path;
use support::screen::screen;

/// A `/proc/PID/stat` line with the fields the reader uses.
#[allow(clippy::too_many_arguments)]
fn stat(
    pid: u32,
    comm: &str,
    state: char,
    majflt: u64,
    ticks: u64,
    nice: i8,
    threads: u32,
    start: u64,
    rss: u64,
    cpu: u32,
) -> String {
    format!(
        "{pid} ({comm}) {state} 1 {pid} {pid} 0 -1 4194560 100 0 {majflt} 0 {ticks} 0 0 0 20 {nice} \
         {threads} 0 {start} 1000000 {rss} 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 {cpu} 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    )
}

fn put(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(p, text).expect("write");
}

/// Tick `t` (uptime 1000 + t s): pid 100 `web` (3 threads, 25 ticks/s, 4 MiB/s written,
/// 2 major faults/s, 40 ms/s run delay, 512 kB swapped, uid 1000); pid 200 `dd` in D with a
/// stack; pid 300 `sleeper`, idle. At `reused`, pid 300 is another process (new start time)
/// whose counters are far above the old one's.
fn write_host(dir: &Path, t: u64, reused: bool) {
    put(dir, "proc/uptime", &format!("{}.00 0.00\n", 1000 + t));
    put(
        dir,
        "etc/passwd",
        "root:x:0:0::/root:/bin/sh\nwebuser:x:1000:1000::/:/bin/sh\n",
    );
    let web = "proc/100";
    put(
        dir,
        &format!("{web}/stat"),
        &stat(
            100,
            "web",
            'S',
            10 + 2 * t,
            1000 + 25 * t,
            0,
            3,
            5000,
            2560,
            1,
        ),
    );
    put(
        dir,
        &format!("{web}/io"),
        &format!(
            "rchar: 0\nwchar: 0\nread_bytes: 0\nwrite_bytes: {}\n",
            4 * 1024 * 1024 * t
        ),
    );
    put(
        dir,
        &format!("{web}/status"),
        "Name:\tweb\nUid:\t1000\t1000\t1000\t1000\nVmSwap:\t     512 kB\n",
    );
    put(
        dir,
        &format!("{web}/schedstat"),
        &format!("123 {} 9\n", 7_000_000 + 40_000_000 * t),
    );
    put(
        dir,
        &format!("{web}/cgroup"),
        "0::/system.slice/web.service\n",
    );
    put(
        dir,
        &format!("{web}/cmdline"),
        "/usr/bin/web\0--port\x008080\0",
    );
    for (tid, name, ticks) in [
        (100, "web", 600 + 5 * t),
        (101, "web-worker", 300 + 15 * t),
        (102, "web-io", 100 + 5 * t),
    ] {
        put(
            dir,
            &format!("{web}/task/{tid}/stat"),
            &stat(
                tid,
                name,
                'S',
                0,
                ticks,
                0,
                3,
                5000 + u64::from(tid % 100),
                2560,
                0,
            ),
        );
        put(
            dir,
            &format!("{web}/task/{tid}/schedstat"),
            &format!("1 {} 1\n", 1_000_000 * t),
        );
    }
    let dd = "proc/200";
    put(
        dir,
        &format!("{dd}/stat"),
        &stat(200, "dd", 'D', 0, 50, 0, 1, 8000, 100, 0),
    );
    put(
        dir,
        &format!("{dd}/status"),
        "Name:\tdd\nUid:\t0\t0\t0\t0\nVmSwap:\t       0 kB\n",
    );
    put(dir, &format!("{dd}/schedstat"), "1 2 3\n");
    put(dir, &format!("{dd}/wchan"), "percpu_rwsem_wait");
    put(dir, &format!("{dd}/stack"), "[<0>] percpu_rwsem_wait+0x11f/0x150\n[<0>] __sb_start_write+0x4d/0x60\n[<0>] vfs_write+0x2bb/0x3a0\n[<0>] ksys_write+0x67/0xe0\n[<0>] do_syscall_64+0x58/0x80\n");
    put(
        dir,
        &format!("{dd}/cmdline"),
        "dd\0if=/dev/zero\0of=/mnt/frozen/x\0",
    );
    let sl = "proc/300";
    let (start, ticks, majflt) = if reused {
        (99_000, 900_000, 50_000)
    } else {
        (7000, 3, 1)
    };
    let comm = if reused { "newproc" } else { "sleeper" };
    put(
        dir,
        &format!("{sl}/stat"),
        &stat(300, comm, 'S', majflt, ticks, 5, 1, start, 200, 1),
    );
    put(
        dir,
        &format!("{sl}/status"),
        "Name:\tsleeper\nUid:\t0\t0\t0\t0\nVmSwap:\t       0 kB\n",
    );
    put(dir, &format!("{sl}/schedstat"), "1 2 3\n");
    put(dir, &format!("{sl}/cmdline"), "sleeper\0");
}

fn lists(dir: &Path, ticks: &[(u64, bool)], threads: bool) -> Vec<Everyone> {
    let mut r = Reader::new(Root::new(dir));
    r.want_everyone().set(true, threads);
    ticks
        .iter()
        .map(|&(t, reused)| {
            write_host(dir, t, reused);
            r.sample();
            r.take_everyone().expect("a full list while wanted")
        })
        .collect()
}

fn find(all: &Everyone, pid: u32) -> &Entry {
    all.entries.iter().find(|e| e.pid == pid).expect("listed")
}

#[test]
fn every_process_with_rates_threads_and_stacks_by_construction() {
    let dir = tempfile::tempdir().expect("tempdir");
    let l = lists(dir.path(), &[(0, false), (1, false)], true);
    assert!(l[0].first && !l[1].first);
    let web = find(&l[1], 100);
    assert_eq!(web.cpu_pct, Some(25.0), "25 ticks in 1 s at USER_HZ 100");
    assert_eq!(web.write_kb_s, Some(4096.0), "4 MiB/s");
    assert_eq!(web.majflt_s, Some(2.0));
    assert_eq!(
        web.delay_ms_s,
        Some(40.0),
        "40,000,000 ns of run delay in 1 s"
    );
    assert_eq!(web.swap_kb, Some(512));
    assert_eq!(web.user.as_deref(), Some("webuser"));
    assert_eq!(web.cgroup.as_deref(), Some("/system.slice/web.service"));
    assert_eq!(web.cmdline.as_deref(), Some("/usr/bin/web --port 8080"));
    assert_eq!(web.nice, Some(0));
    assert_eq!(web.last_cpu, Some(1));
    // Start 5000 ticks = 50 s after boot; boot = wall clock - 1001 s of uptime.
    assert_eq!(web.started_ms, Some(l[1].wall_ms - 1_001_000 + 50_000));
    // Threads: the process's row and one per other task, named, with their own rates.
    let mut tasks: Vec<(u32, &str)> = l[1]
        .entries
        .iter()
        .filter(|e| e.tgid == 100)
        .map(|e| (e.pid, &*e.comm))
        .collect();
    tasks.sort_unstable();
    assert_eq!(tasks, [(100, "web"), (101, "web-worker"), (102, "web-io")]);
    assert_eq!(find(&l[1], 101).cpu_pct, Some(15.0));
    assert_eq!(find(&l[1], 101).delay_ms_s, Some(1.0));
    let dd = find(&l[1], 200);
    assert_eq!(dd.state, 'D');
    assert_eq!(dd.wchan.as_deref(), Some("percpu_rwsem_wait"));
    assert_eq!(
        dd.stack,
        [
            "percpu_rwsem_wait",
            "__sb_start_write",
            "vfs_write",
            "ksys_write"
        ]
    );
    let sleeper = find(&l[1], 300);
    assert_eq!(sleeper.cpu_pct, Some(0.0));
    assert_eq!(sleeper.nice, Some(5));
}

#[test]
fn a_reused_pid_gets_no_rate_from_the_process_before_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    // An idle process is read in turns (16 passes): its pid reused by a busy process is seen
    // at its next read, never with the counters of the process before it.
    let mut ticks = vec![(0, false), (1, false)];
    ticks.extend((2..24).map(|t| (t, true)));
    let l = lists(dir.path(), &ticks, false);
    assert_eq!(find(&l[1], 300).cpu_pct, Some(0.0));
    let first_new = l
        .iter()
        .position(|a| &*find(a, 300).comm == "newproc")
        .expect("the new process is read within its turns");
    assert_eq!(
        find(&l[first_new], 300).cpu_pct,
        None,
        "no rate on its first read"
    );
    assert_eq!(find(&l[first_new], 300).majflt_s, None);
    for a in &l {
        let e = find(a, 300);
        assert!(
            e.cpu_pct.is_none_or(|c| c <= 100.0),
            "a bogus rate across the reuse: {e:?}"
        );
    }
}

#[test]
fn the_zoomed_pane_lists_every_process_at_several_sizes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let l = lists(dir.path(), &[(0, false), (1, false)], true);
    let mut app = support::screen::app_for("vm-2cpu");
    app.prefs.focus = perftop::pane::Pane::Procs;
    app.prefs.zoom = true;
    app.prefs.threads = true;
    let mut all = l[1].clone();
    // A fixed wall clock, so START reads the same on every run.
    let shift = 1_700_000_000_000 - all.wall_ms;
    all.wall_ms += shift;
    for e in &mut all.entries {
        e.started_ms = e.started_ms.map(|s| s + shift);
    }
    app.everyone = Some(all);
    for (w, h) in [(80, 24), (120, 40), (200, 50)] {
        let s = screen(&app, w, h);
        // Every header is whole at every width: columns are dropped, never cut.
        let header = s
            .lines()
            .find(|l| l.trim_start().starts_with("PID "))
            .expect("the table's header");
        for word in header.split_whitespace() {
            assert!(
                perftop::view::everyone::columns()
                    .iter()
                    .any(|c| c.title == word),
                "{word:?} is not a whole column title at {w}x{h}"
            );
        }
        for name in ["web-worker", "sleeper", "percpu_rwsem_wait"] {
            assert!(s.contains(name), "{name} at {w}x{h}:\n{s}");
        }
        insta::assert_snapshot!(format!("everyone_{w}x{h}"), s);
    }
}

/// The stuck task's line keeps whole frames at every width: what does not fit is left out,
/// never cut mid-word (issue 41 item 7).
#[test]
fn a_stuck_tasks_stack_is_never_cut_mid_frame() {
    let dir = tempfile::tempdir().expect("tempdir");
    let l = lists(dir.path(), &[(0, false), (1, false)], false);
    let mut app = support::screen::app_for("vm-2cpu");
    app.prefs.focus = perftop::pane::Pane::Procs;
    app.prefs.zoom = true;
    app.everyone = Some(l[1].clone());
    let frames = [
        "percpu_rwsem_wait",
        "__sb_start_write",
        "vfs_write",
        "ksys_write",
    ];
    for w in (60..=140).step_by(3) {
        let s = screen(&app, w, 24);
        let stuck = s
            .lines()
            .find(|l| l.trim_start().starts_with("D 200 dd"))
            .expect("the D task's line");
        let last = stuck.split_whitespace().last().unwrap_or_default();
        assert!(
            frames.contains(&last),
            "{last:?} cut at width {w}: {stuck:?}"
        );
    }
}
