//! The live dashboard, perftop's default mode: checks made before the terminal is taken,
//! then the dashboard of `crate::ui`.

use anyhow::{Context, Result};
use std::path::PathBuf;

/// Runs the dashboard on the host (or `--root`) until `q` or a signal.
pub fn run(opts: crate::ui::Options) -> Result<crate::ui::Ended> {
    super::root_check(&opts.root)?;
    crate::ui::run(opts)
}

/// `--record-dir`, checked before the terminal is taken: a directory `R` could not write into
/// is an error at start, not a surprise at the moment someone wants a recording. Not given,
/// the current directory is used unchecked (the dashboard must start from any directory,
/// `/` included; `R` then says why it cannot record there).
pub fn record_dir(dir: Option<PathBuf>) -> Result<PathBuf> {
    match dir {
        Some(d) => {
            crate::record::live::check_dir(&d)
                .with_context(|| format!("--record-dir {}", d.display()))?;
            Ok(d)
        }
        None => Ok(PathBuf::from(".")),
    }
}
