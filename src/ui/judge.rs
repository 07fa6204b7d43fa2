//! The findings judge of the dashboard: one copy of the thresholds, the tracker that raises
//! findings over the live sequence (after 3 samples, cleared with hysteresis), and the disk
//! baselines each live sample was judged against, so stepping back shows the findings the live
//! view showed. Replay judges as `perftop dump` does, from the recording's own baselines.

use super::history::History;
use crate::assess::{Assessed, Assessor};
use crate::findings::{ActiveFinding, Baselines, FindingTracker, Thresholds};
use crate::sample::Sample;
use std::collections::VecDeque;

pub struct Judge {
    pub thresholds: Thresholds,
    /// Findings over the live sequence.
    tracker: FindingTracker,
    /// The tracker's raised findings after the newest live sample.
    pub active: Vec<ActiveFinding>,
    /// Live: judges each new interval against the disk baselines learned so far...
    assessor: Assessor,
    /// ...and keeps, per sample in the ring, the baselines it was judged against.
    live_before: VecDeque<Baselines>,
}

impl Default for Judge {
    fn default() -> Judge {
        Judge::new(Thresholds::default())
    }
}

impl Judge {
    pub fn new(t: Thresholds) -> Judge {
        Judge {
            tracker: FindingTracker::new(t.clone()),
            active: Vec::new(),
            assessor: Assessor::new(t.clone()),
            live_before: VecDeque::new(),
            thresholds: t,
        }
    }

    /// Thresholds from the config file: the tracker and the live assessor start again.
    pub fn set_thresholds(&mut self, t: Thresholds) {
        self.tracker = FindingTracker::new(t.clone());
        self.assessor = Assessor::new(t.clone());
        self.thresholds = t;
    }

    /// Live: a sample entered a ring that now holds `ring_len` of at most `ring_max`; the
    /// baselines it is judged against are kept beside it (and dropped with it).
    pub fn remember_baselines(&mut self, ring_len: usize, ring_max: usize) {
        let b = self.assessor.baselines().clone();
        super::bounded::push(&mut self.live_before, b, ring_max);
        while self.live_before.len() > ring_len {
            self.live_before.pop_front();
        }
    }

    /// Live: judges the newest interval and moves the tracker on.
    pub fn next(&mut self, prev: Option<&Sample>, cur: &Sample) -> Assessed {
        let latest = self.assessor.next(prev, cur);
        self.active = self.tracker.update(&latest);
        latest
    }

    /// Sample `i` derived against its predecessor (none across a recorder gap) and judged
    /// against the disk baselines before it: the findings batch, dump and live show for it.
    pub fn assess_at(&self, history: &mut History, i: usize) -> Result<Assessed, String> {
        if let History::Replay(r) = history {
            return r.assess_at(i, &self.thresholds);
        }
        let d = history.derive_at(i)?;
        let mut a = Assessor::new(self.thresholds.clone());
        if let Some(b) = self.live_before.get(i) {
            a.set_baselines(b.clone());
        }
        Ok(a.peek(d))
    }
}
