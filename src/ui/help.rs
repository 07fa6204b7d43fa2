//! The `?` screen: one row per binding of the keymap table (pairs and the pane keys share a
//! row so that it fits in 80x24), in a box over the dashboard.

use super::keymap::{Action, KEYMAP};
use super::panes::span;
use super::scroll::Move;
use super::theme::Theme;
use crate::pane::PANES;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

/// The help row of the focus keys, from the one pane list.
static FOCUS_HELP: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| format!("focus a pane ({} numbered on their titles)", PANES.len()));

/// Help screen rows: keys and description, in table order. Pairs (t/T, j/J, Home/End, ...) and
/// the pane-focus keys share a row so the whole screen fits in 80x24.
pub fn help_rows(replay: bool) -> Vec<(String, &'static str)> {
    let mut rows: Vec<(String, &'static str)> = Vec::new();
    for bnd in KEYMAP.iter().filter(|bnd| bnd.mode.admits(replay)) {
        let keys: Vec<String> = bnd.keys.iter().map(|k| k.label()).collect();
        let joins_previous = matches!(
            bnd.action,
            Action::FocusPrev
                | Action::Suspend
                | Action::IntervalDown
                | Action::StepForward
                | Action::Latest
                | Action::JumpBack
                | Action::Faster
                | Action::TweakMenu
                | Action::TweakUndo
        ) || matches!(bnd.action, Action::Focus(p) if p != PANES[0])
            || matches!(bnd.action, Action::Scroll(m) if m != Move::Up);
        if joins_previous {
            if let Some(last) = rows.last_mut() {
                last.0.push(' ');
                last.0.push_str(&keys.join(" "));
            }
            continue;
        }
        let description = match bnd.action {
            Action::Repaint => "repaint the screen / suspend to the shell (fg resumes)",
            Action::Scroll(_) => "scroll a zoomed pane / the findings list",
            Action::FocusNext => "focus next / previous pane",
            Action::Focus(_) => FOCUS_HELP.as_str(),
            Action::IntervalUp => "longer / shorter sampling interval",
            Action::StepBack => "step back / forward one sample (pauses)",
            Action::Oldest if replay => "first / last sample",
            Action::Oldest => "oldest sample in memory / back to live",
            Action::JumpForward => "jump forward / back by the jump step (--jump, default 1m)",
            Action::Slower => "play slower / faster (0.25x .. 1024x)",
            Action::GovernorToggle => "tweaks: governor toggle, knob menu, undo (y applies)",
            _ => bnd.description,
        };
        rows.push((keys.join(" "), description));
    }
    rows
}

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
}
