//! The interrupt part of the Softirq/NIC pane: the headline's interrupt, IPI and context switch
//! rates, every IRQ line by rate (not only NIC queues) with its placement, and the per-type
//! interrupts (timer, IPIs...) per CPU with each CPU's hard interrupts.

use crate::cpulist::CpuList;
use crate::derive::{Derived, IrqCpuMetrics, IrqKind, IrqLineMetrics};
use crate::units::compact;
use crate::view::model::{
    cell, col, lcol, opt_cell, text_cell, xcol, xlcol, Block, Cell, Column, Later, Level, Order,
    Row, Table,
};
use crate::view::Ctx;

/// The busiest CPU's function-call + TLB-shootdown IPIs/s: what `ipi.storm` judges.
fn worst_call_tlb(d: &Derived) -> Option<f64> {
    d.interrupts
        .cpus
        .iter()
        .filter_map(|c| c.call_tlb_per_s)
        .max_by(f64::total_cmp)
}

/// Every IPI of the machine per second; unknown when no CPU's is known.
fn ipi_total(d: &Derived) -> Option<f64> {
    let v: Vec<f64> = d
        .interrupts
        .cpus
        .iter()
        .filter_map(|c| c.ipi_per_s)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum())
}

/// `ipi N/s` (every IPI of the machine) coloured by the busiest CPU's CAL+TLB. A storm puts it
/// right after NET_RX and keeps it at any width; otherwise it and the machine's context
/// switches close the headline where there is room (`ipi 2.3k/s cs 13k/s`).
pub fn headline(d: &Derived, x: &Ctx, s: &mut Vec<Cell>) {
    let level = x.levels.ipi(worst_call_tlb(d));
    let ipi = format!("{}/s", compact(ipi_total(d)));
    let storm = matches!(level, Level::Warn | Level::Crit);
    if storm {
        s.insert(1, cell("  ipi ", Level::Text));
        s.insert(2, cell(ipi.clone(), level));
    }
    if !storm {
        s.push(opt_cell("  ipi ", Level::Text));
        s.push(opt_cell(ipi, level));
    }
    s.push(opt_cell(
        format!(" cs {}/s", compact(d.interrupts.ctxt_per_s)),
        Level::Text,
    ));
}

/// Every IRQ line, busiest first; lines that took nothing are idle (shown on `h`).
pub fn lines(d: &Derived, x: &Ctx) -> Table {
    let mut t = Table::new(
        vec![
            lcol("IRQ", 5),
            lcol("line", 20),
            col("irq/s", 6),
            lcol("on CPUs", 9),
            lcol("affinity", 10),
            lcol("effective", 9),
            xcol("boot/s", 6),
            xcol("node", 4),
            xlcol("chip", 21),
        ],
        "IRQ lines",
        Order::Load,
    );
    let m = &d.interrupts;
    t.empty = Some(format!(
        "IRQ lines: - ({})",
        m.unknown.as_deref().unwrap_or("none in /proc/interrupts")
    ));
    if x.lazy_rows {
        t.later = Some(Later::IrqLine);
    }
    for q in &m.lines {
        t.rows.push(Row {
            // The filter matches the IRQ number and its action names.
            name: format!("{} {}", q.irq, q.name),
            load: q.per_s.unwrap_or(-1.0),
            natural: u64::from(q.irq),
            quiet: q.per_s == Some(0.0),
            cells: if x.lazy_rows {
                vec![cell(q.irq.to_string(), Level::Text)]
            } else {
                line_cells(q, x)
            },
        });
    }
    t
}

/// Every cell of an IRQ line's row.
fn line_cells(q: &IrqLineMetrics, x: &Ctx) -> Vec<Cell> {
    vec![
        cell(q.irq.to_string(), Level::Text),
        cell(q.name.to_string(), Level::Text),
        cell(compact(q.per_s), x.levels.irq_line(q.per_s)),
        cell(CpuList::from_ids(q.cpus.clone()).to_string(), Level::Text),
        text_cell(q.affinity.as_deref(), Level::Dim),
        text_cell(q.effective_affinity.as_deref(), Level::Text),
        cell(compact(q.boot_per_s), Level::Dim),
        cell(q.node.map_or("-".into(), |n| n.to_string()), Level::Dim),
        cell(q.chip.to_string(), Level::Dim),
    ]
}

/// Every cell of IRQ `irq`'s row of `lines` (`Later::IrqLine`), built for the rows drawn: a
/// host has dozens of lines (hundreds with NVMe and NIC queues), an 80x24 pane shows a few.
/// Empty for a line the interval does not hold.
pub fn line_cells_of(d: &Derived, x: &Ctx, irq: u64) -> Vec<Cell> {
    d.interrupts
        .lines
        .iter()
        .find(|q| u64::from(q.irq) == irq)
        .map_or_else(Vec::new, |q| line_cells(q, x))
}

/// Order of the per-type columns: the timer, then rescheduling, function-call and TLB IPIs;
/// the rest after them.
fn rank(k: IrqKind) -> u8 {
    match k {
        IrqKind::Timer => 0,
        IrqKind::Resched => 1,
        IrqKind::Call => 2,
        IrqKind::Tlb => 3,
        IrqKind::Ipi => 4,
        IrqKind::Other => 5,
    }
}

/// Per CPU: every hard interrupt, the IPIs, and each per-type row the kernel prints (timer and
/// the main IPIs always; the others when some CPU took any, as extra columns).
pub fn per_cpu(d: &Derived, x: &Ctx) -> Table {
    let m = &d.interrupts;
    let rate = |c: &IrqCpuMetrics, name: &str| c.rates.get(name).copied().flatten();
    let mut types: Vec<_> = m
        .types
        .iter()
        .filter(|ty| {
            rank(ty.kind) <= 3
                || m.cpus
                    .iter()
                    .any(|c| rate(c, &ty.name).is_some_and(|r| r > 0.0))
        })
        .collect();
    types.sort_by_key(|ty| rank(ty.kind));
    types.dedup_by(|a, b| a.name == b.name);
    let mut columns: Vec<Column> = vec![lcol("CPU", 5), col("irq/s", 7), col("ipi/s", 6)];
    for ty in &types {
        let title = crate::units::fit(&ty.name, 6);
        columns.push(if rank(ty.kind) <= 3 {
            col(title, 6)
        } else {
            xcol(title, 6)
        });
    }
    let mut t = Table::new(columns, "CPUs", Order::Natural);
    t.empty = Some(format!(
        "interrupts per CPU: - ({})",
        m.unknown
            .as_deref()
            .unwrap_or("no CPU header in /proc/interrupts")
    ));
    if x.lazy_rows {
        // On a screen the cells wait for the rows drawn (a screenful of 4096 CPUs); the
        // columns' interrupt types are kept for them.
        t.later = Some(Later::IrqCpu);
        t.keys = types.iter().map(|ty| ty.name.clone()).collect();
    }
    let kinds: Vec<(&str, &IrqKind)> = types
        .iter()
        .map(|ty| (ty.name.as_str(), &ty.kind))
        .collect();
    for c in &m.cpus {
        t.rows.push(Row {
            // As the CPU tables name it (`cpu1`).
            name: format!("cpu{}", c.cpu),
            load: c.hard_irq_per_s.unwrap_or(0.0),
            natural: u64::from(c.cpu),
            quiet: false,
            cells: if x.lazy_rows {
                vec![cell(c.cpu.to_string(), Level::Text)]
            } else {
                row_cells(c, &kinds, x)
            },
        });
    }
    t
}

/// A per-CPU interrupt row's every cell, its number first, under the `types` columns.
fn row_cells(c: &IrqCpuMetrics, types: &[(&str, &IrqKind)], x: &Ctx) -> Vec<Cell> {
    let storm = x.levels.ipi(c.call_tlb_per_s);
    let mut cells = vec![
        cell(c.cpu.to_string(), Level::Text),
        cell(compact(c.hard_irq_per_s), Level::Text),
        cell(compact(c.ipi_per_s), Level::Text),
    ];
    for (name, kind) in types {
        let r = c.rates.get(*name).copied().flatten();
        let level = match kind {
            IrqKind::Call | IrqKind::Tlb => storm,
            _ if r.is_none() => Level::Dim,
            _ => Level::Text,
        };
        cells.push(cell(compact(r), level));
    }
    cells
}

/// Every cell of CPU `cpu`'s row of `per_cpu` (`Later::IrqCpu`) under the interrupt types
/// `keys` (the table's), built for the rows drawn. Empty for a CPU the interval does not hold.
pub fn cells_of(d: &Derived, x: &Ctx, keys: &[String], cpu: u64) -> Vec<Cell> {
    let m = &d.interrupts;
    let Some(c) = m.cpus.iter().find(|c| u64::from(c.cpu) == cpu) else {
        return Vec::new();
    };
    let kinds: Vec<(&str, &IrqKind)> = keys
        .iter()
        .filter_map(|k| {
            let ty = m.types.iter().find(|ty| &ty.name == k)?;
            Some((ty.name.as_str(), &ty.kind))
        })
        .collect();
    row_cells(c, &kinds, x)
}

/// What the per-CPU table cannot say: the machine's rates, where they come from, and what the
/// kernel's short names stand for where they are numbers (arm64 `IPI1`).
pub fn notes(d: &Derived) -> Vec<Block> {
    let m = &d.interrupts;
    let mut out = Vec::new();
    if let Some(why) = &m.unknown {
        out.push(Block::Note(format!("interrupts per CPU: - ({why})")));
    }
    if let Some(secs) = m.table_secs {
        // A quiet host reads /proc/interrupts in turns: its rates are its last two reads',
        // which may have ended samples ago.
        let when = match m.table_age_s {
            Some(age) if age >= 0.5 => format!("{secs:.0} s ending {age:.0} s ago"),
            _ => format!("the last {secs:.0} s"),
        };
        out.push(Block::Note(format!(
            "per CPU and per line: over {when} (quiet host: read in turns)"
        )));
    }
    out.push(Block::Note(format!(
        "machine: {} interrupts/s, {} context switches/s (/proc/stat; none per CPU)",
        compact(m.intr_per_s),
        compact(m.ctxt_per_s)
    )));
    let named: Vec<String> = m
        .types
        .iter()
        .filter(|ty| ty.name.starts_with("IPI") && !ty.desc.is_empty())
        .map(|ty| format!("{} {}", ty.name, ty.desc.trim_end_matches(" interrupts")))
        .collect();
    for chunk in named.chunks(3) {
        out.push(Block::Note(chunk.join(", ")));
    }
    if m.lines_total > 0 {
        out.push(Block::Note(format!(
            "{} IRQ lines, {} idle; boot/s: a line's average since boot",
            m.lines_total, m.lines_idle
        )));
    }
    out
}
