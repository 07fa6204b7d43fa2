//! Dirty/writeback pane: the stacked gauge of dirty + writeback against the background,
//! freerun (throttling starts) and hard thresholds, the sysctls behind them and the page rates.

use super::{note, span, sparkline, View};
use crate::units::{kb, num};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

pub fn state_text(state: Option<&str>) -> &'static str {
    match state {
        Some("below_background") => "below background",
        Some("background") => "background writeback",
        Some("throttled") => "writers throttled",
        _ => "state -",
    }
}

pub fn headline(v: &View) -> Vec<Span<'static>> {
    let t = v.theme;
    let x = &v.d.dirty;
    let style = match x.state.as_deref() {
        Some("throttled") => t.crit,
        Some("background") => t.warn,
        Some(_) => t.good,
        None => t.dim,
    };
    let mut s = vec![
        span(
            format!("dirty {} wb {}  ", kb(x.dirty_kb), kb(x.writeback_kb)),
            t.text,
        ),
        span(state_text(x.state.as_deref()), style),
        span(
            format!(
                "  bg {} limit {}",
                kb(x.background_threshold_kb),
                kb(x.threshold_kb)
            ),
            t.dim,
        ),
    ];
    if v.width >= 120 {
        let d: Vec<Option<f64>> = v
            .app
            .trends
            .iter()
            .map(|p| p.dirty_kb.map(|k| k as f64))
            .collect();
        s.push(span(format!("  {}", sparkline(&d, 30, t)), t.dirty));
    }
    s
}

/// The gauge as styled spans (geometry from `text::dirty_gauge`, shared with `batch`).
fn gauge(v: &View, width: usize) -> Option<(Line<'static>, Line<'static>)> {
    let t = v.theme;
    let g = crate::text::dirty_gauge(&v.d.dirty, width)?;
    let (cd, cw, ce) = t.glyphs.gauge();
    let bar = Line::from(vec![
        span("  ", Style::default()),
        span(cd.to_string().repeat(g.dirty_cells), t.dirty),
        span(cw.to_string().repeat(g.writeback_cells), t.writeback),
        span(ce.to_string().repeat(g.empty_cells), t.dim),
    ]);
    let marks = Line::from(vec![span("  ", Style::default()), span(g.marks, t.marker)]);
    Some((bar, marks))
}

pub fn body(v: &View) -> Vec<Line<'static>> {
    let t = v.theme;
    let x = &v.d.dirty;
    let mut lines = Vec::new();
    let w = v.width.saturating_sub(4).clamp(10, 100);
    match gauge(v, w) {
        Some((bar, marks)) => {
            lines.push(bar);
            lines.push(marks);
        }
        None => lines.push(note("  gauge: - (dirty thresholds not in /proc/vmstat)", t)),
    }
    if let Some(n) = crate::text::page_note(v.d) {
        lines.push(Line::from(span(format!("  {n}"), t.warn)));
    }
    let lim = |bytes: Option<u64>, ratio: Option<u64>, from: Option<&str>| match from {
        Some("bytes") => format!("{} bytes", bytes.unwrap_or(0)),
        _ => format!("{}%", ratio.map_or("-".into(), |r| r.to_string())),
    };
    lines.push(Line::from(span(
        format!(
            "  b=bg {}  f=freerun {}  T=limit {}  dirtied {}/s written {}/s",
            kb(x.background_threshold_kb),
            kb(x.freerun_kb),
            kb(x.threshold_kb),
            kb(x.dirtied_kb_per_s.map(|k| k as u64)),
            kb(x.written_kb_per_s.map(|k| k as u64)),
        ),
        t.text,
    )));
    lines.push(note(
        format!(
            "  vm.dirty limit {}  background {}  expire {}s  writeback every {}s",
            lim(x.dirty_bytes, x.dirty_ratio, x.limit_from.as_deref()),
            lim(
                x.dirty_background_bytes,
                x.dirty_background_ratio,
                x.background_limit_from.as_deref()
            ),
            num(x.dirty_expire_centisecs.map(|c| c as f64 / 100.0), 0),
            num(x.dirty_writeback_centisecs.map(|c| c as f64 / 100.0), 0),
        ),
        t,
    ));
    if v.detail {
        for n in &v.d.nodes {
            lines.push(note(
                format!(
                    "  node{} dirty {} writeback {}",
                    n.node,
                    kb(n.dirty_kb),
                    kb(n.writeback_kb)
                ),
                t,
            ));
        }
    }
    lines
}
