//! The `?` screen: one row per binding of the keymap table, or per group of bindings that
//! share one (pairs and the pane keys), in a box over the dashboard. A description too long
//! for the box wraps under its own column (a hanging indent), never cut; where the box is
//! shorter than its lines (60x20) it scrolls, and its last row says that there is more and
//! which keys move it, so that no line is lost at any size.

use super::keymap::help_rows;
use super::scroll::{position, Scroll};
use super::spans::span;
use super::theme::Theme;
use super::wrap::{hang_at, wrap, MIN_HANG};
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::Frame;

/// The keys' column; descriptions start after it and wrap back under their first word.
const KEYS_W: usize = 11;

/// The last line of the help, under the rows.
pub const FOOTNOTE: &str = "Unknown values show as -. ~ = estimate. ? or Esc closes.";

/// One line of the box: the keys (on a row's first line only) and the text beside them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpLine {
    pub keys: String,
    pub text: String,
    /// The footnote, drawn dim.
    pub note: bool,
}

/// Every line of the help at `inner` columns, wrapped, in order.
pub fn lines(replay: bool, inner: usize) -> Vec<HelpLine> {
    let col = if KEYS_W + 2 + MIN_HANG <= inner {
        KEYS_W + 2
    } else {
        2
    };
    let mut out = Vec::new();
    for (k, d) in help_rows(replay) {
        let prefix = format!(" {k:<KEYS_W$} ");
        let p = prefix.chars().count();
        for (i, l) in hang_at(&prefix, d, inner, col).into_iter().enumerate() {
            let (keys, text) = if i == 0 {
                let at = l.char_indices().nth(p).map_or(l.len(), |(b, _)| b);
                (l[..at].to_string(), l[at..].to_string())
            } else {
                (String::new(), l)
            };
            out.push(HelpLine {
                keys,
                text,
                note: false,
            });
        }
    }
    for l in wrap(&format!(" {FOOTNOTE}"), inner) {
        out.push(HelpLine {
            keys: String::new(),
            text: l,
            note: true,
        });
    }
    out
}

/// The box's last row while it scrolls: whether there is more above or below, then as much as
/// fits of where the window stands, the keys that move it and how to close.
pub fn marker(offset: usize, page: usize, total: usize, width: usize) -> String {
    let more = match (offset > 0, offset + page < total) {
        (true, true) => "more above and below",
        (true, false) => "more above",
        (false, true) => "more below",
        (false, false) => "all shown",
    };
    let at = position(offset, page, total);
    let keys = "j k Up Down PgUp PgDn Home End scroll";
    let short = "j k PgUp PgDn scroll";
    let choices: [&[&str]; 5] = [
        &[more, &at, keys, "? Esc closes"],
        &[more, &at, keys],
        &[more, keys],
        &[more, short],
        &[more],
    ];
    choices
        .iter()
        .map(|c| format!(" {}", c.join(" · ")))
        .find(|s| s.chars().count() <= width)
        .unwrap_or_else(|| format!(" {more}"))
}

/// The box: every line when the screen has room, else a window of them scrolled by `scroll`
/// with the `marker` row under it.
pub fn draw(f: &mut Frame, area: Rect, t: &Theme, replay: bool, scroll: &Scroll) {
    let w = area.width.min(78);
    let inner = w.saturating_sub(2).max(1) as usize;
    let all = lines(replay, inner);
    let total = all.len();
    let fits = total + 2 <= area.height as usize;
    let h = if fits { total as u16 + 2 } else { area.height };
    let page = if fits {
        total
    } else {
        (h as usize).saturating_sub(3).max(1)
    };
    let off = scroll.window(total.saturating_sub(page), page);
    let mut shown: Vec<Line> = all
        .into_iter()
        .skip(off)
        .take(page)
        .map(|l| match l.note {
            true => Line::from(span(l.text, t.dim)),
            false => Line::from(vec![span(l.keys, t.title), span(l.text, t.text)]),
        })
        .collect();
    if !fits {
        shown.push(Line::from(span(marker(off, page, total, inner), t.dim)));
    }
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    super::dialog_box::framed(f, r, shown, " perftop keys ".into(), t);
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
        assert!(help_rows(false).iter().any(|(k, _)| k == "f E"));
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

    #[test]
    fn every_line_whole_at_every_width() {
        for inner in [38usize, 58, 76] {
            for replay in [false, true] {
                let ls = lines(replay, inner);
                for l in &ls {
                    let n = l.keys.chars().count() + l.text.chars().count();
                    assert!(n <= inner, "{inner}: {l:?}");
                }
                // Nothing lost: every word of every row is on some line.
                let all: String = ls
                    .iter()
                    .map(|l| format!("{}{} ", l.keys, l.text))
                    .collect();
                let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
                let want: Vec<String> = help_rows(replay)
                    .into_iter()
                    .flat_map(|(k, d)| [words(&k), words(d)].concat())
                    .chain(words(FOOTNOTE))
                    .collect();
                assert_eq!(words(&all), want, "{inner}");
            }
        }
        // At 58 columns a long description hangs under the text column (13), not at 0.
        let ls = lines(false, 58);
        let cont = ls
            .iter()
            .find(|l| l.keys.is_empty() && !l.note)
            .expect("a wrapped row at 58 columns");
        assert!(cont.text.starts_with(&" ".repeat(13)), "{cont:?}");
        assert!(!cont.text.starts_with(&" ".repeat(14)), "{cont:?}");
    }

    #[test]
    fn the_marker_says_where_and_how() {
        assert_eq!(
            marker(0, 15, 27, 56),
            " more below · j k Up Down PgUp PgDn Home End scroll"
        );
        assert_eq!(
            marker(12, 15, 27, 76),
            " more above · rows 13–27 of 27 · j k Up Down PgUp PgDn Home End scroll"
        );
        assert_eq!(marker(5, 15, 27, 30), " more above and below");
        assert_eq!(marker(0, 15, 27, 34), " more below · j k PgUp PgDn scroll");
    }
}
