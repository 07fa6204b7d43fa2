//! The kernel's own counters read ten times a second beside a live check (`Ticker`), so any
//! window perftop reports can be bracketed by reads made before and after it; and `rounds`,
//! which retries a live check whose round saw foreign activity (another program's load on a
//! shared machine) and says SKIP with what it saw only after several noisy rounds.
//!
//! Why: a reference tool started beside perftop (mpstat, vmstat) measures a window that
//! starts when the busy machine gets round to running it, up to hundreds of ms away from
//! perftop's; a counter read every 100 ms by this process brackets perftop's own window
//! whatever the skew (issue 41 item 13).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How late a sample's reads may come after its time stamp, ms: a recording's first sample is
/// cold (the process just started, every file read for the first time) and on the 2-vCPU VM
/// under stress-ng read `lo`'s packets over 300 ms after its stamp (231 packets fewer than
/// the ticks inside its window counted); the later ones within 300 ms.
pub const LAG_MS: i64 = 300;
pub const FIRST_LAG_MS: i64 = 1500;

/// The lags of frame `i`'s two ends.
pub fn lags(i: usize) -> (i64, i64) {
    (if i == 0 { FIRST_LAG_MS } else { LAG_MS }, LAG_MS)
}

/// One read of the counters: its wall-clock time (ms since the epoch, as perftop's frames
/// carry in `host.wall_ms`) and every counter by name.
#[derive(Debug, Clone)]
pub struct Tick {
    pub wall_ms: i64,
    pub counts: BTreeMap<String, u64>,
}

/// A thread that reads counters every `period_ms` until stopped.
pub struct Ticker {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<Vec<Tick>>>,
}

impl Ticker {
    pub fn start(
        period_ms: u64,
        read: impl Fn() -> Option<BTreeMap<String, u64>> + Send + 'static,
    ) -> Ticker {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut ticks = Vec::new();
            loop {
                // The time is taken after the read: a read that was preempted half way is
                // then never placed before counts it may hold.
                let counts = read();
                let wall_ms = super::live::wall_ms();
                if let Some(counts) = counts {
                    ticks.push(Tick { wall_ms, counts });
                }
                if flag.load(Ordering::Relaxed) {
                    return ticks;
                }
                std::thread::sleep(std::time::Duration::from_millis(period_ms));
            }
        });
        Ticker {
            stop,
            handle: Some(handle),
        }
    }

    /// Stops after one last read and returns every read.
    pub fn stop(mut self) -> Ticks {
        self.stop.store(true, Ordering::Relaxed);
        Ticks(
            self.handle
                .take()
                .and_then(|h| h.join().ok())
                .unwrap_or_default(),
        )
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The reads of a stopped `Ticker`, oldest first.
#[derive(Debug, Clone)]
pub struct Ticks(pub Vec<Tick>);

impl Ticks {
    fn grown(&self, key: &str, a: &Tick, b: &Tick) -> Option<f64> {
        let (x, y) = (a.counts.get(key)?, b.counts.get(key)?);
        Some(y.saturating_sub(*x) as f64)
    }

    /// The counter's growth over the window `[from_ms, to_ms]` of reads made at `from_ms`
    /// plus at most `lag.0` and at `to_ms` plus at most `lag.1` (a sample takes its time
    /// stamp, then reads its files): at least its growth between the ticks inside the window,
    /// at most between the ticks around it. `None` when no tick lies before or after it.
    pub fn bracket(
        &self,
        key: &str,
        from_ms: i64,
        to_ms: i64,
        lag: (i64, i64),
    ) -> Option<(f64, f64)> {
        let t = &self.0;
        let outer_a = t.iter().rev().find(|x| x.wall_ms <= from_ms)?;
        let outer_b = t.iter().find(|x| x.wall_ms >= to_ms + lag.1)?;
        let hi = self.grown(key, outer_a, outer_b)?;
        let inner_a = t.iter().find(|x| x.wall_ms >= from_ms + lag.0);
        let inner_b = t.iter().rev().find(|x| x.wall_ms <= to_ms);
        let lo = match (inner_a, inner_b) {
            (Some(a), Some(b)) if a.wall_ms < b.wall_ms => self.grown(key, a, b).unwrap_or(0.0),
            _ => 0.0,
        };
        Some((lo, hi))
    }

    /// The counter's rate per second over every tick.
    pub fn rate(&self, key: &str) -> Option<f64> {
        let (a, b) = (self.0.first()?, self.0.last()?);
        let secs = (b.wall_ms - a.wall_ms) as f64 / 1000.0;
        (secs > 0.0).then_some(self.grown(key, a, b)? / secs)
    }

    /// The counter's lowest and highest rate per second over consecutive slices of about
    /// `slice_ms`: how steady it was (a reference tool's window some ms away from perftop's
    /// is judged only where the rate was steady).
    pub fn spread(&self, key: &str, slice_ms: i64) -> Option<(f64, f64)> {
        let mut out: Option<(f64, f64)> = None;
        let mut start = self.0.first()?;
        for t in &self.0 {
            if t.wall_ms - start.wall_ms >= slice_ms {
                let r = self.grown(key, start, t)? * 1000.0 / (t.wall_ms - start.wall_ms) as f64;
                out = Some(out.map_or((r, r), |(lo, hi)| (lo.min(r), hi.max(r))));
                start = t;
            }
        }
        out
    }

    /// The longest time between two reads: the reading thread starved by the machine's load.
    pub fn longest_gap_ms(&self) -> i64 {
        self.0
            .windows(2)
            .map(|w| w[1].wall_ms - w[0].wall_ms)
            .max()
            .unwrap_or(i64::MAX)
    }
}

/// Runs a live check's round up to `tries` times. A round returns its table; one that saw
/// foreign activity (`Table::noisy`) is set aside, and the next round runs after a pause.
/// A round with no noise is judged (`Table::finish`, which fails the test on a failed row).
/// After `tries` noisy rounds the test says `SKIP <test>: too noisy to judge (what was seen)`
/// via `support::skip`, so it is counted, never a silent pass.
pub fn rounds(test: &str, tries: usize, mut round: impl FnMut(usize) -> super::live::Table) {
    let mut seen = Vec::new();
    for i in 1..=tries {
        let t = round(i);
        match t.noise() {
            None => return t.finish(),
            Some(what) => {
                t.set_aside(i);
                seen.push(format!("round {i}: {what}"));
                std::thread::sleep(std::time::Duration::from_secs(2));
            }
        }
    }
    super::skip(
        test,
        &format!(
            "too noisy to judge after {tries} rounds ({})",
            seen.join("; ")
        ),
    );
}
