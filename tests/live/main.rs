//! The integration tests that drive or measure this machine: the live truth suite (perftop
//! against the kernel and the reference tools under load, kernel state changed and restored),
//! `perftop capture` and `perftop export` on the live host, and `R` with a process-wide file
//! size limit standing in for a full disk. One test binary (`cargo test --test live`), apart
//! from `tests/it/` so none of this overlaps those tests, and every test here takes
//! `support::machine()` so no two of them overlap each other (docs/testing.md).

// `pub`: each test crate uses its own part of the shared helpers, and the rest is not dead.
#[path = "../support/mod.rs"]
pub mod support;

mod capture;
mod everyone;
mod export;
mod live_truth;
mod record_full;
mod unprivileged;
