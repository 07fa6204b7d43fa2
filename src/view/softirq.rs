//! Softirq/NIC pane: per-CPU %soft/%irq, NET_RX/NET_TX handler runs, softnet processed, drops,
//! squeezes, backlog and ksoftirqd; then per-queue IRQ placement and per-NIC packet/drop rates;
//! then every IRQ line and the per-CPU interrupt types (`irq`).

mod irq;

use super::model::{
    cell, col, lcol, text_cell, xcol, xlcol, Block, Cell, Cells, Level, Order, PaneView, Row, Table,
};
use super::Ctx;
use crate::cpulist::CpuList;
use crate::derive::{Derived, SoftirqCpuMetrics};
use crate::units::{compact, pct};

pub fn view(d: &Derived, x: &Ctx) -> PaneView {
    PaneView {
        headline: headline(d, x),
        body: super::tcp::line(d, x)
            .into_iter()
            .chain([
                Block::Table(cpus(d, x)),
                Block::Table(queues(d)),
                Block::Table(nics(d, x)),
                Block::Table(irq::lines(d, x)),
                Block::Table(irq::per_cpu(d, x)),
            ])
            .chain(irq::notes(d))
            .collect(),
    }
}

fn rate(c: &SoftirqCpuMetrics, name: &str) -> Option<f64> {
    c.rates.get(name).copied().flatten()
}

fn sum(d: &Derived, f: fn(&SoftirqCpuMetrics) -> Option<f64>) -> Option<f64> {
    let vals: Vec<f64> = d.softirq_cpus.iter().filter_map(f).collect();
    (!vals.is_empty()).then(|| vals.iter().sum())
}

fn headline(d: &Derived, x: &Ctx) -> Cells {
    let l = &x.levels;
    let hot = d
        .softirq_cpus
        .iter()
        .filter(|c| c.soft_pct.is_some())
        .max_by(|a, b| {
            a.soft_pct
                .unwrap_or(0.0)
                .total_cmp(&b.soft_pct.unwrap_or(0.0))
        });
    let drops = sum(d, |c| c.softnet_dropped_per_s);
    let sqz = sum(d, |c| c.softnet_squeezed_per_s);
    let nic_drops: Option<f64> = {
        let v: Vec<f64> = d
            .nics
            .iter()
            .filter_map(|n| Some(n.rx_drop_per_s? + n.tx_drop_per_s?))
            .collect();
        (!v.is_empty()).then(|| v.iter().sum())
    };
    let mut s = vec![cell(
        format!("NET_RX {}/s", compact(sum(d, |c| rate(c, "NET_RX")))),
        Level::Text,
    )];
    // TCP alarms (only while something is wrong) early, where an 80-column headline keeps them.
    s.extend(super::tcp::headline(d, x));
    if let Some(c) = hot {
        s.push(cell(format!("  hot cpu{} ", c.cpu), Level::Text));
        s.push(cell(
            format!("{}%", pct(c.soft_pct)),
            l.soft_pct(c.soft_pct),
        ));
    }
    s.push(cell("  drop ", Level::Text));
    s.push(cell(
        format!("{}/s", compact(drops)),
        l.softnet_drops(drops),
    ));
    s.push(cell(" sqz ", Level::Text));
    s.push(cell(format!("{}/s", compact(sqz)), l.squeezes(sqz)));
    s.push(cell(" nicdrop ", Level::Text));
    s.push(cell(
        format!("{}/s", compact(nic_drops)),
        l.nic_drops(nic_drops),
    ));
    irq::headline(d, x, &mut s);
    s
}

/// A softirq CPU row's every cell, its number first.
fn row_cells(c: &SoftirqCpuMetrics, x: &Ctx) -> Vec<Cell> {
    let l = &x.levels;
    vec![
        cell(c.cpu.to_string(), Level::Text),
        cell(pct(c.soft_pct), l.soft_pct(c.soft_pct)),
        cell(pct(c.irq_pct), l.irq_pct(c.irq_pct)),
        cell(compact(rate(c, "NET_RX")), Level::Text),
        cell(compact(rate(c, "NET_TX")), Level::Text),
        cell(compact(c.softnet_processed_per_s), Level::Text),
        cell(
            compact(c.softnet_dropped_per_s),
            l.softnet_drops(c.softnet_dropped_per_s),
        ),
        cell(
            compact(c.softnet_squeezed_per_s),
            l.squeezes(c.softnet_squeezed_per_s),
        ),
        cell(c.backlog.map_or("-".into(), |b| b.to_string()), Level::Text),
        cell(pct(c.ksoftirqd_pct), l.ksoftirqd(c.ksoftirqd_pct)),
        cell(compact(rate(c, "TIMER")), Level::Text),
        cell(compact(rate(c, "BLOCK")), Level::Text),
        cell(compact(rate(c, "SCHED")), Level::Text),
        cell(compact(rate(c, "RCU")), Level::Text),
        cell(compact(c.softnet_rps_per_s), Level::Text),
    ]
}

pub use irq::cells_of as irq_cells_of;
pub use irq::line_cells_of as irq_line_cells_of;

/// Every cell of CPU `cpu`'s softirq row (`Later::SoftirqCpu`), built for the rows drawn.
/// Empty for a CPU the interval does not hold.
pub fn cells_of(d: &Derived, x: &Ctx, cpu: u64) -> Vec<Cell> {
    d.softirq_cpus
        .iter()
        .find(|c| c.online && u64::from(c.cpu) == cpu)
        .map_or_else(Vec::new, |c| row_cells(c, x))
}

fn cpus(d: &Derived, x: &Ctx) -> Table {
    let mut t = Table::new(
        vec![
            lcol("CPU", 5),
            col("%soft", 5),
            col("%irq", 5),
            col("NET_RX", 7),
            col("NET_TX", 7),
            col("pkts/s", 7),
            col("drop/s", 6),
            col("sqz/s", 6),
            col("bklg", 5),
            col("ksirq%", 6),
            col("TIMER", 6),
            xcol("BLOCK", 6),
            xcol("SCHED", 6),
            xcol("RCU", 6),
            xcol("rps/s", 6),
        ],
        "CPUs",
        Order::Load,
    );
    t.empty = Some("- (no CPUs in /proc/softirqs)".into());
    if x.lazy_rows {
        t.later = Some(super::model::Later::SoftirqCpu);
    }
    for c in d.softirq_cpus.iter().filter(|c| c.online) {
        t.rows.push(Row {
            // As the headline names it (`hot cpu1`); the number shown matches too.
            name: format!("cpu{}", c.cpu),
            // %soft first, packets to break ties among idle CPUs.
            load: c.soft_pct.unwrap_or(0.0) * 1e6 + c.softnet_processed_per_s.unwrap_or(0.0),
            natural: u64::from(c.cpu),
            quiet: false,
            // On a screen the cells wait for the rows drawn (a screenful of 4096).
            cells: if x.lazy_rows {
                vec![cell(c.cpu.to_string(), Level::Text)]
            } else {
                row_cells(c, x)
            },
        });
    }
    t
}

fn queues(d: &Derived) -> Table {
    let mut t = Table::new(
        vec![
            lcol("queue", 22),
            col("IRQ", 5),
            col("irq/s", 6),
            lcol("on CPUs", 9),
            lcol("affinity", 10),
            lcol("effective", 9),
            col("node", 4),
        ],
        "queues",
        Order::Load,
    );
    t.empty = Some("queues: - (no per-queue IRQs recognised in /proc/interrupts)".into());
    for q in &d.irq_queues {
        t.rows.push(Row {
            // The filter matches the queue's name and its device's.
            name: format!("{} {}", q.name, q.device),
            load: q.per_s.unwrap_or(-1.0),
            natural: u64::from(q.irq),
            quiet: false,
            cells: vec![
                cell(q.name.to_string(), Level::Text),
                cell(q.irq.to_string(), Level::Dim),
                cell(compact(q.per_s), Level::Text),
                cell(CpuList::from_ids(q.cpus.clone()).to_string(), Level::Text),
                text_cell(q.affinity.as_deref(), Level::Dim),
                text_cell(q.effective_affinity.as_deref(), Level::Text),
                cell(q.node.map_or("-".into(), |n| n.to_string()), Level::Dim),
            ],
        });
    }
    t
}

fn nics(d: &Derived, x: &Ctx) -> Table {
    let l = &x.levels;
    let mut t = Table::new(
        vec![
            lcol("NIC", 10),
            col("rxpkt/s", 7),
            col("txpkt/s", 7),
            col("rxkB/s", 7),
            col("txkB/s", 7),
            col("rxdrop", 6),
            col("txdrop", 6),
            col("node", 4),
            lcol("queues", 9),
            xlcol("link", 12),
            xcol("mtu", 5),
            xcol("errs/s", 6),
            xcol("miss/s", 6),
            xcol("crc/s", 6),
            xcol("carrier", 7),
        ],
        "NICs",
        Order::Natural,
    );
    for (i, n) in d.nics.iter().filter(|n| n.name != "lo").enumerate() {
        let rps = n
            .rps_cpus
            .iter()
            .filter(|m| m.as_deref().is_some_and(|m| !m.is_empty()))
            .count();
        t.rows.push(Row {
            name: n.name.clone(),
            load: n.rx_packets_per_s.unwrap_or(0.0) + n.tx_packets_per_s.unwrap_or(0.0),
            natural: i as u64,
            quiet: false,
            cells: vec![
                cell(n.name.clone(), Level::Text),
                cell(compact(n.rx_packets_per_s), Level::Text),
                cell(compact(n.tx_packets_per_s), Level::Text),
                cell(compact(n.rx_kb_per_s), Level::Text),
                cell(compact(n.tx_kb_per_s), Level::Text),
                cell(compact(n.rx_drop_per_s), l.nic_drops(n.rx_drop_per_s)),
                cell(compact(n.tx_drop_per_s), l.nic_drops(n.tx_drop_per_s)),
                cell(
                    n.numa_node.map_or("-".into(), |v| v.to_string()),
                    Level::Dim,
                ),
                cell(
                    format!(
                        "{}/{}{}",
                        n.rx_queues,
                        n.tx_queues,
                        if rps > 0 { " rps" } else { "" }
                    ),
                    Level::Text,
                ),
            ]
            .into_iter()
            .chain(link_cells(n, x))
            .collect(),
        });
    }
    t
}

/// The extra NIC columns: link, MTU, error rates, carrier changes (in the interval, else
/// since boot in parentheses).
fn link_cells(n: &crate::derive::NicMetrics, x: &Ctx) -> Vec<super::model::Cell> {
    let t = x.levels.t;
    let errs = n.rx_errs_per_s.zip(n.tx_errs_per_s).map(|(a, b)| a + b);
    let Some(l) = &n.link else {
        return vec![
            cell("-", Level::Dim),
            cell("-", Level::Dim),
            cell(compact(errs), Level::Text),
            cell("-", Level::Dim),
            cell("-", Level::Dim),
            cell("-", Level::Dim),
        ];
    };
    let err = |v: Option<f64>| super::levels::level(v, t.nic_errors_per_s, f64::INFINITY);
    let carrier = match (l.carrier_changes_delta, l.carrier_changes) {
        (Some(c), _) => c.to_string(),
        (None, Some(c)) => format!("({c})"),
        _ => "-".into(),
    };
    let half = l.duplex.as_deref() == Some("half");
    vec![
        cell(
            super::tcp::link_text(l),
            if half { Level::Warn } else { Level::Text },
        ),
        cell(l.mtu.map_or("-".into(), |m| m.to_string()), Level::Text),
        cell(compact(errs), Level::Text),
        cell(compact(l.rx_missed_per_s), err(l.rx_missed_per_s)),
        cell(compact(l.rx_crc_per_s), err(l.rx_crc_per_s)),
        cell(
            carrier,
            super::levels::level(
                l.carrier_changes_delta.map(|c| c as f64),
                t.nic_carrier_changes,
                f64::INFINITY,
            ),
        ),
    ]
}
