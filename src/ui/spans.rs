//! Styled text pieces every part of the screen is built from (panes, dialogs, lists, help).

use super::theme::Theme;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use std::borrow::Cow;

/// A dimmed note line ("+12 hidden", reasons for unknown values).
pub fn note(text: impl Into<Cow<'static, str>>, theme: &Theme) -> Line<'static> {
    Line::from(Span::styled(text, theme.dim))
}

/// A styled piece of text: a literal is kept as it is, not copied (a frame builds hundreds).
pub fn span(text: impl Into<Cow<'static, str>>, style: Style) -> Span<'static> {
    Span::styled(text, style)
}
