//! The keymap as data: one table of (context, keys, action, description) drives key dispatch,
//! the footer hints and the `?` help screen, so they cannot disagree.

pub use super::help::help_rows;
use super::scroll::Move;
use crate::pane::Pane;
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
    /// Scroll the zoomed pane or the findings list.
    Scroll(Move),
    /// Open / close the list of every finding.
    Findings,
}

/// Where a binding applies. `Any` bindings work everywhere, including the help screen;
/// `Scroll` bindings only where something scrolls (a zoomed pane, the findings list), and there
/// they come first (`Home`/`End` scroll a zoomed pane rather than move in time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Any,
    Dashboard,
    History,
    Scroll,
}

/// What is on screen, for `lookup`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Dashboard,
    /// One pane zoomed: the scroll keys scroll it.
    Zoomed,
    /// The findings list: scroll keys, `f`/Esc close it, the global keys.
    Findings,
    /// The help screen: only the global keys.
    Help,
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
    Up,
    Down,
    PageUp,
    PageDown,
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
            Key::Up => "Up".into(),
            Key::Down => "Down".into(),
            Key::PageUp => "PgUp".into(),
            Key::PageDown => "PgDn".into(),
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
            KeyCode::Up => Key::Up,
            KeyCode::Down => Key::Down,
            KeyCode::PageUp => Key::PageUp,
            KeyCode::PageDown => Key::PageDown,
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
    pub fn admits(self, replay: bool) -> bool {
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
    /// Its row on the `?` screen.
    pub help: Help,
}

/// A binding's row on the `?` screen, which must fit 80x24: pairs (t/T, j/J, Home/End) and the
/// pane keys share a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Help {
    /// A row of its own, saying `description`.
    Own,
    /// A row of its own saying this, for itself and the bindings that join it.
    Row(&'static str),
    /// Its keys join the row before it.
    Joins,
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
        help: Help::Own,
    }
}

/// A help row shared with the bindings that `joins` it.
const fn row(text: &'static str, mut x: Binding) -> Binding {
    x.help = Help::Row(text);
    x
}

/// Keys that join the help row before them.
const fn joins(mut x: Binding) -> Binding {
    x.help = Help::Joins;
    x
}

/// The help row of the pane keys (a test keeps the count equal to `PANES`).
pub const FOCUS_ROW: &str = "focus a pane (8 numbered on their titles)";

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

mod table;

pub use table::KEYMAP;
use Context::{Any, Scroll};

/// The action bound to `key` on `screen` (`Any` bindings match everywhere), live or replay.
pub fn lookup(key: Key, screen: Screen, replay: bool) -> Option<Action> {
    let on_screen = |bnd: &&Binding| match screen {
        Screen::Help => bnd.context == Any,
        Screen::Findings => matches!(bnd.context, Any | Scroll) || bnd.action == Action::Findings,
        Screen::Zoomed => true,
        Screen::Dashboard => bnd.context != Scroll,
    };
    let candidates = KEYMAP
        .iter()
        .filter(|bnd| bnd.mode.admits(replay))
        .filter(on_screen)
        .filter(|bnd| bnd.keys.contains(&key));
    // Where something scrolls, the scroll keys win over the history keys they share.
    candidates
        .clone()
        .find(|bnd| bnd.context == Scroll)
        .or_else(|| candidates.clone().next())
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

#[cfg(test)]
mod tests {
    use super::*;
    use Context::{Dashboard, History};
    use Key::*;

    #[test]
    fn every_key_is_bound_once_per_context() {
        // Dashboard and History bindings are active together, so they count as one context;
        // Scroll bindings take precedence where they apply, Any ones apply everywhere.
        for replay in [false, true] {
            let mut seen: Vec<(Key, u8)> = Vec::new();
            for bnd in KEYMAP.iter().filter(|b| b.mode.admits(replay)) {
                for &k in bnd.keys {
                    let class = match bnd.context {
                        Any => 0,
                        Dashboard | History => 1,
                        Scroll => 2,
                    };
                    assert!(!seen.contains(&(k, class)), "{k:?} bound twice");
                    seen.push((k, class));
                }
            }
        }
    }

    #[test]
    fn scroll_keys_only_where_something_scrolls() {
        assert_eq!(lookup(Home, Screen::Dashboard, false), Some(Action::Oldest));
        assert_eq!(
            lookup(Home, Screen::Zoomed, false),
            Some(Action::Scroll(Move::Top)),
            "zoomed, Home scrolls the pane"
        );
        assert_eq!(
            lookup(End, Screen::Zoomed, true),
            Some(Action::Scroll(Move::Bottom))
        );
        assert_eq!(lookup(Down, Screen::Dashboard, false), None);
        assert_eq!(
            lookup(PageDown, Screen::Findings, true),
            Some(Action::Scroll(Move::PageDown))
        );
        assert_eq!(
            lookup(Char('f'), Screen::Findings, false),
            Some(Action::Findings)
        );
        assert_eq!(
            lookup(Char('f'), Screen::Dashboard, true),
            Some(Action::Findings)
        );
        assert_eq!(
            lookup(Char('t'), Screen::Findings, false),
            None,
            "the list takes only its own keys"
        );
        assert_eq!(
            lookup(Char('t'), Screen::Zoomed, false),
            Some(Action::StepBack)
        );
        assert_eq!(lookup(Esc, Screen::Findings, false), Some(Action::Back));
        assert_eq!(lookup(Up, Screen::Help, false), None);
    }

    #[test]
    fn live_only_and_replay_only_keys() {
        assert_eq!(
            lookup(Char('R'), Screen::Dashboard, false),
            Some(Action::Record)
        );
        assert_eq!(
            lookup(Char('R'), Screen::Dashboard, true),
            None,
            "no recording a replay"
        );
        assert_eq!(
            lookup(Char('g'), Screen::Dashboard, true),
            None,
            "no tweaks in replay"
        );
        assert_eq!(
            lookup(Char(']'), Screen::Dashboard, true),
            Some(Action::Faster)
        );
        assert_eq!(lookup(Char(']'), Screen::Dashboard, false), None);
        assert_eq!(
            lookup(Char('b'), Screen::Dashboard, false),
            Some(Action::GoTo)
        );
        assert_eq!(
            lookup(Char('J'), Screen::Dashboard, true),
            Some(Action::JumpBack)
        );
    }

    #[test]
    fn help_only_answers_global_keys() {
        assert_eq!(lookup(Char('q'), Screen::Help, false), Some(Action::Quit));
        assert_eq!(lookup(Char(' '), Screen::Help, false), None);
        assert_eq!(lookup(Enter, Screen::Dashboard, false), Some(Action::Zoom));
        assert_eq!(
            lookup(Char('e'), Screen::Dashboard, true),
            Some(Action::Zoom)
        );
    }
}
