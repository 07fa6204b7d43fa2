//! Episodes in a line each, for the dashboard's and the replay's episodes list (`E`) and the
//! timeline's spans: from an `explain` report (a replay's recording), or folded in as the live
//! dashboard judges each interval (`Running`, since it started).

use super::episodes::{Builder, Built};
use super::families::FAMILIES;
use super::Report;
use crate::assess::Assessed;
use crate::findings::Severity;

/// One episode: when, how bad, which family, and what its worst rule said.
#[derive(Debug, Clone, PartialEq)]
pub struct Brief {
    pub start_ms: i64,
    /// The end of its first interval: the first sample that shows it (where `E`'s Enter goes).
    pub first_ms: i64,
    pub end_ms: i64,
    pub severity: Severity,
    pub family: &'static str,
    pub summary: String,
    /// Still holding at the end of what was read (live: now).
    pub open_end: bool,
}

/// The episodes of a report, in time order.
pub fn of_report(r: &Report) -> Vec<Brief> {
    let mut out: Vec<Brief> = r
        .episodes
        .iter()
        .map(|e| Brief {
            start_ms: e.start_ms,
            first_ms: r.rows.get(e.first_row).map_or(e.start_ms, |row| row.end_ms),
            end_ms: e.end_ms,
            severity: e.severity,
            family: FAMILIES.get(e.family).map_or("?", |f| f.name),
            summary: e.summary.clone(),
            open_end: e.open_end,
        })
        .collect();
    out.sort_by_key(|b| (b.start_ms, b.end_ms));
    out
}

/// The live dashboard's episodes since it started: each interval is folded in as the
/// dashboard judges it, so opening the list or drawing the timeline judges nothing again.
#[derive(Debug, Clone, Default)]
pub struct Running {
    builder: Builder,
    /// Intervals folded in.
    rows: usize,
}

/// Closed episodes a running dashboard keeps (a finding that flickers for weeks must not grow
/// it without end); the oldest go first.
pub const RUNNING_KEPT: usize = 1_000;

impl Running {
    pub fn new() -> Running {
        Running::default()
    }

    /// Folds in the next interval, which ran from `start_ms` to `end_ms`.
    pub fn add(&mut self, (start_ms, end_ms): (i64, i64), a: &Assessed) {
        self.builder.add(self.rows, (start_ms, end_ms), a);
        self.rows += 1;
        if self.builder.done.len() >= 2 * RUNNING_KEPT {
            self.builder.keep_closed(RUNNING_KEPT);
        }
    }

    /// The episodes so far, in time order; those holding in the newest interval end `now`.
    pub fn briefs(&self) -> Vec<Brief> {
        let last = self.rows.saturating_sub(1);
        let mut out: Vec<Brief> = self
            .builder
            .clone()
            .finish()
            .into_iter()
            .map(|e| {
                let (severity, summary) = summary(&rule_lines(&e));
                Brief {
                    start_ms: e.start_ms,
                    first_ms: e.first_ms,
                    end_ms: e.end_ms,
                    severity,
                    family: FAMILIES.get(e.family).map_or("?", |f| f.name),
                    summary,
                    open_end: e.last_row == last,
                }
            })
            .collect();
        out.sort_by_key(|b| (b.start_ms, b.end_ms));
        out.drain(..out.len().saturating_sub(RUNNING_KEPT));
        out
    }

    /// Each episode's (start ms, end ms, worst severity), for the timeline, without building
    /// its words.
    pub fn spans(&self) -> Vec<(i64, i64, Severity)> {
        self.builder
            .all()
            .map(|e| (e.start_ms, e.end_ms, e.severity()))
            .collect()
    }
}

/// Each rule's (id, worst severity, message) over an episode, worst first (of equals, in the
/// order they first held).
pub fn rule_lines(e: &Built) -> Vec<(String, Severity, String)> {
    let mut lines: Vec<(String, Severity, String)> = e
        .ids
        .iter()
        .filter_map(|id| {
            let s = e.rules.get(id)?;
            Some((id.clone(), s.severity, s.message.clone()))
        })
        .collect();
    lines.sort_by_key(|l| std::cmp::Reverse(l.1));
    lines
}

/// The worst rule's severity and message, naming the other rules that held with it (as
/// `explain` words an episode), from `rule_lines`.
pub fn summary(lines: &[(String, Severity, String)]) -> (Severity, String) {
    match lines.first() {
        Some((_, sev, msg)) if lines.len() > 1 => {
            let more: Vec<&str> = lines[1..].iter().map(|l| l.0.as_str()).collect();
            (*sev, format!("{msg}; with {}", more.join(", ")))
        }
        Some((_, sev, msg)) => (*sev, msg.clone()),
        None => (Severity::Info, String::new()),
    }
}
