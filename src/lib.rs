//! perftop: readers → raw `Sample` → derive(prev, cur, dt) → view → render/dump.
//!
//! The run modes (snapshot, delta, batch, ...) live in `cli`; everything they print comes from
//! `derive`, so live, batch and JSON output agree line for line.

pub mod assess;
pub mod capture;
pub mod cli;
pub mod config;
pub mod cpulist;
pub mod derive;
pub mod findings;
pub mod pagesize;
pub mod record;
pub mod root;
pub mod sample;
pub mod source;
pub mod text;
pub mod tweak;
pub mod ui;
pub mod units;
pub mod view;
