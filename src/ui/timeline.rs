//! Where the screen is in time: the history behind the view (the live ring or a recording), the
//! moves over it that live pause and replay share (step, jump to a time, jump by a duration,
//! oldest/newest) as `App` methods, replay playback at a speed, and the timeline bar's contents.

use super::app::{App, Effect};
use super::keymap::Action;
use super::ring::SampleRing;
use crate::assess::Assessed;
use crate::findings::Thresholds;
use crate::record::{walk, Decoder, EventKind, Recording};
use crate::sample::Sample;
use std::time::{Duration, Instant};

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
    Replay(Box<Replayed>),
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
}

/// Replay speeds for `[` and `]`: a day at 1024x takes 84 s.
pub const SPEEDS: [f64; 13] = [
    0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0,
];

/// Replay playback: the recording's clock runs at `speed` times the real one from `anchor`.
#[derive(Debug, Clone, Copy)]
pub struct Playback {
    pub anchor: Instant,
    pub anchor_wall_ms: i64,
}

/// Redraw often enough to look smooth at high speed, never faster than this.
const MIN_TICK: Duration = Duration::from_millis(100);

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

    pub fn len(&self) -> usize {
        match self {
            History::Live(r) => r.len(),
            History::Replay(r) => r.rec.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn wall_ms(&self, i: usize) -> Option<i64> {
        match self {
            History::Live(r) => r.wall_ms(i),
            History::Replay(r) => r.rec.samples.get(i).map(|s| s.wall_ms),
        }
    }

    /// The first sample the view may show. A trimmed live ring's first sample lost its
    /// predecessor, so it could only show since-boot averages; a recording's first sample is
    /// shown (labelled since-boot), as is any sample after a gap.
    pub fn first_index(&self) -> usize {
        match self {
            History::Live(r) => usize::from(r.dropped > 0 && r.len() > 1),
            History::Replay(_) => 0,
        }
    }

    /// Sample `i`, decoded; `None` when it is not there or cannot be decoded (replay reports
    /// why through `sample_err`).
    pub fn sample(&mut self, i: usize) -> Result<Sample, String> {
        match self {
            History::Live(r) => r.get(i).ok_or_else(|| format!("sample {i} is gone")),
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
            History::Live(_) => i,
            History::Replay(r) => r.rec.samples.get(i).map_or(i, |s| s.key.min(i)),
        }
    }

    /// True when sample `i` may be derived against sample `i - 1` (no recorder stop between).
    pub fn has_prev(&self, i: usize) -> bool {
        i > 0
            && match self {
                History::Live(_) => true,
                History::Replay(r) => walk::prev_of(&r.rec, i).is_some(),
            }
    }

    /// Index of the last sample at or before `wall_ms` (the first when all are later).
    pub fn seek(&self, wall_ms: i64) -> usize {
        match self {
            History::Live(r) => r.seek(wall_ms),
            History::Replay(r) => r.rec.seek(wall_ms),
        }
    }

    /// Gap and action marks with their times (replay only; the live ring has none).
    pub fn marks(&self) -> Vec<(i64, Mark)> {
        match self {
            History::Live(_) => Vec::new(),
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
}

/// Time travel: the moves over the history that the keys make, live and in replay.
impl App {
    /// "LIVE", "PAUSED", "HISTORY -12s", "REPLAY 4x" or "REPLAY PAUSED".
    pub fn mode_label(&self) -> String {
        if self.is_replay() {
            return match self.playing {
                Some(_) => format!("REPLAY {}", speed_label(self.speed)),
                None => "REPLAY PAUSED".into(),
            };
        }
        match (self.view, self.paused) {
            (Some(i), _) if i + 1 < self.history.len() => {
                let back = match (
                    self.history.wall_ms(i),
                    self.history.wall_ms(self.history.len() - 1),
                ) {
                    (Some(a), Some(b)) if b >= a => (b - a) as f64 / 1000.0,
                    _ => (self.history.len() - 1 - i) as f64 * self.interval.as_secs_f64(),
                };
                format!("HISTORY -{}", crate::units::duration(Some(back)))
            }
            (_, true) => "PAUSED".into(),
            _ => "LIVE".into(),
        }
    }

    /// Replay playback: how long until the next step (`None`: nothing to wait for).
    pub fn next_tick(&self) -> Option<Duration> {
        self.playing.map(|_| tick(self.interval, self.speed))
    }

    /// Replay playback: moves to where the recording's clock has got to.
    pub fn on_tick(&mut self) -> Effect {
        let Some(p) = self.playing else {
            return Effect::None;
        };
        let last = self.history.len().saturating_sub(1);
        let elapsed = p.anchor.elapsed().as_secs_f64() * self.speed * 1000.0;
        let target = self.history.seek(p.anchor_wall_ms + elapsed as i64);
        let cur = self.view_index().unwrap_or(0);
        // Always at least one step per tick at slow speeds with uneven spacing.
        let target = target.max((cur + 1).min(last));
        if target == cur {
            self.playing = None;
            self.status = Some("end of recording".into());
            return Effect::Redraw;
        }
        self.move_to(target);
        if target == last {
            self.playing = None;
            self.status = Some("end of recording".into());
        }
        Effect::Redraw
    }

    /// `b`: a typed time, in the forms `perftop dump --from` takes.
    pub fn goto_text(&mut self, text: &str) {
        let (Some(first), Some(last)) = (
            self.history.wall_ms(0),
            self.history
                .len()
                .checked_sub(1)
                .and_then(|l| self.history.wall_ms(l)),
        ) else {
            self.status = Some("no samples yet".into());
            return;
        };
        // Up to one interval either side counts as the edge: "10m ago" on a ten-minute
        // recording means its start, whatever the milliseconds say.
        let slack = (self.interval.as_millis() as i64).max(1000);
        match crate::record::parse_time(text, first, last) {
            Err(e) => self.status = Some(format!("{e:#}")),
            Ok(t) if t < first - slack || t > last + slack => {
                self.status = Some(format!(
                    "{} is outside {} .. {} (UTC)",
                    crate::record::format_clock(t),
                    crate::record::format_clock(first),
                    crate::record::format_clock(last)
                ));
            }
            Ok(t) => {
                let i = self.history.seek(t).max(self.history.first_index());
                self.jump_to(i);
            }
        }
    }

    pub(super) fn play_pause(&mut self) {
        if self.playing.take().is_some() {
            return;
        }
        let last = self.history.len().saturating_sub(1);
        if self.view_index().unwrap_or(0) >= last {
            self.status = Some("at the end of the recording: Home or b to go back".into());
            return;
        }
        self.reanchor_from_now();
    }

    pub(super) fn reanchor_from_now(&mut self) {
        let at = self
            .view_index()
            .and_then(|i| self.history.wall_ms(i))
            .unwrap_or(0);
        self.playing = Some(Playback {
            anchor: std::time::Instant::now(),
            anchor_wall_ms: at,
        });
    }

    /// After a jump or a speed change, playback continues from the sample in view.
    pub(super) fn reanchor(&mut self) {
        if self.playing.is_some() {
            self.reanchor_from_now();
        }
    }

    /// Puts sample `i` on screen (clamped to what exists) and derives it.
    pub(super) fn move_to(&mut self, i: usize) {
        let len = self.history.len();
        if len == 0 {
            return;
        }
        let i = i.clamp(self.history.first_index().min(len - 1), len - 1);
        if self.is_replay() {
            self.view = Some(i);
        } else if i == len - 1 {
            // The newest sample: follow live again unless paused.
            self.view = None;
        } else {
            self.paused = true;
            self.view = Some(i);
        }
        self.recompute();
    }

    /// A jump (b, j, J): moves, keeps playback going from there, and says what lies there.
    pub(super) fn jump_to(&mut self, i: usize) {
        let from = self.view_index().unwrap_or(0);
        self.move_to(i);
        self.reanchor();
        let to = self.view_index().unwrap_or(0);
        let mut notes = Vec::new();
        if let Some(t) = self.history.wall_ms(to) {
            notes.push(format!("at {} UTC", crate::record::format_clock(t)));
        }
        // Markers passed on the way, so a jump never hides a gap or a tweak.
        let (lo, hi) = (from.min(to) + 1, from.max(to));
        for k in lo..=hi {
            notes.extend(self.history.notes_before(k));
        }
        self.status = Some(notes.join("; "));
    }

    pub(super) fn jump_by(&mut self, forward: bool) {
        let Some(cur) = self.view_index() else { return };
        let Some(now) = self.history.wall_ms(cur) else {
            return;
        };
        let step = self.jump.as_millis() as i64;
        let last = self.history.len() - 1;
        let target = if forward {
            if cur == last {
                self.status = Some(if self.is_replay() {
                    "at the last sample".into()
                } else {
                    "already at the newest sample".into()
                });
                return;
            }
            // The first sample at or after now + step (not before it: a forward jump moves).
            let i = self.history.seek(now + step);
            if self.history.wall_ms(i).is_some_and(|w| w < now + step) && i < last {
                i + 1
            } else {
                i
            }
            .max(cur + 1)
        } else {
            self.history.seek(now - step).min(cur.saturating_sub(1))
        };
        self.jump_to(target);
    }

    pub(super) fn step(&mut self, a: Action) {
        let Some(cur) = self.view_index() else { return };
        let last = self.history.len() - 1;
        let first = self.history.first_index();
        if self.is_replay() {
            // Stepping is frame by frame: it stops playback.
            if matches!(a, Action::StepBack | Action::StepForward) {
                self.playing = None;
            }
            let target = match a {
                Action::StepBack => cur.saturating_sub(1),
                Action::Oldest => first,
                Action::StepForward => (cur + 1).min(last),
                _ => last,
            };
            if target == cur {
                self.status = Some(
                    if a == Action::StepBack {
                        "first sample"
                    } else {
                        "last sample"
                    }
                    .into(),
                );
            }
            self.jump_to(target);
            return;
        }
        let target = match a {
            Action::StepBack => cur.saturating_sub(1).max(first),
            Action::Oldest => first,
            Action::StepForward => (cur + 1).min(last),
            _ => last,
        };
        if a == Action::Latest || (a == Action::StepForward && target == last) {
            self.view = None;
            self.paused = a != Action::Latest && self.paused;
        } else {
            self.paused = true;
            self.view = Some(target);
        }
        if target == cur && a == Action::StepBack {
            self.status = Some("oldest sample in memory".into());
        }
        self.recompute();
    }
}

/// How long to wait before the next playback step at `speed` for samples `interval` apart.
pub fn tick(interval: Duration, speed: f64) -> Duration {
    interval
        .div_f64(speed.max(0.01))
        .clamp(MIN_TICK, Duration::from_secs(60))
}

/// The next speed up or down the `SPEEDS` ladder.
pub fn next_speed(speed: f64, up: bool) -> f64 {
    let pos = SPEEDS
        .iter()
        .position(|&s| s >= speed - 1e-9)
        .unwrap_or(SPEEDS.len() - 1);
    if up {
        SPEEDS[(pos + 1).min(SPEEDS.len() - 1)]
    } else {
        SPEEDS[pos.saturating_sub(1)]
    }
}

/// `4x`, `0.25x`.
pub fn speed_label(speed: f64) -> String {
    if speed >= 1.0 {
        format!("{speed:.0}x")
    } else {
        format!("{speed}x")
    }
}

/// One column of the timeline bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    Played,
    Ahead,
    Cursor,
    Mark(Mark),
}

/// The bar's cells for `width` columns over `first..=last`, with the cursor at `at`. A column
/// holding a mark shows it (an OOM kill wins over a gap, a gap over an action); the cursor wins
/// over all so the position is never hidden.
pub fn bar(first: i64, last: i64, at: i64, marks: &[(i64, Mark)], width: usize) -> Vec<Cell> {
    if width == 0 {
        return Vec::new();
    }
    let span = (last - first).max(1) as f64;
    let col = |t: i64| -> usize {
        let f = (t - first) as f64 / span;
        ((f * (width - 1) as f64).round().max(0.0) as usize).min(width - 1)
    };
    let cur = col(at);
    let mut cells: Vec<Cell> = (0..width)
        .map(|c| if c < cur { Cell::Played } else { Cell::Ahead })
        .collect();
    let rank = |c: Cell| match c {
        Cell::Mark(Mark::Oom) => 3,
        Cell::Mark(Mark::Gap) => 2,
        Cell::Mark(Mark::Action) => 1,
        _ => 0,
    };
    for &(t, m) in marks {
        let c = col(t);
        if rank(Cell::Mark(m)) > rank(cells[c]) {
            cells[c] = Cell::Mark(m);
        }
    }
    cells[cur] = Cell::Cursor;
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_and_ticks() {
        assert_eq!(next_speed(1.0, true), 2.0);
        assert_eq!(next_speed(1.0, false), 0.5);
        assert_eq!(next_speed(0.25, false), 0.25);
        assert_eq!(next_speed(1024.0, true), 1024.0);
        assert_eq!(next_speed(3.0, true), 8.0, "an off-ladder speed snaps up");
        assert_eq!(tick(Duration::from_secs(1), 1.0), Duration::from_secs(1));
        assert_eq!(
            tick(Duration::from_secs(1), 4.0),
            Duration::from_millis(250)
        );
        assert_eq!(tick(Duration::from_secs(1), 64.0), MIN_TICK);
        assert_eq!(speed_label(0.25), "0.25x");
        assert_eq!(speed_label(16.0), "16x");
    }

    #[test]
    fn bar_places_cursor_and_marks() {
        // 0..=100 over 11 columns: one column per 10 ms.
        let marks = [(30, Mark::Action), (30, Mark::Gap), (80, Mark::Action)];
        let b = bar(0, 100, 50, &marks, 11);
        assert_eq!(b[0], Cell::Played);
        assert_eq!(b[3], Cell::Mark(Mark::Gap), "a gap wins over an action");
        assert_eq!(b[5], Cell::Cursor);
        assert_eq!(b[6], Cell::Ahead);
        assert_eq!(b[8], Cell::Mark(Mark::Action));
        // The cursor is never hidden by a mark, and a single-sample recording still draws.
        assert_eq!(bar(0, 100, 80, &marks, 11)[8], Cell::Cursor);
        assert_eq!(
            bar(5, 5, 5, &[], 3),
            vec![Cell::Cursor, Cell::Ahead, Cell::Ahead]
        );
        assert!(bar(0, 1, 0, &[], 0).is_empty());
    }
}
