//! Explain: a recording window told as a story — episodes (runs of related findings), who was
//! behind them, what is normal on this host, what was done, and which episode led to which.
//!
//! One pass over `record::walk` (the one "previous sample" rule, findings judged in order by
//! `assess`): each interval leaves a small row (its key metrics, which families held) and feeds
//! the episode builder; nothing else of a sample is kept, so a day at 1 s costs a few MB.
//! Everything after the pass (baselines, peaks, causes) works on those rows.

pub mod baseline;
pub mod brief;
pub mod causes;
pub mod diff;
pub mod digests;
pub mod episodes;
pub mod families;
pub mod metrics;
pub mod render;

use crate::assess::Assessed;
use crate::findings::{Severity, Thresholds};
use crate::record::digest::Held;
use crate::record::reader::{EventKind, Recording};
use crate::record::{format_rfc3339, parse_time, walk};
use anyhow::{bail, Result};
use metrics::METRICS;

/// One interval, as explain keeps it.
#[derive(Debug, Clone)]
pub struct Row {
    /// Wall clock at the interval's end and start (ms).
    pub end_ms: i64,
    pub start_ms: i64,
    pub vals: [f32; METRICS.len()],
    /// Bit `f` set: family `f` held.
    pub families: u32,
    /// A warn or crit finding held (not a quiet interval).
    pub alarmed: bool,
    /// Counts toward the baselines and diff's medians: every interval of a full walk; with
    /// digests, the evenly spread sample of the window (the decoded episodes would bias them).
    pub sampled: bool,
}

/// The peak of an episode's key metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Peak {
    pub time_ms: i64,
    pub metric: &'static str,
    pub value: f64,
}

/// A tweak a finding suggests, with what the recording says of its setting.
#[derive(Debug, Clone, PartialEq)]
pub struct TweakHint {
    pub name: String,
    pub preview: String,
}

#[derive(Debug, Clone)]
pub struct Episode {
    pub family: usize,
    pub ids: Vec<String>,
    pub first_row: usize,
    pub last_row: usize,
    pub start_ms: i64,
    pub end_ms: i64,
    /// Held from the window's first interval / through its last: it may have begun earlier or
    /// gone on later.
    pub open_start: bool,
    pub open_end: bool,
    pub severity: Severity,
    pub summary: String,
    pub peak: Option<Peak>,
    pub normal: Option<(&'static str, baseline::Normal)>,
    pub culprits: Vec<episodes::CulpritSum>,
    pub links: Vec<causes::Link>,
    pub tweaks: Vec<TweakHint>,
    /// Each rule's own line, worst first.
    pub lines: Vec<(String, Severity, String)>,
    /// What else the data says of it (an OOM kill that ended it).
    pub notes: Vec<String>,
}

/// A marker in the window: a tweak applied or undone, a recorder gap, an OOM kill, what the
/// kernel log reported (`kernel_log`).
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub time_ms: i64,
    pub kind: &'static str,
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub path: String,
    pub host: Option<String>,
    pub from_ms: i64,
    pub to_ms: i64,
    /// The recording's span.
    pub span: (i64, i64),
    pub intervals: u64,
    /// What could not be read: the recording's damaged records (the reader's words, first),
    /// then the samples in the window that did not decode (the walker's).
    pub unreadable: Vec<String>,
    /// Key metrics no interval of the window knew (an older perftop, no PSI, ...).
    pub unknown: Vec<&'static str>,
    pub episodes: Vec<Episode>,
    pub events: Vec<Event>,
    pub rows: Vec<Row>,
    pub thresholds: Thresholds,
    /// How the rows were read (all decoded, or through the digests).
    pub read: Read,
}

/// The window `--from`/`--to` of `rec`, checked against its span.
pub fn window(rec: &Recording, from: Option<&str>, to: Option<&str>) -> Result<(i64, i64)> {
    let (Some(first), Some(last)) = (rec.samples.first(), rec.samples.last()) else {
        bail!("{} holds no samples", rec.path.display());
    };
    let (first, last) = (first.wall_ms, last.wall_ms);
    let f = from.map(|s| parse_time(s, first, last)).transpose()?;
    let t = to.map(|s| parse_time(s, first, last)).transpose()?;
    let (lo, hi) = (f.unwrap_or(first), t.unwrap_or(last));
    if lo > hi {
        bail!(
            "--from {} is after --to {}",
            format_rfc3339(lo),
            format_rfc3339(hi)
        );
    }
    if lo > last || hi < first {
        bail!(
            "the window {} .. {} lies outside {}, which holds {} .. {}",
            format_rfc3339(lo),
            format_rfc3339(hi),
            rec.path.display(),
            format_rfc3339(first),
            format_rfc3339(last)
        );
    }
    Ok((lo, hi))
}

/// What `walk_rows` calls for each interval: its row number, (start ms, end ms), the interval
/// (`None`: not decoded) and the findings its digest says held (`None`: read without digests,
/// or unknown there; a row neither decoded nor with a known digest does not occur, and in
/// explain's plan a row not decoded is one in which no finding held); returns the families
/// that held.
pub type RowFn<'a> = dyn FnMut(usize, (i64, i64), Option<&Assessed>, Option<&Held>) -> u32 + 'a;

/// Whether explain and diff read the recorder's digests (`explain::digests`) where a
/// recording has them. `PERFTOP_EXPLAIN_FULL=1` decodes every interval instead (to compare the
/// two, as the tests do).
pub fn use_digests() -> bool {
    std::env::var_os("PERFTOP_EXPLAIN_FULL").is_none_or(|v| v.is_empty() || v == "0")
}

/// How the rows of a window were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Read {
    /// Intervals decoded, of the window's.
    pub decoded: u64,
    /// The intervals were read through the digests (only some decoded; the baselines come
    /// from an even sample).
    pub digests: bool,
}

/// Calls `f` for every interval of the window, keeping its row; returns the rows, how many
/// intervals there were and the warnings. The walk's threads decode; `f` runs in order. With
/// `digests` and a recording that has them, only the intervals `digests::plan` picks are
/// decoded (`lean`: `digests::plan`'s lean plan, for diff).
pub fn walk_rows(
    rec: &Recording,
    (lo, hi): (i64, i64),
    t: &Thresholds,
    threads: usize,
    (digests, lean): (bool, bool),
    f: &mut RowFn<'_>,
) -> Result<(Vec<Row>, u64, Vec<String>, Read)> {
    if let Some(plan) = digests
        .then(|| digests::plan(rec, (lo, hi), t, lean))
        .flatten()
    {
        return walk_planned(rec, &plan, t, threads, f);
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut warns = Vec::new();
    let n = walk::intervals(
        rec,
        Some(lo),
        Some(hi),
        t,
        threads,
        &mut |w| warns.push(w),
        &mut |_, w, a| {
            let secs = a.interval_s.unwrap_or(0.0);
            let start_ms = w - (secs * 1000.0).round() as i64;
            let families = f(rows.len(), (start_ms, w), Some(a), None);
            rows.push(row(a, (start_ms, w), families, true));
            Ok(())
        },
    )?;
    let read = Read {
        decoded: n,
        digests: false,
    };
    Ok((rows, n, warns, read))
}

/// The row of a decoded interval.
pub(super) fn row(
    a: &Assessed,
    (start_ms, end_ms): (i64, i64),
    families: u32,
    sampled: bool,
) -> Row {
    Row {
        end_ms,
        start_ms,
        vals: metrics::read_all(a),
        families,
        alarmed: a.findings.iter().any(|f| f.severity >= Severity::Warn),
        sampled,
    }
}

/// `walk_rows` through a plan: the planned intervals decoded, the rest rows of their own with
/// unknown values and no finding (their digests say none held).
fn walk_planned(
    rec: &Recording,
    plan: &digests::Plan,
    t: &Thresholds,
    threads: usize,
    f: &mut RowFn<'_>,
) -> Result<(Vec<Row>, u64, Vec<String>, Read)> {
    let mut rows: Vec<Row> = Vec::with_capacity(plan.ends.len());
    let mut warns: Vec<String> = Vec::new();
    let mut decoded = 0u64;
    let mut p = 0;
    // The rows before sample `upto` that were not decoded, in order; a planned one that did
    // not come back did not decode (its warning says so), and is no interval, as in a full walk.
    let quiet = |upto: usize, rows: &mut Vec<Row>, p: &mut usize, f: &mut RowFn<'_>| {
        while let Some(&i) = plan.ends.get(*p).filter(|&&i| i < upto) {
            if !plan.decode[*p] {
                let times = (rec.samples[i - 1].wall_ms, rec.samples[i].wall_ms);
                let families = f(rows.len(), times, None, plan.held[*p]);
                rows.push(Row {
                    end_ms: times.1,
                    start_ms: times.0,
                    vals: [f32::NAN; METRICS.len()],
                    families,
                    alarmed: false,
                    sampled: false,
                });
            }
            *p += 1;
        }
    };
    walk::ranges(
        rec,
        &plan.ranges,
        t,
        threads,
        &mut |w| {
            // A range's opener may be the last sample of the range before it.
            if warns.last() != Some(&w) {
                warns.push(w);
            }
        },
        &mut |i, w, a| {
            quiet(i, &mut rows, &mut p, f);
            if plan.ends.get(p) == Some(&i) {
                let secs = a.interval_s.unwrap_or(0.0);
                let times = (w - (secs * 1000.0).round() as i64, w);
                let families = f(rows.len(), times, Some(a), plan.held[p]);
                rows.push(row(a, times, families, plan.sampled[p]));
                decoded += 1;
                p += 1;
            }
            Ok(())
        },
    )?;
    quiet(usize::MAX, &mut rows, &mut p, f);
    let n = rows.len() as u64;
    Ok((
        rows,
        n,
        warns,
        Read {
            decoded,
            digests: !plan.whole,
        },
    ))
}

/// Explains the window `from..=to` of `rec`, through its digests unless
/// `PERFTOP_EXPLAIN_FULL` is set ([`use_digests`]).
pub fn explain(
    rec: &Recording,
    from: Option<&str>,
    to: Option<&str>,
    t: &Thresholds,
    threads: usize,
) -> Result<Report> {
    explain_with(rec, from, to, t, threads, use_digests())
}

/// [`explain`], reading the digests or not (`digests: false` decodes every interval).
pub fn explain_with(
    rec: &Recording,
    from: Option<&str>,
    to: Option<&str>,
    t: &Thresholds,
    threads: usize,
    digests: bool,
) -> Result<Report> {
    let span = window(rec, None, None)?;
    let (lo, hi) = window(rec, from, to)?;
    let mut b = episodes::Builder::new();
    let mut host = None;
    let mut events = Vec::new();
    let mut first_settings: Option<Vec<(&'static str, String)>> = None;
    let mut last_settings = Vec::new();
    let (rows, n, unreadable, read) = walk_rows(
        rec,
        (lo, hi),
        t,
        threads,
        (digests, false),
        &mut |row, times, a, _| {
            let Some(a) = a else {
                return b.quiet();
            };
            if host.is_none() {
                host.clone_from(&a.host.hostname);
            }
            if let Some(k) = a.memory.reclaim.oom_kills.filter(|k| *k > 0) {
                events.push(Event {
                    time_ms: a.host.wall_ms,
                    kind: "oom_kill",
                    text: format!("OOM killer: {k} killed"),
                });
            }
            let now = settings(a);
            if first_settings.is_none() {
                first_settings = Some(now.clone());
            }
            last_settings = now;
            b.add(row, times, a)
        },
    )?;
    if n == 0 {
        bail!(
            "no intervals between {} and {} in {} (it holds {} .. {})",
            format_rfc3339(lo),
            format_rfc3339(hi),
            rec.path.display(),
            format_rfc3339(span.0),
            format_rfc3339(span.1)
        );
    }
    for e in rec
        .events
        .iter()
        .filter(|e| e.wall_ms >= lo && e.wall_ms <= hi)
    {
        let (kind, text) = match &e.kind {
            EventKind::Action(a) => (
                if a.kind == "undone" {
                    "tweak_undone"
                } else {
                    "tweak_applied"
                },
                format!(
                    "{} {}{}",
                    a.name,
                    a.kind,
                    match (&a.from, &a.to) {
                        (Some(f), Some(t)) => format!(": {f} -> {t}"),
                        (None, Some(t)) => format!(": -> {t}"),
                        _ => String::new(),
                    }
                ),
            ),
            EventKind::Gap(g) if e.breaks_interval() => {
                ("recorder_gap", format!("recorder {}", g.reason))
            }
            EventKind::Gap(_) => continue,
            EventKind::Kernel(k) => ("kernel_log", k.summary()),
        };
        events.push(Event {
            time_ms: e.wall_ms,
            kind,
            text: crate::safe::line(&text).into_owned(),
        });
    }
    events.sort_by_key(|e| e.time_ms);
    let unknown = METRICS
        .iter()
        .enumerate()
        .filter(|(m, _)| rows.iter().all(|r| !r.vals[*m].is_finite()))
        .map(|(_, x)| x.name)
        .collect();
    // "Normal here" over the recording's last week where it holds more than the window.
    let over = baseline::span(span, (lo, hi));
    let base = match over {
        Some(s) => Some((baseline::sample_rows(rec, s, t, threads)?, s)),
        None => None,
    };
    let base = base.as_ref().map(|(r, s)| (r.as_slice(), *s));
    let mut eps: Vec<Episode> = b
        .finish()
        .into_iter()
        .map(|e| {
            finish(
                e,
                &rows,
                base,
                first_settings.as_deref().unwrap_or(&[]),
                &last_settings,
            )
        })
        .collect();
    for i in 0..eps.len() {
        eps[i].links = causes::links(&eps, &rows, i);
    }
    for e in eps
        .iter_mut()
        .filter(|e| families::FAMILIES[e.family].name == "memory")
    {
        // An OOM kill in the episode's last intervals (or the gap after) ended it.
        let tail = rows[e.last_row.saturating_sub(episodes::GAP)].start_ms;
        let after = rows
            .get(e.last_row + episodes::GAP + 1)
            .map_or(e.end_ms, |r| r.end_ms);
        if let Some(k) = events
            .iter()
            .find(|v| v.kind == "oom_kill" && v.time_ms >= tail && v.time_ms <= after)
        {
            e.notes.push(format!(
                "ended by an OOM kill at {} ({})",
                format_rfc3339(k.time_ms),
                k.text
            ));
        }
    }
    Ok(Report {
        path: rec.path.display().to_string(),
        host,
        from_ms: lo,
        to_ms: hi,
        span,
        intervals: n,
        unreadable: rec.warnings.iter().cloned().chain(unreadable).collect(),
        unknown,
        episodes: eps,
        events,
        rows,
        thresholds: t.clone(),
        read,
    })
}

/// The recorded values of the settings findings suggest tweaking (those a recording holds).
fn settings(a: &Assessed) -> Vec<(&'static str, String)> {
    let (r, d) = (&a.memory.reclaim, &a.dirty);
    [
        ("vm.swappiness", r.swappiness),
        ("vm.min_free_kbytes", r.min_free_kbytes),
        ("vm.dirty_ratio", d.dirty_ratio),
        ("vm.dirty_background_ratio", d.dirty_background_ratio),
        ("vm.dirty_bytes", d.dirty_bytes),
        ("vm.dirty_background_bytes", d.dirty_background_bytes),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some((k, v?.to_string())))
    .collect()
}

/// A tweak's hint: the command that previews it, and its setting as recorded (at the window's
/// start and end when a tweak changed it in between).
fn hint(name: String, id: &str, first: &[(&str, String)], last: &[(&str, String)]) -> TweakHint {
    let get = |s: &[(&str, String)]| s.iter().find(|(k, _)| *k == name).map(|(_, v)| v.clone());
    let recorded = match (get(first), get(last)) {
        (Some(a), Some(b)) if a != b => format!("; recorded {a}, then {b}"),
        (_, Some(b)) => format!("; recorded {b}"),
        _ => String::new(),
    };
    TweakHint {
        preview: format!(
            "suggested by {id}: `perftop tweak set {name} VALUE` previews the files it changes{recorded}"
        ),
        name,
    }
}

/// Peak, baseline, summary and tweaks of a built episode.
fn finish(
    e: episodes::Built,
    rows: &[Row],
    base: Option<(&[Row], (i64, i64))>,
    first: &[(&str, String)],
    last_set: &[(&str, String)],
) -> Episode {
    let key = families::key_metric(e.family, &e.ids);
    let peak = key.and_then(|name| {
        let m = metrics::index(name)?;
        rows[e.first_row..=e.last_row]
            .iter()
            .filter(|r| r.vals[m].is_finite())
            .max_by(|a, b| a.vals[m].total_cmp(&b.vals[m]))
            .map(|r| Peak {
                time_ms: r.end_ms,
                metric: name,
                value: f64::from(r.vals[m]),
            })
    });
    let normal = key.and_then(|name| {
        let m = metrics::index(name)?;
        let wider = base.and_then(|(b, over)| {
            Some(baseline::Normal {
                sampled: true,
                over: Some(over),
                ..baseline::normal(b, m, e.family)?
            })
        });
        Some((name, wider.or_else(|| baseline::normal(rows, m, e.family))?))
    });
    let lines = brief::rule_lines(&e);
    let (severity, summary) = brief::summary(&lines);
    let mut tweaks: Vec<TweakHint> = Vec::new();
    for id in &e.ids {
        let Some(name) = e.rules.get(id).and_then(|s| s.tweak.clone()) else {
            continue;
        };
        if tweaks.iter().any(|t| t.name == name) {
            continue;
        }
        tweaks.push(hint(name, id, first, last_set));
    }
    let last = rows.len().saturating_sub(1);
    Episode {
        family: e.family,
        ids: e.ids,
        first_row: e.first_row,
        last_row: e.last_row,
        start_ms: rows[e.first_row].start_ms,
        end_ms: rows[e.last_row].end_ms,
        open_start: e.first_row == 0,
        open_end: e.last_row == last,
        severity,
        summary,
        peak,
        normal,
        culprits: e.culprits,
        links: Vec::new(),
        tweaks,
        lines,
        notes: Vec::new(),
    }
}
