//! What only the screen draws: headline sparklines of recent samples, the per-node heat strip
//! of a big host's CPUs, and the dirty gauge in block glyphs.

use super::{note, span, View};
use crate::pane::Pane;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Sparkline of recent values scaled to their own max.
pub fn sparkline(values: &[Option<f64>], width: usize, theme: &crate::ui::theme::Theme) -> String {
    let vals: Vec<Option<f64>> = values.iter().rev().take(width).rev().copied().collect();
    let max = vals.iter().flatten().copied().fold(0.0f64, f64::max);
    vals.iter()
        .map(|v| match v {
            Some(x) if max > 0.0 => theme.glyphs.level(x / max),
            Some(_) => theme.glyphs.levels()[0],
            None => ' ',
        })
        .collect()
}

/// The trend of a pane's main number on wide screens (CPU busy, dirty, disk queue).
pub fn headline_trend(p: Pane, v: &View) -> Vec<Span<'static>> {
    if v.width < 120 {
        return Vec::new();
    }
    let t = v.theme;
    let trends = &v.app.trends;
    let (vals, style): (Vec<Option<f64>>, Style) = match p {
        Pane::Cpu => (trends.iter().map(|p| p.busy_pct).collect(), t.info),
        Pane::Dirty => (
            trends
                .iter()
                .map(|p| p.dirty_kb.map(|k| k as f64))
                .collect(),
            t.dirty,
        ),
        Pane::Disks => (trends.iter().map(|p| p.disk_aqu).collect(), t.info),
        _ => return Vec::new(),
    };
    vec![span(format!("  {}", sparkline(&vals, 30, t)), style)]
}

/// One glyph per online CPU, C0% as the level, a line per node.
pub fn heat_strip(v: &View, lines: &mut Vec<Line<'static>>) {
    let t = v.theme;
    let online: Vec<_> = v.d.cpus.iter().filter(|c| c.online).collect();
    let mut nodes: Vec<Option<u32>> = online.iter().map(|c| c.node).collect();
    nodes.sort_unstable();
    nodes.dedup();
    for n in nodes {
        let cpus: Vec<_> = online.iter().filter(|c| c.node == n).collect();
        let room = v.width.saturating_sub(8);
        let strip: String = cpus
            .iter()
            .take(room)
            .map(|c| t.glyphs.level(c.c0_pct.unwrap_or(0.0) / 100.0))
            .collect();
        let more = cpus.len().saturating_sub(room);
        let label = n.map_or("n?".to_string(), |n| format!("n{n}"));
        let mut l = vec![span(format!("{label:<5} "), t.dim), span(strip, t.info)];
        if more > 0 {
            l.push(span(format!(" +{more}"), t.dim));
        }
        lines.push(Line::from(l));
    }
}

/// The dirty gauge in the theme's glyphs (geometry from `view::dirty::gauge`, shared with the
/// text report).
pub fn dirty_gauge(v: &View, lines: &mut Vec<Line<'static>>) {
    let t = v.theme;
    let width = v.width.saturating_sub(4).clamp(10, 100);
    let Some(g) = crate::view::dirty::gauge(&v.d.dirty, width) else {
        lines.push(note("  gauge: - (dirty thresholds not in /proc/vmstat)", t));
        return;
    };
    let (cd, cw, ce) = t.glyphs.gauge();
    lines.push(Line::from(vec![
        span("  ", Style::default()),
        span(cd.to_string().repeat(g.dirty_cells), t.dirty),
        span(cw.to_string().repeat(g.writeback_cells), t.writeback),
        span(ce.to_string().repeat(g.empty_cells), t.dim),
    ]));
    lines.push(Line::from(vec![
        span("  ", Style::default()),
        span(g.marks, t.marker),
    ]));
}
