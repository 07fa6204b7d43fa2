//! `perftop dump`: derived metrics per recorded interval as text, CSV, JSON Lines or
//! OpenMetrics. Every number comes from `derive`, exactly as the live views show it.
//!
//! * text: the batch report per interval.
//! * json: one object per interval: `time` (RFC 3339, UTC) plus the `perftop delta` keys.
//! * csv: one section per pane (a header row, then one row per interval and entity, the first
//!   column `time`), sections separated by a blank line.
//! * openmetrics: one gauge family per numeric field (`perftop_<pane>_<field>`), entity ids and
//!   names as labels, timestamps in seconds, families grouped, `# EOF` at the end (loadable with
//!   `promtool tsdb create-blocks-from openmetrics`). Buffered in memory: use --from/--to to cut
//!   a long recording.

use super::reader::{Decoder, Recording};
use super::{format_rfc3339, parse_time};
use crate::derive::{derive_with, Derived};
use crate::findings::Thresholds;
use crate::sample::Sample;
use anyhow::{bail, Context, Result};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Csv,
    Json,
    OpenMetrics,
}

impl std::str::FromStr for Format {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Format> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "text" | "txt" => Format::Text,
            "csv" => Format::Csv,
            "json" | "jsonl" | "ndjson" => Format::Json,
            "openmetrics" | "om" | "prometheus" => Format::OpenMetrics,
            _ => bail!("unknown format '{s}' (text, csv, json, openmetrics)"),
        })
    }
}

/// The panes, as `Derived`'s JSON keys.
pub const PANES: [&str; 11] = [
    "host",
    "cpus",
    "policies",
    "nodes",
    "hugepages",
    "dirty",
    "disks",
    "softirq_cpus",
    "irq_queues",
    "nics",
    "findings",
];

/// A pane name or alias → the `Derived` keys it covers.
pub fn pane_keys(name: &str) -> Result<Vec<&'static str>> {
    let n = name.to_ascii_lowercase();
    Ok(match n.as_str() {
        "cpu" => vec!["cpus", "policies"],
        "numa" | "node" => vec!["nodes"],
        "disk" | "io" | "iostat" => vec!["disks"],
        "softirq" | "net" => vec!["softirq_cpus", "irq_queues", "nics"],
        "nic" => vec!["nics"],
        "memory" | "mem" => vec!["nodes", "hugepages", "dirty"],
        _ => match PANES.iter().find(|p| **p == n) {
            Some(p) => vec![*p],
            None => bail!(
                "unknown pane '{name}' (cpu, numa, hugepages, dirty, disks, softirq, or one of {})",
                PANES.join(", ")
            ),
        },
    })
}

#[derive(Debug, Clone)]
pub struct DumpOptions {
    pub format: Format,
    pub from: Option<String>,
    pub to: Option<String>,
    pub pane: Option<String>,
    pub width: usize,
    pub thresholds: Thresholds,
}

/// Calls `f(n, wall_ms, derived)` for every recorded interval in `from..=to`. Rates are not
/// computed across a recorder start/stop; undecodable samples are reported through `warn`.
pub fn intervals(
    rec: &Recording,
    from: Option<i64>,
    to: Option<i64>,
    thresholds: &Thresholds,
    warn: &mut dyn FnMut(String),
    f: &mut dyn FnMut(u64, i64, &Derived) -> Result<()>,
) -> Result<u64> {
    let mut start = match from {
        Some(t) => rec.samples.partition_point(|s| s.wall_ms < t),
        None => 0,
    };
    start = start.saturating_sub(1);
    let mut dec = Decoder::default();
    let mut prev: Option<Sample> = None;
    let mut n = 0;
    for i in start..rec.len() {
        let w = rec.samples[i].wall_ms;
        if to.is_some_and(|t| w > t) {
            break;
        }
        if rec.gap_before(i) {
            prev = None;
        }
        let cur = match rec.decode(i, &mut dec) {
            Ok(s) => s,
            Err(e) => {
                warn(format!(
                    "sample {i} ({}): {e:#}; skipped",
                    format_rfc3339(w)
                ));
                prev = None;
                continue;
            }
        };
        if let Some(p) = &prev {
            if from.is_none_or(|t| w >= t) {
                n += 1;
                let d = derive_with(Some(p), &cur, thresholds);
                f(n, w, &d)?;
            }
        }
        prev = Some(cur);
    }
    Ok(n)
}

/// Writes the dump of `rec` to `out`; returns the number of intervals.
pub fn dump(
    rec: &Recording,
    opts: &DumpOptions,
    out: &mut dyn Write,
    warn: &mut dyn FnMut(String),
) -> Result<u64> {
    let (first, last) = match (rec.samples.first(), rec.samples.last()) {
        (Some(a), Some(b)) => (a.wall_ms, b.wall_ms),
        _ => (0, 0),
    };
    let from = opts
        .from
        .as_deref()
        .map(|s| parse_time(s, first, last))
        .transpose()?;
    let to = opts
        .to
        .as_deref()
        .map(|s| parse_time(s, first, last))
        .transpose()?;
    let keys: Vec<&str> = match &opts.pane {
        Some(p) => pane_keys(p)?,
        None => PANES.to_vec(),
    };
    if opts.format == Format::Text && opts.pane.is_some() {
        bail!("--pane applies to csv, json and openmetrics; text prints every pane");
    }
    let mut csv: BTreeMap<usize, CsvPane> = BTreeMap::new();
    let mut om: BTreeMap<String, BTreeMap<String, Vec<(i64, f64)>>> = BTreeMap::new();
    let n = intervals(rec, from, to, &opts.thresholds, warn, &mut |n, w, d| {
        match opts.format {
            Format::Text => {
                writeln!(out, "# {}", format_rfc3339(w))?;
                out.write_all(crate::text::report(d, n, opts.width.max(60)).as_bytes())?;
            }
            Format::Json => {
                let v = serde_json::to_value(d)?;
                let mut m = Map::new();
                m.insert("time".into(), Value::String(format_rfc3339(w)));
                if let Value::Object(o) = v {
                    for (k, x) in o {
                        if opts.pane.is_none() || keys.contains(&k.as_str()) || k == "interval_s" {
                            m.insert(k, x);
                        }
                    }
                }
                serde_json::to_writer(&mut *out, &Value::Object(m))?;
                out.write_all(b"\n")?;
            }
            Format::Csv => {
                let v = serde_json::to_value(d)?;
                let time = format_rfc3339(w);
                for (pi, key) in PANES.iter().enumerate() {
                    if !keys.contains(key) {
                        continue;
                    }
                    let pane = csv.entry(pi).or_default();
                    let Some(x) = v.get(*key) else { continue };
                    let rows: Vec<&Value> = match x {
                        Value::Array(a) => a.iter().collect(),
                        other => vec![other],
                    };
                    for r in rows {
                        let mut cells = Vec::new();
                        if *key == "host" {
                            cells.push(("interval_s".to_string(), cell(v.get("interval_s"))));
                        }
                        flatten("", r, &mut cells);
                        // Identity columns first (cpu, device, name...), then the numbers.
                        cells.sort_by_key(|(k, _)| !ID_COLUMNS.contains(&k.as_str()));
                        pane.push(&time, cells);
                    }
                }
            }
            Format::OpenMetrics => {
                let v = serde_json::to_value(d)?;
                for key in &keys {
                    if let Some(x) = v.get(*key) {
                        om_walk(
                            &format!("perftop_{key}"),
                            x,
                            &[],
                            &mut |fam, labels, val| {
                                om.entry(fam)
                                    .or_default()
                                    .entry(labels)
                                    .or_default()
                                    .push((w, val));
                            },
                        );
                    }
                }
                if opts.pane.is_none() {
                    if let Some(s) = v.get("interval_s").and_then(Value::as_f64) {
                        om.entry("perftop_interval_seconds".into())
                            .or_default()
                            .entry(String::new())
                            .or_default()
                            .push((w, s));
                    }
                }
            }
        }
        Ok(())
    })?;
    match opts.format {
        Format::Csv => {
            let mut firstp = true;
            for (pi, pane) in &csv {
                if pane.header.is_empty() {
                    continue;
                }
                if !firstp {
                    writeln!(out)?;
                }
                firstp = false;
                let _ = pi;
                let head: Vec<String> = std::iter::once("time".to_string())
                    .chain(pane.header.iter().cloned())
                    .map(|h| csv_escape(&h))
                    .collect();
                writeln!(out, "# pane: {}", PANES[*pi])?;
                writeln!(out, "{}", head.join(","))?;
                for r in &pane.rows {
                    writeln!(out, "{r}")?;
                }
            }
        }
        Format::OpenMetrics => {
            let mut s = String::new();
            for (fam, series) in &om {
                let _ = writeln!(s, "# TYPE {fam} gauge");
                for (labels, points) in series {
                    for (t, v) in points {
                        let _ = writeln!(
                            s,
                            "{fam}{labels} {} {}.{:03}",
                            om_value(*v),
                            t.div_euclid(1000),
                            t.rem_euclid(1000)
                        );
                    }
                }
                out.write_all(s.as_bytes())?;
                s.clear();
            }
            out.write_all(b"# EOF\n")?;
        }
        _ => {}
    }
    out.flush().context("writing output")?;
    Ok(n)
}

#[derive(Default)]
struct CsvPane {
    header: Vec<String>,
    rows: Vec<String>,
}

impl CsvPane {
    fn push(&mut self, time: &str, cells: Vec<(String, String)>) {
        if self.header.is_empty() {
            self.header = cells.iter().map(|c| c.0.clone()).collect();
        }
        let map: std::collections::HashMap<&str, &str> = cells
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut row = csv_escape(time);
        for h in &self.header {
            row.push(',');
            row.push_str(&csv_escape(map.get(h.as_str()).copied().unwrap_or("")));
        }
        self.rows.push(row);
    }
}

fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(x) => x.to_string(),
    }
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                flatten(&join(k), x, out);
            }
        }
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            let s: Vec<String> = a.iter().map(|x| cell(Some(x))).collect();
            out.push((prefix.to_string(), s.join(" ")));
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                flatten(&join(&i.to_string()), x, out);
            }
        }
        x => out.push((prefix.to_string(), cell(Some(x)))),
    }
}

fn csv_escape(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Columns that identify a CSV row, put first.
const ID_COLUMNS: [&str; 9] = [
    "interval_s",
    "cpu",
    "node",
    "irq",
    "policy",
    "name",
    "device",
    "size_kb",
    "id",
];

/// Integer fields that identify an array element (become labels, not gauges).
const ID_FIELDS: [&str; 4] = ["cpu", "node", "irq", "size_kb"];
/// String fields that change every interval and would make a new series each time.
const NOT_LABELS: [&str; 2] = ["message", "dir"];

fn sanitize(s: &str) -> String {
    let mut o: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if o.starts_with(|c: char| c.is_ascii_digit()) {
        o.insert(0, '_');
    }
    o
}

/// A gauge family name must not end in a suffix OpenMetrics reserves for other types.
fn family_name(fam: &str) -> String {
    const RESERVED: [&str; 8] = [
        "_total", "_count", "_sum", "_bucket", "_created", "_info", "_gcount", "_gsum",
    ];
    if RESERVED.iter().any(|r| fam.ends_with(r)) {
        format!("{fam}_value")
    } else {
        fam.to_string()
    }
}

fn om_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn om_labels(labels: &[(String, String)]) -> String {
    if labels.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", om_escape(v)))
        .collect();
    format!("{{{}}}", parts.join(","))
}

fn om_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

fn om_walk(
    fam: &str,
    v: &Value,
    labels: &[(String, String)],
    sink: &mut dyn FnMut(String, String, f64),
) {
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                sink(family_name(fam), om_labels(labels), x);
            }
        }
        Value::Bool(b) => sink(family_name(fam), om_labels(labels), f64::from(u8::from(*b))),
        Value::Object(m) => {
            for (k, x) in m {
                om_walk(&format!("{fam}_{}", sanitize(k)), x, labels, sink);
            }
        }
        Value::Array(a) => {
            let stem = fam.rsplit('_').next().unwrap_or("i").to_string();
            for (i, e) in a.iter().enumerate() {
                let mut l = labels.to_vec();
                let add = |l: &mut Vec<(String, String)>, k: &str, val: String| {
                    let mut name = sanitize(k);
                    if l.iter().any(|(n, _)| *n == name) {
                        name = format!("{}_{name}", sanitize(&stem));
                    }
                    l.push((name, val));
                };
                match e {
                    Value::Object(m) => {
                        let mut rest = Map::new();
                        let mut any_label = false;
                        for (k, x) in m {
                            match x {
                                Value::String(s) if !NOT_LABELS.contains(&k.as_str()) => {
                                    add(&mut l, k, s.clone());
                                    any_label = true;
                                }
                                Value::Number(n)
                                    if ID_FIELDS.contains(&k.as_str())
                                        && !any_label_named(&l, k) =>
                                {
                                    add(&mut l, k, n.to_string());
                                    any_label = true;
                                }
                                Value::String(_) | Value::Null => {}
                                _ => {
                                    rest.insert(k.clone(), x.clone());
                                }
                            }
                        }
                        if !any_label {
                            add(&mut l, "index", i.to_string());
                        }
                        if rest.values().all(|x| !x.is_number() && !x.is_boolean()) {
                            // Nothing to measure (e.g. a finding): say it is present.
                            sink(family_name(&format!("{fam}_present")), om_labels(&l), 1.0);
                        }
                        om_walk(fam, &Value::Object(rest), &l, sink);
                    }
                    Value::Number(_) | Value::Bool(_) => {
                        add(&mut l, "index", i.to_string());
                        om_walk(fam, e, &l, sink);
                    }
                    _ => {}
                }
            }
        }
        Value::String(_) | Value::Null => {}
    }
}

fn any_label_named(l: &[(String, String)], k: &str) -> bool {
    l.iter().any(|(n, _)| n == k)
}
