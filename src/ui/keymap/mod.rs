//! The keymap as data: one table of (context, keys, action, description) drives key dispatch,
//! the footer hints and the `?` help screen, so they cannot disagree.

mod binding;
mod table;

pub use binding::*;
pub use table::KEYMAP;
use Context::{Any, EpisodeList, Help as HelpOnly, Scroll};

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

/// The action bound to `key` on `screen` (`Any` bindings match everywhere), live or replay.
pub fn lookup(key: Key, screen: Screen, replay: bool) -> Option<Action> {
    let on_screen = |bnd: &&Binding| match screen {
        Screen::Help => matches!(bnd.context, Any | Scroll | HelpOnly),
        Screen::Findings => matches!(bnd.context, Any | Scroll) || bnd.action == Action::Findings,
        Screen::Episodes => {
            matches!(bnd.context, Any | Scroll | EpisodeList) || bnd.action == Action::Episodes
        }
        Screen::Zoomed => !matches!(bnd.context, HelpOnly | EpisodeList),
        Screen::Dashboard => !matches!(bnd.context, Scroll | HelpOnly | EpisodeList),
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

/// Why a live-only key does nothing in a replay (`None` for a key that is not live-only), so
/// that `a`, `g`, `R`, `+`, `-` are never silently ignored there.
pub fn replay_refusal(key: Key) -> Option<String> {
    let bnd = KEYMAP
        .iter()
        .find(|b| b.mode == Mode::Live && b.keys.contains(&key))?;
    let why = match bnd.action {
        Action::GovernorToggle | Action::TweakMenu | Action::TweakUndo => {
            "a replay changes nothing on this host; tweak it live (perftop) or with perftop tweak"
        }
        Action::IntervalUp | Action::IntervalDown => {
            "a replay's interval is the recording's; ] and [ change the playback speed"
        }
        Action::Record => "a replay is already a recording; perftop cut saves a window of it",
        _ => "live only",
    };
    Some(format!(
        "{} ({}): not in a replay: {why}",
        key.label(),
        bnd.description
    ))
}

/// `key label` pairs for the footer, in table order.
/// In a replay the moves through time come right after the keys that work everywhere: an
/// 80-column footer has room for `t fwd T back` before the pane keys.
pub fn footer_hints(replay: bool) -> Vec<(String, &'static str)> {
    let mut v: Vec<&Binding> = KEYMAP
        .iter()
        .filter(|bnd| bnd.mode.admits(replay))
        .filter(|bnd| bnd.hint.is_some())
        .collect();
    if replay {
        v.sort_by_key(|bnd| match bnd.context {
            Any => 0,
            Context::History => 1,
            _ => 2,
        });
    }
    v.into_iter()
        .filter_map(|bnd| Some((bnd.keys[0].label(), bnd.hint?)))
        .collect()
}

/// Help screen rows: keys and description, in table order; each binding says whether it has a
/// row of its own or joins the one before (`keymap::Help`), so the whole screen fits in 80x24.
pub fn help_rows(replay: bool) -> Vec<(String, &'static str)> {
    let mut rows: Vec<(String, &'static str)> = Vec::new();
    for bnd in KEYMAP.iter().filter(|bnd| bnd.mode.admits(replay)) {
        let keys: Vec<String> = bnd.keys.iter().map(|k| k.label()).collect();
        match (bnd.help, rows.last_mut()) {
            (Help::Joins, Some(last)) => {
                last.0.push(' ');
                last.0.push_str(&keys.join(" "));
            }
            (Help::Told, _) => {}
            (Help::Row(text), _) => rows.push((keys.join(" "), text)),
            (Help::Own | Help::Joins, _) => rows.push((keys.join(" "), bnd.description)),
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::scroll::Move;
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
                        HelpOnly => 3,
                        EpisodeList => 4,
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
            Some(Action::StepForward)
        );
        assert_eq!(lookup(Esc, Screen::Findings, false), Some(Action::Back));
        // The help screen scrolls (it is taller than 60x20), with j/k too; elsewhere j jumps.
        assert_eq!(
            lookup(Up, Screen::Help, false),
            Some(Action::Scroll(Move::Up))
        );
        assert_eq!(
            lookup(Char('j'), Screen::Help, true),
            Some(Action::Scroll(Move::Down))
        );
        assert_eq!(
            lookup(Char('k'), Screen::Help, false),
            Some(Action::Scroll(Move::Up))
        );
        assert_eq!(
            lookup(Char('j'), Screen::Zoomed, false),
            Some(Action::JumpForward)
        );
        assert_eq!(lookup(Char('k'), Screen::Dashboard, false), None);
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
