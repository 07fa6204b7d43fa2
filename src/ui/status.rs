//! The footer's message (`app.status`), which every part's keys and moves may leave: how long it
//! stays and how it fits. A message stays
//! `SHOW_FOR` after it appears (or after the key that left it there), then goes, so the key
//! hints come back; one too long for the row is wrapped onto a second row instead of being cut.
//! Times come from the caller (the event loop's clock), so tests move time without sleeping.

use std::time::{Duration, Instant};

/// How long a message stays on the footer.
pub const SHOW_FOR: Duration = Duration::from_secs(5);

/// Rows a message may take at most (the last one cut with `~` if it is longer still).
pub const MAX_ROWS: usize = 2;

/// The message on screen and when its time started.
#[derive(Debug, Default)]
struct StatusAge {
    shown: Option<(String, Instant)>,
}

impl StatusAge {
    /// After a key: the message the key left (new or the same text again) starts its time.
    fn key(&mut self, status: Option<&String>, now: Instant) {
        self.shown = status.map(|s| (s.clone(), now));
    }

    /// After anything else (a sample, a replay step): a message not seen before starts its
    /// time; one already on screen keeps its start.
    fn observe(&mut self, status: Option<&String>, now: Instant) {
        match (status, &self.shown) {
            (Some(s), Some((seen, _))) if s == seen => {}
            (Some(s), _) => self.shown = Some((s.clone(), now)),
            (None, _) => self.shown = None,
        }
    }

    /// When the message on screen is due to go.
    fn deadline(&self) -> Option<Instant> {
        self.shown.as_ref().map(|(_, t)| *t + SHOW_FOR)
    }
}

/// The footer's message and how long it has been there.
#[derive(Debug, Default)]
pub struct Status {
    pub text: Option<String>,
    age: StatusAge,
}

impl Status {
    pub fn set(&mut self, s: String) {
        self.text = Some(s);
    }

    /// After a key: the message the key left gets its full time on the footer.
    pub fn keyed(&mut self, now: Instant) {
        self.age.key(self.text.as_ref(), now);
    }

    /// When the message on screen is due to go.
    pub fn deadline(&self) -> Option<Instant> {
        self.age.deadline()
    }

    /// Takes the message off the footer once its time is up; true when it did (redraw). Not
    /// while no sample is on screen (`showing` false): there the message is the screen's only
    /// content (why nothing shows).
    pub fn expire(&mut self, showing: bool, now: Instant) -> bool {
        self.age.observe(self.text.as_ref(), now);
        let due = self.age.deadline().is_some_and(|d| now >= d);
        if due && showing {
            self.text = None;
            self.age.shown = None;
            return true;
        }
        false
    }
}

/// `s` in rows of at most `width` characters, broken at spaces where it can be, at most
/// `max` rows; a remainder that does not fit ends the last row with `~`.
pub fn wrap(s: &str, width: usize, max: usize) -> Vec<String> {
    let width = width.max(1);
    let mut rows: Vec<String> = Vec::new();
    let mut rest: Vec<char> = s.chars().collect();
    while !rest.is_empty() && rows.len() < max {
        if rest.len() <= width {
            rows.push(rest.iter().collect());
            rest.clear();
            break;
        }
        // Break after the last space that keeps the row within the width; a word longer than
        // the row is split.
        let cut = rest[..=width]
            .iter()
            .rposition(|c| *c == ' ')
            .filter(|&i| i > 0)
            .unwrap_or(width);
        rows.push(
            rest[..cut]
                .iter()
                .collect::<String>()
                .trim_end()
                .to_string(),
        );
        let skip = rest[cut..].iter().take_while(|c| **c == ' ').count();
        rest.drain(..cut + skip);
    }
    if !rest.is_empty() {
        if let Some(last) = rows.last_mut() {
            let tail: String = rest.iter().collect();
            *last = crate::units::fit(&format!("{last} {tail}"), width);
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_spaces_within_the_width() {
        let msg = "cannot start recording: /nonexistent/perftop-host-20251121T140530.ptrec: \
                   No such file or directory (os error 2)";
        let rows = wrap(msg, 80, MAX_ROWS);
        assert_eq!(
            rows,
            [
                // Exactly 80 characters: the row is filled, not one short.
                "cannot start recording: /nonexistent/perftop-host-20251121T140530.ptrec: No such",
                "file or directory (os error 2)"
            ]
        );
        assert!(rows.iter().all(|r| r.chars().count() <= 80));
        assert_eq!(wrap("short", 80, 2), ["short"]);
        assert_eq!(wrap("", 80, 2), Vec::<String>::new());
        // A word longer than the row is split; what does not fit in two rows is cut with ~.
        assert_eq!(wrap("abcdefghij", 4, 2), ["abcd", "efg~"]);
        assert_eq!(wrap("aa bb cc dd", 5, 2), ["aa bb", "cc dd"]);
        assert_eq!(wrap("aa bb cc dd ee", 5, 2), ["aa bb", "cc d~"]);
    }
}
