//! Hand-made fixture roots (`tests/fixtures/<name>/{t0,t1}`), read through the real `Reader`,
//! derived, and checked against values worked out by hand from the fixture files. The arithmetic
//! is in the comments; `/proc/stat` times are USER_HZ (100/s) ticks, Δt comes from `proc/uptime`.
//!
//! Fixtures: `vm-2cpu` (KVM guest, haltpoll, no cpufreq, virtio), `intel-pstate` (4 CPUs,
//! per-CPU policies, intel_idle, NVMe, i40e), `acpi-shared` (one acpi-cpufreq policy, CPU 3
//! offline, 4.4 file widths, dm, mlx5), `numa-2node-memless` (memory-only node, 1G + 2M huge
//! pages, writers throttled), `wrap` (32-bit counters wrapping, CPU 1 offline, resets) and `bad`
//! (garbled, truncated, empty and oversized files).

use perftop::assess::assess;
use perftop::derive::{
    derive, CpuMetrics, Derived, DiskMetrics, IrqQueueMetrics, NicMetrics, NodeMetrics,
    SoftirqCpuMetrics, StateMetrics,
};
use perftop::root::Root;
use perftop::sample::Sample;
use perftop::source::Reader;
use std::path::PathBuf;
use std::process::Command;

const FIXTURES: [&str; 6] = [
    "vm-2cpu",
    "intel-pstate",
    "acpi-shared",
    "numa-2node-memless",
    "wrap",
    "bad",
];

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn read(name: &str, when: &str) -> Sample {
    Reader::new(Root::new(fixture(name).join(when))).sample()
}

struct Fx {
    t0: Sample,
    t1: Sample,
    d: Derived,
}

fn load(name: &str) -> Fx {
    let t0 = read(name, "t0");
    let t1 = read(name, "t1");
    let d = derive(Some(&t0), &t1);
    Fx { t0, t1, d }
}

/// Loads a fixture that must read without a single problem.
fn load_clean(name: &str) -> Fx {
    let fx = load(name);
    assert!(fx.t0.problems.is_empty(), "{name}/t0: {:?}", fx.t0.problems);
    assert!(fx.t1.problems.is_empty(), "{name}/t1: {:?}", fx.t1.problems);
    fx
}

#[track_caller]
fn approx(got: Option<f64>, want: f64) {
    let g = got.unwrap_or_else(|| panic!("expected {want}, got null"));
    assert!(
        (g - want).abs() <= 1e-9 * want.abs().max(1.0),
        "expected {want}, got {g}"
    );
}

#[track_caller]
fn cpu(d: &Derived, id: u32) -> &CpuMetrics {
    d.cpus
        .iter()
        .find(|c| c.cpu == id)
        .unwrap_or_else(|| panic!("no cpu {id}"))
}

#[track_caller]
fn state<'a>(c: &'a CpuMetrics, name: &str) -> &'a StateMetrics {
    c.states
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("cpu {} has no state {name}", c.cpu))
}

#[track_caller]
fn disk<'a>(d: &'a Derived, name: &str) -> &'a DiskMetrics {
    d.disks
        .iter()
        .find(|x| x.disk_device == name)
        .unwrap_or_else(|| panic!("no disk {name}"))
}

#[track_caller]
fn si(d: &Derived, id: u32) -> &SoftirqCpuMetrics {
    d.softirq_cpus
        .iter()
        .find(|c| c.cpu == id)
        .unwrap_or_else(|| panic!("no softirq row for cpu {id}"))
}

#[track_caller]
fn rate(c: &SoftirqCpuMetrics, kind: &str) -> Option<f64> {
    *c.rates
        .get(kind)
        .unwrap_or_else(|| panic!("cpu {} has no {kind} rate", c.cpu))
}

#[track_caller]
fn irq(d: &Derived, n: u32) -> &IrqQueueMetrics {
    d.irq_queues
        .iter()
        .find(|q| q.irq == n)
        .unwrap_or_else(|| panic!("irq {n} is not a queue"))
}

#[track_caller]
fn node(d: &Derived, id: u32) -> &NodeMetrics {
    d.nodes
        .iter()
        .find(|n| n.node == id)
        .unwrap_or_else(|| panic!("no node {id}"))
}

#[track_caller]
fn nic<'a>(d: &'a Derived, name: &str) -> &'a NicMetrics {
    d.nics
        .iter()
        .find(|n| n.name == name)
        .unwrap_or_else(|| panic!("no nic {name}"))
}

/// Every number in the derived JSON is finite and not negative (rates, shares, sizes), and
/// every percentage is at most 100 — except %util, which iostat (sysstat 12.6) does not cap
/// either: io_ticks can run ahead of the uptime clock.
fn assert_no_negative(v: &serde_json::Value, path: &str) {
    match v {
        serde_json::Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            assert!(f.is_finite() && f >= 0.0, "{path} = {f}");
            let key = path.rsplit('.').next().unwrap_or(path);
            if key.ends_with("_pct") || ["rrqm", "wrqm", "drqm"].contains(&key) {
                assert!(f <= 100.0 + 1e-9, "{path} = {f}");
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                assert_no_negative(x, &format!("{path}[{i}]"));
            }
        }
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                assert_no_negative(x, &format!("{path}.{k}"));
            }
        }
        _ => {}
    }
}

// ------------------------------------------------------------------ vm-2cpu

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

// ------------------------------------------------------------------ intel-pstate

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
        assert_eq!(q.name, format!("i40e-eth0-TxRx-{n}"));
        assert_eq!(
            (q.device.as_str(), q.queue, q.kind.as_str()),
            ("eth0", Some(n), "txrx")
        );
        approx(q.per_s, per_s);
        assert_eq!(q.cpus, cpus);
        assert_eq!(q.affinity, Some(n.to_string()));
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

// ------------------------------------------------------------------ acpi-shared

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

// ------------------------------------------------------------------ numa-2node-memless

#[test]
fn numa_memoryless_node_and_miss_ratio() {
    let Fx { t1, d, .. } = load_clean("numa-2node-memless");
    approx(d.interval_s, 2.0);
    assert_eq!(d.nodes.len(), 2);
    // node1's cpulist file is empty: a memory-only node, known to have no CPUs.
    assert_eq!(t1.nodes[1].cpus.as_ref().map(|l| l.is_empty()), Some(true));
    let n0 = node(&d, 0);
    let n1 = node(&d, 1);
    assert_eq!(n0.cpus, vec![0, 1, 2, 3]);
    assert!(n1.cpus.is_empty());
    assert!(d.cpus.iter().all(|c| c.node == Some(0)));
    assert_eq!(n0.distance, vec![10, 20]);
    assert_eq!(n1.distance, vec![20, 10]);
    // node0: hit +10000, miss +0, foreign +2500 over 2 s.
    approx(n0.numa_hit_per_s, 5000.0);
    approx(n0.numa_foreign_per_s, 1250.0);
    approx(n0.miss_ratio, 0.0);
    // node1: hit +7500, miss +2500 -> 2500 / (7500 + 2500) = 0.25; other_node +10000 -> 5000/s.
    approx(n1.numa_hit_per_s, 3750.0);
    approx(n1.numa_miss_per_s, 1250.0);
    approx(n1.miss_ratio, 0.25);
    approx(n1.other_per_s, 5000.0);
    approx(n1.local_per_s, 0.0);
    assert_eq!(n1.mem_total_kb, Some(32_000_000));
    assert_eq!(n1.mem_used_kb, Some(26_000_000)); // MemUsed line
    assert_eq!(n0.dirty_kb, Some(1_120_000));
    // per-node pools, ascending by size
    let sizes = |n: &NodeMetrics| -> Vec<(u64, Option<u64>, Option<u64>)> {
        n.hugepages
            .iter()
            .map(|h| (h.size_kb, h.total, h.free))
            .collect()
    };
    assert_eq!(
        sizes(n0),
        vec![(2048, Some(512), Some(100)), (1_048_576, Some(2), Some(0))]
    );
    assert_eq!(
        sizes(n1),
        vec![(2048, Some(0), Some(0)), (1_048_576, Some(2), Some(2))]
    );
}

#[test]
fn numa_hugepages_thp_and_throttled_dirty() {
    let Fx { d, .. } = load_clean("numa-2node-memless");
    let h = &d.hugepages;
    let sizes: Vec<u64> = h.sizes.iter().map(|s| s.size_kb).collect();
    assert_eq!(sizes, vec![2048, 1_048_576]);
    // 2M: 512 pages = 1_048_576 kB pinned; free 100 - rsvd 50 = 50 unused = 102_400 kB.
    let s2m = &h.sizes[0];
    assert_eq!(
        (s2m.total, s2m.free, s2m.rsvd),
        (Some(512), Some(100), Some(50))
    );
    assert_eq!(s2m.pool_kb, Some(1_048_576));
    assert_eq!(s2m.unused_kb, Some(102_400));
    // 1G: 4 pages = 4_194_304 kB; free 2 - rsvd 1 = 1 unused = 1_048_576 kB.
    let s1g = &h.sizes[1];
    assert_eq!(s1g.pool_kb, Some(4_194_304));
    assert_eq!(s1g.unused_kb, Some(1_048_576));
    assert_eq!(h.hugetlb_kb, Some(5_242_880)); // 4 GiB + 1 GiB
    assert_eq!(h.anon_huge_kb, Some(4_194_304));
    approx(h.page_tables_pct, 250_000.0 / 64_000_000.0 * 100.0);
    assert_eq!(h.thp_enabled.as_deref(), Some("always"));
    assert_eq!(h.thp_defrag.as_deref(), Some("madvise"));
    // thp_fault_alloc +300, fallback +100 over 2 s; ratio 100/400.
    approx(h.thp_fault_alloc_per_s, 150.0);
    approx(h.thp_fault_fallback_per_s, 50.0);
    approx(h.thp_fallback_ratio, 0.25);
    approx(h.compact_stall_per_s, 5.0); // +10
    approx(h.compact_fail_per_s, 2.0); // +4
    approx(h.thp_collapse_alloc_per_s, 1.0); // +2

    // Thresholds are vmstat pages * page size, 4 kB as the kB/pages pairs say (Mapped
    // 1_280_000 kB / nr_mapped 320_000, Shmem 2000 / nr_shmem 500, PageTables 250_000 /
    // nr_page_table_pages 62_500, AnonPages 4_000_000 / nr_anon_pages 1_000_000):
    // background 200_000 -> 800_000 kB, hard 400_000 -> 1_600_000 kB, freerun 300_000 ->
    // 1_200_000 kB. nr_dirty 280_000 + nr_writeback 40_000 = 320_000 > 300_000: throttled.
    let dm = &d.dirty;
    assert_eq!(dm.page_kb, 4);
    assert_eq!(dm.state.as_deref(), Some("throttled"));
    assert_eq!(dm.background_threshold_kb, Some(800_000));
    assert_eq!(dm.freerun_kb, Some(1_200_000));
    assert_eq!(dm.threshold_kb, Some(1_600_000));
    assert_eq!(dm.dirty_kb, Some(1_120_000));
    assert_eq!(dm.writeback_kb, Some(160_000));
    approx(dm.dirtied_kb_per_s, 200_000.0); // +100_000 pages / 2 s * 4
    approx(dm.written_kb_per_s, 180_000.0); // +90_000 pages / 2 s * 4
                                            // 4 CPUs, no cpufreq and no cpuidle directory: states empty, frequency unknown.
    assert!(d
        .cpus
        .iter()
        .all(|c| c.states.is_empty() && c.mhz.is_none()));
    approx(cpu(&d, 1).c0_pct, 100.0);
    approx(cpu(&d, 3).c0_pct, 0.0);
}

// ------------------------------------------------------------------ wrap

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

// ------------------------------------------------------------------ bad

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

// ------------------------------------------------------------------ all fixtures

#[test]
fn every_fixture_derives_without_negative_numbers_or_shares_over_100() {
    for name in FIXTURES {
        let fx = load(name);
        for d in [
            derive(None, &fx.t0),
            fx.d.clone(),
            derive(Some(&fx.t1), &fx.t0),
        ] {
            let v = serde_json::to_value(&d).expect("derived serializes");
            assert_no_negative(&v, name);
        }
    }
}

#[test]
fn batch_prints_every_pane_within_80_columns() {
    let titles = [
        "CPU power (C/P-states)",
        "NUMA memory",
        "HugePages / THP",
        "Dirty / writeback",
        "Disks (iostat -x)",
        "Softirq / NIC queues",
    ];
    for name in FIXTURES {
        let root = fixture(name).join("t1");
        let out = Command::new(env!("CARGO_BIN_EXE_perftop"))
            .args(["batch", "-n", "1", "--root"])
            .arg(&root)
            .output()
            .expect("run perftop batch");
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf-8 report");
        for t in titles {
            assert!(text.contains(t), "{name}: no {t:?} section in\n{text}");
        }
        for line in text.lines() {
            assert!(
                line.chars().count() <= 80,
                "{name}: {} columns: {line:?}",
                line.chars().count()
            );
        }
    }
}
