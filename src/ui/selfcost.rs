//! perftop's own cost (CPU% and RSS), shown in the header so nobody has to wonder whether the
//! monitor is the load. Always the live `/proc/self`, whatever `--root` says: it is about this
//! process, not the observed host.

use crate::root::Root;
use procfs_core::FromRead;
use std::time::Instant;

/// CPU% is averaged over this many samples: with 10 ms ticks a 1 s window can only show
/// 0%, 1%, 2%... while the real cost is a fraction of a percent.
const WINDOW: usize = 10;

pub struct SelfCost {
    root: Root,
    history: std::collections::VecDeque<(Instant, u64)>,
    /// CPU% of one core over the last interval, and resident set in kB.
    pub cpu_pct: Option<f64>,
    pub rss_kb: Option<u64>,
}

impl Default for SelfCost {
    fn default() -> Self {
        SelfCost {
            root: Root::new("/"),
            history: std::collections::VecDeque::new(),
            cpu_pct: None,
            rss_kb: None,
        }
    }
}

impl SelfCost {
    pub fn update(&mut self) {
        let Ok(text) = self.root.read("proc/self/stat") else {
            return;
        };
        let Ok(st) = procfs_core::process::Stat::from_read(text.as_bytes()) else {
            return;
        };
        let now = Instant::now();
        let ticks = st.utime.saturating_add(st.stime);
        if let Some(&(t0, ticks0)) = self.history.front() {
            let secs = now.duration_since(t0).as_secs_f64();
            if secs > 0.0 {
                let used = ticks.saturating_sub(ticks0) as f64 / crate::derive::USER_HZ;
                self.cpu_pct = Some(used / secs * 100.0);
            }
        }
        self.history.push_back((now, ticks));
        if self.history.len() > WINDOW {
            self.history.pop_front();
        }
        // rss is in pages of the running kernel.
        let page_kb = rustix::param::page_size() as u64 / 1024;
        self.rss_kb = Some(st.rss.saturating_mul(page_kb.max(1)));
    }
}
