//! The `?` screen: one row per binding of the keymap table, or per group of bindings that
//! share one (pairs and the pane keys, so that it fits in 80x24), in a box over the dashboard.

use super::keymap::help_rows;
use super::spans::span;
use super::theme::Theme;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

/// The box: a row per `help_rows` entry and a footnote, between borders (rows + 3 high).
pub fn draw(f: &mut Frame, area: Rect, t: &Theme, replay: bool) {
    let rows = help_rows(replay);
    let w = area.width.min(78);
    let h = area.height.min(rows.len() as u16 + 3);
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    let mut lines: Vec<Line> = rows
        .into_iter()
        .map(|(k, d)| Line::from(vec![span(format!(" {k:<11} "), t.title), span(d, t.text)]))
        .collect();
    lines.push(Line::from(span(
        " Unknown values show as -. ~ = estimate. ? or Esc closes.",
        t.dim,
    )));
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .border_set(t.glyphs.border())
                .title(" perftop keys "),
        ),
        r,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_fits_80x24_in_both_modes() {
        for replay in [false, true] {
            let rows = help_rows(replay);
            // Borders and footnote: 3 rows of the 24.
            assert!(rows.len() + 3 <= 24, "{} help rows", rows.len());
            assert!(rows.iter().any(|(k, _)| k == "t T"));
            assert!(rows.iter().any(|(k, _)| k == "j J"));
            // Every row whole inside the 78-column box at 80 columns.
            for (k, d) in &rows {
                let len = 1 + k.chars().count().max(11) + 1 + d.chars().count();
                assert!(len <= 76, "{k} {d}: {len} columns");
            }
        }
        assert!(help_rows(false)
            .iter()
            .any(|(k, _)| k == "Up Down PgUp PgDn Home End"));
        assert!(help_rows(false).iter().any(|(k, _)| k == "f"));
        assert!(help_rows(true).iter().any(|(k, _)| k == "[ ]"));
        assert!(help_rows(false).iter().any(|(k, _)| k == "g a u"));
        assert!(!help_rows(true).iter().any(|(k, _)| k == "g a u"));
    }

    #[test]
    fn the_focus_row_counts_the_panes() {
        let n = crate::pane::PANES.len();
        assert!(super::super::keymap::FOCUS_ROW.contains(&format!("({n} numbered")));
        let keys: String = crate::pane::PANES
            .iter()
            .map(|p| p.key().to_string())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(help_rows(false).iter().any(|(k, _)| *k == keys));
    }
}
