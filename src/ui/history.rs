//! The samples the dashboard's view moves over: the live ring, a remote host's stream frames
//! (`perftop ssh`), or a recording opened for replay with its decoder state; what lies between samples (gaps, tweak actions) for the timeline bar
//! and the status line, and each sample derived against its predecessor.

use super::ring::SampleRing;
use super::stream_ring::StreamRing;
use crate::assess::Assessed;
use crate::derive::{derive, Derived};
use crate::findings::Thresholds;
use crate::record::stream::Streamed;
use crate::record::{walk, Decoder, EventKind, Recording};
use crate::sample::Sample;
use std::time::Duration;

/// A recording opened for replay, with its decoder state (keyframe dictionary) kept between
/// moves so stepping decodes at most one delta.
pub struct Replayed {
    pub rec: Recording,
    pub(super) dec: Decoder,
    /// What the header calls it (the path given on the command line).
    pub label: String,
    /// Disk baselines learned along the recording, so replay judges as `dump` does.
    pub baselines: walk::Baselines,
}

impl Replayed {
    /// The interval ending at sample `i` with its findings, as `perftop dump` prints them.
    pub fn assess_at(&mut self, i: usize, t: &Thresholds) -> Result<Assessed, String> {
        self.baselines
            .assess_at(&self.rec, &mut self.dec, i, t)
            .map_err(|e| format!("{e:#}"))
    }
}

/// The samples the view moves over.
// One per process, and the live ring is used on every sample: no point boxing it.
#[allow(clippy::large_enum_variant)]
pub enum History {
    Live(SampleRing),
    /// A remote host's samples, kept as the frames its stream sent.
    Stream(StreamRing),
    Replay(Box<Replayed>),
}

/// A new sample for a live history: read here, or come over a stream with its frame.
// Moved straight into the history, once a sample: boxing the sample would cost an allocation.
#[allow(clippy::large_enum_variant)]
pub enum Incoming {
    Sampled(Sample),
    Streamed(Box<Streamed>),
}

impl From<Sample> for Incoming {
    fn from(s: Sample) -> Incoming {
        Incoming::Sampled(s)
    }
}

/// A mark on the timeline bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Recorder stopped and started again (or died): no rates across it.
    Gap,
    /// A tweak applied or undone.
    Action,
    /// The kernel killed a process for memory in the interval ending here.
    Oom,
    /// The kernel log reported a hung task, an I/O error, a soft lockup or a link change.
    Kernel,
}

impl History {
    pub fn replay(rec: Recording, label: String) -> History {
        History::Replay(Box::new(Replayed {
            rec,
            dec: Decoder::default(),
            label,
            baselines: walk::Baselines::default(),
        }))
    }

    pub fn is_replay(&self) -> bool {
        matches!(self, History::Replay(_))
    }

    /// Adds a live sample: the newest before it (moved out) and how many old ones were dropped
    /// to make room; None in replay, or when the sample does not fit this history (a streamed
    /// one is kept as its frame; a sample read here has none).
    pub fn push(&mut self, s: Incoming) -> Option<(Option<Sample>, usize)> {
        match (self, s) {
            (History::Live(r), Incoming::Sampled(s)) => Some((r.take_newest(), r.push(s))),
            (History::Live(r), Incoming::Streamed(s)) => Some((r.take_newest(), r.push(s.sample))),
            (History::Stream(r), Incoming::Streamed(s)) => Some((r.take_newest(), r.push(*s))),
            _ => None,
        }
    }

    /// The newest live sample, decoded.
    pub fn newest(&self) -> Option<&Sample> {
        match self {
            History::Live(r) => r.newest(),
            History::Stream(r) => r.newest(),
            History::Replay(_) => None,
        }
    }

    /// Bytes the history holds for its samples (a recording's are on disk: 0).
    pub fn bytes(&self) -> usize {
        match self {
            History::Live(r) => r.bytes(),
            History::Stream(r) => r.bytes(),
            History::Replay(_) => 0,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            History::Live(r) => r.len(),
            History::Stream(r) => r.len(),
            History::Replay(r) => r.rec.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Most samples a live history keeps (a recording's length in replay).
    pub fn max_len(&self) -> usize {
        match self {
            History::Live(r) => r.capacity(),
            History::Stream(r) => r.capacity(),
            History::Replay(r) => r.rec.len(),
        }
    }

    pub fn wall_ms(&self, i: usize) -> Option<i64> {
        match self {
            History::Live(r) => r.wall_ms(i),
            History::Stream(r) => r.wall_ms(i),
            History::Replay(r) => r.rec.samples.get(i).map(|s| s.wall_ms),
        }
    }

    /// The first sample the view may show. A trimmed live ring's first sample lost its
    /// predecessor, so it could only show since-boot averages; a recording's first sample is
    /// shown (labelled since-boot), as is any sample after a gap.
    pub fn first_index(&self) -> usize {
        match self {
            History::Live(r) => usize::from(r.dropped > 0 && r.len() > 1),
            History::Stream(r) => usize::from(r.dropped > 0 && r.len() > 1),
            History::Replay(_) => 0,
        }
    }

    /// Sample `i`, decoded; `None` when it is not there or cannot be decoded (replay reports
    /// why through `sample_err`).
    pub fn sample(&mut self, i: usize) -> Result<Sample, String> {
        match self {
            History::Live(r) => r.get(i).ok_or_else(|| format!("sample {i} is gone")),
            History::Stream(r) => r.get(i),
            History::Replay(r) => r
                .rec
                .decode(i, &mut r.dec)
                .map_err(|e| format!("sample {i}: {e:#}")),
        }
    }

    /// The sample decoding sample `i` starts from: its keyframe in a recording (a format-2 step
    /// decodes its chain from there), `i` itself in the live ring.
    pub fn chain_start(&self, i: usize) -> usize {
        match self {
            History::Live(_) | History::Stream(_) => i,
            History::Replay(r) => r.rec.samples.get(i).map_or(i, |s| s.key.min(i)),
        }
    }

    /// True when sample `i` may be derived against sample `i - 1` (no recorder stop between).
    pub fn has_prev(&self, i: usize) -> bool {
        i > 0
            && match self {
                History::Live(_) | History::Stream(_) => true,
                History::Replay(r) => walk::prev_of(&r.rec, i).is_some(),
            }
    }

    /// Index of the last sample at or before `wall_ms` (the first when all are later).
    pub fn seek(&self, wall_ms: i64) -> usize {
        match self {
            History::Live(r) => r.seek(wall_ms),
            History::Stream(r) => r.seek(wall_ms),
            History::Replay(r) => r.rec.seek(wall_ms),
        }
    }

    /// Gap and action marks with their times (replay only; the live ring has none).
    pub fn marks(&self) -> Vec<(i64, Mark)> {
        match self {
            History::Live(_) | History::Stream(_) => Vec::new(),
            History::Replay(r) => r
                .rec
                .events
                .iter()
                .filter_map(|e| match &e.kind {
                    EventKind::Action(_) => Some((e.wall_ms, Mark::Action)),
                    EventKind::Gap(_) if e.breaks_interval() && e.before > 0 => {
                        Some((e.wall_ms, Mark::Gap))
                    }
                    EventKind::Gap(_) => None,
                    EventKind::Kernel(_) => Some((e.wall_ms, Mark::Kernel)),
                })
                .collect(),
        }
    }

    /// The markers placed before sample `i`, in words (for the status line when landing there).
    pub fn notes_before(&self, i: usize) -> Vec<String> {
        let History::Replay(r) = self else {
            return Vec::new();
        };
        r.rec
            .events
            .iter()
            .filter(|e| e.before == i)
            .filter_map(|e| match &e.kind {
                EventKind::Action(a) => Some(format!(
                    "{} {} {} -> {}",
                    a.kind,
                    a.name,
                    a.from.as_deref().unwrap_or("?"),
                    a.to.as_deref().unwrap_or("?")
                )),
                EventKind::Gap(g) if i > 0 && e.breaks_interval() => Some(format!(
                    "gap: recorder {}{}",
                    g.reason,
                    g.detail
                        .as_deref()
                        .map(|d| format!(" ({d})"))
                        .unwrap_or_default()
                )),
                EventKind::Gap(_) => None,
                EventKind::Kernel(k) => Some(k.summary()),
            })
            .collect()
    }

    /// The typical spacing of samples, for the header and playback ticks.
    pub fn typical_interval(&self) -> Option<Duration> {
        let n = self.len();
        if n < 2 {
            return None;
        }
        // Median of up to 64 spacings from the middle: robust to gaps and a restart.
        let mid = n / 2;
        let lo = mid.saturating_sub(32).max(1);
        let hi = (mid + 32).min(n);
        let mut d: Vec<i64> = (lo..hi)
            .filter_map(|i| Some(self.wall_ms(i)? - self.wall_ms(i - 1)?))
            .filter(|&d| d > 0)
            .collect();
        d.sort_unstable();
        let m = *d.get(d.len() / 2)?;
        Some(Duration::from_millis(m as u64))
    }

    /// Sample `i` derived against its predecessor (none across a recorder gap), without
    /// findings (sparklines, and what the judge judges).
    pub fn derive_at(&mut self, i: usize) -> Result<Derived, String> {
        let prev = if self.has_prev(i) {
            self.sample(i - 1).ok()
        } else {
            None
        };
        let cur = self.sample(i)?;
        Ok(derive(prev.as_ref(), &cur))
    }
}
