//! The dashboard's state, made of parts that own their own: time travel (`timeline`), screen
//! preferences (`prefs`), the typed prompts (`prompt`), the findings judge (`judge`), the tweak
//! dialogs (`tweak_dialog`), the footer message (`status`) and what this run is (`session`).
//! `App` routes each key to the part it changes and passes a part what it needs of another.

use super::history::History;
use super::judge::Judge;
pub use super::keymap::Effect;
use super::keymap::{lookup, Action, Key};
use super::oom::OomLog;
use super::panes::Opts;
use super::prefs::Prefs;
use super::prompt::{GoTo, Prompt};
use super::remote_step::Polled;
use super::ring::{SampleRing, DEFAULT_BUDGET_BYTES};
use super::session::Session;
use super::status::Status;
use super::timeline::Timeline;
use super::tweak_dialog::TweakState;
use crate::findings::{Severity, Thresholds};
use crate::pane::Pane;
use crate::record::Recording;
use crate::sample::Sample;
use crate::source::processes::everyone::{Everyone, Want};
use ratatui::crossterm::event::KeyEvent;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct App {
    /// Where the screen is in time, and the sample in view.
    pub time: Timeline,
    /// Focus, zoom, sort, filters, idle rows, the lists over the dashboard.
    pub prefs: Prefs,
    /// The `/` and `b` prompts.
    pub prompt: Prompt,
    /// Thresholds, the live finding tracker and its raised findings.
    pub judge: Judge,
    /// Safe tweaks: context (None: disabled) and the open confirm/chooser/menu dialog.
    pub tweaks: TweakState,
    /// The footer's message.
    pub status: Status,
    /// Privilege, `--root`, perftop's own cost, the `R` recorder.
    pub session: Session,
    /// Every process, as the sampler last listed it while something showed it
    /// (`sync_want`); the sampler's switch for it (live only).
    pub everyone: Option<Everyone>,
    pub want: Option<Arc<Want>>,
    /// The episodes list (`E`).
    pub episodes: super::episodes::Episodes,
    /// Told once the first sample is on screen (live): the sampler holds the complete first
    /// sample of a big host until then, so its reader threads do not starve the first frame.
    pub first_frame: Option<std::sync::mpsc::Sender<()>>,
}

impl App {
    /// `keep` is how much history the ring holds (default ten minutes).
    pub fn new(interval: Duration, keep: Duration) -> App {
        let capacity = (keep.as_secs_f64() / interval.as_secs_f64().max(0.25)).ceil() as usize;
        App::with_history(
            History::Live(SampleRing::new(
                capacity.clamp(2, 100_000),
                DEFAULT_BUDGET_BYTES,
            )),
            interval,
        )
    }

    /// Replay of a recording, stopped on sample `at` (tweaks off, no recording).
    pub fn replay(rec: Recording, label: String, at: usize) -> App {
        let mut history = History::replay(rec, label);
        let oom = match &mut history {
            History::Replay(r) => OomLog::scan(&r.rec, &mut r.dec),
            History::Live(_) | History::Stream(_) => OomLog::default(),
        };
        let interval = history.typical_interval().unwrap_or(Duration::from_secs(1));
        let mut app = App::with_history(history, interval);
        app.time.oom = oom;
        app.session.privilege = "replay: tweaks off".into();
        app.time.paused = true;
        app.time.move_to(at, &app.judge, &mut app.status);
        app
    }

    fn with_history(history: History, interval: Duration) -> App {
        App {
            time: Timeline::new(history, interval),
            prefs: Prefs::default(),
            prompt: Prompt::default(),
            judge: Judge::default(),
            tweaks: Default::default(),
            status: Status::default(),
            session: Session::default(),
            everyone: None,
            want: None,
            episodes: Default::default(),
            first_frame: None,
        }
    }

    /// Whether something on screen shows every process: the zoomed Processes pane, a
    /// Processes filter (kept or being typed), or threads (`H`). Live only.
    pub fn full_list_wanted(&self) -> bool {
        let p = &self.prefs;
        let procs = Pane::Procs;
        let typing = self.prompt.filter.is_some() && p.focus == procs;
        !self.is_replay()
            && (p.threads
                || (p.zoom && p.focus == procs)
                || typing
                || !p.filters.get(procs).is_empty())
    }

    /// Tells the sampler whether to list every process (and threads); forgets the last list
    /// when nothing shows it, so a later zoom never shows a stale one.
    pub fn sync_want(&mut self) {
        let on = self.full_list_wanted();
        if let Some(w) = &self.want {
            w.set(on, self.prefs.threads);
        }
        if !on {
            self.everyone = None;
        }
    }

    /// The full list the panes show: wanted, and the screen on the newest live sample.
    fn shown_everyone(&self) -> Option<&Everyone> {
        let live_now = self.time.view.is_none();
        self.everyone
            .as_ref()
            .filter(|_| live_now && self.full_list_wanted())
    }

    pub fn is_replay(&self) -> bool {
        self.time.is_replay()
    }

    /// Each episode's (start ms, end ms, worst severity), for the timeline: the recording's
    /// once read (replay), or the live ones since start.
    pub fn episode_spans(&self) -> Vec<(i64, i64, Severity)> {
        if self.time.is_replay() {
            self.episodes
                .list()
                .iter()
                .map(|b| (b.start_ms, b.end_ms, b.severity))
                .collect()
        } else {
            self.time.episodes.spans()
        }
    }

    /// Findings thresholds from the config file (restarts the tracker; replay judges again).
    pub fn set_thresholds(&mut self, t: Thresholds) {
        self.judge.set_thresholds(t);
        self.time.rejudge(&self.judge, &mut self.status);
    }

    /// Adds a new live sample (and records it when `R` is on). While paused or stepping back
    /// the view stays where it is.
    pub fn push_sample(&mut self, s: Sample) {
        if self.is_replay() {
            return;
        }
        // The dashboard keeps running when a write fails; only the recording ends. A first
        // look without per-CPU detail (`Reader::first_look`) is a screen's, never recorded.
        if !s.cpu.detail_pending {
            if let Some(status) = self.session.recording.sample(&s) {
                self.status.set(status);
            }
        }
        self.time.push_live(s, &mut self.judge);
    }

    /// A remote host's sample with the frame it came in (`perftop ssh`): its history keeps the
    /// frame, so nothing is encoded again.
    pub fn push_streamed(&mut self, s: Box<crate::record::stream::Streamed>) {
        if let Some(status) = self.session.recording.sample(&s.sample) {
            self.status.set(status);
        }
        self.time
            .push_live(super::history::Incoming::Streamed(s), &mut self.judge);
    }

    /// Replay playback: moves to where the recording's clock has got to.
    pub fn on_tick(&mut self) -> Effect {
        self.time.on_tick(&self.judge, &mut self.status)
    }

    /// Takes the footer message off once its time is up (see `Status::expire`).
    pub fn expire_status(&mut self, now: Instant) -> bool {
        let showing = self.time.derived.is_some();
        self.status.expire(showing, now)
    }

    /// What the panes read: the preferences, the thresholds, the sparklines and OOM kills.
    pub fn pane_opts(&self) -> Opts<'_> {
        Opts {
            focus: self.prefs.focus,
            sort: self.prefs.sort,
            proc_sort: self.prefs.proc_sort,
            hide_idle: self.prefs.hide_idle,
            filters: &self.prefs.filters,
            typing: self.prompt.filter.as_deref(),
            thresholds: &self.judge.thresholds,
            oom: &self.time.oom,
            trends: &self.time.trends,
            everyone: self.shown_everyone(),
        }
    }

    pub fn key(&mut self, ev: KeyEvent) -> Effect {
        // Ctrl-C quits from anywhere: a prompt or a tweak dialog never types it as `c`.
        // (Nothing is applied before a dialog's `y`; a hold is released on the way out.)
        if super::line_edit::is_ctrl_c(&ev) {
            return Effect::Quit;
        }
        if self.prompt.filter.is_some() {
            return self
                .prompt
                .filter_key(ev, self.prefs.focus, &mut self.prefs.filters);
        }
        if self.prompt.goto.is_some() {
            return match self.prompt.goto_key(ev) {
                GoTo::Typed(e) => e,
                GoTo::Go(text) => {
                    self.time.goto_text(&text, &self.judge, &mut self.status);
                    Effect::Redraw
                }
            };
        }
        // A tweak preview says where the dirty thresholds move from what the kernel set last.
        self.tweaks.dirty = self.time.derived.as_ref().map(|d| d.dirty.clone());
        if self.tweaks.dialog.is_some() {
            self.status.text = self.tweaks.key(ev);
            if let Some(a) = self.tweaks.done.take() {
                self.note_action(&a);
            }
            return Effect::Redraw;
        }
        let Some(key) = Key::from_event(&ev) else {
            return Effect::None;
        };
        match lookup(key, self.prefs.screen(), self.is_replay()) {
            Some(a) => self.apply(a),
            None => match super::keymap::replay_refusal(key).filter(|_| self.is_replay()) {
                Some(why) => {
                    self.status.set(why);
                    Effect::Redraw
                }
                None => Effect::None,
            },
        }
    }

    /// Writes a tweak applied or undone into the recording started with `R`.
    /// The event loop's look at the remote tweak step in flight (`remote_step`): its seconds
    /// moved on the status line, or its answer delivered (a dialog opened, the read-back said,
    /// the change noted in a recording). True when the screen changed.
    pub fn poll_remote_step(&mut self, now: Instant) -> bool {
        let status = match self.tweaks.poll_remote(now) {
            None => return false,
            // Its seconds move; another message (a refusal) keeps its time on the footer.
            Some(Polled::Running(label)) => {
                let ours = self
                    .status
                    .text
                    .as_deref()
                    .is_none_or(|t| t.starts_with("running on "));
                if !ours || self.status.text.as_deref() == Some(label.as_str()) {
                    return false;
                }
                Some(label)
            }
            Some(Polled::Answered(status)) => status,
        };
        self.status.text = status;
        if let Some(a) = self.tweaks.done.take() {
            self.note_action(&a);
        }
        true
    }

    pub fn note_action(&mut self, a: &crate::record::Action) {
        if let Some(status) = self.session.recording.action(a) {
            self.status.set(status);
        }
    }

    pub fn apply(&mut self, a: Action) -> Effect {
        self.status.text = None;
        // Borrowed apart: a move over the history reads the judge and leaves a footer message.
        let (judge, status) = (&self.judge, &mut self.status);
        match a {
            Action::Quit => return Effect::Quit,
            Action::Help => self.prefs.toggle_help(),
            Action::Back => self.prefs.back(),
            Action::Repaint => return Effect::Repaint,
            Action::Suspend => return Effect::Suspend,
            Action::Pause if self.time.is_replay() => self.time.play_pause(status),
            Action::Pause => self.time.toggle_pause(judge, status),
            Action::FocusNext => self.prefs.focus_step(true),
            Action::FocusPrev => self.prefs.focus_step(false),
            Action::Focus(p) => self.prefs.focus_on(p),
            Action::Zoom => self.prefs.toggle_zoom(),
            Action::Scroll(m) if self.prefs.episodes_open && !self.prefs.help => {
                self.episodes.step(m)
            }
            Action::Scroll(m) => self.prefs.scroll(m),
            Action::Findings => self.prefs.toggle_findings(),
            Action::Episodes => self.toggle_episodes(),
            Action::EpisodeGo => {
                if let Some(t) = self.episodes.picked_start() {
                    self.prefs.episodes_open = false;
                    let i = self.time.history.seek(t);
                    self.time.jump_to(i, judge, status);
                }
            }
            Action::IntervalUp | Action::IntervalDown => {
                return match self.time.step_interval(a == Action::IntervalUp) {
                    Some(msg) => {
                        status.set(msg);
                        Effect::IntervalChanged
                    }
                    None => Effect::None,
                };
            }
            Action::Sort => status.set(self.prefs.next_sort()),
            Action::Filter => self
                .prompt
                .open_filter(self.prefs.filters.get(self.prefs.focus)),
            Action::HideIdle => status.set(self.prefs.toggle_idle()),
            Action::Threads => status.set(self.prefs.toggle_threads()),
            Action::StepBack | Action::Oldest | Action::StepForward | Action::Latest => {
                self.time.step(a, judge, status);
            }
            Action::GoTo => self.prompt.open_goto(),
            Action::JumpForward | Action::JumpBack => {
                self.time.jump_by(a == Action::JumpForward, judge, status)
            }
            Action::Slower | Action::Faster => {
                status.set(self.time.change_speed(a == Action::Faster))
            }
            Action::Record => self.toggle_record(),
            Action::GovernorToggle => status.text = self.tweaks.governor_toggle(),
            Action::TweakMenu => status.text = self.tweaks.menu(),
            Action::TweakUndo => status.text = self.tweaks.undo(),
        }
        Effect::Redraw
    }

    /// `E`: opens the episodes list (live: the episodes since start, folded in as each interval
    /// was judged), or closes it.
    fn toggle_episodes(&mut self) {
        self.prefs.episodes_open = !self.prefs.episodes_open;
        if !self.prefs.episodes_open || self.time.is_replay() {
            return;
        }
        let list = self.time.episodes.briefs();
        // The newest last, picked: live, what is happening now matters first.
        self.episodes.sel = list.len().saturating_sub(1);
        self.episodes.state = super::episodes::State::Ready(list);
    }

    /// `R`: starts recording the live stream to a new file in `record_dir`, or stops it.
    fn toggle_record(&mut self) {
        if self.time.is_replay() {
            return;
        }
        let s = &mut self.session;
        self.status.set(s.recording.toggle(
            &s.record_dir,
            self.time.history.newest(),
            self.time.interval,
            &self.judge.thresholds,
        ));
    }

    /// Ends a recording on quit with a `stop` marker, so replay shows where it ended.
    pub fn stop_recording(&mut self) -> Option<String> {
        self.session.recording.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::status::SHOW_FOR;

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
        let History::Live(ring) = &app.time.history else {
            panic!("live app has a ring")
        };
        assert_eq!(ring.capacity(), 3);
        for i in 0..5u64 {
            app.push_sample(sample(10.0 + i as f64, 10 * i));
        }
        assert_eq!(app.time.history.len(), 3);
        assert_eq!(app.time.history.first_index(), 1, "trimmed ring");
        assert_eq!(app.time.mode_label(), "LIVE");
        app.apply(Action::StepBack);
        assert!(app.time.paused);
        assert_eq!(app.time.view, Some(1));
        app.apply(Action::StepBack);
        assert_eq!(
            app.time.view,
            Some(1),
            "first entry of a trimmed ring has no predecessor"
        );
        // New samples keep arriving while paused; the view stays on the same sample.
        app.push_sample(sample(15.0, 50));
        assert_eq!(app.time.view, Some(1));
        assert!(app.time.mode_label().starts_with("HISTORY"));
        app.apply(Action::Latest);
        assert_eq!(app.time.view, None);
        assert!(!app.time.paused);
    }

    #[test]
    fn interval_steps_are_bounded() {
        let mut app = App::new(Duration::from_millis(250), Duration::from_secs(60));
        assert_eq!(app.apply(Action::IntervalDown), Effect::None);
        assert_eq!(app.apply(Action::IntervalUp), Effect::IntervalChanged);
        assert_eq!(app.time.interval, Duration::from_millis(500));
        let mut app = App::new(Duration::from_secs(60), Duration::from_secs(60));
        assert_eq!(app.apply(Action::IntervalUp), Effect::None);
    }

    #[test]
    fn a_message_goes_after_its_time_and_a_key_restarts_it() {
        let t0 = Instant::now();
        let mut app = App::new(Duration::from_secs(1), Duration::from_secs(60));
        // Without a sample on screen the message is all there is: it stays.
        app.status.text = Some("cannot show sample 3".into());
        assert!(!app.expire_status(t0));
        assert!(!app.expire_status(t0 + SHOW_FOR * 2));
        assert!(app.status.text.is_some());

        app.push_sample(crate::sample::Sample::default());
        assert!(app.time.derived.is_some());
        app.status.text = Some("sort: by name".into());
        assert!(!app.expire_status(t0));
        assert_eq!(app.status.deadline(), Some(t0 + SHOW_FOR));
        assert!(!app.expire_status(t0 + Duration::from_secs(4)));
        assert_eq!(app.status.text.as_deref(), Some("sort: by name"));
        // The same text again by a key: its time starts again.
        app.status.keyed(t0 + Duration::from_secs(4));
        assert!(!app.expire_status(t0 + Duration::from_secs(6)));
        assert!(app.expire_status(t0 + Duration::from_secs(9)));
        assert_eq!(app.status.text, None);
        assert_eq!(app.status.deadline(), None);
        // A new message from a sample (not a key) starts its own time when first seen.
        app.status.text = Some("recording stopped: disk full".into());
        assert!(!app.expire_status(t0 + Duration::from_secs(20)));
        assert!(!app.expire_status(t0 + Duration::from_secs(24)));
        assert!(app.expire_status(t0 + Duration::from_secs(25)));
    }
}
