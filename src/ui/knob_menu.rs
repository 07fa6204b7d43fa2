//! `a`: the knob menu. Every knob with its value and what it accepts in words (`1–90 %`,
//! `1 MiB – 12 GiB`), or why it is disabled, whole; pick one (Up/Down, Enter), then a value from
//! its list or typed and checked against the knob's own validation; the choice then goes to the
//! same preview → `y` → journal path as every tweak (`tweak_dialog`). `l` holds or releases the
//! PM-QoS latency limit.

use super::dialog_box::{DialogView, Tone};
use super::wrap::{hang, wrap};
use crate::tweak::knob::{Allowed, Knob};
use crate::tweak::range::Unit;
use ratatui::crossterm::event::{KeyCode, KeyEvent};

/// One entry of the menu.
#[derive(Debug, Clone)]
pub enum Entry {
    Knob(Box<Knob>),
    /// The PM-QoS latency hold (`l`).
    Hold,
}

/// Where the menu is: the list of knobs, a knob's values, or a value being typed.
#[derive(Debug, Clone, PartialEq)]
pub enum Stage {
    Knobs,
    Values { choices: Vec<String>, sel: usize },
    Typing { text: String, error: Option<String> },
}

#[derive(Debug, Clone)]
pub struct KnobMenu {
    pub entries: Vec<Entry>,
    pub sel: usize,
    pub stage: Stage,
    /// Services that may override a change (tuned, TLP, ...), said under the list.
    pub overriders: Vec<String>,
    /// Why the latency hold cannot be taken here (`tweak::pmqos::refusal`), said on its line.
    pub hold_refused: Option<String>,
}

/// What a key in the menu asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Stay open, with this on the status line when there is something to say.
    Stay(Option<String>),
    Close,
    /// Preview setting `knob` to `value` (the confirm dialog takes over).
    Propose {
        knob: String,
        value: String,
    },
    /// Preview the latency hold, or release it when held.
    Hold,
}

/// Entries a PgUp/PgDn moves.
const PAGE: usize = 5;

impl KnobMenu {
    pub fn new(
        knobs: Vec<Knob>,
        overriders: Vec<String>,
        hold_refused: Option<String>,
    ) -> KnobMenu {
        let mut entries: Vec<Entry> = knobs
            .into_iter()
            .map(|k| Entry::Knob(Box::new(k)))
            .collect();
        entries.push(Entry::Hold);
        KnobMenu {
            entries,
            sel: 0,
            stage: Stage::Knobs,
            overriders,
            hold_refused,
        }
    }

    fn knob(&self) -> Option<&Knob> {
        match self.entries.get(self.sel) {
            Some(Entry::Knob(k)) => Some(k),
            _ => None,
        }
    }

    pub fn key(&mut self, ev: KeyEvent) -> Step {
        if self.stage == Stage::Knobs {
            return match ev.code {
                KeyCode::Char('l') => Step::Hold,
                code => self.knobs_key(code),
            };
        }
        if ev.code == KeyCode::Esc {
            self.stage = Stage::Knobs;
            return Step::Stay(None);
        }
        let knob = self.knob().cloned();
        match &mut self.stage {
            Stage::Knobs => Step::Stay(None),
            Stage::Values { choices, sel } => match ev.code {
                KeyCode::Up => {
                    *sel = sel.saturating_sub(1);
                    Step::Stay(None)
                }
                KeyCode::Down => {
                    *sel = (*sel + 1).min(choices.len().saturating_sub(1));
                    Step::Stay(None)
                }
                KeyCode::Enter => match (knob, choices.get(*sel)) {
                    (Some(k), Some(v)) => Step::Propose {
                        knob: k.name.to_string(),
                        value: v.clone(),
                    },
                    _ => Step::Stay(None),
                },
                _ => Step::Stay(None),
            },
            Stage::Typing { text, error } => match ev.code {
                // Typing, Backspace, Ctrl-U, Ctrl-W (`line_edit`); control keys are not typed.
                _ if super::line_edit::edit(text, &ev, 32) => {
                    *error = None;
                    Step::Stay(None)
                }
                // The knob's own validation, the same `plan` applies again before the preview.
                KeyCode::Enter => match knob.map(|k| (k.name, k.parse_value(text))) {
                    Some((name, Ok(value))) => Step::Propose {
                        knob: name.to_string(),
                        value,
                    },
                    Some((_, Err(e))) => {
                        *error = Some(e);
                        Step::Stay(None)
                    }
                    None => Step::Stay(None),
                },
                _ => Step::Stay(None),
            },
        }
    }

    fn knobs_key(&mut self, code: KeyCode) -> Step {
        let last = self.entries.len().saturating_sub(1);
        match code {
            KeyCode::Up => self.sel = self.sel.saturating_sub(1),
            KeyCode::Down => self.sel = (self.sel + 1).min(last),
            KeyCode::PageUp => self.sel = self.sel.saturating_sub(PAGE),
            KeyCode::PageDown => self.sel = (self.sel + PAGE).min(last),
            KeyCode::Home => self.sel = 0,
            KeyCode::End => self.sel = last,
            KeyCode::Esc | KeyCode::Char('a') | KeyCode::Char('q') => return Step::Close,
            KeyCode::Enter => return self.pick(),
            _ => {}
        }
        Step::Stay(None)
    }

    /// Enter on the selected entry: its values, a prompt, or why it cannot be changed.
    fn pick(&mut self) -> Step {
        let Some(k) = self.knob() else {
            return Step::Hold;
        };
        if let Some(why) = &k.disabled {
            return Step::Stay(Some(format!("{}: disabled: {why}", k.name)));
        }
        self.stage = match &k.allowed {
            Allowed::Choices(c) if c.is_empty() => {
                return Step::Stay(Some(format!("{}: no value is available", k.name)))
            }
            Allowed::Choices(c) => {
                let now = k.current_text();
                Stage::Values {
                    sel: c.iter().position(|v| *v == now).unwrap_or(0),
                    choices: c.clone(),
                }
            }
            Allowed::Range { .. } | Allowed::CpuMask { .. } => Stage::Typing {
                text: String::new(),
                error: None,
            },
        };
        Step::Stay(None)
    }

    /// The menu at `width` columns; `held` is the latency hold in force, if any.
    pub fn view(&self, width: usize, held: Option<u32>) -> DialogView {
        match &self.stage {
            Stage::Knobs => self.knobs_view(width, held),
            Stage::Values { choices, sel } => {
                let k = self.knob();
                let now = k.map(Knob::current_text).unwrap_or_default();
                let name = k.map_or("", |k| k.name);
                let mut lines = vec![(Tone::Head, format!("{name}: now {now}"))];
                if let Some(k) = k {
                    for l in wrap(k.description, width) {
                        lines.push((Tone::Dim, l));
                    }
                }
                for (i, c) in choices.iter().enumerate() {
                    let mark = if i == *sel { ">" } else { " " };
                    let tail = if *c == now { "  (now)" } else { "" };
                    let tone = if i == *sel {
                        Tone::Selected
                    } else {
                        Tone::Text
                    };
                    lines.push((tone, format!("{mark} {c}{tail}")));
                }
                let first = lines.len() - choices.len();
                DialogView {
                    title: format!("{name}: pick a value"),
                    lines,
                    hint: "Up/Down pick · Enter previews (y applies there) · Esc back".into(),
                    focus: Some(first + sel..first + sel + 1),
                }
            }
            Stage::Typing { text, error } => {
                let k = self.knob();
                let name = k.map_or("", |k| k.name);
                let mut lines = vec![(
                    Tone::Head,
                    format!(
                        "{name}: now {}",
                        k.map(Knob::current_text).unwrap_or_default()
                    ),
                )];
                if let Some(k) = k {
                    for l in wrap(k.description, width) {
                        lines.push((Tone::Dim, l));
                    }
                    for l in hang("allowed: ", &k.allowed_text(), width) {
                        lines.push((Tone::Text, l));
                    }
                    if matches!(
                        k.allowed,
                        Allowed::Range {
                            unit: Unit::Bytes,
                            ..
                        }
                    ) {
                        lines.push((Tone::Dim, "sizes take K, M, G: 256M".into()));
                    }
                }
                lines.push((Tone::Selected, format!("value: {text}_")));
                for l in error.iter().flat_map(|e| wrap(e, width)) {
                    lines.push((Tone::Warn, l));
                }
                DialogView {
                    title: format!("{name}: type a value"),
                    lines,
                    hint: "Enter previews (y applies there) · Esc back".into(),
                    focus: None,
                }
            }
        }
    }

    fn knobs_view(&self, width: usize, held: Option<u32>) -> DialogView {
        let name_w = self
            .entries
            .iter()
            .map(|e| match e {
                Entry::Knob(k) => k.name.len(),
                Entry::Hold => HOLD.len(),
            })
            .max()
            .unwrap_or(0);
        let now_w = self
            .entries
            .iter()
            .filter_map(|e| match e {
                Entry::Knob(k) => Some(k.current_text().chars().count()),
                Entry::Hold => None,
            })
            .max()
            .unwrap_or(0)
            .clamp(4, 20);
        let mut lines = Vec::new();
        let mut focus = None;
        for (i, e) in self.entries.iter().enumerate() {
            let (name, now, text, enabled) = match e {
                Entry::Knob(k) => match &k.disabled {
                    None => (k.name, k.current_text(), k.allowed_text(), true),
                    Some(why) => (k.name, k.current_text(), format!("disabled: {why}"), false),
                },
                Entry::Hold => (
                    HOLD,
                    held.map_or("off".into(), |us| format!("{us} µs")),
                    match (held, &self.hold_refused) {
                        (Some(_), _) => "held until released (l) or perftop exits".into(),
                        (None, Some(why)) => format!("disabled: {why}"),
                        (None, None) => {
                            "l: hold CPU wake-up latency at 0 µs while perftop runs".into()
                        }
                    },
                    held.is_some() || self.hold_refused.is_none(),
                ),
            };
            let mark = if i == self.sel { ">" } else { " " };
            let prefix = format!("{mark} {name:<name_w$} {now:<now_w$} ");
            let start = lines.len();
            for (j, l) in hang(&prefix, &text, width).into_iter().enumerate() {
                let tone = match (i == self.sel && j == 0, enabled) {
                    (true, _) => Tone::Selected,
                    (false, true) => Tone::Text,
                    (false, false) => Tone::Dim,
                };
                lines.push((tone, l));
            }
            if i == self.sel {
                focus = Some(start..lines.len());
            }
        }
        for o in &self.overriders {
            for l in wrap(
                &format!("warning: {}", crate::tweak::override_warning(o)),
                width,
            ) {
                lines.push((Tone::Warn, l));
            }
        }
        DialogView {
            title: "tweaks (g: governor toggle, u: undo)".into(),
            lines,
            hint: "Enter: its values · l: latency hold · Esc closes".into(),
            focus,
        }
    }
}

/// The latency hold's name in the menu.
const HOLD: &str = "pmqos.cpu_dma_latency";
