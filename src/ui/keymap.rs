//! The keymap as data: one table of (context, keys, action, description) drives key dispatch,
//! the footer hints and the `?` help screen, so they cannot disagree.

use crate::pane::{Pane, PANES};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Quit,
    Help,
    Pause,
    FocusNext,
    FocusPrev,
    Focus(Pane),
    Zoom,
    Back,
    IntervalUp,
    IntervalDown,
    Sort,
    Filter,
    HideIdle,
    StepBack,
    StepForward,
    Oldest,
    Latest,
    Repaint,
    Suspend,
    /// Safe tweaks (src/tweak): toggle the governor to/from performance, the knob menu, undo.
    GovernorToggle,
    TweakMenu,
    TweakUndo,
    /// Time travel (live pause ring and replay): go to a typed time, jump by the jump step.
    GoTo,
    JumpForward,
    JumpBack,
    /// Replay speed down / up.
    Slower,
    Faster,
    /// Start / stop recording the live stream to a file.
    Record,
}

/// Where a binding applies. `Any` bindings work everywhere, including the help screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Any,
    Dashboard,
    History,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Ctrl(char),
    Tab,
    BackTab,
    Enter,
    Esc,
    Home,
    End,
}

impl Key {
    pub fn label(self) -> String {
        match self {
            Key::Char(' ') => "space".into(),
            Key::Char(c) => c.to_string(),
            Key::Ctrl(c) => format!("^{}", c.to_ascii_uppercase()),
            Key::Tab => "Tab".into(),
            Key::BackTab => "S-Tab".into(),
            Key::Enter => "Enter".into(),
            Key::Esc => "Esc".into(),
            Key::Home => "Home".into(),
            Key::End => "End".into(),
        }
    }

    pub fn from_event(ev: &KeyEvent) -> Option<Key> {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        Some(match ev.code {
            KeyCode::Char(c) if ctrl => Key::Ctrl(c.to_ascii_lowercase()),
            KeyCode::Char(c) => Key::Char(c),
            KeyCode::Tab => Key::Tab,
            KeyCode::BackTab => Key::BackTab,
            KeyCode::Enter => Key::Enter,
            KeyCode::Esc => Key::Esc,
            KeyCode::Home => Key::Home,
            KeyCode::End => Key::End,
            _ => return None,
        })
    }
}

/// Which dashboards a binding exists in: the live one, replay, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Both,
    Live,
    Replay,
}

impl Mode {
    fn admits(self, replay: bool) -> bool {
        match self {
            Mode::Both => true,
            Mode::Live => !replay,
            Mode::Replay => replay,
        }
    }
}

pub struct Binding {
    pub context: Context,
    pub mode: Mode,
    pub keys: &'static [Key],
    pub action: Action,
    pub description: &'static str,
    /// Short label for the footer; `None` keeps the binding out of the footer.
    pub hint: Option<&'static str>,
}

const fn b(
    context: Context,
    keys: &'static [Key],
    action: Action,
    description: &'static str,
    hint: Option<&'static str>,
) -> Binding {
    Binding {
        context,
        mode: Mode::Both,
        keys,
        action,
        description,
        hint,
    }
}

/// Only in the live dashboard (tweaks, the sampling interval, recording).
const fn live(mut x: Binding) -> Binding {
    x.mode = Mode::Live;
    x
}

/// Only in replay.
const fn replay(mut x: Binding) -> Binding {
    x.mode = Mode::Replay;
    x
}

use Context::*;
use Key::*;

/// Every key perftop answers to, in the live dashboard and in replay.
pub const KEYMAP: &[Binding] = &[
    b(
        Any,
        &[Char('q'), Ctrl('c')],
        Action::Quit,
        "quit",
        Some("quit"),
    ),
    b(
        Any,
        &[Char('?')],
        Action::Help,
        "help (this screen)",
        Some("help"),
    ),
    b(
        Any,
        &[Esc],
        Action::Back,
        "close help / zoom / filter; never changes anything",
        None,
    ),
    b(
        Any,
        &[Ctrl('l')],
        Action::Repaint,
        "repaint the screen",
        None,
    ),
    b(
        Any,
        &[Ctrl('z')],
        Action::Suspend,
        "suspend to the shell (fg to resume)",
        None,
    ),
    live(b(
        Dashboard,
        &[Char(' ')],
        Action::Pause,
        "pause / resume live updates",
        Some("pause"),
    )),
    replay(b(
        Dashboard,
        &[Char(' ')],
        Action::Pause,
        "play / pause the recording",
        Some("play"),
    )),
    b(
        Dashboard,
        &[Tab],
        Action::FocusNext,
        "focus next pane",
        Some("pane"),
    ),
    b(
        Dashboard,
        &[BackTab],
        Action::FocusPrev,
        "focus previous pane",
        None,
    ),
    b(
        Dashboard,
        &[Char(Pane::Cpu.key())],
        Action::Focus(Pane::Cpu),
        Pane::Cpu.title(),
        None,
    ),
    b(
        Dashboard,
        &[Char(Pane::Numa.key())],
        Action::Focus(Pane::Numa),
        Pane::Numa.title(),
        None,
    ),
    b(
        Dashboard,
        &[Char(Pane::Huge.key())],
        Action::Focus(Pane::Huge),
        Pane::Huge.title(),
        None,
    ),
    b(
        Dashboard,
        &[Char(Pane::Dirty.key())],
        Action::Focus(Pane::Dirty),
        Pane::Dirty.title(),
        None,
    ),
    b(
        Dashboard,
        &[Char(Pane::Disks.key())],
        Action::Focus(Pane::Disks),
        Pane::Disks.title(),
        None,
    ),
    b(
        Dashboard,
        &[Char(Pane::Softirq.key())],
        Action::Focus(Pane::Softirq),
        Pane::Softirq.title(),
        None,
    ),
    b(
        Dashboard,
        &[Enter, Char('e')],
        Action::Zoom,
        "zoom the focused pane (detail view)",
        Some("zoom"),
    ),
    live(b(
        Dashboard,
        &[Char('+')],
        Action::IntervalUp,
        "longer sampling interval",
        None,
    )),
    live(b(
        Dashboard,
        &[Char('-')],
        Action::IntervalDown,
        "shorter sampling interval",
        None,
    )),
    b(
        Dashboard,
        &[Char('s')],
        Action::Sort,
        "cycle sort order of the focused table",
        Some("sort"),
    ),
    b(
        Dashboard,
        &[Char('/')],
        Action::Filter,
        "filter rows by name (Enter keeps, Esc clears)",
        Some("filter"),
    ),
    b(
        Dashboard,
        &[Char('h')],
        Action::HideIdle,
        "hide / show idle devices and CPUs",
        None,
    ),
    b(
        History,
        &[Char('t')],
        Action::StepBack,
        "step back one sample (pauses)",
        Some("back"),
    ),
    b(
        History,
        &[Char('T')],
        Action::StepForward,
        "step forward one sample",
        None,
    ),
    live(b(
        History,
        &[Home],
        Action::Oldest,
        "oldest sample in memory",
        None,
    )),
    replay(b(History, &[Home], Action::Oldest, "first sample", None)),
    live(b(History, &[End], Action::Latest, "back to live", None)),
    replay(b(History, &[End], Action::Latest, "last sample", None)),
    b(
        History,
        &[Char('b')],
        Action::GoTo,
        "go to a time: 14:05[:30] UTC, 10m ago, +5m, @unix",
        Some("go to"),
    ),
    b(
        History,
        &[Char('j')],
        Action::JumpForward,
        "jump forward by the jump step (--jump, default 1m)",
        None,
    ),
    b(
        History,
        &[Char('J')],
        Action::JumpBack,
        "jump back by the jump step",
        None,
    ),
    replay(b(
        History,
        &[Char('[')],
        Action::Slower,
        "play slower (0.25x .. 1024x)",
        None,
    )),
    replay(b(
        History,
        &[Char(']')],
        Action::Faster,
        "play faster",
        Some("speed"),
    )),
    live(b(
        Dashboard,
        &[Char('R')],
        Action::Record,
        "start / stop recording to a file (--record-dir)",
        Some("rec"),
    )),
    live(b(
        Dashboard,
        &[Char('g')],
        Action::GovernorToggle,
        "governor: performance <-> previous (preview, y applies)",
        None,
    )),
    live(b(
        Dashboard,
        &[Char('a')],
        Action::TweakMenu,
        "tweaks menu: knobs and why some are disabled",
        None,
    )),
    live(b(
        Dashboard,
        &[Char('u')],
        Action::TweakUndo,
        "undo the last tweak (preview, y restores)",
        None,
    )),
];

/// The action bound to `key` in a context (`Any` bindings match everywhere), live or replay.
pub fn lookup(key: Key, help_open: bool, replay: bool) -> Option<Action> {
    KEYMAP
        .iter()
        .filter(|bnd| bnd.mode.admits(replay))
        .filter(|bnd| !help_open || bnd.context == Any)
        .find(|bnd| bnd.keys.contains(&key))
        .map(|bnd| bnd.action)
}

/// `key label` pairs for the footer, in table order.
pub fn footer_hints(replay: bool) -> Vec<(String, &'static str)> {
    KEYMAP
        .iter()
        .filter(|bnd| bnd.mode.admits(replay))
        .filter_map(|bnd| Some((bnd.keys[0].label(), bnd.hint?)))
        .collect()
}

/// The help row of the focus keys, from the one pane list.
static FOCUS_HELP: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let names: Vec<&str> = PANES.iter().map(|p| p.title()).collect();
    format!("focus {}", names.join(", "))
});

/// Help screen rows: keys and description, in table order. Pairs (t/T, j/J, Home/End, ...) and
/// the six pane-focus keys share a row so the whole screen fits in 80x24.
pub fn help_rows(replay: bool) -> Vec<(String, &'static str)> {
    let mut rows: Vec<(String, &'static str)> = Vec::new();
    for bnd in KEYMAP.iter().filter(|bnd| bnd.mode.admits(replay)) {
        let keys: Vec<String> = bnd.keys.iter().map(|k| k.label()).collect();
        let joins_previous = matches!(
            bnd.action,
            Action::FocusPrev
                | Action::IntervalDown
                | Action::StepForward
                | Action::Latest
                | Action::JumpBack
                | Action::Faster
                | Action::TweakMenu
                | Action::TweakUndo
        ) || matches!(bnd.action, Action::Focus(p) if p != PANES[0]);
        if joins_previous {
            if let Some(last) = rows.last_mut() {
                last.0.push(' ');
                last.0.push_str(&keys.join(" "));
            }
            continue;
        }
        let description = match bnd.action {
            Action::FocusNext => "focus next / previous pane",
            Action::Focus(_) => FOCUS_HELP.as_str(),
            Action::IntervalUp => "longer / shorter sampling interval",
            Action::StepBack => "step back / forward one sample (pauses)",
            Action::Oldest if replay => "first / last sample",
            Action::Oldest => "oldest sample in memory / back to live",
            Action::JumpForward => "jump forward / back by the jump step (--jump, default 1m)",
            Action::Slower => "play slower / faster (0.25x .. 1024x)",
            Action::GovernorToggle => "tweaks: governor toggle, menu, undo (y applies)",
            _ => bnd.description,
        };
        rows.push((keys.join(" "), description));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_bound_once_per_context() {
        for replay in [false, true] {
            let mut seen: Vec<(Key, bool)> = Vec::new();
            for bnd in KEYMAP.iter().filter(|b| b.mode.admits(replay)) {
                for &k in bnd.keys {
                    let any = bnd.context == Any;
                    assert!(!seen.contains(&(k, any)), "{k:?} bound twice");
                    seen.push((k, any));
                }
            }
        }
    }

    #[test]
    fn live_only_and_replay_only_keys() {
        assert_eq!(lookup(Char('R'), false, false), Some(Action::Record));
        assert_eq!(
            lookup(Char('R'), false, true),
            None,
            "no recording a replay"
        );
        assert_eq!(lookup(Char('g'), false, true), None, "no tweaks in replay");
        assert_eq!(lookup(Char(']'), false, true), Some(Action::Faster));
        assert_eq!(lookup(Char(']'), false, false), None);
        assert_eq!(lookup(Char('b'), false, false), Some(Action::GoTo));
        assert_eq!(lookup(Char('J'), false, true), Some(Action::JumpBack));
    }

    #[test]
    fn help_fits_80x24_in_both_modes() {
        for replay in [false, true] {
            let rows = help_rows(replay);
            // Border, footnote and blank margin: 4 rows of the 24.
            assert!(rows.len() + 4 <= 24, "{} help rows", rows.len());
            assert!(rows.iter().any(|(k, _)| k == "t T"));
            assert!(rows.iter().any(|(k, _)| k == "j J"));
        }
        assert!(help_rows(true).iter().any(|(k, _)| k == "[ ]"));
        assert!(help_rows(false).iter().any(|(k, _)| k == "g a u"));
        assert!(!help_rows(true).iter().any(|(k, _)| k == "g a u"));
    }

    #[test]
    fn help_only_answers_global_keys() {
        assert_eq!(lookup(Char('q'), true, false), Some(Action::Quit));
        assert_eq!(lookup(Char(' '), true, false), None);
        assert_eq!(lookup(Enter, false, false), Some(Action::Zoom));
        assert_eq!(lookup(Char('e'), false, true), Some(Action::Zoom));
    }
}
