//! Lays out the pane models of `view` on the screen: headline spans, tables cut to the width,
//! filtered and sorted as the keys ask, notes; plus what only a screen has (sparklines, the
//! CPU heat strip, the dirty gauge in block glyphs) in `extras`.

mod extras;
mod table;
mod view;
mod work;

use super::spans::{note, span};
use crate::units::fit;
use crate::view::model::{Block, PaneView};
use crate::view::{Ctx, Pane};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

pub use extras::{sparkline, SPARK_POINTS};
pub use table::{fitting, header_line, row_line, Lens};
pub use view::{Opts, View};
pub use work::cells_built;
use work::note_cells;

/// The pane's model for this view (zoomed or not). Built once per pane per frame: the title
/// and the body, at any row budget, are laid out from the same one. The CPU rows' cells are
/// built for the rows drawn (`Later::Cpu`).
pub fn model(p: Pane, v: &View) -> PaneView {
    let oom = v.opts.oom.since(v.d.host.wall_ms);
    let m = crate::view::pane(
        p,
        v.d,
        &Ctx::new(v.opts.thresholds, v.detail)
            .with_oom(Some(oom))
            .with_proc_sort(v.opts.proc_sort)
            .with_everyone(v.opts.everyone)
            .with_lazy_rows(true),
    );
    let cells: usize = m
        .body
        .iter()
        .map(|b| match b {
            Block::Table(t) => t.rows.iter().chain(&t.groups).map(|r| r.cells.len()).sum(),
            _ => 0,
        })
        .sum();
    note_cells(cells);
    m
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
    let cells = crate::view::model::fitting(&m.headline, room);
    let mut s = v.spans(&cells);
    s.extend(extras::headline_trend(p, v));
    s
}

/// Body rows a pane asks for before the others grow, when the layout cannot show it whole: its
/// lines that are not tables (kept at any budget that has room for them) and its first table's
/// first rows (a header and one row, for CPU the heat strip above them, or the note of a table
/// of idle rows), so that a pane given rows never shows a header alone; 2 for a pane of lines.
pub fn first_rows(p: Pane, m: &PaneView, v: &View) -> usize {
    let first = m.body.iter().find_map(|b| match b {
        Block::Table(t) => Some(table::first(p, t, v)),
        _ => None,
    });
    match first {
        Some(n) => fixed_len(m, v) + n,
        None => 2,
    }
}

/// Lines of the body that are not tables: kept whatever the budget, tables share the rest.
fn fixed_len(m: &PaneView, v: &View) -> usize {
    m.body
        .iter()
        .map(|b| match b {
            Block::Line(_) | Block::Alert(_) | Block::Bars(_) => 1,
            Block::Note(_) | Block::Table(_) => 0,
            Block::DirtyGauge => dirty_gauge_len(v),
        })
        .sum()
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
                let fit = crate::view::model::fitting_from_right(cells, v.width);
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
                tables.extend(table::table(p, t, v, room, drawn, &mut lines));
            }
            Block::DirtyGauge => extras::dirty_gauge(v, &mut lines),
            Block::Bars(b) => lines.push(extras::bars(v, b)),
        }
    }
    (lines, tables)
}

/// Rows for each table of the pane out of `budget`, after the lines that are not tables: each
/// table a header and its busiest row first (CPU also its heat strip), then the rest as the
/// layout shares rows among panes; rows beyond what every table holds show idle rows.
fn table_rooms(p: Pane, m: &PaneView, v: &View, budget: usize) -> Vec<usize> {
    let mut lens = Vec::new();
    let mut fulls = Vec::new();
    let mut firsts = Vec::new();
    for b in &m.body {
        if let Block::Table(t) = b {
            let l = table::lens(p, t, v);
            lens.push(l.hidden);
            fulls.push(l.full);
            firsts.push(if lens.len() == 1 {
                table::first(p, t, v)
            } else {
                2
            });
        }
    }
    let order: Vec<usize> = (0..lens.len()).collect();
    let weights = vec![1; lens.len()];
    let rows = budget.saturating_sub(fixed_len(m, v));
    let mut rooms =
        super::layout::share_then_reveal(&order, &lens, &fulls, &firsts, &weights, rows);
    // A header with no row under it says nothing: its row goes to a table showing rows that
    // wants one more, else to none (the pane then draws a row less, which the column gives to
    // another pane).
    for k in 0..rooms.len() {
        if rooms[k] == 1 && lens[k] > 1 {
            rooms[k] = 0;
            if let Some(j) =
                (0..rooms.len()).find(|&j| j != k && rooms[j] >= 2 && rooms[j] < fulls[j])
            {
                rooms[j] += 1;
            }
        }
    }
    rooms
}

/// Lines a pane's body holds, every row of every table with idle rows hidden as the switch asks
/// (what `body_with_tables` lays out without a budget), counted without laying anything out: the
/// layout measures every pane every frame.
pub fn body_len(p: Pane, m: &PaneView, v: &View) -> usize {
    body_lens(p, m, v).hidden
}

/// `body_len`, and the lines with every idle row shown too (what rows left over reveal).
pub fn body_lens(p: Pane, m: &PaneView, v: &View) -> table::Lens {
    let mut n = table::Lens {
        hidden: fixed_len(m, v),
        full: fixed_len(m, v),
    };
    for b in &m.body {
        match b {
            Block::Note(_) if v.detail => {
                n.hidden += 1;
                n.full += 1;
            }
            Block::Table(t) => {
                let l = table::lens(p, t, v);
                n.hidden += l.hidden;
                n.full += l.full;
            }
            _ => {}
        }
    }
    n
}

/// The lines `extras::dirty_gauge` draws: the bar and its marks, or the note saying why not.
fn dirty_gauge_len(v: &View) -> usize {
    if crate::view::dirty::has_gauge(&v.d.dirty) {
        2
    } else {
        1
    }
}
