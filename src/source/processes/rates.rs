//! A process's growth over its own interval, scaled to the pass's: the rates of a process read
//! in turns, and of one new since the last pass (per second of its life, as `ps`).

use crate::sample::SampleTime;

/// What a delta over a process's own interval (since `at`) is over this pass's `secs`: 1
/// for a process read last pass, less for one read in turns.
pub(super) fn own_scale(at: &SampleTime, now: &SampleTime, secs: f64) -> f64 {
    match now.secs_since(at) {
        Some(own) if own > secs => secs / own,
        _ => 1.0,
    }
}

/// `v` scaled, rounded up so that any growth stays growth.
pub(super) fn scaled(v: u64, scale: f64) -> u64 {
    if scale >= 1.0 || v == 0 {
        v
    } else {
        ((v as f64 * scale).ceil() as u64).max(1)
    }
}

/// A process the previous pass did not see (the first pass, a new process, a reused pid)
/// ranks by what it did per second of its life, as `ps` shows %CPU: a process younger than a
/// second by all it did.
pub(super) fn per_second_of_life(v: u64, start: u64, now_ticks: Option<u64>) -> u64 {
    match now_ticks {
        Some(now) => {
            let age = now.saturating_sub(start).max(100);
            (u128::from(v) * 100 / u128::from(age)) as u64
        }
        None => v,
    }
}
