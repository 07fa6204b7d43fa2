//! Drawing a tweak dialog: a box the full width of the screen but a margin, its lines wrapped
//! by the dialog to that width, scrolled when they do not fit (the selection kept in view), and
//! the keys that apply on its last row.

use super::scroll::{position, Scroll};
use super::spans::span;
use super::theme::Theme;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;
use std::ops::Range;

/// How a dialog line reads; the theme gives the style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Text,
    /// Context: disabled knobs, notes.
    Dim,
    /// What matters most: old → new, the question.
    Head,
    Warn,
    /// The entry the keys act on.
    Selected,
}

/// A dialog as it will be drawn: lines already wrapped to the box's inner width.
#[derive(Debug, Clone)]
pub struct DialogView {
    pub title: String,
    pub lines: Vec<(Tone, String)>,
    /// The keys that apply (`y applies · Enter/Esc/n cancel`), always on the box's last row.
    pub hint: String,
    /// Lines that must stay in view (the selected menu entry).
    pub focus: Option<Range<usize>>,
}

/// `lines` in a bordered box at `r` titled `title`, over whatever was drawn there (the lists
/// and dialogs over the dashboard).
pub fn framed(f: &mut Frame, r: Rect, lines: Vec<Line<'static>>, title: String, t: &Theme) {
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .border_set(t.glyphs.border())
                .title(title),
        ),
        r,
    );
}

/// The box's inner width on a screen `area_width` wide: the full width less a column of
/// margin and a border on each side.
pub fn inner_width(area_width: u16) -> usize {
    area_width.saturating_sub(4).max(1) as usize
}

pub fn draw(f: &mut Frame, area: Rect, v: DialogView, scroll: &Scroll, t: &Theme) {
    let w = area.width.saturating_sub(2).max(1);
    // The header's first row and the footer stay visible when the screen allows.
    let room = area.height.saturating_sub(2).max(3);
    let h = room.min(v.lines.len() as u16 + 3).min(area.height);
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    let page = h.saturating_sub(3) as usize;
    let total = v.lines.len();
    let max = total.saturating_sub(page);
    let off = match v.focus.clone() {
        Some(want) => scroll.follow(want, max, page),
        None => scroll.window(max, page),
    };
    let style = |tone: Tone| match tone {
        Tone::Text => t.text,
        Tone::Dim => t.dim,
        Tone::Head => t.headline,
        Tone::Warn => t.warn,
        Tone::Selected => t.selection,
    };
    let mut lines: Vec<Line> = v
        .lines
        .into_iter()
        .skip(off)
        .take(page)
        .map(|(tone, l)| Line::from(span(l, style(tone))))
        .collect();
    while lines.len() < page {
        lines.push(Line::default());
    }
    let at = position(off, page.min(total - off), total);
    let full = match (total > page, v.focus.is_some()) {
        (false, _) => v.hint.clone(),
        // The selection moves the window: its keys are the hint already.
        (true, true) => format!("{at} · {}", v.hint),
        (true, false) => format!("{at} · Up/Down scroll · {}", v.hint),
    };
    // On a narrow screen the keys matter more than where the window stands: the position goes
    // first rather than the keys being cut.
    let inner = w.saturating_sub(2) as usize;
    let hint = match (
        full.chars().count() > inner,
        total > page,
        v.focus.is_some(),
    ) {
        (true, true, false) => format!("Up/Down scroll · {}", v.hint),
        (true, _, _) => v.hint,
        (false, _, _) => full,
    };
    lines.push(Line::from(span(hint, t.dim)));
    // The margin beside the box is cleared too: half-covered dashboard rows read as noise.
    // The margin column beside the box is cleared too.
    f.render_widget(Clear, Rect::new(area.x, r.y, area.width, r.height));
    framed(f, r, lines, format!(" {} ", t.glyphs.text(&v.title)), t);
}
