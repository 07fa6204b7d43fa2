//! The terminal report: plain text, every line at most `width` columns (long lines wrap with
//! a hanging indent).

use super::super::Report;
use super::{causes, clock, culprit, normal, peak, title, when};
use crate::record::format_rfc3339;

/// Appends `text` wrapped to `width` columns: the first line after `lead`, the rest indented
/// by `lead`'s width. Words longer than a line are cut.
pub fn wrap(out: &mut String, lead: &str, text: &str, width: usize) {
    let indent = lead.chars().count();
    let room = width.saturating_sub(indent).max(8);
    let mut line = String::new();
    let mut first = true;
    let mut flush = |line: &mut String, first: &mut bool| {
        if *first {
            out.push_str(lead);
        } else {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(line.trim_end());
        out.push('\n');
        line.clear();
        *first = false;
    };
    for word in text.split_whitespace() {
        let mut word: String = word.to_string();
        while word.chars().count() > room {
            if !line.is_empty() {
                flush(&mut line, &mut first);
            }
            let head: String = word.chars().take(room).collect();
            word = word.chars().skip(room).collect();
            line.push_str(&head);
            flush(&mut line, &mut first);
        }
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > room {
            flush(&mut line, &mut first);
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() || first {
        flush(&mut line, &mut first);
    }
}

pub fn render(r: &Report, width: usize) -> String {
    let mut o = String::new();
    let w = width.max(40);
    wrap(
        &mut o,
        "",
        &format!(
            "perftop explain: {} on {}, {} .. {} ({} intervals)",
            crate::safe::line(&r.path),
            crate::safe::line(r.host.as_deref().unwrap_or("an unnamed host")),
            format_rfc3339(r.from_ms),
            format_rfc3339(r.to_ms),
            r.intervals
        ),
        w,
    );
    for u in &r.unreadable {
        wrap(&mut o, "could not read: ", &crate::safe::line(u), w);
    }
    if !r.unknown.is_empty() {
        wrap(
            &mut o,
            "not recorded: ",
            &format!("{} (unknown, not zero)", r.unknown.join(", ")),
            w,
        );
    }
    o.push('\n');
    if r.episodes.is_empty() {
        o.push_str("No episodes: no finding held in this window.\n");
    }
    for (i, e) in r.episodes.iter().enumerate() {
        wrap(
            &mut o,
            &format!("{}. ", i + 1),
            &format!("[{}] {}", e.severity.as_str(), title(e)),
            w,
        );
        let pad = "   ";
        wrap(&mut o, &format!("{pad}when:     "), &when(e), w);
        wrap(
            &mut o,
            &format!("{pad}what:     "),
            &crate::safe::line(&e.summary),
            w,
        );
        if let Some(p) = peak(e) {
            wrap(&mut o, &format!("{pad}peak:     "), &p, w);
        }
        if let Some(n) = normal(e, r) {
            wrap(&mut o, &format!("{pad}normal:   "), &n, w);
        }
        for c in &e.culprits {
            wrap(&mut o, &format!("{pad}who:      "), &culprit(c), w);
        }
        for c in causes(e) {
            wrap(&mut o, &format!("{pad}cause:    "), &c, w);
        }
        for n in &e.notes {
            wrap(&mut o, &format!("{pad}note:     "), n, w);
        }
        for t in &e.tweaks {
            wrap(&mut o, &format!("{pad}tweak:    "), &t.preview, w);
        }
        o.push('\n');
    }
    if !r.events.is_empty() {
        o.push_str("What was done / happened:\n");
        for ev in &r.events {
            wrap(
                &mut o,
                &format!("  {} ", clock(ev.time_ms)),
                &format!("{}: {}", ev.kind, ev.text),
                w,
            );
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wraps_with_a_hanging_indent_within_the_width() {
        let mut o = String::new();
        wrap(&mut o, "ab: ", "one two three four five six", 20);
        assert_eq!(o, "ab: one two three\n    four five six\n");
        let mut o = String::new();
        wrap(&mut o, "", &"x".repeat(45), 20);
        assert!(o.lines().all(|l| l.chars().count() <= 20), "{o}");
        assert_eq!(o.replace('\n', ""), "x".repeat(45));
    }
}
