//! `perftop dump`: derived metrics per recorded interval as text, CSV, JSON Lines or
//! OpenMetrics. Every number comes from `derive`, exactly as the live views show it.
//!
//! * text: the batch report per interval.
//! * json: one object per interval: `time` (RFC 3339, UTC) first, then the `perftop delta` keys
//!   in its order (`--pane`: `time`, `interval_s` and the pane's keys).
//! * csv: one section per pane (a header row, then one row per interval and entity, the first
//!   column `time`), sections separated by a blank line.
//! * openmetrics: one gauge family per numeric field (`perftop_<pane>_<field>`), entity ids and
//!   names as labels (empty strings are not labels), timestamps in seconds, each family and each
//!   series contiguous, `# EOF` at the end — loadable with
//!   `promtool tsdb create-blocks-from openmetrics` (checked by `cargo test --test record` when
//!   promtool is installed). An interval whose wall clock stepped back is left out (a series'
//!   timestamps must increase).
//!
//! The intervals come from `walk` (decoded and derived on worker threads, judged in order); CSV
//! sections and OpenMetrics points that outgrow a few MB go to an unnamed temporary file, so a
//! day-long dump runs in bounded memory.

use super::reader::Recording;
use super::walk::intervals;
use super::{format_rfc3339, parse_time};
use crate::assess::Assessed;
use crate::findings::Thresholds;
use crate::view::{keys_for, JSON_KEYS};
use anyhow::{bail, Context, Result};
use serde::ser::SerializeMap;
use serde::Serialize;
use serde_json::Value;
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
#[derive(Debug, Clone)]
pub struct DumpOptions {
    pub format: Format,
    pub from: Option<String>,
    pub to: Option<String>,
    pub pane: Option<String>,
    pub width: usize,
    pub thresholds: Thresholds,
    /// Decoding threads: 0 for one per CPU (at most 8), 1 for none besides the caller.
    pub threads: usize,
}

/// A JSON Lines row: `time` then every `Derived` key, in `perftop delta`'s order, serialized
/// straight to the output (no intermediate `Value`).
#[derive(Serialize)]
struct JsonLine<'a> {
    time: &'a str,
    #[serde(flatten)]
    d: &'a Assessed,
}

/// A JSON Lines row with only `time`, `interval_s` and the chosen panes.
struct JsonPanes<'a> {
    time: &'a str,
    d: &'a Assessed,
    keys: &'a [&'a str],
}

impl Serialize for JsonPanes<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let d = self.d;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("time", self.time)?;
        m.serialize_entry("interval_s", &d.interval_s)?;
        for key in JSON_KEYS.iter().filter(|k| self.keys.contains(k)) {
            match *key {
                "host" => m.serialize_entry(key, &d.host)?,
                "cpus" => m.serialize_entry(key, &d.cpus)?,
                "policies" => m.serialize_entry(key, &d.policies)?,
                "nodes" => m.serialize_entry(key, &d.nodes)?,
                "hugepages" => m.serialize_entry(key, &d.hugepages)?,
                "dirty" => m.serialize_entry(key, &d.dirty)?,
                "disks" => m.serialize_entry(key, &d.disks)?,
                "softirq_cpus" => m.serialize_entry(key, &d.softirq_cpus)?,
                "irq_queues" => m.serialize_entry(key, &d.irq_queues)?,
                "nics" => m.serialize_entry(key, &d.nics)?,
                "findings" => m.serialize_entry(key, &d.findings)?,
                _ => {}
            }
        }
        m.end()
    }
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
        Some(p) => keys_for(p)?,
        None => JSON_KEYS.to_vec(),
    };
    if opts.format == Format::Text && opts.pane.is_some() {
        bail!("--pane applies to csv, json and openmetrics; text prints every pane");
    }
    let mut csv: BTreeMap<usize, CsvPane> = BTreeMap::new();
    let mut om = OmSeries::default();
    let (mut om_last, mut om_skipped): (Option<i64>, u64) = (None, 0);
    let mut line = Vec::with_capacity(16 << 10);
    let n = intervals(
        rec,
        from,
        to,
        &opts.thresholds,
        opts.threads,
        warn,
        &mut |n, w, d| {
            match opts.format {
                Format::Text => {
                    writeln!(out, "# {}", format_rfc3339(w))?;
                    out.write_all(crate::text::report(d, n, opts.width.max(60)).as_bytes())?;
                }
                Format::Json => {
                    let time = format_rfc3339(w);
                    line.clear();
                    if opts.pane.is_some() {
                        let row = JsonPanes {
                            time: &time,
                            d,
                            keys: &keys,
                        };
                        serde_json::to_writer(&mut line, &row)?;
                    } else {
                        serde_json::to_writer(&mut line, &JsonLine { time: &time, d })?;
                    }
                    line.push(b'\n');
                    // serde_json writes valid UTF-8; DEL and C1 controls it leaves raw.
                    match std::str::from_utf8(&line) {
                        Ok(text) => out.write_all(crate::text::safe::json(text).as_bytes())?,
                        Err(_) => out.write_all(&line)?,
                    }
                }
                Format::Csv => {
                    let v = serde_json::to_value(d)?;
                    let time = format_rfc3339(w);
                    for (pi, key) in JSON_KEYS.iter().enumerate() {
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
                            pane.push(&time, cells)?;
                        }
                    }
                }
                Format::OpenMetrics => {
                    // A series' timestamps must increase: skip an interval whose clock stepped back.
                    if om_last.is_some_and(|l| w <= l) {
                        om_skipped += 1;
                        return Ok(());
                    }
                    om_last = Some(w);
                    let v = serde_json::to_value(d)?;
                    let mut fam = String::with_capacity(96);
                    for key in &keys {
                        if let Some(x) = v.get(*key) {
                            fam.clear();
                            fam.push_str("perftop_");
                            fam.push_str(key);
                            om_walk(&mut fam, x, &mut Vec::new(), "", &mut |f, l, val| {
                                om.add(f, l, w, val)
                            })?;
                        }
                    }
                    if opts.pane.is_none() {
                        if let Some(s) = v.get("interval_s").and_then(Value::as_f64) {
                            om.add("perftop_interval_seconds", "", w, s)?;
                        }
                    }
                }
            }
            Ok(())
        },
    )?;
    match opts.format {
        Format::Csv => {
            let mut firstp = true;
            for (pi, pane) in &mut csv {
                if pane.header.is_empty() {
                    continue;
                }
                if !firstp {
                    writeln!(out)?;
                }
                firstp = false;
                let mut head = b"time".to_vec();
                for h in &pane.header {
                    head.push(b',');
                    push_csv(&mut head, h);
                }
                writeln!(out, "# pane: {}", JSON_KEYS[*pi])?;
                out.write_all(&head)?;
                out.write_all(b"\n")?;
                pane.rows.copy_to(out)?;
            }
        }
        Format::OpenMetrics => {
            if om_skipped > 0 {
                warn(format!(
                    "{om_skipped} intervals left out of the OpenMetrics output: the wall clock stepped back (a series' timestamps must increase)"
                ));
            }
            om.write(out)?;
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
    rows: Spill,
}

impl CsvPane {
    /// Appends one row. The header is the first row's columns; a later row with other columns
    /// (an entity that gained or lost a field) fills the header's columns by name.
    fn push(&mut self, time: &str, cells: Vec<(String, String)>) -> Result<()> {
        if self.header.is_empty() {
            self.header = cells.iter().map(|c| c.0.clone()).collect();
        }
        let row = &mut self.rows.buf;
        push_csv(row, time);
        let same = cells.len() == self.header.len()
            && cells.iter().zip(&self.header).all(|(c, h)| c.0 == *h);
        if same {
            for (_, v) in &cells {
                row.push(b',');
                push_csv(row, v);
            }
        } else {
            let map: std::collections::HashMap<&str, &str> = cells
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            for h in &self.header {
                row.push(b',');
                push_csv(row, map.get(h.as_str()).copied().unwrap_or(""));
            }
        }
        row.push(b'\n');
        self.rows.maybe_spill()
    }
}

/// Bytes kept in memory up to [`Spill::LIMIT`], then moved to an unnamed temporary file (created
/// in the temp directory and unlinked at once), so a day-long CSV dump does not hold every
/// section in memory until the sections can be written one after another.
#[derive(Default)]
struct Spill {
    buf: Vec<u8>,
    file: Option<std::fs::File>,
}

impl Spill {
    const LIMIT: usize = 1 << 20;

    fn maybe_spill(&mut self) -> Result<()> {
        if self.buf.len() < Self::LIMIT {
            return Ok(());
        }
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(anonymous_temp_file()?),
        };
        file.write_all(&self.buf)
            .context("writing a temporary file for the CSV dump")?;
        self.buf.clear();
        Ok(())
    }

    fn copy_to(&mut self, out: &mut dyn Write) -> Result<()> {
        if let Some(f) = &mut self.file {
            use std::io::Seek;
            f.seek(std::io::SeekFrom::Start(0))
                .context("reading back the CSV dump's temporary file")?;
            std::io::copy(f, out).context("reading back the CSV dump's temporary file")?;
        }
        out.write_all(&self.buf)?;
        Ok(())
    }
}

/// A read-write file that has no name: created in the temp directory, then unlinked.
fn anonymous_temp_file() -> Result<std::fs::File> {
    let dir = std::env::temp_dir();
    for attempt in 0..16u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = dir.join(format!(
            ".perftop-dump-{}-{nanos}-{attempt}",
            std::process::id()
        ));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                let _ = std::fs::remove_file(&path);
                return Ok(f);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(e).with_context(|| {
                    format!(
                        "creating a temporary file in {} for the CSV dump",
                        dir.display()
                    )
                })
            }
        }
    }
    bail!(
        "could not create a temporary file in {} for the CSV dump",
        dir.display()
    )
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

/// Appends `s` as one CSV field (quoted when it holds a comma, quote or line break).
fn push_csv(out: &mut Vec<u8>, s: &str) {
    let s = &*crate::text::safe::text(s);
    if s.contains([',', '"', '\n', '\r']) {
        out.push(b'"');
        out.extend_from_slice(s.replace('"', "\"\"").as_bytes());
        out.push(b'"');
    } else {
        out.extend_from_slice(s.as_bytes());
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
    if is_reserved(fam) {
        format!("{fam}_value")
    } else {
        fam.to_string()
    }
}

fn om_escape(s: &str) -> String {
    crate::text::safe::text(s)
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Appends `{k="v",...}` (nothing for no labels).
fn render_labels(labels: &[(String, String)], out: &mut String) {
    out.clear();
    if labels.is_empty() {
        return;
    }
    out.push('{');
    for (i, (k, v)) in labels.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(k);
        out.push_str("=\"");
        out.push_str(&om_escape(v));
        out.push('"');
    }
    out.push('}');
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

type OmSink<'a> = dyn FnMut(&str, &str, f64) -> Result<()> + 'a;

/// Emits a leaf of family `fam` (renamed when it ends in a reserved suffix).
fn om_leaf(fam: &str, labels: &str, v: f64, sink: &mut OmSink) -> Result<()> {
    if is_reserved(fam) {
        sink(&family_name(fam), labels, v)
    } else {
        sink(fam, labels, v)
    }
}

fn is_reserved(fam: &str) -> bool {
    const RESERVED: [&str; 8] = [
        "_total", "_count", "_sum", "_bucket", "_created", "_info", "_gcount", "_gsum",
    ];
    RESERVED.iter().any(|r| fam.ends_with(r))
}

/// Walks one pane's JSON: numbers and booleans become gauges named by their path (`fam` grows
/// and shrinks as a stack), array elements become label sets (their string fields and id
/// fields, else `index`). `labels` is the current label set and `rendered` its text form.
fn om_walk(
    fam: &mut String,
    v: &Value,
    labels: &mut Vec<(String, String)>,
    rendered: &str,
    sink: &mut OmSink,
) -> Result<()> {
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                om_leaf(fam, rendered, x, sink)?;
            }
        }
        Value::Bool(b) => om_leaf(fam, rendered, f64::from(u8::from(*b)), sink)?,
        Value::Object(m) => {
            for (k, x) in m {
                let len = fam.len();
                fam.push('_');
                fam.push_str(&sanitize(k));
                om_walk(fam, x, labels, rendered, sink)?;
                fam.truncate(len);
            }
        }
        Value::Array(a) => {
            let stem = sanitize(fam.rsplit('_').next().unwrap_or("i"));
            let base = labels.len();
            let mut text = String::new();
            let mut is_label = Vec::new();
            for (i, e) in a.iter().enumerate() {
                labels.truncate(base);
                let add = |l: &mut Vec<(String, String)>, k: &str, val: String| {
                    let mut name = sanitize(k);
                    if l.iter().any(|(n, _)| *n == name) {
                        name = format!("{stem}_{name}");
                    }
                    l.push((name, val));
                };
                match e {
                    Value::Object(m) => {
                        is_label.clear();
                        let mut any_label = false;
                        let mut measured = false;
                        for (k, x) in m {
                            let label = match x {
                                // Prometheus drops empty label values, which could merge
                                // two series: an empty string is no label.
                                Value::String(s)
                                    if !s.is_empty() && !NOT_LABELS.contains(&k.as_str()) =>
                                {
                                    add(labels, k, s.clone());
                                    true
                                }
                                Value::Number(n)
                                    if ID_FIELDS.contains(&k.as_str())
                                        && !any_label_named(labels, k) =>
                                {
                                    add(labels, k, n.to_string());
                                    true
                                }
                                _ => false,
                            };
                            any_label |= label;
                            measured |= !label && (x.is_number() || x.is_boolean());
                            is_label.push(label);
                        }
                        if !any_label {
                            add(labels, "index", i.to_string());
                        }
                        render_labels(labels, &mut text);
                        if !measured {
                            // Nothing to measure (e.g. a finding): say it is present.
                            let len = fam.len();
                            fam.push_str("_present");
                            om_leaf(fam, &text, 1.0, sink)?;
                            fam.truncate(len);
                        }
                        for ((k, x), label) in m.iter().zip(&is_label) {
                            if *label || matches!(x, Value::String(_) | Value::Null) {
                                continue;
                            }
                            let len = fam.len();
                            fam.push('_');
                            fam.push_str(&sanitize(k));
                            om_walk(fam, x, labels, &text, sink)?;
                            fam.truncate(len);
                        }
                    }
                    Value::Number(_) | Value::Bool(_) => {
                        add(labels, "index", i.to_string());
                        render_labels(labels, &mut text);
                        om_walk(fam, e, labels, &text, sink)?;
                    }
                    _ => {}
                }
            }
            labels.truncate(base);
        }
        Value::String(_) | Value::Null => {}
    }
    Ok(())
}

fn any_label_named(l: &[(String, String)], k: &str) -> bool {
    l.iter().any(|(n, _)| n == k)
}

/// Every OpenMetrics series of a dump, written family by family and series by series once the
/// recording is read (OpenMetrics wants each family, and each series within it, contiguous).
/// Points stay in memory up to [`OmSeries::LIMIT`]; past that they are moved, per series, to an
/// unnamed temporary file and read back in order at the end, so a day-long dump runs in bounded
/// memory.
#[derive(Default)]
struct OmSeries {
    /// `family \0 labels` → index into `series`.
    index: std::collections::HashMap<String, usize>,
    series: Vec<OmOne>,
    key: String,
    in_memory: usize,
    spill: Option<(std::fs::File, u64)>,
}

struct OmOne {
    family: String,
    labels: String,
    points: Vec<(i64, f64)>,
    /// (file offset, point count) of the points already moved to the temporary file.
    spilled: Vec<(u64, usize)>,
}

impl OmSeries {
    const LIMIT: usize = 2 << 20;

    fn add(&mut self, family: &str, labels: &str, t: i64, v: f64) -> Result<()> {
        self.key.clear();
        self.key.push_str(family);
        self.key.push('\0');
        self.key.push_str(labels);
        let i = match self.index.get(self.key.as_str()) {
            Some(i) => *i,
            None => {
                self.series.push(OmOne {
                    family: family.to_string(),
                    labels: labels.to_string(),
                    points: Vec::new(),
                    spilled: Vec::new(),
                });
                self.index.insert(self.key.clone(), self.series.len() - 1);
                self.series.len() - 1
            }
        };
        self.series[i].points.push((t, v));
        self.in_memory += 1;
        if self.in_memory >= Self::LIMIT {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> Result<()> {
        let (file, len) = match &mut self.spill {
            Some(f) => f,
            None => self.spill.insert((anonymous_temp_file()?, 0)),
        };
        let mut bytes = Vec::new();
        for s in &mut self.series {
            if s.points.is_empty() {
                continue;
            }
            bytes.clear();
            for (t, v) in &s.points {
                bytes.extend_from_slice(&t.to_le_bytes());
                bytes.extend_from_slice(&v.to_bits().to_le_bytes());
            }
            file.write_all(&bytes)
                .context("writing a temporary file for the OpenMetrics dump")?;
            s.spilled.push((*len, s.points.len()));
            *len += bytes.len() as u64;
            s.points.clear();
        }
        self.in_memory = 0;
        Ok(())
    }

    /// Writes `# TYPE` and the points of every family, in name order, series in label order.
    fn write(&self, out: &mut dyn Write) -> Result<()> {
        use std::os::unix::fs::FileExt;
        let mut order: Vec<&OmOne> = self.series.iter().collect();
        order.sort_by(|a, b| (&a.family, &a.labels).cmp(&(&b.family, &b.labels)));
        let mut text = String::with_capacity(64 << 10);
        let mut bytes = Vec::new();
        let mut points = Vec::new();
        let mut last_family: Option<&str> = None;
        for s in order {
            if last_family != Some(s.family.as_str()) {
                let _ = writeln!(text, "# TYPE {} gauge", s.family);
                last_family = Some(&s.family);
            }
            for &(at, n) in &s.spilled {
                let Some((file, _)) = &self.spill else {
                    bail!("OpenMetrics dump: temporary file missing");
                };
                bytes.resize(n * 16, 0);
                file.read_exact_at(&mut bytes, at)
                    .context("reading back the OpenMetrics dump's temporary file")?;
                points.clear();
                points.extend(bytes.chunks_exact(16).map(|c| {
                    let (t, v) = c.split_at(8);
                    (
                        i64::from_le_bytes(t.try_into().unwrap_or([0; 8])),
                        f64::from_bits(u64::from_le_bytes(v.try_into().unwrap_or([0; 8]))),
                    )
                }));
                om_lines(&mut text, s, &points);
                flush_text(&mut text, out)?;
            }
            om_lines(&mut text, s, &s.points);
            flush_text(&mut text, out)?;
        }
        out.write_all(text.as_bytes())?;
        Ok(())
    }
}

fn om_lines(text: &mut String, s: &OmOne, points: &[(i64, f64)]) {
    for (t, v) in points {
        let _ = writeln!(
            text,
            "{}{} {} {}.{:03}",
            s.family,
            s.labels,
            om_value(*v),
            t.div_euclid(1000),
            t.rem_euclid(1000)
        );
    }
}

fn flush_text(text: &mut String, out: &mut dyn Write) -> Result<()> {
    if text.len() >= 32 << 10 {
        out.write_all(text.as_bytes())?;
        text.clear();
    }
    Ok(())
}
