//! The timeline under the header while the view is in the past (a replay, or the live pause
//! ring): the time in view, the bar over the history with its marks, the sample number and the
//! jump step; and under the bar, where rows allow, the times it spans.

use super::history::Mark;
use super::spans::span;
use super::theme::Theme;
use super::timeline::Timeline;
use super::timeline_bar::{bar, ticks, Cell};
use crate::findings::Severity;
use crate::record::{format_clock, format_clock_tenths};
use crate::units::duration;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// `at 14:05:33 ━━━━●────◆──╳──  4/6 j±1m00s` over
/// `            14:05:30    14:05:32    14:05:35`: the time in view, the bar (played, cursor,
/// ahead, marks; warn and crit episodes in their colour), the sample number and the jump step;
/// then the recording's first time under the bar's first column, its last ending under the
/// last, round times between (`ticks`).
/// With `ruler` false (a compact screen), or a bar too short for the two ends below it, one
/// row: `at 14:05:33 14:05:30 ━━━━●────── 14:05:35  4/6 j±1m00s`.
pub fn rows(
    time: &Timeline,
    episodes: &[(i64, i64, Severity)],
    t: &Theme,
    width: usize,
    ruler: bool,
) -> Vec<Line<'static>> {
    let h = &time.history;
    let n = h.len();
    let (Some(i), Some(first), Some(last)) = (
        time.view_index(),
        h.wall_ms(0),
        n.checked_sub(1).and_then(|l| h.wall_ms(l)),
    ) else {
        return vec![Line::default()];
    };
    let at = h.wall_ms(i).unwrap_or(first);
    // Samples under a second apart (`-d 0.5`): tenths, or two steps would read the same time.
    let sub_second = n > 1 && (last - first) < (n as i64 - 1) * 1000;
    let clock = move |ms: i64| {
        if sub_second {
            format_clock_tenths(ms)
        } else {
            format_clock(ms)
        }
    };
    let left = format!("at {} ", clock(at));
    let right = t
        .glyphs
        .text(&format!(
            "  {}/{n} j±{}",
            i + 1,
            duration(Some(time.jump.as_secs_f64()))
        ))
        .into_owned();
    let fixed = left.len() + right.chars().count();
    // The ends below the bar when it can hold them, else beside it.
    let under = width.saturating_sub(fixed);
    let labels = if ruler {
        ticks(first, last, under, &clock)
    } else {
        Vec::new()
    };
    let ends = (format!("{} ", clock(first)), format!(" {}", clock(last)));
    let bar_w = if labels.is_empty() {
        width.saturating_sub(fixed + ends.0.len() + ends.1.len())
    } else {
        under
    };
    let mut spans = vec![span(left.clone(), t.headline)];
    // Below 8 columns a bar says nothing: keep the numbers.
    if bar_w < 8 {
        spans.push(span(right, t.dim));
        return vec![Line::from(spans)];
    }
    if labels.is_empty() {
        spans.push(span(ends.0, t.dim));
    }
    let mut marks = h.marks();
    marks.extend(time.oom.events.iter().map(|(t, _)| (*t, Mark::Oom)));
    marks.extend(time.oom.kernel.iter().map(|t| (*t, Mark::Kernel)));
    spans.extend(bar_spans(
        &bar((first, last, at), &marks, episodes, bar_w),
        t,
    ));
    if labels.is_empty() {
        spans.push(span(ends.1, t.dim));
    }
    spans.push(span(right, t.dim));
    let mut out = vec![Line::from(spans)];
    if !labels.is_empty() {
        let mut text = " ".repeat(left.len());
        for (c, l) in labels {
            let col = left.len() + c;
            text.extend(std::iter::repeat_n(' ', col.saturating_sub(text.len())));
            text.push_str(&l);
        }
        out.push(Line::from(span(text, t.dim)));
    }
    out
}

/// The bar's cells as spans, one per run of equal cells (a small frame).
fn bar_spans(cells: &[Cell], t: &Theme) -> Vec<Span<'static>> {
    let [played, ahead, cursor, gap, action] = t.glyphs.timeline();
    let glyph = |c: Cell| match c {
        Cell::Played => played,
        Cell::Ahead => ahead,
        Cell::Cursor => cursor,
        Cell::Mark(Mark::Gap) => gap,
        Cell::Mark(Mark::Action) => action,
        Cell::Mark(Mark::Oom) => '!',
        Cell::Mark(Mark::Kernel) => 'k',
        Cell::Episode { played: true, .. } => played,
        Cell::Episode { played: false, .. } => ahead,
    };
    let mut spans = Vec::new();
    let mut run: Option<(Cell, String)> = None;
    for &c in cells {
        match &mut run {
            Some((k, s)) if *k == c => s.push(glyph(c)),
            _ => {
                if let Some((k, s)) = run.take() {
                    spans.push(span(s, cell_style(k, t)));
                }
                run = Some((c, glyph(c).to_string()));
            }
        }
    }
    if let Some((k, s)) = run {
        spans.push(span(s, cell_style(k, t)));
    }
    spans
}

fn cell_style(c: Cell, t: &Theme) -> Style {
    match c {
        Cell::Played => t.info,
        Cell::Ahead => t.dim,
        Cell::Cursor => t.focus,
        Cell::Mark(Mark::Gap) => t.crit,
        Cell::Mark(Mark::Action) => t.warn,
        Cell::Mark(Mark::Oom) => t.crit,
        Cell::Mark(Mark::Kernel) => t.warn,
        Cell::Episode {
            severity: Severity::Crit,
            ..
        } => t.crit,
        Cell::Episode { .. } => t.warn,
    }
}
