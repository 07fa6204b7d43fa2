//! Editing one typed line (the `/` filter, the `b` time, the tweak value box) as a shell
//! does: Backspace deletes a character, Ctrl-U the whole line, Ctrl-W the word before the
//! cursor; a key with Ctrl or Alt is never typed as its letter.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Ctrl-C: quits from anywhere, a prompt or dialog included (the help says `^C quit`).
pub fn is_ctrl_c(ev: &KeyEvent) -> bool {
    ev.modifiers.contains(KeyModifiers::CONTROL) && matches!(ev.code, KeyCode::Char('c' | 'C'))
}

/// Applies an editing key to `text` (at most `max` characters); `false` when `ev` is not one
/// (Enter, Esc, arrows, an unbound control key: the caller decides).
pub fn edit(text: &mut String, ev: &KeyEvent, max: usize) -> bool {
    let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
    let alt = ev.modifiers.contains(KeyModifiers::ALT);
    match ev.code {
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Char('u' | 'U') if ctrl => text.clear(),
        KeyCode::Char('w' | 'W') if ctrl => {
            // The word before the end and the blanks after it, as a shell's Ctrl-W.
            let kept = text.trim_end().len();
            text.truncate(kept);
            let start = text.rfind(char::is_whitespace).map_or(0, |i| i + 1);
            text.truncate(start);
        }
        KeyCode::Char(c) if !ctrl && !alt && !c.is_control() => {
            if text.chars().count() < max {
                text.push(c);
            }
        }
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: char, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), m)
    }

    #[test]
    fn control_keys_edit_and_are_never_typed() {
        let mut t = String::from("cpu1 nvme");
        assert!(edit(&mut t, &key('w', KeyModifiers::CONTROL), 64));
        assert_eq!(t, "cpu1 ");
        assert!(edit(&mut t, &key('w', KeyModifiers::CONTROL), 64));
        assert_eq!(t, "");
        t.push_str("abc");
        assert!(edit(&mut t, &key('u', KeyModifiers::CONTROL), 64));
        assert_eq!(t, "");
        assert!(!edit(&mut t, &key('x', KeyModifiers::CONTROL), 64));
        assert!(!edit(&mut t, &key('b', KeyModifiers::ALT), 64));
        assert_eq!(t, "", "control and alt keys are not typed");
        assert!(edit(&mut t, &key('A', KeyModifiers::SHIFT), 2));
        assert!(edit(&mut t, &key('b', KeyModifiers::NONE), 2));
        assert!(edit(&mut t, &key('c', KeyModifiers::NONE), 2));
        assert_eq!(t, "Ab", "at most max characters");
        assert!(is_ctrl_c(&key('c', KeyModifiers::CONTROL)));
        assert!(!is_ctrl_c(&key('c', KeyModifiers::NONE)));
    }
}
