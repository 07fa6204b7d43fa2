//! The Processes pane's full list on the live host, against the kernel's own files: an idle
//! process (which the sample's bounded selection leaves out) is listed and found by `/`; with
//! threads, a process's tasks are `/proc/PID/task`; the run delay per task is the delta of
//! `/proc/PID/schedstat` read around perftop's own reads.

use crate::support;
use perftop::root::Root;
use perftop::source::processes::everyone::{Entry, Everyone};
use perftop::source::Reader;
use perftop::view::model::Block;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Kills and reaps its children on every path.
struct Kids(Vec<Child>);

impl Drop for Kids {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// One sample with the full list asked for (`threads` too), after `gap`.
fn listed(reader: &mut Reader, gap: Duration) -> (perftop::sample::Sample, Everyone) {
    std::thread::sleep(gap);
    let s = reader.sample();
    let all = reader
        .take_everyone()
        .expect("a full list while one is wanted");
    (s, all)
}

fn comm_of(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|c| c.trim_end().to_string())
}

/// A `sleep` under a name of its own (its comm), idle for the whole test.
fn idle_sleeper(dir: &std::path::Path, name: &str) -> Child {
    let bin = dir.join(name);
    let sleep = ["/bin/sleep", "/usr/bin/sleep"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("a sleep binary");
    std::fs::copy(sleep, &bin).expect("copy sleep");
    Command::new(&bin)
        .arg("1000")
        .spawn()
        .expect("start sleeper")
}

#[test]
fn an_idle_process_is_listed_and_found_by_the_filter() {
    let _machine = support::machine();
    let dir = tempfile::tempdir().expect("tempdir");
    let name = format!("ptidle{}", std::process::id() % 100_000);
    let kids = Kids(vec![idle_sleeper(dir.path(), &name)]);
    let pid = kids.0[0].id();
    // Until exec has given it its name.
    let until = Instant::now() + Duration::from_secs(5);
    while comm_of(pid).as_deref() != Some(name.as_str()) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(comm_of(pid).as_deref(), Some(name.as_str()), "kernel comm");
    let mut reader = Reader::new(Root::new("/"));
    reader.want_everyone().set(true, false);
    let (_, first) = listed(&mut reader, Duration::ZERO);
    let (sample, all) = listed(&mut reader, Duration::from_millis(1000));
    // The sample (recorder, JSON) keeps its bounded selection: an idle sleep is not in it.
    assert!(
        !sample
            .processes
            .iter()
            .flat_map(|p| &p.tasks)
            .any(|t| t.pid == pid),
        "an idle sleep is in the sample's kept processes: the selection grew"
    );
    // Every process /proc lists now (less those that came or went around the reads) is here.
    let kernel: Vec<u32> = std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    let listed: std::collections::HashSet<u32> = all.entries.iter().map(|e| e.pid).collect();
    let missing: Vec<&u32> = kernel
        .iter()
        .filter(|p| !listed.contains(p) && std::path::Path::new(&format!("/proc/{p}")).exists())
        .collect();
    eprintln!(
        "full list: {} processes (first list {}); /proc lists {}; missing {:?}",
        all.entries.len(),
        first.entries.len(),
        kernel.len(),
        missing
    );
    assert!(
        missing.len() <= 2,
        "processes /proc lists that the full list lacks: {missing:?}"
    );
    let e: &Entry = all
        .entries
        .iter()
        .find(|e| e.pid == pid)
        .expect("the idle sleeper is in the full list");
    assert_eq!(&*e.comm, name.as_str());
    assert_eq!(e.state, 'S');
    assert_eq!(e.cpu_pct, Some(0.0));
    // The `/` filter on the pane's rows, as the dashboard applies it.
    let thresholds = perftop::findings::Thresholds::default();
    let ctx = perftop::view::Ctx::new(&thresholds, true);
    let mut blocks = Vec::new();
    perftop::view::everyone::blocks(&all, &ctx, &mut blocks);
    let table = blocks
        .iter()
        .find_map(|b| match b {
            Block::Table(t) => Some(t),
            _ => None,
        })
        .expect("a table");
    let found: Vec<String> = table
        .rows
        .iter()
        .filter(|r| perftop::ui::filter::matches(r, &name))
        // A row's cells are built when it is drawn (`Table::later`).
        .filter_map(|r| {
            let cells = perftop::view::everyone::cells_of(&all, r.natural);
            cells.first().map(|c| c.text.to_string())
        })
        .collect();
    assert_eq!(found, [pid.to_string()], "filter {name:?}");
    let by_pid = table
        .rows
        .iter()
        .filter(|r| perftop::ui::filter::matches(r, &pid.to_string()))
        .count();
    assert!(by_pid >= 1, "the filter finds it by pid");
}

fn tasks_of(pid: u32) -> Vec<u32> {
    let mut t: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("task dir")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    t.sort_unstable();
    t
}

#[test]
fn threads_of_a_process_are_its_proc_task_entries() {
    let _machine = support::machine();
    let me = std::process::id();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
    let mut handles = Vec::new();
    for i in 0..5 {
        let rx = rx.clone();
        handles.push(
            std::thread::Builder::new()
                .name(format!("ptthr-{i}"))
                .spawn(move || {
                    let _ = rx.lock().map(|r| r.recv());
                })
                .expect("spawn"),
        );
    }
    let mut reader = Reader::new(Root::new("/"));
    reader.want_everyone().set(true, true);
    let mut judged = false;
    for _ in 0..5 {
        let before = tasks_of(me);
        let (_, all) = listed(&mut reader, Duration::from_millis(200));
        let after = tasks_of(me);
        if before != after {
            // Another test's thread came or went during the read: try again.
            continue;
        }
        let mut ours: Vec<u32> = all
            .entries
            .iter()
            .filter(|e| e.tgid == me)
            .map(|e| e.pid)
            .collect();
        ours.sort_unstable();
        assert_eq!(
            ours, after,
            "perftop's tasks of pid {me} vs /proc/{me}/task"
        );
        let process = all.entries.iter().find(|e| e.pid == me).expect("own row");
        assert_eq!(process.threads as usize, after.len(), "THR = task count");
        for i in 0..5 {
            let n = format!("ptthr-{i}");
            assert!(
                all.entries.iter().any(|e| e.tgid == me && *e.comm == *n),
                "thread {n} listed by name"
            );
        }
        assert!(all.threads_cut.is_none());
        judged = true;
        break;
    }
    drop(tx);
    for h in handles {
        let _ = h.join();
    }
    if !judged {
        support::skip(
            "threads_of_a_process_are_its_proc_task_entries",
            "this process's threads changed during every one of 5 reads",
        );
    }
}

fn run_delay_ns(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).expect("schedstat");
    s.split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("run delay field")
}

#[test]
fn run_delay_is_the_schedstat_delta() {
    let _machine = support::machine();
    if !std::path::Path::new("/proc/self/schedstat").exists() {
        support::skip(
            "run_delay_is_the_schedstat_delta",
            "no /proc/PID/schedstat (kernel without CONFIG_SCHED_INFO)",
        );
        return;
    }
    // More spinners than CPUs: each waits for a CPU a good part of every second.
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let kids = Kids(
        (0..cpus + 2)
            .map(|_| {
                Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .spawn()
                    .expect("spinner")
            })
            .collect(),
    );
    let pid = kids.0[0].id();
    std::thread::sleep(Duration::from_millis(300));
    let mut reader = Reader::new(Root::new("/"));
    reader.want_everyone().set(true, false);
    let a0 = run_delay_ns(pid);
    let (_, one) = listed(&mut reader, Duration::ZERO);
    let a1 = run_delay_ns(pid);
    std::thread::sleep(Duration::from_millis(1000));
    let b0 = run_delay_ns(pid);
    let (_, two) = listed(&mut reader, Duration::ZERO);
    let b1 = run_delay_ns(pid);
    let e = two.entries.iter().find(|e| e.pid == pid).expect("spinner");
    let rate = e.delay_ms_s.expect("a run delay after two reads");
    let secs = (two.wall_ms - one.wall_ms) as f64 / 1000.0;
    let shown_ms = rate * secs;
    // perftop's two reads lie between ours: its delta is within [b0 - a1, b1 - a0]; its own
    // interval comes from /proc/uptime (10 ms steps), the wall clock here: 3% and 15 ms slack.
    let (lo, hi) = ((b0 - a1) as f64 / 1e6, (b1 - a0) as f64 / 1e6);
    eprintln!(
        "run delay: perftop {rate:.1} ms/s x {secs:.3} s = {shown_ms:.1} ms; kernel bracket \
         {lo:.1}..{hi:.1} ms"
    );
    assert!(lo > 0.0, "the spinners waited for a CPU (kernel: {lo} ms)");
    assert!(
        shown_ms >= lo * 0.97 - 15.0 && shown_ms <= hi * 1.03 + 15.0,
        "perftop {shown_ms:.1} ms outside the kernel's {lo:.1}..{hi:.1} ms"
    );
    drop(kids);
}
