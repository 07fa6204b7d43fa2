//! HugePages/THP pane: static pools per size (and per node when zoomed), THP modes and the
//! fault/fallback/compaction rates, PageTables against RAM.

use super::model::{cell, Block, Cells, Level, PaneView};
use super::Ctx;
use crate::derive::Derived;
use crate::units::{compact, kb, num, pct};

pub fn view(d: &Derived, x: &Ctx) -> PaneView {
    PaneView {
        headline: headline(d, x),
        body: body(d, x),
    }
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

fn headline(d: &Derived, x: &Ctx) -> Cells {
    let h = &d.hugepages;
    let l = &x.levels;
    let pool: Option<u64> = h.sizes.iter().map(|s| s.pool_kb).sum();
    let unused: Option<u64> = h.sizes.iter().map(|s| s.unused_kb).sum();
    let share = match (unused, pool) {
        (Some(u), Some(p)) if p > 0 => Some(u as f64 / p as f64),
        (Some(_), Some(_)) => Some(0.0),
        _ => None,
    };
    let fb = h.thp_fallback_ratio.map(|r| r * 100.0);
    vec![
        cell(format!("pool {} unused ", kb(pool)), Level::Text),
        cell(kb(unused), l.hugepages_unused(share)),
        cell(
            format!("  THP {}", h.thp_enabled.as_deref().unwrap_or("-")),
            Level::Text,
        ),
        cell(
            format!(" fault {}/s fallback ", compact(h.thp_fault_alloc_per_s)),
            Level::Text,
        ),
        cell(format!("{}%", pct(fb)), l.thp_fallback_pct(fb)),
        cell(
            format!("  PT {}%", num(h.page_tables_pct, 1)),
            l.page_tables_pct(h.page_tables_pct),
        ),
    ]
}

fn body(d: &Derived, x: &Ctx) -> Vec<Block> {
    let h = &d.hugepages;
    let mut out = Vec::new();
    if h.sizes.is_empty() {
        out.push(Block::Note("static huge pages: - (not exposed)".into()));
    }
    for s in &h.sizes {
        out.push(Block::Line(vec![
            cell(format!("  {:>5}", kb(Some(s.size_kb))), Level::Dim),
            cell(
                format!(
                    " total {} free {} rsvd {} surp {}  pool {}  unused {}",
                    opt(s.total),
                    opt(s.free),
                    opt(s.rsvd),
                    opt(s.surp),
                    kb(s.pool_kb),
                    kb(s.unused_kb)
                ),
                Level::Text,
            ),
        ]));
    }
    out.push(Block::Line(vec![cell(
        format!(
            "  AnonHuge {}  ShmemHuge {}  FileHuge {}  PageTables {} ({}% of RAM)",
            kb(h.anon_huge_kb),
            kb(h.shmem_huge_kb),
            kb(h.file_huge_kb),
            kb(h.page_tables_kb),
            num(h.page_tables_pct, 2)
        ),
        Level::Text,
    )]));
    out.push(Block::Line(vec![cell(
        format!(
            "  THP defrag {}  collapse {}/s (failed {}/s)  compact stall {}/s fail {}/s",
            h.thp_defrag.as_deref().unwrap_or("-"),
            compact(h.thp_collapse_alloc_per_s),
            compact(h.thp_collapse_alloc_failed_per_s),
            compact(h.compact_stall_per_s),
            compact(h.compact_fail_per_s)
        ),
        Level::Text,
    )]));
    if x.detail {
        for n in &d.nodes {
            for hp in &n.hugepages {
                out.push(Block::Note(format!(
                    "node{} {:>5}: total {} free {} surplus {}",
                    n.node,
                    kb(Some(hp.size_kb)),
                    opt(hp.total),
                    opt(hp.free),
                    opt(hp.surplus)
                )));
            }
        }
    }
    out
}
