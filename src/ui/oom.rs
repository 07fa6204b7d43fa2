//! OOM kills over the session: when each happened and how many, for the Pressure pane's
//! "since start, last at" and the timeline's marks. Live, every new interval is logged as it
//! comes; a replay scans the recording once when it opens.

use crate::record::{Decoder, Recording};
use crate::sample::Sample;
use crate::view::OomSince;

/// Live kernel log marks kept at most.
const KERNEL_MARKS: usize = 4096;

/// (wall ms at the end of the interval, kills in it), oldest first.
#[derive(Debug, Clone, Default)]
pub struct OomLog {
    pub events: Vec<(i64, u64)>,
    /// Live: when the kernel log reported something else (`record::KernelMark`); a replay
    /// marks those from the recording's markers instead.
    pub kernel: Vec<i64>,
}

impl OomLog {
    /// Logs a live interval's kills (a since-boot first frame is not the session's).
    pub fn record(&mut self, d: &crate::derive::Derived) {
        if d.since_boot {
            return;
        }
        if let Some(k) = d.memory.reclaim.oom_kills.filter(|&k| k > 0) {
            self.events.push((d.host.wall_ms, k));
        }
        if d.kernel_events.iter().any(|e| e.kind != "oom_kill") {
            // Bounded: a host logging every second for days keeps its last ~4,000 marks, far
            // more than the live history the timeline spans.
            if self.kernel.len() >= KERNEL_MARKS {
                self.kernel.drain(..KERNEL_MARKS / 2);
            }
            self.kernel.push(d.host.wall_ms);
        }
    }

    /// Kills up to `at_ms` (the sample on screen) and when the last of them was.
    pub fn since(&self, at_ms: i64) -> OomSince {
        let upto = self.events.iter().filter(|(t, _)| *t <= at_ms);
        OomSince {
            kills: upto.clone().map(|(_, k)| k).sum(),
            last_ms: upto.map(|(t, _)| *t).max(),
        }
    }

    /// The kills in a recording, from the `oom_kill` counter of its samples. Keyframes (every
    /// 60th sample, no dictionary) are read first; only the stretches between two keyframes
    /// whose counters differ are decoded sample by sample, so a day's recording costs ~1,440
    /// decodes plus 60 per stretch with kills. A counter that goes down (a reboot between
    /// recordings) counts nothing.
    pub fn scan(rec: &Recording, dec: &mut Decoder) -> OomLog {
        let counter = |s: &Sample| s.memory.vmstat.oom_kill;
        let keys: Vec<usize> = (0..rec.samples.len())
            .filter(|&i| rec.samples[i].is_key)
            .collect();
        let mut log = OomLog::default();
        let mut at_key: Vec<(usize, Option<u64>)> = Vec::with_capacity(keys.len() + 1);
        for &k in &keys {
            at_key.push((k, rec.decode(k, dec).ok().as_ref().and_then(counter)));
        }
        // The last sample closes the last stretch.
        if let Some(last) = rec.samples.len().checked_sub(1) {
            if keys.last() != Some(&last) {
                at_key.push((last, rec.decode(last, dec).ok().as_ref().and_then(counter)));
            }
        }
        for w in at_key.windows(2) {
            let ((a, ca), (b, cb)) = (w[0], w[1]);
            // Equal counters: no kill between. Both unknown (a recording without the counter):
            // nothing to find, and decoding every sample would cost a day's replay its start.
            if ca == cb {
                continue;
            }
            let mut prev = ca;
            for i in a + 1..=b {
                let cur = rec.decode(i, dec).ok().as_ref().and_then(counter);
                if let (Some(p), Some(c)) = (prev, cur) {
                    if c > p && walk_has_prev(rec, i) {
                        log.events.push((rec.samples[i].wall_ms, c - p));
                    }
                }
                prev = cur;
            }
        }
        log
    }
}

/// Whether sample `i` follows `i - 1` with no recorder stop between (kills across a gap are
/// not placed in an interval).
fn walk_has_prev(rec: &Recording, i: usize) -> bool {
    crate::record::walk::prev_of(rec, i).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_counts_up_to_the_sample_on_screen() {
        let log = OomLog {
            events: vec![(1_000, 1), (5_000, 2)],
            ..OomLog::default()
        };
        assert_eq!(log.since(500), OomSince::default());
        assert_eq!(
            log.since(1_000),
            OomSince {
                kills: 1,
                last_ms: Some(1_000)
            }
        );
        assert_eq!(log.since(9_000).kills, 3);
        assert_eq!(log.since(9_000).last_ms, Some(5_000));
    }
}
