//! One table of a pane in the rows it is given: its header and rows, cut to the busiest when
//! rows are short, and its idle rows shown in rows no other part of the screen wants. A header
//! never stands without a row under it.

use super::extras;
use super::view::View;
use crate::ui::spans::note;
use crate::ui::theme::Theme;
use crate::units::fit;
use crate::view::model::{busiest, counted, Column, Later, Order, Row, Table};
use crate::view::Pane;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// CPUs from which a cut CPU table shows the heat strip: below it, rows say more than a strip.
pub(super) const STRIP_FROM: usize = 5;
/// Rows a cut table keeps for its busiest rows beyond twice its package lines before it shows
/// them.
const GROUPS_AFTER: usize = 4;

/// Lines a table lays out: `hidden` with its idle rows hidden as the `h` switch asks (what it
/// holds, which the layout gives first), `full` with them shown (what rows left over after
/// every pane is whole reveal). Equal when the switch is off or no row is idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lens {
    pub hidden: usize,
    pub full: usize,
}

/// Rows kept by the filter, and how many of them are idle when the switch hides idle rows.
fn matched<'t>(p: Pane, t: &'t Table, v: &View) -> (Vec<&'t Row>, usize) {
    let matched: Vec<&Row> = t.rows.iter().filter(|r| v.keep(p, r)).collect();
    let quiet = if v.opts.hide_idle {
        matched.iter().filter(|r| r.quiet).count()
    } else {
        0
    };
    (matched, quiet)
}

/// `Lens` of `t`, counted without laying anything out: its header, its rows and the idle note;
/// a table whose every row is idle is the note alone (a header over no row says nothing); or
/// its empty note; or the filter's no-match note under the header.
pub fn lens(p: Pane, t: &Table, v: &View) -> Lens {
    let same = |n| Lens { hidden: n, full: n };
    if t.rows.is_empty() {
        return same(usize::from(t.empty.is_some()));
    }
    // Counted, not collected: the layout asks several times a frame.
    let (mut matched, mut quiet) = (0, 0);
    for r in t.rows.iter().filter(|r| v.keep(p, r)) {
        matched += 1;
        quiet += usize::from(v.opts.hide_idle && r.quiet);
    }
    if matched == 0 && !v.opts.filter_for(p).is_empty() {
        return same(2);
    }
    let full = 1 + matched;
    let shown = matched - quiet;
    match (shown, quiet) {
        (_, 0) => same(full),
        (0, _) => Lens { hidden: 1, full },
        _ => Lens {
            hidden: 2 + shown,
            full,
        },
    }
}

/// Rows a table asks for before the others grow: its header and busiest row, for CPU also the
/// heat strip above them; the note alone for a table of idle rows.
pub fn first(p: Pane, t: &Table, v: &View) -> usize {
    let want = match p {
        Pane::Cpu if v.d.cpus.iter().filter(|c| c.online).count() >= STRIP_FROM => {
            2 + extras::packed_strip_lines(v)
        }
        _ => 2,
    };
    lens(p, t, v).hidden.min(want)
}

/// Lays out one table; returns the lines of its header and rows when it has them. `room`, when
/// given, is the rows it may take: fewer than it holds shows the CPU heat strip, a big host's
/// package lines when there is room for them, and the busiest rows; more than it holds with
/// idle rows hidden shows as many idle rows as fit (all of them: no note).
pub fn table(
    p: Pane,
    t: &Table,
    v: &View,
    room: Option<usize>,
    drawn: Option<&std::ops::Range<usize>>,
    lines: &mut Vec<Line<'static>>,
) -> Option<std::ops::Range<usize>> {
    let th = v.theme;
    if room == Some(0) {
        return None;
    }
    if t.rows.is_empty() {
        if let Some(e) = &t.empty {
            lines.push(note(format!("  {e}"), th));
        }
        return None;
    }
    // The basic columns, and the extra ones when zoomed or wide.
    let wide = v.detail || v.width >= 120;
    let keep: Vec<usize> = (0..t.columns.len())
        .filter(|i| wide || !t.columns[*i].extra)
        .collect();
    let cols: Vec<&Column> = keep.iter().map(|i| &t.columns[*i]).collect();
    // What the view functions need to build a row's cells later (the model's own context).
    let ctx = crate::view::Ctx::new(v.opts.thresholds, v.detail);
    let row_line = |r: &Row| {
        use crate::view::{cpu, disk, softirq};
        let name_only = r.cells.len() == 1;
        let later = match (t.later, v.opts.everyone) {
            (Some(Later::Everyone), Some(all)) if r.cells.is_empty() => {
                crate::view::everyone::cells_of(all, r.natural)
            }
            // Package rows (`t.groups`) are whole; a CPU row holds only its name.
            (Some(Later::Cpu), _) if name_only => cpu::cells_of(v.d, &ctx, r.natural),
            (Some(Later::SoftirqCpu), _) if name_only => softirq::cells_of(v.d, &ctx, r.natural),
            (Some(Later::IrqLine), _) if name_only => {
                softirq::irq_line_cells_of(v.d, &ctx, r.natural)
            }
            (Some(Later::Disk), _) if name_only => disk::cells_of(v.d, &ctx, r.natural),
            (Some(Later::IrqCpu), _) if name_only => {
                softirq::irq_cells_of(v.d, &ctx, &t.keys, r.natural)
            }
            _ => Vec::new(),
        };
        super::work::note_cells(later.len());
        let own = if later.is_empty() { &r.cells } else { &later };
        let cells = keep
            .iter()
            .filter_map(|i| own.get(*i))
            .map(|c| (c.text.as_ref(), v.style(c.level)));
        row_line(&cols, cells, v.width)
    };
    let (mut all, quiet) = matched(p, t, v);
    let filter = v.opts.filter_for(p);
    if all.is_empty() && !filter.is_empty() {
        lines.push(header_line(&cols, v.width, th));
        lines.push(note(
            format!("  no row matches filter {filter:?} (Esc clears)"),
            th,
        ));
        return None;
    }
    let size = lens(p, t, v);
    let room = room.unwrap_or(size.hidden);
    if v.by_name() {
        all.sort_by(|a, b| a.natural.cmp(&b.natural).then(a.name.cmp(&b.name)));
    } else if t.order == Order::Load {
        all.sort_by(|a, b| busiest(a, b));
    }
    let shown = all.len() - quiet;
    let idle_note = |n: usize| {
        let what = format!("idle {}", t.what);
        note(format!("  {} hidden (h shows)", counted(n, &what)), th)
    };
    if room < size.hidden {
        // Fewer rows than the table holds: every CPU as a glyph first, then the busiest rows;
        // nothing at all rather than a header over no row.
        let mut list: Vec<&Row> = all
            .iter()
            .copied()
            .filter(|r| quiet == 0 || !r.quiet)
            .collect();
        if room < 2 || list.is_empty() {
            return None;
        }
        if !v.by_name() {
            list.sort_by(|a, b| busiest(a, b));
        }
        let mut left = room - 1;
        if p == Pane::Cpu && list.len() >= STRIP_FROM && left >= 2 {
            // The strip first, leaving a row under the header for the busiest CPU.
            let before = lines.len();
            extras::heat_strip(v, lines, left - 1);
            left = left.saturating_sub(lines.len() - before);
        }
        lines.push(header_line(&cols, v.width, th));
        // A big host's package lines, when most of its rows cannot show anyway and the busiest
        // rows keep most of the room.
        if !t.groups.is_empty()
            && list.len() >= 2 * left
            && left >= 2 * t.groups.len() + GROUPS_AFTER
        {
            for g in &t.groups {
                lines.push(row_line(g));
            }
            left -= t.groups.len();
        }
        for r in list.iter().take(left) {
            lines.push(row_line(r));
        }
        return None;
    }
    if shown == 0 && room == 1 {
        lines.push(idle_note(quiet));
        return None;
    }
    // Idle rows shown in the room beyond what the table holds: the first in its order, kept in
    // place among the others. Two rows for a table of idle rows are its header and one row.
    let reveal = if room >= size.full {
        quiet
    } else if shown == 0 {
        room.saturating_sub(2).max(1)
    } else {
        room - size.hidden
    };
    let mut revealed = 0;
    let list: Vec<&Row> = all
        .into_iter()
        .filter(|r| {
            if quiet == 0 || !r.quiet {
                return true;
            }
            revealed += 1;
            revealed <= reveal
        })
        .collect();
    let header = lines.len();
    lines.push(header_line(&cols, v.width, th));
    for r in &list {
        let draw = drawn.is_none_or(|w| w.contains(&lines.len()));
        lines.push(if draw { row_line(r) } else { Line::default() });
    }
    if reveal < quiet && list.len() + 1 < room {
        lines.push(idle_note(quiet - reveal));
    }
    Some(header..header + 1 + list.len())
}

/// How many leading columns fit in `width` (one space between columns).
pub fn fitting<C: std::borrow::Borrow<Column>>(cols: &[C], width: usize) -> usize {
    let mut used = 0;
    for (i, c) in cols.iter().enumerate() {
        let need = c.borrow().width + usize::from(i > 0);
        if used + need > width {
            return i.max(1);
        }
        used += need;
    }
    cols.len()
}

/// One cell of a table line appended to `out`: a space before all but the first, the text cut
/// to the column (`units::fit`) and padded to it by characters, as `{:<w$}` / `{:>w$}` would.
/// Written in place: a frame draws a few hundred cells, and a `format!` and a cut copy each
/// were a third of its allocations.
fn push_cell(out: &mut String, text: &str, c: &Column, first: bool) {
    if !first {
        out.push(' ');
    }
    let w = c.width;
    let len = text.chars().count();
    let cut;
    let (t, len) = if len <= w {
        (text, len)
    } else {
        cut = fit(text, w);
        let n = cut.chars().count();
        (cut.as_str(), n)
    };
    let pad = w.saturating_sub(len);
    if !c.left {
        out.extend(std::iter::repeat_n(' ', pad));
    }
    out.push_str(t);
    if c.left {
        out.extend(std::iter::repeat_n(' ', pad));
    }
}

pub fn header_line<C: std::borrow::Borrow<Column>>(
    cols: &[C],
    width: usize,
    theme: &Theme,
) -> Line<'static> {
    let n = fitting(cols, width);
    let mut s = String::with_capacity(width);
    for (i, c) in cols[..n].iter().enumerate() {
        let c = c.borrow();
        push_cell(&mut s, &c.title, c, i == 0);
    }
    Line::from(Span::styled(s, theme.dim))
}

/// A table row: one span a cell, each in its own style.
pub fn row_line<'a, C: std::borrow::Borrow<Column>>(
    cols: &[C],
    cells: impl Iterator<Item = (&'a str, Style)>,
    width: usize,
) -> Line<'static> {
    let n = fitting(cols, width);
    Line::from(
        cells
            .zip(cols)
            .take(n)
            .enumerate()
            .map(|(i, ((text, style), c))| {
                let c = c.borrow();
                let mut s = String::with_capacity(c.width + 1);
                push_cell(&mut s, text, c, i == 0);
                Span::styled(s, style)
            })
            .collect::<Vec<_>>(),
    )
}
