//! perftop: readers → raw `Sample` → derive(prev, cur, dt) → view → render/dump.
//!
//! `cli` parses the command line and dispatches; each run mode has one home (listed in `mode`).
//! Everything they print comes from `assess` (derive, then findings), so live, batch, replay
//! and JSON output agree line for line.

pub mod assess;
pub mod capture;
pub mod cli;
pub mod config;
pub mod cpulist;
pub mod derive;
pub mod export;
pub mod findings;
pub mod mode;
pub mod pagesize;
pub mod pane;
pub mod record;
pub mod root;
pub mod sample;
pub mod sampler;
pub mod source;
pub mod text;
pub mod trust;
pub mod tweak;
pub mod ui;
pub mod units;
pub mod view;
