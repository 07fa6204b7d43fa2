//! A kernel counter read every few milliseconds in the background: the kernel's own count over
//! any window, bracketed to the trace's step, for counters that move in bursts.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// `/proc/vmstat` field `key`, read every `step` until [`Trace::stop`].
pub struct Trace {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<(i64, u64)>>,
}

/// What the trace read: (wall clock ms, counter) in time order.
pub struct Points(pub Vec<(i64, u64)>);

impl Trace {
    pub fn vmstat(key: &'static str, step: Duration) -> Trace {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut points = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                let at = super::live::wall_ms();
                if let Some(v) = super::live::kv("/proc/vmstat").get(key) {
                    points.push((at, *v));
                }
                std::thread::sleep(step);
            }
            points
        });
        Trace { stop, thread }
    }

    pub fn stop(self) -> Points {
        self.stop.store(true, Ordering::Relaxed);
        Points(self.thread.join().unwrap_or_default())
    }
}

impl Points {
    /// The counter's last read at or before `t` ms.
    fn before(&self, t: i64) -> Option<u64> {
        self.0.iter().rev().find(|p| p.0 <= t).map(|p| p.1)
    }

    /// The counter's first read at or after `t` ms.
    fn after(&self, t: i64) -> Option<u64> {
        self.0.iter().find(|p| p.0 >= t).map(|p| p.1)
    }

    /// What the kernel counted in a window whose edges are known to within `slack` ms of
    /// `from` and `to`: at least what it counted between reads inside both slacks, at most what
    /// it counted between reads outside them. `None` when the trace does not cover the window.
    pub fn count(&self, from: i64, to: i64, slack: i64) -> Option<(f64, f64)> {
        let inner = self
            .before(to - slack)?
            .saturating_sub(self.after(from + slack)?);
        let outer = self
            .after(to + slack)?
            .saturating_sub(self.before(from - slack)?);
        Some((inner as f64, outer as f64))
    }
}
