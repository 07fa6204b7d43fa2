//! Dirty/writeback pane: dirty + writeback against the background, freerun (throttling starts)
//! and hard thresholds, the sysctls behind them and the page rates.

use super::model::{cell, Block, Cells, Level, PaneView};
use super::Ctx;
use crate::derive::{Derived, DirtyMetrics};
use crate::units::{kb, num};

pub fn view(d: &Derived, x: &Ctx) -> PaneView {
    PaneView {
        headline: headline(d, x),
        body: body(d),
    }
}

pub fn state_text(state: Option<&str>) -> &'static str {
    match state {
        Some("below_background") => "below background",
        Some("background") => "background writeback",
        Some("throttled") => "writers throttled",
        _ => "state -",
    }
}

fn headline(d: &Derived, x: &Ctx) -> Cells {
    let s = &d.dirty;
    vec![
        cell(
            format!("dirty {} wb {}  ", kb(s.dirty_kb), kb(s.writeback_kb)),
            Level::Text,
        ),
        cell(
            state_text(s.state.as_deref()),
            x.levels.dirty_state(s.state.as_deref()),
        ),
        cell(
            format!(
                "  bg {} limit {}",
                kb(s.background_threshold_kb),
                kb(s.threshold_kb)
            ),
            Level::Dim,
        ),
    ]
}

/// Said when page counts are scaled by an assumed page size (a `--root` whose counters give
/// no answer): the thresholds and rates are then only as good as the guess.
pub fn page_note(d: &Derived) -> Option<String> {
    (d.memory.page_kb_from == crate::pagesize::PageKbFrom::Default).then(|| {
        format!(
            "~ page size not known: {} kB assumed for thresholds and rates",
            d.memory.page_kb
        )
    })
}

fn body(d: &Derived) -> Vec<Block> {
    let x = &d.dirty;
    let mut out = vec![Block::DirtyGauge];
    if let Some(n) = page_note(d) {
        out.push(Block::Alert(cell(n, Level::Warn)));
    }
    let lim = |bytes: Option<u64>, ratio: Option<u64>, from: Option<&str>| match from {
        Some("bytes") => format!("{} bytes", bytes.map_or("-".into(), |b| b.to_string())),
        _ => format!("{}%", ratio.map_or("-".into(), |r| r.to_string())),
    };
    out.push(Block::Line(vec![cell(
        format!(
            "  b=bg {}  f=freerun {}  T=limit {}  dirtied {}/s written {}/s",
            kb(x.background_threshold_kb),
            kb(x.freerun_kb),
            kb(x.threshold_kb),
            kb(x.dirtied_kb_per_s.map(|k| k as u64)),
            kb(x.written_kb_per_s.map(|k| k as u64)),
        ),
        Level::Text,
    )]));
    out.push(Block::Note(format!(
        "vm.dirty limit {}  background {}  expire {}s  writeback every {}s",
        lim(x.dirty_bytes, x.dirty_ratio, x.limit_from.as_deref()),
        lim(
            x.dirty_background_bytes,
            x.dirty_background_ratio,
            x.background_limit_from.as_deref()
        ),
        num(x.dirty_expire_centisecs.map(|c| c as f64 / 100.0), 1),
        num(x.dirty_writeback_centisecs.map(|c| c as f64 / 100.0), 1),
    )));
    for n in &d.nodes {
        if d.nodes.len() > 1 {
            out.push(Block::Note(format!(
                "node{} dirty {} writeback {}",
                n.node,
                kb(n.dirty_kb),
                kb(n.writeback_kb)
            )));
        }
    }
    out
}

/// Geometry of the dirty gauge, for both renderers: cells of dirty and of writeback (stacked)
/// on a scale to a bit past the hard limit, and the marker line with `b` (background), `f`
/// (freerun: throttling starts) and `T` (threshold).
pub struct DirtyGauge {
    pub dirty_cells: usize,
    pub writeback_cells: usize,
    pub empty_cells: usize,
    pub marks: String,
}

/// What a gauge needs: the threshold and the dirty amount, in kB.
fn gauge_inputs(d: &DirtyMetrics) -> Option<(f64, f64)> {
    Some((d.threshold_kb? as f64, d.dirty_kb? as f64))
}

/// Whether `gauge` draws one: the screen's layout asks this every frame without drawing it.
pub fn has_gauge(d: &DirtyMetrics) -> bool {
    gauge_inputs(d).is_some()
}

pub fn gauge(d: &DirtyMetrics, width: usize) -> Option<DirtyGauge> {
    let (t, dirty) = gauge_inputs(d)?;
    let wb = d.writeback_kb.unwrap_or(0) as f64;
    let scale = (t * 1.1).max(dirty + wb).max(1.0);
    let cell = |v: f64| ((v / scale) * width as f64).round() as usize;
    let nd = cell(dirty).min(width);
    let nw = cell(dirty + wb).min(width).saturating_sub(nd);
    let mut marks = vec![' '; width];
    for (v, ch) in [
        (d.background_threshold_kb, 'b'),
        (d.freerun_kb, 'f'),
        (d.threshold_kb, 'T'),
    ] {
        if let Some(v) = v {
            marks[cell(v as f64).min(width.saturating_sub(1))] = ch;
        }
    }
    Some(DirtyGauge {
        dirty_cells: nd,
        writeback_cells: nw,
        empty_cells: width - nd - nw,
        marks: marks.into_iter().collect(),
    })
}
