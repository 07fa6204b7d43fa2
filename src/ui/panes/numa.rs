//! NUMA pane: per-node memory and numastat rates; memory-only nodes and miss ratios stand out.

use super::{col, header_line, lcol, note, row_line, span, View};
use crate::cpulist::CpuList;
use crate::derive::NodeMetrics;
use crate::text::{machine_memory, nodes_partial};
use crate::units::{compact, kb, pct};
use ratatui::text::{Line, Span};

pub fn headline(v: &View) -> Vec<Span<'static>> {
    let t = v.theme;
    let n = &v.d.nodes;
    if n.is_empty() {
        return vec![span("not exposed (no sys/devices/system/node)", t.dim)];
    }
    let worst = n
        .iter()
        .filter_map(|x| x.miss_ratio.map(|r| (x.node, r * 100.0)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let memless = n.iter().filter(|x| x.cpus.is_empty()).count();
    let mut s = vec![span(
        format!("{} node{}", n.len(), if n.len() == 1 { "" } else { "s" }),
        t.text,
    )];
    // The machine from /proc/meminfo, never node sums: nodes can describe part of it.
    s.push(span(format!("  {}", machine_memory(v.d)), t.text));
    if let Some(p) = nodes_partial(v.d) {
        s.push(span(format!("  {p}"), t.warn));
    }
    match worst {
        Some((node, r)) => {
            s.push(span("  worst miss ", t.dim));
            s.push(span(
                format!("{r:.1}% (node {node})"),
                t.level(Some(r), 5.0, 20.0),
            ));
        }
        None => s.push(span("  miss -", t.dim)),
    }
    if memless > 0 {
        s.push(span(format!("  {memless} without CPUs"), t.info));
    }
    s
}

pub fn body(v: &View) -> Vec<Line<'static>> {
    let t = v.theme;
    if v.d.nodes.is_empty() {
        return vec![note("  NUMA not exposed by this kernel/VM", t)];
    }
    let cols = vec![
        lcol("node", 4),
        lcol("cpus", 9),
        col("total", 6),
        col("free", 6),
        col("file", 6),
        col("anon", 6),
        col("dirty", 6),
        col("wback", 6),
        col("slab", 6),
        col("hit/s", 6),
        col("miss/s", 6),
        col("miss%", 5),
        col("frgn/s", 6),
        col("other/s", 7),
    ];
    let mut nodes: Vec<&NodeMetrics> =
        v.d.nodes
            .iter()
            .filter(|n| v.keep(&n.node.to_string()))
            .collect();
    if !v.by_name() {
        nodes.sort_by(|a, b| {
            b.miss_ratio
                .unwrap_or(-1.0)
                .total_cmp(&a.miss_ratio.unwrap_or(-1.0))
        });
    }
    let mut lines = vec![header_line(&cols, v.width, t)];
    lines.extend(v.filtered_out(nodes.len(), v.d.nodes.len()));
    for n in nodes {
        let cpus = if n.cpus.is_empty() {
            "(none)".to_string()
        } else {
            CpuList::from_ids(n.cpus.clone()).to_string()
        };
        let miss = n.miss_ratio.map(|r| r * 100.0);
        lines.push(row_line(
            &cols,
            vec![
                (n.node.to_string(), t.text),
                (cpus, if n.cpus.is_empty() { t.info } else { t.text }),
                (kb(n.mem_total_kb), t.text),
                (kb(n.mem_free_kb), t.text),
                (kb(n.file_kb), t.text),
                (kb(n.anon_kb), t.text),
                (kb(n.dirty_kb), t.text),
                (kb(n.writeback_kb), t.text),
                (kb(n.slab_kb), t.text),
                (compact(n.numa_hit_per_s), t.text),
                (
                    compact(n.numa_miss_per_s),
                    t.level(n.numa_miss_per_s, 1000.0, 100_000.0),
                ),
                (pct(miss), t.level(miss, 5.0, 20.0)),
                (compact(n.numa_foreign_per_s), t.text),
                (compact(n.other_per_s), t.text),
            ],
            v.width,
        ));
    }
    if v.detail {
        lines.push(note("  numastat rates are pages/s; distance:", t));
        for n in &v.d.nodes {
            let d: Vec<String> = n.distance.iter().map(|x| x.to_string()).collect();
            lines.push(note(format!("  node{} {}", n.node, d.join(" ")), t));
        }
    }
    lines
}
