//! The one sanitizer for text that leaves perftop: reports, CSV, OpenMetrics labels, JSON,
//! messages on stderr.
//!
//! Kernel strings (hostname, governor, device, IRQ and driver names, a recording from another
//! host) can hold escape and control bytes. Written raw, they drive the reader's terminal
//! (move the cursor, retitle the window, hide lines). The dashboard's buffer drops control
//! characters; every other output goes through here. A control character becomes `?`, one
//! column for one, so a report's columns stay aligned and the reader sees that something was
//! there.

use std::borrow::Cow;

/// Characters a terminal may act on or that reorder what is shown: C0 controls, DEL, C1
/// controls (U+0080..U+009F: 8-bit CSI/OSC to some terminals) and the bidirectional overrides.
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every unsafe character replaced by `keep(c)`, borrowed when nothing changes.
fn replace(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| is_unsafe(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| if is_unsafe(c) && !keep(c) { '?' } else { c })
            .collect(),
    )
}

/// Multi-line text (a report): line breaks stay, every other unsafe character is `?`.
pub fn text(s: &str) -> Cow<'_, str> {
    replace(s, |c| c == '\n')
}

/// One line (a label value, a message, a path): every unsafe character, line breaks too, is `?`.
pub fn line(s: &str) -> Cow<'_, str> {
    replace(s, |_| false)
}

/// JSON as `serde_json` writes it: C0 controls in strings are already `\u00XX` escapes, but
/// DEL, C1 and the bidi overrides are written raw. They can only occur inside strings, where
/// `\uXXXX` means the same character, so the data is unchanged for a JSON reader. Whitespace
/// between tokens (pretty-printed JSON) stays.
pub fn json(s: &str) -> Cow<'_, str> {
    let escape = |c: char| is_unsafe(c) && !matches!(c, '\n' | '\t' | '\r');
    if !s.chars().any(escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if escape(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_become_question_marks_and_json_escapes() {
        assert!(matches!(text("plain\ntext"), Cow::Borrowed(_)));
        assert_eq!(text("a\x1b[2Jb\r\nc\u{9b}d\u{202e}"), "a?[2Jb?\nc?d?");
        assert_eq!(line("a\nb\x07"), "a?b?");
        let j = serde_json::to_string_pretty(&["x\x1b\u{9b}\u{7f}"]).expect("json");
        let safe = json(&j);
        assert!(!safe.chars().any(|c| is_unsafe(c) && c != '\n'), "{safe}");
        let back: [String; 1] = serde_json::from_str(&safe).expect("still JSON");
        assert_eq!(back[0], "x\x1b\u{9b}\u{7f}");
    }
}
