//! TUI state: the in-memory sample ring (pause and step back without a recorder), the derived
//! view of the selected sample, focus/zoom/sort/filter, and how each key action changes them.

use super::keymap::{lookup, Action, Key};
use crate::derive::{derive_with, Derived};
use crate::findings::{ActiveFinding, FindingTracker, Thresholds};
use crate::sample::Sample;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use std::collections::VecDeque;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaneId {
    Cpu,
    Numa,
    Huge,
    Dirty,
    Disks,
    Softirq,
}

pub const PANES: [PaneId; 6] = [
    PaneId::Cpu,
    PaneId::Numa,
    PaneId::Huge,
    PaneId::Dirty,
    PaneId::Disks,
    PaneId::Softirq,
];

impl PaneId {
    pub fn title(self) -> &'static str {
        match self {
            PaneId::Cpu => "CPU power",
            PaneId::Numa => "NUMA",
            PaneId::Huge => "HugePages/THP",
            PaneId::Dirty => "Dirty",
            PaneId::Disks => "Disks",
            PaneId::Softirq => "Softirq/NIC",
        }
    }

    pub fn index(self) -> usize {
        PANES.iter().position(|p| *p == self).unwrap_or(0)
    }
}

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

/// A few headline values per live sample, for sparklines on large terminals.
#[derive(Debug, Clone, Copy, Default)]
pub struct TrendPoint {
    pub busy_pct: Option<f64>,
    pub dirty_kb: Option<u64>,
    pub disk_aqu: Option<f64>,
    pub softirq_pct: Option<f64>,
}

pub const INTERVALS_MS: [u64; 9] = [250, 500, 1000, 2000, 3000, 5000, 10_000, 30_000, 60_000];

pub struct App {
    pub history: super::ring::SampleRing,
    /// The ring lost its oldest samples, so its first entry has no predecessor to derive from.
    pub trimmed: bool,
    /// Index into `history` while stepping back; `None` follows the newest sample.
    pub view: Option<usize>,
    pub paused: bool,
    pub derived: Option<Derived>,
    pub trends: VecDeque<TrendPoint>,
    pub focus: PaneId,
    pub zoom: bool,
    pub help: bool,
    pub interval: Duration,
    pub sort: SortKey,
    pub filter: String,
    pub filter_editing: bool,
    pub hide_idle: bool,
    pub status: Option<String>,
    /// Shown in the header: `root` or `user` (tweaks need root), and `--root DIR` when used.
    pub privilege: String,
    pub root_label: Option<String>,
    /// Findings over the live sequence (raised after 3 samples, cleared with hysteresis).
    pub tracker: FindingTracker,
    pub active_findings: Vec<ActiveFinding>,
    pub thresholds: Thresholds,
    /// perftop's own CPU% and RSS (live mode only).
    pub self_cost: super::selfcost::SelfCost,
    /// Safe tweaks: context (None: disabled) and the open confirm/chooser/menu dialog.
    pub tweaks: crate::tweak::ui::TweakState,
}

impl App {
    /// `keep` is how much history the ring holds (default ten minutes).
    pub fn new(interval: Duration, keep: Duration) -> App {
        let capacity = (keep.as_secs_f64() / interval.as_secs_f64().max(0.25)).ceil() as usize;
        App {
            history: super::ring::SampleRing::new(
                capacity.clamp(2, 100_000),
                super::ring::DEFAULT_BUDGET_BYTES,
            ),
            trimmed: false,
            view: None,
            paused: false,
            derived: None,
            trends: VecDeque::new(),
            focus: PaneId::Cpu,
            zoom: false,
            help: false,
            interval,
            sort: SortKey::Load,
            filter: String::new(),
            filter_editing: false,
            hide_idle: true,
            status: None,
            privilege: String::new(),
            root_label: None,
            tracker: FindingTracker::new(Thresholds::default()),
            active_findings: Vec::new(),
            thresholds: Thresholds::default(),
            self_cost: super::selfcost::SelfCost::default(),
            tweaks: Default::default(),
        }
    }

    /// Findings thresholds from the config file (restarts the tracker).
    pub fn set_thresholds(&mut self, t: Thresholds) {
        self.tracker = FindingTracker::new(t.clone());
        self.thresholds = t;
    }

    /// Adds a new sample. While paused or stepping back the view stays where it is.
    pub fn push_sample(&mut self, s: Sample) {
        let prev = self.history.take_newest();
        let dropped = self.history.push(s);
        if dropped > 0 {
            self.trimmed = true;
            if let Some(v) = self.view.as_mut() {
                *v = v.saturating_sub(dropped).max(1);
            }
        }
        let Some(cur) = self.history.newest() else {
            return;
        };
        // The tracker follows the live sequence even while the view is paused on the past.
        let latest = derive_with(prev.as_ref(), cur, &self.thresholds);
        self.active_findings = self.tracker.update(&latest);
        if !self.paused {
            self.view = None;
            self.derived = Some(latest);
            let d = self.derived.as_ref();
            self.trends.push_back(TrendPoint {
                busy_pct: d.and_then(|d| d.host.busy_pct),
                dirty_kb: d.and_then(|d| d.dirty.dirty_kb),
                disk_aqu: d.and_then(|d| {
                    d.disks
                        .iter()
                        .filter(|x| !x.partition)
                        .filter_map(|x| x.aqu_sz)
                        .reduce(f64::max)
                }),
                softirq_pct: d.and_then(|d| {
                    d.softirq_cpus
                        .iter()
                        .filter_map(|c| c.soft_pct)
                        .reduce(f64::max)
                }),
            });
            while self.trends.len() > 512 {
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

    fn oldest_index(&self) -> usize {
        usize::from(self.trimmed)
    }

    fn recompute(&mut self) {
        let Some(i) = self.view_index() else {
            self.derived = None;
            return;
        };
        let prev = i.checked_sub(1).and_then(|p| self.history.get(p));
        self.derived = self
            .history
            .get(i)
            .map(|cur| derive_with(prev.as_ref(), &cur, &self.thresholds));
    }

    /// "LIVE", "PAUSED" or "HISTORY -12s".
    pub fn mode_label(&self) -> String {
        match (self.view, self.paused) {
            (Some(i), _) if i + 1 < self.history.len() => {
                let back = (self.history.len() - 1 - i) as f64 * self.interval.as_secs_f64();
                format!("HISTORY -{}", crate::text::fmt::duration(Some(back)))
            }
            (_, true) => "PAUSED".into(),
            _ => "LIVE".into(),
        }
    }

    pub fn key(&mut self, ev: KeyEvent) -> Effect {
        if self.filter_editing {
            return self.filter_key(ev);
        }
        if self.tweaks.dialog.is_some() {
            self.status = self.tweaks.key(ev);
            return Effect::Redraw;
        }
        let Some(key) = Key::from_event(&ev) else {
            return Effect::None;
        };
        match lookup(key, self.help) {
            Some(a) => self.apply(a),
            None => Effect::None,
        }
    }

    fn filter_key(&mut self, ev: KeyEvent) -> Effect {
        match ev.code {
            KeyCode::Enter => self.filter_editing = false,
            KeyCode::Esc => {
                self.filter_editing = false;
                self.filter.clear();
            }
            KeyCode::Backspace => {
                self.filter.pop();
            }
            KeyCode::Char(c) if !c.is_control() && self.filter.len() < 64 => self.filter.push(c),
            _ => return Effect::None,
        }
        Effect::Redraw
    }

    pub fn apply(&mut self, a: Action) -> Effect {
        self.status = None;
        match a {
            Action::Quit => return Effect::Quit,
            Action::Help => self.help = !self.help,
            Action::Back => {
                if self.help {
                    self.help = false;
                } else if self.zoom {
                    self.zoom = false;
                } else if !self.filter.is_empty() {
                    self.filter.clear();
                }
            }
            Action::Repaint => return Effect::Repaint,
            Action::Suspend => return Effect::Suspend,
            Action::Pause => {
                self.paused = !self.paused;
                if !self.paused {
                    self.view = None;
                    self.recompute();
                }
            }
            Action::FocusNext => self.focus = PANES[(self.focus.index() + 1) % PANES.len()],
            Action::FocusPrev => {
                self.focus = PANES[(self.focus.index() + PANES.len() - 1) % PANES.len()]
            }
            Action::Focus(i) => {
                if let Some(p) = PANES.get(i) {
                    self.focus = *p;
                }
            }
            Action::Zoom => self.zoom = !self.zoom,
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
            Action::Filter => self.filter_editing = true,
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
            Action::GovernorToggle => self.status = self.tweaks.governor_toggle(),
            Action::TweakMenu => self.status = self.tweaks.menu(),
            Action::TweakUndo => self.status = self.tweaks.undo(),
        }
        Effect::Redraw
    }

    fn step(&mut self, a: Action) {
        let Some(cur) = self.view_index() else { return };
        let last = self.history.len() - 1;
        let target = match a {
            Action::StepBack => cur.saturating_sub(1).max(self.oldest_index()),
            Action::Oldest => self.oldest_index(),
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
        assert_eq!(app.history.capacity(), 3);
        for i in 0..5u64 {
            app.push_sample(sample(10.0 + i as f64, 10 * i));
        }
        assert_eq!(app.history.len(), 3);
        assert!(app.trimmed);
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
