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

/// This process's CPU time so far, user + system, in ms to the nanosecond clock's precision
/// (`/proc/self/stat` counts 10 ms ticks: over 60 samples that is 0.17 ms a sample).
pub fn cpu_ms() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
}

/// The summary's CPU words: the whole run's CPU per interval (start-up included, as before),
/// and the steady cost apart from start-up (`start_ms`: the CPU spent before the first steady
/// interval; the first sample is cold: every file opened, static files read, the binary's
/// pages faulted in).
pub fn cpu_words(total_ms: f64, start_ms: f64, n: u64, per: &str) -> String {
    let all = total_ms / n.max(1) as f64;
    let steady = (total_ms - start_ms) / n.max(1) as f64;
    format!("{all:.2} ms CPU/{per}; {steady:.2} ms after start-up's {start_ms:.0} ms")
}

/// This process's peak RSS (kB), from the live /proc/self (about perftop itself, whatever
/// `--root` says); 0 where it cannot be read.
pub fn peak_rss_kb() -> u64 {
    crate::root::Root::new("/")
        .read("proc/self/status")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            l.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}
