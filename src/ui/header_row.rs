//! The header's second row: who perftop runs as (`as root`, `as user: tweaks need root`, the
//! replayed file), the `--root` it reads when one is given, what perftop itself costs, the VM
//! and boot context, and what went wrong (since-boot averages, a lost link, unreadable files).
//! Every field is labelled, so that "root" never means two things, and the row is never cut
//! mid-word: fields that do not fit are left out whole, the least telling first.

use super::app::App;
use super::spans::span;
use super::theme::Theme;
use crate::derive::Derived;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Who perftop runs as, for the header.
pub fn privilege(is_root: bool) -> String {
    if is_root {
        "as root".into()
    } else {
        "as user: tweaks need root".into()
    }
}

/// One field of the row: its text, style, and how much it matters (lower is dropped first).
struct Field {
    text: String,
    style: Style,
    keep: u8,
    /// A list field (`VM: a, b, c`): its label and items. Short of room it loses its last
    /// items, one at a time, before it goes whole.
    list: Option<(&'static str, Vec<String>)>,
}

/// The fields in screen order.
fn fields(app: &App, d: &Derived, t: &Theme) -> Vec<Field> {
    let h = &d.host;
    let mut f = Vec::new();
    let mut add = |text: String, style: Style, keep: u8| {
        if !text.is_empty() {
            f.push(Field {
                text,
                style,
                keep,
                list: None,
            });
        }
    };
    if d.since_boot {
        add(
            "since-boot averages; rates from next sample".into(),
            t.warn,
            9,
        );
    }
    // perftop ssh: a lost link first, where it cannot be cut off.
    if let Some(l) = &app.session.link {
        add(l.clone(), t.crit, 9);
    }
    add(t.glyphs.text(&app.session.privilege).into_owned(), t.dim, 7);
    if let Some(r) = &app.session.root_label {
        add(format!("--root {r}"), t.info, 8);
    }
    let cost = &app.session.self_cost;
    if let (Some(cpu), Some(rss)) = (cost.cpu_pct, cost.rss_kb) {
        add(
            format!(
                "perftop itself: cpu {cpu:.2}% rss {}",
                crate::units::kb(Some(rss))
            ),
            t.dim,
            4,
        );
    }
    let boot = crate::view::boot_context(h);
    if !boot.is_empty() {
        add(format!("boot: {}", boot.join(" ")), t.dim, 2);
    }
    if !h.problems.is_empty() {
        add(
            format!("{} unreadable file(s)", h.problems.len()),
            t.warn,
            6,
        );
    }
    if !h.vm_hints.is_empty() {
        // Before the boot field, in screen order.
        let at = f.len() - usize::from(!boot.is_empty()) - usize::from(!h.problems.is_empty());
        f.insert(at, list_field("VM: ", h.vm_hints.clone(), t.dim, 3));
    }
    f
}

fn list_field(label: &'static str, items: Vec<String>, style: Style, keep: u8) -> Field {
    Field {
        text: format!("{label}{}", items.join(", ")),
        style,
        keep,
        list: Some((label, items)),
    }
}

/// The fields that fit `width` with two spaces between them, whole, in screen order; a field
/// that is kept but longer than the whole row alone (a long `--root` path) ends in `~`.
fn fit(mut f: Vec<Field>, width: usize) -> Vec<Field> {
    let len = |f: &[Field]| {
        f.iter().map(|x| x.text.chars().count()).sum::<usize>() + 2 * f.len().saturating_sub(1)
    };
    while len(&f) > width && f.len() > 1 {
        // The least telling goes first; of equals, the later one.
        let Some(drop) = (0..f.len()).rev().min_by_key(|&i| f[i].keep) else {
            break;
        };
        match &mut f[drop].list {
            Some((label, items)) if items.len() > 1 => {
                items.pop();
                let text = format!("{label}{}", items.join(", "));
                f[drop].text = text;
            }
            _ => {
                f.remove(drop);
            }
        }
    }
    if let [only] = f.as_mut_slice() {
        only.text = crate::units::fit(&only.text, width);
    }
    f
}

/// The row at `width` columns.
pub fn line(app: &App, d: &Derived, t: &Theme, width: usize) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    for (i, f) in fit(fields(app, d, t), width).into_iter().enumerate() {
        if i > 0 {
            spans.push(span("  ", t.dim));
        }
        spans.push(span(f.text, f.style));
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(text: &str, keep: u8) -> Field {
        Field {
            text: text.into(),
            style: Style::default(),
            keep,
            list: None,
        }
    }

    fn texts(f: &[Field]) -> Vec<&str> {
        f.iter().map(|x| x.text.as_str()).collect()
    }

    #[test]
    fn fields_go_whole_least_telling_first() {
        let row = || {
            vec![
                field("as root", 7),
                field("--root /srv/fixture", 8),
                field("perftop itself: cpu 0.33% rss 8.0M", 4),
                field("VM: kvm", 3),
                field("boot: mitigations=off", 2),
            ]
        };
        // 7 + 19 + 34 + 7 + 21 + 4 × 2 = 96 columns.
        assert_eq!(texts(&fit(row(), 96)).len(), 5);
        assert_eq!(
            texts(&fit(row(), 95)),
            [
                "as root",
                "--root /srv/fixture",
                "perftop itself: cpu 0.33% rss 8.0M",
                "VM: kvm"
            ]
        );
        assert_eq!(texts(&fit(row(), 40)), ["as root", "--root /srv/fixture"]);
        assert_eq!(texts(&fit(row(), 20)), ["--root /srv/fixture"]);
        assert_eq!(texts(&fit(row(), 10)), ["--root /s~"]);
    }

    /// A list field loses its last items before it goes whole (the 80-column row used to
    /// drop the VM's hints all at once, leaving `as root` alone).
    #[test]
    fn a_list_field_sheds_items_before_it_goes() {
        let vm = |w| {
            let row = vec![
                field("as root", 7),
                list_field(
                    "VM: ",
                    vec!["hypervisor detected".into(), "no cpufreq".into()],
                    Style::default(),
                    3,
                ),
            ];
            texts(&fit(row, w))
                .into_iter()
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(vm(80), ["as root", "VM: hypervisor detected, no cpufreq"]);
        assert_eq!(vm(40), ["as root", "VM: hypervisor detected"]);
        assert_eq!(vm(20), ["as root"]);
    }
}
