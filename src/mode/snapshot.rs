//! `perftop snapshot`: one raw sample (counters and gauges) as JSON, to stdout or a file.

use super::{read_sample, root_check};
use crate::root::Root;
use crate::safe;
use crate::source::Reader;
use anyhow::{Context, Result};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

pub fn snapshot(root: &Root, output: Option<PathBuf>) -> Result<()> {
    root_check(root)?;
    let mut reader = Reader::new(root.clone());
    let sample = read_sample(&mut reader);
    let json = serde_json::to_string_pretty(&sample).context("encoding sample")?;
    let json = safe::json(&json);
    match output {
        // Root may run this into a directory others can write: a link planted at PATH is
        // refused (ELOOP), never written through.
        Some(path) => std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(
                (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32,
            )
            .open(&path)
            .and_then(|mut f| f.write_all(format!("{json}\n").as_bytes()))
            .with_context(|| {
                format!(
                    "writing {} (a symbolic link there is refused)",
                    path.display()
                )
            }),
        None => {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{json}").context("writing to stdout")
        }
    }
}
