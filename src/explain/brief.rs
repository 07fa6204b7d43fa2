//! Episodes in a line each, for the dashboard's and the replay's episodes list (`E`): from an
//! `explain` report (a replay's recording), or built over the intervals the live dashboard
//! keeps (since it started, as far as its history reaches).

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

/// Episodes over consecutive intervals, each given as (start ms, end ms, assessed), in order;
/// each interval is folded in and dropped, so memory does not grow with their number.
pub fn of_intervals(intervals: impl Iterator<Item = (i64, i64, Assessed)>) -> Vec<Brief> {
    let mut b = Builder::new();
    let mut times = Vec::new();
    for (row, (start, end, a)) in intervals.enumerate() {
        b.add(row, &a);
        times.push((start, end));
    }
    let last = times.len().saturating_sub(1);
    let mut out: Vec<Brief> = b
        .finish()
        .into_iter()
        .filter_map(|e| {
            let (severity, summary) = summary(&rule_lines(&e));
            Some(Brief {
                start_ms: times.get(e.first_row)?.0,
                first_ms: times.get(e.first_row)?.1,
                end_ms: times.get(e.last_row)?.1,
                severity,
                family: FAMILIES.get(e.family).map_or("?", |f| f.name),
                summary,
                open_end: e.last_row == last,
            })
        })
        .collect();
    out.sort_by_key(|b| (b.start_ms, b.end_ms));
    out
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
