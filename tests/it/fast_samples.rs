//! What a sample reads in turns when samples come faster than a second (`-d 0.25`): the TCP
//! counters on a quiet host (`source::tcp::TcpTurns`), each CPU's idle-state counters, each
//! NUMA node's meminfo (`source::turns::every_for_gap`), the cgroups and the process pass.
//! Each is read about once a second, on one period that the clock's 10 ms steps do not flip,
//! the counters' rates are exact over their own two reads on every sample, and at 1 s
//! everything is read every sample; at 2 s and more apart, every setting too. Counts written by
//! hand.

use crate::support;
use perftop::derive::derive;
use perftop::root::Root;
use perftop::source::Reader;
use std::fs;
use std::path::Path;

/// `proc/uptime` at `up` seconds (idle time twice that, as on two CPUs).
fn write_uptime(dir: &Path, up: f64) {
    fs::create_dir_all(dir.join("proc")).expect("mkdir");
    fs::write(
        dir.join("proc/uptime"),
        format!("{up:.2} {:.2}\n", 2.0 * up),
    )
    .expect("uptime");
}

/// Counters of the host at uptime `up`: `packets` through eth0 (received and sent alike),
/// `out` TCP segments sent, `timeouts` RTO expiries.
fn write(dir: &Path, up: f64, packets: u64, out: u64, timeouts: u64) {
    let net = dir.join("proc/net");
    fs::create_dir_all(&net).expect("mkdir");
    write_uptime(dir, up);
    fs::write(
        net.join("dev"),
        format!(
            "Inter-|   Receive                                                |  Transmit\n \
             face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n  \
             eth0: {b} {packets} 0 0 0 0 0 0 {b} {packets} 0 0 0 0 0 0\n",
            b = packets * 100
        ),
    )
    .expect("dev");
    fs::write(
        net.join("snmp"),
        format!(
            "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n\
             Tcp: 1 200 120000 -1 10 5 0 0 3 1000 {out} {timeouts} 0 0 0\n\
             Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n\
             Udp: 1 0 0 1 0 0 0 0 0\n"
        ),
    )
    .expect("snmp");
    fs::write(
        net.join("netstat"),
        format!(
            "TcpExt: ListenOverflows ListenDrops TCPBacklogDrop TCPTimeouts TCPRcvQDrop\n\
             TcpExt: 0 0 0 {timeouts} 0\n"
        ),
    )
    .expect("netstat");
    fs::write(
        net.join("sockstat"),
        "sockets: used 10\nTCP: inuse 3 orphan 0 tw 1 alloc 4 mem 2\n",
    )
    .expect("sockstat");
}

/// Uptime of sample `t`, 0.25 s apart (exact in binary, so the rates below are exact).
fn up(t: u64) -> f64 {
    10_000.0 + t as f64 * 0.25
}

#[test]
fn quiet_fast_samples_read_tcp_about_once_a_second_with_exact_rates() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    // Quiet to t = 19: 10 packets, 8 segments and 1 timeout a sample (40 packets/s, 32
    // segments/s, 4 timeouts/s). Busy from t = 20: 1,000 packets and 400 segments a sample.
    let counts = |t: u64| {
        let quiet = t.min(19);
        let busy = t.saturating_sub(19);
        (10 * quiet + 1_000 * busy, 8 * quiet + 400 * busy, quiet)
    };
    let (p, o, x) = counts(0);
    write(dir.path(), up(0), p, o, x);
    let mut reader = Reader::new(Root::new(dir.path()));
    let mut prev = reader.sample();
    let mut read_at = Vec::new();
    for t in 1..=30u64 {
        let (p, o, x) = counts(t);
        write(dir.path(), up(t), p, o, x);
        let cur = reader.sample();
        let tcp = cur.net.tcp.as_ref().expect("tcp");
        // When the counters this sample shows were read (this sample unless turned).
        let at = tcp
            .turn
            .as_ref()
            .and_then(|turn| turn.at.uptime_s)
            .map_or(t, |u| ((u - 10_000.0) / 0.25).round() as u64);
        read_at.push(at);
        assert_eq!(tcp.out_segs, Some(counts(at).1), "carried as read at {at}");
        let d = derive(Some(&prev), &cur);
        let m = d.tcp.as_ref().expect("tcp metrics");
        if t <= 19 {
            assert_eq!(m.out_segs_per_s, Some(32.0), "segments at {t}");
            assert_eq!(m.timeouts_per_s, Some(4.0), "timeouts at {t}");
        }
        // From the third sample on (the first two read them: two reads make a rate).
        if (3..=19).contains(&t) {
            let secs = m.table_secs.expect("read in turns: its interval said");
            assert!((0.25..=1.0).contains(&secs), "{secs} s at {t}");
        }
        if t == 20 {
            // Busy: read at once, over its own half second since the read at t = 18: a quiet
            // sample's 8 segments and a busy one's 400.
            assert_eq!(at, 20, "the first busy sample reads them");
            assert_eq!(m.table_secs, Some(0.5));
            assert_eq!(m.out_segs_per_s, Some(816.0));
        }
        if t >= 21 {
            assert_eq!(at, t, "read every sample when busy");
            assert_eq!(m.out_segs_per_s, Some(1_600.0), "segments at {t}");
            assert_eq!(m.table_secs, None, "one sample's interval at {t}");
        }
        prev = cur;
    }
    // Every sample until samples are known to come fast (t = 0: no gap yet), then two reads
    // (t = 1 and 2: two make a rate) and one every 4 samples (a second) while quiet.
    let reads: std::collections::BTreeSet<u64> = read_at[..19].iter().copied().collect();
    assert_eq!(
        reads,
        [1, 2, 6, 10, 14, 18].into_iter().collect(),
        "{read_at:?}"
    );
    assert!(
        read_at[..19].iter().zip(1u64..).all(|(&at, t)| t - at < 4),
        "no counters older than 4 samples: {read_at:?}"
    );
}

#[test]
fn at_one_second_every_sample_reads_tcp() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), 10_000.0, 0, 0, 0);
    let mut reader = Reader::new(Root::new(dir.path()));
    let mut prev = reader.sample();
    for t in 1..=6u64 {
        write(dir.path(), 10_000.0 + t as f64, 10 * t, 8 * t, t);
        let cur = reader.sample();
        let tcp = cur.net.tcp.as_ref().expect("tcp");
        assert_eq!(tcp.turn, None, "read this sample at {t}");
        assert_eq!(tcp.out_segs, Some(8 * t));
        let d = derive(Some(&prev), &cur);
        let m = d.tcp.as_ref().expect("tcp metrics");
        assert_eq!(m.out_segs_per_s, Some(8.0), "at {t}");
        assert_eq!(m.table_secs, None);
        prev = cur;
    }
}

/// Two CPUs, each with two idle states: state0's `usage` grows 10 a sample, state1's 20, and
/// `time` 1,000 µs and 50,000 µs (`n` samples in); one NUMA node whose MemFree is `free` kB.
fn write_cpus_and_node(dir: &Path, up: f64, n: u64, free: u64) {
    let proc = dir.join("proc");
    fs::create_dir_all(&proc).expect("mkdir");
    write_uptime(dir, up);
    let idle = 1_000 + 20 * n;
    fs::write(
        proc.join("stat"),
        format!(
            "cpu  10 0 10 {} 0 0 0 0 0 0\ncpu0 5 0 5 {idle} 0 0 0 0 0 0\n\
             cpu1 5 0 5 {idle} 0 0 0 0 0 0\nintr 0\nctxt 1\n",
            2 * idle
        ),
    )
    .expect("stat");
    for cpu in 0..2 {
        for (k, name, usage, time) in [
            (0, "POLL", 10 * n, 1_000 * n),
            (1, "C1", 20 * n, 50_000 * n),
        ] {
            let d = dir.join(format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state{k}"));
            fs::create_dir_all(&d).expect("mkdir");
            fs::write(d.join("name"), format!("{name}\n")).expect("name");
            for (file, v) in [("usage", usage), ("time", time), ("above", 0), ("below", 0)] {
                fs::write(d.join(file), format!("{v}\n")).expect("counter");
            }
        }
    }
    let node = dir.join("sys/devices/system/node/node0");
    fs::create_dir_all(&node).expect("mkdir");
    fs::write(node.join("cpulist"), "0-1\n").expect("cpulist");
    fs::write(
        node.join("meminfo"),
        format!("Node 0 MemTotal:       24000000 kB\nNode 0 MemFree:        {free} kB\n"),
    )
    .expect("meminfo");
}

#[test]
fn fast_samples_read_idle_states_and_node_memory_in_turns() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    let free = |t: u64| 1_000_000 + 100 * t;
    write_cpus_and_node(dir.path(), up(0), 0, free(0));
    let mut reader = Reader::new(Root::new(dir.path()));
    let mut prev = reader.sample();
    let mut node_reads = Vec::new();
    for t in 1..=16u64 {
        write_cpus_and_node(dir.path(), up(t), t, free(t));
        let cur = reader.sample();
        // Only what this test writes is asked about (no meminfo, vmstat or disks here).
        let ours =
            |p: &&perftop::sample::Problem| p.path.contains("cpu") || p.path.contains("node");
        assert_eq!(
            cur.problems.iter().filter(ours).count(),
            0,
            "{:?}",
            cur.problems
        );
        assert_eq!(cur.cpu.detail_every, Some(4), "about a second at 0.25 s");
        let d = derive(Some(&prev), &cur);
        for (c, m) in cur.cpu.cpus.iter().zip(&d.cpus) {
            let turn = c.idle_turn.as_ref().expect("each CPU's detail says when");
            let at = ((turn.at.uptime_s.expect("uptime") - 10_000.0) / 0.25).round() as u64;
            assert!(t - at < 4, "cpu{} at {t}: read at {at}", c.id);
            if turn.before.is_some() {
                // 30 wakeups a sample, over the CPU's own interval: 120/s at any age.
                assert_eq!(m.wakeups_per_s, Some(120.0), "cpu{} at {t}", c.id);
            }
        }
        let node = &cur.nodes[0];
        assert_eq!(node.meminfo_every, Some(4));
        let shown = node.meminfo.mem_free.expect("MemFree");
        let read_at = (shown - 1_000_000) / 100;
        assert!(t - read_at < 4, "node memory at {t}: read at {read_at}");
        node_reads.push(read_at);
        prev = cur;
    }
    // The first fast sample reads it (nothing carried yet), then the node's phase: once
    // every 4 samples.
    let reads: Vec<u64> = node_reads
        .iter()
        .copied()
        .collect::<std::collections::BTreeSet<u64>>()
        .into_iter()
        .collect();
    assert_eq!(reads[0], 1, "{node_reads:?}");
    assert!(
        reads.windows(2).skip(1).all(|w| w[1] - w[0] == 4),
        "{node_reads:?}"
    );
    assert_eq!(reads.len(), 5, "{node_reads:?}");
    // At 1 s apart, everything every sample.
    for t in 17..=19u64 {
        let up = up(16) + (t - 16) as f64;
        write_cpus_and_node(dir.path(), up, t, free(t));
        let cur = reader.sample();
        assert_eq!(cur.nodes[0].meminfo.mem_free, Some(free(t)), "at {t}");
        assert_eq!(cur.nodes[0].meminfo_every, None);
        if t > 17 {
            assert_eq!(cur.cpu.detail_every, None, "at {t}");
            assert!(cur.cpu.cpus.iter().all(|c| c.idle_turn.is_none()));
        }
    }
}

/// A cgroup v2 host with one group, `svc`, that uses 0.1 CPU-s and gains 2 `max` events a
/// sample (`n` samples in).
fn write_cgroup(dir: &Path, up: f64, n: u64) {
    let proc = dir.join("proc/self");
    fs::create_dir_all(&proc).expect("mkdir");
    write_uptime(dir, up);
    fs::write(
        proc.join("mountinfo"),
        "22 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n\
         27 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw\n",
    )
    .expect("mountinfo");
    let root = dir.join("sys/fs/cgroup");
    let svc = root.join("svc");
    fs::create_dir_all(&svc).expect("mkdir");
    fs::write(root.join("cgroup.controllers"), "cpu io memory pids\n").expect("controllers");
    fs::write(
        svc.join("cpu.stat"),
        format!(
            "usage_usec {}\nuser_usec 0\nsystem_usec 0\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n",
            100_000 * n
        ),
    )
    .expect("cpu.stat");
    fs::write(svc.join("memory.current"), "104857600\n").expect("memory.current");
    fs::write(svc.join("memory.max"), "1073741824\n").expect("memory.max");
    fs::write(
        svc.join("memory.events"),
        format!("low 0\nhigh 0\nmax {}\noom 0\noom_kill 0\n", 2 * n),
    )
    .expect("memory.events");
}

#[test]
fn fast_samples_read_cgroups_about_once_a_second_with_exact_rates() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    write_cgroup(dir.path(), up(0), 0);
    let mut reader = Reader::new(Root::new(dir.path()));
    let mut prev = reader.sample();
    let mut read_at = Vec::new();
    for t in 1..=12u64 {
        write_cgroup(dir.path(), up(t), t);
        let cur = reader.sample();
        let groups = cur.cgroups.as_ref().expect("cgroups");
        let svc = groups
            .groups
            .iter()
            .find(|g| g.path == "/svc")
            .expect("svc");
        let at = svc.usage_us.expect("usage") / 100_000;
        assert!(t - at < 4, "at {t}: read at {at}");
        read_at.push(at);
        let d = derive(Some(&prev), &cur);
        let m = d
            .cgroups
            .iter()
            .find(|g| g.path == "/svc")
            .expect("svc metrics");
        if t >= 3 {
            // 0.1 CPU-s a quarter second is 40 % of a CPU over any of its own intervals.
            let cpu = m.cpu_pct.expect("cpu %");
            assert!((cpu - 40.0).abs() < 1e-9, "at {t}: {cpu}");
            let secs = d.host.cgroups_secs;
            assert!(
                secs.is_some_and(|s| (0.25..=1.0).contains(&s)),
                "at {t}: {secs:?}"
            );
        }
        prev = cur;
    }
    let reads: std::collections::BTreeSet<u64> = read_at.iter().copied().collect();
    assert_eq!(reads, [1, 2, 6, 10].into_iter().collect(), "{read_at:?}");
}

/// 200 idle processes (no CPU, no faults, no I/O) on a host sampled 0.25 s apart: each is read
/// on its turn every `IDLE_EVERY` seconds, as at 1 s (the pass runs once in 4 samples, so 16
/// passes in 64 samples), about 200 in 64 samples; at 1 s apart, every 16 passes.
#[test]
fn idle_processes_keep_their_turn_in_seconds_at_fast_samples() {
    let _counting = support::counting_reads();
    use perftop::source::processes::{idle_every, IDLE_EVERY};
    assert_eq!(idle_every(None, Some(0.25)), 64);
    assert_eq!(idle_every(None, Some(0.5)), 32);
    assert_eq!(idle_every(None, Some(1.0)), IDLE_EVERY);
    assert_eq!(idle_every(None, None), IDLE_EVERY);
    // Passes 4 samples of 0.25 s apart read 0.96 or 1.04 s by /proc/uptime's 10 ms steps:
    // 16.7 turns asked for, kept at the 16 in force (17 when nothing is in force yet).
    assert_eq!(idle_every(None, Some(0.96)), 17);
    assert_eq!(idle_every(Some(IDLE_EVERY), Some(0.96)), IDLE_EVERY);
    assert_eq!(idle_every(Some(32), Some(0.5)), 32);
    assert_eq!(idle_every(Some(IDLE_EVERY), Some(0.5)), 32);
    let dir = tempfile::tempdir().expect("tempdir");
    let proc = dir.path().join("proc");
    for k in 0..200u32 {
        let pid = 1000 + k;
        let d = proc.join(pid.to_string());
        fs::create_dir_all(&d).expect("mkdir");
        fs::write(
            d.join("stat"),
            format!(
                "{pid} (p{k}) S 1 {pid} {pid} 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 100 \
                 1000000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 \
                 0 0 0 0\n"
            ),
        )
        .expect("stat");
    }
    let write_clock = |up: f64| {
        write_uptime(dir.path(), up);
        fs::write(
            proc.join("stat"),
            "cpu  0 0 0 1000 0 0 0 0 0 0\ncpu0 0 0 0 1000 0 0 0 0 0 0\nprocesses 500\n",
        )
        .expect("stat");
    };
    let stat_reads = |costs: &std::sync::Mutex<perftop::root::cost::Costs>| {
        costs
            .lock()
            .expect("costs")
            .dearest()
            .iter()
            .filter(|(p, ..)| {
                // `ROOT/proc/1234/stat` (pids are folded into `PID` only under `/proc` itself).
                let c: Vec<&str> = p.rsplit('/').take(3).collect();
                c.len() == 3
                    && c[0] == "stat"
                    && c[2] == "proc"
                    && c[1].bytes().all(|b| b.is_ascii_digit())
            })
            .map(|(_, _, n)| *n)
            .sum::<u64>()
    };
    let costs = std::sync::Arc::new(std::sync::Mutex::new(Default::default()));
    write_clock(up(0));
    let mut reader = Reader::new(Root::new(dir.path()).timed(costs.clone()));
    // The first passes read every process (new, then moved from nothing); then turns.
    for t in 1..=8u64 {
        write_clock(up(t));
        reader.sample();
    }
    let before = stat_reads(&costs);
    for t in 9..=8 + 64u64 {
        write_clock(up(t));
        let s = reader.sample();
        assert_eq!(
            s.processes.as_ref().map(|p| p.total),
            Some(200),
            "all counted"
        );
    }
    let fast = stat_reads(&costs) - before;
    assert!(
        (200..=240).contains(&fast),
        "{fast} stat reads in 64 samples at 0.25 s"
    );
    // 1 s apart: every 16 passes, 4 times as many reads in as many passes.
    let before = stat_reads(&costs);
    for t in 0..64u64 {
        write_clock(up(8 + 64) + 1.0 + t as f64);
        reader.sample();
    }
    let slow = stat_reads(&costs) - before;
    assert!(
        (800..=880).contains(&slow),
        "{slow} stat reads in 64 passes at 1 s"
    );
}

/// A host with one process and ksoftirqd/0 that have each used `ticks` of CPU by uptime `up`
/// (and the host both).
fn write_busy_process(dir: &Path, up: f64, ticks: u64) {
    let proc = dir.join("proc");
    let d = proc.join("4242");
    fs::create_dir_all(&d).expect("mkdir");
    write_uptime(dir, up);
    fs::write(
        proc.join("stat"),
        format!(
            "cpu  {b} 0 0 1000 0 0 0 0 0 0\ncpu0 {b} 0 0 1000 0 0 0 0 0 0\nprocesses 500\n",
            b = 2 * ticks
        ),
    )
    .expect("stat");
    fs::write(
        d.join("stat"),
        format!(
            "4242 (burner) R 1 4242 4242 0 -1 4194560 0 0 0 0 {ticks} 0 0 0 20 0 1 0 100 \
             1000000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 \
             0 0 0 0\n"
        ),
    )
    .expect("pid stat");
    // ksoftirqd/0, using as much.
    let k = proc.join("15");
    fs::create_dir_all(&k).expect("mkdir");
    fs::write(k.join("comm"), "ksoftirqd/0\n").expect("comm");
    fs::write(
        k.join("stat"),
        format!(
            "15 (ksoftirqd/0) S 2 0 0 0 -1 2097216 0 0 0 0 {ticks} 0 0 0 20 0 1 0 5 0 0 \
             18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 \
             0 0 0\n"
        ),
    )
    .expect("ksoftirqd stat");
}

/// Samples 0.25 s apart run the process pass about once a second (on the sample that reads
/// the other once-a-second tables); the samples between carry the last pass, with the time it
/// was read. A process using 5 ticks a quarter second shows 20 % of a CPU on every sample,
/// the pass's and those that carry it alike (its rate over its own two reads). At 1 s every
/// sample runs the pass. A kernel thread that works (ksoftirqd/0, 20 ticks a second) is read
/// on its own between passes, its rate exact on every sample.
#[test]
fn fast_samples_run_the_process_pass_about_once_a_second_with_exact_rates() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    write_busy_process(dir.path(), up(0), 0);
    let mut reader = Reader::new(Root::new(dir.path()));
    let mut prev = reader.sample();
    let mut passes = Vec::new();
    for t in 1..=12u64 {
        write_busy_process(dir.path(), up(t), 5 * t);
        let cur = reader.sample();
        let p = cur.processes.as_ref().expect("processes");
        assert_eq!(p.every, Some(4), "at {t}");
        if p.at.is_none() {
            passes.push(t);
        }
        let task = p.tasks.iter().find(|x| x.pid == 4242).expect("burner");
        // Carried: as the last pass read it.
        let last_pass = *passes.last().expect("a pass");
        assert_eq!(task.counters.ticks, 5 * last_pass, "at {t}");
        let d = derive(Some(&prev), &cur);
        let m = d
            .processes
            .iter()
            .find(|m| m.pid == 4242)
            .expect("burner metrics");
        let cpu = m.cpu_pct.expect("cpu %");
        assert!((cpu - 20.0).abs() < 1e-9, "at {t}: {cpu}");
        assert_eq!(d.host.tasks.as_ref().and_then(|c| c.every), Some(4));
        // ksoftirqd/0 works: read on its own between passes, 20 ticks a second on every
        // sample.
        let k = d.softirq_cpus.iter().find(|c| c.cpu == 0).expect("cpu0");
        let pct = k.ksoftirqd_pct.expect("ksoftirqd %");
        assert!((pct - 20.0).abs() < 1e-9, "at {t}: ksoftirqd {pct}");
        prev = cur;
    }
    assert_eq!(passes, [1, 3, 7, 11], "the passes");
    // 1 s apart: every sample, 5 ticks a second is 5 %.
    for t in 0..4u64 {
        let up = up(12) + 1.0 + t as f64;
        write_busy_process(dir.path(), up, 60 + 5 * (t + 1));
        let cur = reader.sample();
        let p = cur.processes.as_ref().expect("processes");
        assert_eq!((p.every, p.at.is_none()), (None, true), "at {up}");
        let d = derive(Some(&prev), &cur);
        let m = d.processes.iter().find(|m| m.pid == 4242).expect("burner");
        let cpu = m.cpu_pct.expect("cpu %");
        // The first 1 s sample measures from the 0.25 s pass before it (sample 11, 1.25 s).
        let want = if t == 0 { 10.0 / 1.25 } else { 5.0 };
        assert!((cpu - want).abs() < 1e-9, "at {up}: {cpu}");
        prev = cur;
    }
}

/// Samples 0.4 s apart as `/proc/uptime` reads them, in 10 ms steps: 0.41 and 0.39 s in turn,
/// 2.44 and 2.56 samples a second, which round to 2 and 3. The period is chosen on the first
/// gap and kept (`turns::steady`), so the process pass runs every other sample, not at once
/// whenever the rounding flips. A process using a whole CPU (a tick each 10 ms) shows 100 %
/// on every sample, over its own two reads.
#[test]
fn samples_on_a_rounding_edge_keep_one_period() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    // Hundredths of a second since 10,000 s: 0, 41, 80, 121, 160, ...
    let at = |t: u64| 40 * t + (t % 2);
    let up = |t: u64| 10_000.0 + at(t) as f64 / 100.0;
    write_busy_process(dir.path(), up(0), at(0));
    let mut reader = Reader::new(Root::new(dir.path()));
    let mut prev = reader.sample();
    let mut passes = Vec::new();
    for t in 1..=12u64 {
        write_busy_process(dir.path(), up(t), at(t));
        let cur = reader.sample();
        let p = cur.processes.as_ref().expect("processes");
        assert_eq!(p.every, Some(2), "at {t}");
        if p.at.is_none() {
            passes.push(t);
        }
        let d = derive(Some(&prev), &cur);
        let m = d.processes.iter().find(|m| m.pid == 4242).expect("burner");
        let cpu = m.cpu_pct.expect("cpu %");
        assert!((cpu - 100.0).abs() < 1e-6, "at {t}: {cpu}");
        prev = cur;
    }
    assert_eq!(passes, [1, 3, 5, 7, 9, 11], "the passes");
}

/// Samples 2 s apart read every setting on every sample, also when `/proc/uptime`'s 10 ms
/// steps make a gap read 1.99 s: a sysctl changed between two samples shows on the second.
#[test]
fn samples_two_seconds_apart_read_every_setting_each_time() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    let vm = dir.path().join("proc/sys/vm");
    fs::create_dir_all(&vm).expect("mkdir");
    // Hundredths since 10,000 s: 0, 199, 400, 599, 800, ... (gaps 1.99 and 2.01 s).
    let at = |t: u64| 200 * t - (t % 2);
    write_uptime(dir.path(), 10_000.0);
    fs::write(vm.join("swappiness"), "60\n").expect("swappiness");
    let mut reader = Reader::new(Root::new(dir.path()));
    let first = reader.sample();
    assert_eq!(first.memory.vm.swappiness, Some(60));
    for t in 1..=6u64 {
        write_uptime(dir.path(), 10_000.0 + at(t) as f64 / 100.0);
        let v = 60 + t;
        fs::write(vm.join("swappiness"), format!("{v}\n")).expect("swappiness");
        let s = reader.sample();
        assert_eq!(s.memory.vm.swappiness, Some(v), "at {t}");
    }
}
