//! Time travel: where the screen is in time. Owns the history behind the view (the live ring or a
//! recording), the cursor over it, live pause, replay playback at a speed, the sampling interval,
//! and what the sample in view shows (derived and judged, with the sparklines' trend points and
//! the OOM kills). The moves that live pause and replay share (step, jump to a time, jump by a
//! duration, oldest/newest) are its methods; the judge and the footer are passed in.

use super::history::{History, Incoming};
use super::judge::Judge;
use super::keymap::{Action, Effect};
use super::oom::OomLog;
use super::status::Status;
use super::trend::TrendPoint;
use crate::assess::Assessed;
use crate::explain::brief::Running;
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

pub const INTERVALS_MS: [u64; 9] = [250, 500, 1000, 2000, 3000, 5000, 10_000, 30_000, 60_000];

/// Trend points kept for sparklines: what one draws. (512 were kept when 30 were drawn: 80 KB
/// of the idle dashboard's heap, its deque grown to 1,024 points of 80 bytes.)
const TRENDS: usize = super::panes::SPARK_POINTS;
/// Replay: derive at most this many earlier samples for the sparklines after a jump...
const BACKFILL: usize = TRENDS;
/// ...and spend at most this long doing it, so big hosts stay responsive.
const BACKFILL_BUDGET: Duration = Duration::from_millis(30);

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

pub struct Timeline {
    /// The samples the view moves over: the live ring, or a recording in replay.
    pub history: History,
    /// Index into `history` while stepping back or replaying; `None` follows the newest sample.
    pub view: Option<usize>,
    pub paused: bool,
    /// Replay playback (`None`: stopped on the sample in view).
    pub playing: Option<Playback>,
    pub speed: f64,
    /// `j`/`J` jump by this much.
    pub jump: Duration,
    /// The sampling interval (live; `+`/`-` change it), or the recording's typical one.
    pub interval: Duration,
    /// The sample in view, derived and judged.
    pub derived: Option<Assessed>,
    pub trends: VecDeque<TrendPoint>,
    /// OOM kills of the session (live) or the recording (replay), with their times.
    pub oom: OomLog,
    /// Live: the episodes since start, folded in as each interval is judged (replay reads its
    /// recording's on a thread instead: `ui::episodes`).
    pub episodes: Running,
    /// Replay: trend points of the samples derived so far, by index.
    trend_cache: BTreeMap<usize, TrendPoint>,
}

impl Timeline {
    pub fn new(history: History, interval: Duration) -> Timeline {
        Timeline {
            history,
            view: None,
            paused: false,
            playing: None,
            speed: 1.0,
            jump: Duration::from_secs(60),
            interval,
            derived: None,
            // One more than kept: a point is pushed before the oldest is dropped.
            trends: VecDeque::with_capacity(TRENDS + 1),
            oom: OomLog::default(),
            episodes: Running::new(),
            trend_cache: BTreeMap::new(),
        }
    }

    pub fn is_replay(&self) -> bool {
        self.history.is_replay()
    }

    /// Index of the sample on screen.
    pub fn view_index(&self) -> Option<usize> {
        match self.view {
            Some(i) => Some(i),
            None => self.history.len().checked_sub(1),
        }
    }

    /// Adds a new live sample, judged by `judge` (whose tracker follows the live sequence even
    /// while the view is paused on the past). While paused or stepping back the view stays where
    /// it is.
    pub fn push_live(&mut self, s: impl Into<Incoming>, judge: &mut Judge) {
        let Some((prev, dropped)) = self.history.push(s.into()) else {
            return;
        };
        judge.remember_baselines(self.history.len(), self.history.max_len());
        if dropped > 0 {
            if let Some(v) = self.view.as_mut() {
                *v = v.saturating_sub(dropped).max(1);
            }
        }
        let Some(cur) = self.history.newest() else {
            return;
        };
        let latest = judge.next(prev.as_ref(), cur);
        self.oom.record(&latest);
        if let Some(p) = &prev {
            self.episodes
                .add((p.time.wall_ms, cur.time.wall_ms), &latest);
        }
        if !self.paused {
            self.view = None;
            self.trends.push_back(TrendPoint::of(&latest));
            self.derived = Some(latest);
            while self.trends.len() > TRENDS {
                self.trends.pop_front();
            }
        }
    }

    /// New thresholds: replay judges every sample again (live goes on with the new tracker).
    pub fn rejudge(&mut self, judge: &Judge, status: &mut Status) {
        if let History::Replay(r) = &mut self.history {
            r.baselines.clear();
            self.trend_cache.clear();
            self.recompute(judge, status);
        }
    }

    /// Derives and judges the sample in view again.
    pub fn recompute(&mut self, judge: &Judge, status: &mut Status) {
        let Some(i) = self.view_index() else {
            self.derived = None;
            return;
        };
        match judge.assess_at(&mut self.history, i) {
            Ok(d) => {
                if self.is_replay() {
                    self.trend_cache.insert(i, TrendPoint::of(&d));
                    self.fill_trends(i);
                }
                self.derived = Some(d);
            }
            Err(e) => status.set(format!("cannot show {e}")),
        }
    }

    /// Replay: sparklines for the samples up to `i`, deriving earlier ones not seen yet (within
    /// a time budget; what is left shows as a shorter line).
    fn fill_trends(&mut self, i: usize) {
        let started = std::time::Instant::now();
        let lo = i.saturating_sub(BACKFILL);
        // Nearest first, but each chain of a recording forward from its keyframe: one sample at
        // a time backwards would decode the chain again for every sample.
        let mut order = Vec::with_capacity(i - lo);
        let mut hi = i;
        while hi > lo {
            let start = self.history.chain_start(hi - 1).clamp(lo, hi - 1);
            order.extend(start..hi);
            hi = start;
        }
        for j in order {
            if started.elapsed() > BACKFILL_BUDGET {
                break;
            }
            if self.trend_cache.contains_key(&j) {
                continue;
            }
            match self.history.derive_at(j) {
                Ok(d) => {
                    self.trend_cache.insert(j, TrendPoint::of(&d));
                }
                Err(_) => break,
            }
        }
        // A day at 1 s is 86,400 points of ~40 bytes; keep the cache to a few MB anyway.
        while self.trend_cache.len() > 100_000 {
            // Drop the point farthest from where the view is.
            let lo = self.trend_cache.first_key_value().map_or(i, |(k, _)| *k);
            let hi = self.trend_cache.last_key_value().map_or(i, |(k, _)| *k);
            if i.saturating_sub(lo) > hi.saturating_sub(i) {
                self.trend_cache.pop_first();
            } else {
                self.trend_cache.pop_last();
            }
        }
        self.trends = self
            .trend_cache
            .range(..=i)
            .rev()
            .take(TRENDS)
            .map(|(_, p)| *p)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
    }

    /// Live `space`: pause on the sample in view, or follow the newest again.
    pub fn toggle_pause(&mut self, judge: &Judge, status: &mut Status) {
        self.paused = !self.paused;
        if !self.paused {
            self.view = None;
            self.recompute(judge, status);
        }
    }

    /// `+`/`-`: the next sampling interval up or down `INTERVALS_MS`; `None` at either end.
    pub fn step_interval(&mut self, up: bool) -> Option<String> {
        let ms = self.interval.as_millis() as u64;
        let pos = INTERVALS_MS.iter().position(|&x| x >= ms).unwrap_or(2);
        let next = if up {
            INTERVALS_MS.get(pos + 1).copied().unwrap_or(ms)
        } else if pos > 0 {
            INTERVALS_MS[pos - 1]
        } else {
            ms
        };
        if next == ms {
            return None;
        }
        self.interval = Duration::from_millis(next);
        Some(format!("interval {:.2} s", next as f64 / 1000.0))
    }

    /// `[`/`]`: replay speed down or up; playback goes on from the sample in view.
    pub fn change_speed(&mut self, faster: bool) -> String {
        self.speed = next_speed(self.speed, faster);
        self.reanchor();
        format!("speed {}", speed_label(self.speed))
    }

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
    pub fn on_tick(&mut self, judge: &Judge, status: &mut Status) -> Effect {
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
            status.set("end of recording".into());
            return Effect::Redraw;
        }
        self.move_to(target, judge, status);
        if target == last {
            self.playing = None;
            status.set("end of recording".into());
        }
        Effect::Redraw
    }

    /// `b`: a typed time, in the forms `perftop dump --from` takes.
    pub fn goto_text(&mut self, text: &str, judge: &Judge, status: &mut Status) {
        let (Some(first), Some(last)) = (
            self.history.wall_ms(0),
            self.history
                .len()
                .checked_sub(1)
                .and_then(|l| self.history.wall_ms(l)),
        ) else {
            status.set("no samples yet".into());
            return;
        };
        // Up to one interval either side counts as the edge: "10m ago" on a ten-minute
        // recording means its start, whatever the milliseconds say.
        let slack = (self.interval.as_millis() as i64).max(1000);
        match crate::record::parse_time(text, first, last) {
            Err(e) => status.set(format!("{e:#}")),
            Ok(t) if t < first - slack || t > last + slack => {
                status.set(format!(
                    "{} is outside {} .. {} (UTC)",
                    crate::record::format_clock(t),
                    crate::record::format_clock(first),
                    crate::record::format_clock(last)
                ));
            }
            Ok(t) => {
                let i = self.history.seek(t).max(self.history.first_index());
                self.jump_to(i, judge, status);
            }
        }
    }

    pub fn play_pause(&mut self, status: &mut Status) {
        if self.playing.take().is_some() {
            return;
        }
        let last = self.history.len().saturating_sub(1);
        if self.view_index().unwrap_or(0) >= last {
            status.set("at the end of the recording: Home or b to go back".into());
            return;
        }
        self.reanchor_from_now();
    }

    pub fn reanchor_from_now(&mut self) {
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
    pub fn reanchor(&mut self) {
        if self.playing.is_some() {
            self.reanchor_from_now();
        }
    }

    /// Puts sample `i` on screen (clamped to what exists) and derives it.
    pub fn move_to(&mut self, i: usize, judge: &Judge, status: &mut Status) {
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
        self.recompute(judge, status);
    }

    /// A jump (b, j, J): moves, keeps playback going from there, and says what lies there.
    pub fn jump_to(&mut self, i: usize, judge: &Judge, status: &mut Status) {
        let from = self.view_index().unwrap_or(0);
        self.move_to(i, judge, status);
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
            notes.extend(self.oom_note(k, k == to));
        }
        status.set(notes.join("; "));
    }

    /// The OOM kills of sample `k`'s interval (a `!` on the timeline), in words; on the sample
    /// in view (`here`), with the victims the kernel named.
    fn oom_note(&self, k: usize, here: bool) -> Option<String> {
        let w = self.history.wall_ms(k)?;
        let kills: u64 = self
            .oom
            .events
            .iter()
            .filter(|(t, _)| *t == w)
            .map(|(_, n)| n)
            .sum();
        if kills == 0 {
            return None;
        }
        let victims: Vec<String> = self
            .derived
            .as_ref()
            .filter(|_| here)
            .map(|a| {
                a.derived
                    .memory
                    .oom_victims
                    .iter()
                    .map(|v| format!("{} (pid {})", crate::safe::line(&v.comm), v.pid))
                    .collect()
            })
            .unwrap_or_default();
        Some(if victims.is_empty() {
            format!("OOM killer: {kills} killed in this interval")
        } else {
            format!("OOM killer: {kills} killed: {}", victims.join(", "))
        })
    }

    pub fn jump_by(&mut self, forward: bool, judge: &Judge, status: &mut Status) {
        let Some(cur) = self.view_index() else { return };
        let Some(now) = self.history.wall_ms(cur) else {
            return;
        };
        let step = self.jump.as_millis() as i64;
        let last = self.history.len() - 1;
        let target = if forward {
            if cur == last {
                status.set(if self.is_replay() {
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
        self.jump_to(target, judge, status);
    }

    pub fn step(&mut self, a: Action, judge: &Judge, status: &mut Status) {
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
                status.set(
                    if a == Action::StepBack {
                        "first sample"
                    } else {
                        "last sample"
                    }
                    .into(),
                );
            }
            self.jump_to(target, judge, status);
            return;
        }
        if a == Action::StepForward && self.view.is_none() {
            // Already live: nothing newer to step to; say which key goes back.
            status.set("at the newest sample (T steps back)".into());
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
            status.set("oldest sample in memory".into());
        }
        self.recompute(judge, status);
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

    /// The live view keeps as many trend points as a sparkline draws, whatever the ring keeps,
    /// and the newest last.
    #[test]
    fn live_trends_keep_what_a_sparkline_draws() {
        let ring = super::super::ring::SampleRing::new(600, usize::MAX);
        let mut t = Timeline::new(History::Live(ring), Duration::from_secs(1));
        let mut judge = Judge::default();
        for i in 0..100u32 {
            let mut s = crate::sample::Sample::default();
            s.time.uptime_s = Some(f64::from(i));
            s.time.wall_ms = 1_000 * i64::from(i);
            s.memory.meminfo.dirty = Some(u64::from(i));
            t.push_live(s, &mut judge);
        }
        assert_eq!(t.history.len(), 100);
        // What a sparkline draws, not this module's own constant (which is defined as it).
        assert_eq!(t.trends.len(), crate::ui::panes::SPARK_POINTS);
        assert_eq!(t.trends.back().and_then(|p| p.dirty_kb), Some(99));
        assert_eq!(t.trends.front().and_then(|p| p.dirty_kb), Some(70));
    }
}
