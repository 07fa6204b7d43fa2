//! Where every run mode starts, one file each: `live` (the dashboard, no subcommand), `replay`,
//! `batch`, `snapshot`, `delta`, `record` (and `--print-unit`), `dump`, `explain`, `diff`,
//! `cut`, `capture`, `export`, `tweak`, `man` and `completions`. Each does its start-up checks
//! and drives the machinery of its stage (`ui`, `record`, `explain`, `export`, `tweak`,
//! `capture`), which has no entry points of its own.
//!
//! `cli` holds only the command line and the dispatch to these. What they share lives here:
//! the root check, reading a sample with its problems on stderr, this process's own cost,
//! and the closed-stdout check (`stdout`); `sampler` is the one clock they sample on.

pub mod batch;
pub mod capture;
pub mod completions;
pub mod cut;
pub mod delta;
pub mod diff;
pub mod dump;
pub mod explain;
pub mod export;
pub mod live;
pub mod man;
pub mod record;
pub mod replay;
pub mod snapshot;
pub mod ssh;
pub mod stdout;
pub mod stream;
pub mod tweak;

use crate::root::Root;
use crate::safe;
use crate::sample::Sample;
use crate::source::Reader;
use anyhow::{bail, Result};

/// Fails early, with the path, when `--root` is not a directory.
pub fn root_check(root: &Root) -> Result<()> {
    if !root.base().is_dir() {
        bail!("root {} is not a directory", root.base().display());
    }
    Ok(())
}

/// Reads one sample and says on stderr what could not be read.
pub fn read_sample(reader: &mut Reader) -> Sample {
    let s = reader.sample();
    for p in &s.problems {
        eprintln!(
            "perftop: {}: {}",
            safe::line(&reader.root().path(&p.path).display().to_string()),
            safe::line(&p.what)
        );
    }
    s
}

/// This process's CPU time (user + system, ms) and peak RSS (kB), from the live /proc/self
/// (about the recorder itself, whatever `--root` says).
pub fn self_cost() -> (f64, u64) {
    let live = crate::root::Root::new("/");
    let cpu = live
        .read("proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
            Some(ticks as f64 * 10.0)
        })
        .unwrap_or(0.0);
    let hwm = live
        .read("proc/self/status")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            l.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0);
    (cpu, hwm)
}
