//! `wrap` (32-bit counters wrapping, CPU 1 offline, resets) and `bad` (garbled, truncated,
//! empty and oversized files).

use super::*;

#[test]
fn wrap_disk_ticks() {
    let Fx { d, .. } = load_clean("wrap");
    approx(d.interval_s, 1.0);
    let sdb = disk(&d, "sdb");
    // read_ticks 2^32-296 -> 204: Δ = 204 + 296 = 500 ms over 250 reads = 2.00 ms.
    approx(sdb.r_await, 2.0);
    approx(sdb.r_s, 250.0);
    // io_ticks 2^32-500 -> 300: Δ 800 ms in 1000 ms = 80%.
    approx(sdb.util, 80.0);
    // time_in_queue 2^32-1 -> 1499: Δ 1500 ms / 1000 ms = 1.50.
    approx(sdb.aqu_sz, 1.5);
    approx(sdb.w_await, 10.0); // 1000 ms / 100 writes, no wrap
                               // 15 fields (4.18+): discard known, flush not printed by this kernel.
    approx(sdb.d_s, 0.0);
    assert_eq!(sdb.f_s, None);
    // sdc's counts went down (device re-created): the interval is unknown, never negative.
    let sdc = disk(&d, "sdc");
    for (name, v) in [
        ("r/s", sdc.r_s),
        ("w/s", sdc.w_s),
        ("r_await", sdc.r_await),
        ("aqu-sz", sdc.aqu_sz),
        ("util", sdc.util),
    ] {
        assert_eq!(v, None, "sdc {name}");
    }
}

#[test]
fn wrap_softirq_softnet_and_irq_counters() {
    let Fx { t1, d, .. } = load_clean("wrap");
    // NET_RX on CPU2 2^32-296 -> 1704: Δ 2000; TIMER 2^32-1 -> 99: Δ 100.
    approx(rate(si(&d, 2), "NET_RX"), 2000.0);
    approx(rate(si(&d, 2), "TIMER"), 100.0);
    approx(rate(si(&d, 0), "NET_RX"), 100.0);
    approx(rate(si(&d, 3), "NET_RX"), 10.0);
    // CPU1 is offline but in the softirqs header: keyed by id, its column is unchanged.
    assert!(!si(&d, 1).online);
    approx(rate(si(&d, 1), "NET_RX"), 0.0);

    // 11-column softnet_stat, online CPUs 0,2,3: line 2 is CPU2, line 3 is CPU3.
    assert_eq!(
        t1.net.softnet.iter().map(|r| r.cpu).collect::<Vec<_>>(),
        vec![0, 2, 3]
    );
    // CPU2 processed 0xfffffc18 -> 0x3e8: 1000 + 1000 = 2000/s; squeeze 0xfffffffe -> 3: 5.
    approx(si(&d, 2).softnet_processed_per_s, 2000.0);
    approx(si(&d, 2).softnet_squeezed_per_s, 5.0);
    // CPU0 dropped 0xffffffff -> 1: 2/s; processed 0x1000 -> 0x1064: 100/s.
    approx(si(&d, 0).softnet_dropped_per_s, 2.0);
    approx(si(&d, 0).softnet_processed_per_s, 100.0);
    approx(si(&d, 3).softnet_processed_per_s, 16.0); // 0x10 -> 0x20
    assert_eq!(si(&d, 1).softnet_processed_per_s, None);

    // eth0-TxRx-0 on CPU0: 2^32-6 -> 10 = 16/s.
    let q = irq(&d, 30);
    approx(q.per_s, 16.0);
    assert_eq!(q.cpus, vec![0]);
    assert_eq!(
        (q.device.as_str(), q.queue, q.kind.as_str()),
        ("eth0", Some(0), "txrx")
    );
    // 64-bit net/dev counters: lo's went down (reset) -> unknown; eth0 +1000 pkts, +1_024_000 B.
    assert_eq!(nic(&d, "lo").rx_packets_per_s, None);
    approx(nic(&d, "eth0").rx_packets_per_s, 1000.0);
    approx(nic(&d, "eth0").rx_kb_per_s, 1000.0);
    // CPU1 offline: no /proc/stat line.
    assert!(!cpu(&d, 1).online);
    assert_eq!(cpu(&d, 1).c0_pct, None);
    approx(cpu(&d, 2).soft_pct, 10.0);
}

#[test]
fn bad_root_lists_problems_and_does_not_panic() {
    let Fx { t0, t1, d } = load("bad");
    let has = |path: &str| t1.problems.iter().any(|p| p.path == path);
    for path in [
        "proc/stat",
        "proc/meminfo",
        "proc/vmstat",
        "proc/diskstats",
        "proc/softirqs",
        "proc/net/softnet_stat",
        "proc/interrupts",
        "proc/net/dev",
        "proc/loadavg",
        "sys/devices/system/cpu/online",
        "sys/devices/system/node/node0/cpulist",
        "sys/devices/system/cpu/cpufreq/boost",
        "sys/kernel/mm/transparent_hugepage/enabled",
    ] {
        assert!(has(path), "no problem listed for {path}: {:?}", t1.problems);
    }
    assert!(t1
        .problems
        .iter()
        .any(|p| p.path == "proc/vmstat" && p.what.contains("not a regular file")));
    // The 1 MiB NET_RX row (t1 only) is a garbled row, not a number.
    assert!(t1
        .problems
        .iter()
        .any(|p| p.path == "proc/softirqs" && p.what.contains("NET_RX")));
    assert!(!t0
        .problems
        .iter()
        .any(|p| p.path == "proc/softirqs" && p.what.contains("NET_RX")));
    assert!(!d.host.problems.is_empty());

    // What could be read still is; what could not is unknown.
    assert_eq!(d.hugepages.mem_total_kb, Some(2_000_000));
    assert_eq!(d.dirty.dirty_kb, Some(12));
    assert_eq!(d.dirty.threshold_kb, None); // vmstat unreadable
    assert_eq!(d.dirty.state, None);
    assert!(d.cpus.iter().all(|c| c.c0_pct.is_none()));
    assert_eq!(d.host.busy_pct, None);
    // Only the one complete diskstats line survives.
    let names: Vec<&str> = d.disks.iter().map(|x| x.disk_device.as_str()).collect();
    assert_eq!(names, vec!["sda"]);
    approx(disk(&d, "sda").r_s, 0.0);
    // A garbled node cpulist is unknown, not an empty (memory-only) node.
    assert_eq!(t1.nodes[0].cpus, None);
    // The one good softnet line (13 columns, cpu 1) is kept.
    assert_eq!(
        t1.net.softnet.iter().map(|r| r.cpu).collect::<Vec<_>>(),
        vec![1]
    );

    // Since-boot and reversed derives and the text report survive it too.
    let t = perftop::findings::Thresholds::default();
    let now = assess(Some(&t0), &t1, &t);
    let boot = assess(None, &t1, &t);
    let back = assess(Some(&t1), &t0, &t);
    for x in [&now, &boot, &back] {
        let text = perftop::text::report(x, 1, 80);
        assert!(text.contains("Disks"));
    }
}
