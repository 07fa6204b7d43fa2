//! `perftop dump --format openmetrics`: one gauge family per numeric field
//! (`perftop_<pane>_<field>_<unit>`, in base units: see `unit`), entity ids and names as labels (empty strings are not labels),
//! timestamps in seconds, each family and each series contiguous, `# EOF` at the end. Points
//! that outgrow a few MB go to an unnamed temporary file until the dump is read.

/// The compound methods the serializers here share: a tuple is a sequence, a struct a map
/// (`$seq` and `$map`: the serializer's compound types).
macro_rules! tuples_are_seqs_structs_are_maps {
    ($seq:ty, $map:ty) => {
        fn serialize_tuple(self, len: usize) -> Result<$seq, Error> {
            self.serialize_seq(Some(len))
        }
        fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<$seq, Error> {
            self.serialize_seq(Some(len))
        }
        fn serialize_struct(self, _: &'static str, len: usize) -> Result<$map, Error> {
            self.serialize_map(Some(len))
        }
    };
}

mod key;
mod leaves;
mod names;
mod tree;
mod value;
use super::dump::anonymous_temp_file;
use crate::assess::Assessed;
use anyhow::{bail, Context, Result};
pub(crate) use leaves::Leaves;
use std::fmt::Write as _;
use std::io::Write;
pub(crate) use tree::Node;
pub(crate) use value::{om_value, om_value_into};

/// What ends an OpenMetrics exposition (the dump, and `perftop export`'s page when asked for
/// OpenMetrics).
pub(crate) const EOF: &str = "# EOF\n";

/// An OpenMetrics dump, filled interval by interval.
#[derive(Default)]
pub(super) struct OpenMetrics {
    series: OmSeries,
    last: Option<i64>,
    /// Intervals left out because the wall clock stepped back.
    skipped: u64,
}

impl OpenMetrics {
    /// Adds the points of the interval ending at `w` (ms) for the panes in `keys`, and the
    /// interval's length when every pane is dumped.
    pub(super) fn add(&mut self, w: i64, d: &Assessed, keys: &[&str], all: bool) -> Result<()> {
        // A series' timestamps must increase: skip an interval whose clock stepped back.
        if self.last.is_some_and(|l| w <= l) {
            self.skipped += 1;
            return Ok(());
        }
        self.last = Some(w);
        // Only the panes asked for are built (a process list left out is never made).
        let mut fields = keys.to_vec();
        fields.push("interval_s");
        let v = Node::of_fields(d, &fields)?;
        let om = &mut self.series;
        points(&v, keys, &mut |f, l, val| om.add(f, l, w, val))?;
        if all {
            if let Some(s) = v.get("interval_s").and_then(Node::as_f64) {
                om.add("perftop_interval_seconds", "", w, s)?;
            }
        }
        Ok(())
    }

    /// Writes every family and `# EOF`; says through `warn` how many intervals were left out.
    pub(super) fn write(&self, out: &mut dyn Write, warn: &mut dyn FnMut(String)) -> Result<()> {
        if self.skipped > 0 {
            warn(format!(
                "{} intervals left out of the OpenMetrics output: the wall clock stepped back (a series' timestamps must increase)",
                self.skipped
            ));
        }
        self.series.write(out)?;
        out.write_all(EOF.as_bytes())?;
        Ok(())
    }
}

/// Integer fields that identify an array element (become labels, not gauges).
pub(crate) const ID_FIELDS: [&str; 4] = ["cpu", "node", "irq", "size_kb"];
/// String fields that change every interval and would make a new series each time, and
/// limits that are a number or `"max"` (no limit: no gauge, and no label either), and a
/// disk's SCSI state and why its depth is unknown (a path failing must not rename its series).
const NOT_LABELS: [&str; 7] = [
    "message",
    "dir",
    "cpu_quota_cpus",
    "mem_high_kb",
    "mem_max_kb",
    "device_state",
    "queue_depth_unknown",
];

/// Every gauge of one interval's JSON `v` for the panes in `keys`, in base units: the
/// generic walk (`om_walk`), and for `findings` one `perftop_finding_active{id,severity,pane}`
/// per finding, for `dirty` its state as `perftop_dirty_state{state}`. `dump --format
/// openmetrics` and `perftop export` both name their series here.
pub(crate) fn points(v: &Node, keys: &[&str], sink: &mut OmSink) -> Result<()> {
    traced_points(v, keys, &mut |f, l, x, _| sink(f, l, x))
}

/// Where a series' value comes from: a constant 1 (a finding, a state, a label set with
/// nothing to measure), or a leaf of the tree (`tree::Leaf`) times a factor (`scaled`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Origin {
    One,
    Leaf(u32, f64),
}

impl Origin {
    /// The series' value, given the tree's leaves in serialization order (`leaves::Leaves`).
    pub(crate) fn value(self, leaves: &[f64]) -> f64 {
        match self {
            Origin::One => 1.0,
            Origin::Leaf(i, factor) => {
                scaled(leaves.get(i as usize).copied().unwrap_or(f64::NAN), factor)
            }
        }
    }
}

/// A number in base units: unscaled values print as they were read (an f32 load average stays
/// 2.7); down-scaling divides by the power of ten, so 200 µs prints as 0.0002.
fn scaled(x: f64, factor: f64) -> f64 {
    if factor == 1.0 {
        x
    } else if factor < 1.0 {
        x / (1.0 / factor).round()
    } else {
        x * factor
    }
}

pub(crate) type TracedSink<'a> = dyn FnMut(&str, &str, f64, Origin) -> Result<()> + 'a;

/// `points`, each series also saying where its value came from.
pub(crate) fn traced_points(v: &Node, keys: &[&str], sink: &mut TracedSink) -> Result<()> {
    let mut fam = String::with_capacity(96);
    let mut text = String::new();
    for key in keys {
        let Some(x) = v.get(key) else { continue };
        if *key == "findings" {
            let findings = match x {
                Node::Arr(a) => a.as_slice(),
                _ => &[],
            };
            for f in findings {
                let label = |k: &str| {
                    let v = f.get(k).and_then(Node::as_str).unwrap_or("");
                    (k.to_string(), v.to_string())
                };
                let labels: Vec<(String, String)> = ["id", "severity", "pane"]
                    .into_iter()
                    .map(label)
                    .filter(|(_, v)| !v.is_empty())
                    .collect();
                render_labels(&labels, &mut text);
                sink("perftop_finding_active", &text, 1.0, Origin::One)?;
            }
            continue;
        }
        if let Some(state) = x.get("state").and_then(Node::as_str) {
            render_labels(&[("state".into(), state.to_string())], &mut text);
            sink(&format!("perftop_{key}_state"), &text, 1.0, Origin::One)?;
        }
        fam.clear();
        fam.push_str("perftop_");
        fam.push_str(key);
        om_walk(&mut fam, x, &mut Vec::new(), "", 1.0, sink)?;
    }
    Ok(())
}

/// A numeric field's name and factor in Prometheus' base units: `_kb` becomes `_bytes`
/// (x1024), `_pct`, the PSI averages and `util` a `_ratio` (/100), `/s` and `_per_s` `_per_second`, the iostat
/// awaits (ms) and `_ms`, `_us`, `_centisecs`, `_s`, `_secs` `_seconds`, `_mhz` `_hertz`, `_c`
/// `_celsius`; anything else keeps its name.
fn unit(key: &str) -> (String, f64) {
    let k = key.to_ascii_lowercase();
    // Sysctls whose names would read as a base unit they are not in (`dirty_ratio` is a
    // percentage) or collide with a converted field (`dirty_kb` becomes `dirty_bytes`).
    if SYSCTLS.contains(&k.as_str()) {
        let factor = if k.ends_with("_ratio") { 0.01 } else { 1.0 };
        return (format!("sysctl_{}", sanitize(&k)), factor);
    }
    if k == "per_s" {
        return ("per_second".into(), 1.0);
    }
    let (stem, suffix, factor) = if let Some(st) = k.strip_suffix("kb/s") {
        (st, "bytes_per_second", 1024.0)
    } else if let Some(st) = k.strip_suffix("/s") {
        (st, "per_second", 1.0)
    } else if let Some(st) = k.strip_suffix("_kb_per_s") {
        (st, "_bytes_per_second", 1024.0)
    } else if let Some(st) = k.strip_suffix("_per_s") {
        (st, "_per_second", 1.0)
    } else if let Some(st) = k.strip_suffix("_kb") {
        (st, "_bytes", 1024.0)
    } else if let Some(st) = k.strip_suffix("req-sz") {
        // iostat's average request size, in kB.
        return (sanitize(&format!("{st}req_sz_bytes")), 1024.0);
    } else if let Some(st) = k.strip_suffix("_pct") {
        (st, "_ratio", 0.01)
    } else if k.ends_with("_avg10") || k.ends_with("_avg60") || k.ends_with("_avg300") {
        // The kernel's PSI averages are percentages.
        (k.as_str(), "_ratio", 0.01)
    } else if k == "util" {
        ("util", "_ratio", 0.01)
    } else if k.ends_with("_await") {
        (k.as_str(), "_seconds", 0.001)
    } else if let Some(st) = k.strip_suffix("_ms") {
        (st, "_seconds", 0.001)
    } else if let Some(st) = k.strip_suffix("_us") {
        (st, "_seconds", 1e-6)
    } else if let Some(st) = k.strip_suffix("_centisecs") {
        (st, "_seconds", 0.01)
    } else if let Some(st) = k.strip_suffix("_s").or_else(|| k.strip_suffix("_secs")) {
        (st, "_seconds", 1.0)
    } else if let Some(st) = k.strip_suffix("_mhz") {
        (st, "_hertz", 1e6)
    } else if let Some(st) = k.strip_suffix("_c") {
        (st, "_celsius", 1.0)
    } else {
        (k.as_str(), "", 1.0)
    };
    let sep =
        if suffix.is_empty() || suffix.starts_with('_') || stem.is_empty() || stem.ends_with('_') {
            ""
        } else {
            "_"
        };
    (sanitize(&format!("{stem}{sep}{suffix}")), factor)
}

/// Fields that hold a sysctl's value as the kernel takes it (see `unit`).
const SYSCTLS: [&str; 5] = [
    "dirty_ratio",
    "dirty_bytes",
    "dirty_background_ratio",
    "dirty_background_bytes",
    "overcommit_ratio",
];

/// Appends `_<key>` to `fam` (in base units for a number) and says by what to multiply.
fn push_key(fam: &mut String, k: &str, x: &Node) -> f64 {
    fam.push('_');
    names::with(k, x.is_number(), |name, factor| {
        fam.push_str(name);
        factor
    })
}

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

/// Appends label value `s` as OpenMetrics writes it: unsafe characters `?`, then `\\`, `"` and
/// line breaks escaped. The runs between them are copied whole: three `replace`s made three
/// strings of every label value of every series, each interval.
fn push_escaped(out: &mut String, s: &str) {
    let safe = crate::safe::text(s);
    let mut rest: &str = &safe;
    while let Some(i) = rest.find(['\\', '"', '\n']) {
        out.push_str(&rest[..i]);
        out.push_str(match rest.as_bytes()[i] {
            b'\\' => "\\\\",
            b'"' => "\\\"",
            _ => "\\n",
        });
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
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
        push_escaped(out, v);
        out.push('"');
    }
    out.push('}');
}

pub(crate) type OmSink<'a> = dyn FnMut(&str, &str, f64) -> Result<()> + 'a;

/// Emits a leaf of family `fam` (renamed when it ends in a reserved suffix).
fn om_leaf(fam: &str, labels: &str, v: f64, from: Origin, sink: &mut TracedSink) -> Result<()> {
    if is_reserved(fam) {
        sink(&family_name(fam), labels, v, from)
    } else {
        sink(fam, labels, v, from)
    }
}

fn is_reserved(fam: &str) -> bool {
    const RESERVED: [&str; 8] = [
        "_total", "_count", "_sum", "_bucket", "_created", "_info", "_gcount", "_gsum",
    ];
    // Each suffix is `_` and one word: the name's last such part is compared, once, instead
    // of eight `ends_with` a series (`perf`: 1.7 % of `perftop export`).
    fam.rfind('_')
        .is_some_and(|i| RESERVED.contains(&&fam[i..]))
}

/// Walks one pane's JSON: numbers and booleans become gauges named by their path (`fam` grows
/// and shrinks as a stack), array elements become label sets (their string fields and id
/// fields, else `index`). `labels` is the current label set and `rendered` its text form.
fn om_walk(
    fam: &mut String,
    v: &Node,
    labels: &mut Vec<(String, String)>,
    rendered: &str,
    factor: f64,
    sink: &mut TracedSink,
) -> Result<()> {
    match v {
        Node::Num(n, at) => {
            if let Some(x) = n.as_f64() {
                let from = Origin::Leaf(at.0, factor);
                om_leaf(fam, rendered, scaled(x, factor), from, sink)?;
            }
        }
        Node::Bool(b, at) => {
            let from = Origin::Leaf(at.0, 1.0);
            om_leaf(fam, rendered, f64::from(u8::from(*b)), from, sink)?;
        }
        Node::Obj(m) => {
            for (k, x) in m {
                let len = fam.len();
                let factor = push_key(fam, k, x);
                om_walk(fam, x, labels, rendered, factor, sink)?;
                fam.truncate(len);
            }
        }
        Node::Arr(a) => {
            let stem = sanitize(fam.rsplit('_').next().unwrap_or("i"));
            let base = labels.len();
            let mut text = String::new();
            let mut is_label = Vec::new();
            for (i, e) in a.iter().enumerate() {
                labels.truncate(base);
                let add = |l: &mut Vec<(String, String)>, k: &str, val: String| {
                    let mut name = names::with(k, false, |n, _| n.to_string());
                    if l.iter().any(|(n, _)| *n == name) {
                        name = format!("{stem}_{name}");
                    }
                    l.push((name, val));
                };
                match e {
                    Node::Obj(m) => {
                        is_label.clear();
                        let mut any_label = false;
                        let mut measured = false;
                        for (k, x) in m {
                            let label = match x {
                                // Prometheus drops empty label values, which could merge
                                // two series: an empty string is no label.
                                Node::Str(s)
                                    if !s.is_empty() && !NOT_LABELS.contains(&k.as_ref()) =>
                                {
                                    add(labels, k, s.clone());
                                    true
                                }
                                Node::Num(n, _)
                                    if ID_FIELDS.contains(&k.as_ref())
                                        && !any_label_named(labels, k) =>
                                {
                                    add(labels, k, n.to_string());
                                    true
                                }
                                _ => false,
                            };
                            any_label |= label;
                            measured |= !label && matches!(x, Node::Num(..) | Node::Bool(..));
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
                            om_leaf(fam, &text, 1.0, Origin::One, sink)?;
                            fam.truncate(len);
                        }
                        for ((k, x), label) in m.iter().zip(&is_label) {
                            if *label || matches!(x, Node::Str(_) | Node::Null) {
                                continue;
                            }
                            let len = fam.len();
                            let factor = push_key(fam, k, x);
                            om_walk(fam, x, labels, &text, factor, sink)?;
                            fam.truncate(len);
                        }
                    }
                    Node::Num(..) | Node::Bool(..) => {
                        add(labels, "index", i.to_string());
                        render_labels(labels, &mut text);
                        om_walk(fam, e, labels, &text, 1.0, sink)?;
                    }
                    _ => {}
                }
            }
            labels.truncate(base);
        }
        Node::Str(_) | Node::Null => {}
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

#[cfg(test)]
mod tests;
