//! The footer's message (`app.status`): how long it stays and how it fits. A message stays
//! `SHOW_FOR` after it appears (or after the key that left it there), then goes, so the key
//! hints come back; one too long for the row is wrapped onto a second row instead of being cut.
//! Times come from the caller (the event loop's clock), so tests move time without sleeping.

use super::app::App;
use std::time::{Duration, Instant};

/// How long a message stays on the footer.
pub const SHOW_FOR: Duration = Duration::from_secs(5);

/// Rows a message may take at most (the last one cut with `~` if it is longer still).
pub const MAX_ROWS: usize = 2;

/// The message on screen and when its time started.
#[derive(Debug, Default)]
pub struct StatusAge {
    shown: Option<(String, Instant)>,
}

impl StatusAge {
    /// After a key: the message the key left (new or the same text again) starts its time.
    pub fn key(&mut self, status: Option<&String>, now: Instant) {
        self.shown = status.map(|s| (s.clone(), now));
    }

    /// After anything else (a sample, a replay step): a message not seen before starts its
    /// time; one already on screen keeps its start.
    pub fn observe(&mut self, status: Option<&String>, now: Instant) {
        match (status, &self.shown) {
            (Some(s), Some((seen, _))) if s == seen => {}
            (Some(s), _) => self.shown = Some((s.clone(), now)),
            (None, _) => self.shown = None,
        }
    }

    /// When the message on screen is due to go.
    pub fn deadline(&self) -> Option<Instant> {
        self.shown.as_ref().map(|(_, t)| *t + SHOW_FOR)
    }
}

/// Takes the message off the footer once its time is up; true when it did (redraw). Not while
/// no sample is on screen: there the message is the screen's only content (why nothing shows).
pub fn expire(app: &mut App, now: Instant) -> bool {
    app.status_age.observe(app.status.as_ref(), now);
    let due = app.status_age.deadline().is_some_and(|d| now >= d);
    if due && app.derived.is_some() {
        app.status = None;
        app.status_age.shown = None;
        return true;
    }
    false
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

    #[test]
    fn a_message_goes_after_its_time_and_a_key_restarts_it() {
        let t0 = Instant::now();
        let mut app = App::new(Duration::from_secs(1), Duration::from_secs(60));
        // Without a sample on screen the message is all there is: it stays.
        app.status = Some("cannot show sample 3".into());
        assert!(!expire(&mut app, t0));
        assert!(!expire(&mut app, t0 + SHOW_FOR * 2));
        assert!(app.status.is_some());

        app.push_sample(crate::sample::Sample::default());
        assert!(app.derived.is_some());
        app.status = Some("sort: by name".into());
        assert!(!expire(&mut app, t0));
        assert_eq!(app.status_age.deadline(), Some(t0 + SHOW_FOR));
        assert!(!expire(&mut app, t0 + Duration::from_secs(4)));
        assert_eq!(app.status.as_deref(), Some("sort: by name"));
        // The same text again by a key: its time starts again.
        app.status_age
            .key(app.status.as_ref(), t0 + Duration::from_secs(4));
        assert!(!expire(&mut app, t0 + Duration::from_secs(6)));
        assert!(expire(&mut app, t0 + Duration::from_secs(9)));
        assert_eq!(app.status, None);
        assert_eq!(app.status_age.deadline(), None);
        // A new message from a sample (not a key) starts its own time when first seen.
        app.status = Some("recording stopped: disk full".into());
        assert!(!expire(&mut app, t0 + Duration::from_secs(20)));
        assert!(!expire(&mut app, t0 + Duration::from_secs(24)));
        assert!(expire(&mut app, t0 + Duration::from_secs(25)));
    }
}
