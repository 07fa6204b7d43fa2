//! A zoomed pane: every row and the extra columns, scrolled by the keys, with its position on
//! the title (`rows 19–36 of 128`) and the header of the table in view kept on top.

use super::panes::{self, View};
use super::scroll::{position, Scroll};
use crate::pane::Pane;
use ratatui::text::Line;
use std::ops::Range;

/// The title and the body window of pane `p`, zoomed, in `avail` rows.
pub fn lines(p: Pane, v: &View, scroll: &Scroll, avail: usize) -> Vec<Line<'static>> {
    let m = panes::model(p, v);
    let page = avail.saturating_sub(1);
    // Measured first with no table row laid out (the window depends on the body's length and
    // where its tables are), then laid out again for the lines the window shows.
    let (measured, tables) = panes::body_with_tables(p, &m, v, Some(&(0..0)));
    let total = measured.len();
    if total <= page || page < 2 {
        scroll.window(0, page);
        let (body, _) = panes::body_with_tables(p, &m, v, Some(&(0..page)));
        let mut out = vec![panes::title(p, &m, v, true, None)];
        out.extend(body.into_iter().take(page));
        return out;
    }
    let (off, pinned, shown) = window(&tables, total, page, scroll);
    let (body, _) = panes::body_with_tables(p, &m, v, Some(&(off..off + shown)));
    let tag = position(off, shown, total);
    let mut out = vec![panes::title(p, &m, v, true, Some(tag))];
    if let Some(h) = pinned {
        out.push(body[h].clone());
    }
    out.extend(body.into_iter().skip(off).take(shown));
    out
}

/// For `total` body lines in `page` rows: the first line shown, the header line kept on top
/// (when the first line shown is a row of a table whose header scrolled away), and how many
/// body lines follow it.
fn window(
    tables: &[Range<usize>],
    total: usize,
    page: usize,
    scroll: &Scroll,
) -> (usize, Option<usize>, usize) {
    let pinned = |o: usize| {
        tables
            .iter()
            .find(|r| r.start < o && o < r.end)
            .map(|r| r.start)
    };
    let shown = |o: usize| page - usize::from(pinned(o).is_some());
    // The last offset whose window reaches the end; a pinned header costs one row.
    let mut max = total.saturating_sub(page);
    if max + shown(max) < total {
        max += 1;
    }
    let off = scroll.window(max, page);
    (off, pinned(off), shown(off))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::scroll::Move;

    #[test]
    fn a_table_keeps_its_header_while_its_rows_scroll() {
        // Line 0 facts, 1 header, 2..66 rows, 66..70 notes.
        let tables = vec![Range { start: 1, end: 66 }];
        let s = Scroll::default();
        assert_eq!(window(&tables, 70, 18, &s), (0, None, 18));
        s.apply(Move::Down);
        assert_eq!(
            window(&tables, 70, 18, &s),
            (1, None, 18),
            "the header is on top"
        );
        s.apply(Move::Down);
        assert_eq!(
            window(&tables, 70, 18, &s),
            (2, Some(1), 17),
            "and stays there"
        );
        s.apply(Move::Bottom);
        // 70 - 18 = 52 is inside the table: pinned, so one more to reach the end.
        let (off, pin, shown) = window(&tables, 70, 18, &s);
        assert_eq!((off, pin, off + shown), (53, Some(1), 70));
    }
}
