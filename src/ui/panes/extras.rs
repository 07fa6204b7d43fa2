//! What only the screen draws: headline sparklines of recent samples, the per-node heat strip
//! of a big host's CPUs, and the dirty gauge in block glyphs.

use super::view::View;
use crate::pane::Pane;
use crate::ui::spans::{note, span};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Points a headline sparkline draws: the dashboard keeps no more trend points than this.
pub const SPARK_POINTS: usize = 30;

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
    let trends = &v.opts.trends;
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
        Pane::Pressure => (trends.iter().map(|p| p.psi_some_pct).collect(), t.warn),
        _ => return Vec::new(),
    };
    vec![span(
        format!("  {}", sparkline(&vals, SPARK_POINTS, t)),
        style,
    )]
}

/// One glyph per online CPU, C0% as the level, in at most `max_lines` lines: a line per node
/// when that fits, else every CPU packed in node order (a bar between nodes) under one label,
/// so a 64-CPU two-node host still shows every CPU in one line at 80 columns.
pub fn heat_strip(v: &View, lines: &mut Vec<Line<'static>>, max_lines: usize) {
    if max_lines == 0 {
        return;
    }
    let t = v.theme;
    let nodes = by_node(v);
    let room = v.width.saturating_sub(8).max(1);
    let cell = |c: &&crate::derive::CpuMetrics| t.glyphs.level(c.c0_pct.unwrap_or(0.0) / 100.0);
    if nodes.len() <= max_lines {
        for (n, cpus) in nodes {
            let strip: String = cpus.iter().take(room).map(cell).collect();
            let more = cpus.len().saturating_sub(room);
            let label = n.map_or("n?".to_string(), |n| format!("n{n}"));
            let mut l = vec![span(format!("{label:<5} "), t.dim), span(strip, t.info)];
            if more > 0 {
                l.push(span(format!(" +{more}"), t.dim));
            }
            lines.push(Line::from(l));
        }
        return;
    }
    // An idle CPU is a blank cell, so nodes are parted by a bar, not a space.
    let bar = match t.glyphs {
        super::super::theme::GlyphSet::Ascii => '|',
        _ => '│',
    };
    let mut cells: Vec<char> = Vec::new();
    for (i, (_, cpus)) in nodes.iter().enumerate() {
        if i > 0 {
            cells.push(bar);
        }
        cells.extend(cpus.iter().map(cell));
    }
    let total: usize = nodes.iter().map(|(_, c)| c.len()).sum();
    let label = match (nodes.first(), nodes.last()) {
        (Some((Some(a), _)), Some((Some(b), _))) => format!("n{a}-{b}"),
        _ => "cpus".to_string(),
    };
    let mut shown_cpus = 0;
    for (k, chunk) in cells.chunks(room).take(max_lines).enumerate() {
        shown_cpus += chunk.iter().filter(|c| **c != bar).count();
        let head = if k == 0 { label.clone() } else { String::new() };
        let mut l = vec![
            span(format!("{head:<5} "), t.dim),
            span(chunk.iter().collect::<String>(), t.info),
        ];
        if k + 1 == max_lines && shown_cpus < total {
            l.push(span(format!(" +{}", total - shown_cpus), t.dim));
        }
        lines.push(Line::from(l));
    }
}

/// Lines the packed strip takes at this width, at most two: what the CPU pane asks for on top
/// of its header and one row when the layout cuts it.
pub fn packed_strip_lines(v: &View) -> usize {
    let nodes = by_node(v);
    let cells: usize =
        nodes.iter().map(|(_, c)| c.len()).sum::<usize>() + nodes.len().saturating_sub(1);
    let room = v.width.saturating_sub(8).max(1);
    cells.div_ceil(room).clamp(1, 2)
}

/// Online CPUs grouped by node, nodes in order.
fn by_node<'a>(v: &View<'a>) -> Vec<(Option<u32>, Vec<&'a crate::derive::CpuMetrics>)> {
    let online: Vec<_> = v.d.cpus.iter().filter(|c| c.online).collect();
    let mut nodes: Vec<Option<u32>> = online.iter().map(|c| c.node).collect();
    nodes.sort_unstable();
    nodes.dedup();
    nodes
        .into_iter()
        .map(|n| (n, online.iter().copied().filter(|c| c.node == n).collect()))
        .collect()
}

/// `n` times `c`, in one allocation.
fn repeated(c: char, n: usize) -> String {
    std::iter::repeat_n(c, n).collect()
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
        span(repeated(cd, g.dirty_cells), t.dirty),
        span(repeated(cw, g.writeback_cells), t.writeback),
        span(repeated(ce, g.empty_cells), t.dim),
    ]));
    lines.push(Line::from(vec![
        span("  ", Style::default()),
        span(g.marks, t.marker),
    ]));
}

/// One line of meters in the theme's gauge glyphs: `  cpu   some ████░░░░  12%  full ░░░░   0%`,
/// the bars sharing what the width leaves after the labels and values.
pub fn bars(v: &View, b: &crate::view::model::BarLine) -> Line<'static> {
    let t = v.theme;
    let n = b.bars.len().max(1);
    // Per bar: " name " + bar + " 100%" + two spaces.
    let fixed: usize = b.bars.iter().map(|x| x.name.len() + 2 + 5 + 2).sum();
    let width = (v.width.saturating_sub(7 + fixed) / n).clamp(4, 30);
    let (full, _, empty) = t.glyphs.gauge();
    let mut spans = vec![span(format!("  {:<5}", b.label), t.text)];
    for bar in &b.bars {
        let (filled, rest) = crate::view::model::bar_cells(bar.pct, width);
        let style = match bar.level {
            crate::view::model::Level::Crit => t.crit,
            crate::view::model::Level::Warn => t.warn,
            _ => t.info,
        };
        spans.push(span(format!(" {} ", bar.name), t.dim));
        spans.push(span(repeated(full, filled), style));
        spans.push(span(repeated(empty, rest), t.dim));
        let value = crate::view::model::share_text(bar.pct);
        let value_style = match bar.level {
            crate::view::model::Level::Crit => t.crit,
            crate::view::model::Level::Warn => t.warn,
            crate::view::model::Level::Dim => t.dim,
            _ => t.text,
        };
        spans.push(span(format!(" {value:>4}  "), value_style));
    }
    Line::from(spans)
}
