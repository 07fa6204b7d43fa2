//! What one process pass keeps and whose `io` it reads: the busiest, the blocked and the
//! shown, from what the pass found (`Seen`).

use super::{parse_io, ProcState, Seen, PF_KTHREAD};
use crate::root::ReadError;
use crate::sample::Processes;
use crate::source::Probe;

/// Up to this many processes every `io` file is read; above it, only those of the
/// `IO_TOP_CPU` busiest, the blocked and the ones kept last pass (so their rates go on).
pub const IO_ALL_MAX: usize = 2000;
/// Processes by CPU whose `io` is read on a big host.
pub const IO_TOP_CPU: usize = 64;

/// What a pass keeps, per reason (a process kept for two reasons is kept once): the busiest
/// by CPU, by I/O and by major faults, the fastest growing and the largest by RSS, and the
/// blocked (D state). Active ones only, except the largest; so an idle host keeps a handful.
const KEEP_CPU: usize = 10;
const KEEP_IO: usize = 6;
const KEEP_FAULTS: usize = 4;
const KEEP_GROWTH: usize = 3;
const KEEP_RSS: usize = 3;
const KEEP_BLOCKED: usize = 8;

/// Reads `io` for every process on a small host; on a big one for the busiest by CPU, the
/// blocked and those kept last pass. Notes why I/O is unknown when it is.
pub(super) fn read_io(
    probe: &mut Probe,
    state: &ProcState,
    seen: &mut [Seen],
    out: &mut Processes,
) {
    let fresh = seen.len();
    // A kernel thread that used no CPU did no I/O (its `io` is all zeros but for writeback
    // flushers, which work on CPU): on a big host thousands of per-CPU threads are skipped.
    let wanted: Vec<bool> = if fresh <= IO_ALL_MAX {
        seen.iter()
            .map(|s| s.stat.flags & PF_KTHREAD == 0 || s.d_ticks > 0)
            .collect()
    } else {
        let mut by_cpu: Vec<usize> = (0..seen.len()).collect();
        by_cpu.sort_unstable_by(|&a, &b| seen[b].d_ticks.cmp(&seen[a].d_ticks));
        let mut w = vec![false; seen.len()];
        for &i in by_cpu.iter().take(IO_TOP_CPU) {
            w[i] = true;
        }
        for (i, s) in seen.iter().enumerate() {
            let kept = state
                .prev
                .get(&s.pid)
                .is_some_and(|p| p.kept && p.stat.start == s.stat.start);
            if s.stat.state == 'D' || kept {
                w[i] = true;
            }
        }
        w
    };
    let (mut denied, mut missing, mut read) = (0u32, 0u32, 0u32);
    let mut buf_dir = String::new();
    for (s, want) in seen.iter_mut().zip(wanted) {
        // Not read: a process not read this pass keeps its last read's counters.
        if !want || s.stat.state == 'Z' || s.carried {
            continue;
        }
        buf_dir.clear();
        buf_dir.push_str("proc/");
        buf_dir.push_str(&s.pid.to_string());
        match probe.try_text(&buf_dir, "io") {
            Ok(text) => {
                s.io = parse_io(&text);
                read += 1;
            }
            Err(ReadError::Denied) => denied += 1,
            Err(ReadError::Missing) => missing += 1,
            Err(_) => {}
        }
    }
    out.io_read = read;
    out.io_unknown = if denied > 0 {
        // Root is refused too where ptrace access is (another user namespace, a process that
        // made itself non-dumpable).
        let why = if probe.root.is_live() && rustix::process::geteuid().is_root() {
            "ptrace access denied"
        } else {
            "another user's need root"
        };
        Some(io_denied_note(denied, why))
    } else if read == 0 && missing > 0 {
        Some("no /proc/PID/io: kernel without task I/O accounting".to_string())
    } else if fresh > IO_ALL_MAX {
        Some(format!(
            "{} of {} processes: I/O read for the {IO_TOP_CPU} busiest, the blocked and those shown",
            read, out.total
        ))
    } else {
        None
    };
}

/// Marks the processes this pass keeps (see the `KEEP_*` constants): the top of each list
/// among those above its floor over the `secs` since the previous pass. The floors keep an
/// idle host's recording small (a kworker's odd tick is not activity) and sit under what
/// names a culprit (`findings::culprits`): 2% of a CPU, 64 KiB/s of I/O, a major fault,
/// 64 kB/s of RSS growth.
pub(super) fn choose(seen: &[Seen], secs: f64) -> Vec<bool> {
    let floor = |per_s: f64| ((per_s * secs).ceil() as u64).max(1);
    let mut keep = vec![false; seen.len()];
    // Only what this pass read (`seen`): a process counted as last read has no fresh
    // counters to show.
    let mut idx: Vec<usize> = (0..seen.len()).collect();
    let mut top = |key: &dyn Fn(&Seen) -> u64, n: usize, least: u64| {
        idx.sort_unstable_by(|&a, &b| key(&seen[b]).cmp(&key(&seen[a])));
        for &i in idx.iter().take(n) {
            if key(&seen[i]) >= least {
                keep[i] = true;
            }
        }
    };
    top(&|s| s.d_ticks, KEEP_CPU, floor(2.0));
    top(&|s| s.d_io, KEEP_IO, floor(65_536.0));
    top(&|s| s.d_majflt, KEEP_FAULTS, floor(1.0));
    top(&|s| s.d_rss, KEEP_GROWTH, floor(16.0));
    top(&|s| s.stat.rss_pages, KEEP_RSS, 1);
    top(&|s| u64::from(s.stat.state == 'D'), KEEP_BLOCKED, 1);
    keep
}

/// `1 process's /proc/PID/io unreadable (why)`, `3 processes' ...`.
fn io_denied_note(denied: u32, why: &str) -> String {
    let whose = if denied == 1 {
        "1 process's".to_string()
    } else {
        format!("{denied} processes'")
    };
    format!("{whose} /proc/PID/io unreadable ({why})")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_denied_note_counts_in_words() {
        let why = "ptrace access denied";
        assert_eq!(
            super::io_denied_note(1, why),
            "1 process's /proc/PID/io unreadable (ptrace access denied)"
        );
        assert_eq!(
            super::io_denied_note(3, why),
            "3 processes' /proc/PID/io unreadable (ptrace access denied)"
        );
    }
}
