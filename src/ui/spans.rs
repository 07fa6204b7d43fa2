//! Styled text pieces every part of the screen is built from (panes, dialogs, lists, help).

use super::theme::Theme;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// A dimmed note line ("+12 hidden", reasons for unknown values).
pub fn note(text: impl Into<String>, theme: &Theme) -> Line<'static> {
    Line::from(Span::styled(text.into(), theme.dim))
}

pub fn span(text: impl Into<String>, style: Style) -> Span<'static> {
    Span::styled(text.into(), style)
}
