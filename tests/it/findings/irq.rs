//! Interrupt rules: `irq.storm` against the line's average since boot (`delta`) and against the
//! rate a run learned (the strip, batch, dump), and `ipi.storm` on x86 and arm64 row names.

use super::*;
use perftop::assess::Assessor;
use perftop::sample::{ArchRow, Interrupts, IrqLine};

/// The quiet pair's 4 CPUs in the `/proc/interrupts` header.
fn interrupts(p: &mut Pair) -> [&mut Interrupts; 2] {
    [&mut p.a, &mut p.b].map(|s| {
        s.net.interrupts.get_or_insert_with(|| Interrupts {
            cpus: (0..CPUS).collect(),
            ..Interrupts::default()
        })
    })
}

/// IRQ `irq` on CPU `cpu`: `before` counted at the first sample (the quiet pair is 1000 s up),
/// then `per_s` over the interval.
fn line(p: &mut Pair, irq: u32, name: &str, cpu: u32, before: u64, per_s: f64) {
    let n = p.count(per_s);
    for (irqs, count) in interrupts(p).into_iter().zip([before, before + n]) {
        let lines = std::sync::Arc::make_mut(&mut irqs.irqs);
        lines.retain(|l| l.irq != irq);
        lines.push(IrqLine {
            irq,
            name: name.into(),
            chip: "PCI-MSIX-0000:00:02.0".into(),
            counts: vec![(cpu, count)],
            ..IrqLine::default()
        });
        lines.sort_by_key(|l| l.irq);
    }
}

/// A per-type row growing by `per_s[cpu]` on each CPU over the interval.
fn row(p: &mut Pair, name: &str, desc: &str, per_s: [f64; CPUS as usize]) {
    let base = 1_000_000u64;
    let n = per_s.map(|r| p.count(r));
    for (irqs, grow) in interrupts(p).into_iter().zip([false, true]) {
        let rows = std::sync::Arc::make_mut(&mut irqs.arch_rows);
        rows.retain(|r| r.name != name);
        rows.push(ArchRow {
            name: name.into(),
            desc: desc.into(),
            counts: n.iter().map(|&d| base + if grow { d } else { 0 }).collect(),
        });
    }
}

const CAL: &str = "Function call interrupts";
const TLB: &str = "TLB shootdowns";

#[test]
fn irq_storm_against_the_average_since_boot() {
    // ~1 000/s for the 1000 s before, 60 000/s now: 1 060 000 over 1001 s is 1 059/s.
    let mut p = Pair::quiet(1.0);
    line(&mut p, 36, "virtio1-req.0", 1, 1_000_000, 60_000.0);
    let f = p.fires("irq.storm");
    assert_eq!(
        f.message,
        "IRQ 36 virtio1-req.0 at 60k/s vs 1.1k/s since boot: interrupt storm"
    );
    assert_eq!(
        (f.severity.as_str(), f.pane.as_str(), f.tweak.as_deref()),
        ("warn", "softirq", Some("irq.36"))
    );
    // Just under the rate: 49 999/s.
    line(&mut p, 36, "virtio1-req.0", 1, 1_000_000, 49_999.0);
    p.silent("irq.storm");
    // Fast, and exactly 10x its usual: 5 005 000 / 1001 = 5 000/s since boot.
    line(&mut p, 36, "virtio1-req.0", 1, 4_955_000, 50_000.0);
    p.fires("irq.storm");
    // Just under 10x: 5 005 101 / 1001 = 5 000.1/s, 10x is 50 001 > 50 000.
    line(&mut p, 36, "virtio1-req.0", 1, 4_955_101, 50_000.0);
    p.silent("irq.storm");
    // Always that busy: 80 000/s since boot and now.
    line(&mut p, 36, "virtio1-req.0", 1, 80_000_000, 80_000.0);
    p.silent("irq.storm");
    // A count that could have wrapped at this rate since boot says nothing about the usual
    // rate: 60 000/s x 100 001 s > 2^32, so the line is not judged.
    let mut p = Pair::quiet(1.0);
    p.a.time.uptime_s = Some(100_000.0);
    p.b.time.uptime_s = Some(100_001.0);
    line(&mut p, 36, "virtio1-req.0", 1, 5_000, 60_000.0);
    p.silent("irq.storm");
}

#[test]
fn irq_storm_names_the_busiest_line_and_counts_the_rest() {
    let mut p = Pair::quiet(1.0);
    line(&mut p, 40, "nvme0q1", 0, 1_000, 70_000.0);
    line(&mut p, 41, "eth0-TxRx-0", 2, 1_000, 90_000.0);
    let f = p.fires("irq.storm");
    assert_eq!(
        f.message,
        "IRQ 41 eth0-TxRx-0 at 90k/s vs 91/s since boot: interrupt storm (+1 more)"
    );
    assert_eq!(f.tweak.as_deref(), Some("irq.41"));
}

/// Samples 1 s apart of one line taking `per_s[i]` in interval `i`, after 1000 s of uptime at
/// `boot_per_s`.
fn intervals(per_s: &[f64], boot_per_s: f64) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut p = Pair::quiet(1.0);
    let mut count = (boot_per_s * 1000.0) as u64;
    line(&mut p, 36, "virtio1-req.0", 1, count, 0.0);
    out.push(p.a.clone());
    for (i, r) in per_s.iter().enumerate() {
        let mut s = p.a.clone();
        count += *r as u64;
        s.time.uptime_s = Some(1001.0 + i as f64);
        s.time.wall_ms += 1000 * (i as i64 + 1);
        if let Some(l) = s
            .net
            .interrupts
            .as_mut()
            .map(|x| &mut std::sync::Arc::make_mut(&mut x.irqs)[0])
        {
            l.counts = vec![(1, count)];
        }
        out.push(s);
    }
    out
}

fn storms(samples: &[Sample]) -> Vec<Option<String>> {
    let mut a = Assessor::new(Thresholds::default());
    samples
        .windows(2)
        .map(|w| {
            a.next(Some(&w[0]), &w[1])
                .findings
                .into_iter()
                .find(|f| f.id == "irq.storm")
                .map(|f| f.message)
        })
        .collect()
}

#[test]
fn irq_storm_against_the_rate_a_run_learned() {
    // Since boot 20 000/s, so the since-boot average would hide it; the run learns 1 000/s
    // over 5 intervals, then the line jumps to 60 000/s: a storm, and it stays one (the storm
    // is never learned as the norm).
    let mut rates = vec![1_000.0; 5];
    rates.extend([60_000.0; 8]);
    let got = storms(&intervals(&rates, 20_000.0));
    assert!(got[..5].iter().all(Option::is_none), "{got:?}");
    for m in &got[5..] {
        assert_eq!(
            m.as_deref(),
            Some("IRQ 36 virtio1-req.0 at 60k/s vs usual 1.0k/s: interrupt storm")
        );
    }
    // Just under: 59 000/s is over 50k/s but under 10x the usual 6 000/s.
    let mut rates = vec![6_000.0; 5];
    rates.push(59_000.0);
    let got = storms(&intervals(&rates, 6_000.0));
    assert_eq!(got[5], None, "59k/s is under 10x the usual 6k/s");
    // A line that has always been that busy: learned at 80 000/s, silent at 80 000/s.
    let got = storms(&intervals(&[80_000.0; 10], 80_000.0));
    assert!(got.iter().all(Option::is_none), "{got:?}");
    // A line never seen above 1/s counts as 0: 50 000/s from nothing is a storm.
    let mut rates = vec![0.0; 5];
    rates.push(50_000.0);
    let got = storms(&intervals(&rates, 0.0));
    assert!(got[5].is_some(), "{got:?}");
}

#[test]
fn ipi_storm_on_x86_rows() {
    let mut p = Pair::quiet(2.0);
    row(&mut p, "CAL", CAL, [100.0, 100.0, 15_000.0, 100.0]);
    row(&mut p, "TLB", TLB, [10.0, 10.0, 5_000.0, 10.0]);
    row(&mut p, "LOC", "Local timer interrupts", [1_000.0; 4]);
    let f = p.fires("ipi.storm");
    assert_eq!(
        f.message,
        "CPU2: 20k/s function-call + TLB IPIs (CAL 15k, TLB 5.0k)"
    );
    assert_eq!(
        (f.severity.as_str(), f.pane.as_str(), f.tweak.as_deref()),
        ("warn", "softirq", None)
    );
    // Just under: 19 999.5/s.
    row(&mut p, "TLB", TLB, [10.0, 10.0, 4_999.5, 10.0]);
    p.silent("ipi.storm");
    // The local timer is no IPI.
    row(&mut p, "LOC", "Local timer interrupts", [90_000.0; 4]);
    p.silent("ipi.storm");
}

#[test]
fn ipi_storm_on_arm64_rows_by_description() {
    // arm64 has no TLB row (broadcast TLBI); its function-call IPIs are IPI1.
    let mut p = Pair::quiet(1.0);
    row(&mut p, "IPI0", "Rescheduling interrupts", [30_000.0; 4]);
    row(&mut p, "IPI1", CAL, [0.0, 25_000.0, 0.0, 0.0]);
    let f = p.fires("ipi.storm");
    assert_eq!(f.message, "CPU1: 25k/s function-call + TLB IPIs (IPI1 25k)");
    row(&mut p, "IPI1", CAL, [0.0, 19_999.0, 0.0, 0.0]);
    p.silent("ipi.storm");
}

#[test]
fn ipi_storm_holds_at_the_relaxed_level_on_the_strip() {
    let at = |per_s: f64, step: i64| {
        let mut p = Pair::quiet(1.0);
        row(&mut p, "CAL", CAL, [0.0, per_s, 0.0, 0.0]);
        p.b.time.wall_ms += step * 1000;
        p.derive()
    };
    let mut tr = FindingTracker::new(Thresholds::default());
    assert!(tr.update(&at(20_000.0, 0)).is_empty());
    assert!(tr.update(&at(20_000.0, 1)).is_empty());
    assert_eq!(tr.update(&at(20_000.0, 2)).len(), 1);
    // 90% of 20 000 is 18 000: held at 18 500, then three samples under it clear it.
    assert_eq!(tr.update(&at(18_500.0, 3)).len(), 1);
    assert_eq!(tr.update(&at(17_000.0, 4)).len(), 1);
    assert_eq!(tr.update(&at(17_000.0, 5)).len(), 1);
    assert!(tr.update(&at(17_000.0, 6)).is_empty());
}
