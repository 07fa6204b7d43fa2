//! The timeline bar's contents: which column holds the cursor and which the marks (gaps, tweak
//! actions, OOM kills) over the history in view.

use super::history::Mark;

/// One column of the timeline bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    Played,
    Ahead,
    Cursor,
    Mark(Mark),
}

/// The bar's cells for `width` columns over `first..=last`, with the cursor at `at`. A column
/// holding a mark shows it (an OOM kill wins over a kernel log event, that over a gap, a gap over
/// an action); the cursor wins
/// over all so the position is never hidden.
pub fn bar(first: i64, last: i64, at: i64, marks: &[(i64, Mark)], width: usize) -> Vec<Cell> {
    if width == 0 {
        return Vec::new();
    }
    let span = (last - first).max(1) as f64;
    let col = |t: i64| -> usize {
        let f = (t - first) as f64 / span;
        ((f * (width - 1) as f64).round().max(0.0) as usize).min(width - 1)
    };
    let cur = col(at);
    let mut cells: Vec<Cell> = (0..width)
        .map(|c| if c < cur { Cell::Played } else { Cell::Ahead })
        .collect();
    let rank = |c: Cell| match c {
        Cell::Mark(Mark::Oom) => 4,
        Cell::Mark(Mark::Kernel) => 3,
        Cell::Mark(Mark::Gap) => 2,
        Cell::Mark(Mark::Action) => 1,
        _ => 0,
    };
    for &(t, m) in marks {
        let c = col(t);
        if rank(Cell::Mark(m)) > rank(cells[c]) {
            cells[c] = Cell::Mark(m);
        }
    }
    cells[cur] = Cell::Cursor;
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_places_cursor_and_marks() {
        // 0..=100 over 11 columns: one column per 10 ms.
        let marks = [(30, Mark::Action), (30, Mark::Gap), (80, Mark::Action)];
        let b = bar(0, 100, 50, &marks, 11);
        assert_eq!(b[0], Cell::Played);
        assert_eq!(b[3], Cell::Mark(Mark::Gap), "a gap wins over an action");
        assert_eq!(b[5], Cell::Cursor);
        assert_eq!(b[6], Cell::Ahead);
        assert_eq!(b[8], Cell::Mark(Mark::Action));
        // The cursor is never hidden by a mark, and a single-sample recording still draws.
        assert_eq!(bar(0, 100, 80, &marks, 11)[8], Cell::Cursor);
        assert_eq!(
            bar(5, 5, 5, &[], 3),
            vec![Cell::Cursor, Cell::Ahead, Cell::Ahead]
        );
        assert!(bar(0, 1, 0, &[], 0).is_empty());
    }
}
