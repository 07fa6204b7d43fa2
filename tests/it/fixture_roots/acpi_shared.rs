//! `acpi-shared`: one acpi-cpufreq policy, CPU 3 offline, 4.4 file widths, dm, mlx5.

use super::*;

#[test]
fn acpi_shared_policy_and_offline_cpu() {
    let Fx { t1, d, .. } = load_clean("acpi-shared");
    approx(d.interval_s, 1.5); // 300.00 -> 301.50
                               // /proc/stat has cpu0..cpu2; cpu3 is present but offline.
    let ids: Vec<u32> = t1.cpu.cpus.iter().map(|c| c.id).collect();
    assert_eq!(ids, vec![0, 1, 2, 3]);
    let c3 = cpu(&d, 3);
    assert!(!c3.online);
    assert_eq!(c3.c0_pct, None);
    assert_eq!(c3.mhz, None);
    assert_eq!(c3.policy, None);
    assert!(c3.states.is_empty());
    assert_eq!(c3.node, None); // node0 cpulist is 0-2 while cpu3 is offline
    assert_eq!(d.host.cpus_online, 3);
    assert_eq!(d.host.cpus_present, Some(4));
    // 150 ticks each: cpu0 busy 75 = 50%; cpu1 busy 30 = 20%, iowait 15 = 10%; cpu2 150 = 100%.
    approx(cpu(&d, 0).c0_pct, 50.0);
    approx(cpu(&d, 1).c0_pct, 20.0);
    approx(cpu(&d, 1).iowait_pct, 10.0);
    approx(cpu(&d, 2).c0_pct, 100.0);

    // One shared acpi-cpufreq policy: affected_cpus "0 1 2" (online), related_cpus "0 1 2 3".
    let pol = &t1.cpu.freq.policies;
    assert_eq!(pol.len(), 1);
    assert_eq!(
        pol[0].related_cpus.as_ref().map(|l| l.ids().to_vec()),
        Some(vec![0, 1, 2, 3])
    );
    assert_eq!(d.policies.len(), 1);
    let p = &d.policies[0];
    assert_eq!(p.policy, "policy0");
    assert_eq!(p.cpus, vec![0, 1, 2]);
    assert_eq!(p.driver.as_deref(), Some("acpi-cpufreq"));
    assert_eq!(p.governor.as_deref(), Some("ondemand"));
    assert_eq!(p.cur_khz, Some(2_101_000));
    approx(p.busy_pct, (50.0 + 20.0 + 100.0) / 3.0);
    assert!(!p.cur_stale);
    for id in 0..3 {
        approx(cpu(&d, id).mhz, 2101.0);
        assert_eq!(cpu(&d, id).policy.as_deref(), Some("policy0"));
    }
    assert_eq!(d.host.boost, Some(true));
    assert_eq!(d.host.governors.get("ondemand"), Some(&1));
    assert_eq!(d.host.freq_drivers, vec!["acpi-cpufreq"]);
}

#[test]
fn acpi_idle_without_above_below() {
    let Fx { d, .. } = load_clean("acpi-shared");
    // dt = 1.5 s = 1_500_000 us. cpu0 envelope 75 ticks = 750_000 us = sysfs 150_000 + 600_000.
    let c = cpu(&d, 0);
    assert!(!c.residency_scaled);
    approx(state(c, "POLL").residency_pct, 0.0);
    approx(state(c, "C1").residency_pct, 10.0); // 150_000 / 1_500_000
    approx(state(c, "C2").residency_pct, 40.0); // 600_000 / 1_500_000
    approx(c.wakeups_per_s, 300.0); // (150 + 300) / 1.5
    approx(c.avg_residency_us, 750_000.0 / 450.0);
    // 4.4 has no above/below files: miss % is unknown, not 0.
    assert_eq!(c.miss_pct, None);
    assert_eq!(state(c, "C2").miss_pct, None);
    // cpu1 envelope (105 + 15) ticks = 1_200_000 us = 300_000 + 900_000: C1 20%, C2 60%.
    let c = cpu(&d, 1);
    approx(state(c, "C1").residency_pct, 20.0);
    approx(state(c, "C2").residency_pct, 60.0);
    approx(c.wakeups_per_s, 100.0);
    // cpu2 was 100% busy: no idle time and no sysfs time -> 0% in every state.
    let c = cpu(&d, 2);
    for s in &c.states {
        approx(s.residency_pct, 0.0);
    }
}

#[test]
fn acpi_shared_softirqs_by_header_id_and_old_softnet() {
    let Fx { t1, d, .. } = load_clean("acpi-shared");
    // softirqs header lists CPU0..CPU3 (possible CPUs); interrupts only the online ones.
    assert_eq!(
        t1.net.softirqs.as_ref().map(|s| s.cpus.clone()),
        Some(vec![0, 1, 2, 3])
    );
    assert_eq!(
        t1.net.interrupts.as_ref().map(|i| i.cpus.clone()),
        Some(vec![0, 1, 2])
    );
    // NET_RX Δ 1500, 750, 3000, 0 over 1.5 s.
    approx(rate(si(&d, 0), "NET_RX"), 1000.0);
    approx(rate(si(&d, 1), "NET_RX"), 500.0);
    approx(rate(si(&d, 2), "NET_RX"), 2000.0);
    let s3 = si(&d, 3);
    assert!(!s3.online);
    approx(rate(s3, "NET_RX"), 0.0);
    assert_eq!(s3.soft_pct, None); // no /proc/stat line
    assert!(rate(si(&d, 0), "BLOCK_IOPOLL").is_some()); // 4.4 row name kept as printed
    approx(si(&d, 2).soft_pct, 5.0 / 150.0 * 100.0);

    // softnet_stat with 11 columns has no cpu column: line n is the n-th online CPU.
    assert!(t1.net.softnet.iter().all(|r| !r.cpu_from_file));
    assert_eq!(
        t1.net.softnet.iter().map(|r| r.cpu).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    approx(si(&d, 0).softnet_processed_per_s, 1000.0); // 10000 -> 11500
    approx(si(&d, 1).softnet_processed_per_s, 500.0); // 20000 -> 20750
    approx(si(&d, 2).softnet_processed_per_s, 3000.0); // 30000 -> 34500
    approx(si(&d, 2).softnet_dropped_per_s, 2.0); // 7 -> 10
    approx(si(&d, 2).softnet_squeezed_per_s, 10.0); // 40 -> 55
    assert_eq!(si(&d, 2).backlog, None); // no backlog column before 5.10
    assert_eq!(s3.softnet_processed_per_s, None);

    // mlx5: completion vectors are queues; the pages/cmd/async event queues are not.
    let ids: Vec<u32> = d.irq_queues.iter().map(|q| q.irq).collect();
    assert_eq!(ids, vec![39, 40, 41, 42]);
    for (n, per_s) in [(0u32, 1000.0), (1, 500.0), (2, 100.0), (3, 0.0)] {
        let q = irq(&d, 39 + n);
        assert_eq!(
            (q.device.as_str(), q.queue, q.kind.as_str()),
            ("mlx5@0000:3b:00.0", Some(n), "comp")
        );
        approx(q.per_s, per_s); // +1500, +750, +150, +0 over 1.5 s
    }
    assert_eq!(irq(&d, 39).cpus, vec![0]);
    assert_eq!(nic(&d, "eth0").driver.as_deref(), Some("mlx5_core"));
}

#[test]
fn acpi_shared_disks_and_dirty_bytes() {
    let Fx { t1, d, .. } = load_clean("acpi-shared");
    let fields: Vec<(&str, u8, bool)> = t1
        .disks
        .iter()
        .map(|x| (x.name.as_str(), x.fields, x.whole_disk))
        .collect();
    assert_eq!(
        fields,
        vec![("sda", 11, true), ("sda1", 4, false), ("dm-0", 11, true)]
    );
    let sda = disk(&d, "sda");
    assert_eq!(sda.rotational, Some(true));
    assert_eq!(sda.scheduler.as_deref(), Some("cfq"));
    assert!(!sda.parallel);
    let dm = disk(&d, "dm-0");
    assert_eq!(dm.dm_name.as_deref(), Some("vg0-root"));
    assert!(dm.parallel);
    assert!(disk(&d, "sda1").partition);
    // vm.dirty_bytes = 256 MiB wins over the (zero) ratio; background still from the ratio.
    // nr_dirty_threshold 65536 pages * 4 kB = 262144 kB; background 32768 -> 131072 kB.
    let dm = &d.dirty;
    assert_eq!(dm.limit_from.as_deref(), Some("bytes"));
    assert_eq!(dm.background_limit_from.as_deref(), Some("ratio"));
    assert_eq!(dm.dirty_bytes, Some(268_435_456));
    assert_eq!(dm.threshold_kb, Some(262_144));
    assert_eq!(dm.background_threshold_kb, Some(131_072));
    assert_eq!(dm.freerun_kb, Some(196_608));
    assert_eq!(dm.state.as_deref(), Some("below_background"));
}
