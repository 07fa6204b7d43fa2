//! NUMA pane: the machine's memory from /proc/meminfo, then per-node memory and numastat rates;
//! memory-only nodes and miss ratios stand out.

use super::model::{cell, col, lcol, xcol, Block, Cells, Level, Order, PaneView, Row, Table};
use super::Ctx;
use crate::cpulist::CpuList;
use crate::derive::Derived;
use crate::units::{compact, kb, pct};

pub fn view(d: &Derived, x: &Ctx) -> PaneView {
    PaneView {
        headline: headline(d, x),
        body: body(d, x),
    }
}

/// `avail 22G of 24G`: the machine's memory from `/proc/meminfo`, which the pane heads with.
pub fn machine_memory(d: &Derived) -> String {
    format!(
        "avail {} of {}",
        kb(d.memory.mem_available_kb),
        kb(d.memory.mem_total_kb)
    )
}

/// `nodes hold 12G of 126G` when the nodes' meminfo does not add up to MemTotal, and how it
/// is drawn. What the number means decides the colour:
/// - under 95% (hot-plugged memory in a VM, firmware that describes one node only): the node
///   table describes part of the machine, so node sums are not the machine. That is how the
///   host is built, nothing to act on: said as context (dim), never as a warning.
/// - over 105%: the nodes hold more than the machine has, which no kernel states at one
///   instant: the readings contradict each other (a node counted twice, files read far apart),
///   and the node figures are not to be trusted. Warned.
///
/// One node holding all the memory, or nodes holding most of it, says nothing.
pub fn nodes_partial(d: &Derived) -> Option<(String, Level)> {
    let m = &d.memory;
    let cover = m.nodes_cover_pct?;
    let min = crate::derive::memory::NODES_COVER_MIN_PCT;
    let level = if cover < min {
        Level::Dim
    } else if cover > 200.0 - min {
        Level::Warn
    } else {
        return None;
    };
    Some((
        format!(
            "nodes hold {} of {}",
            kb(m.nodes_total_kb),
            kb(m.mem_total_kb)
        ),
        level,
    ))
}

fn headline(d: &Derived, x: &Ctx) -> Cells {
    let n = &d.nodes;
    // The machine from /proc/meminfo, never node sums: nodes can describe part of it.
    let mut s = vec![];
    if n.is_empty() {
        s.push(cell(machine_memory(d), Level::Text));
        s.push(cell("  nodes not exposed", Level::Dim));
        return s;
    }
    s.push(cell(
        format!("{} node{}", n.len(), if n.len() == 1 { "" } else { "s" }),
        Level::Text,
    ));
    s.push(cell(format!("  {}", machine_memory(d)), Level::Text));
    if let Some((p, level)) = nodes_partial(d) {
        s.push(cell(format!("  {p}"), level));
    }
    let worst = n
        .iter()
        .filter_map(|x| x.miss_ratio.map(|r| (x.node, r * 100.0)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    match worst {
        Some((node, r)) => {
            s.push(cell("  worst miss ", Level::Dim));
            s.push(cell(
                format!("{r:.1}% (node {node})"),
                x.levels.numa_miss_pct(Some(r)),
            ));
        }
        None => s.push(cell("  miss -", Level::Dim)),
    }
    let memless = n.iter().filter(|x| x.cpus.is_empty()).count();
    if memless > 0 {
        s.push(cell(format!("  {memless} without CPUs"), Level::Info));
    }
    s
}

fn body(d: &Derived, x: &Ctx) -> Vec<Block> {
    let l = &x.levels;
    let mut t = Table::new(
        vec![
            lcol("node", 4),
            lcol("cpus", 8),
            col("total", 5),
            col("free", 5),
            col("file", 5),
            col("anon", 5),
            col("dirty", 5),
            col("wback", 5),
            col("slab", 5),
            col("hit/s", 6),
            col("miss/s", 6),
            col("miss%", 5),
            xcol("frgn/s", 6),
            xcol("other/s", 7),
        ],
        "nodes",
        Order::Natural,
    );
    t.empty = Some("- (no sys/devices/system/node: NUMA not exposed)".into());
    for n in &d.nodes {
        let cpus = if n.cpus.is_empty() {
            "(none)".to_string()
        } else {
            CpuList::from_ids(n.cpus.clone()).to_string()
        };
        let miss = n.miss_ratio.map(|r| r * 100.0);
        t.rows.push(Row {
            // As findings and headlines name it; the number shown matches too.
            name: format!("node{}", n.node),
            load: n.miss_ratio.unwrap_or(-1.0),
            natural: u64::from(n.node),
            quiet: false,
            cells: vec![
                cell(n.node.to_string(), Level::Text),
                cell(
                    cpus,
                    if n.cpus.is_empty() {
                        Level::Info
                    } else {
                        Level::Text
                    },
                ),
                cell(kb(n.mem_total_kb), Level::Text),
                cell(kb(n.mem_free_kb), Level::Text),
                cell(kb(n.file_kb), Level::Text),
                cell(kb(n.anon_kb), Level::Text),
                cell(kb(n.dirty_kb), Level::Text),
                cell(kb(n.writeback_kb), Level::Text),
                cell(kb(n.slab_kb), Level::Text),
                cell(compact(n.numa_hit_per_s), Level::Text),
                cell(
                    compact(n.numa_miss_per_s),
                    l.numa_miss_per_s(n.numa_miss_per_s),
                ),
                cell(pct(miss), l.numa_miss_pct(miss)),
                cell(compact(n.numa_foreign_per_s), Level::Text),
                cell(compact(n.other_per_s), Level::Text),
            ],
        });
    }
    let mut out = vec![Block::Table(t)];
    if !d.nodes.is_empty() {
        let mut n = "hit/miss in pages/s (numastat units)".to_string();
        if nodes_partial(d).is_some() {
            // The headline says how much; the rows must not be read as the machine.
            n.push_str("; node rows are part of the machine");
        }
        if let Some(every) = d.nodes.iter().find_map(|n| n.meminfo_every) {
            // Faster than a second: node memory (gauges) in turns, the rates every sample.
            n.push_str(&format!("; memory read every {every} samples"));
        }
        out.push(Block::Note(n));
    }
    if x.detail {
        for n in &d.nodes {
            let dist: Vec<String> = n.distance.iter().map(|x| x.to_string()).collect();
            out.push(Block::Note(format!(
                "node{} distance {}",
                n.node,
                dist.join(" ")
            )));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_nodes_holding_more_than_the_machine_warn() {
        let mut d = crate::derive::derive(None, &crate::sample::Sample::default());
        d.memory.mem_total_kb = Some(24 << 20);
        let at = |d: &mut Derived, kb: u64| {
            d.memory.nodes_total_kb = Some(kb);
            d.memory.nodes_cover_pct = Some(kb as f64 * 100.0 / (24u64 << 20) as f64);
            nodes_partial(d)
        };
        // A VM with memory hot-plugged outside the node table: context.
        assert_eq!(
            at(&mut d, 17 << 20),
            Some(("nodes hold 17G of 24G".into(), Level::Dim))
        );
        // Nodes holding (nearly) all of it: nothing to say.
        assert_eq!(at(&mut d, 24 << 20), None);
        assert_eq!(at(&mut d, 23 << 20), None);
        // More than the machine: the readings contradict each other.
        assert_eq!(
            at(&mut d, 27 << 20),
            Some(("nodes hold 27G of 24G".into(), Level::Warn))
        );
    }
}
