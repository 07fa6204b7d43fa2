//! `intel-pstate`: 4 CPUs, per-CPU policies, intel_idle, NVMe, i40e.

use super::*;

#[test]
fn intel_pstate_c0_mhz_and_policies() {
    let Fx { d, .. } = load_clean("intel-pstate");
    approx(d.interval_s, 1.0); // 5000.00 -> 5001.00
                               // 100 ticks per CPU: busy 90, 50 (40+5+5 soft), 10 (5+5, iowait 2), 2.
    for (id, c0) in [(0, 90.0), (1, 50.0), (2, 10.0), (3, 2.0)] {
        approx(cpu(&d, id).c0_pct, c0);
    }
    approx(cpu(&d, 1).soft_pct, 5.0);
    approx(cpu(&d, 2).iowait_pct, 2.0);
    // One policy per CPU; scaling_cur_freq kHz / 1000.
    for (id, mhz) in [(0, 3400.0), (1, 2800.0), (2, 1200.0), (3, 800.0)] {
        let c = cpu(&d, id);
        approx(c.mhz, mhz);
        assert_eq!(c.policy.as_deref(), Some(format!("policy{id}").as_str()));
    }
    // cpu3 is 2% busy (< 5%): its scaling_cur_freq is the last busy value, flagged stale.
    assert!(cpu(&d, 3).mhz_stale);
    assert!(!cpu(&d, 2).mhz_stale);
    assert_eq!(d.policies.len(), 4);
    let p3 = &d.policies[3];
    assert_eq!(p3.cpus, vec![3]);
    assert!(p3.cur_stale);
    assert_eq!(p3.governor.as_deref(), Some("performance"));
    assert_eq!(p3.epp.as_deref(), Some("performance"));
    let p0 = &d.policies[0];
    assert_eq!(p0.driver.as_deref(), Some("intel_pstate"));
    assert_eq!(p0.governor.as_deref(), Some("powersave"));
    assert_eq!(p0.available_governors, vec!["performance", "powersave"]);
    assert_eq!(p0.epp.as_deref(), Some("balance_performance"));
    assert_eq!(p0.available_epp.len(), 5);
    assert_eq!(
        (p0.min_khz, p0.max_khz, p0.hw_max_khz),
        (Some(800_000), Some(3_000_000), Some(3_000_000))
    );
    approx(p0.busy_pct, 90.0);
    let h = &d.host;
    assert_eq!(h.freq_drivers, vec!["intel_pstate"]);
    assert_eq!(h.governors.get("powersave"), Some(&3));
    assert_eq!(h.governors.get("performance"), Some(&1));
    assert_eq!(h.pstate_status.as_deref(), Some("active"));
    assert_eq!(h.no_turbo, Some(false));
    assert_eq!(h.boost, None);
    assert_eq!(h.idle_driver.as_deref(), Some("intel_idle"));
    assert_eq!(h.idle_governor.as_deref(), Some("menu"));
    assert!(h.vm_hints.is_empty(), "{:?}", h.vm_hints);
}

#[test]
fn intel_idle_states_in_the_proc_stat_envelope() {
    let Fx { d, .. } = load_clean("intel-pstate");
    // cpu0: idle 10 ticks = 100_000 us; sysfs Δtime 1_000 + 9_000 + 30_000 + 60_000 = 100_000.
    let c = cpu(&d, 0);
    assert!(!c.residency_scaled);
    for (name, pct) in [("POLL", 0.1), ("C1", 0.9), ("C1E", 3.0), ("C6", 6.0)] {
        approx(state(c, name).residency_pct, pct);
    }
    approx(c.wakeups_per_s, 500.0); // Δusage 50+300+100+50
    approx(c.avg_residency_us, 200.0); // 100_000 / 500
                                       // misses: C1 below 30 of 300 = 10%; C1E (10+5)/100 = 15%; C6 above 20 of 50 = 40%;
                                       // CPU (30+15+20)/500 = 13%.
    approx(state(c, "C1").miss_pct, 10.0);
    approx(state(c, "C1E").miss_pct, 15.0);
    approx(state(c, "C6").miss_pct, 40.0);
    approx(c.miss_pct, 13.0);
    assert_eq!(state(c, "C6").latency_us, Some(133));

    // cpu1: envelope 50 ticks = 500_000 us, sysfs 2_000+8_000+80_000+400_000 = 490_000: within
    // 2% of Δt (20_000 us), so taken as is: C6 400_000/1e6 = 40%, C1E 8%.
    let c = cpu(&d, 1);
    assert!(!c.residency_scaled);
    approx(state(c, "C6").residency_pct, 40.0);
    approx(state(c, "C1E").residency_pct, 8.0);
    approx(c.avg_residency_us, 980.0); // 490_000 / 500
    approx(c.miss_pct, 4.2); // (14+7) / 500

    // cpu2: 90 idle ticks but no state was left during the interval (sysfs Δtime 0): the split
    // is unknown, not 0%.
    let c = cpu(&d, 2);
    for s in &c.states {
        assert_eq!(s.residency_pct, None, "{}", s.name);
    }
    approx(c.wakeups_per_s, 0.0);
    assert_eq!(c.avg_residency_us, None);

    // cpu3: envelope 98 ticks = 980_000 us, sysfs 20_000 (C1) + 1_100_000 (C6, credited on
    // exit for a sleep that began before t0) = 1_120_000 -> scaled by 0.875:
    // C1 17_500 us = 1.75%, C6 962_500 us = 96.25%.
    let c = cpu(&d, 3);
    assert!(c.residency_scaled);
    approx(state(c, "C1").residency_pct, 1.75);
    approx(state(c, "C6").residency_pct, 96.25);
    approx(state(c, "POLL").residency_pct, 0.0);
    approx(c.wakeups_per_s, 15.0);
    assert_eq!(state(c, "POLL").miss_pct, None); // no usage: no ratio
}

#[test]
fn intel_pstate_queues_softnet_and_dirty() {
    let Fx { t1, d, .. } = load_clean("intel-pstate");
    // i40e-eth0-TxRx-N: device eth0, queue N. Δ over 1 s.
    for (n, per_s, cpus) in [
        (0u32, 4000.0, vec![0u32]),
        (1, 3000.0, vec![1]),
        (2, 100.0, vec![2]),
        // TxRx-3 moved: CPU3 unchanged at 20000, CPU0 has 50 new (absent at t0 = 0).
        (3, 50.0, vec![0]),
    ] {
        let q = irq(&d, 46 + n);
        assert_eq!(*q.name, *format!("i40e-eth0-TxRx-{n}"));
        assert_eq!(
            (q.device.as_str(), q.queue, q.kind.as_str()),
            ("eth0", Some(n), "txrx")
        );
        approx(q.per_s, per_s);
        assert_eq!(q.cpus, cpus);
        assert_eq!(q.affinity.as_deref(), Some(n.to_string().as_str()));
    }
    // nvme0q0 (admin) and nvme0q1..4: +0, +12000, +8000, +5000, +0.
    for (n, per_s) in [
        (0u32, 0.0),
        (1, 12000.0),
        (2, 8000.0),
        (3, 5000.0),
        (4, 0.0),
    ] {
        let q = irq(&d, 124 + n);
        assert_eq!(
            (q.device.as_str(), q.queue, q.kind.as_str()),
            ("nvme0", Some(n), "io")
        );
        approx(q.per_s, per_s);
    }
    assert!(irq(&d, 128).cpus.is_empty());
    // The i40e misc vector is not a queue.
    assert!(d.irq_queues.iter().all(|q| q.irq != 45));
    assert_eq!(d.irq_queues.len(), 9);

    // softnet 13 columns: ids from column 13.
    assert!(t1.net.softnet.iter().all(|r| r.cpu_from_file));
    for (id, p) in [(0, 30000.0), (1, 25000.0), (2, 500.0), (3, 10.0)] {
        approx(si(&d, id).softnet_processed_per_s, p);
    }
    approx(si(&d, 0).softnet_squeezed_per_s, 3.0);
    approx(rate(si(&d, 0), "NET_RX"), 4100.0);
    approx(rate(si(&d, 3), "NET_RX"), 0.0);
    assert_eq!(nic(&d, "eth0").driver.as_deref(), Some("i40e"));
    assert_eq!(nic(&d, "eth0").numa_node, Some(0));
    approx(nic(&d, "eth0").rx_packets_per_s, 30000.0);

    // nr_dirty 600_000 > background 500_000, dirty + writeback 650_000 <= freerun
    // (500_000 + 1_000_000)/2 = 750_000: background writeback, writers not yet throttled.
    let dm = &d.dirty;
    assert_eq!(dm.state.as_deref(), Some("background"));
    assert_eq!(dm.background_threshold_kb, Some(2_000_000));
    assert_eq!(dm.freerun_kb, Some(3_000_000));
    assert_eq!(dm.threshold_kb, Some(4_000_000));
    approx(dm.dirtied_kb_per_s, 200_000.0); // 50_000 pages/s * 4
    approx(dm.written_kb_per_s, 160_000.0); // 40_000 pages/s * 4
    assert!(disk(&d, "nvme0n1").parallel);
    assert_eq!(d.hugepages.thp_enabled.as_deref(), Some("always"));
}
