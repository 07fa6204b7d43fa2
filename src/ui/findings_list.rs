//! `f`: every finding, where the strip has room for one line: its severity in its colour, id,
//! the pane it belongs to, the whole message with its numbers (wrapped), the tweak that
//! addresses it, and for a raised one how long it has held. Scrolls; Esc or `f` closes.

use super::judge::Judge;
use super::scroll::{position, Scroll};
use super::spans::span;
use super::theme::Theme;
use super::wrap::wrap;
use crate::assess::Assessed;
use crate::findings::{Finding, Severity};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::Frame;

/// A group of findings under a heading.
#[derive(Debug)]
pub struct Section<'a> {
    pub heading: String,
    pub items: Vec<Item<'a>>,
}

#[derive(Debug)]
pub struct Item<'a> {
    pub finding: &'a Finding,
    /// How long a raised finding has held (`held 5 samples since 14:05:30`).
    pub held: Option<String>,
    /// A clearing finding: its message is from the last sample it held in, said as such.
    pub clearing: Option<crate::findings::Clearing>,
}

/// Whose findings the list shows.
pub struct Of<'a> {
    pub judge: &'a Judge,
    /// Stepping back or in replay: the findings of the sample in view, not the tracker's.
    pub at_sample: bool,
    pub replay: bool,
}

/// What the list holds. Live: the findings on the strip, then those that hold in this interval
/// but have not held long enough to be raised. Stepping back or in replay: the findings of the
/// interval in view, as the strip shows them there.
pub fn sections<'a>(of: &Of<'a>, d: &'a Assessed) -> Vec<Section<'a>> {
    if of.at_sample {
        return vec![Section {
            heading: "at this sample (the rules that hold for its interval)".into(),
            items: d
                .findings
                .iter()
                .map(|f| Item {
                    finding: f,
                    held: None,
                    clearing: None,
                })
                .collect(),
        }];
    }
    let raised = Section {
        heading: "on the strip".into(),
        items: of
            .judge
            .active
            .iter()
            .map(|a| Item {
                finding: &a.finding,
                held: Some(format!(
                    "held {} sample{} since {}",
                    a.samples,
                    if a.samples == 1 { "" } else { "s" },
                    crate::record::format_clock(a.since_ms)
                )),
                clearing: a.clearing,
            })
            .collect(),
    };
    let pending = Section {
        heading: format!(
            "holding this interval, not raised yet (raised after {} samples in a row)",
            of.judge.thresholds.raise_after
        ),
        items: d
            .findings
            .iter()
            .filter(|f| !of.judge.active.iter().any(|a| a.finding.id == f.id))
            .map(|f| Item {
                finding: f,
                held: None,
                clearing: None,
            })
            .collect(),
    };
    vec![raised, pending]
}

fn severity_style(s: Severity, t: &Theme) -> Style {
    match s {
        Severity::Crit => t.crit,
        Severity::Warn => t.warn,
        Severity::Info => t.info,
    }
}

/// The list as lines `width` wide.
pub fn lines(of: &Of, d: &Assessed, t: &Theme, width: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let secs = sections(of, d);
    if secs.iter().all(|s| s.items.is_empty()) {
        let why = if d.since_boot {
            "no findings: a since-boot report judges nothing (rates start with the next sample)"
        } else {
            "no finding holds in this interval"
        };
        out.extend(
            wrap(why, width)
                .into_iter()
                .map(|l| Line::from(span(l, t.dim))),
        );
        return out;
    }
    for s in secs.iter().filter(|s| !s.items.is_empty()) {
        if !out.is_empty() {
            out.push(Line::default());
        }
        for l in wrap(&format!("{} ({})", s.heading, s.items.len()), width) {
            out.push(Line::from(span(l, t.title)));
        }
        for item in &s.items {
            item_lines(item, of, t, width, &mut out);
        }
    }
    out
}

/// `CRIT disk.stalled  pane 5 Disks`, the message, the tweak, how long it held.
fn item_lines(item: &Item, of: &Of, t: &Theme, width: usize, out: &mut Vec<Line<'static>>) {
    let f = item.finding;
    let replay = of.replay;
    let pane = format!("pane {} {}", f.pane.key(), f.pane.title());
    out.push(Line::from(vec![
        span(
            format!("{:<5}", f.severity.as_str().to_uppercase()),
            severity_style(f.severity, t),
        ),
        span(f.id.clone(), t.headline),
        span(format!("  {pane}"), t.dim),
    ]));
    match item.clearing {
        // Its numbers are the last sample it held in: said as such and dimmed, so they are
        // not read as now's.
        Some(c) => {
            let text = format!(
                "     clearing: below its threshold now, off in {} sample{}; when it last held ({}): {}",
                c.left,
                if c.left == 1 { "" } else { "s" },
                crate::record::format_clock(c.last_held_ms),
                f.message
            );
            for l in wrap(&text, width) {
                out.push(Line::from(span(l, t.dim)));
            }
        }
        None => {
            for l in wrap(&format!("     {}", f.message), width) {
                out.push(Line::from(span(l, severity_style(f.severity, t))));
            }
        }
    }
    // What the strip has and more: up to 3 culprits, and the thresholds the rule compares.
    if !f.culprits.is_empty() {
        let by: Vec<String> = f.culprits.iter().take(3).map(|c| c.short()).collect();
        for l in wrap(&format!("     by: {}", by.join("; ")), width) {
            out.push(Line::from(span(l, t.text)));
        }
    }
    if let Some(th) = thresholds_text(&f.id, &of.judge.thresholds) {
        for l in wrap(&format!("     thresholds: {th}"), width) {
            out.push(Line::from(span(l, t.dim)));
        }
    }
    let tweak = match &f.tweak {
        Some(k) if replay => format!("     tweak: {k}"),
        Some(k) => format!("     tweak: {k} (a: tweak menu)"),
        None => "     tweak: none for this one".into(),
    };
    for l in wrap(&tweak, width) {
        out.push(Line::from(span(l, t.text)));
    }
    if let Some(h) = &item.held {
        for l in wrap(&format!("     {h}"), width) {
            out.push(Line::from(span(l, t.dim)));
        }
    }
}

/// `cpu_psi_some_pct 50`: the `[findings]` keys the rule `id` judges by, with the values in
/// force (docs/findings.md says what each means). `None` for a rule with none (`disk.stalled`).
pub fn thresholds_text(id: &str, th: &crate::findings::Thresholds) -> Option<String> {
    let rule = crate::findings::RULES.iter().find(|r| r.id == id)?;
    let values = serde_json::to_value(th).ok()?;
    let parts: Vec<String> = rule
        .thresholds
        .iter()
        .filter_map(|k| Some(format!("{k} {}", values.get(*k)?)))
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The list in a box over the dashboard, the full width, between the header's first row and
/// the footer (which keep saying where and what this is), as tall as it needs.
pub fn draw(f: &mut Frame, area: Rect, of: &Of, scroll: &Scroll, d: &Assessed, t: &Theme) {
    let inner_w = area.width.saturating_sub(2) as usize;
    let all = lines(of, d, t, inner_w);
    let total = all.len();
    let room = area.height.saturating_sub(2);
    let h = room.min(total as u16 + 2);
    let r = Rect::new(area.x, area.y + 1, area.width, h);
    let page = h.saturating_sub(2) as usize;
    let off = scroll.window(total.saturating_sub(page), page);
    let shown: Vec<Line<'static>> = all.into_iter().skip(off).take(page).collect();
    let title = if total > page {
        format!(
            " findings · {} · Up/Down/PgUp/PgDn · Esc closes ",
            position(off, shown.len(), total)
        )
    } else {
        " findings · Esc closes ".to_string()
    };
    super::dialog_box::framed(f, r, shown, title, t);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::culprits::Culprit;
    use crate::pane::Pane;

    fn culprit(comm: &str, pct: f64) -> Culprit {
        Culprit {
            pid: 1,
            comm: comm.into(),
            cgroup: None,
            metric: "cpu_pct".into(),
            value: pct,
            tasks: 1,
            kind: "process".into(),
            forks_per_s: None,
            wchan: None,
        }
    }

    /// `f` has what the strip has and more (issue 41 item 5): up to 3 culprits and the
    /// thresholds the rule compared, with their values.
    #[test]
    fn an_item_lists_three_culprits_and_its_thresholds() {
        let f = Finding {
            id: "cpu.pressure".into(),
            severity: Severity::Warn,
            message: "runnable tasks waited for a CPU 60% of the time (PSI cpu some)".into(),
            pane: Pane::Pressure,
            tweak: None,
            culprits: vec![
                culprit("cc1", 90.0),
                culprit("ld", 40.0),
                culprit("make", 20.0),
                culprit("sh", 5.0),
            ],
            event: false,
        };
        let judge = Judge::default();
        let of = Of {
            judge: &judge,
            at_sample: true,
            replay: false,
        };
        let item = Item {
            finding: &f,
            held: None,
            clearing: None,
        };
        let mut out = Vec::new();
        let theme = Theme::load(
            "dark",
            crate::ui::colors::ColorDepth::Mono,
            crate::ui::theme::GlyphSet::Ascii,
        )
        .expect("theme");
        item_lines(&item, &of, &theme, 100, &mut out);
        let text: Vec<String> = out.iter().map(|l| l.to_string()).collect();
        let by = text.iter().find(|l| l.trim_start().starts_with("by: "));
        assert_eq!(
            by.map(|l| l.trim()),
            Some("by: cc1 90%; ld 40%; make 20%"),
            "{text:#?}"
        );
        assert!(
            text.iter()
                .any(|l| l.trim() == "thresholds: cpu_psi_some_pct 50.0"),
            "{text:#?}"
        );
        assert_eq!(thresholds_text("disk.stalled", &judge.thresholds), None);
    }
}
