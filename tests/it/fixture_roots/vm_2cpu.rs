//! `vm-2cpu`: a KVM guest with haltpoll, no cpufreq, virtio queues.

use super::*;

#[test]
fn vm_2cpu_cpu_and_haltpoll_states() {
    let Fx { d, .. } = load_clean("vm-2cpu");
    // uptime 1000.00 -> 1002.00
    approx(d.interval_s, 2.0);
    assert!(!d.since_boot);

    // cpu0 Δ: user 30 nice 0 system 10 idle 140 iowait 10 irq 0 softirq 6 steal 4 = 200 ticks.
    // busy = 30+0+10+0+6 = 46 -> C0 = 46/200 = 23%; steal 4/200 = 2%; soft 6/200 = 3%.
    let c0 = cpu(&d, 0);
    approx(c0.c0_pct, 23.0);
    approx(c0.steal_pct, 2.0);
    approx(c0.soft_pct, 3.0);
    approx(c0.iowait_pct, 5.0);
    // cpu1 Δ: user 100 system 40 idle 50 irq 2 softirq 8 = 200; busy 150 -> 75%, irq 1%, soft 4%.
    let c1 = cpu(&d, 1);
    approx(c1.c0_pct, 75.0);
    approx(c1.irq_pct, 1.0);
    approx(c1.soft_pct, 4.0);
    approx(c1.steal_pct, 0.0);

    // cpu0 envelope = (idle 140 + iowait 10) ticks = 1.5 s = 1_500_000 us. sysfs Δtime:
    // POLL 20_000 + haltpoll 1_480_000 = 1_500_000: matches, no rescale.
    // residency POLL 20_000/2e6 = 1%, haltpoll 1_480_000/2e6 = 74%.
    assert!(!c0.residency_scaled);
    approx(state(c0, "POLL").residency_pct, 1.0);
    approx(state(c0, "haltpoll").residency_pct, 74.0);
    // Δusage 400 + 1600 = 2000 over 2 s = 1000/s; avg residency 1_500_000/2000 = 750 us.
    approx(c0.wakeups_per_s, 1000.0);
    approx(c0.avg_residency_us, 750.0);
    approx(state(c0, "POLL").avg_residency_us, 50.0); // 20_000/400
    approx(state(c0, "haltpoll").avg_residency_us, 925.0); // 1_480_000/1600
                                                           // haltpoll Δabove 40 + Δbelow 120 = 160 of 1600 = 10%; whole CPU 160/2000 = 8%.
    approx(state(c0, "haltpoll").miss_pct, 10.0);
    approx(c0.miss_pct, 8.0);
    assert_eq!(state(c0, "haltpoll").latency_us, Some(1));

    // cpu1 envelope = 50 ticks = 500_000 us, sysfs says 80_000 + 720_000 = 800_000: off by
    // 300_000 > 2% of 2e6, so the shares are fitted into the envelope (x 0.625) and marked.
    // POLL 80_000*0.625/2e6 = 2.5%, haltpoll 720_000*0.625/2e6 = 22.5% (sum 25% = idle 50/200).
    assert!(c1.residency_scaled);
    approx(state(c1, "POLL").residency_pct, 2.5);
    approx(state(c1, "haltpoll").residency_pct, 22.5);
    approx(c1.wakeups_per_s, 2000.0); // (1000 + 3000) / 2
    approx(c1.avg_residency_us, 200.0); // 800_000 / 4000 (raw sysfs time)
    approx(c1.miss_pct, 0.75); // (0 + 30) / 4000
}

/// Fitted residency is a share of the same ticks as C0: over 2.00 s the kernel may count 198
/// ticks, not 200 (here cpu1's idle 48 instead of 50). cpu1: busy 150 of 198 = 75.7576 %,
/// idle 48/198 = 24.2424 %; sysfs 800_000 µs (40 % of 2 s) is off, so the states are fitted
/// into that share: POLL 80_000/800_000 x 24.2424 = 2.42424 %, haltpoll 21.8182 %, and C0 +
/// steal + the states make 100 (fitted to idle ticks x 10 ms over the interval, they made
/// 99.76).
#[test]
fn fitted_residency_is_a_share_of_the_same_ticks_as_c0() {
    let dir = tempfile::tempdir().expect("tempdir");
    for when in ["t0", "t1"] {
        support::copy_tree(&fixture("vm-2cpu").join(when), &dir.path().join(when));
    }
    let stat = dir.path().join("t1/proc/stat");
    let text = std::fs::read_to_string(&stat).expect("stat");
    let jittered = text.replace(
        "cpu1 12100 0 6040 81540 100 12 308 100 0 0",
        "cpu1 12100 0 6040 81538 100 12 308 100 0 0",
    );
    assert_ne!(jittered, text, "the fixture's cpu1 line");
    std::fs::write(&stat, jittered).expect("write");
    let at = |w: &str| perftop::source::Reader::new(perftop::root::Root::new(dir.path().join(w)));
    let d = derive(Some(&at("t0").sample()), &at("t1").sample());
    let c1 = cpu(&d, 1);
    approx(c1.c0_pct, 150.0 / 198.0 * 100.0);
    assert!(c1.residency_scaled);
    let share = 48.0 / 198.0 * 100.0;
    approx(state(c1, "POLL").residency_pct, 0.1 * share);
    approx(state(c1, "haltpoll").residency_pct, 0.9 * share);
    let states: f64 = c1.states.iter().filter_map(|s| s.residency_pct).sum();
    approx(
        c1.c0_pct.zip(c1.steal_pct).map(|(c, s)| c + s + states),
        100.0,
    );
}

#[test]
fn vm_2cpu_host_hints_without_cpufreq() {
    let Fx { t1, d, .. } = load_clean("vm-2cpu");
    // No cpufreq directory at all: no policies, no MHz, and the header says why.
    assert!(t1.cpu.freq.policies.is_empty());
    assert!(d.policies.is_empty());
    for c in &d.cpus {
        assert_eq!(c.mhz, None, "cpu {} has no frequency source", c.cpu);
        assert_eq!(c.policy, None);
        assert!(!c.mhz_stale);
    }
    let h = &d.host;
    assert_eq!(h.idle_driver.as_deref(), Some("haltpoll"));
    assert!(h.freq_drivers.is_empty());
    assert!(h.vm_hints.iter().any(|s| s.contains("no cpufreq")));
    assert!(h.vm_hints.iter().any(|s| s.contains("haltpoll")));
    // hypervisor flag in cpuinfo
    assert!(h.hypervisor.is_some());
    assert_eq!((h.cpus_online, h.cpus_present, h.nodes), (2, Some(2), 1));
    // Totals: busy 46+150 = 196 of 400 ticks = 49%; steal 4/400 = 1%; iowait 10/400 = 2.5%.
    approx(h.busy_pct, 49.0);
    approx(h.steal_pct, 1.0);
    approx(h.iowait_pct, 2.5);
    approx(h.ctxt_per_s, 5000.0); // 10_000 / 2
    approx(h.intr_per_s, 3000.0); // 6_000 / 2
    assert_eq!(h.procs_running, Some(2));
    // node0 numastat: hit +5000, miss +0 -> 2500/s, miss ratio 0.
    let n0 = node(&d, 0);
    assert_eq!(n0.cpus, vec![0, 1]);
    approx(n0.numa_hit_per_s, 2500.0);
    approx(n0.miss_ratio, 0.0);
    assert_eq!(cpu(&d, 1).node, Some(0));
    assert_eq!(cpu(&d, 1).core, Some(1));
}

#[test]
fn vm_2cpu_softirq_softnet_and_virtio_queues() {
    let Fx { t1, d, .. } = load_clean("vm-2cpu");
    // softirqs NET_RX Δ 2000 / 400 over 2 s; TIMER Δ 500 / 600.
    approx(rate(si(&d, 0), "NET_RX"), 1000.0);
    approx(rate(si(&d, 1), "NET_RX"), 200.0);
    approx(rate(si(&d, 0), "TIMER"), 250.0);
    approx(rate(si(&d, 1), "TIMER"), 300.0);
    approx(rate(si(&d, 0), "HI"), 0.0);
    // softnet_stat, 15 columns: the cpu id is column 13.
    assert!(t1.net.softnet.iter().all(|r| r.cpu_from_file));
    assert_eq!(
        t1.net.softnet.iter().map(|r| r.cpu).collect::<Vec<_>>(),
        vec![0, 1]
    );
    // processed 0x30d40 -> 0x31510 (+2000), 0x249f0 -> 0x24b80 (+400)
    approx(si(&d, 0).softnet_processed_per_s, 1000.0);
    approx(si(&d, 1).softnet_processed_per_s, 200.0);
    approx(si(&d, 1).softnet_dropped_per_s, 1.0); // 3 -> 5
    approx(si(&d, 1).softnet_squeezed_per_s, 2.0); // 7 -> 0xb
    assert_eq!(si(&d, 1).backlog, Some(3)); // column 12 (input 1 + process 2)
                                            // ksoftirqd/0 stime 120 -> 130: 10 ticks in 2 s = 5 ticks/s = 5% of a CPU.
    approx(si(&d, 0).ksoftirqd_pct, 5.0);
    approx(si(&d, 1).ksoftirqd_pct, 0.0);

    // Only the two virtio-net queues are NIC queues (virtio1-req.0 is the disk, *-config and
    // the legacy IO-APIC lines are not queues).
    let ids: Vec<u32> = d.irq_queues.iter().map(|q| q.irq).collect();
    assert_eq!(ids, vec![27, 28]);
    // virtio2-input.0: CPU0 20000 -> 21000, CPU1 1000 -> 1000: 1000/2 s = 500/s on CPU0 only.
    let q = irq(&d, 27);
    assert_eq!(
        (q.device.as_str(), q.queue, q.kind.as_str()),
        ("virtio2", Some(0), "rx")
    );
    approx(q.per_s, 500.0);
    assert_eq!(q.cpus, vec![0]);
    assert_eq!(q.affinity.as_deref(), Some("0-1"));
    assert_eq!(q.effective_affinity.as_deref(), Some("0"));
    assert_eq!(q.node, Some(0));
    // virtio2-output.0: +10 on CPU0, +300 on CPU1 = 310/2 = 155/s.
    let q = irq(&d, 28);
    assert_eq!(
        (q.device.as_str(), q.queue, q.kind.as_str()),
        ("virtio2", Some(0), "tx")
    );
    approx(q.per_s, 155.0);
    assert_eq!(q.cpus, vec![0, 1]);

    // Every line, not only queues: virtio1-req.0 (the disk) 30 000 -> 30 600 on CPU1 = 300/s;
    // its average since boot 30 600 / 1002 s.
    let m = &d.interrupts;
    assert_eq!((m.lines_total, m.lines_idle), (9, 6));
    let disk = m.lines.iter().find(|l| l.irq == 25).expect("irq 25");
    approx(disk.per_s, 300.0);
    approx(disk.boot_per_s, 30_600.0 / 1002.0);
    assert_eq!(&*disk.chip, "PCI-MSIX-0000:00:02.0");
    // Per CPU over 2 s: LOC +2 000 each; CPU0 also virtio2-input +1 000 and -output +10,
    // CPU1 virtio1-req +600 and virtio2-output +300; the IPI rows did not move.
    let c0 = &m.cpus[0];
    approx(c0.rates["LOC"], 1000.0);
    approx(c0.hard_irq_per_s, 1505.0);
    approx(c0.call_tlb_per_s, 0.0);
    approx(m.cpus[1].hard_irq_per_s, 1450.0);
    // /proc/stat: intr +6 000, ctxt +10 000 over 2 s.
    approx(m.intr_per_s, 3000.0);
    approx(m.ctxt_per_s, 5000.0);

    // net/dev eth0: rx bytes +2_048_000 (1000 KiB/s), packets +4000, drop +2 over 2 s.
    let e = nic(&d, "eth0");
    assert_eq!(e.driver.as_deref(), Some("virtio_net"));
    approx(e.rx_packets_per_s, 2000.0);
    approx(e.rx_kb_per_s, 1000.0);
    approx(e.rx_drop_per_s, 1.0);
    assert_eq!((e.rx_queues, e.tx_queues), (1, 1));
    approx(nic(&d, "lo").rx_packets_per_s, 10.0);
}

#[test]
fn vm_2cpu_disks_and_dirty() {
    let Fx { t1, d, .. } = load_clean("vm-2cpu");
    let vda = t1.disks.iter().find(|x| x.name == "vda").expect("vda");
    assert_eq!((vda.fields, vda.whole_disk), (17, true));
    assert!(!disk(&d, "vda").partition);
    assert!(disk(&d, "vda1").partition);
    assert_eq!(disk(&d, "vda").inflight, Some(2)); // sys/block/vda/inflight "0 2"
    assert_eq!(disk(&d, "vda").scheduler.as_deref(), Some("none"));
    // page size: MemFree 1_000_000 kB / nr_free_pages 250_000 = 4 kB.
    // nr_dirty 512 < background 30_000 pages: below background.
    let dm = &d.dirty;
    assert_eq!(dm.page_kb, 4);
    assert_eq!(
        d.memory.page_kb_from,
        perftop::pagesize::PageKbFrom::Inferred
    );
    assert_eq!(dm.state.as_deref(), Some("below_background"));
    assert_eq!(dm.background_threshold_kb, Some(120_000)); // 30_000 * 4
    assert_eq!(dm.freerun_kb, Some(180_000)); // (30_000 + 60_000) / 2 * 4
    assert_eq!(dm.threshold_kb, Some(240_000)); // 60_000 * 4
    assert_eq!(dm.dirty_kb, Some(2048)); // meminfo Dirty
    approx(dm.dirtied_kb_per_s, 400.0); // +200 pages / 2 s * 4 kB
    approx(dm.written_kb_per_s, 376.0); // +188 pages / 2 s * 4 kB
    assert_eq!(dm.limit_from.as_deref(), Some("ratio"));
}
