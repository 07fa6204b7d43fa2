//! Lays out the pane models of `view` on the screen: headline spans, tables cut to the width,
//! filtered and sorted as the keys ask, notes; plus what only a screen has (sparklines, the
//! CPU heat strip, the dirty gauge in block glyphs) in `extras`.

mod extras;
mod view;

use super::spans::{note, span};
use super::theme::Theme;
use crate::units::fit;
use crate::view::model::{busiest, Block, Cells, Column, Later, Order, PaneView, Row, Table};
use crate::view::{Ctx, Pane};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

pub use extras::sparkline;
pub use view::{Opts, View};

/// CPUs from which a cut CPU table shows the heat strip: below it, rows say more than a strip.
const STRIP_FROM: usize = 5;
/// Rows a cut table keeps for its busiest rows beyond twice its package lines before it shows
/// them.
const GROUPS_AFTER: usize = 4;

/// The pane's model for this view (zoomed or not). Built once per pane per frame: the title
/// and the body, at any row budget, are laid out from the same one.
pub fn model(p: Pane, v: &View) -> PaneView {
    let oom = v.opts.oom.since(v.d.host.wall_ms);
    crate::view::pane(
        p,
        v.d,
        &Ctx::new(v.opts.thresholds, v.detail)
            .with_oom(Some(oom))
            .with_proc_sort(v.opts.proc_sort)
            .with_everyone(v.opts.everyone),
    )
}

/// `1 CPU power  /cpu1 <headline>`: the pane's kept filter (or the one being typed) after its
/// name, and `tag` at the far right (`+k` rows cut, `rows 19–36 of 128` zoomed), for which the
/// headline is cut.
pub fn title(p: Pane, m: &PaneView, v: &View, focused: bool, tag: Option<String>) -> Line<'static> {
    let t = v.theme;
    let label = format!("{} {:<13}", p.key(), p.title());
    let mut spans = vec![
        span(label, if focused { t.focus } else { t.title }),
        span(" ", Style::default()),
    ];
    let filter = v.opts.filter_for(p);
    if !filter.is_empty() {
        spans.push(span(format!("/{filter}"), t.selection));
        spans.push(span(" ", Style::default()));
    }
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let tag_len = tag.as_ref().map_or(0, |t| t.chars().count() + 1);
    spans.extend(headline(p, m, v, v.width.saturating_sub(used + tag_len)));
    if let Some(tag) = tag {
        let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
        let tag = format!(" {tag}");
        let room = v.width.saturating_sub(tag.chars().count());
        if used > room {
            // Cut the headline so the tag stays visible.
            let mut kept = Vec::new();
            let mut n = 0;
            for s in spans {
                let len = s.content.chars().count();
                if n + len > room {
                    kept.push(Span::styled(fit(&s.content, room - n), s.style));
                    break;
                }
                n += len;
                kept.push(s);
            }
            spans = kept;
        } else {
            spans.push(span(" ".repeat(room - used), Style::default()));
        }
        spans.push(span(tag, t.dim));
    }
    Line::from(spans)
}

/// The headline in `room` columns: without its optional cells when they do not all fit.
pub fn headline(p: Pane, m: &PaneView, v: &View, room: usize) -> Vec<Span<'static>> {
    let cells: Cells = crate::view::model::fitting(&m.headline, room)
        .into_iter()
        .cloned()
        .collect();
    let mut s = v.spans(&cells);
    s.extend(extras::headline_trend(p, v));
    s
}

/// Body rows a pane asks for before the others grow, when the layout cannot show it whole: a
/// table header and one row, and for CPU the heat strip of every CPU above them.
pub fn first_rows(p: Pane, v: &View) -> usize {
    match p {
        Pane::Cpu if v.d.cpus.iter().filter(|c| c.online).count() >= STRIP_FROM => {
            2 + extras::packed_strip_lines(v)
        }
        _ => 2,
    }
}

pub fn body(p: Pane, m: &PaneView, v: &View) -> Vec<Line<'static>> {
    body_with_tables(p, m, v, None).0
}

/// The body, and where each table stands in it: its header line up to the end of its rows (a
/// zoomed pane scrolled into a table keeps that table's header on top).
///
/// Without a budget every row of every table is laid out (what the pane holds, which the layout
/// measures). With one, the lines that are not tables are kept and the rest is shared among the
/// tables as the layout shares rows among panes, so a pane's second table keeps its header and
/// busiest row when the first holds hundreds.
///
/// `drawn`: the body lines that will be drawn (a zoomed pane's window), when only those need
/// their text. Every other table row is an empty line, so the body has the same length and
/// tables at a small part of the cost (thousands of processes, a screenful drawn).
pub fn body_with_tables(
    p: Pane,
    m: &PaneView,
    v: &View,
    drawn: Option<&std::ops::Range<usize>>,
) -> (Vec<Line<'static>>, Vec<std::ops::Range<usize>>) {
    let rooms = v
        .budget
        .filter(|_| !v.detail)
        .map(|b| table_rooms(p, m, v, b));
    let mut lines = Vec::new();
    let mut tables = Vec::new();
    let mut k = 0;
    for b in &m.body {
        match b {
            Block::Line(cells) => {
                let fit: Cells = crate::view::model::fitting_from_right(cells, v.width)
                    .into_iter()
                    .cloned()
                    .collect();
                lines.push(Line::from(v.spans(&fit)))
            }
            // Legends and remarks cost rows the unzoomed screen gives to tables; zoom shows them.
            Block::Note(s) if v.detail => lines.push(note(format!("  {s}"), v.theme)),
            Block::Note(_) => {}
            Block::Alert(c) => {
                lines.push(Line::from(span(format!("  {}", c.text), v.style(c.level))))
            }
            Block::Table(t) => {
                let room = rooms.as_ref().and_then(|r| r.get(k).copied());
                k += 1;
                tables.extend(table(p, t, v, room, drawn, &mut lines));
            }
            Block::DirtyGauge => extras::dirty_gauge(v, &mut lines),
            Block::Bars(b) => lines.push(extras::bars(v, b)),
        }
    }
    (lines, tables)
}

/// Rows for each table of the pane out of `budget`, after the lines that are not tables: each
/// table a header and its busiest row first (CPU also its heat strip), then the rest as the
/// layout shares rows among panes.
fn table_rooms(p: Pane, m: &PaneView, v: &View, budget: usize) -> Vec<usize> {
    let mut fixed = 0;
    let mut lens = Vec::new();
    let mut firsts = Vec::new();
    for b in &m.body {
        match b {
            Block::Line(_) | Block::Alert(_) | Block::Bars(_) => fixed += 1,
            Block::Note(_) => {}
            Block::DirtyGauge => fixed += dirty_gauge_len(v),
            Block::Table(t) => {
                lens.push(table_len(p, t, v));
                firsts.push(if lens.len() == 1 { first_rows(p, v) } else { 2 });
            }
        }
    }
    let order: Vec<usize> = (0..lens.len()).collect();
    let weights = vec![1; lens.len()];
    let mut rooms = super::layout::share(
        &order,
        &lens,
        &firsts,
        &weights,
        budget.saturating_sub(fixed),
    );
    // A header with no row under it says nothing: its row goes to a table that wants one.
    for k in 0..rooms.len() {
        if rooms[k] == 1 && lens[k] > 1 {
            if let Some(j) = (0..rooms.len()).find(|&j| j != k && rooms[j] < lens[j]) {
                rooms[k] = 0;
                rooms[j] += 1;
            }
        }
    }
    rooms
}

/// Lines a pane's body holds, every row of every table (what `body_with_tables` lays out without
/// a budget), counted without laying anything out: the layout measures every pane every frame.
pub fn body_len(p: Pane, m: &PaneView, v: &View) -> usize {
    m.body
        .iter()
        .map(|b| match b {
            Block::Line(_) | Block::Alert(_) | Block::Bars(_) => 1,
            Block::Note(_) => usize::from(v.detail),
            Block::DirtyGauge => dirty_gauge_len(v),
            Block::Table(t) => table_len(p, t, v),
        })
        .sum()
}

fn dirty_gauge_len(v: &View) -> usize {
    let mut g = Vec::new();
    extras::dirty_gauge(v, &mut g);
    g.len()
}

/// Lines `table` lays out with no room given: its header, every row kept by the filter and the
/// idle switch, and the idle note; or its empty note; or the filter's no-match note.
fn table_len(p: Pane, t: &Table, v: &View) -> usize {
    if t.rows.is_empty() {
        return usize::from(t.empty.is_some());
    }
    let matched: Vec<&Row> = t.rows.iter().filter(|r| v.keep(p, r)).collect();
    if matched.is_empty() && !v.opts.filter_for(p).is_empty() {
        return 2;
    }
    let shown = if v.opts.hide_idle {
        matched.iter().filter(|r| !r.quiet).count()
    } else {
        matched.len()
    };
    1 + shown + usize::from(shown < matched.len())
}

/// Lays out one table; returns the lines of its header and rows when it has them. `room`, when
/// given, is the rows it may take: fewer than it holds shows the CPU heat strip, a big host's
/// package lines when there is room for them, and the busiest rows.
fn table(
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
    let cols: Vec<Column> = keep.iter().map(|i| t.columns[*i].clone()).collect();
    let row_line = |r: &Row| {
        let later = match (t.later, v.opts.everyone) {
            (Some(Later::Everyone), Some(all)) if r.cells.is_empty() => {
                crate::view::everyone::cells_of(all, r.natural)
            }
            _ => Vec::new(),
        };
        let own = if later.is_empty() { &r.cells } else { &later };
        let cells: Vec<(String, Style)> = keep
            .iter()
            .filter_map(|i| own.get(*i))
            .map(|c| (c.text.clone(), v.style(c.level)))
            .collect();
        row_line(&cols, cells, v.width)
    };
    let matched: Vec<&Row> = t.rows.iter().filter(|r| v.keep(p, r)).collect();
    let filter = v.opts.filter_for(p);
    if matched.is_empty() && !filter.is_empty() {
        lines.push(header_line(&cols, v.width, th));
        lines.push(note(
            format!("  no row matches filter {filter:?} (Esc clears)"),
            th,
        ));
        return None;
    }
    let mut list = matched.clone();
    if v.opts.hide_idle {
        list.retain(|r| !r.quiet);
    }
    let idle = matched.len() - list.len();
    let idle_note = usize::from(idle > 0);
    if v.by_name() {
        list.sort_by(|a, b| a.natural.cmp(&b.natural).then(a.name.cmp(&b.name)));
    } else if t.order == Order::Load {
        list.sort_by(|a, b| busiest(a, b));
    }
    if let Some(room) = room.filter(|r| list.len() + 1 + idle_note > *r) {
        // Fewer rows than the table holds: every CPU as a glyph first, then the busiest rows.
        if !v.by_name() {
            list.sort_by(|a, b| busiest(a, b));
        }
        let mut left = room.saturating_sub(1);
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
    let header = lines.len();
    lines.push(header_line(&cols, v.width, th));
    for r in &list {
        let draw = drawn.is_none_or(|w| w.contains(&lines.len()));
        lines.push(if draw { row_line(r) } else { Line::default() });
    }
    if idle > 0 {
        lines.push(note(format!("  {idle} idle hidden (h shows)"), th));
    }
    Some(header..header + 1 + list.len())
}

/// How many leading columns fit in `width` (one space between columns).
pub fn fitting(cols: &[Column], width: usize) -> usize {
    let mut used = 0;
    for (i, c) in cols.iter().enumerate() {
        let need = c.width + usize::from(i > 0);
        if used + need > width {
            return i.max(1);
        }
        used += need;
    }
    cols.len()
}

fn cell(text: &str, c: &Column, first: bool) -> String {
    let t = fit(text, c.width);
    let w = c.width;
    let sep = if first { "" } else { " " };
    if c.left {
        format!("{sep}{t:<w$}")
    } else {
        format!("{sep}{t:>w$}")
    }
}

pub fn header_line(cols: &[Column], width: usize, theme: &Theme) -> Line<'static> {
    let n = fitting(cols, width);
    let s: String = cols[..n]
        .iter()
        .enumerate()
        .map(|(i, c)| cell(&c.title, c, i == 0))
        .collect();
    Line::from(Span::styled(s, theme.dim))
}

pub fn row_line(cols: &[Column], cells: Vec<(String, Style)>, width: usize) -> Line<'static> {
    let n = fitting(cols, width);
    Line::from(
        cells
            .into_iter()
            .zip(cols)
            .take(n)
            .enumerate()
            .map(|(i, ((text, style), c))| Span::styled(cell(&text, c, i == 0), style))
            .collect::<Vec<_>>(),
    )
}
