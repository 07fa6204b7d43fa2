//! The pane model: per pane, the headline and body (lines, tables, notes) built from an assessed
//! interval, with levels from the findings' thresholds. The text report and the screen lay it
//! out; the list of panes itself is `crate::pane`.

pub mod cgroups;
pub mod cpu;
pub mod dirty;
pub mod disk;
pub mod everyone;
pub mod huge;
pub mod levels;
pub mod model;
pub mod numa;
pub mod power;
pub mod pressure;
pub mod processes;
pub mod softirq;
pub mod storage;
pub mod tcp;

use crate::derive::Derived;
use crate::findings::Thresholds;
use levels::Levels;
use model::PaneView;

/// What a pane's model depends on besides the numbers.
pub struct Ctx<'a> {
    /// Colour levels, from the findings' thresholds.
    pub levels: Levels<'a>,
    /// Zoomed (or the full text report): every idle state, partitions, policies, per-node lines.
    pub detail: bool,
    /// OOM kills since the session began, when there is a session (the dashboard, a replay);
    /// `None` for a single interval (`delta`, `batch`), which says the interval's own count.
    pub oom: Option<OomSince>,
    /// What the processes table ranks by.
    pub proc_sort: processes::ProcSort,
    /// Every process (the dashboard's full list), shown instead of the sample's kept ones.
    pub everyone: Option<&'a crate::source::processes::everyone::Everyone>,
    /// A screen: tables of one row per CPU leave each row's cells but the name to be built for
    /// the rows drawn (`model::Later::Cpu`); a text report builds every row.
    pub lazy_rows: bool,
}

/// OOM kills since perftop started (live) or since the recording's first sample (replay), up
/// to the sample on screen, and when the last one was.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OomSince {
    pub kills: u64,
    pub last_ms: Option<i64>,
}

impl<'a> Ctx<'a> {
    pub fn new(thresholds: &'a Thresholds, detail: bool) -> Self {
        Ctx {
            levels: Levels { t: thresholds },
            detail,
            oom: None,
            proc_sort: processes::ProcSort::default(),
            everyone: None,
            lazy_rows: false,
        }
    }

    pub fn with_lazy_rows(mut self, lazy: bool) -> Self {
        self.lazy_rows = lazy;
        self
    }

    pub fn with_everyone(
        mut self,
        everyone: Option<&'a crate::source::processes::everyone::Everyone>,
    ) -> Self {
        self.everyone = everyone;
        self
    }

    pub fn with_oom(mut self, oom: Option<OomSince>) -> Self {
        self.oom = oom;
        self
    }

    pub fn with_proc_sort(mut self, sort: processes::ProcSort) -> Self {
        self.proc_sort = sort;
        self
    }
}

/// The model of one pane for one assessed interval.
pub fn pane(p: Pane, d: &Derived, x: &Ctx) -> PaneView {
    match p {
        Pane::Cpu => cpu::view(d, x),
        Pane::Numa => numa::view(d, x),
        Pane::Huge => huge::view(d, x),
        Pane::Dirty => dirty::view(d, x),
        Pane::Disks => disk::view(d, x),
        Pane::Softirq => softirq::view(d, x),
        Pane::Pressure => pressure::view(d, x),
        Pane::Procs => processes::view(d, x),
    }
}

pub use crate::pane::{keys_for, Pane, JSON_KEYS, PANES};

/// The boot and profile context of the header: the performance flags of the kernel command
/// line, then `tuned:PROFILE`; empty when there is neither (or neither is known).
pub fn boot_context(h: &crate::derive::HostMetrics) -> Vec<String> {
    let mut v = h.boot_flags.clone().unwrap_or_default();
    if let Some(p) = &h.tuned_profile {
        v.push(format!("tuned:{p}"));
    }
    v
}
