//! A scroll position over something taller than its window (a zoomed pane, the findings list,
//! a long tweak preview): keys move it, the renderer clamps it to what is there now.

use std::cell::Cell;

/// One scroll key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
}

/// The first row shown, and what the last frame learnt about the window.
///
/// The window's height and how far it can scroll are only known when a frame is laid out, and
/// drawing reads the app without changing it otherwise: they live in `Cell`s, the way ratatui's
/// own list and table states are updated while rendering. Keys then step from what was on
/// screen, so `End` followed by `Up` moves at once instead of climbing back from "infinity".
#[derive(Debug, Clone, Default)]
pub struct Scroll {
    offset: Cell<usize>,
    page: Cell<usize>,
    /// The largest offset of the last frame; `None` before one was drawn.
    max: Cell<Option<usize>>,
}

impl Scroll {
    /// The first row to show (as the last frame clamped it, or as the keys asked since).
    pub fn offset(&self) -> usize {
        self.offset.get()
    }

    /// Back to the top (the list shown changed: another pane, zoom off and on).
    pub fn reset(&self) {
        self.offset.set(0);
        self.max.set(None);
    }

    pub fn apply(&self, m: Move) {
        let page = self.page.get().max(1);
        // A page keeps one row of the previous page in view, so the eye finds its place.
        let step = page.saturating_sub(1).max(1);
        let max = self.max.get().unwrap_or(usize::MAX);
        let cur = self.offset.get().min(max);
        let next = match m {
            Move::Up => cur.saturating_sub(1),
            Move::Down => cur.saturating_add(1),
            Move::PageUp => cur.saturating_sub(step),
            Move::PageDown => cur.saturating_add(step),
            Move::Top => 0,
            Move::Bottom => usize::MAX,
        };
        self.offset.set(next.min(max));
    }

    /// For the renderer: `page` rows are visible and `max` is the largest useful offset now.
    /// Returns the offset to draw, clamped (the rows may have shrunk since the key) and
    /// remembered.
    pub fn window(&self, max: usize, page: usize) -> usize {
        let off = self.offset.get().min(max);
        self.offset.set(off);
        self.page.set(page);
        self.max.set(Some(max));
        off
    }
}

impl Scroll {
    /// As `window`, first moving the offset as little as needed for rows `want` to be in view
    /// (a menu's selected entry).
    pub fn follow(&self, want: std::ops::Range<usize>, max: usize, page: usize) -> usize {
        let mut off = self.offset.get();
        if want.end > off + page {
            off = want.end.saturating_sub(page);
        }
        if want.start < off {
            off = want.start;
        }
        self.offset.set(off);
        self.window(max, page)
    }
}

/// `rows 19–36 of 128`: where a window of `shown` rows from `offset` stands in `total`.
pub fn position(offset: usize, shown: usize, total: usize) -> String {
    let last = (offset + shown).min(total);
    let first = if last == 0 { 0 } else { offset + 1 };
    format!("rows {first}–{last} of {total}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_step_within_what_the_last_frame_showed() {
        let s = Scroll::default();
        // Before any frame: Bottom asks for the end, the first frame clamps it.
        s.apply(Move::Bottom);
        assert_eq!(s.window(110, 18), 110);
        s.apply(Move::Up);
        assert_eq!(s.offset(), 109, "Up from the end moves at once");
        s.apply(Move::PageUp);
        assert_eq!(s.offset(), 92, "a page keeps one row: 18 - 1");
        s.apply(Move::Top);
        assert_eq!(s.offset(), 0);
        s.apply(Move::Up);
        assert_eq!(s.offset(), 0);
        s.apply(Move::PageDown);
        s.apply(Move::PageDown);
        assert_eq!(s.offset(), 34);
        // The rows shrink (a filter, fewer disks): the next frame clamps.
        assert_eq!(s.window(10, 18), 10);
        s.apply(Move::Down);
        assert_eq!(s.offset(), 10);
        s.reset();
        assert_eq!(s.offset(), 0);
    }

    #[test]
    fn follow_keeps_the_selection_in_view() {
        let s = Scroll::default();
        assert_eq!(s.follow(20..22, 30, 10), 12);
        assert_eq!(s.follow(14..15, 30, 10), 12, "already in view: no move");
        assert_eq!(s.follow(3..5, 30, 10), 3);
    }

    #[test]
    fn position_text() {
        assert_eq!(position(18, 18, 128), "rows 19–36 of 128");
        assert_eq!(position(120, 18, 128), "rows 121–128 of 128");
        assert_eq!(position(0, 5, 0), "rows 0–0 of 0");
    }
}
