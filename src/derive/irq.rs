//! Interrupts over every line of `/proc/interrupts`, not only NIC queues: per IRQ line its rate,
//! the CPUs it landed on, its affinity and its average since boot; per CPU the rate of each
//! per-type row (`LOC`, `RES`, `CAL`, `TLB`... on x86, `IPI0`..`IPIn` on arm64), the IPIs among
//! them and every hard interrupt it took; `/proc/stat` `intr` and `ctxt` beside them (the kernel
//! counts context switches only system-wide there).
//!
//! The kernel keeps these counts in 32 bits per CPU. One wrap is undone; a count that goes down
//! otherwise (a line re-registered, a CPU back from hotplug with no column before) or grows by
//! more than any CPU can take in the interval makes that line's, type's or CPU's rate unknown
//! for the interval, never a huge one.

use super::Interval;
use crate::sample::{ArchRow, IrqLine, Sample};
use serde::{Serialize, Serializer};
use std::collections::{BTreeMap, HashMap};

/// More interrupts per second than one CPU can take (a CPU spends ~1 µs per interrupt at the
/// very least): a delta beyond this over the interval is a reset read as a wrap.
pub const MAX_PER_CPU_PER_S: f64 = 16_777_216.0;

/// The JSON lists at most this many lines, busiest first (a big host has thousands).
pub const JSON_LINES: usize = 64;

#[derive(Debug, Clone, Default, Serialize)]
pub struct InterruptMetrics {
    /// Every IRQ line, in IRQ order. The JSON holds the lines that took interrupts in the
    /// interval (or whose rate is unknown), busiest first, at most `JSON_LINES`.
    #[serde(serialize_with = "busiest_lines")]
    pub lines: Vec<IrqLineMetrics>,
    /// IRQ lines in `/proc/interrupts`.
    pub lines_total: usize,
    /// Lines that took no interrupt in the interval.
    pub lines_idle: usize,
    /// The per-type rows as the kernel names and describes them, in its order.
    pub types: Vec<IrqType>,
    pub cpus: Vec<IrqCpuMetrics>,
    /// `/proc/stat` `intr`: every interrupt of the machine, per second.
    pub intr_per_s: Option<f64>,
    /// `/proc/stat` `ctxt`: context switches of the machine per second (no per-CPU count exists
    /// in /proc).
    pub ctxt_per_s: Option<f64>,
    /// Why per-CPU numbers are missing (no `/proc/interrupts`, an old recording).
    pub unknown: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct IrqLineMetrics {
    pub irq: u32,
    /// Action names as the kernel prints them.
    pub name: String,
    /// The interrupt chip (`IO-APIC`, `PCI-MSIX-0000:00:02.0`, `GICv3`).
    pub chip: String,
    pub per_s: Option<f64>,
    /// The line's average since boot: irq.storm's baseline until it has learned one. Unknown
    /// when a 32-bit per-CPU count could have wrapped at the interval's rate since boot.
    pub boot_per_s: Option<f64>,
    /// CPUs that took this IRQ during the interval.
    pub cpus: Vec<u32>,
    pub affinity: Option<String>,
    pub effective_affinity: Option<String>,
    pub node: Option<i32>,
}

/// What a per-type row counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IrqKind {
    /// The local timer (`LOC`).
    Timer,
    /// Rescheduling IPIs (`RES`, arm64 `IPI0`).
    Resched,
    /// Function-call IPIs (`CAL`, arm64 `IPI1`): work one CPU asks another to run now.
    Call,
    /// TLB shootdowns (`TLB`): on x86 each also arrives as a function-call IPI.
    Tlb,
    /// Other IPIs (IRQ work, CPU stop, timer broadcast, wake-up, doorbells).
    Ipi,
    /// Everything else (NMI, PMI, spurious, thermal, hypervisor callbacks...).
    Other,
}

impl IrqKind {
    pub fn is_ipi(self) -> bool {
        matches!(
            self,
            IrqKind::Resched | IrqKind::Call | IrqKind::Tlb | IrqKind::Ipi
        )
    }
}

/// Classifies a per-type row by what the kernel says it counts, else by its x86 name: arm64
/// and riscv number their IPIs (`IPI1: ... Function call interrupts`).
pub fn kind_of(name: &str, desc: &str) -> IrqKind {
    let d = desc.to_ascii_lowercase();
    let has = |w: &str| d.contains(w);
    if has("function call") {
        IrqKind::Call
    } else if has("tlb shootdown") {
        IrqKind::Tlb
    } else if has("rescheduling") {
        IrqKind::Resched
    } else if has("local timer") {
        IrqKind::Timer
    } else if has("irq work")
        || has("cpu stop")
        || has("timer broadcast")
        || has("cpu wake-up")
        || has("cpu wakeup")
        || has("doorbell")
        || has("backtrace")
        || name.starts_with("IPI")
    {
        IrqKind::Ipi
    } else if !d.is_empty() {
        IrqKind::Other
    } else {
        match name {
            "CAL" => IrqKind::Call,
            "TLB" => IrqKind::Tlb,
            "RES" => IrqKind::Resched,
            "LOC" => IrqKind::Timer,
            "IWI" => IrqKind::Ipi,
            _ => IrqKind::Other,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct IrqType {
    /// The kernel's short name (`CAL`, `IPI1`): the key of `cpus[].rates`.
    pub name: String,
    pub desc: String,
    pub kind: IrqKind,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct IrqCpuMetrics {
    pub cpu: u32,
    /// Every interrupt the CPU took: its column summed over every line and per-type row of
    /// `/proc/interrupts` (lines that appeared or vanished in the interval left out).
    pub hard_irq_per_s: Option<f64>,
    /// Its IPIs: rescheduling, function-call, TLB-shootdown and the other IPI rows.
    pub ipi_per_s: Option<f64>,
    /// Function-call plus TLB-shootdown IPIs (what `ipi.storm` judges).
    pub call_tlb_per_s: Option<f64>,
    /// Per type, by the kernel's short name (`LOC`, `RES`, `CAL`, `TLB`, `IPI0`...).
    pub rates: BTreeMap<String, Option<f64>>,
}

/// Growth of a per-CPU interrupt count: one 32-bit wrap undone, a drop or a growth beyond what a
/// CPU can take in the interval unknown.
pub fn irq_delta(iv: Interval, prev: Option<u64>, cur: u64) -> Option<u64> {
    let d = iv.d32(prev, cur)?;
    match iv.secs {
        Some(s) if d as f64 > s * MAX_PER_CPU_PER_S => None,
        _ => Some(d),
    }
}

pub fn derive_interrupts(
    iv: Interval,
    prev: Option<&Sample>,
    cur: &Sample,
    host: &super::HostMetrics,
) -> InterruptMetrics {
    let mut m = InterruptMetrics {
        intr_per_s: host.intr_per_s,
        ctxt_per_s: host.ctxt_per_s,
        ..InterruptMetrics::default()
    };
    let Some(irqs) = &cur.net.interrupts else {
        m.unknown = Some("no /proc/interrupts".into());
        return m;
    };
    let prev_irqs = prev.and_then(|p| p.net.interrupts.as_ref());
    // Column of each CPU in the previous header: a CPU that was not there (just onlined) has
    // counts from before it went offline, so none of its rates is known this interval.
    let prev_col: HashMap<u32, usize> = prev_irqs
        .map(|p| p.cpus.iter().enumerate().map(|(i, &c)| (c, i)).collect())
        .unwrap_or_default();
    let known_cpu = |cpu: u32| iv.since_boot || prev_col.contains_key(&cpu);
    // Per CPU column of the current header: the hard-interrupt sum, `None` once a part of it is
    // unknown.
    let mut hard: Vec<Option<u64>> = irqs
        .cpus
        .iter()
        .map(|&c| known_cpu(c).then_some(0))
        .collect();
    let col: HashMap<u32, usize> = irqs.cpus.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    m.lines_total = irqs.irqs.len();
    for line in &irqs.irqs {
        let p = prev_irqs.and_then(|pi| {
            pi.irqs
                .binary_search_by_key(&line.irq, |l| l.irq)
                .ok()
                .map(|i| &pi.irqs[i])
                .filter(|l| l.name == line.name)
        });
        let (total, cpus, deltas) = line_delta(iv, p, line, &irqs.cpus, &known_cpu);
        // A line that appeared or vanished is no part of any CPU's sum; one that went down or
        // jumped makes the sums of the CPUs it did that on unknown.
        if p.is_some() || iv.since_boot {
            for &(cpu, d) in &deltas {
                if let Some(h) = col.get(&cpu).and_then(|&i| hard.get_mut(i)) {
                    *h = h.zip(d).map(|(a, b)| a.saturating_add(b));
                }
            }
        }
        let per_s = iv.rate(total);
        if per_s == Some(0.0) {
            m.lines_idle += 1;
        }
        m.lines.push(IrqLineMetrics {
            irq: line.irq,
            name: line.name.clone(),
            chip: line.chip.clone(),
            per_s,
            boot_per_s: per_s.and_then(|_| boot_rate(iv, cur, line, &deltas)),
            cpus,
            affinity: line.affinity.as_ref().map(|l| l.to_string()),
            effective_affinity: line.effective_affinity.as_ref().map(|l| l.to_string()),
            node: line.node,
        });
    }
    if irqs.arch_rows.is_empty() && !irqs.arch_totals.is_empty() {
        // A recording made before the per-CPU rows were kept: the per-CPU sums would leave
        // out the timer and every IPI.
        m.unknown = Some("recorded before perftop kept per-CPU interrupt types".into());
        hard.iter_mut().for_each(|h| *h = None);
    }
    m.types = irqs
        .arch_rows
        .iter()
        .map(|r| IrqType {
            name: r.name.clone(),
            desc: r.desc.clone(),
            kind: kind_of(&r.name, &r.desc),
        })
        .collect();
    let prev_rows: HashMap<&str, &ArchRow> = prev_irqs
        .map(|p| {
            let mut by = HashMap::new();
            for r in p.arch_rows.iter() {
                by.entry(r.name.as_str()).or_insert(r);
            }
            by
        })
        .unwrap_or_default();
    m.cpus = irqs
        .cpus
        .iter()
        .enumerate()
        .map(|(i, &cpu)| {
            let pcol = prev_col.get(&cpu).copied();
            let mut c = IrqCpuMetrics {
                cpu,
                ..IrqCpuMetrics::default()
            };
            let (mut ipi, mut call_tlb) = (Some(0u64), Some(0u64));
            let mut seen = std::collections::HashSet::new();
            for (row, ty) in irqs.arch_rows.iter().zip(&m.types) {
                // The kernel prints each name once; a garbled file may not.
                if !seen.insert(row.name.as_str()) {
                    continue;
                }
                let before = pcol.and_then(|j| prev_rows.get(row.name.as_str())?.counts.get(j));
                let d = row.counts.get(i).and_then(|&n| {
                    if !known_cpu(cpu) {
                        return None;
                    }
                    irq_delta(iv, before.copied(), n)
                });
                c.rates.insert(row.name.clone(), iv.rate(d));
                if let Some(h) = hard.get_mut(i) {
                    *h = h.zip(d).map(|(a, b)| a.saturating_add(b));
                }
                if ty.kind.is_ipi() {
                    ipi = ipi.zip(d).map(|(a, b)| a + b);
                }
                if matches!(ty.kind, IrqKind::Call | IrqKind::Tlb) {
                    call_tlb = call_tlb.zip(d).map(|(a, b)| a + b);
                }
            }
            let has = |k: fn(IrqKind) -> bool| m.types.iter().any(|t| k(t.kind));
            c.hard_irq_per_s = iv.rate(hard.get(i).copied().flatten());
            c.ipi_per_s = if has(IrqKind::is_ipi) {
                iv.rate(ipi)
            } else {
                None
            };
            c.call_tlb_per_s = if has(|k| matches!(k, IrqKind::Call | IrqKind::Tlb)) {
                iv.rate(call_tlb)
            } else {
                None
            };
            c
        })
        .collect();
    m
}

/// Σ per-CPU growth of one line, the CPUs that took it, and each CPU's growth (`None`: a drop,
/// a jump, or a CPU with no column before). The total is unknown when any part is.
#[allow(clippy::type_complexity)]
fn line_delta(
    iv: Interval,
    prev: Option<&IrqLine>,
    cur: &IrqLine,
    header: &[u32],
    known_cpu: &dyn Fn(u32) -> bool,
) -> (Option<u64>, Vec<u32>, Vec<(u32, Option<u64>)>) {
    if prev.is_none() && !iv.since_boot {
        return (None, Vec::new(), Vec::new());
    }
    // Sparse storage: a CPU absent from a list had a zero count.
    let count_in = |l: &IrqLine, cpu: u32| {
        l.counts
            .binary_search_by_key(&cpu, |&(c, _)| c)
            .map_or(0, |i| l.counts[i].1)
    };
    let mut total = Some(0u64);
    let mut cpus = Vec::new();
    let mut deltas = Vec::new();
    for &(cpu, count) in &cur.counts {
        let d = if known_cpu(cpu) {
            irq_delta(iv, prev.map(|p| count_in(p, cpu)), count)
        } else {
            None
        };
        if d.is_some_and(|n| n > 0) {
            cpus.push(cpu);
        }
        total = total.zip(d).map(|(a, b)| a.saturating_add(b));
        deltas.push((cpu, d));
    }
    // A CPU that had counts and now shows none: the line was reset there.
    if let Some(p) = prev {
        for &(cpu, count) in &p.counts {
            if count > 0 && count_in(cur, cpu) == 0 && header.contains(&cpu) {
                total = None;
                deltas.push((cpu, None));
            }
        }
    }
    if total.is_none() {
        cpus.clear();
    }
    (total, cpus, deltas)
}

/// The line's count since boot over the uptime, when no per-CPU count can have wrapped: every
/// CPU taking it at its rate of the interval for the whole uptime stays under 2^32.
fn boot_rate(
    iv: Interval,
    cur: &Sample,
    line: &IrqLine,
    deltas: &[(u32, Option<u64>)],
) -> Option<f64> {
    let up = cur.time.uptime_s.filter(|u| *u > 0.0)?;
    let secs = iv.secs?;
    let wrap = (1u64 << 32) as f64;
    for (_, d) in deltas {
        if d.is_none_or(|d| d as f64 / secs * up >= wrap) {
            return None;
        }
    }
    // A count the kernel cannot hold (32 bits) or no CPU could have taken since boot is garbage.
    if line
        .counts
        .iter()
        .any(|&(_, c)| c > u64::from(u32::MAX) || c as f64 / up > MAX_PER_CPU_PER_S)
    {
        return None;
    }
    let sum = line.counts.iter().map(|&(_, c)| c).sum::<u64>();
    Some(sum as f64 / up)
}

/// The lines that took interrupts (or whose rate is unknown), busiest first, at most
/// `JSON_LINES`.
fn busiest_lines<S: Serializer>(lines: &[IrqLineMetrics], s: S) -> Result<S::Ok, S::Error> {
    let mut busy: Vec<&IrqLineMetrics> = lines.iter().filter(|l| l.per_s != Some(0.0)).collect();
    busy.sort_by(|a, b| {
        let k = |l: &IrqLineMetrics| l.per_s.unwrap_or(-1.0);
        k(b).total_cmp(&k(a)).then(a.irq.cmp(&b.irq))
    });
    busy.truncate(JSON_LINES);
    s.collect_seq(busy)
}

#[cfg(test)]
mod tests {
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
            cpus: cpus.to_vec(),
            irqs,
            arch_totals: Vec::new(),
            arch_rows: rows,
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
        // RES + CAL + TLB: (4 + 40 000 + 20 000) / 2.
        assert_eq!(c0.ipi_per_s, Some(30_002.0));
        // Every column: LOC 500, RES 4, CAL 40 000, TLB 20 000, NMI 2, nvme 1 000 → /2.
        assert_eq!(c0.hard_irq_per_s, Some(30_753.0));
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
            i.arch_totals = vec![("LOC".into(), 100)];
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
}
