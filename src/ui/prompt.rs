//! The two typed prompts of the dashboard: `/` (the focused pane's row filter, applied as it
//! is typed) and `b` (a time to go to). Keys go here while one is open.

use super::filter::PaneFilters;
use super::keymap::Effect;
use super::line_edit::edit;
use crate::pane::Pane;
use ratatui::crossterm::event::{KeyCode, KeyEvent};

/// The prompt open on the footer, with what has been typed.
#[derive(Debug, Default)]
pub struct Prompt {
    /// The `/` prompt's text while it is typed (it filters the focused pane as you type);
    /// Enter keeps it as that pane's filter.
    pub filter: Option<String>,
    /// The `b` prompt while it is being typed.
    pub goto: Option<String>,
}

/// What a key typed into the `b` prompt asks for.
pub enum GoTo {
    /// The prompt's state changed (or not: `Effect::None`).
    Typed(Effect),
    /// Enter on a time: go there.
    Go(String),
}

impl Prompt {
    pub fn is_open(&self) -> bool {
        self.filter.is_some() || self.goto.is_some()
    }

    /// `/`: editing starts from the pane's kept filter, so a typo is one Backspace away.
    pub fn open_filter(&mut self, kept: &str) {
        self.filter = Some(kept.to_string());
    }

    pub fn open_goto(&mut self) {
        self.goto = Some(String::new());
    }

    /// A key while the `/` prompt is open: Enter keeps the text as `focus`'s filter in
    /// `filters`, Esc clears that filter.
    pub fn filter_key(&mut self, ev: KeyEvent, focus: Pane, filters: &mut PaneFilters) -> Effect {
        let Some(text) = self.filter.as_mut() else {
            return Effect::None;
        };
        match ev.code {
            KeyCode::Enter => {
                filters.set(focus, self.filter.take().unwrap_or_default());
            }
            KeyCode::Esc => {
                self.filter = None;
                filters.clear(focus);
            }
            _ if edit(text, &ev, 64) => {}
            _ => return Effect::None,
        }
        Effect::Redraw
    }

    /// A key while the `b` prompt is open.
    pub fn goto_key(&mut self, ev: KeyEvent) -> GoTo {
        let Some(text) = self.goto.as_mut() else {
            return GoTo::Typed(Effect::None);
        };
        match ev.code {
            KeyCode::Enter => {
                let text = self.goto.take().unwrap_or_default();
                if !text.trim().is_empty() {
                    return GoTo::Go(text);
                }
            }
            KeyCode::Esc => self.goto = None,
            _ if edit(text, &ev, 40) => {}
            _ => return GoTo::Typed(Effect::None),
        }
        GoTo::Typed(Effect::Redraw)
    }
}
