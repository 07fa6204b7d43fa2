//! End-to-end: the real `perftop` binary in a real terminal (tmux), driven by keys, resizes
//! and signals, read back with `capture-pane` and, for the byte stream, `pipe-pane`. One test
//! binary (`cargo test --test tmux`), apart from `tests/it/` because every check here waits on a
//! terminal with a wall-clock deadline, and those are kept off a CPU that the other tests
//! load (docs/testing.md). The harness is `support::tmux`; each test has its own tmux server.

// `pub`: each test crate uses its own part of the shared helpers, and the rest is not dead.
#[path = "../support/mod.rs"]
pub mod support;

mod big_host;
mod narrow_popups;
mod plain_terminals;
mod prompt_keys;
mod ssh;
mod ssh_sudo;
mod ssh_tweak;
mod ssh_tweak_slow;
mod terminal_bytes;
mod tmux;
mod tmux_everyone;
mod tmux_interact;
mod unprivileged;
