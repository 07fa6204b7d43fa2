//! The dashboard's side of the safe tweaks: `g` governor toggle, `a` knob menu, `u` undo, and
//! their dialogs. It lives in `ui` so that `crate::tweak` knows nothing of the screen or keys.
//!
//! Confirm dialogs apply only on `y`; Enter, Esc and every other key cancel.

use crate::tweak::apply::{self, FsWriter, UndoPreview, Which};
use crate::tweak::journal::Journal;
use crate::tweak::knob::{self, Allowed};
use crate::tweak::plan::{self, Plan};
use crate::tweak::Ctx;
use ratatui::crossterm::event::{KeyCode, KeyEvent};

#[derive(Debug, Clone)]
pub enum Pending {
    Apply(Plan),
    /// The journalled change the undo restores (id, plan).
    Undo(u64, Plan),
}

#[derive(Debug, Clone)]
pub enum Dialog {
    /// `y` runs `pending`; anything else cancels.
    Confirm {
        title: String,
        lines: Vec<String>,
        pending: Pending,
    },
    /// Governor chooser: `1`..`9` picks a value (then a confirm dialog).
    Choose { title: String, choices: Vec<String> },
    /// Read-only information (the knob menu); any key closes.
    Info { title: String, lines: Vec<String> },
}

impl Dialog {
    pub fn title(&self) -> &str {
        match self {
            Dialog::Confirm { title, .. }
            | Dialog::Choose { title, .. }
            | Dialog::Info { title, .. } => title,
        }
    }

    pub fn lines(&self) -> Vec<String> {
        match self {
            Dialog::Confirm { lines, .. } => {
                let mut l = lines.clone();
                l.push(String::new());
                l.push("y applies · Enter/Esc/n cancel".into());
                l
            }
            Dialog::Choose { choices, .. } => {
                let mut l: Vec<String> = choices
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("{} {c}", i + 1))
                    .collect();
                l.push(String::new());
                l.push("digit picks · Esc cancels".into());
                l
            }
            Dialog::Info { lines, .. } => {
                let mut l = lines.clone();
                l.push(String::new());
                l.push(
                    "l: latency hold · any other key closes · perftop tweak set for the rest"
                        .into(),
                );
                l
            }
        }
    }
}

/// `ctx` is `None` where tweaks are off (replay); `dialog` is the open dialog.
#[derive(Debug, Default)]
pub struct TweakState {
    pub ctx: Option<Ctx>,
    pub dialog: Option<Dialog>,
    /// PM-QoS latency hold (`l` in the menu); released when dropped, i.e. when perftop exits.
    pub hold: Option<crate::tweak::pmqos::LatencyHold>,
    /// The change just applied or undone, for the recording's timeline (taken by the App).
    pub done: Option<crate::record::Action>,
}

/// The old values a plan writes over, in one word when they agree (`powersave`), else `mixed`.
fn old_values(p: &Plan) -> Option<String> {
    let mut olds = p.writes().map(|c| c.old.as_str());
    let first = olds.next()?;
    Some(if olds.all(|o| o == first) {
        first.to_string()
    } else {
        "mixed".to_string()
    })
}

/// A multi-line message (the journal damage list) on the one status line.
fn one_line(s: &str) -> String {
    s.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The status line, then `warning: …` for each warning (an audit log that could not be written
/// does not make an applied change read as failed).
fn with_warnings(mut status: String, warnings: &[String]) -> String {
    for w in warnings {
        status.push_str(&format!(" · warning: {w}"));
    }
    one_line(&status)
}

/// The timeline record for a plan applied (`undone` swaps from and to).
fn action_of(p: &Plan, undone: bool) -> crate::record::Action {
    let (from, to) = (old_values(p), Some(p.value.clone()));
    let (from, to) = if undone { (to, from) } else { (from, to) };
    crate::record::Action {
        kind: if undone { "undone" } else { "applied" }.into(),
        name: p.knob.clone(),
        from,
        to,
    }
}

impl TweakState {
    fn ctx(&self) -> Result<&Ctx, String> {
        match &self.ctx {
            Some(c) if !c.read_only => Ok(c),
            _ => Err("tweaks are disabled here (read-only or replay)".into()),
        }
    }

    fn confirm(&mut self, p: Plan) -> Option<String> {
        let ctx = self.ctx.as_ref()?;
        if p.writes().next().is_none() {
            return Some(format!("{}: already {}", p.knob, p.value));
        }
        let _ = crate::tweak::audit::log(&ctx.state_dir, "preview", &p, &[]);
        let lines = p
            .preview(ctx)
            .lines()
            .skip(1)
            .map(|l| l.replace(&ctx.root.base().display().to_string(), ""))
            .collect();
        self.dialog = Some(Dialog::Confirm {
            title: format!("set {} → {}?", p.knob, p.value),
            lines,
            pending: Pending::Apply(p),
        });
        None
    }

    fn propose(&mut self, knob: &str, value: &str) -> Option<String> {
        let ctx = match self.ctx() {
            Ok(c) => c,
            Err(e) => return Some(e),
        };
        match plan::plan(ctx, knob, value) {
            Ok(p) => self.confirm(p),
            Err(r) => Some(match r.command {
                Some(c) => format!("{}; run: {c}", r.reason),
                None => r.reason,
            }),
        }
    }

    /// `g`: to performance, or back to what was there before (a chooser when ambiguous).
    pub fn governor_toggle(&mut self) -> Option<String> {
        let ctx = match self.ctx() {
            Ok(c) => c.clone(),
            Err(e) => return Some(e),
        };
        let k = match knob::find(&ctx, "governor") {
            Ok(k) => k,
            Err(e) => return Some(e),
        };
        let all_perf = !k.current.is_empty()
            && k.current
                .iter()
                .all(|c| c.as_deref() == Some("performance"));
        if !all_perf {
            return self.propose("governor", "performance");
        }
        let allowed = match &k.allowed {
            Allowed::Choices(c) => c.clone(),
            Allowed::Range { .. } => Vec::new(),
        };
        // What perftop changed away from, if the last journalled change was the governor.
        let before = Journal::new(&ctx.state_dir)
            .last_open()
            .filter(|(_, p)| p.knob == "governor" && p.value == "performance")
            .and_then(|(_, p)| p.writes().next().map(|c| c.old.clone()))
            .filter(|v| allowed.contains(v));
        if let Some(v) = before {
            return self.propose("governor", &v);
        }
        let others: Vec<String> = allowed
            .into_iter()
            .filter(|g| g != "performance")
            .take(9)
            .collect();
        match others.len() {
            0 => Some("governor: no other governor is available".into()),
            1 => self.propose("governor", &others[0]),
            _ => {
                self.dialog = Some(Dialog::Choose {
                    title: "governor: back to which?".into(),
                    choices: others,
                });
                None
            }
        }
    }

    /// `a`: every knob, its value, and why it is disabled.
    pub fn menu(&mut self) -> Option<String> {
        let Some(ctx) = self.ctx.clone() else {
            return Some("tweaks are disabled here (replay)".into());
        };
        let mut lines = Vec::new();
        for k in knob::registry(&ctx) {
            let state = match &k.disabled {
                None => format!("allowed: {}", k.allowed_text()),
                Some(why) => format!("disabled: {why}"),
            };
            lines.push(format!("{:<28} {:<12} {state}", k.name, k.current_text()));
        }
        lines.push(format!(
            "{:<28} {:<12} l toggles a 0 µs wake-up latency hold (ends when perftop exits)",
            "pmqos.cpu_dma_latency",
            if self.hold.is_some() { "held" } else { "off" }
        ));
        for o in crate::tweak::overriders(&ctx.root) {
            lines.push(format!("warning: {o} may override these settings"));
        }
        self.dialog = Some(Dialog::Info {
            title: "tweaks (g: governor toggle, u: undo)".into(),
            lines,
        });
        None
    }

    /// `u`: preview restoring the last journalled change.
    pub fn undo(&mut self) -> Option<String> {
        let ctx = match self.ctx() {
            Ok(c) => c.clone(),
            Err(e) => return Some(e),
        };
        match apply::undo_preview(&ctx, Which::Last) {
            Ok(None) => Some("nothing to undo".into()),
            Err(e) => Some(one_line(&format!("undo: {e:#}"))),
            Ok(Some(UndoPreview {
                id,
                plan: p,
                warnings,
            })) => {
                let mut lines: Vec<String> = p
                    .changes
                    .iter()
                    .filter(|c| {
                        c.undo
                            && crate::tweak::read_value(&ctx.root, &c.rel).as_deref()
                                != Some(c.old.as_str())
                    })
                    .map(|c| format!("  {:<10} {} → {}", c.label, c.rel, c.old))
                    .collect();
                lines.extend(warnings.into_iter().map(|w| format!("warning: {w}")));
                self.dialog = Some(Dialog::Confirm {
                    title: format!("undo #{id} {} → {}?", p.knob, p.value),
                    lines,
                    pending: Pending::Undo(id, p),
                });
                None
            }
        }
    }

    /// A key while a dialog is open; returns the status line.
    pub fn key(&mut self, ev: KeyEvent) -> Option<String> {
        let dialog = self.dialog.take()?;
        match dialog {
            Dialog::Info { .. } if ev.code == KeyCode::Char('l') => {
                if self.hold.take().is_some() {
                    return Some("PM-QoS latency hold released".into());
                }
                let ctx = match self.ctx() {
                    Ok(c) => c.clone(),
                    Err(e) => return Some(e),
                };
                match crate::tweak::pmqos::hold(&ctx, 0) {
                    Ok(h) => {
                        self.hold = Some(h);
                        Some("PM-QoS: CPU wake-up latency held at 0 µs until perftop exits".into())
                    }
                    Err(e) => Some(format!("PM-QoS hold: {e}")),
                }
            }
            Dialog::Info { .. } => None,
            Dialog::Choose { choices, .. } => {
                let KeyCode::Char(c) = ev.code else {
                    return Some("cancelled".into());
                };
                let pick = c
                    .to_digit(10)
                    .and_then(|d| choices.get((d as usize).checked_sub(1)?).cloned());
                match pick {
                    Some(v) => self.propose("governor", &v),
                    None => Some("cancelled".into()),
                }
            }
            Dialog::Confirm { pending, .. } => {
                if ev.code != KeyCode::Char('y') {
                    return Some("cancelled: nothing changed".into());
                }
                let ctx = match self.ctx() {
                    Ok(c) => c.clone(),
                    Err(e) => return Some(e),
                };
                Some(match pending {
                    Pending::Apply(p) => match apply::apply(&ctx, &p, &mut FsWriter) {
                        Err(e) => one_line(&format!("{}: not applied: {e:#}", p.knob)),
                        Ok(r) if r.ok() => {
                            self.done = Some(action_of(&p, false));
                            with_warnings(
                                format!("{} = {} (u undoes)", p.knob, p.value),
                                &r.warnings,
                            )
                        }
                        Ok(r) => with_warnings(
                            format!("{} FAILED, rolled back: {}", p.knob, r.errors().join("; ")),
                            &r.warnings,
                        ),
                    },
                    Pending::Undo(id, p) => {
                        match apply::undo(&ctx, &mut FsWriter, Which::Last, Some(id)) {
                            Err(e) => one_line(&format!("undo: {e:#}")),
                            Ok(r) if r.ok() => {
                                self.done = Some(action_of(&p, true));
                                with_warnings(format!("undone #{id}"), &r.warnings)
                            }
                            Ok(r) => with_warnings(
                                format!("undo incomplete: {}", r.errors().join("; ")),
                                &r.warnings,
                            ),
                        }
                    }
                })
            }
        }
    }
}
