//! Property test of derive's promises: whatever two samples look like (counters that reset,
//! wrap, jump or vanish; zero, negative or missing intervals), every number in the `delta`
//! output is finite, non-negative and not absurd, and nothing panics.

use perftop::cpulist::CpuList;
use perftop::derive::derive;
use perftop::sample::*;
use proptest::prelude::*;

fn counter() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..1000,
        Just(u64::from(u32::MAX) - 5),
        (1u64 << 31)..(1u64 << 33),
        any::<u64>(),
    ]
}

prop_compose! {
    fn times()(v in prop::collection::vec(counter(), 10)) -> CpuTimes {
        CpuTimes {
            user: v[0], nice: v[1], system: v[2], idle: v[3], iowait: v[4], irq: v[5],
            softirq: v[6], steal: Some(v[7]), guest: Some(v[8]), guest_nice: Some(v[9]),
        }
    }
}

prop_compose! {
    fn sample()(
        uptime in prop_oneof![Just(None), (0.0f64..1e6).prop_map(Some)],
        cpu_times in prop::collection::vec(prop::option::of(times()), 1..4),
        idle in prop::collection::vec(counter(), 5),
        disk in prop::collection::vec(counter(), 17),
        fields in prop_oneof![Just(4u8), Just(11), Just(15), Just(17)],
        soft in prop::collection::vec(counter(), 3),
        net in prop::collection::vec(counter(), 8),
        mem in prop::collection::vec(counter(), 8),
    ) -> Sample {
        let mut s = Sample::default();
        s.time.uptime_s = uptime;
        for (i, t) in cpu_times.into_iter().enumerate() {
            s.cpu.cpus.push(CpuEntry {
                id: i as u32,
                online: t.is_some(),
                times: t,
                idle_states: vec![IdleState {
                    index: 0,
                    name: "C1".into(),
                    usage: Some(idle[0]),
                    time_us: Some(idle[1]),
                    above: Some(idle[2]),
                    below: Some(idle[3]),
                    ..Default::default()
                }],
                ..Default::default()
            });
        }
        s.cpu.total = s.cpu.cpus[0].times;
        s.cpu.freq.policies.push(FreqPolicy {
            id: "policy0".into(),
            affected_cpus: CpuList::parse("0-3"),
            cur_khz: Some(idle[4]),
            ..Default::default()
        });
        s.disks.push(DiskSample {
            name: "sda".into(),
            fields,
            read_ios: disk[0], read_merges: disk[1], read_sectors: disk[2], read_ticks: disk[3],
            write_ios: disk[4], write_merges: disk[5], write_sectors: disk[6], write_ticks: disk[7],
            in_flight: disk[8], io_ticks: disk[9], time_in_queue: disk[10],
            discard_ios: Some(disk[11]), discard_merges: Some(disk[12]),
            discard_sectors: Some(disk[13]), discard_ticks: Some(disk[14]),
            flush_ios: Some(disk[15]), flush_ticks: Some(disk[16]),
            whole_disk: true,
            ..Default::default()
        });
        s.net.softirqs = Some(Softirqs {
            cpus: vec![0, 1],
            rows: vec![SoftirqRow { name: "NET_RX".into(), counts: vec![soft[0], soft[1]] }],
        });
        s.net.softnet.push(SoftnetRow { cpu: 0, processed: soft[2], ..Default::default() });
        s.net.interrupts = Some(Interrupts {
            turn: None,
            cpus: vec![0, 1],
            irqs: vec![IrqLine {
                irq: 40,
                name: "eth0-TxRx-0".into(),
                counts: vec![(0, net[0]), (1, net[1])],
                ..Default::default()
            }].into(),
            arch_totals: Default::default(),
            arch_rows: vec![ArchRow {
                name: "CAL".into(),
                desc: "Function call interrupts".into(),
                counts: vec![soft[0], net[1]],
            }].into(),
        });
        s.net.devices.push(NetDevice {
            name: "eth0".into(),
            rx_packets: net[2], rx_bytes: net[3], rx_drop: net[4],
            tx_packets: net[5], tx_bytes: net[6], tx_drop: net[7],
            ..Default::default()
        });
        s.memory.vmstat.nr_dirty = Some(mem[0] % (1 << 40));
        s.memory.vmstat.nr_writeback = Some(mem[1] % (1 << 40));
        s.memory.vmstat.nr_dirty_threshold = Some(mem[2] % (1 << 40));
        s.memory.vmstat.nr_dirty_background_threshold = Some(mem[3] % (1 << 40));
        s.memory.vmstat.nr_dirtied = Some(mem[4]);
        s.memory.vmstat.thp_fault_alloc = Some(mem[5]);
        s.nodes.push(NodeSample {
            id: 0,
            numastat: NumaStat { numa_hit: Some(mem[6]), numa_miss: Some(mem[7]), ..Default::default() },
            ..Default::default()
        });
        s
    }
}

/// Shares of time that can never pass 100%.
const PERCENTS: &[&str] = &[
    ".c0_pct",
    ".user_pct",
    ".system_pct",
    ".iowait_pct",
    ".irq_pct",
    ".soft_pct",
    ".steal_pct",
    ".busy_pct",
    ".rrqm",
    ".wrqm",
    ".drqm",
];

/// Every number in the JSON is finite and >= 0; shares of time stay within 100%.
fn check(v: &serde_json::Value, path: &str) -> Result<(), String> {
    match v {
        serde_json::Value::Number(n) => {
            let x = n.as_f64().ok_or(format!("{path}: not a number"))?;
            if !x.is_finite() || x < 0.0 {
                return Err(format!("{path} = {x}"));
            }
            if PERCENTS.iter().any(|p| path.ends_with(p)) && x > 100.0 + 1e-6 {
                return Err(format!("{path} = {x} > 100%"));
            }
            if (path.ends_with("_ratio") || path.ends_with("miss_ratio")) && x > 1.0 + 1e-9 {
                return Err(format!("{path} = {x} > 1"));
            }
            // Interrupt rates: one line and one per-type row on 2 CPUs, each at most what a
            // CPU can take (a reset is unknown, never a 1e9/s spike).
            if path.starts_with(".interrupts.")
                && !path.ends_with("ctxt_per_s")
                && !path.ends_with("intr_per_s")
                && (path.contains("_per_s") || path.contains(".rates."))
                && x > 4.0 * perftop::derive::irq::MAX_PER_CPU_PER_S
            {
                return Err(format!("{path} = {x}: absurd"));
            }
            Ok(())
        }
        serde_json::Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| check(x, &format!("{path}[{i}]"))),
        serde_json::Value::Object(o) => o
            .iter()
            .try_for_each(|(k, x)| check(x, &format!("{path}.{k}"))),
        _ => Ok(()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn derived_numbers_are_sane(a in sample(), b in sample()) {
        for d in [derive(Some(&a), &b), derive(None, &b)] {
            let v = serde_json::to_value(&d).map_err(|e| TestCaseError::fail(e.to_string()))?;
            check(&v, "").map_err(TestCaseError::fail)?;
            if d.interval_s.is_none() {
                for c in &d.cpus {
                    prop_assert!(c.wakeups_per_s.is_none());
                }
                for disk in &d.disks {
                    prop_assert!(disk.r_s.is_none());
                }
            }
        }
    }

    #[test]
    fn wrapped_32bit_counters_give_small_deltas(start in (u64::from(u32::MAX) - 1000)..=u64::from(u32::MAX), step in 1u64..1000) {
        let mut a = Sample::default();
        a.time.uptime_s = Some(100.0);
        a.disks.push(DiskSample { name: "sda".into(), fields: 11, read_ios: 10, read_ticks: start, io_ticks: start, whole_disk: true, ..Default::default() });
        let mut b = a.clone();
        b.time.uptime_s = Some(101.0);
        b.disks[0].read_ios = 11;
        b.disks[0].read_ticks = (start + step) % (1 << 32);
        b.disks[0].io_ticks = (start + step) % (1 << 32);
        let d = derive(Some(&a), &b);
        prop_assert_eq!(d.disks[0].r_await, Some(step as f64));
        let util = step as f64 / 1000.0 * 100.0;
        prop_assert!((d.disks[0].util.unwrap_or(-1.0) - util).abs() < 1e-9);
    }
}
