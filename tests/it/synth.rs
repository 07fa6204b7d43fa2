//! Synthetic hosts read back through the real readers and derive, against rates worked out by
//! hand from the formulas documented in `tests/support/synth/mod.rs` (one tick = one second).

use crate::support;

use perftop::derive::{derive, Derived};
use perftop::root::Root;
use perftop::sample::Sample;
use perftop::source::Reader;
use std::path::Path;
use std::process::Command;
use support::synth::{write_host, SynthSpec, BOOT_AGE_S};

fn small() -> SynthSpec {
    SynthSpec {
        cpus: 8,
        nodes: 2,
        disks: 4,
        queues: 8,
    }
}

fn read(dir: &Path) -> Sample {
    Reader::new(Root::new(dir)).sample()
}

/// Samples of `spec` at `tick` and `tick + 1`.
fn pair(spec: &SynthSpec, tick: u64) -> (Sample, Sample) {
    let a = tempfile::tempdir().expect("tempdir");
    let b = tempfile::tempdir().expect("tempdir");
    write_host(a.path(), spec, tick).expect("write tick");
    write_host(b.path(), spec, tick + 1).expect("write tick + 1");
    (read(a.path()), read(b.path()))
}

#[track_caller]
fn close(got: Option<f64>, want: f64) {
    let g = got.unwrap_or_else(|| panic!("expected {want}, got None"));
    assert!(
        (g - want).abs() <= 1e-9 * want.abs().max(1.0),
        "expected {want}, got {g}"
    );
}

fn disk<'a>(d: &'a Derived, name: &str) -> &'a perftop::derive::DiskMetrics {
    d.disks
        .iter()
        .find(|m| m.disk_device == name)
        .unwrap_or_else(|| panic!("no disk {name}"))
}

fn irq(d: &Derived, n: u32) -> &perftop::derive::IrqQueueMetrics {
    d.irq_queues
        .iter()
        .find(|q| q.irq == n)
        .unwrap_or_else(|| panic!("no queue IRQ {n}"))
}

#[test]
fn small_host_rates_match_hand_computed_values() {
    let (s0, s1) = pair(&small(), 0);
    assert!(s0.problems.is_empty(), "{:?}", s0.problems);
    assert!(s1.problems.is_empty(), "{:?}", s1.problems);
    assert_eq!(s1.time.uptime_s, Some((BOOT_AGE_S + 1) as f64));
    let d = derive(Some(&s0), &s1);
    assert_eq!(d.interval_s, Some(1.0));
    assert!(d.host.problems.is_empty());

    // Host: 8 CPUs, 2 nodes, intel_pstate active with node 0 on performance.
    assert_eq!(d.host.cpus_online, 8);
    assert_eq!(d.host.nodes, 2);
    assert_eq!(d.host.idle_driver.as_deref(), Some("intel_idle"));
    assert_eq!(d.host.pstate_status.as_deref(), Some("active"));
    assert_eq!(d.host.no_turbo, Some(false));
    assert_eq!(d.host.governors.get("performance"), Some(&4));
    assert_eq!(d.host.governors.get("powersave"), Some(&4));
    assert!(d.host.vm_hints.is_empty(), "{:?}", d.host.vm_hints);
    close(d.host.ctxt_per_s, 3000.0 * 8.0);
    // Queue IRQs 1000..1070/s, plus per CPU NMI 1 + LOC 250 + RES 10+i%5 + CAL 50 + TLB 5.
    let queues: f64 = (0..8).map(|q| 1000.0 + 10.0 * q as f64).sum();
    let arch: f64 = (0..8).map(|i| 316.0 + (i % 5) as f64).sum();
    close(d.host.intr_per_s, queues + arch);

    // CPU 3: user 25, nice 1, system 5, irq 1, softirq 5 of 100 ticks; idle 63, no iowait.
    let c3 = &d.cpus[3];
    assert_eq!(
        (c3.cpu, c3.node, c3.package, c3.core),
        (3, Some(0), Some(1), Some(1))
    );
    close(c3.c0_pct, 37.0);
    close(c3.user_pct, 26.0);
    close(c3.system_pct, 5.0);
    close(c3.iowait_pct, 0.0);
    assert_eq!(c3.policy.as_deref(), Some("policy3"));
    close(c3.mhz, 1600.0);
    // CPU 5: busy 35+1+9+1+3 = 49, iowait 3.
    close(d.cpus[5].c0_pct, 49.0);
    close(d.cpus[5].iowait_pct, 3.0);

    // Idle states of CPU 3: envelope 63 ticks = 630000 µs split 1%/10%/20%/rest.
    assert!(!c3.residency_scaled);
    let names: Vec<&str> = c3.states.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["POLL", "C1", "C1E", "C6"]);
    close(c3.states[0].residency_pct, 0.63);
    close(c3.states[1].residency_pct, 6.3);
    close(c3.states[2].residency_pct, 12.6);
    close(c3.states[3].residency_pct, 43.47);
    close(c3.states[3].wakeups_per_s, 33.0);
    close(c3.states[3].avg_residency_us, 434_700.0 / 33.0);
    assert_eq!(c3.states[3].latency_us, Some(170));
    // Wakeups 20 + 130 + 50 + 33; misses (above 0+5+3+2, below 0+1+2+1) 14.
    close(c3.wakeups_per_s, 233.0);
    close(c3.miss_pct, 14.0 / 233.0 * 100.0);

    // sda (disk 2): 300 reads/s of 8 kB, 1.5 ms each; 150 writes/s of 32 kB, 2 ms each.
    let sda = disk(&d, "sda");
    assert!(!sda.partition && !sda.parallel);
    assert_eq!(sda.rotational, Some(true));
    assert_eq!(sda.scheduler.as_deref(), Some("mq-deadline"));
    close(sda.r_s, 300.0);
    close(sda.rkb_s, 2400.0);
    close(sda.rrqm_s, 30.0);
    close(sda.rrqm, 30.0 / 330.0 * 100.0);
    close(sda.r_await, 1.5);
    close(sda.rareq_sz, 8.0);
    close(sda.w_s, 150.0);
    close(sda.wkb_s, 4800.0);
    close(sda.w_await, 2.0);
    close(sda.d_s, 0.0);
    close(sda.d_await, 0.0);
    close(sda.f_s, 20.0);
    close(sda.f_await, 0.5);
    // time_in_queue 450 + 300 + 0 + 10 ms per s; io_ticks 400 ms per s.
    close(sda.aqu_sz, 0.76);
    close(sda.util, 40.0);
    assert_eq!(sda.inflight, Some(2));
    // nvme0n1 (disk 0): 100 reads/s at 0.5 ms, 10 discards/s of 1 MB.
    let nvme = disk(&d, "nvme0n1");
    assert!(nvme.parallel);
    close(nvme.r_await, 0.5);
    close(nvme.d_s, 10.0);
    close(nvme.dkb_s, 10240.0);
    close(nvme.d_await, 1.0);
    close(nvme.aqu_sz, 0.17);
    close(nvme.util, 20.0);
    let p1 = disk(&d, "nvme0n1p1");
    assert!(p1.partition);
    close(p1.r_s, 50.0);
    let dm = disk(&d, "dm-0");
    assert_eq!(dm.dm_name.as_deref(), Some("vg0-lv0"));
    close(dm.r_s, 400.0);
    close(dm.util, 50.0);

    // Softirqs: NET_RX on CPU 3 is 1000 + 300; softnet processes 4x that.
    let sc3 = &d.softirq_cpus[3];
    close(sc3.rates.get("NET_RX").copied().flatten(), 1300.0);
    close(sc3.rates.get("TIMER").copied().flatten(), 250.0);
    close(sc3.soft_pct, 5.0);
    close(sc3.irq_pct, 1.0);
    close(sc3.softnet_processed_per_s, 5200.0);
    close(sc3.ksoftirqd_pct, 4.0);
    close(d.softirq_cpus[7].softnet_dropped_per_s, 2.0);
    close(d.softirq_cpus[6].ksoftirqd_pct, 0.0);

    // NIC queues: eth1 (node 1, CPUs 4-7) queue 1 is IRQ 105 at 1050/s on CPU 5.
    assert_eq!(d.irq_queues.len(), 8);
    let q = irq(&d, 105);
    assert_eq!(&*q.name, "eth1-TxRx-1");
    assert_eq!(
        (q.device.as_str(), q.queue, q.kind.as_str()),
        ("eth1", Some(1), "txrx")
    );
    close(q.per_s, 1050.0);
    assert_eq!(q.cpus, [5]);
    assert_eq!(q.affinity.as_deref(), Some("4-7"));
    assert_eq!(q.effective_affinity.as_deref(), Some("5"));
    assert_eq!(q.node, Some(1));
    let m = irq(&d, 102);
    assert_eq!(&*m.name, "mlx5_comp2@pci:0000:18:00.0");
    assert_eq!(
        (m.device.as_str(), m.kind.as_str()),
        ("mlx5@0000:18:00.0", "comp")
    );
    close(m.per_s, 1020.0);
    assert_eq!(m.cpus, [2]);
    let eth0 = d.nics.iter().find(|n| n.name == "eth0").expect("eth0");
    close(eth0.rx_packets_per_s, 8.0 * 4060.0);
    close(eth0.rx_drop_per_s, 3.0);
    assert_eq!(eth0.driver.as_deref(), Some("mlx5_core"));
    assert_eq!(
        (eth0.numa_node, eth0.rx_queues, eth0.tx_queues),
        (Some(0), 4, 4)
    );

    // NUMA: node 1 hits 91000 pages/s and misses 2000.
    let n1 = &d.nodes[1];
    assert_eq!(n1.cpus, [4, 5, 6, 7]);
    close(n1.numa_hit_per_s, 91_000.0);
    close(n1.numa_miss_per_s, 2000.0);
    close(n1.miss_ratio, 2000.0 / 93_000.0);
    assert_eq!(n1.distance, [12, 10]);
    assert_eq!(n1.mem_total_kb, Some(64 << 20));

    // Dirty: 1.2M dirty pages past the 1M background threshold, under the 1.5M freerun.
    let x = &d.dirty;
    assert_eq!(x.page_kb, 4);
    assert_eq!(x.state.as_deref(), Some("background"));
    assert_eq!(x.dirty_kb, Some(4_800_000));
    assert_eq!(x.writeback_kb, Some(400_000));
    assert_eq!(x.background_threshold_kb, Some(4_000_000));
    assert_eq!(x.freerun_kb, Some(6_000_000));
    assert_eq!(x.threshold_kb, Some(8_000_000));
    assert_eq!(x.limit_from.as_deref(), Some("ratio"));
    close(x.dirtied_kb_per_s, 200_000.0);
    close(x.written_kb_per_s, 192_000.0);

    // HugePages / THP.
    let h = &d.hugepages;
    assert_eq!(h.sizes[0].size_kb, 2048);
    assert_eq!((h.sizes[0].total, h.sizes[0].free), (Some(1024), Some(256)));
    assert_eq!(h.thp_enabled.as_deref(), Some("madvise"));
    close(h.thp_fault_alloc_per_s, 500.0);
    close(h.thp_fallback_ratio, 25.0 / 525.0);
    close(h.compact_stall_per_s, 3.0);
}

#[test]
fn since_boot_averages_equal_the_rates() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_host(dir.path(), &small(), 5).expect("write");
    let d = derive(None, &read(dir.path()));
    assert!(d.since_boot);
    close(d.cpus[3].c0_pct, 37.0);
    close(disk(&d, "sda").r_await, 1.5);
    close(d.nodes[1].numa_hit_per_s, 91_000.0);
}

#[test]
fn thirty_two_bit_counters_wrap_like_the_kernel() {
    // NET_RX of CPU 15 runs at 2500/s and crosses 2^32 between these two ticks.
    let spec = SynthSpec {
        cpus: 16,
        nodes: 1,
        disks: 2,
        queues: 2,
    };
    let tick = (1u64 << 32) / 2500 - BOOT_AGE_S;
    let (s0, s1) = pair(&spec, tick);
    let col = |s: &Sample| {
        let t = s.net.softirqs.as_ref().expect("softirqs");
        let row = t.rows.iter().find(|r| r.name == "NET_RX").expect("NET_RX");
        row.counts[15]
    };
    assert!(col(&s1) < col(&s0), "no wrap at tick {tick}");
    let d = derive(Some(&s0), &s1);
    close(d.softirq_cpus[15].rates["NET_RX"], 2500.0);
}

#[test]
fn same_tick_same_tree() {
    let (a, b) = (
        tempfile::tempdir().expect("a"),
        tempfile::tempdir().expect("b"),
    );
    write_host(a.path(), &small(), 3).expect("write a");
    write_host(b.path(), &small(), 3).expect("write b");
    let (mut x, mut y) = (read(a.path()), read(b.path()));
    x.time.wall_ms = 0;
    y.time.wall_ms = 0;
    assert_eq!(x, y);
    // Rewriting a tree in place (a later tick over an earlier one) works too.
    write_host(a.path(), &small(), 4).expect("rewrite");
    assert_eq!(read(a.path()).time.uptime_s, Some((BOOT_AGE_S + 4) as f64));
}

#[test]
fn batch_report_fits_80_columns() {
    let big = SynthSpec {
        cpus: 96,
        nodes: 4,
        disks: 24,
        queues: 48,
    };
    for spec in [small(), big] {
        let dir = tempfile::tempdir().expect("tempdir");
        write_host(dir.path(), &spec, 1).expect("write");
        let out = Command::new(env!("CARGO_BIN_EXE_perftop"))
            .args(["batch", "-n", "1", "--root"])
            .arg(dir.path())
            .output()
            .expect("run perftop batch");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf-8");
        assert!(text.contains("Disks (iostat -x)"), "{text}");
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "{} chars: {line}", line.len());
        }
    }
}

#[test]
fn a_small_tree_reads_back_clean() {
    // Once `perftop synth --cpus 4 --nodes 1 --disks 2 --queues 2 --tick 2`; the generator is
    // a test fixture now, called directly.
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = SynthSpec {
        cpus: 4,
        nodes: 1,
        disks: 2,
        queues: 2,
    };
    write_host(dir.path(), &spec, 2).expect("write tick 2");
    let s = read(dir.path());
    assert!(s.problems.is_empty(), "{:?}", s.problems);
    assert_eq!(s.cpu.cpus.len(), 4);
    assert_eq!(s.disks.len(), 3); // nvme0n1, its partition, nvme1n1
}

/// The generator's own helpers (these were its unit tests when it lived in `src/`).
mod helpers {
    use crate::support::synth::cpu::cpu_rates;
    use crate::support::synth::io::{sd_dev, sd_name};
    use crate::support::synth::{c32, range, Host, SynthSpec};

    #[test]
    fn names_and_numbers() {
        assert_eq!(sd_name(0), "sda");
        assert_eq!(sd_name(25), "sdz");
        assert_eq!(sd_name(26), "sdaa");
        assert_eq!(sd_name(51), "sdaz");
        assert_eq!(sd_name(52), "sdba");
        assert_eq!(sd_dev(17), (65, 16));
        assert_eq!(range(4, 4), "4-7");
        assert_eq!(range(4, 0), "");
        assert!(cpu_rates(12).iter().all(|&v| v <= 100));
        assert_eq!(cpu_rates(12).iter().sum::<u64>(), 100);
        assert_eq!(c32(1 << 31, 2), 0);
    }

    #[test]
    fn nodes_split_cpus_evenly() {
        let spec = SynthSpec {
            cpus: 8,
            nodes: 2,
            disks: 4,
            queues: 8,
        };
        let h = Host::new(&spec, 0);
        assert_eq!(h.node_cpus, vec![(0, 4), (4, 4)]);
        assert_eq!(h.topology(5), (2, 1));
        assert_eq!(h.nics, 2);
        assert_eq!(h.queues[5].name, "eth1-TxRx-1");
        assert_eq!(h.queues[5].cpu, 5);
    }
}
