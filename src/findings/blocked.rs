//! `proc.blocked`: tasks in uninterruptible sleep (D) on two reads or more, named with what
//! they wait in (`/proc/PID/wchan`), longest first.

use super::{culprits, raise, Hit, Severity};
use crate::derive::Derived;

pub(super) fn blocked(d: &Derived) -> Option<Hit> {
    // Read in D on consecutive passes: `blocked_s` > 0 (0 on the first read in D).
    let named = culprits::blocked(d, f64::MIN_POSITIVE);
    let first = named.first()?;
    let n = d
        .processes
        .iter()
        .filter(|m| m.state == "D" && m.blocked_s.is_some_and(|s| s > 0.0))
        .count();
    let who: Vec<String> = named
        .iter()
        .map(|c| {
            let comm = crate::text::safe::line(&c.comm);
            match &c.wchan {
                Some(w) => format!("{comm} (wchan {})", crate::text::safe::line(w)),
                None => comm.to_string(),
            }
        })
        .collect();
    let tasks = if n == 1 { "task" } else { "tasks" };
    let mut h = raise(
        Severity::Warn,
        None,
        format!(
            "{n} {tasks} blocked in D for {:.0} s: {}",
            first.value,
            who.join(", ")
        ),
    );
    h.culprits = named;
    Some(h)
}
