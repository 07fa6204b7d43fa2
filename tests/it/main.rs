//! The integration tests that read fixture roots, synthetic hosts and recordings, run the CLI
//! binary against them, and draw the dashboard into a test terminal: one test binary
//! (`cargo test --test it`), one module per subject. The tests that drive this machine (load,
//! kernel state, a process-wide file size limit) are in `tests/live/`, the real terminal ones
//! in `tests/tmux/`; docs/testing.md says why each is apart.
//!
//! The tests here run in parallel threads of one process. Process-wide state they share:
//! perftop's count of its own kernel writes (`root::note_write`), which every reader in the
//! process sees; tests that write through perftop and tests that count what each sample reads
//! take `support::writes` (see there).

// `pub`: each test crate uses its own part of the shared helpers, and the rest is not dead.
#[path = "../support/mod.rs"]
pub mod support;

mod bad_input;
mod baselines;
mod cli;
mod cost;
mod cut;
mod derive_prop;
mod episodes_list;
mod escapes;
mod explain;
mod explain_digests;
mod fast_samples;
mod findings;
mod first_look;
mod fixture_roots;
mod frame_work;
mod header_label;
mod iostat;
mod irq_turns;
mod kernel_marks;
mod net_health;
mod numa_cover;
mod old_kernel_cgroups;
mod old_kernel_tui;
mod old_kernels;
mod outputs;
mod parsers_prop;
mod popups;
mod power;
mod processes;
mod processes_all;
mod real_capture;
mod real_hosts;
mod real_irq;
mod record;
mod record_damage;
mod replay;
mod replay_keys;
mod replay_ruler;
mod scale;
mod service;
mod ship;
mod storage;
mod synth;
mod tui;
mod tui_interact;
mod tui_rows;
mod tui_sizes;
mod tweak;
mod tweak_effect;
mod tweak_safety;
mod tweak_tui;
mod undo_audit;
