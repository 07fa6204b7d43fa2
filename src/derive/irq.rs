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
use crate::cpulist::CpuList;
use crate::sample::{ArchRow, IrqLine, Sample};
use serde::{Serialize, Serializer};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

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
    /// Read in turns on a quiet host (`source::irq_turns`): the seconds between the table's
    /// two reads that its rates run over. `None`: over this sample's interval.
    pub table_secs: Option<f64>,
    /// With `table_secs`: seconds from the table's last read to this sample (0: read in this
    /// sample), so its rates run over `[time - table_age_s - table_secs, time - table_age_s]`;
    /// above 0, this frame repeats an earlier frame's rates. A sum of rate x `interval_s` over
    /// frames counts such a table twice (issue 41 item 13: the live bracket test did).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table_age_s: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct IrqLineMetrics {
    pub irq: u32,
    /// Action names as the kernel prints them (shared with the sample's line).
    pub name: Arc<str>,
    /// The interrupt chip (`IO-APIC`, `PCI-MSIX-0000:00:02.0`, `GICv3`).
    pub chip: Arc<str>,
    pub per_s: Option<f64>,
    /// The line's average since boot: irq.storm's baseline until it has learned one. Unknown
    /// when a 32-bit per-CPU count could have wrapped at the interval's rate since boot.
    pub boot_per_s: Option<f64>,
    /// CPUs that took this IRQ during the interval.
    pub cpus: Vec<u32>,
    /// Shared with the sample's set (`CpuList::text`): no copy per sample.
    pub affinity: Option<Arc<str>>,
    pub effective_affinity: Option<Arc<str>>,
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
    /// TLB shootdowns (`TLB`, x86): flushes done for another CPU. Since Linux 3.6 each arrives
    /// as a function-call IPI and counts in `CAL` too, so it is no interrupt of its own: the
    /// kernel's `intr` total leaves it out, and so do the hard-interrupt and IPI sums here.
    Tlb,
    /// Other IPIs (IRQ work, CPU stop, timer broadcast, wake-up, doorbells).
    Ipi,
    /// Everything else (NMI, PMI, spurious, thermal, hypervisor callbacks...).
    Other,
}

impl IrqKind {
    /// An IPI of its own (a TLB shootdown arrives as a function-call IPI).
    pub fn is_ipi(self) -> bool {
        matches!(self, IrqKind::Resched | IrqKind::Call | IrqKind::Ipi)
    }

    /// Counts interrupts, not events inside other interrupts (`TLB`).
    pub fn is_interrupt(self) -> bool {
        self != IrqKind::Tlb
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
    /// `/proc/interrupts` but `TLB` (counted in `CAL` already), as the kernel sums `intr`;
    /// lines that appeared or vanished in the interval left out.
    pub hard_irq_per_s: Option<f64>,
    /// Its IPIs: rescheduling, function-call (TLB shootdowns included) and the other IPI rows.
    pub ipi_per_s: Option<f64>,
    /// Function-call plus TLB-shootdown IPIs (what `ipi.storm` judges).
    pub call_tlb_per_s: Option<f64>,
    /// Per type, by the kernel's short name (`LOC`, `RES`, `CAL`, `TLB`, `IPI0`...). The names
    /// are shared by every CPU's map: a string per row, not per row and CPU (~100k a sample at
    /// 4096 CPUs).
    pub rates: BTreeMap<Arc<str>, Option<f64>>,
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

/// `/proc/interrupts`' pair (`super::turn_pair`): the previous sample's table, or the read
/// before a table read in turns or after a gap, and the interval the rates run over.
pub fn table_pair<'a>(
    iv: Interval,
    prev: Option<&'a Sample>,
    cur: &'a crate::sample::Interrupts,
) -> (Interval, Option<&'a crate::sample::Interrupts>, Option<f64>) {
    let prev = prev.and_then(|p| p.net.interrupts.as_ref());
    super::turn_pair(iv, cur.turn.as_deref(), prev)
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
    let (iv, prev_irqs, table_secs) = table_pair(iv, prev, irqs);
    m.table_secs = table_secs;
    // `secs_since` is None under 1 ms: the table was read by this very sample.
    m.table_age_s = table_secs
        .and(irqs.turn.as_ref())
        .map(|t| cur.time.secs_since(&t.at).unwrap_or(0.0));
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
    // Sized once: grown line by line it was reallocated (and copied) five times a sample here.
    m.lines.reserve_exact(irqs.irqs.len());
    for line in irqs.irqs.iter() {
        let p = prev_irqs.and_then(|pi| {
            pi.irqs
                .binary_search_by_key(&line.irq, |l| l.irq)
                .ok()
                .map(|i| &pi.irqs[i])
                .filter(|l| l.name == line.name)
        });
        let (total, cpus, deltas) = line_delta(iv, p, line, &col, &known_cpu);
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
            affinity: line.affinity.as_ref().map(CpuList::text),
            effective_affinity: line.effective_affinity.as_ref().map(CpuList::text),
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
    // Each row once (the kernel prints each name once; a garbled file may not), with its row
    // in the previous sample.
    let mut seen = std::collections::HashSet::new();
    let rows: Vec<(&ArchRow, Arc<str>, IrqKind, Option<&ArchRow>)> = irqs
        .arch_rows
        .iter()
        .zip(&m.types)
        .filter(|(r, _)| seen.insert(r.name.as_str()))
        .map(|(r, ty)| {
            let prev = prev_rows.get(r.name.as_str()).copied();
            (r, Arc::from(r.name.as_str()), ty.kind, prev)
        })
        .collect();
    let any = |k: fn(IrqKind) -> bool| m.types.iter().any(|t| k(t.kind));
    let (has_ipi, has_call_tlb) = (
        any(IrqKind::is_ipi),
        any(|k| matches!(k, IrqKind::Call | IrqKind::Tlb)),
    );
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
            for (row, name, kind, prev_row) in &rows {
                let (row, kind, prev_row) = (*row, *kind, *prev_row);
                let before = pcol.and_then(|j| prev_row?.counts.get(j));
                let d = row.counts.get(i).and_then(|&n| {
                    if !known_cpu(cpu) {
                        return None;
                    }
                    irq_delta(iv, before.copied(), n)
                });
                c.rates.insert(name.clone(), iv.rate(d));
                if let Some(h) = hard.get_mut(i).filter(|_| kind.is_interrupt()) {
                    *h = h.zip(d).map(|(a, b)| a.saturating_add(b));
                }
                if kind.is_ipi() {
                    ipi = ipi.zip(d).map(|(a, b)| a + b);
                }
                if matches!(kind, IrqKind::Call | IrqKind::Tlb) {
                    call_tlb = call_tlb.zip(d).map(|(a, b)| a + b);
                }
            }
            c.hard_irq_per_s = iv.rate(hard.get(i).copied().flatten());
            c.ipi_per_s = if has_ipi { iv.rate(ipi) } else { None };
            c.call_tlb_per_s = if has_call_tlb {
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
    header: &HashMap<u32, usize>,
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
            if count > 0 && count_in(cur, cpu) == 0 && header.contains_key(&cpu) {
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
mod tests;
