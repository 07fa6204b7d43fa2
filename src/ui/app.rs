//! TUI state: the history in view (the live ring or a replayed recording), the assessed view of
//! the selected sample, focus/zoom/sort/filter, and how each key action changes them. The moves
//! through time are in `timeline`, the `R` recorder in `record::live`, the tweak dialogs in
//! `tweak_dialog`.

use super::filter::PaneFilters;
use super::keymap::{lookup, Action, Key, Screen};
use super::scroll::Scroll;
use super::timeline::{next_speed, speed_label, History, Playback};
use super::trend::TrendPoint;
use crate::assess::{Assessed, Assessor};
use crate::derive::{derive, Derived};
use crate::findings::{ActiveFinding, Baselines, FindingTracker, Thresholds};
use crate::pane::{Pane, PANES};
use crate::record::live::LiveRecorder;
use crate::record::Recording;
use crate::sample::Sample;
use ratatui::crossterm::event::KeyEvent;
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    /// Busiest first (C0%, aqu-sz, %soft, irq/s, miss ratio depending on the pane).
    Load,
    Name,
}

/// What the event loop must do after a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    None,
    Redraw,
    /// Clear the terminal and draw everything again (Ctrl-L, resume).
    Repaint,
    Suspend,
    Quit,
    IntervalChanged,
}

pub const INTERVALS_MS: [u64; 9] = [250, 500, 1000, 2000, 3000, 5000, 10_000, 30_000, 60_000];

pub struct App {
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
    /// The `b` prompt while it is being typed.
    pub goto_input: Option<String>,
    pub derived: Option<Assessed>,
    pub trends: VecDeque<TrendPoint>,
    /// OOM kills of the session (live) or the recording (replay), with their times.
    pub oom: super::oom::OomLog,
    /// Replay: trend points of the samples derived so far, by index.
    trend_cache: BTreeMap<usize, TrendPoint>,
    pub focus: Pane,
    pub zoom: bool,
    /// The zoomed pane's first row on screen (reset when the zoom or the focus changes).
    pub zoom_scroll: Scroll,
    pub help: bool,
    /// `f`: the list of every finding, over the dashboard.
    pub findings_open: bool,
    pub findings_scroll: Scroll,
    pub interval: Duration,
    pub sort: SortKey,
    /// What the processes table ranks by (`s` with the Processes pane focused).
    pub proc_sort: crate::view::processes::ProcSort,
    /// The `/` prompt's text while it is typed (it filters the focused pane as you type);
    /// Enter keeps it as that pane's filter in `filters`.
    pub filter: String,
    pub filter_editing: bool,
    pub filters: PaneFilters,
    pub hide_idle: bool,
    pub status: Option<String>,
    /// How long `status` has been on the footer (it goes after `status::SHOW_FOR`).
    pub status_age: super::status::StatusAge,
    /// Shown in the header: `root` or `user` (tweaks need root), and `--root DIR` when used.
    pub privilege: String,
    pub root_label: Option<String>,
    /// Findings over the live sequence (raised after 3 samples, cleared with hysteresis).
    pub tracker: FindingTracker,
    pub active_findings: Vec<ActiveFinding>,
    pub thresholds: Thresholds,
    /// Live: judges each new interval against the disk baselines learned so far...
    assessor: Assessor,
    /// ...and keeps, per sample in the ring, the baselines it was judged against, so stepping
    /// back shows the findings the live view showed.
    live_before: VecDeque<Baselines>,
    /// perftop's own CPU% and RSS (live mode only).
    pub self_cost: super::selfcost::SelfCost,
    /// Safe tweaks: context (None: disabled) and the open confirm/chooser/menu dialog.
    pub tweaks: super::tweak_dialog::TweakState,
    /// `R`: the live stream being recorded, and where new recordings go.
    pub recording: LiveRecorder,
    pub record_dir: std::path::PathBuf,
}

/// Trend points kept for sparklines.
const TRENDS: usize = 512;
/// Replay: derive at most this many earlier samples for the sparklines after a jump...
const BACKFILL: usize = 120;
/// ...and spend at most this long doing it, so big hosts stay responsive.
const BACKFILL_BUDGET: Duration = Duration::from_millis(30);

impl App {
    /// `keep` is how much history the ring holds (default ten minutes).
    pub fn new(interval: Duration, keep: Duration) -> App {
        let capacity = (keep.as_secs_f64() / interval.as_secs_f64().max(0.25)).ceil() as usize;
        App::with_history(
            History::Live(super::ring::SampleRing::new(
                capacity.clamp(2, 100_000),
                super::ring::DEFAULT_BUDGET_BYTES,
            )),
            interval,
        )
    }

    /// Replay of a recording, stopped on sample `at` (tweaks off, no recording).
    pub fn replay(rec: Recording, label: String, at: usize) -> App {
        let mut history = History::replay(rec, label);
        let oom = match &mut history {
            History::Replay(r) => super::oom::OomLog::scan(&r.rec, &mut r.dec),
            History::Live(_) => super::oom::OomLog::default(),
        };
        let interval = history.typical_interval().unwrap_or(Duration::from_secs(1));
        let mut app = App::with_history(history, interval);
        app.oom = oom;
        app.privilege = "replay: tweaks off".into();
        app.paused = true;
        app.move_to(at);
        app
    }

    fn with_history(history: History, interval: Duration) -> App {
        App {
            history,
            view: None,
            paused: false,
            playing: None,
            speed: 1.0,
            jump: Duration::from_secs(60),
            goto_input: None,
            derived: None,
            trends: VecDeque::new(),
            oom: super::oom::OomLog::default(),
            trend_cache: BTreeMap::new(),
            focus: Pane::Cpu,
            zoom: false,
            zoom_scroll: Scroll::default(),
            help: false,
            findings_open: false,
            findings_scroll: Scroll::default(),
            interval,
            sort: SortKey::Load,
            proc_sort: crate::view::processes::ProcSort::default(),
            filter: String::new(),
            filter_editing: false,
            filters: PaneFilters::default(),
            hide_idle: true,
            status: None,
            status_age: Default::default(),
            privilege: String::new(),
            root_label: None,
            tracker: FindingTracker::new(Thresholds::default()),
            active_findings: Vec::new(),
            thresholds: Thresholds::default(),
            assessor: Assessor::new(Thresholds::default()),
            live_before: VecDeque::new(),
            self_cost: super::selfcost::SelfCost::default(),
            tweaks: Default::default(),
            recording: LiveRecorder::Off,
            record_dir: std::path::PathBuf::from("."),
        }
    }

    pub fn is_replay(&self) -> bool {
        self.history.is_replay()
    }

    /// Findings thresholds from the config file (restarts the tracker).
    pub fn set_thresholds(&mut self, t: Thresholds) {
        self.tracker = FindingTracker::new(t.clone());
        self.assessor = Assessor::new(t.clone());
        self.thresholds = t;
        if let History::Replay(r) = &mut self.history {
            r.baselines.clear();
            self.trend_cache.clear();
            self.recompute();
        }
    }

    /// Adds a new live sample (and records it when `R` is on). While paused or stepping back
    /// the view stays where it is.
    pub fn push_sample(&mut self, s: Sample) {
        let History::Live(ring) = &mut self.history else {
            return;
        };
        // The dashboard keeps running when a write fails; only the recording ends.
        if let Some(status) = self.recording.sample(&s) {
            self.status = Some(status);
        }
        let prev = ring.take_newest();
        let dropped = ring.push(s);
        self.live_before
            .push_back(self.assessor.baselines().clone());
        while self.live_before.len() > ring.len() {
            self.live_before.pop_front();
        }
        if dropped > 0 {
            if let Some(v) = self.view.as_mut() {
                *v = v.saturating_sub(dropped).max(1);
            }
        }
        let Some(cur) = ring.newest() else {
            return;
        };
        // The tracker follows the live sequence even while the view is paused on the past.
        let latest = self.assessor.next(prev.as_ref(), cur);
        self.active_findings = self.tracker.update(&latest);
        self.oom.record(&latest);
        if !self.paused {
            self.view = None;
            self.trends.push_back(TrendPoint::of(&latest));
            self.derived = Some(latest);
            while self.trends.len() > TRENDS {
                self.trends.pop_front();
            }
        }
    }

    /// Index of the sample on screen.
    pub fn view_index(&self) -> Option<usize> {
        match self.view {
            Some(i) => Some(i),
            None => self.history.len().checked_sub(1),
        }
    }

    /// Sample `i` derived against its predecessor (none across a recorder gap) and judged
    /// against the disk baselines before it: the findings batch, dump and live show for it.
    fn assess_at(&mut self, i: usize) -> Result<Assessed, String> {
        if let History::Replay(r) = &mut self.history {
            return r.assess_at(i, &self.thresholds);
        }
        let d = self.derive_at(i)?;
        let mut a = Assessor::new(self.thresholds.clone());
        if let Some(b) = self.live_before.get(i) {
            a.set_baselines(b.clone());
        }
        Ok(a.peek(d))
    }

    /// Sample `i` derived against its predecessor, without findings (sparklines).
    fn derive_at(&mut self, i: usize) -> Result<Derived, String> {
        let prev = if self.history.has_prev(i) {
            self.history.sample(i - 1).ok()
        } else {
            None
        };
        let cur = self.history.sample(i)?;
        Ok(derive(prev.as_ref(), &cur))
    }

    pub(super) fn recompute(&mut self) {
        let Some(i) = self.view_index() else {
            self.derived = None;
            return;
        };
        match self.assess_at(i) {
            Ok(d) => {
                if self.is_replay() {
                    self.trend_cache.insert(i, TrendPoint::of(&d));
                    self.fill_trends(i);
                }
                self.derived = Some(d);
            }
            Err(e) => self.status = Some(format!("cannot show {e}")),
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
            match self.derive_at(j) {
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

    pub fn key(&mut self, ev: KeyEvent) -> Effect {
        if self.filter_editing {
            return self.filter_key(ev);
        }
        if self.goto_input.is_some() {
            return self.goto_key(ev);
        }
        if self.tweaks.dialog.is_some() {
            self.status = self.tweaks.key(ev);
            if let Some(a) = self.tweaks.done.take() {
                self.note_action(&a);
            }
            return Effect::Redraw;
        }
        let Some(key) = Key::from_event(&ev) else {
            return Effect::None;
        };
        let screen = if self.help {
            Screen::Help
        } else if self.findings_open {
            Screen::Findings
        } else if self.zoom {
            Screen::Zoomed
        } else {
            Screen::Dashboard
        };
        match lookup(key, screen, self.is_replay()) {
            Some(a) => self.apply(a),
            None => Effect::None,
        }
    }

    /// Writes a tweak applied or undone into the recording started with `R`.
    pub fn note_action(&mut self, a: &crate::record::Action) {
        if let Some(status) = self.recording.action(a) {
            self.status = Some(status);
        }
    }

    pub fn apply(&mut self, a: Action) -> Effect {
        self.status = None;
        match a {
            Action::Quit => return Effect::Quit,
            Action::Help => self.help = !self.help,
            Action::Back => {
                if self.help {
                    self.help = false;
                } else if self.findings_open {
                    self.findings_open = false;
                } else if self.zoom {
                    self.zoom = false;
                } else {
                    self.filters.clear(self.focus);
                }
            }
            Action::Repaint => return Effect::Repaint,
            Action::Suspend => return Effect::Suspend,
            Action::Pause if self.is_replay() => self.play_pause(),
            Action::Pause => {
                self.paused = !self.paused;
                if !self.paused {
                    self.view = None;
                    self.recompute();
                }
            }
            Action::FocusNext => self.focus_on(PANES[(self.focus.index() + 1) % PANES.len()]),
            Action::FocusPrev => {
                self.focus_on(PANES[(self.focus.index() + PANES.len() - 1) % PANES.len()])
            }
            Action::Focus(p) => self.focus_on(p),
            Action::Zoom => {
                self.zoom = !self.zoom;
                self.zoom_scroll.reset();
            }
            Action::Scroll(m) if self.findings_open => self.findings_scroll.apply(m),
            Action::Scroll(m) => self.zoom_scroll.apply(m),
            Action::Findings => {
                self.findings_open = !self.findings_open;
                self.findings_scroll.reset();
            }
            Action::IntervalUp | Action::IntervalDown => {
                let ms = self.interval.as_millis() as u64;
                let pos = INTERVALS_MS.iter().position(|&x| x >= ms).unwrap_or(2);
                let next = if a == Action::IntervalUp {
                    INTERVALS_MS.get(pos + 1).copied().unwrap_or(ms)
                } else if pos > 0 {
                    INTERVALS_MS[pos - 1]
                } else {
                    ms
                };
                if next == ms {
                    return Effect::None;
                }
                self.interval = Duration::from_millis(next);
                self.status = Some(format!("interval {:.2} s", next as f64 / 1000.0));
                return Effect::IntervalChanged;
            }
            Action::Sort if self.focus == Pane::Procs => {
                self.proc_sort = self.proc_sort.next();
                self.status = Some(format!("processes: by {}", self.proc_sort.name()));
            }
            Action::Sort => {
                self.sort = match self.sort {
                    SortKey::Load => SortKey::Name,
                    SortKey::Name => SortKey::Load,
                };
                self.status = Some(match self.sort {
                    SortKey::Load => "sort: busiest first".into(),
                    SortKey::Name => "sort: by name".into(),
                });
            }
            Action::Filter => {
                // Editing starts from the pane's kept filter, so a typo is one Backspace away.
                self.filter = self.filters.get(self.focus).to_string();
                self.filter_editing = true;
            }
            Action::HideIdle => {
                self.hide_idle = !self.hide_idle;
                self.status = Some(
                    if self.hide_idle {
                        "idle rows hidden"
                    } else {
                        "idle rows shown"
                    }
                    .into(),
                );
            }
            Action::StepBack | Action::Oldest | Action::StepForward | Action::Latest => {
                self.step(a);
            }
            Action::GoTo => self.goto_input = Some(String::new()),
            Action::JumpForward | Action::JumpBack => self.jump_by(a == Action::JumpForward),
            Action::Slower | Action::Faster => {
                self.speed = next_speed(self.speed, a == Action::Faster);
                self.reanchor();
                self.status = Some(format!("speed {}", speed_label(self.speed)));
            }
            Action::Record => self.toggle_record(),
            Action::GovernorToggle => self.status = self.tweaks.governor_toggle(),
            Action::TweakMenu => self.status = self.tweaks.menu(),
            Action::TweakUndo => self.status = self.tweaks.undo(),
        }
        Effect::Redraw
    }

    /// Focus `p`; a zoomed view then shows `p` from its top.
    fn focus_on(&mut self, p: Pane) {
        if p != self.focus {
            self.zoom_scroll.reset();
        }
        self.focus = p;
    }

    /// `R`: starts recording the live stream to a new file in `record_dir`, or stops it.
    fn toggle_record(&mut self) {
        let History::Live(ring) = &self.history else {
            return;
        };
        self.status = Some(
            self.recording
                .toggle(&self.record_dir, ring.newest(), self.interval),
        );
    }

    /// Ends a recording on quit with a `stop` marker, so replay shows where it ended.
    pub fn stop_recording(&mut self) -> Option<String> {
        self.recording.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: f64, user: u64) -> Sample {
        let mut s = Sample::default();
        s.time.uptime_s = Some(t);
        s.cpu.cpus.push(crate::sample::CpuEntry {
            id: 0,
            online: true,
            times: Some(crate::sample::CpuTimes {
                user,
                idle: 1000 + (t as u64) * 100 - user,
                ..Default::default()
            }),
            ..Default::default()
        });
        s
    }

    #[test]
    fn ring_pause_and_step() {
        let mut app = App::new(Duration::from_secs(1), Duration::from_secs(3));
        let History::Live(ring) = &app.history else {
            panic!("live app has a ring")
        };
        assert_eq!(ring.capacity(), 3);
        for i in 0..5u64 {
            app.push_sample(sample(10.0 + i as f64, 10 * i));
        }
        assert_eq!(app.history.len(), 3);
        assert_eq!(app.history.first_index(), 1, "trimmed ring");
        assert_eq!(app.mode_label(), "LIVE");
        app.apply(Action::StepBack);
        assert!(app.paused);
        assert_eq!(app.view, Some(1));
        app.apply(Action::StepBack);
        assert_eq!(
            app.view,
            Some(1),
            "first entry of a trimmed ring has no predecessor"
        );
        // New samples keep arriving while paused; the view stays on the same sample.
        app.push_sample(sample(15.0, 50));
        assert_eq!(app.view, Some(1));
        assert!(app.mode_label().starts_with("HISTORY"));
        app.apply(Action::Latest);
        assert_eq!(app.view, None);
        assert!(!app.paused);
    }

    #[test]
    fn interval_steps_are_bounded() {
        let mut app = App::new(Duration::from_millis(250), Duration::from_secs(60));
        assert_eq!(app.apply(Action::IntervalDown), Effect::None);
        assert_eq!(app.apply(Action::IntervalUp), Effect::IntervalChanged);
        assert_eq!(app.interval, Duration::from_millis(500));
        let mut app = App::new(Duration::from_secs(60), Duration::from_secs(60));
        assert_eq!(app.apply(Action::IntervalUp), Effect::None);
    }
}
