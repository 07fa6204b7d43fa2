//! The dashboard's tweaks on a remote host (`perftop ssh`): `a` lists the remote's knobs as its
//! `perftop tweak list` gives them, Enter on one asks for a value, and the preview the remote
//! makes (`tweak set --dry-run`, run there as root) opens in a dialog that names the host; `y`
//! runs `tweak set --yes` there and shows what it read back. `u` previews the remote's last
//! journalled change (`tweak undo --dry-run`) and `y` restores that very change (`--id N`).
//!
//! Nothing is applied here: the remote's journal and audit log are the record. Each step is one
//! `ssh` (`remote::tweak`), which may take up to `ANSWER_WITHIN`: the keys here only ask for it
//! (`Outcome::start`), `remote_step` runs it on a thread while the dashboard goes on, and its
//! answer comes back through `answered`.

pub use super::remote_knobs::{parse_list, read_back, RemoteKnob};
use crate::remote::tweak::{Answer, Remote};
use ratatui::crossterm::event::{KeyCode, KeyEvent};

/// What the answer of a step is for.
#[derive(Debug, Clone)]
pub enum Then {
    /// `tweak list`: the knob menu.
    Menu,
    /// `tweak set --dry-run`: the preview; refused, back to `back` (the menu, value typed).
    Propose {
        knob: String,
        value: String,
        back: Box<RemoteDialog>,
    },
    /// `tweak undo --dry-run`: the undo preview.
    Undo,
    /// `tweak set --yes` or `tweak undo --id N --yes`: the read-back.
    Apply(Done),
}

/// A step to start: the remote `perftop tweak` words, what it is in words, what its answer is for.
#[derive(Debug, Clone)]
pub struct Request {
    pub args: Vec<String>,
    pub what: String,
    pub then: Then,
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
    /// A step to run on the remote; its answer makes the next outcome (`answered`).
    pub start: Option<Request>,
}

impl Outcome {
    fn status(dialog: Option<RemoteDialog>, s: impl Into<String>) -> Outcome {
        Outcome {
            dialog,
            status: Some(one_line(&s.into())),
            done: None,
            start: None,
        }
    }

    fn dialog(d: RemoteDialog) -> Outcome {
        Outcome {
            dialog: Some(d),
            status: None,
            done: None,
            start: None,
        }
    }

    /// Runs `perftop tweak ARGS` there; `what` names it on the status line meanwhile.
    fn start(args: &[&str], what: String, then: Then) -> Outcome {
        Outcome {
            dialog: None,
            status: None,
            done: None,
            start: Some(Request {
                args: args.iter().map(|a| a.to_string()).collect(),
                what,
                then,
            }),
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

    /// `a`: asks for the remote's knob list.
    pub fn menu(&self) -> Outcome {
        Outcome::start(&["list"], "tweak list".into(), Then::Menu)
    }

    /// A step's answer, as the dialog or the status line it makes.
    pub fn answered(&self, then: Then, a: Answer) -> Outcome {
        match then {
            Then::Menu => self.menu_answer(a),
            Then::Propose { knob, value, back } => {
                let out = self.preview(&knob, &value, a);
                match out.dialog {
                    // Refused: back to the typing, the reason on the status line.
                    None => Outcome::status(Some(*back), out.status.unwrap_or_default()),
                    Some(_) => out,
                }
            }
            Then::Undo => self.undo_answer(a),
            Then::Apply(done) => self.applied(done, a),
        }
    }

    /// The knob menu from `tweak list`'s answer.
    fn menu_answer(&self, a: Answer) -> Outcome {
        match a {
            Answer::Done(text) => {
                let (knobs, warnings) = parse_list(&text);
                if knobs.is_empty() {
                    return Outcome::status(None, format!("{}: no knobs listed", self.host()));
                }
                Outcome::dialog(RemoteDialog::Menu {
                    host: self.host(),
                    knobs,
                    warnings,
                    sel: 0,
                    typing: None,
                })
            }
            other => Outcome::status(None, other.text()),
        }
    }

    /// The remote's preview of setting `knob` to `value` (its answer to `set --dry-run`), in a
    /// dialog that names the host.
    fn preview(&self, knob: &str, value: &str, a: Answer) -> Outcome {
        let host = self.host();
        match a {
            Answer::Done(text) => {
                let lines: Vec<String> = text.lines().map(str::to_string).collect();
                if !lines
                    .iter()
                    .any(|l| l.contains(" → ") && l.starts_with("  "))
                {
                    return Outcome::status(None, format!("{host}: {knob}: already {value}"));
                }
                Outcome::dialog(RemoteDialog::Confirm {
                    title: format!("on {host}: set {knob} → {value}?"),
                    lines,
                    run: ["set", "--yes", "--", knob, value]
                        .map(String::from)
                        .to_vec(),
                    done: Done::Applied {
                        knob: knob.to_string(),
                        value: value.to_string(),
                    },
                })
            }
            other => Outcome::status(None, format!("{host}: {}", strip_host(&host, other))),
        }
    }

    /// `u`: asks for the remote's preview of undoing its last journalled change.
    pub fn undo(&self) -> Outcome {
        Outcome::start(
            &["undo", "--dry-run"],
            "tweak undo --dry-run".into(),
            Then::Undo,
        )
    }

    /// The undo preview from `undo --dry-run`'s answer.
    fn undo_answer(&self, a: Answer) -> Outcome {
        let host = self.host();
        match a {
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
                Outcome::dialog(RemoteDialog::Confirm {
                    title: format!("on {host}: undo #{id} ({knob})?"),
                    lines: text.lines().map(str::to_string).collect(),
                    run: ["undo", "--id", &id.to_string(), "--yes"]
                        .map(String::from)
                        .to_vec(),
                    done: Done::Undone { id, knob, was },
                })
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
                let choices = knobs.get(sel).and_then(RemoteKnob::choices);
                if let Some(text) = &mut typing {
                    // A knob of a few values: ↑/↓ pick the next or previous one.
                    if let (Some(c), KeyCode::Up | KeyCode::Down) = (&choices, ev.code) {
                        let at = c.iter().position(|v| v == text.trim());
                        let next = match (ev.code, at) {
                            (KeyCode::Up, Some(i)) => i.saturating_sub(1),
                            (KeyCode::Down, Some(i)) => (i + 1).min(c.len() - 1),
                            _ => 0,
                        };
                        *text = c.get(next).cloned().unwrap_or_default();
                        return Outcome::status(stay(sel, typing), "");
                    }
                    if super::line_edit::edit(text, &ev, 64) {
                        return Outcome::status(stay(sel, typing), "");
                    }
                    return match ev.code {
                        KeyCode::Esc => Outcome::status(stay(sel, None), ""),
                        KeyCode::Enter if !text.trim().is_empty() => {
                            let name = knobs.get(sel).map_or("", |k| k.name.as_str());
                            let value = text.trim().to_string();
                            let back = stay(sel, typing.clone());
                            Outcome::start(
                                &["set", "--dry-run", "--", name, &value],
                                format!("tweak set {name} {value} --dry-run"),
                                Then::Propose {
                                    knob: name.to_string(),
                                    value: value.clone(),
                                    back: Box::new(back.unwrap_or(RemoteDialog::Menu {
                                        host: host.clone(),
                                        knobs: Vec::new(),
                                        warnings: Vec::new(),
                                        sel: 0,
                                        typing: None,
                                    })),
                                },
                            )
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
                        // A pick-list starts on the value it has now (or the first one).
                        None => {
                            let now = knobs.get(sel).map(|k| k.now.clone()).unwrap_or_default();
                            typing = Some(match &choices {
                                Some(c) if c.contains(&now) => now,
                                Some(c) => c.first().cloned().unwrap_or_default(),
                                None => String::new(),
                            })
                        }
                    },
                    _ => {}
                }
                Outcome::status(stay(sel, typing), "")
            }
            RemoteDialog::Confirm { run, done, .. } => {
                if ev.code != KeyCode::Char('y') {
                    return Outcome::status(None, "cancelled: nothing changed");
                }
                let args: Vec<&str> = run.iter().map(String::as_str).collect();
                let what = format!("tweak {}", args.join(" "));
                Outcome::start(&args, what, Then::Apply(done))
            }
        }
    }

    /// The read-back of `set --yes` or `undo --id N --yes`.
    fn applied(&self, done: Done, a: Answer) -> Outcome {
        let host = self.host();
        match a {
            Answer::Done(text) => Outcome {
                dialog: None,
                status: Some(one_line(&format!(
                    "{host}: {} · {}",
                    match &done {
                        Done::Applied { knob, value } => {
                            format!("{knob} = {value} there (u undoes it)")
                        }
                        Done::Undone { id, knob, .. } => format!("#{id} {knob} restored there"),
                    },
                    read_back(&text),
                ))),
                done: Some(done),
                start: None,
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

/// An answer's words without a leading `HOST: ` (the caller says the host once).
fn strip_host(host: &str, a: Answer) -> String {
    let t = a.text();
    t.strip_prefix(&format!("{host}: "))
        .unwrap_or(t)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A knob of a few values (`allowed: a, b`) is picked with ↑/↓ in the value box, starting
    /// on its value there; Enter asks the remote for the preview of the one picked. A range
    /// is typed as before.
    #[test]
    fn a_choice_knob_is_picked_from_its_list() {
        let r = RemoteTweaks {
            remote: Remote {
                target: crate::remote::Target::parse("db1").expect("target"),
                root: None,
                state_dir: None,
            },
        };
        let list = "governor  powersave  allowed: performance, powersave, schedutil\n    gov\n\
                    vm.swappiness  60  allowed: 0 – 200\n    swap\n";
        let out = r.answered(Then::Menu, Answer::Done(list.into()));
        let key = |c| KeyEvent::new(c, ratatui::crossterm::event::KeyModifiers::NONE);
        let mut d = out.dialog.expect("the menu");
        for k in [KeyCode::Enter, KeyCode::Down] {
            d = r.key(d, key(k)).dialog.expect("still open");
        }
        let v = d.view(80);
        assert!(
            v.lines
                .iter()
                .any(|(_, l)| l == "    ↑/↓: performance powersave [schedutil]"),
            "{:?}",
            v.lines
        );
        let out = r.key(d, key(KeyCode::Enter));
        let start = out.start.expect("a preview asked for");
        assert_eq!(
            start.args,
            ["set", "--dry-run", "--", "governor", "schedutil"]
        );
        // The range knob still types: ↓ then Enter on it opens an empty value box.
        let out = r.answered(Then::Menu, Answer::Done(list.into()));
        let mut d = out.dialog.expect("the menu");
        for k in [KeyCode::Down, KeyCode::Enter, KeyCode::Down] {
            d = r.key(d, key(k)).dialog.expect("still open");
        }
        assert!(matches!(&d, RemoteDialog::Menu { sel: 1, typing: Some(t), .. } if t.is_empty()));
    }
}
