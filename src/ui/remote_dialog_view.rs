//! How a remote host's tweak dialogs look (`remote_tweak`): the remote's own preview, and its
//! knob menu with the value box (and a pick-list for a knob of a few values).

use super::dialog_box::{DialogView, Tone};
use super::remote_tweak::RemoteDialog;
use super::wrap::{hang, wrap};

impl RemoteDialog {
    pub fn view(&self, width: usize) -> DialogView {
        match self {
            RemoteDialog::Confirm { title, lines, .. } => DialogView {
                title: title.clone(),
                lines: lines
                    .iter()
                    .flat_map(|l| {
                        let tone = if l.contains(" → ") {
                            Tone::Head
                        } else {
                            Tone::Text
                        };
                        wrap(l, width).into_iter().map(move |w| (tone, w))
                    })
                    .collect(),
                hint: "y applies there · Enter/Esc/n cancel".into(),
                focus: None,
            },
            RemoteDialog::Menu {
                host,
                knobs,
                warnings,
                sel,
                typing,
            } => {
                let mut lines = Vec::new();
                let mut focus = None;
                for (i, k) in knobs.iter().enumerate() {
                    let start = lines.len();
                    let mark = if i == *sel { ">" } else { " " };
                    let head = format!("{mark} {:<28} {:<12} {}", k.name, k.now, k.allowed);
                    let tone = match (i == *sel, &k.disabled) {
                        (true, _) => Tone::Selected,
                        (false, Some(_)) => Tone::Dim,
                        (false, None) => Tone::Text,
                    };
                    // Columns as `tweak list` pads them; a line too long for the box wraps.
                    if head.chars().count() <= width {
                        lines.push((tone, head));
                    } else {
                        lines.extend(hang("", &head, width).into_iter().map(|l| (tone, l)));
                    }
                    if let Some(why) = &k.disabled {
                        lines.extend(
                            hang("    disabled: ", why, width)
                                .into_iter()
                                .map(|l| (Tone::Dim, l)),
                        );
                    }
                    if i == *sel {
                        if let Some(t) = typing {
                            lines.push((Tone::Head, format!("    new value: {t}_")));
                            if let Some(c) = k.choices() {
                                let marked: Vec<String> = c
                                    .iter()
                                    .map(|v| match v == t.trim() {
                                        true => format!("[{v}]"),
                                        false => v.clone(),
                                    })
                                    .collect();
                                let text = format!("↑/↓: {}", marked.join(" "));
                                lines.extend(
                                    hang("    ", &text, width)
                                        .into_iter()
                                        .map(|l| (Tone::Text, l)),
                                );
                            }
                        }
                        focus = Some(start..lines.len());
                    }
                }
                for w in warnings {
                    lines.extend(
                        hang("warning: ", w, width)
                            .into_iter()
                            .map(|l| (Tone::Warn, l)),
                    );
                }
                DialogView {
                    title: format!("knobs on {host} (set there, journalled there)"),
                    lines,
                    hint: if typing.is_some() {
                        "type the value (↑/↓ pick one of a list) · Enter previews · Esc back".into()
                    } else {
                        "↑/↓ pick · Enter a value · Esc closes".into()
                    },
                    focus,
                }
            }
        }
    }
}
