//! When the process pass runs: every sample at 1 s and slower, about once a second when
//! samples come faster (the samples between carry the last pass), and how often an idle
//! process gets its turn, in seconds.

use super::{ProcState, IDLE_EVERY};
use crate::sample::Processes;

/// The most passes an idle process waits for its turn when samples come faster than a
/// second: its turn stays `IDLE_EVERY` seconds apart, as at the default 1 s interval
/// (`idle_every`), up to 64 passes (16 s at `-d 0.25`).
const IDLE_EVERY_MAX: u32 = 64;

/// Passes between an idle process's turns for passes `gap_s` seconds apart: `IDLE_EVERY`
/// at 1 s and slower (and when the gap is unknown), as many as make `IDLE_EVERY` seconds when
/// samples come faster, so four samples a second do not read the idle processes four times as
/// often (~3 of the ~5 `stat` reads of a 0.25 s sample on the 2-vCPU VM, ~35 µs). An idle
/// process that starts using CPU is still read on the pass it does (unexplained ticks).
/// `prev`, the last pass's, is kept while only the gap's jitter moved (`turns::steady`): at
/// `-d 0.25` passes read 0.96 or 1.04 s apart by `/proc/uptime`'s 10 ms steps, which asked
/// for 17 and 16 in turn, and each change moved every idle process's turn.
pub fn idle_every(prev: Option<u32>, gap_s: Option<f64>) -> u32 {
    match gap_s {
        Some(g) if g > 0.0 && g.is_finite() && g < 1.0 => crate::source::turns::steady(
            prev,
            f64::from(IDLE_EVERY) / g,
            IDLE_EVERY,
            IDLE_EVERY_MAX,
        ),
        _ => IDLE_EVERY,
    }
}

impl ProcState {
    /// Whether sample `sample_no` runs a pass, when samples come `every` to a second
    /// (`turns::every_for_gap`): every sample at 1 s and slower; at faster intervals once in
    /// `every` samples, on the sample that reads the other once-a-second tables, and at once
    /// on the first sample, after a perftop write (`tweaked`) and when `every` changed.
    ///
    /// Why once a second: `/proc/PID/stat` counts CPU in 10 ms ticks, so over 0.25 s a
    /// process's CPU moves in steps of 4% (1% over a second, as htop's 1.5 s and top's 3 s
    /// refresh); and the pass was ~55 µs of a ~0.53 ms sample at `-d 0.25` on the 2-vCPU VM.
    pub fn pass_due(&self, sample_no: u64, every: u32, tweaked: bool) -> bool {
        let carried_every = self.last_out.as_ref().and_then(|p| p.every);
        every <= 1
            || tweaked
            || self.last.is_none()
            || carried_every != Some(every)
            || crate::source::turns::due(0, sample_no, every)
    }

    /// The last pass's processes for a sample between passes: as read then, with the time
    /// they were read (`Processes::at`), so derive shows the rates that pass measured.
    pub fn carried(&mut self) -> Option<Processes> {
        self.passed = false;
        let at = self.last.clone()?;
        let mut p = self.last_out.clone()?;
        p.at = Some(at);
        Some(p)
    }
}
