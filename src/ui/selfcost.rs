//! perftop's own cost (CPU% and RSS), shown in the header so nobody has to wonder whether the
//! monitor is the load. Always the live process, whatever `--root` says: it is about this
//! process, not the observed host.

use crate::root::Root;
use std::time::{Duration, Instant};

/// CPU% is averaged over this many samples: one sample's work is a fraction of a percent of
/// the second, and the average over ten says what the monitor costs, not what one frame did.
const WINDOW: usize = 10;

pub struct SelfCost {
    root: Root,
    history: std::collections::VecDeque<(Instant, Duration)>,
    /// CPU% of one core over the last `WINDOW` samples, and resident set in kB.
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
    /// The process CPU clock (every thread, in ns: no 10 ms ticks to average away) and the
    /// resident pages of `/proc/self/statm`. `/proc/self/stat` parsed into 52 fields was 2.3 %
    /// of the idle dashboard's CPU (`perf`, 2026-12-01).
    pub fn update(&mut self) {
        let now = Instant::now();
        let cpu = cpu_time(rustix::time::ClockId::ProcessCPUTime);
        if let Some(&(t0, cpu0)) = self.history.front() {
            let secs = now.duration_since(t0).as_secs_f64();
            if secs > 0.0 {
                self.cpu_pct = Some(cpu.saturating_sub(cpu0).as_secs_f64() / secs * 100.0);
            }
        }
        self.history.push_back((now, cpu));
        if self.history.len() > WINDOW {
            self.history.pop_front();
        }
        // statm: size, resident, shared, ... in pages of the running kernel.
        let resident = self.root.read("proc/self/statm").ok().and_then(|t| {
            t.split_ascii_whitespace()
                .nth(1)
                .and_then(|r| r.parse::<u64>().ok())
        });
        let page_kb = (rustix::param::page_size() as u64 / 1024).max(1);
        self.rss_kb = resident.map(|pages| pages.saturating_mul(page_kb));
    }
}

/// A CPU clock as a `Duration` (the process's: all its threads, live and gone).
fn cpu_time(clock: rustix::time::ClockId) -> Duration {
    let t = rustix::time::clock_gettime(clock);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::time::ClockId;

    fn vm_rss_kb() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").expect("status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS")
    }

    /// The process clock holds at least the CPU this thread spent (20 ms of its own clock,
    /// however long the machine takes to give it), and the CPU% shown is that over the window.
    #[test]
    fn cpu_is_the_process_clock() {
        let mut c = SelfCost::default();
        c.update();
        let (p0, t0) = (
            cpu_time(ClockId::ProcessCPUTime),
            cpu_time(ClockId::ThreadCPUTime),
        );
        let mut x = 0u64;
        while cpu_time(ClockId::ThreadCPUTime) - t0 < Duration::from_millis(20) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let spent = cpu_time(ClockId::ProcessCPUTime) - p0;
        c.update();
        assert!(
            spent >= Duration::from_millis(20),
            "process clock moved {spent:?}"
        );
        let pct = c.cpu_pct.expect("cpu");
        assert!(pct.is_finite() && pct > 0.0, "cpu {pct}%");
    }

    /// The RSS shown is the kernel's `VmRSS`, read while nothing else in this test binary
    /// moved it (the reads before and after agree; retried when another test allocated).
    #[test]
    fn rss_is_the_kernels() {
        let mut c = SelfCost::default();
        for _ in 0..20 {
            let before = vm_rss_kb();
            c.update();
            let after = vm_rss_kb();
            if before == after {
                assert_eq!(c.rss_kb, Some(before));
                return;
            }
        }
        panic!("VmRSS moved across every one of 20 tries");
    }
}
