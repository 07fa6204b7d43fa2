//! ASCII mode (`LC_ALL=C`, a locale without UTF-8, `--glyphs ascii`): only bytes below 0x80
//! reach the terminal. Text is spelled in ASCII before layout (`µs` as `us`, `±` as `+-`), and
//! a last pass over each frame's buffer replaces whatever non-ASCII symbol is left (box
//! drawing, block elements, a host name in UTF-8) one cell for one, `?` when the table has no
//! better stand-in — so a string nobody thought of cannot put UTF-8 on a C-locale terminal.

use ratatui::buffer::Buffer;
use ratatui::symbols::border;
use std::borrow::Cow;

/// Popup borders in ASCII.
pub const BORDER: border::Set<'static> = border::Set {
    top_left: "+",
    top_right: "+",
    bottom_left: "+",
    bottom_right: "+",
    vertical_left: "|",
    vertical_right: "|",
    horizontal_top: "-",
    horizontal_bottom: "-",
};

/// Spellings in ASCII of the characters perftop's own text uses (units, arrows, separators).
const SPELLED: &[(char, &str)] = &[
    ('µ', "u"),
    ('±', "+-"),
    ('…', "..."),
    ('→', "->"),
    ('←', "<-"),
    ('—', "-"),
    ('–', "-"),
    ('·', "."),
    ('×', "x"),
    ('≤', "<="),
    ('≥', ">="),
];

/// One-cell stand-ins for what is drawn cell by cell (borders, bars, sparklines, markers).
const CELL: &[(char, char)] = &[
    ('─', '-'),
    ('━', '='),
    ('═', '='),
    ('│', '|'),
    ('┃', '|'),
    ('║', '|'),
    ('┌', '+'),
    ('┐', '+'),
    ('└', '+'),
    ('┘', '+'),
    ('├', '+'),
    ('┤', '+'),
    ('┬', '+'),
    ('┴', '+'),
    ('┼', '+'),
    ('╭', '+'),
    ('╮', '+'),
    ('╯', '+'),
    ('╰', '+'),
    ('█', '#'),
    ('▓', '='),
    ('▒', ':'),
    ('░', '.'),
    ('▁', '.'),
    ('▂', ':'),
    ('▃', '-'),
    ('▄', '='),
    ('▅', '+'),
    ('▆', '*'),
    ('▇', '#'),
    ('●', '|'),
    ('◆', '*'),
    ('╳', 'x'),
    ('µ', 'u'),
    ('±', '+'),
    ('…', '.'),
    ('→', '>'),
    ('←', '<'),
    ('—', '-'),
    ('–', '-'),
    ('·', '.'),
    ('×', 'x'),
];

/// `s` in ASCII: the spellings above, `?` for any other non-ASCII character.
pub fn text(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii() {
            out.push(c);
        } else if let Some((_, spelled)) = SPELLED.iter().find(|(k, _)| *k == c) {
            out.push_str(spelled);
        } else {
            out.push('?');
        }
    }
    Cow::Owned(out)
}

/// The one-cell stand-in of a non-ASCII character.
pub fn cell(c: char) -> char {
    if c.is_ascii() {
        return c;
    }
    CELL.iter().find(|(k, _)| *k == c).map_or('?', |(_, a)| *a)
}

/// Replaces every non-ASCII symbol of `buf` by its one-cell stand-in. A wide character
/// becomes one `?`; the cell after it is already blank (ratatui resets the cells a wide
/// symbol covers), so the columns stay where they were.
pub fn fold(buf: &mut Buffer) {
    for c in buf.content.iter_mut() {
        let sym = c.symbol();
        if !sym.is_ascii() {
            let first = sym.chars().next().map_or(' ', cell);
            c.set_char(first);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;

    #[test]
    fn text_is_spelled_in_ascii() {
        assert_eq!(text("0 µs ± 2 … a → b · c"), "0 us +- 2 ... a -> b . c");
        assert_eq!(
            text("set governor → performance?"),
            "set governor -> performance?"
        );
        assert_eq!(text("héllo 日本"), "h?llo ??");
        assert!(matches!(text("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn buffer_fold_leaves_only_ascii() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 12, 2));
        buf.set_string(0, 0, "┌─µs±…→", ratatui::style::Style::default());
        buf.set_string(0, 1, "日x▇░", ratatui::style::Style::default());
        fold(&mut buf);
        let rows: Vec<String> = buf
            .content
            .chunks(12)
            .map(|r| r.iter().map(|c| c.symbol()).collect())
            .collect();
        assert_eq!(rows[0], "+-us+.>     ");
        // The wide character is one `?` and its second column stays blank.
        assert_eq!(rows[1], "? x#.       ");
        assert!(rows.iter().all(|r| r.is_ascii()));
    }
}
