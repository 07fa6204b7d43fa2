//! What a pane is drawn with: the derived sample, the theme, the width and row budget, and a small
//! read-only `Opts` of the dashboard's state that panes read (focus, sort, filters, idle rows,
//! thresholds, sparklines, OOM kills), so no pane sees the whole `App`.

use crate::derive::Derived;
use crate::findings::Thresholds;
use crate::ui::filter::{matches, PaneFilters};
use crate::ui::oom::OomLog;
use crate::ui::prefs::SortKey;
use crate::ui::spans::span;
use crate::ui::theme::Theme;
use crate::ui::trend::TrendPoint;
use crate::view::model::{Cell, Level, Row};
use crate::view::processes::ProcSort;
use crate::view::Pane;
use ratatui::style::Style;
use ratatui::text::Span;
use std::collections::VecDeque;

/// The dashboard's state as the panes read it (`App::pane_opts`).
#[derive(Clone, Copy)]
pub struct Opts<'a> {
    pub focus: Pane,
    pub sort: SortKey,
    pub proc_sort: ProcSort,
    pub hide_idle: bool,
    /// Each pane's kept filter...
    pub filters: &'a PaneFilters,
    /// ...and the one being typed for the focused pane, which it shows instead.
    pub typing: Option<&'a str>,
    pub thresholds: &'a Thresholds,
    pub oom: &'a OomLog,
    /// Trend points for the headline sparklines.
    pub trends: &'a VecDeque<TrendPoint>,
    /// Every process, while something shows it (`App::full_list_wanted`).
    pub everyone: Option<&'a crate::source::processes::everyone::Everyone>,
}

impl<'a> Opts<'a> {
    /// The filter pane `p` shows: what is being typed for the focused pane, else its own.
    pub fn filter_for(&self, p: Pane) -> &'a str {
        match self.typing {
            Some(t) if p == self.focus => t,
            _ => self.filters.get(p),
        }
    }
}

/// What a pane needs to draw itself.
pub struct View<'a> {
    pub d: &'a Derived,
    /// The preferences and the rest of the dashboard a pane reads.
    pub opts: Opts<'a>,
    pub theme: &'a Theme,
    pub width: usize,
    /// Zoomed: every row and the extra columns.
    pub detail: bool,
    /// Rows the layout gives this pane's body, when fewer than it holds: tables then show the
    /// busiest rows that fit (and the CPU pane a heat strip of every CPU above them).
    pub budget: Option<usize>,
}

impl View<'_> {
    /// Row filter from `/`, the pane's own (see `ui::filter::matches`).
    pub fn keep(&self, p: Pane, row: &Row) -> bool {
        matches(row, self.opts.filter_for(p))
    }

    pub fn by_name(&self) -> bool {
        self.opts.sort == SortKey::Name
    }

    pub(super) fn style(&self, l: Level) -> Style {
        let t = self.theme;
        match l {
            Level::Text => t.text,
            Level::Dim => t.dim,
            Level::Info => t.info,
            Level::Good => t.good,
            Level::Warn => t.warn,
            Level::Crit => t.crit,
        }
    }

    pub(super) fn spans(&self, cells: &[&Cell]) -> Vec<Span<'static>> {
        cells
            .iter()
            .map(|c| span(c.text.clone(), self.style(c.level)))
            .collect()
    }
}
