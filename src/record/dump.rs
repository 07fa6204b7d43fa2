//! `perftop dump`: derived metrics per recorded interval as text, CSV, JSON Lines or
//! OpenMetrics. Every number comes from `derive`, exactly as the live views show it.
//!
//! * text: the batch report per interval.
//! * json: one object per interval: `time` (RFC 3339, UTC) first, then the `perftop delta` keys
//!   in its order (`--pane`: `time`, `interval_s` and the pane's keys).
//! * csv: one section per pane (a header row, then one row per interval and entity, the first
//!   column `time`), sections separated by a blank line.
//! * openmetrics: one gauge family per numeric field (`perftop_<pane>_<field>_<unit>`, in base units: see `unit`), entity ids and
//!   names as labels (empty strings are not labels), timestamps in seconds, each family and each
//!   series contiguous, `# EOF` at the end — loadable with
//!   `promtool tsdb create-blocks-from openmetrics` (checked by `cargo test --test it record::` when
//!   promtool is installed). An interval whose wall clock stepped back is left out (a series'
//!   timestamps must increase).
//!
//! This module holds the options, the dispatch and the JSON rows; `csv` and `openmetrics` encode
//! the other two. The intervals come from `walk` (decoded and derived on worker threads, judged
//! in order); CSV sections and OpenMetrics points that outgrow a few MB go to an unnamed
//! temporary file, so a day-long dump runs in bounded memory.

use super::csv::Csv;
use super::format_rfc3339;
use super::openmetrics::OpenMetrics;
use super::reader::Recording;
use super::walk::intervals;
use crate::assess::Assessed;
use crate::findings::Thresholds;
use crate::pane::{keys_for, JSON_KEYS};
use anyhow::{bail, Context, Result};
use serde::ser::SerializeMap;
use serde::Serialize;
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
                "tcp" => m.serialize_entry(key, &d.tcp)?,
                "interrupts" => m.serialize_entry(key, &d.interrupts)?,
                "memory" => m.serialize_entry(key, &d.memory)?,
                "pressure" => m.serialize_entry(key, &d.pressure)?,
                "processes" => {
                    m.serialize_entry(key, &crate::derive::processes::Top(&d.processes))?
                }
                "cgroups" => m.serialize_entry(key, &d.cgroups)?,
                "temperatures" => m.serialize_entry(key, &d.temperatures)?,
                "filesystems" => m.serialize_entry(key, &d.filesystems)?,
                "kernel_events" if !d.kernel_events.is_empty() => {
                    m.serialize_entry(key, &d.kernel_events)?
                }
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
    // A window is resolved and checked as `cut` does: one with no sample is an error naming
    // the recording's span, not an empty dump that exits 0.
    let (from, to) = match (opts.from.as_deref(), opts.to.as_deref()) {
        (None, None) => (None, None),
        (f, t) => {
            let (a, b) = super::cut::window(rec, f, t)?;
            (f.map(|_| a), t.map(|_| b))
        }
    };
    let keys: Vec<&str> = match &opts.pane {
        Some(p) => keys_for(p)?,
        None => JSON_KEYS.to_vec(),
    };
    if opts.format == Format::Text && opts.pane.is_some() {
        bail!("--pane applies to csv, json and openmetrics; text prints every pane");
    }
    let mut csv = Csv::default();
    let mut om = OpenMetrics::default();
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
                        Ok(text) => out.write_all(crate::safe::json(text).as_bytes())?,
                        Err(_) => out.write_all(&line)?,
                    }
                }
                Format::Csv => csv.add(&format_rfc3339(w), d, &keys)?,
                Format::OpenMetrics => om.add(w, d, &keys, opts.pane.is_none())?,
            }
            Ok(())
        },
    )?;
    match opts.format {
        Format::Csv => csv.write(out)?,
        Format::OpenMetrics => om.write(out, warn)?,
        _ => {}
    }
    out.flush().context("writing output")?;
    Ok(n)
}

/// A read-write file that has no name: created in the temp directory, then unlinked.
pub(super) fn anonymous_temp_file() -> Result<std::fs::File> {
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
