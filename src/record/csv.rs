//! `perftop dump --format csv`: one section per pane (a header row, then one row per interval
//! and entity, the first column `time`), sections separated by a blank line. A section that
//! outgrows a few MB goes to an unnamed temporary file until the dump is read.

use super::dump::anonymous_temp_file;
use crate::assess::Assessed;
use crate::pane::JSON_KEYS;
use anyhow::{Context, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;

/// The sections of a CSV dump, by pane index, filled interval by interval.
#[derive(Default)]
pub(super) struct Csv {
    panes: BTreeMap<usize, CsvPane>,
}

impl Csv {
    /// Adds the rows of one interval ending at `time` for the panes in `keys`.
    pub(super) fn add(&mut self, time: &str, d: &Assessed, keys: &[&str]) -> Result<()> {
        let v = serde_json::to_value(d)?;
        for (pi, key) in JSON_KEYS.iter().enumerate() {
            if !keys.contains(key) {
                continue;
            }
            let pane = self.panes.entry(pi).or_default();
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
                pane.push(time, cells)?;
            }
        }
        Ok(())
    }

    /// Writes every section, in pane order.
    pub(super) fn write(&mut self, out: &mut dyn Write) -> Result<()> {
        let mut firstp = true;
        for (pi, pane) in &mut self.panes {
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
        Ok(())
    }
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
    let s = &*crate::safe::text(s);
    if s.contains([',', '"', '\n', '\r']) {
        out.push(b'"');
        out.extend_from_slice(s.replace('"', "\"\"").as_bytes());
        out.push(b'"');
    } else {
        out.extend_from_slice(s.as_bytes());
    }
}

/// Columns that identify a CSV row, put first.
const ID_COLUMNS: [&str; 11] = [
    "interval_s",
    "mount",
    "label",
    "cpu",
    "node",
    "irq",
    "policy",
    "name",
    "device",
    "size_kb",
    "id",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// A load average the kernel wrote as 2.70 is stored as an f32 and printed as 2.7, not as
    /// the f64 the f32 widens to (2.700000047683716).
    #[test]
    fn f32_values_print_in_their_shortest_form() {
        let mut s = crate::sample::Sample::default();
        s.host.loadavg = Some([2.7, 0.1, 3.12]);
        let d = crate::assess::assess(None, &s, &Default::default());
        let mut out = Vec::new();
        let mut csv = Csv::default();
        csv.add("t", &d, &["host"]).expect("add");
        csv.write(&mut out).expect("write");
        let text = String::from_utf8(out).expect("utf8");
        assert!(text.contains(",2.7 0.1 3.12,"), "{text}");
        assert!(!text.contains("2.700000047683716"), "{text}");
        assert!(!text.contains("0.10000000149011612"), "{text}");
    }
}
