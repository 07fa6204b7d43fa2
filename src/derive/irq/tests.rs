//! Interrupt derive by hand: rates per line, type and CPU; resets, jumps and hotplug; the
//! average since boot and when it cannot be trusted.

use super::*;
use crate::sample::Interrupts;

fn row(name: &str, desc: &str, counts: &[u64]) -> ArchRow {
    ArchRow {
        name: name.into(),
        desc: desc.into(),
        counts: counts.to_vec(),
    }
}

fn line(irq: u32, name: &str, counts: &[(u32, u64)]) -> IrqLine {
    IrqLine {
        irq,
        name: name.into(),
        chip: "PCI-MSI".into(),
        counts: counts.to_vec(),
        ..IrqLine::default()
    }
}

/// A 2-CPU sample at `uptime` s with these lines and per-type rows.
fn sample(uptime: f64, cpus: &[u32], irqs: Vec<IrqLine>, rows: Vec<ArchRow>) -> Sample {
    let mut s = Sample::default();
    s.time.uptime_s = Some(uptime);
    s.net.interrupts = Some(Interrupts {
        turn: None,
        cpus: cpus.to_vec(),
        irqs: irqs.into(),
        arch_totals: Vec::new().into(),
        arch_rows: rows.into(),
    });
    s
}

fn derive(prev: Option<&Sample>, cur: &Sample) -> InterruptMetrics {
    let iv = Interval::between(prev, cur);
    derive_interrupts(iv, prev, cur, &super::super::HostMetrics::default())
}

const CAL: &str = "Function call interrupts";
const TLB: &str = "TLB shootdowns";
const LOC: &str = "Local timer interrupts";

#[test]
fn kinds_by_description_then_x86_name() {
    assert_eq!(kind_of("CAL", CAL), IrqKind::Call);
    assert_eq!(kind_of("IPI1", CAL), IrqKind::Call);
    assert_eq!(kind_of("TLB", TLB), IrqKind::Tlb);
    assert_eq!(kind_of("IPI0", "Rescheduling interrupts"), IrqKind::Resched);
    assert_eq!(kind_of("IPI5", "IRQ work interrupts"), IrqKind::Ipi);
    assert_eq!(kind_of("IPI6", "CPU wake-up interrupts"), IrqKind::Ipi);
    assert_eq!(kind_of("IPI9", "something new"), IrqKind::Ipi);
    assert_eq!(kind_of("LOC", LOC), IrqKind::Timer);
    assert_eq!(
        kind_of("PIW", "Posted-interrupt wakeup event"),
        IrqKind::Other
    );
    assert_eq!(kind_of("NMI", "Non-maskable interrupts"), IrqKind::Other);
    assert_eq!(kind_of("CAL", ""), IrqKind::Call);
    assert_eq!(kind_of("XYZ", ""), IrqKind::Other);
}

#[test]
fn rates_per_line_per_type_and_per_cpu() {
    let rows0 = vec![
        row("LOC", LOC, &[1_000, 2_000]),
        row("RES", "Rescheduling interrupts", &[10, 20]),
        row("CAL", CAL, &[100, 200]),
        row("TLB", TLB, &[50, 60]),
        row("NMI", "Non-maskable interrupts", &[0, 0]),
    ];
    let a = sample(
        1_000.0,
        &[0, 1],
        vec![
            line(30, "nvme0q1", &[(0, 500)]),
            line(31, "eth0", &[(1, 7)]),
        ],
        rows0,
    );
    // Over 2 s: LOC +500/+600, RES +4/+0, CAL +40 000/+2, TLB +20 000/+0, NMI +2/+0;
    // nvme0q1 +1 000 on CPU0 and 300 on CPU1 (new there), eth0 unchanged.
    let b = sample(
        1_002.0,
        &[0, 1],
        vec![
            line(30, "nvme0q1", &[(0, 1_500), (1, 300)]),
            line(31, "eth0", &[(1, 7)]),
        ],
        vec![
            row("LOC", LOC, &[1_500, 2_600]),
            row("RES", "Rescheduling interrupts", &[14, 20]),
            row("CAL", CAL, &[40_100, 202]),
            row("TLB", TLB, &[20_050, 60]),
            row("NMI", "Non-maskable interrupts", &[2, 0]),
        ],
    );
    let m = derive(Some(&a), &b);
    assert_eq!((m.lines_total, m.lines_idle), (2, 1));
    let nvme = &m.lines[0];
    assert_eq!(nvme.per_s, Some(650.0)); // 1 300 / 2
    assert_eq!(nvme.cpus, vec![0, 1]);
    // 1 800 since boot over 1 002 s.
    assert_eq!(nvme.boot_per_s, Some(1_800.0 / 1_002.0));
    let (c0, c1) = (&m.cpus[0], &m.cpus[1]);
    assert_eq!(c0.rates["CAL"], Some(20_000.0));
    assert_eq!(c0.rates["TLB"], Some(10_000.0));
    assert_eq!(c0.call_tlb_per_s, Some(30_000.0));
    // RES + CAL: (4 + 40 000) / 2; the TLB shootdowns arrived as CAL IPIs.
    assert_eq!(c0.ipi_per_s, Some(20_002.0));
    // Every column but TLB: LOC 500, RES 4, CAL 40 000, NMI 2, nvme 1 000 → /2.
    assert_eq!(c0.hard_irq_per_s, Some(20_753.0));
    // LOC 600, CAL 2, nvme 300 → /2.
    assert_eq!(c1.hard_irq_per_s, Some(451.0));
    assert_eq!(c1.call_tlb_per_s, Some(1.0));
    assert_eq!(m.types[2].kind, IrqKind::Call);
    // The JSON lists the busy line only.
    let v = serde_json::to_value(&m).expect("json");
    assert_eq!(v["lines"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["lines"][0]["irq"], 30);
}

#[test]
fn resets_jumps_and_hotplug_are_unknown_never_huge() {
    let a = sample(
        100.0,
        &[0, 1],
        vec![
            line(30, "a", &[(0, 3_000_000_000)]),
            line(31, "b", &[(0, 10), (1, 10)]),
            line(32, "c", &[(0, 4_294_967_290)]),
        ],
        vec![row("CAL", CAL, &[3_000_000_000, 50])],
    );
    // a: 3e9 → 5 is no wrap of 1.3e9 in 1 s (more than a CPU can take); b: went to 0 on
    // CPU1 (reset); c: a real wrap, +16; CAL on CPU0 likewise reset; CPU2 came online.
    let b = sample(
        101.0,
        &[0, 1, 2],
        vec![
            line(30, "a", &[(0, 5)]),
            line(31, "b", &[(0, 20)]),
            line(32, "c", &[(0, 10)]),
        ],
        vec![row("CAL", CAL, &[5, 60, 9_999])],
    );
    let m = derive(Some(&a), &b);
    assert_eq!(m.lines[0].per_s, None);
    assert_eq!(m.lines[1].per_s, None);
    assert!(m.lines[1].cpus.is_empty());
    assert_eq!(m.lines[2].per_s, Some(16.0));
    assert_eq!(m.cpus[0].rates["CAL"], None);
    assert_eq!(m.cpus[0].hard_irq_per_s, None);
    assert_eq!(m.cpus[1].rates["CAL"], Some(10.0));
    // CPU1's sum misses line b, which went down there.
    assert_eq!(m.cpus[1].hard_irq_per_s, None);
    assert_eq!(m.cpus[2].rates["CAL"], None, "no column before: unknown");
    assert_eq!(m.cpus[2].hard_irq_per_s, None);
}

#[test]
fn since_boot_average_is_unknown_when_a_count_could_have_wrapped() {
    // 60 000/s on one CPU for 100 000 s would be 6e9 > 2^32: the count may have wrapped.
    let a = sample(
        100_000.0,
        &[0],
        vec![line(40, "x", &[(0, 1_000_000)])],
        vec![],
    );
    let b = sample(
        100_001.0,
        &[0],
        vec![line(40, "x", &[(0, 1_060_000)])],
        vec![],
    );
    let m = derive(Some(&a), &b);
    assert_eq!(m.lines[0].per_s, Some(60_000.0));
    assert_eq!(m.lines[0].boot_per_s, None);
    // 40 000/s for 100 001 s is 4.0e9 < 2^32: trusted, 1 040 000 / 100 001.
    let b = sample(
        100_001.0,
        &[0],
        vec![line(40, "x", &[(0, 1_040_000)])],
        vec![],
    );
    let m = derive(Some(&a), &b);
    assert_eq!(m.lines[0].boot_per_s, Some(1_040_000.0 / 100_001.0));
    // A new line (or one renamed) has no rate and no average this interval.
    let b = sample(100_001.0, &[0], vec![line(40, "y", &[(0, 5)])], vec![]);
    let m = derive(Some(&a), &b);
    assert_eq!((m.lines[0].per_s, m.lines[0].boot_per_s), (None, None));
}

#[test]
fn no_file_and_old_recordings_say_why() {
    let m = derive(None, &Sample::default());
    assert_eq!(m.unknown.as_deref(), Some("no /proc/interrupts"));
    let mut a = sample(10.0, &[0], vec![line(1, "x", &[(0, 5)])], vec![]);
    if let Some(i) = a.net.interrupts.as_mut() {
        i.arch_totals = vec![("LOC".into(), 100)].into();
    }
    let mut b = a.clone();
    b.time.uptime_s = Some(11.0);
    let m = derive(Some(&a), &b);
    assert!(m
        .unknown
        .as_deref()
        .is_some_and(|u| u.contains("recorded before")));
    assert_eq!(m.cpus[0].hard_irq_per_s, None);
    assert_eq!(m.cpus[0].ipi_per_s, None);
    assert_eq!(m.lines[0].per_s, Some(0.0));
}

/// A table read in turns: its rates run between its own two reads (8 s apart here), not from
/// the previous sample's table (the same read, carried); a first sample is since boot.
#[test]
fn a_table_read_in_turns_rates_over_its_own_reads() {
    let older = sample(
        100.0,
        &[0, 1],
        vec![line(30, "eth0-rx-0", &[(0, 1_000)])],
        vec![],
    );
    let mut read = sample(
        108.0,
        &[0, 1],
        vec![line(30, "eth0-rx-0", &[(0, 1_800)])],
        vec![],
    );
    read.net.interrupts.as_mut().expect("table").turn = None;
    // Two samples after that read, both carrying it, with the read before it.
    let carry = |uptime: f64| {
        let mut s = read.clone();
        s.time.uptime_s = Some(uptime);
        let t = s.net.interrupts.as_mut().expect("table");
        t.turn = Some(Box::new(crate::sample::IrqTurn {
            at: read.time.clone(),
            before: Some((
                older.time.clone(),
                older.net.interrupts.clone().expect("table"),
            )),
        }));
        s
    };
    let (a, b) = (carry(109.0), carry(110.0));
    let m = derive(Some(&a), &b);
    // 800 over the 8 s between the reads: 100/s (from the carried pair it would be 0/s).
    assert_eq!(m.lines[0].per_s, Some(100.0));
    assert_eq!(m.table_secs, Some(8.0));
    // Carried to a sample 2 s after the read: the window ended 2 s before this frame.
    assert_eq!(m.table_age_s, Some(2.0));
    // A recording's first sample: since boot, not a turn of 110 s.
    let first = derive(None, &b);
    assert_eq!(first.table_secs, None);
    assert_eq!(first.table_age_s, None);
}
