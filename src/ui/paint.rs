//! Puts the screen's lines into the frame's buffer. Every line is fitted to its width before it
//! gets here (`units::fit`, the panes' tables), so this is ratatui's `Paragraph` without its
//! reflow: ASCII spans, nearly all of the text, go in a byte a cell; any other span goes through
//! ratatui's grapheme-aware `Buffer::set_stringn`. The `Paragraph` path split every span into
//! graphemes and measured each one: a fifth of a steady frame's CPU (`cargo bench --bench
//! sample -- frame`, docs/performance.md).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

/// Draws `lines` from the top of `area`, one a row, each cut at the area's right edge; rows
/// past the lines, and cells past a line's end, are left as they are. A control character
/// takes no cell, as in `Paragraph`.
pub fn lines(buf: &mut Buffer, area: Rect, lines: &[Line]) {
    let area = area.intersection(buf.area);
    let right = area.right();
    for (line, y) in lines.iter().zip(area.top()..area.bottom()) {
        let mut x = area.x;
        for span in &line.spans {
            if x >= right {
                break;
            }
            let style = line.style.patch(span.style);
            let text: &str = &span.content;
            if text.is_ascii() {
                for b in text.bytes().filter(|b| !b.is_ascii_control()) {
                    if x >= right {
                        break;
                    }
                    if let Some(cell) = buf.cell_mut((x, y)) {
                        cell.set_char(char::from(b)).set_style(style);
                    }
                    x += 1;
                }
            } else {
                x = buf.set_stringn(x, y, text, usize::from(right - x), style).0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Style};
    use ratatui::text::Span;
    use ratatui::widgets::{Paragraph, Widget};

    /// The same lines through `Paragraph` and through `lines`: the same buffer, cell for cell,
    /// symbol and style.
    fn same_as_paragraph(lines_in: Vec<Line<'static>>, area: Rect) {
        let full = Rect::new(0, 0, 12, 4);
        let mut want = Buffer::empty(full);
        Paragraph::new(lines_in.clone()).render(area, &mut want);
        let mut got = Buffer::empty(full);
        lines(&mut got, area, &lines_in);
        assert_eq!(got, want);
    }

    #[test]
    fn ascii_lines_land_as_paragraph_puts_them() {
        let red = Style::default().fg(Color::Red);
        same_as_paragraph(
            vec![
                Line::from(vec![Span::raw("cpu "), Span::styled("97%", red)]),
                Line::from("a line longer than the area is cut"),
                Line::from(vec![Span::styled("tab\there", red)]),
            ],
            Rect::new(1, 0, 10, 3),
        );
    }

    #[test]
    fn wide_and_combining_text_lands_as_paragraph_puts_it() {
        same_as_paragraph(
            vec![
                Line::from(vec![Span::raw("█▇▆ "), Span::raw("µs")]),
                Line::from("日本語のテキスト"),
                Line::from(vec![Span::raw("e\u{301}t\u{e9}"), Span::raw("!")]),
            ],
            Rect::new(0, 1, 7, 3),
        );
    }

    #[test]
    fn more_lines_than_rows_stop_at_the_bottom() {
        same_as_paragraph(
            (0..9).map(|i| Line::from(format!("row {i}"))).collect(),
            Rect::new(0, 0, 12, 4),
        );
    }
}
