//! Diff: two recordings, or two windows of one, compared metric by metric (median and p95 of
//! each side, ranked by how far the metric moved beyond its own noise) and finding by finding
//! (held only in A, only in B, in both). Each side is one streamed walk, as `explain` does.

use super::baseline::{quantile, values};
use super::families::{family_of, FAMILIES};
use super::metrics::{show, METRICS};
use super::{walk_rows, window, Row};
use crate::findings::Thresholds;
use crate::record::digest::Held;
use crate::record::format_rfc3339;
use crate::record::reader::Recording;
use anyhow::{bail, Result};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// One side of a diff.
#[derive(Debug, Clone)]
pub struct Side {
    pub path: String,
    pub host: Option<String>,
    pub from_ms: i64,
    pub to_ms: i64,
    pub intervals: u64,
    pub unreadable: Vec<String>,
    /// Rule id → intervals it held in.
    pub findings: BTreeMap<String, u64>,
    /// Episode family (`explain`'s) → how many episodes and the seconds they spanned.
    pub episodes: BTreeMap<&'static str, Episodes>,
    rows: Vec<Row>,
    /// How its rows were read (through digests: the medians are of an even sample).
    pub read: super::Read,
}

/// The episodes of one family on one side of a diff.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Episodes {
    pub count: u32,
    pub seconds: f64,
}

/// A window of `rec` summed up for a diff, through its digests unless `PERFTOP_EXPLAIN_FULL`
/// is set.
pub fn side(
    rec: &Recording,
    from: Option<&str>,
    to: Option<&str>,
    t: &Thresholds,
    threads: usize,
) -> Result<Side> {
    side_with(rec, from, to, t, threads, super::use_digests())
}

/// [`side`], reading the digests or not (`digests: false` decodes every interval).
pub fn side_with(
    rec: &Recording,
    from: Option<&str>,
    to: Option<&str>,
    t: &Thresholds,
    threads: usize,
    digests: bool,
) -> Result<Side> {
    let (lo, hi) = window(rec, from, to)?;
    let mut host = None;
    let mut findings: BTreeMap<String, u64> = BTreeMap::new();
    // Per row, the findings that held: its digest's where the recording has one (the lean plan
    // decodes only the even sample, the window's ends and what the digests do not know), else
    // the decoded interval's.
    let mut held: Vec<Held> = Vec::new();
    let (rows, n, unreadable, read) = walk_rows(
        rec,
        (lo, hi),
        t,
        threads,
        (digests, true),
        &mut |_, _, a, known| {
            if let Some(a) = a.filter(|_| host.is_none()) {
                host.clone_from(&a.host.hostname);
            }
            let h: Held = match (known, a) {
                (Some(h), _) => h.clone(),
                (None, Some(a)) => a
                    .findings
                    .iter()
                    .map(|f| (f.id.clone(), f.severity))
                    .collect(),
                (None, None) => Vec::new(),
            };
            let mut families = 0;
            for (id, _) in &h {
                *findings.entry(id.clone()).or_default() += 1;
                families |= 1 << family_of(id);
            }
            held.push(h);
            families
        },
    )?;
    // The same gap rule as `explain`'s episodes, so "only in B" means what explain's list shows.
    let mut episodes: BTreeMap<&'static str, Episodes> = BTreeMap::new();
    let held: Vec<Option<&Held>> = held.iter().map(Some).collect();
    for e in super::digests::spans(&held) {
        let (Some(first), Some(last)) = (rows.get(e.first), rows.get(e.last)) else {
            continue;
        };
        let sum = episodes.entry(FAMILIES[e.family].name).or_default();
        sum.count += 1;
        sum.seconds += (last.end_ms - first.start_ms).max(0) as f64 / 1000.0;
    }
    if n == 0 {
        bail!(
            "no intervals between {} and {} in {}",
            format_rfc3339(lo),
            format_rfc3339(hi),
            rec.path.display()
        );
    }
    Ok(Side {
        path: rec.path.display().to_string(),
        host,
        from_ms: lo,
        to_ms: hi,
        intervals: n,
        unreadable,
        findings,
        episodes,
        rows,
        read,
    })
}

/// Median and p95 of one metric on one side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub median: f64,
    pub p95: f64,
    /// The spread of its middle half (p75 - p25): its own noise.
    pub iqr: f64,
}

fn stats(rows: &[Row], m: usize) -> Option<Stats> {
    // With digests only an even sample of the window was decoded (the rest is unknown).
    let v = values(rows, m, |r| r.sampled);
    Some(Stats {
        median: quantile(&v, 0.5)?,
        p95: quantile(&v, 0.95)?,
        iqr: quantile(&v, 0.75)? - quantile(&v, 0.25)?,
    })
}

/// The smallest change worth a unit of noise, for a metric that did not move at all on either
/// side (a flat zero has no noise of its own).
fn floor(unit: &str) -> f64 {
    match unit {
        "pages/s" => 10.0,
        "" => 0.5,
        _ => 1.0,
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub metric: &'static str,
    pub unit: &'static str,
    pub a: Option<Stats>,
    pub b: Option<Stats>,
    /// B's median over A's (`None`: A's is 0 or either is unknown).
    pub ratio: Option<f64>,
    /// How many units of noise the median or the p95 moved (the larger); the noise is the
    /// smaller of the two sides' IQRs, at least 5% of the larger median and a floor per unit.
    pub score: f64,
}

#[derive(Debug, Clone)]
pub struct Diff {
    pub a: Side,
    pub b: Side,
    pub changes: Vec<Change>,
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    pub both: Vec<String>,
    /// Episode families only in A, only in B, in both (by family name).
    pub episodes_only_a: Vec<&'static str>,
    pub episodes_only_b: Vec<&'static str>,
    pub episodes_both: Vec<&'static str>,
    /// Said before the report: different hosts, unreadable intervals.
    pub warnings: Vec<String>,
}

pub fn diff(a: Side, b: Side) -> Diff {
    let mut changes: Vec<Change> = METRICS
        .iter()
        .enumerate()
        .map(|(m, x)| {
            let (sa, sb) = (stats(&a.rows, m), stats(&b.rows, m));
            let score = match (sa, sb) {
                (Some(p), Some(q)) => {
                    let scale = p.median.abs().max(q.median.abs());
                    // The quieter side's spread: an incident's own swings must not hide it.
                    let noise = p.iqr.min(q.iqr).max(0.05 * scale).max(floor(x.unit));
                    (q.median - p.median).abs().max((q.p95 - p.p95).abs()) / noise
                }
                _ => 0.0,
            };
            let ratio = match (sa, sb) {
                (Some(p), Some(q)) if p.median != 0.0 => Some(q.median / p.median),
                _ => None,
            };
            Change {
                metric: x.name,
                unit: x.unit,
                a: sa,
                b: sb,
                ratio,
                score,
            }
        })
        .collect();
    changes.sort_by(|x, y| y.score.total_cmp(&x.score));
    let mut warnings = Vec::new();
    if a.host != b.host {
        warnings.push(format!(
            "comparing two hosts: A is {}, B is {}",
            a.host.as_deref().unwrap_or("unnamed"),
            b.host.as_deref().unwrap_or("unnamed")
        ));
    }
    for (name, s) in [("A", &a), ("B", &b)] {
        for u in &s.unreadable {
            warnings.push(format!("{name}: {u}"));
        }
        if s.read.digests {
            let n = s.rows.iter().filter(|r| r.sampled).count();
            warnings.push(format!(
                "{name}: medians and p95 from {n} intervals sampled evenly over the window (read through the recorder's digests; PERFTOP_EXPLAIN_FULL=1 decodes all {})",
                s.intervals
            ));
        }
    }
    let only = |x: &Side, y: &Side| -> Vec<String> {
        x.findings
            .keys()
            .filter(|k| !y.findings.contains_key(*k))
            .cloned()
            .collect()
    };
    let ep_only = |x: &Side, y: &Side| -> Vec<&'static str> {
        x.episodes
            .keys()
            .filter(|k| !y.episodes.contains_key(*k))
            .copied()
            .collect()
    };
    Diff {
        episodes_only_a: ep_only(&a, &b),
        episodes_only_b: ep_only(&b, &a),
        episodes_both: a
            .episodes
            .keys()
            .filter(|k| b.episodes.contains_key(*k))
            .copied()
            .collect(),
        only_a: only(&a, &b),
        only_b: only(&b, &a),
        both: a
            .findings
            .keys()
            .filter(|k| b.findings.contains_key(*k))
            .cloned()
            .collect(),
        changes,
        a,
        b,
        warnings,
    }
}

fn num(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

fn side_json(s: &Side) -> Value {
    json!({
        "recording": s.path, "host": s.host, "from": format_rfc3339(s.from_ms),
        "to": format_rfc3339(s.to_ms), "intervals": s.intervals,
    })
}

fn ep_json(family: &str, s: &Side) -> Value {
    let e = s.episodes.get(family).copied().unwrap_or_default();
    json!({"family": family, "count": e.count, "seconds": num(e.seconds)})
}

/// A family's episodes on one side in words: `memory (2, 3m 10s)`.
fn ep_text(family: &str, s: &Side) -> String {
    let e = s.episodes.get(family).copied().unwrap_or_default();
    let secs = e.seconds.round() as u64;
    let span = if secs >= 60 {
        format!("{}m {}s", secs / 60, secs % 60)
    } else {
        format!("{secs}s")
    };
    format!("{family} ({}, {span})", e.count)
}

/// `{"a","b","warnings","changes":[{"metric","a":{"median","p95"},"b":{...},"ratio","score"}],
/// "findings":{"only_a","only_b","both"},"episodes":{"only_a":[{"family","count","seconds"}],
/// "only_b":[...],"both":[{"family","a","b"}]}}`, changes ranked first to last.
pub fn json(d: &Diff) -> String {
    let st = |s: &Option<Stats>| {
        s.map(|s| json!({"median": num(s.median), "p95": num(s.p95), "iqr": num(s.iqr)}))
    };
    let v = json!({
        "a": side_json(&d.a),
        "b": side_json(&d.b),
        "warnings": d.warnings,
        "changes": d.changes.iter().map(|c| json!({
            "metric": c.metric, "unit": c.unit, "a": st(&c.a), "b": st(&c.b),
            "ratio": c.ratio.map(num), "score": num(c.score),
        })).collect::<Vec<_>>(),
        "findings": {"only_a": d.only_a, "only_b": d.only_b, "both": d.both},
        "episodes": {
            "only_a": d.episodes_only_a.iter().map(|f| ep_json(f, &d.a)).collect::<Vec<_>>(),
            "only_b": d.episodes_only_b.iter().map(|f| ep_json(f, &d.b)).collect::<Vec<_>>(),
            "both": d.episodes_both.iter().map(|f| json!({
                "family": f, "a": ep_json(f, &d.a), "b": ep_json(f, &d.b),
            })).collect::<Vec<_>>(),
        },
    });
    let s = serde_json::to_string_pretty(&v).unwrap_or_else(|_| "{}".to_string()) + "\n";
    crate::safe::json(&s).into_owned()
}

/// The text report, 80 columns: the ranked changes (those that moved), then the findings.
pub fn text(d: &Diff) -> String {
    let mut o = String::new();
    for (n, s) in [("A", &d.a), ("B", &d.b)] {
        super::render::text::wrap(
            &mut o,
            &format!("{n}: "),
            &format!(
                "{} on {}, {} .. {} ({} intervals)",
                crate::safe::line(&s.path),
                crate::safe::line(s.host.as_deref().unwrap_or("an unnamed host")),
                format_rfc3339(s.from_ms),
                format_rfc3339(s.to_ms),
                s.intervals
            ),
            80,
        );
    }
    for w in &d.warnings {
        super::render::text::wrap(&mut o, "warning: ", &crate::safe::line(w), 80);
    }
    o.push_str(&format!(
        "\n{:<30} {:>18} {:>18} {:>9}\n",
        "metric (its unit in its name)", "A median / p95", "B median / p95", "x noise"
    ));
    // Numbers only: the unit is in the metric's name, and the table stays 80 columns wide.
    let cell = |s: &Option<Stats>| match s {
        Some(s) => format!("{} / {}", show(s.median, ""), show(s.p95, "")),
        None => "unknown".to_string(),
    };
    let mut moved = 0;
    for c in d.changes.iter().filter(|c| c.score >= 1.0) {
        moved += 1;
        let score = if c.score >= 10_000.0 {
            ">9999".to_string()
        } else if c.score >= 10.0 {
            format!("{:.0}", c.score)
        } else {
            format!("{:.1}", c.score)
        };
        let line = format!(
            "{:<30} {:>18} {:>18} {:>9}",
            c.metric,
            cell(&c.a),
            cell(&c.b),
            score
        );
        // Cut, not wrapped: a row is one line.
        o.extend(line.chars().take(80));
        o.push('\n');
    }
    if moved == 0 {
        o.push_str("no metric moved beyond its noise\n");
    }
    o.push('\n');
    for (label, ids) in [
        ("findings only in A: ", &d.only_a),
        ("findings only in B: ", &d.only_b),
        ("findings in both:   ", &d.both),
    ] {
        let list = if ids.is_empty() {
            "none".to_string()
        } else {
            ids.join(", ")
        };
        super::render::text::wrap(&mut o, label, &list, 80);
    }
    let eps = |fams: &[&'static str], s: &Side| -> String {
        if fams.is_empty() {
            "none".to_string()
        } else {
            fams.iter()
                .map(|f| ep_text(f, s))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let both = if d.episodes_both.is_empty() {
        "none".to_string()
    } else {
        d.episodes_both
            .iter()
            .map(|f| format!("{} -> {}", ep_text(f, &d.a), ep_text(f, &d.b)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (label, list) in [
        ("episodes only in A: ", eps(&d.episodes_only_a, &d.a)),
        ("episodes only in B: ", eps(&d.episodes_only_b, &d.b)),
        ("episodes in both:   ", both),
    ] {
        super::render::text::wrap(&mut o, label, &list, 80);
    }
    o
}
