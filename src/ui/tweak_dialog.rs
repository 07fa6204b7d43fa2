//! The dashboard's side of the safe tweaks: `g` governor toggle, `a` knob menu (`knob_menu`),
//! `u` undo, the latency hold, and their dialogs. It lives in `ui` so that `crate::tweak` knows
//! nothing of the screen or keys.
//!
//! Confirm dialogs show every file's old → new whole (wrapped, scrolled when long) and apply
//! only on `y`; the scroll keys scroll; Enter, Esc and every other key cancel.

use super::dialog_box::{DialogView, Tone};
use super::knob_menu::{KnobMenu, Step};
use super::remote_step::{Polled, Running};
use super::remote_tweak::{Done, Outcome, RemoteDialog, RemoteTweaks};
use super::scroll::{Move, Scroll};
use super::tweak_preview::{change_lines, old_values, plan_lines};
use super::wrap::wrap;
use crate::tweak::apply::{self, FsWriter, UndoPreview, Which};
use crate::tweak::journal::Journal;
use crate::tweak::knob::{self, Allowed};
use crate::tweak::plan::{self, Plan};
use crate::tweak::{pmqos, Ctx};
use ratatui::crossterm::event::{KeyCode, KeyEvent};

#[derive(Debug, Clone)]
pub enum Pending {
    Apply(Plan),
    /// The journalled change the undo restores (id, plan).
    Undo(u64, Plan),
    /// The PM-QoS latency hold at this many µs.
    Hold(u32),
}

#[derive(Debug, Clone)]
pub enum Dialog {
    /// `y` runs `pending`; a scroll key scrolls; anything else cancels. `lines` are statements,
    /// wrapped when drawn.
    Confirm {
        title: String,
        lines: Vec<(Tone, String)>,
        pending: Pending,
    },
    /// Governor chooser: `1`..`9` picks a value (then a confirm dialog).
    Choose { title: String, choices: Vec<String> },
    /// The knob menu.
    Menu(Box<KnobMenu>),
    /// A remote host's menu or preview (`perftop ssh`).
    Remote(Box<RemoteDialog>),
}

impl Dialog {
    /// The dialog at `width` columns inside its box; `held` is the latency hold in force.
    pub fn view(&self, width: usize, held: Option<u32>) -> DialogView {
        match self {
            Dialog::Confirm { title, lines, .. } => DialogView {
                title: title.clone(),
                lines: lines
                    .iter()
                    .flat_map(|(tone, l)| wrap(l, width).into_iter().map(|w| (*tone, w)))
                    .collect(),
                hint: "y applies · Enter/Esc/n cancel".into(),
                focus: None,
            },
            Dialog::Choose { title, choices } => DialogView {
                title: title.clone(),
                lines: choices
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (Tone::Text, format!("{} {c}", i + 1)))
                    .collect(),
                hint: "digit picks · Esc cancels".into(),
                focus: None,
            },
            Dialog::Menu(m) => m.view(width, held),
            Dialog::Remote(r) => r.view(width),
        }
    }
}

/// `ctx` is `None` where tweaks are off (replay); `dialog` is the open dialog.
#[derive(Debug, Default)]
pub struct TweakState {
    pub ctx: Option<Ctx>,
    pub dialog: Option<Dialog>,
    /// How far the open dialog is scrolled (reset when another opens).
    pub scroll: Scroll,
    /// PM-QoS latency hold (`a` then `l`, and `y`); released when dropped, i.e. when perftop
    /// exits, or on `a` `l` again.
    pub hold: Option<pmqos::LatencyHold>,
    /// The change just applied or undone, for the recording's timeline (taken by the App).
    pub done: Option<crate::record::Action>,
    /// Why tweaks are off here, when it is not read-only or replay.
    pub off: Option<String>,
    /// `perftop ssh`: the tweak keys act on that host, through its own perftop
    /// (`remote_tweak`); nothing is applied here.
    pub remote: Option<RemoteTweaks>,
    /// The remote step in flight, if any (`remote_step`): one at a time.
    pub running: Option<Running>,
    /// The dirty thresholds the kernel set at the newest sample, for a dirty knob's preview
    /// to say where they move (`tweak_effect`); kept up to date by the App.
    pub dirty: Option<crate::derive::memory::DirtyMetrics>,
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
            _ => Err(self
                .off
                .clone()
                .unwrap_or_else(|| "tweaks are disabled here (read-only or replay)".into())),
        }
    }

    /// Opens `d` from its top.
    fn open(&mut self, d: Dialog) {
        self.scroll.reset();
        self.dialog = Some(d);
    }

    fn confirm(&mut self, p: Plan) -> Option<String> {
        let ctx = self.ctx.as_ref()?;
        if p.writes().next().is_none() {
            return Some(format!("{}: already {}", p.knob, p.value));
        }
        let _ = crate::tweak::audit::log(&ctx.state_dir, "preview", &p, &[]);
        let mut lines = plan_lines(&p);
        if let Some(e) = super::tweak_effect::effect(&p, self.dirty.as_ref()) {
            lines.insert(0, (Tone::Head, format!("effect: {e}")));
        }
        self.open(Dialog::Confirm {
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
        if let Some(r) = &self.remote {
            let host = r.remote.target.label();
            return Some(format!("on {host}, a lists its knobs: governor is there"));
        }
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
            Allowed::Range { .. } | Allowed::CpuMask { .. } => Vec::new(),
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
                self.open(Dialog::Choose {
                    title: "governor: back to which?".into(),
                    choices: others,
                });
                None
            }
        }
    }

    /// `a`: every knob, its value, what it accepts or why it is disabled; pick and set.
    pub fn menu(&mut self) -> Option<String> {
        if let Some(r) = &self.remote {
            if let Some(busy) = &self.running {
                return Some(busy.busy());
            }
            let out = r.menu();
            self.scroll.reset();
            return self.remote_outcome(out);
        }
        let Some(ctx) = self.ctx.clone() else {
            return Some("tweaks are disabled here (replay)".into());
        };
        let mut knobs = knob::registry(&ctx);
        knobs.extend(crate::tweak::storage::all(&ctx));
        self.open(Dialog::Menu(Box::new(KnobMenu::new(
            knobs,
            crate::tweak::overriders(&ctx.root),
            pmqos::refusal(&ctx),
        ))));
        None
    }

    /// `l` in the menu: release the latency hold, or preview taking it (applied on `y`).
    fn hold_key(&mut self) -> Option<String> {
        if self.hold.take().is_some() {
            // Dropping the hold closes the file: the kernel drops the request, the audit log
            // says so.
            return Some("PM-QoS latency hold released".into());
        }
        let ctx = match self.ctx() {
            Ok(c) => c.clone(),
            Err(e) => return Some(e),
        };
        match pmqos::preview(&ctx, 0) {
            Ok(lines) => {
                self.open(Dialog::Confirm {
                    title: "hold CPU wake-up latency at 0 µs?".into(),
                    lines: lines.into_iter().map(|l| (Tone::Text, l)).collect(),
                    pending: Pending::Hold(0),
                });
                None
            }
            Err(e) => Some(format!("PM-QoS hold: {e}")),
        }
    }

    /// `u`: preview restoring the last journalled change.
    pub fn undo(&mut self) -> Option<String> {
        if let Some(r) = &self.remote {
            if let Some(busy) = &self.running {
                return Some(busy.busy());
            }
            let out = r.undo();
            return self.remote_outcome(out);
        }
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
                let mut lines = Vec::new();
                for c in &p.changes {
                    let now = crate::tweak::read_value(&ctx.root, &c.rel);
                    if c.undo && now.as_deref() != Some(c.old.as_str()) {
                        let now = now.unwrap_or_else(|| "unreadable".into());
                        lines.extend(change_lines(&c.rel, format!("{now} → {}", c.old)));
                    }
                }
                lines.extend(
                    warnings
                        .into_iter()
                        .map(|w| (Tone::Warn, format!("warning: {w}"))),
                );
                // Say what comes back, not what the change set: "undo governor → performance"
                // read as if it set performance.
                let restores = old_values(&p).unwrap_or_else(|| "its old value".into());
                self.open(Dialog::Confirm {
                    title: format!(
                        "undo #{id}: restore {} {restores} (was set to {})?",
                        p.knob, p.value
                    ),
                    lines,
                    pending: Pending::Undo(id, p),
                });
                None
            }
        }
    }

    /// A remote step's outcome: its dialog opened (or kept), its change for the timeline, the
    /// next step started on its thread (the status line says it runs).
    fn remote_outcome(&mut self, out: Outcome) -> Option<String> {
        if let (Some(req), Some(r)) = (out.start, &self.remote) {
            if let Some(busy) = &self.running {
                return Some(busy.busy());
            }
            let run = Running::start(&r.remote, req);
            let label = run.label(std::time::Instant::now());
            self.running = Some(run);
            return Some(label);
        }
        if let Some(d) = out.dialog {
            // A preview opens at its top; the menu keeps its selection in view itself.
            if matches!(d, RemoteDialog::Confirm { .. }) {
                self.scroll.reset();
            }
            self.dialog = Some(Dialog::Remote(Box::new(d)));
        }
        self.done = out.done.map(|d| {
            // The remote's old values are its journal's; the timeline gets what is known here.
            let (kind, name, from, to) = match d {
                Done::Applied { knob, value } => ("applied", knob, None, Some(value)),
                Done::Undone { knob, was, .. } => ("undone", knob, Some(was), None),
            };
            crate::record::Action {
                kind: kind.into(),
                name,
                from,
                to,
            }
        });
        out.status.filter(|s| !s.is_empty())
    }

    /// The remote step in flight: None while there is none; its status line while it runs
    /// (its seconds moving), or once its answer came, what the answer made (its dialog open).
    pub fn poll_remote(&mut self, now: std::time::Instant) -> Option<Polled> {
        let run = self.running.as_ref()?;
        let Some(answer) = run.answer() else {
            return Some(Polled::Running(run.label(now)));
        };
        let run = self.running.take()?;
        let out = self.remote.as_ref()?.answered(run.then, answer);
        if out.dialog.is_some() {
            self.scroll.reset();
        }
        Some(Polled::Answered(self.remote_outcome(out)))
    }

    /// When the event loop should look at the remote step again (None: none runs).
    pub fn remote_deadline(&self, now: std::time::Instant) -> Option<std::time::Instant> {
        self.running
            .as_ref()
            .map(|_| now + super::remote_step::POLL)
    }

    /// A key while a dialog is open; returns the status line.
    pub fn key(&mut self, ev: KeyEvent) -> Option<String> {
        let dialog = self.dialog.take()?;
        match dialog {
            Dialog::Remote(d) if matches!(*d, RemoteDialog::Confirm { .. }) => {
                if let Some(m) = scroll_move(ev.code) {
                    self.scroll.apply(m);
                    self.dialog = Some(Dialog::Remote(d));
                    return None;
                }
                let out = self.remote.as_ref().map(|r| r.key(*d, ev))?;
                self.remote_outcome(out)
            }
            Dialog::Remote(d) => {
                let out = self.remote.as_ref().map(|r| r.key(*d, ev))?;
                self.remote_outcome(out)
            }
            Dialog::Menu(mut m) => match m.key(ev) {
                Step::Stay(status) => {
                    self.dialog = Some(Dialog::Menu(m));
                    status
                }
                Step::Close => None,
                Step::Propose { knob, value } => {
                    let status = self.propose(&knob, &value);
                    // Refused (the plan says why): back to the menu, the reason on the status line.
                    if self.dialog.is_none() {
                        self.dialog = Some(Dialog::Menu(m));
                    }
                    status
                }
                Step::Hold => {
                    let releasing = self.hold.is_some();
                    let status = self.hold_key();
                    // Refused (not here, not root): back to the menu with the reason. A
                    // release is done, and closes it.
                    if self.dialog.is_none() && !releasing {
                        self.dialog = Some(Dialog::Menu(m));
                    }
                    status
                }
            },
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
            Dialog::Confirm { .. } if scroll_move(ev.code).is_some() => {
                if let Some(m) = scroll_move(ev.code) {
                    self.scroll.apply(m);
                }
                self.dialog = Some(dialog);
                None
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
                    Pending::Hold(us) => match pmqos::hold(&ctx, us) {
                        Ok(h) => {
                            self.hold = Some(h);
                            format!(
                                "PM-QoS: CPU wake-up latency held at {us} µs until released \
                                 (a, l) or perftop exits"
                            )
                        }
                        Err(e) => format!("PM-QoS hold: {e}"),
                    },
                    Pending::Apply(p) => match apply::apply(&ctx, &p, &mut FsWriter) {
                        // The kernel moved while the preview was open: show the new one.
                        Err(e) if e.downcast_ref::<apply::Stale>().is_some() => {
                            let stale = e.downcast_ref::<apply::Stale>().map(|s| s.plan.clone());
                            let shown = stale.and_then(|fresh| self.confirm(fresh));
                            one_line(&match shown {
                                Some(status) => format!("{e:#}; {status}"),
                                None => format!("{e:#}"),
                            })
                        }
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
                            Ok(r) if r.ok() && r.results.is_empty() => with_warnings(
                                format!(
                                    "#{id}: nothing written, the old values were already back; \
                                     marked undone"
                                ),
                                &r.warnings,
                            ),
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

/// The scroll key `code` is, in a dialog.
fn scroll_move(code: KeyCode) -> Option<Move> {
    Some(match code {
        KeyCode::Up => Move::Up,
        KeyCode::Down => Move::Down,
        KeyCode::PageUp => Move::PageUp,
        KeyCode::PageDown => Move::PageDown,
        KeyCode::Home => Move::Top,
        KeyCode::End => Move::Bottom,
        _ => return None,
    })
}
