//! `perftop snapshot`: one raw sample (counters and gauges) as JSON, to stdout or a file.

use super::{read_sample, root_check};
use crate::root::Root;
use crate::source::Reader;
use crate::text::safe;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::PathBuf;

pub fn snapshot(root: &Root, output: Option<PathBuf>) -> Result<()> {
    root_check(root)?;
    let mut reader = Reader::new(root.clone());
    let sample = read_sample(&mut reader);
    let json = serde_json::to_string_pretty(&sample).context("encoding sample")?;
    let json = safe::json(&json);
    match output {
        Some(path) => std::fs::write(&path, format!("{json}\n"))
            .with_context(|| format!("writing {}", path.display())),
        None => {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{json}").context("writing to stdout")
        }
    }
}
