//! The two typed prompts of the dashboard: `/` (the focused pane's row filter, applied as it
//! is typed) and `b` (a time to go to). Keys go here while one is open.

use super::app::{App, Effect};
use crate::pane::Pane;
use ratatui::crossterm::event::{KeyCode, KeyEvent};

impl App {
    /// The filter pane `p` shows: what is being typed for the focused pane, else its own.
    pub fn filter_for(&self, p: Pane) -> &str {
        if self.filter_editing && p == self.focus {
            &self.filter
        } else {
            self.filters.get(p)
        }
    }

    pub(super) fn filter_key(&mut self, ev: KeyEvent) -> Effect {
        match ev.code {
            KeyCode::Enter => {
                self.filter_editing = false;
                self.filters
                    .set(self.focus, std::mem::take(&mut self.filter));
            }
            KeyCode::Esc => {
                self.filter_editing = false;
                self.filter.clear();
                self.filters.clear(self.focus);
            }
            KeyCode::Backspace => {
                self.filter.pop();
            }
            KeyCode::Char(c) if !c.is_control() && self.filter.len() < 64 => self.filter.push(c),
            _ => return Effect::None,
        }
        Effect::Redraw
    }

    pub(super) fn goto_key(&mut self, ev: KeyEvent) -> Effect {
        let Some(text) = self.goto_input.as_mut() else {
            return Effect::None;
        };
        match ev.code {
            KeyCode::Enter => {
                let text = self.goto_input.take().unwrap_or_default();
                if !text.trim().is_empty() {
                    self.goto_text(&text);
                }
            }
            KeyCode::Esc => self.goto_input = None,
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Char(c) if !c.is_control() && text.len() < 40 => text.push(c),
            _ => return Effect::None,
        }
        Effect::Redraw
    }
}
