//! The report as markdown, for a ticket: a heading per episode and its facts as a list.

use super::super::Report;
use super::{causes, clock, culprit, normal, peak, title, when};
use crate::record::format_rfc3339;

/// Text for markdown: one line, with the characters markdown would read as markup escaped.
fn md(s: &str) -> String {
    let mut o = String::new();
    for c in crate::safe::line(s).chars() {
        if "\\`*_[]<>|#".contains(c) {
            o.push('\\');
        }
        o.push(c);
    }
    o
}

pub fn render(r: &Report) -> String {
    let mut o = format!(
        "# perftop explain: {}\n\n{} .. {} on {}, {} intervals.\n\n",
        md(&r.path),
        format_rfc3339(r.from_ms),
        format_rfc3339(r.to_ms),
        md(r.host.as_deref().unwrap_or("an unnamed host")),
        r.intervals
    );
    for u in &r.unreadable {
        o.push_str(&format!("- could not read: {}\n", md(u)));
    }
    if !r.unknown.is_empty() {
        o.push_str(&format!(
            "- not recorded (unknown, not zero): {}\n",
            md(&r.unknown.join(", "))
        ));
    }
    if r.episodes.is_empty() {
        o.push_str("\nNo episodes: no finding held in this window.\n");
    }
    for (i, e) in r.episodes.iter().enumerate() {
        o.push_str(&format!(
            "\n## {}. {} ({})\n\n",
            i + 1,
            md(&title(e)),
            e.severity.as_str()
        ));
        o.push_str(&format!("- **when**: {}\n", md(&when(e))));
        o.push_str(&format!("- **what**: {}\n", md(&e.summary)));
        if let Some(p) = peak(e) {
            o.push_str(&format!("- **peak**: {}\n", md(&p)));
        }
        if let Some(n) = normal(e, r) {
            o.push_str(&format!("- **normal**: {}\n", md(&n)));
        }
        for c in &e.culprits {
            o.push_str(&format!("- **who**: {}\n", md(&culprit(c))));
        }
        for c in causes(e) {
            o.push_str(&format!("- **cause**: {}\n", md(&c)));
        }
        for n in &e.notes {
            o.push_str(&format!("- **note**: {}\n", md(n)));
        }
        for t in &e.tweaks {
            o.push_str(&format!("- **tweak**: {}\n", md(&t.preview)));
        }
    }
    if !r.events.is_empty() {
        o.push_str("\n## What was done\n\n");
        for ev in &r.events {
            o.push_str(&format!(
                "- {} {}: {}\n",
                clock(ev.time_ms),
                ev.kind,
                md(&ev.text)
            ));
        }
    }
    o
}
