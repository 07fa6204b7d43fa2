//! The dashboard's tweaks on a remote host (`perftop ssh`): `a` lists the remote's knobs as its
//! `perftop tweak list` gives them, Enter on one asks for a value, and the preview the remote
//! makes (`tweak set --dry-run`, run there as root) opens in a dialog that names the host; `y`
//! runs `tweak set --yes` there and shows what it read back. `u` previews the remote's last
//! journalled change (`tweak undo --dry-run`) and `y` restores that very change (`--id N`).
//!
//! Nothing is applied here: the remote's journal and audit log are the record. Each step is one
//! `ssh` (`remote::tweak`), waited for (at most `ANSWER_WITHIN`) while the dashboard holds its
//! frame: a tweak is a deliberate, rare act and its answer is what the person waits for.

use super::dialog_box::{DialogView, Tone};
use super::wrap::{hang, wrap};
use crate::remote::tweak::{Answer, Remote, ANSWER_WITHIN};
use ratatui::crossterm::event::{KeyCode, KeyEvent};

/// One knob of the remote's `perftop tweak list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteKnob {
    pub name: String,
    pub now: String,
    pub allowed: String,
    pub description: String,
    pub disabled: Option<String>,
}

/// Reads `perftop tweak list`: a line per knob (`NAME NOW allowed: WORDS`), its description and
/// `disabled: WHY` indented under it; `warning: …` lines after them.
pub fn parse_list(text: &str) -> (Vec<RemoteKnob>, Vec<String>) {
    let (mut knobs, mut warnings) = (Vec::<RemoteKnob>::new(), Vec::new());
    for line in text.lines() {
        if let Some(w) = line.strip_prefix("warning: ") {
            warnings.push(w.to_string());
        } else if let Some(rest) = line.strip_prefix("    ") {
            let Some(k) = knobs.last_mut() else { continue };
            if let Some(why) = rest.strip_prefix("disabled: ") {
                k.disabled = Some(why.to_string());
            } else if !rest.starts_with("equivalent: ") && k.description.is_empty() {
                k.description = rest.to_string();
            }
        } else if let Some((head, allowed)) = line.split_once(" allowed: ") {
            let mut words = head.split_whitespace();
            if let (Some(name), Some(now)) = (words.next(), words.next()) {
                knobs.push(RemoteKnob {
                    name: name.to_string(),
                    now: now.to_string(),
                    allowed: allowed.trim().to_string(),
                    description: String::new(),
                    disabled: None,
                });
            }
        }
    }
    (knobs, warnings)
}

/// What `y` on a remote preview did, for the recording's timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    Applied {
        knob: String,
        value: String,
    },
    /// `was`: the value the change had set (its undo preview's first line).
    Undone {
        id: u64,
        knob: String,
        was: String,
    },
}

#[derive(Debug, Clone)]
pub enum RemoteDialog {
    /// The remote's knobs; `typing`: the value being typed for the selected one.
    Menu {
        host: String,
        knobs: Vec<RemoteKnob>,
        warnings: Vec<String>,
        sel: usize,
        typing: Option<String>,
    },
    /// The remote's own preview; `y` runs `run` there.
    Confirm {
        title: String,
        lines: Vec<String>,
        run: Vec<String>,
        done: Done,
    },
}

/// Where the dashboard's tweaks go on a remote host.
#[derive(Debug, Clone)]
pub struct RemoteTweaks {
    pub remote: Remote,
}

/// What a key or a command asks of the dialog: stay open (with what now shows), and the status.
pub struct Outcome {
    pub dialog: Option<RemoteDialog>,
    pub status: Option<String>,
    pub done: Option<Done>,
}

impl Outcome {
    fn status(dialog: Option<RemoteDialog>, s: impl Into<String>) -> Outcome {
        Outcome {
            dialog,
            status: Some(one_line(&s.into())),
            done: None,
        }
    }
}

fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" · ")
}

impl RemoteTweaks {
    fn host(&self) -> String {
        self.remote.target.label()
    }

    fn ask(&self, args: &[&str]) -> Answer {
        self.remote.run(args, ANSWER_WITHIN)
    }

    /// `a`: the remote's knob list.
    pub fn menu(&self) -> Outcome {
        match self.ask(&["list"]) {
            Answer::Done(text) => {
                let (knobs, warnings) = parse_list(&text);
                if knobs.is_empty() {
                    return Outcome::status(None, format!("{}: no knobs listed", self.host()));
                }
                Outcome {
                    dialog: Some(RemoteDialog::Menu {
                        host: self.host(),
                        knobs,
                        warnings,
                        sel: 0,
                        typing: None,
                    }),
                    status: None,
                    done: None,
                }
            }
            other => Outcome::status(None, other.text()),
        }
    }

    /// The remote's preview of setting `knob` to `value`, in a dialog that names the host.
    pub fn propose(&self, knob: &str, value: &str) -> Outcome {
        let host = self.host();
        match self.ask(&["set", "--dry-run", "--", knob, value]) {
            Answer::Done(text) => {
                let lines: Vec<String> = text.lines().map(str::to_string).collect();
                if !lines
                    .iter()
                    .any(|l| l.contains(" → ") && l.starts_with("  "))
                {
                    return Outcome::status(None, format!("{host}: {knob}: already {value}"));
                }
                Outcome {
                    dialog: Some(RemoteDialog::Confirm {
                        title: format!("on {host}: set {knob} → {value}?"),
                        lines,
                        run: ["set", "--yes", "--", knob, value]
                            .map(String::from)
                            .to_vec(),
                        done: Done::Applied {
                            knob: knob.to_string(),
                            value: value.to_string(),
                        },
                    }),
                    status: None,
                    done: None,
                }
            }
            other => Outcome::status(None, format!("{host}: {}", strip_host(&host, other))),
        }
    }

    /// `u`: the remote's preview of undoing its last journalled change.
    pub fn undo(&self) -> Outcome {
        let host = self.host();
        match self.ask(&["undo", "--dry-run"]) {
            Answer::Done(text) => {
                let first = text.lines().next().unwrap_or_default();
                // `undo change #N: KNOB → VALUE:`
                let parsed = first.strip_prefix("undo change #").and_then(|r| {
                    let (id, rest) = r.split_once(": ")?;
                    let (knob, was) = rest.split_once(" → ")?;
                    let was = was.strip_suffix(':').unwrap_or(was);
                    Some((id.parse::<u64>().ok()?, knob.to_string(), was.to_string()))
                });
                let Some((id, knob, was)) = parsed else {
                    return Outcome::status(None, format!("{host}: undo: {}", text.trim()));
                };
                Outcome {
                    dialog: Some(RemoteDialog::Confirm {
                        title: format!("on {host}: undo #{id} ({knob})?"),
                        lines: text.lines().map(str::to_string).collect(),
                        run: ["undo", "--id", &id.to_string(), "--yes"]
                            .map(String::from)
                            .to_vec(),
                        done: Done::Undone { id, knob, was },
                    }),
                    status: None,
                    done: None,
                }
            }
            other => Outcome::status(None, format!("{host}: {}", strip_host(&host, other))),
        }
    }

    /// A key in a remote dialog.
    pub fn key(&self, d: RemoteDialog, ev: KeyEvent) -> Outcome {
        match d {
            RemoteDialog::Menu {
                host,
                knobs,
                warnings,
                mut sel,
                mut typing,
            } => {
                let stay = |sel, typing| {
                    Some(RemoteDialog::Menu {
                        host: host.clone(),
                        knobs: knobs.clone(),
                        warnings: warnings.clone(),
                        sel,
                        typing,
                    })
                };
                if let Some(text) = &mut typing {
                    if super::line_edit::edit(text, &ev, 64) {
                        return Outcome::status(stay(sel, typing), "");
                    }
                    return match ev.code {
                        KeyCode::Esc => Outcome::status(stay(sel, None), ""),
                        KeyCode::Enter if !text.trim().is_empty() => {
                            let name = knobs.get(sel).map_or("", |k| k.name.as_str());
                            let out = self.propose(name, text.trim());
                            match out.dialog {
                                // Refused: back to the typing, the reason on the status line.
                                None => Outcome::status(
                                    stay(sel, typing),
                                    out.status.unwrap_or_default(),
                                ),
                                Some(_) => out,
                            }
                        }
                        _ => Outcome::status(stay(sel, typing), ""),
                    };
                }
                let last = knobs.len().saturating_sub(1);
                match ev.code {
                    KeyCode::Up => sel = sel.saturating_sub(1),
                    KeyCode::Down => sel = (sel + 1).min(last),
                    KeyCode::PageUp => sel = sel.saturating_sub(5),
                    KeyCode::PageDown => sel = (sel + 5).min(last),
                    KeyCode::Home => sel = 0,
                    KeyCode::End => sel = last,
                    KeyCode::Esc | KeyCode::Char('a') | KeyCode::Char('q') => {
                        return Outcome::status(None, "")
                    }
                    KeyCode::Enter => match knobs.get(sel).and_then(|k| k.disabled.as_ref()) {
                        Some(why) => {
                            let name = knobs.get(sel).map_or("", |k| k.name.as_str());
                            return Outcome::status(
                                stay(sel, None),
                                format!("{name}: disabled on {}: {why}", self.host()),
                            );
                        }
                        None => typing = Some(String::new()),
                    },
                    _ => {}
                }
                Outcome::status(stay(sel, typing), "")
            }
            RemoteDialog::Confirm { run, done, .. } => {
                if ev.code != KeyCode::Char('y') {
                    return Outcome::status(None, "cancelled: nothing changed");
                }
                let host = self.host();
                let args: Vec<&str> = run.iter().map(String::as_str).collect();
                match self.ask(&args) {
                    Answer::Done(text) => Outcome {
                        dialog: None,
                        status: Some(one_line(&format!(
                            "{host}: {} · {}",
                            match &done {
                                Done::Applied { knob, value } => {
                                    format!("{knob} = {value} there (u undoes it)")
                                }
                                Done::Undone { id, knob, .. } =>
                                    format!("#{id} {knob} restored there"),
                            },
                            read_back(&text),
                        ))),
                        done: Some(done),
                    },
                    // Whether the remote finished is its journal's to say (it journals before
                    // it writes): `u` previews its last change once the link is back.
                    Answer::Lost(why) => Outcome::status(
                        None,
                        format!("{why} · once it is back, u shows whether the change was made"),
                    ),
                    Answer::Refused(text) => {
                        Outcome::status(None, format!("{host}: NOT DONE: {}", read_back(&text)))
                    }
                    other => Outcome::status(None, format!("{host}: {}", strip_host(&host, other))),
                }
            }
        }
    }
}

/// The remote's report without the preview it printed first (the lines with `→`, its notes):
/// what was written and read back (`ok`, `FAILED`, `restored`), warnings, errors.
/// Many files that all read back alike (a governor on 64 CPUs) are counted, not listed.
pub fn read_back(text: &str) -> String {
    let mut keep: Vec<&str> = Vec::new();
    for l in text.lines().map(str::trim) {
        // The last word (`applied; …`, `undone`) is said by the dashboard's own words first.
        let last_word = l.starts_with("applied; ") || l == "undone";
        if l.is_empty()
            || last_word
            || l.contains(" → ")
            || l.starts_with("note: ")
            || keep.contains(&l)
        {
            continue;
        }
        keep.push(l);
    }
    let ok = keep.iter().filter(|l| l.starts_with("ok ")).count();
    if ok > 2 {
        let first = keep.iter().position(|l| l.starts_with("ok ")).unwrap_or(0);
        keep.retain(|l| !l.starts_with("ok "));
        let n = format!("{ok} files written and read back");
        let mut out: Vec<String> = keep.iter().map(|l| l.to_string()).collect();
        out.insert(first.min(out.len()), n);
        return out.join("\n");
    }
    keep.join("\n")
}

/// An answer's words without a leading `HOST: ` (the caller says the host once).
fn strip_host(host: &str, a: Answer) -> String {
    let t = a.text();
    t.strip_prefix(&format!("{host}: "))
        .unwrap_or(t)
        .to_string()
}

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
                        "type the value · Enter previews · Esc back".into()
                    } else {
                        "↑/↓ pick · Enter a value · Esc closes".into()
                    },
                    focus,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remote_list_reads_back_into_knobs() {
        let text = "vm.swappiness                  60             allowed: 0 – 200\n    \
                    how eagerly the kernel swaps\n\
                    governor                       -              allowed: \n    \
                    the CPU frequency governor\n    disabled: no cpufreq here\n    \
                    equivalent: echo VALUE | sudo tee /x\n\
                    warning: tuned is running and may set these back\n";
        let (knobs, warnings) = parse_list(text);
        assert_eq!(
            knobs,
            [
                RemoteKnob {
                    name: "vm.swappiness".into(),
                    now: "60".into(),
                    allowed: "0 – 200".into(),
                    description: "how eagerly the kernel swaps".into(),
                    disabled: None,
                },
                RemoteKnob {
                    name: "governor".into(),
                    now: "-".into(),
                    allowed: String::new(),
                    description: "the CPU frequency governor".into(),
                    disabled: Some("no cpufreq here".into()),
                }
            ]
        );
        assert_eq!(warnings, ["tuned is running and may set these back"]);
    }

    /// The menu's keys that stay here (no ssh): a disabled knob says why naming the host, an
    /// enabled one opens the value box, Esc goes back to the list, Esc again closes.
    #[test]
    fn the_remote_menu_picks_and_types_without_asking_the_remote() {
        let (knobs, warnings) = parse_list(
            "governor  -  allowed: \n    the governor\n    disabled: no cpufreq here\n\
             vm.swappiness  60  allowed: 0 – 200\n    swap\n",
        );
        let r = RemoteTweaks {
            remote: Remote {
                target: crate::remote::Target::parse("db1:2222").expect("target"),
                root: None,
                state_dir: None,
            },
        };
        let key = |c| KeyEvent::new(c, ratatui::crossterm::event::KeyModifiers::NONE);
        let menu = RemoteDialog::Menu {
            host: "db1:2222".into(),
            knobs,
            warnings,
            sel: 0,
            typing: None,
        };
        let out = r.key(menu, key(KeyCode::Enter));
        assert_eq!(
            out.status.as_deref(),
            Some("governor: disabled on db1:2222: no cpufreq here")
        );
        let out = r.key(out.dialog.expect("still open"), key(KeyCode::Down));
        let out = r.key(out.dialog.expect("still open"), key(KeyCode::Enter));
        let out = r.key(out.dialog.expect("still open"), key(KeyCode::Char('3')));
        let d = out.dialog.expect("still open");
        assert!(matches!(&d, RemoteDialog::Menu { sel: 1, typing: Some(t), .. } if t == "3"));
        let v = d.view(60);
        assert!(v.title.contains("db1:2222"), "{}", v.title);
        assert!(
            v.lines.iter().any(|(_, l)| l == "    new value: 3_"),
            "{:?}",
            v.lines
        );
        let out = r.key(d, key(KeyCode::Esc));
        let d = out.dialog.expect("back to the list");
        assert!(matches!(&d, RemoteDialog::Menu { typing: None, .. }));
        assert!(r.key(d, key(KeyCode::Esc)).dialog.is_none());
    }

    /// `tweak set --yes`'s output as `mode::tweak::set` prints it: the preview, the report.
    #[test]
    fn the_read_back_leaves_the_preview_out() {
        let out = "vm.swappiness → 61\n  vm.swappiness /proc/sys/vm/swappiness: 60 → 61\n  \
                   ok      vm.swappiness proc/sys/vm/swappiness = 61\n\
                   applied; `perftop tweak undo` restores the old values\n";
        assert_eq!(
            read_back(out),
            "ok      vm.swappiness proc/sys/vm/swappiness = 61"
        );
        let many: String = (0..4)
            .map(|i| format!("  ok      cpu{i} x = performance\n"))
            .collect();
        assert_eq!(
            read_back(&format!("governor → performance\n{many}applied\n")),
            "4 files written and read back\napplied"
        );
    }
}
