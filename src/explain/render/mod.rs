//! The explain report's renderers: text (80 columns), markdown, JSON (the contract) and HTML
//! (one self-contained file with inline SVG charts).

pub mod html;
pub mod json;
pub mod markdown;
pub mod text;

use super::metrics::{index, show, METRICS};
use super::{Episode, Report};
use crate::record::format_rfc3339;
use anyhow::{bail, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Markdown,
    Json,
    Html,
}

impl std::str::FromStr for Format {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Format> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "text" | "txt" => Format::Text,
            "markdown" | "md" => Format::Markdown,
            "json" => Format::Json,
            "html" => Format::Html,
            _ => bail!("unknown format '{s}' (text, markdown, json, html)"),
        })
    }
}

/// The report in `format`.
pub fn render(r: &Report, format: Format) -> String {
    match format {
        Format::Text => text::render(r, 80),
        Format::Markdown => markdown::render(r),
        Format::Json => json::render(r),
        Format::Html => html::render(r),
    }
}

/// `HH:MM:SS` of a wall clock (UTC), for the lines of a report whose date the header gives.
pub fn clock(ms: i64) -> String {
    let s = format_rfc3339(ms);
    s.get(11..19).unwrap_or(&s).to_string()
}

/// `2026-11-20 02:40` of a wall clock (UTC).
pub fn minute(ms: i64) -> String {
    let s = format_rfc3339(ms).replacen('T', " ", 1);
    s.get(..16).unwrap_or(&s).to_string()
}

/// `2 min 5 s`, `45 s`, `1 h 3 min`.
pub fn duration(ms: i64) -> String {
    let s = (ms.max(0) + 500) / 1000;
    match s {
        0..=119 => format!("{s} s"),
        120..=7199 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s / 60 % 60),
    }
}

/// The episode's name: its family and the rules that held.
pub fn title(e: &Episode) -> String {
    e.ids.join(" + ")
}

/// "from 02:10:05 to 02:40:00 (30 min 0 s)" with the window-edge notes.
pub fn when(e: &Episode) -> String {
    let mut s = format!(
        "{} to {} ({})",
        clock(e.start_ms),
        clock(e.end_ms),
        duration(e.end_ms - e.start_ms)
    );
    if e.open_start {
        s.push_str(", runs off the window's start");
    }
    if e.open_end {
        s.push_str(", runs off the window's end");
    }
    s
}

/// "peak io.psi_full_pct 42% at 02:13:07".
pub fn peak(e: &Episode) -> Option<String> {
    let p = e.peak.as_ref()?;
    let unit = index(p.metric).map_or("", |m| METRICS[m].unit);
    Some(format!(
        "{} {} at {}",
        p.metric,
        show(p.value, unit),
        clock(p.time_ms)
    ))
}

/// "disk.await_ms 14 ms (normal here 0.20 ms, p95 0.90)" or why it is not known.
pub fn normal(e: &Episode, r: &Report) -> Option<String> {
    let p = e.peak.as_ref()?;
    let unit = index(p.metric).map_or("", |m| METRICS[m].unit);
    Some(match &e.normal {
        Some((_, n)) => format!(
            "{} {} (normal here {}, p95 {}; {} quiet intervals{})",
            p.metric,
            show(p.value, unit),
            show(n.median, unit),
            show(n.p95, unit),
            n.quiet,
            match n.over {
                Some((a, b)) => format!(" sampled from {} to {}", minute(a), minute(b)),
                None if n.sampled => " sampled over the window".to_string(),
                None => String::new(),
            }
        ),
        None if r.unknown.contains(&p.metric) => format!("{}: not in this recording", p.metric),
        None => format!(
            "{} {} (normal here unknown: no quiet interval in the window)",
            p.metric,
            show(p.value, unit)
        ),
    })
}

/// "dd (pid 41): write_kb_per_s up to 80000 in 57 intervals, per dirty.throttled"; a command
/// of several processes as the findings strip names it, "stress-ng-cpu x48 (pid 26464, its
/// busiest)".
pub fn culprit(c: &super::episodes::CulpritSum) -> String {
    let cg = c
        .cgroup
        .as_deref()
        .map(|g| format!(", {g}"))
        .unwrap_or_default();
    let (many, busiest) = if c.tasks > 1 {
        (format!(" x{}", c.tasks), ", its busiest")
    } else {
        (String::new(), "")
    };
    format!(
        "{}{many} (pid {}{busiest}{cg}): {} up to {:.0} in {} intervals, per {}",
        crate::safe::line(&c.comm),
        c.pid,
        c.metric,
        c.max,
        c.intervals,
        c.finding
    )
}

/// The causes line of an episode.
pub fn causes(e: &Episode) -> Vec<String> {
    if e.links.is_empty() {
        return vec!["no known link".to_string()];
    }
    e.links
        .iter()
        .map(|l| format!("episode {}: {}; {}", l.cause + 1, l.words, l.evidence))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::episodes::CulpritSum;

    fn sum(comm: &str, tasks: u32) -> CulpritSum {
        CulpritSum {
            comm: comm.into(),
            pid: 26464,
            cgroup: None,
            metric: "cpu_pct".into(),
            max: 1599.4,
            tasks,
            intervals: 11,
            finding: "cpu.pressure".into(),
        }
    }

    /// A command of many processes says how many, as the findings strip does, and that the
    /// pid is its busiest; one process and short-lived tasks (0) say neither.
    #[test]
    fn a_command_culprit_says_how_many_processes() {
        assert_eq!(
            super::culprit(&sum("stress-ng-cpu", 48)),
            "stress-ng-cpu x48 (pid 26464, its busiest): cpu_pct up to 1599 in 11 intervals, \
             per cpu.pressure"
        );
        assert_eq!(
            super::culprit(&sum("rustc", 1)),
            "rustc (pid 26464): cpu_pct up to 1599 in 11 intervals, per cpu.pressure"
        );
        assert!(!super::culprit(&sum("short-lived tasks", 0)).contains(" x0"));
    }
}
