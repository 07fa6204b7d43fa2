//! What each file costs the thread that reads it, per path (pids as `PID`): the benchmark's
//! `files` mode, to see which of a live sample's files the kernel is slow to produce. Off (the
//! default), a `Root` pays one `Option` check per read.

use std::collections::HashMap;
use std::time::Duration;

/// CPU time spent in `Root` reads of each path, and how many reads.
#[derive(Debug, Default)]
pub struct Costs {
    by_path: HashMap<String, (Duration, u64)>,
}

impl Costs {
    /// Adds one read of `path` that took `cpu` of the reading thread's CPU time.
    pub(super) fn add(&mut self, path: &[u8], cpu: Duration) {
        let key = normalise(path);
        let e = self.by_path.entry(key).or_default();
        e.0 += cpu;
        e.1 += 1;
    }

    /// Paths by CPU time, dearest first: (path, CPU time, reads).
    pub fn dearest(&self) -> Vec<(&str, Duration, u64)> {
        let mut v: Vec<_> = self
            .by_path
            .iter()
            .map(|(p, &(t, n))| (p.as_str(), t, n))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }
}

/// `/proc/1234/stat` → `/proc/PID/stat`: one row for all processes' `stat`.
fn normalise(path: &[u8]) -> String {
    let text = String::from_utf8_lossy(path);
    let under_proc = text.starts_with("/proc/") || text.starts_with("proc/");
    text.split('/')
        .map(|c| {
            if under_proc && !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit()) {
                "PID"
            } else {
                c
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The calling thread's CPU time.
pub(super) fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pids_share_a_row_and_the_dearest_come_first() {
        let mut c = Costs::default();
        c.add(b"/proc/12/stat", Duration::from_micros(10));
        c.add(b"/proc/345/stat", Duration::from_micros(12));
        c.add(b"/proc/interrupts", Duration::from_micros(70));
        c.add(
            b"/sys/devices/system/node/node0/meminfo",
            Duration::from_micros(5),
        );
        let d = c.dearest();
        assert_eq!(d[0], ("/proc/interrupts", Duration::from_micros(70), 1));
        assert_eq!(d[1], ("/proc/PID/stat", Duration::from_micros(22), 2));
        assert_eq!(d[2].0, "/sys/devices/system/node/node0/meminfo");
    }
}
