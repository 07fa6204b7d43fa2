//! What a key binding is: the actions, keys, contexts and screens, and the const helpers the
//! table (`table.rs`) is written with, each binding carrying its footer hint and help row.

use crate::pane::Pane;
use crate::ui::scroll::Move;
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
    /// `H`: threads in the processes' full list.
    Threads,
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
    /// Open / close the episodes list (`ui::episodes`).
    Episodes,
    /// In the episodes list: go to the picked episode's start.
    EpisodeGo,
}

/// Where a binding applies. `Any` bindings work everywhere, including the help screen;
/// `Scroll` bindings only where something scrolls (a zoomed pane, the findings list, the help
/// screen), and there
/// they come first (`Home`/`End` scroll a zoomed pane rather than move in time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Any,
    Dashboard,
    History,
    Scroll,
    /// Only while the help screen is open (`j`/`k` scroll it; elsewhere `j` jumps in time).
    Help,
    /// Only while the episodes list is open (Enter goes to the picked one).
    EpisodeList,
}

/// What is on screen, for `lookup`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Dashboard,
    /// One pane zoomed: the scroll keys scroll it.
    Zoomed,
    /// The findings list: scroll keys, `f`/Esc close it, the global keys.
    Findings,
    /// The episodes list: the scroll keys move the pick, Enter goes there, `E`/Esc close it.
    Episodes,
    /// The help screen: the global keys and the scroll keys (and `j`/`k`).
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
    /// No keys of its own on the screen: the row before names them in its text (`j k` on the
    /// scroll row, which would otherwise read as if `j` scrolled a zoomed pane).
    Told,
}

pub(super) const fn b(
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
pub(super) const fn row(text: &'static str, mut x: Binding) -> Binding {
    x.help = Help::Row(text);
    x
}

/// Keys that the help row before them names in its text.
pub(super) const fn told(mut x: Binding) -> Binding {
    x.help = Help::Told;
    x
}

/// Keys that join the help row before them.
pub(super) const fn joins(mut x: Binding) -> Binding {
    x.help = Help::Joins;
    x
}

/// The help row of the pane keys (a test keeps the count equal to `PANES`).
pub const FOCUS_ROW: &str = "focus a pane (8 numbered on their titles)";

/// Only in the live dashboard (tweaks, the sampling interval, recording).
pub(super) const fn live(mut x: Binding) -> Binding {
    x.mode = Mode::Live;
    x
}

/// Only in replay.
pub(super) const fn replay(mut x: Binding) -> Binding {
    x.mode = Mode::Replay;
    x
}
