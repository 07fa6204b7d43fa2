//! HugePages/THP pane: static pools per size (and per node when zoomed), THP modes and the
//! fault/fallback/compaction rates, PageTables against RAM.

use super::{note, span, View};
use crate::units::{compact, kb, num, pct};
use ratatui::text::{Line, Span};

pub fn headline(v: &View) -> Vec<Span<'static>> {
    let t = v.theme;
    let h = &v.d.hugepages;
    let pool: Option<u64> = h.sizes.iter().map(|s| s.pool_kb).sum();
    let unused: Option<u64> = h.sizes.iter().map(|s| s.unused_kb).sum();
    let fb = h.thp_fallback_ratio.map(|r| r * 100.0);
    vec![
        span(format!("pool {} unused ", kb(pool)), t.text),
        span(
            kb(unused),
            if unused.unwrap_or(0) > 0 {
                t.warn
            } else {
                t.text
            },
        ),
        span(
            format!("  THP {}", h.thp_enabled.as_deref().unwrap_or("-")),
            t.text,
        ),
        span(
            format!(" fault {}/s fallback ", compact(h.thp_fault_alloc_per_s)),
            t.text,
        ),
        span(format!("{}%", pct(fb)), t.level(fb, 10.0, 50.0)),
        span(
            format!("  PT {}%", num(h.page_tables_pct, 1)),
            t.level(h.page_tables_pct, 2.0, 5.0),
        ),
    ]
}

pub fn body(v: &View) -> Vec<Line<'static>> {
    let t = v.theme;
    let h = &v.d.hugepages;
    let mut lines = Vec::new();
    if h.sizes.is_empty() {
        lines.push(note("  static huge pages not exposed", t));
    }
    let opt = |x: Option<u64>| x.map_or("-".to_string(), |v| v.to_string());
    for s in &h.sizes {
        lines.push(Line::from(vec![
            span(format!("  {:>5}", kb(Some(s.size_kb))), t.dim),
            span(
                format!(
                    " total {} free {} rsvd {} surp {}  pinned {}  unused {}",
                    opt(s.total),
                    opt(s.free),
                    opt(s.rsvd),
                    opt(s.surp),
                    kb(s.pool_kb),
                    kb(s.unused_kb)
                ),
                t.text,
            ),
        ]));
    }
    lines.push(Line::from(span(
        format!(
            "  AnonHuge {}  ShmemHuge {}  FileHuge {}  PageTables {}",
            kb(h.anon_huge_kb),
            kb(h.shmem_huge_kb),
            kb(h.file_huge_kb),
            kb(h.page_tables_kb)
        ),
        t.text,
    )));
    lines.push(Line::from(span(
        format!(
            "  THP defrag {}  collapse {}/s (failed {}/s)  compact stall {}/s fail {}/s",
            h.thp_defrag.as_deref().unwrap_or("-"),
            compact(h.thp_collapse_alloc_per_s),
            compact(h.thp_collapse_alloc_failed_per_s),
            compact(h.compact_stall_per_s),
            compact(h.compact_fail_per_s)
        ),
        t.text,
    )));
    if v.detail {
        for n in &v.d.nodes {
            for hp in &n.hugepages {
                lines.push(note(
                    format!(
                        "  node{} {:>5}: total {} free {} surplus {}",
                        n.node,
                        kb(Some(hp.size_kb)),
                        opt(hp.total),
                        opt(hp.free),
                        opt(hp.surplus)
                    ),
                    t,
                ));
            }
        }
    }
    lines
}
