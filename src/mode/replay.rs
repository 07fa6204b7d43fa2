//! `perftop replay`: a recording in the dashboard of `crate::ui`, every pane and finding derived
//! as live.

use anyhow::{bail, Result};
use std::path::PathBuf;

/// Replays `path` from `at` (the start when `None`) at `speed` (0.25x .. 1024x).
pub fn run(
    path: PathBuf,
    at: Option<String>,
    speed: f64,
    look: crate::ui::Look,
) -> Result<crate::ui::Ended> {
    if !(0.25..=1024.0).contains(&speed) {
        bail!("--speed must be between 0.25 and 1024, got {speed}");
    }
    crate::ui::run_replay(crate::ui::ReplayOptions {
        path,
        at,
        speed,
        look,
    })
}
