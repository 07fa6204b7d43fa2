//! The six panes. Each turns `Derived` into a headline (always on screen, even at 80x24) and a
//! body (a table that the layout cuts to the rows it can give; zoom shows all of it).

pub mod cpu;
pub mod dirty;
pub mod disks;
pub mod huge;
pub mod numa;
pub mod softirq;

use super::app::{App, SortKey};
use super::theme::Theme;
use crate::derive::Derived;
use crate::units::fit;
use crate::view::Pane;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// What a pane needs to draw itself.
pub struct View<'a> {
    pub d: &'a Derived,
    pub app: &'a App,
    pub theme: &'a Theme,
    pub width: usize,
    /// Zoomed: every row and the extra columns.
    pub detail: bool,
}

impl View<'_> {
    /// Row filter from `/`: case-insensitive substring of the row's name.
    pub fn keep(&self, name: &str) -> bool {
        self.app.filter.is_empty()
            || name
                .to_ascii_lowercase()
                .contains(&self.app.filter.to_ascii_lowercase())
    }

    /// A note for a table whose rows the filter hid entirely.
    pub fn filtered_out(&self, shown: usize, total: usize) -> Option<Line<'static>> {
        (shown == 0 && total > 0 && !self.app.filter.is_empty()).then(|| {
            note(
                format!("  no row matches filter {:?} (Esc clears)", self.app.filter),
                self.theme,
            )
        })
    }

    pub fn by_name(&self) -> bool {
        self.app.sort == SortKey::Name
    }
}

pub fn headline(p: Pane, v: &View) -> Vec<Span<'static>> {
    match p {
        Pane::Cpu => cpu::headline(v),
        Pane::Numa => numa::headline(v),
        Pane::Huge => huge::headline(v),
        Pane::Dirty => dirty::headline(v),
        Pane::Disks => disks::headline(v),
        Pane::Softirq => softirq::headline(v),
    }
}

pub fn body(p: Pane, v: &View) -> Vec<Line<'static>> {
    match p {
        Pane::Cpu => cpu::body(v),
        Pane::Numa => numa::body(v),
        Pane::Huge => huge::body(v),
        Pane::Dirty => dirty::body(v),
        Pane::Disks => disks::body(v),
        Pane::Softirq => softirq::body(v),
    }
}

/// A table column: header text, width, alignment.
#[derive(Clone)]
pub struct Col {
    pub title: String,
    pub width: usize,
    pub left: bool,
}

pub fn col(title: impl Into<String>, width: usize) -> Col {
    Col {
        title: title.into(),
        width,
        left: false,
    }
}

pub fn lcol(title: impl Into<String>, width: usize) -> Col {
    Col {
        title: title.into(),
        width,
        left: true,
    }
}

/// How many leading columns fit in `width` (one space between columns).
pub fn fitting(cols: &[Col], width: usize) -> usize {
    let mut used = 0;
    for (i, c) in cols.iter().enumerate() {
        let need = c.width + usize::from(i > 0);
        if used + need > width {
            return i.max(1);
        }
        used += need;
    }
    cols.len()
}

fn cell(text: &str, c: &Col, first: bool) -> String {
    let t = fit(text, c.width);
    let w = c.width;
    let sep = if first { "" } else { " " };
    if c.left {
        format!("{sep}{t:<w$}")
    } else {
        format!("{sep}{t:>w$}")
    }
}

pub fn header_line(cols: &[Col], width: usize, theme: &Theme) -> Line<'static> {
    let n = fitting(cols, width);
    let s: String = cols[..n]
        .iter()
        .enumerate()
        .map(|(i, c)| cell(&c.title, c, i == 0))
        .collect();
    Line::from(Span::styled(s, theme.dim))
}

pub fn row_line(cols: &[Col], cells: Vec<(String, Style)>, width: usize) -> Line<'static> {
    let n = fitting(cols, width);
    Line::from(
        cells
            .into_iter()
            .zip(cols)
            .take(n)
            .enumerate()
            .map(|(i, ((text, style), c))| Span::styled(cell(&text, c, i == 0), style))
            .collect::<Vec<_>>(),
    )
}

/// A dimmed note line ("+12 hidden", reasons for unknown values).
pub fn note(text: impl Into<String>, theme: &Theme) -> Line<'static> {
    Line::from(Span::styled(text.into(), theme.dim))
}

pub fn span(text: impl Into<String>, style: Style) -> Span<'static> {
    Span::styled(text.into(), style)
}

/// Sparkline of recent values scaled to their own max.
pub fn sparkline(values: &[Option<f64>], width: usize, theme: &Theme) -> String {
    let vals: Vec<Option<f64>> = values.iter().rev().take(width).rev().copied().collect();
    let max = vals.iter().flatten().copied().fold(0.0f64, f64::max);
    vals.iter()
        .map(|v| match v {
            Some(x) if max > 0.0 => theme.glyphs.level(x / max),
            Some(_) => theme.glyphs.levels()[0],
            None => ' ',
        })
        .collect()
}
