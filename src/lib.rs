//! perftop: readers → raw `Sample` → derive(prev, cur) → findings → view → screen, text,
//! JSON, recording.
//!
//! `cli` parses the command line and dispatches; each run mode has one home (in `mode`).
//! Everything they print comes from `assess` (derive, then findings), so live, batch, replay
//! and JSON output agree line for line.
//!
//! # Module map
//!
//! By stage, in pipeline order. A module imports only the modules listed above it (its own
//! submodules aside); `layers` checks every `crate::` path in `src/` against this list, so
//! the map cannot go stale and no import runs back up the pipeline.
//!
//! Stage 0, what every stage may use:
//! - `units`: number formatting, `-` for unknown
//! - `safe`: the one sanitizer for text that leaves perftop (terminal, files, JSON)
//! - `cpulist`: CPU lists and masks as the kernel writes them
//! - `trust`: which directories root's perftop may write in (StrictModes)
//! - `pane`: the list of panes (titles, keys, JSON and `--pane` names)
//!
//! Stage 1, reading the host:
//! - `sample`: the raw sample, its clock and "seconds between two samples"
//! - `pagesize`: the observed host's page size
//! - `root`: the one door to `proc/` and `sys/` (kept descriptors, budgets, capture traces)
//! - `source`: the readers, one per kernel file family, producing a `Sample`
//! - `sampler`: the one sampling clock
//!
//! Stage 2, understanding it:
//! - `derive`: rates and shares between two samples, and nothing else
//! - `findings`: the rule table and its thresholds
//! - `assess`: derive, then findings, with per-disk baselines in sample order
//! - `config`: the config file (thresholds, theme)
//!
//! Stage 3, showing and keeping it:
//! - `view`: one model per pane
//! - `text`: the plain-text report
//! - `record`: recordings, dump, cut, the live recorder
//! - `explain`: a recording window as a story (episodes, causes, baselines) and `diff`
//! - `export`: the Prometheus feed
//! - `remote`: perftop on other hosts over `ssh` (the copy kept there, the link that streams)
//!
//! Stage 4, acting on it:
//! - `tweak`: safe, reversible knobs under a journal
//! - `capture`: copying the files perftop reads, for a fixture or a bug report
//! - `ui`: the dashboard (layout, keys, theme, timeline, tweak dialogs)
//!
//! Stage 5, starting it:
//! - `mode`: where every run mode starts
//! - `cli`: the command line and the dispatch to `mode`

pub mod assess;
pub mod capture;
pub mod cli;
pub mod config;
pub mod cpulist;
pub mod derive;
pub mod explain;
pub mod export;
pub mod findings;
#[cfg(test)]
mod layers;
pub mod mode;
pub mod pagesize;
pub mod pane;
pub mod record;
pub mod remote;
pub mod root;
pub mod safe;
pub mod sample;
pub mod sampler;
pub mod source;
pub mod text;
pub mod trust;
pub mod tweak;
pub mod ui;
pub mod units;
pub mod view;
