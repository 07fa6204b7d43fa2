//! Screen preferences: which pane has the focus, zoom and the zoomed pane's scroll, the help
//! screen and the findings list (open, scrolled), how tables sort, the panes' kept row filters
//! and whether idle rows show. Changed by keys only; read by the panes through `panes::Opts`.

use super::filter::PaneFilters;
use super::keymap::Screen;
use super::scroll::{Move, Scroll};
use crate::pane::{Pane, PANES};
use crate::view::processes::ProcSort;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    /// Busiest first (C0%, aqu-sz, %soft, irq/s, miss ratio depending on the pane).
    Load,
    Name,
}

pub struct Prefs {
    pub focus: Pane,
    pub zoom: bool,
    /// The zoomed pane's first row on screen (reset when the zoom or the focus changes).
    pub zoom_scroll: Scroll,
    pub help: bool,
    /// The help screen's first row (it scrolls where the terminal is shorter than it).
    pub help_scroll: Scroll,
    /// `f`: the list of every finding, over the dashboard.
    pub findings_open: bool,
    /// The episodes list is open (`App::episodes` holds it).
    pub episodes_open: bool,
    pub findings_scroll: Scroll,
    pub sort: SortKey,
    /// What the processes table ranks by (`s` with the Processes pane focused).
    pub proc_sort: ProcSort,
    /// Each pane's kept `/` filter.
    pub filters: PaneFilters,
    pub hide_idle: bool,
    /// `H`: the processes' full list with every thread.
    pub threads: bool,
}

impl Default for Prefs {
    fn default() -> Prefs {
        Prefs {
            focus: Pane::Cpu,
            zoom: false,
            zoom_scroll: Scroll::default(),
            help: false,
            help_scroll: Scroll::default(),
            findings_open: false,
            episodes_open: false,
            findings_scroll: Scroll::default(),
            sort: SortKey::Load,
            proc_sort: ProcSort::default(),
            filters: PaneFilters::default(),
            hide_idle: true,
            threads: false,
        }
    }
}

impl Prefs {
    /// What is on screen, for the keymap's `lookup`.
    pub fn screen(&self) -> Screen {
        if self.help {
            Screen::Help
        } else if self.episodes_open {
            Screen::Episodes
        } else if self.findings_open {
            Screen::Findings
        } else if self.zoom {
            Screen::Zoomed
        } else {
            Screen::Dashboard
        }
    }

    /// Esc: closes what is over the dashboard, else unzooms, else clears the focused pane's
    /// filter.
    pub fn back(&mut self) {
        if self.help {
            self.help = false;
        } else if self.episodes_open {
            self.episodes_open = false;
        } else if self.findings_open {
            self.findings_open = false;
        } else if self.zoom {
            self.zoom = false;
        } else {
            self.filters.clear(self.focus);
        }
    }

    /// Focus `p`; a zoomed view then shows `p` from its top.
    pub fn focus_on(&mut self, p: Pane) {
        if p != self.focus {
            self.zoom_scroll.reset();
        }
        self.focus = p;
    }

    /// Tab / Shift-Tab: the next or previous pane in `PANES` order.
    pub fn focus_step(&mut self, forward: bool) {
        let n = PANES.len();
        let step = if forward { 1 } else { n - 1 };
        self.focus_on(PANES[(self.focus.index() + step) % n]);
    }

    pub fn toggle_zoom(&mut self) {
        self.zoom = !self.zoom;
        self.zoom_scroll.reset();
    }

    pub fn toggle_findings(&mut self) {
        self.findings_open = !self.findings_open;
        self.findings_scroll.reset();
    }

    /// `?`: opens the help at its top, or closes it.
    pub fn toggle_help(&mut self) {
        self.help = !self.help;
        self.help_scroll.reset();
    }

    /// Scrolls what is on top: the help, the findings list, else the zoomed pane.
    pub fn scroll(&mut self, m: Move) {
        if self.help {
            self.help_scroll.apply(m);
        } else if self.findings_open {
            self.findings_scroll.apply(m);
        } else {
            self.zoom_scroll.apply(m);
        }
    }

    /// `s`: the processes table's next ranking when it has the focus, else busiest first / by
    /// name for every table; says which.
    pub fn next_sort(&mut self) -> String {
        if self.focus == Pane::Procs {
            self.proc_sort = self.proc_sort.next();
            return format!("processes: by {}", self.proc_sort.name());
        }
        self.sort = match self.sort {
            SortKey::Load => SortKey::Name,
            SortKey::Name => SortKey::Load,
        };
        match self.sort {
            SortKey::Load => "sort: busiest first".into(),
            SortKey::Name => "sort: by name".into(),
        }
    }

    /// `H`: threads in the processes' full list, or not; says which.
    pub fn toggle_threads(&mut self) -> String {
        self.threads = !self.threads;
        if self.threads {
            "processes: every process and thread listed (H hides threads)"
        } else {
            "processes: threads hidden"
        }
        .into()
    }

    /// `h`: hide or show idle rows; says which.
    pub fn toggle_idle(&mut self) -> String {
        self.hide_idle = !self.hide_idle;
        if self.hide_idle {
            "idle rows hidden"
        } else {
            "idle rows shown"
        }
        .into()
    }
}
