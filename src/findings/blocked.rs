//! `proc.blocked`: tasks in uninterruptible sleep (D) on two reads or more, named with what
//! they wait in (`/proc/PID/wchan`), longest first.

use super::{culprits, raise, Hit, Severity};
use crate::derive::Derived;

/// The tasks the rule counts: read in D on consecutive passes (`blocked_s` > 0; 0 on the first
/// read in D). `explain` peaks in this same count (`proc.blocked_tasks`), so an episode's
/// "1 task blocked" never sits beside a peak of 0 (the kernel's `procs_blocked`, read at the
/// sample's start rather than in the process pass, said 0 there).
pub fn counted(d: &Derived) -> usize {
    d.processes
        .iter()
        .filter(|m| m.state == "D" && m.blocked_s.is_some_and(|s| s > 0.0))
        .count()
}

pub(super) fn blocked(d: &Derived) -> Option<Hit> {
    let named = culprits::blocked(d, f64::MIN_POSITIVE);
    let first = named.first()?;
    let n = counted(d);
    let who: Vec<String> = named
        .iter()
        .map(|c| {
            let comm = crate::safe::line(&c.comm);
            match &c.wchan {
                Some(w) => format!("{comm} (wchan {})", crate::safe::line(w)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::ProcessMetrics;

    fn task(pid: u32, comm: &str, state: &str, blocked_s: Option<f64>) -> ProcessMetrics {
        ProcessMetrics {
            pid,
            comm: comm.into(),
            state: state.into(),
            blocked_s,
            wchan: (state == "D").then(|| "percpu_rwsem_wait".to_string()),
            ..ProcessMetrics::default()
        }
    }

    /// Only tasks read in D on two passes or more (blocked_s > 0) count: one just entered D
    /// (0 s) and a running one do not; the longest is first and gives the time.
    #[test]
    fn tasks_in_d_on_two_passes_are_named_longest_first() {
        let mut d = crate::derive::derive(None, &crate::sample::Sample::default());
        d.processes = vec![
            task(1, "dd", "D", Some(2.0)),
            task(2, "sync", "D", Some(4.2)),
            task(3, "cat", "D", Some(0.0)),
            task(4, "cc1", "R", None),
        ];
        let h = blocked(&d).expect("hit");
        assert_eq!(
            h.message,
            "2 tasks blocked in D for 4 s: sync (wchan percpu_rwsem_wait), \
             dd (wchan percpu_rwsem_wait)"
        );
        let pids: Vec<u32> = h.culprits.iter().map(|c| c.pid).collect();
        assert_eq!(pids, [2, 1]);
        d.processes.truncate(0);
        d.processes.push(task(3, "cat", "D", Some(0.0)));
        assert_eq!(blocked(&d), None, "one read in D is not yet blocked");
    }
}
