//! The keymap as data: one table of (context, keys, action, description) drives key dispatch,
//! the footer hints and the `?` help screen, so they cannot disagree.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Quit,
    Help,
    Pause,
    FocusNext,
    FocusPrev,
    Focus(usize),
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

pub struct Binding {
    pub context: Context,
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
        keys,
        action,
        description,
        hint,
    }
}

use Context::*;
use Key::*;

/// Every key perftop answers to. g, a, u are the tweak keys; R, b, j and J are kept free for recording.
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
    b(
        Dashboard,
        &[Char(' ')],
        Action::Pause,
        "pause / resume live updates",
        Some("pause"),
    ),
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
        &[Char('1')],
        Action::Focus(0),
        "focus CPU power",
        None,
    ),
    b(
        Dashboard,
        &[Char('2')],
        Action::Focus(1),
        "focus NUMA memory",
        None,
    ),
    b(
        Dashboard,
        &[Char('3')],
        Action::Focus(2),
        "focus HugePages / THP",
        None,
    ),
    b(
        Dashboard,
        &[Char('4')],
        Action::Focus(3),
        "focus dirty / writeback",
        None,
    ),
    b(
        Dashboard,
        &[Char('5')],
        Action::Focus(4),
        "focus disks",
        None,
    ),
    b(
        Dashboard,
        &[Char('6')],
        Action::Focus(5),
        "focus softirq / NIC queues",
        None,
    ),
    b(
        Dashboard,
        &[Enter, Char('e')],
        Action::Zoom,
        "zoom the focused pane (detail view)",
        Some("zoom"),
    ),
    b(
        Dashboard,
        &[Char('+')],
        Action::IntervalUp,
        "longer sampling interval",
        None,
    ),
    b(
        Dashboard,
        &[Char('-')],
        Action::IntervalDown,
        "shorter sampling interval",
        None,
    ),
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
    b(
        History,
        &[Home],
        Action::Oldest,
        "oldest sample in memory",
        None,
    ),
    b(History, &[End], Action::Latest, "back to live", None),
    b(
        Dashboard,
        &[Char('g')],
        Action::GovernorToggle,
        "governor: performance <-> previous (preview, y applies)",
        None,
    ),
    b(
        Dashboard,
        &[Char('a')],
        Action::TweakMenu,
        "tweaks menu: knobs and why some are disabled",
        None,
    ),
    b(
        Dashboard,
        &[Char('u')],
        Action::TweakUndo,
        "undo the last tweak (preview, y restores)",
        None,
    ),
];

/// The action bound to `key` in a context (`Any` bindings match everywhere).
pub fn lookup(key: Key, help_open: bool) -> Option<Action> {
    KEYMAP
        .iter()
        .filter(|bnd| !help_open || bnd.context == Any)
        .find(|bnd| bnd.keys.contains(&key))
        .map(|bnd| bnd.action)
}

/// `key label` pairs for the footer, in table order.
pub fn footer_hints() -> Vec<(String, &'static str)> {
    KEYMAP
        .iter()
        .filter_map(|bnd| Some((bnd.keys[0].label(), bnd.hint?)))
        .collect()
}

/// Help screen rows: keys and description, in table order. The six pane-focus keys share one
/// row so the whole screen fits in 80x24.
pub fn help_rows() -> Vec<(String, &'static str)> {
    let mut rows: Vec<(String, &'static str)> = Vec::new();
    for bnd in KEYMAP {
        let keys: Vec<String> = bnd.keys.iter().map(|k| k.label()).collect();
        if matches!(bnd.action, Action::TweakMenu | Action::TweakUndo) {
            continue;
        }
        if bnd.action == Action::GovernorToggle {
            rows.push((
                "g a u".into(),
                "tweaks: governor toggle, menu, undo (y applies)",
            ));
            continue;
        }
        if let Action::Focus(i) = bnd.action {
            if i > 0 {
                if let Some(last) = rows.last_mut() {
                    last.0.push_str(&keys.join(" "));
                }
                continue;
            }
            rows.push((
                keys.join(" "),
                "focus CPU, NUMA, HugePages, Dirty, Disks, Softirq",
            ));
            continue;
        }
        rows.push((keys.join(" "), bnd.description));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_bound_once_per_context() {
        let mut seen: Vec<(Key, bool)> = Vec::new();
        for bnd in KEYMAP {
            for &k in bnd.keys {
                let any = bnd.context == Any;
                assert!(!seen.contains(&(k, any)), "{k:?} bound twice");
                seen.push((k, any));
            }
        }
    }

    #[test]
    fn reserved_keys_stay_free() {
        for c in ['R', 'b', 'j', 'J'] {
            assert_eq!(lookup(Char(c), false), None, "{c} is reserved");
        }
    }

    #[test]
    fn help_only_answers_global_keys() {
        assert_eq!(lookup(Char('q'), true), Some(Action::Quit));
        assert_eq!(lookup(Char(' '), true), None);
        assert_eq!(lookup(Enter, false), Some(Action::Zoom));
        assert_eq!(lookup(Char('e'), false), Some(Action::Zoom));
    }
}
