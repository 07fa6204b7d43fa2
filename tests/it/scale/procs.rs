//! Scale, processes: the process pass in turns (busy every pass, idle ones every `IDLE_EVERY`,
//! `/proc` listed when the fork count moves), pinned against synthetic processes whose rates
//! are worked out by hand.

use super::close;
use super::support::synth::BOOT_AGE_S;
use crate::support;
use perftop::derive::derive;
use perftop::root::Root;
use perftop::source::processes::IDLE_EVERY;
use perftop::source::Reader;
use std::fs;
use std::path::Path;

/// Synthetic processes as the kernel shows them. `procs`: (pid, comm, CPU ticks, minor faults,
/// bytes written) of each process; `rss`: its RSS in pages, by pid.
fn write_procs(
    dir: &Path,
    tick: u64,
    procs: &[(u32, &str, u64, u64, u64)],
    busy: u64,
    rss: &dyn Fn(u32) -> u64,
) {
    let proc = dir.join("proc");
    fs::create_dir_all(&proc).expect("mkdir");
    let age = BOOT_AGE_S + tick;
    fs::write(proc.join("uptime"), format!("{age}.00 {}.00\n", age * 2)).expect("uptime");
    // /proc/stat's busy ticks: what the processes account for, plus `busy` unexplained.
    let total: u64 = procs.iter().map(|p| p.2).sum::<u64>() + busy;
    fs::write(
        proc.join("stat"),
        format!(
            "cpu  {total} 0 0 {} 0 0 0 0 0 0\ncpu0 {total} 0 0 {} 0 0 0 0 0 0\n",
            age * 100,
            age * 100
        ),
    )
    .expect("stat");
    for &(pid, comm, ticks, minflt, wbytes) in procs {
        let d = proc.join(pid.to_string());
        fs::create_dir_all(&d).expect("mkdir");
        fs::write(
            d.join("stat"),
            format!(
                "{pid} ({comm}) S 1 {pid} {pid} 0 -1 4194560 {minflt} 0 0 0 {ticks} 0 0 0 20 0 1 0 100 \
                 1000000 {} 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 \
                 0 0 0 0\n",
                rss(pid)
            ),
        )
        .expect("stat");
        fs::write(
            d.join("io"),
            format!(
                "rchar: 0\nwchar: {wbytes}\nsyscr: 0\nsyscw: 0\nread_bytes: 0\n\
                 write_bytes: {wbytes}\ncancelled_write_bytes: 0\n"
            ),
        )
        .expect("io");
        fs::write(d.join("cgroup"), "0::/test.slice\n").expect("cgroup");
    }
}

/// 100 processes, 8 busy: the busy ones are read every pass, the idle ones every
/// `IDLE_EVERY` passes, their `io` only when something in their `stat` moved. An idle
/// process that starts using CPU is named on the very pass it does (the host's busy ticks are
/// unexplained, so the idle ones are read too); one that writes with a tick now and then
/// (buffered writes) or with none but the faults of dirtying a mapped file is named on its
/// turn, its rate over its own interval.
#[test]
fn idle_processes_are_read_in_turns_and_a_waking_one_is_named_at_once() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    let names: Vec<String> = (0..100).map(|k| format!("p{k}")).collect();
    let at = |tick: u64| -> Vec<(u32, &str, u64, u64, u64)> {
        (0..100u64)
            .map(|k| {
                let busy = if k < 8 { 10 * tick } else { 0 };
                // p50 wakes after tick 20: 30 ticks/s from then on.
                let wake = if k == 50 {
                    30 * tick.saturating_sub(20)
                } else {
                    0
                };
                // From tick 5 on, p60 writes 8 MiB/s with write(), a CPU tick every 3 s (8 MiB/s
                // of buffered writes take 2-4 ms of CPU a second on this project's VM); p70
                // dirties a mapped file at 4 MiB/s with no CPU tick, a minor fault a page.
                let since5 = tick.saturating_sub(5);
                let (ticks, minflt, w) = match k {
                    60 => (since5 / 3, 0, (8 << 20) * since5),
                    70 => (0, 1024 * since5, (4 << 20) * since5),
                    _ => (0, 0, 0),
                };
                (
                    2000 + k as u32,
                    names[k as usize].as_str(),
                    1000 + busy + wake + ticks,
                    minflt,
                    w,
                )
            })
            .collect()
    };
    write_procs(dir.path(), 0, &at(0), 0, &|_| 250);
    let mut reader = Reader::new(Root::new(dir.path()));
    let mut prev = reader.sample();
    let mut stat_reads = Vec::new();
    let mut io_reads = Vec::new();
    let mut named: [Option<u64>; 2] = [None, None];
    for tick in 1..=24 {
        write_procs(dir.path(), tick, &at(tick), 0, &|_| 250);
        let before = reader.root().opened();
        let cur = reader.sample();
        // Files found (the other readers' files are absent from this tree).
        let opened = reader.root().opened().since(before);
        stat_reads.push(opened.files - opened.missing);
        io_reads.push(cur.processes.as_ref().map_or(0, |p| p.io_read));
        let d = derive(Some(&prev), &cur);
        let p = |comm: &str| d.processes.iter().find(|m| m.comm == comm);
        assert_eq!(
            d.host.tasks.as_ref().map(|t| t.total),
            Some(100),
            "tick {tick}"
        );
        // The busy ones, every pass, exact.
        for k in 0..8 {
            close(
                p(&format!("p{k}")).and_then(|m| m.cpu_pct),
                10.0,
                &format!("p{k} at {tick}"),
            );
        }
        // When a kept process's base was read (ticks after boot): the previous pass unless
        // it was read in turns before that.
        let base_tick = |comm: &str| {
            cur.processes
                .as_ref()
                .and_then(|ps| ps.tasks.iter().find(|t| t.comm == comm))
                .and_then(|t| t.base_time.as_ref()?.uptime_s)
                .map_or(tick - 1, |u| u as u64 - BOOT_AGE_S)
        };
        if tick == 21 {
            // 30 ticks since tick 20, averaged over its own interval since it was last read.
            let m = p("p50").expect("p50 named the pass it woke");
            let since = base_tick("p50");
            close(m.cpu_pct, 30.0 / (tick - since) as f64, "p50 on waking");
        }
        if tick == 22 {
            close(p("p50").and_then(|m| m.cpu_pct), 30.0, "p50 after waking");
        }
        for (slot, (comm, kib_s)) in [("p60", 8 << 10), ("p70", 4 << 10)].iter().enumerate() {
            if let (Some(m), None) = (p(comm), named[slot]) {
                // Its first read since it started: its rate over its own interval, however
                // long; the turn came within IDLE_EVERY passes.
                named[slot] = Some(tick);
                let since = base_tick(comm);
                let want = f64::from(*kib_s) * (tick - 5.max(since)) as f64 / (tick - since) as f64;
                close(
                    m.write_kb_per_s,
                    want,
                    &format!("{comm} over its own interval"),
                );
            }
        }
        prev = cur;
    }
    for (slot, comm) in ["p60", "p70"].iter().enumerate() {
        let at = named[slot].unwrap_or_else(|| panic!("{comm} named"));
        assert!(at <= 5 + u64::from(IDLE_EVERY), "{comm} named at tick {at}");
    }
    // `io` read for the 8 busy ones, the two writers (shown once named) and an idle one whose
    // turn found something moved: never for the rest of the idle ones read on their turn.
    assert!(
        io_reads[2..20].iter().all(|&n| (8..=11).contains(&n)),
        "io files per pass {io_reads:?}"
    );
    // 8 busy + 92 idle / 8 per pass, `stat` and `io` each: far from 200 files a pass.
    let steady = &stat_reads[2..20];
    assert!(
        steady
            .iter()
            .all(|&n| n <= 2 * (8 + 92 / u64::from(IDLE_EVERY) + 2) + 8),
        "files per pass {stat_reads:?}"
    );
    // Tick 21: p50's 30 ticks are unexplained, so every process is read that pass.
    assert!(stat_reads[20] >= 100, "files at the wake {stat_reads:?}");
}

/// The largest processes are shown (by RSS) even when idle. Read every pass only to stay
/// shown, they cost as much as the busy ones; now one that was idle when last read is carried
/// as last read between its turns: shown, at 0% CPU, its `stat` and `io` unread. One that
/// exits leaves the list on the pass it is gone; one that changes is seen on its turn.
#[test]
fn shown_idle_processes_are_carried_between_their_turns() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    let names: Vec<String> = (0..40).map(|k| format!("q{k}")).collect();
    let procs = |tick: u64, gone: bool| -> Vec<(u32, &str, u64, u64, u64)> {
        (0..40u64)
            // q2 exits at tick 10.
            .filter(|&k| !(gone && k == 2))
            .map(|k| {
                let ticks = 1000 + if k == 0 { 20 * tick } else { 0 };
                (3000 + k as u32, names[k as usize].as_str(), ticks, 0, 0)
            })
            .collect()
    };
    // q1..q3 are the largest; q3 grows at tick 12 (with no CPU tick: seen on its turn).
    let rss = |tick: u64| {
        move |pid: u32| match pid {
            3001..=3002 => 100_000 + u64::from(pid),
            3003 if tick >= 12 => 200_000,
            3003 => 100_003,
            _ => 250,
        }
    };
    write_procs(dir.path(), 0, &procs(0, false), 0, &rss(0));
    let mut reader = Reader::new(Root::new(dir.path()));
    let mut prev = reader.sample();
    let mut files = Vec::new();
    let mut q3_grown_at = None;
    for tick in 1..=30 {
        let gone = tick >= 10;
        if tick == 10 {
            fs::remove_dir_all(dir.path().join("proc/3002")).expect("q2 exits");
        }
        write_procs(dir.path(), tick, &procs(tick, gone), 0, &rss(tick));
        let before = reader.root().opened();
        let cur = reader.sample();
        let opened = reader.root().opened().since(before);
        files.push(opened.files - opened.missing);
        let d = derive(Some(&prev), &cur);
        let shown = |comm: &str| d.processes.iter().find(|m| m.comm == comm);
        close(
            shown("q0").and_then(|m| m.cpu_pct),
            20.0,
            &format!("q0 at {tick}"),
        );
        for comm in ["q1", "q2", "q3"] {
            if comm == "q2" && gone {
                assert!(shown(comm).is_none(), "q2 shown at {tick}, gone since 10");
                continue;
            }
            let m = shown(comm).unwrap_or_else(|| panic!("{comm} not shown at {tick}"));
            close(m.cpu_pct, 0.0, &format!("{comm} at {tick}"));
        }
        let want_total = if gone { 39 } else { 40 };
        assert_eq!(d.host.tasks.as_ref().map(|t| t.total), Some(want_total));
        if q3_grown_at.is_none() && shown("q3").and_then(|m| m.rss_kb) == Some(200_000 * 4) {
            q3_grown_at = Some(tick);
        }
        prev = cur;
    }
    let at = q3_grown_at.expect("q3's growth seen");
    assert!(
        (12..12 + u64::from(IDLE_EVERY)).contains(&at),
        "q3 grown at {at}"
    );
    // A pass: uptime and stat, q0's `stat` and `io`, 40 / IDLE_EVERY idle ones on their
    // turn (2 or 3); the three shown ones read too would be 6 more.
    assert!(
        files[2..].iter().all(|&n| n <= 9),
        "files per pass {files:?}"
    );
}

/// `/proc` is listed only when `/proc/stat`'s fork count moves (every process and thread
/// comes from a fork): a process that exits while idle leaves the count on its turn, and a new
/// one is seen on the pass its fork shows.
#[test]
fn proc_is_listed_when_the_fork_count_moves_and_exits_show_on_their_turn() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    let names: Vec<String> = (0..40).map(|k| format!("s{k}")).collect();
    let procs = |tick: u64| -> Vec<(u32, &str, u64, u64, u64)> {
        (0..40u64)
            // s10 exits at tick 3.
            .filter(|&k| !(tick >= 3 && k == 10))
            .map(|k| (5000 + k as u32, names[k as usize].as_str(), 1000, 0, 0))
            .collect()
    };
    let write = |tick: u64, forks: u64| {
        write_procs(dir.path(), tick, &procs(tick), 0, &|_| 250);
        let stat = dir.path().join("proc/stat");
        let text = fs::read_to_string(&stat).expect("stat") + &format!("processes {forks}\n");
        fs::write(&stat, text).expect("stat");
    };
    write(0, 500);
    let mut reader = Reader::new(Root::new(dir.path()));
    reader.sample();
    let mut totals = Vec::new();
    for tick in 1..=24u64 {
        // A process directory that appears with no fork counted (the kernel never does
        // this) is not seen until the count moves: the proof that the pass did not list.
        let forks = if tick >= 20 { 501 } else { 500 };
        write(tick, forks);
        if tick == 3 {
            fs::remove_dir_all(dir.path().join("proc/5010")).expect("s10 exits");
        }
        if tick == 8 {
            let d = dir.path().join("proc/5100");
            fs::create_dir_all(&d).expect("mkdir");
            fs::copy(dir.path().join("proc/5001/stat"), d.join("stat")).expect("stat");
        }
        let cur = reader.sample();
        let total = cur.processes.as_ref().map(|p| p.total);
        totals.push((tick, total));
    }
    let at = |t: u64| totals[t as usize - 1].1;
    // s10 gone at tick 3: counted until its idle turn reads it gone, within IDLE_EVERY passes.
    let gone = (3..=19u64).find(|&t| at(t) == Some(39));
    assert!(
        gone.is_some_and(|t| t < 3 + u64::from(IDLE_EVERY)),
        "s10's exit counted on its turn: {totals:?}"
    );
    // 5100's directory from tick 8, its fork from tick 20.
    assert!(
        (gone.unwrap_or(3)..20).all(|t| at(t) == Some(39)),
        "no listing without a fork: {totals:?}"
    );
    assert_eq!(
        at(20),
        Some(40),
        "listed on the pass the fork count moved: {totals:?}"
    );
}
