//! `perftop delta OLD NEW`: the derived metrics and findings between two snapshots, as JSON
//! (the scripting contract). Two samples, no history: no disk baselines.

use crate::assess::assess;
use crate::findings::Thresholds;
use crate::safe;
use crate::sample::Sample;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

pub fn load_sample(path: &Path) -> Result<Sample> {
    let text = crate::root::read_regular_file(path, crate::root::MAX_FILE_BYTES)
        .with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_slice(&text)
        .with_context(|| format!("{} is not a perftop snapshot", path.display()))
}

pub fn delta(old: &Path, new: &Path, thresholds: &Thresholds) -> Result<()> {
    let a = load_sample(old)?;
    let b = load_sample(new)?;
    let d = assess(Some(&a), &b, thresholds);
    let json = serde_json::to_string_pretty(&d).context("encoding metrics")?;
    let json = safe::json(&json);
    let mut out = std::io::stdout().lock();
    writeln!(out, "{json}").context("writing to stdout")
}
