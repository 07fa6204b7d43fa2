//! The headless run modes that read the host: one file each. Where every mode lives:
//!
//! * `snapshot` — `mode::snapshot`; `delta` — `mode::delta`; `batch` — `mode::batch`;
//! * the live dashboard and `replay` — `ui` (`ui::run`, `ui::run_replay`);
//! * `record` and `dump` — `record::cmd`; `capture` — `capture`;
//! * `tweak` — `tweak::cmd`.
//!
//! `cli` holds only the command line and the dispatch to these; `sampler` is the one clock that
//! `batch`, `record` and the dashboard sample on.

pub mod batch;
pub mod delta;
pub mod snapshot;
pub mod stdout;

use crate::root::Root;
use crate::sample::Sample;
use crate::source::Reader;
use crate::text::safe;
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
