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
/// The commands busiest in total (CPU, then I/O) whose active members are all kept, up to
/// `KEEP_MEMBERS` more processes a pass: a culprit is a command's sum (`findings::culprits`),
/// and 48 `stress-ng-cpu` workers on a 16-CPU host, 10 of them kept by CPU, were named
/// `x13 559%` of a machine's 1597% rather than `x48` and nearly all of it.
const KEEP_COMMANDS: usize = 3;
const KEEP_MEMBERS: usize = 128;

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
    let mut room = KEEP_MEMBERS;
    members(seen, &mut keep, &mut room, &|s| s.d_ticks, floor(2.0));
    members(seen, &mut keep, &mut room, &|s| s.d_io, floor(65_536.0));
    keep
}

/// Keeps the members at or above `least` of the `KEEP_COMMANDS` commands with the largest sum
/// of `key` over such members, busiest first, while `room` lasts. Only active members: the
/// floor that keeps an idle host's recording small holds here too.
fn members(
    seen: &[Seen],
    keep: &mut [bool],
    room: &mut usize,
    key: &dyn Fn(&Seen) -> u64,
    least: u64,
) {
    let mut active: Vec<usize> = (0..seen.len())
        .filter(|&i| key(&seen[i]) >= least)
        .collect();
    if active.len() <= 1 {
        return;
    }
    let mut sums: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    for &i in &active {
        *sums.entry(&seen[i].stat.comm).or_default() += key(&seen[i]);
    }
    let mut commands: Vec<(&str, u64)> = sums.into_iter().collect();
    commands.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    commands.truncate(KEEP_COMMANDS);
    active.sort_unstable_by(|&a, &b| key(&seen[b]).cmp(&key(&seen[a])));
    for i in active {
        if *room == 0 {
            return;
        }
        if !keep[i] && commands.iter().any(|c| *c.0 == *seen[i].stat.comm) {
            keep[i] = true;
            *room -= 1;
        }
    }
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
    use super::super::{parse::Stat, Seen};

    fn seen(pid: u32, comm: &str, d_ticks: u64) -> Seen {
        Seen {
            pid,
            stat: Stat {
                comm: comm.into(),
                state: 'R',
                ..Stat::default()
            },
            io: None,
            d_ticks,
            d_child_ticks: 0,
            d_io: 0,
            d_majflt: 0,
            d_rss: 0,
            rss_moved: false,
            carried: false,
        }
    }

    /// 48 workers of one command at a third of a CPU each (3 a CPU on 16 CPUs), 5 busier
    /// single processes and 200 idle ones, over 1 s at 100 ticks/s: the 10 busiest by CPU
    /// are the 5 singles and 5 workers; every worker is kept, so the command's culprit is
    /// its whole sum; the idle ones and a fourth busy command are not.
    #[test]
    fn every_active_member_of_the_busiest_commands_is_kept() {
        let mut v: Vec<Seen> = (0..48)
            .map(|i| seen(100 + i, "stress-ng-cpu", 33))
            .collect();
        for (i, c) in ["a", "b", "c"].iter().enumerate() {
            v.push(seen(300 + i as u32, c, 90 - i as u64));
        }
        v.push(seen(310, "d", 40));
        v.push(seen(311, "e", 35));
        v.extend((0..200).map(|i| seen(1000 + i, "idle", 0)));
        let keep = super::choose(&v, 1.0);
        let kept = |comm: &str| {
            v.iter()
                .zip(&keep)
                .filter(|(s, k)| **k && &*s.stat.comm == comm)
                .count()
        };
        // The commands by total: stress-ng-cpu 1584, a 90, b 89 (c 88, d 40, e 35 are out of
        // the top 3 but c, d and e are among the 10 busiest processes).
        assert_eq!(kept("stress-ng-cpu"), 48);
        assert_eq!((kept("a"), kept("b"), kept("c")), (1, 1, 1));
        assert_eq!((kept("d"), kept("e")), (1, 1));
        assert_eq!(kept("idle"), 0);
    }

    /// The extra members are bounded: 400 active workers keep the 10 busiest by CPU and at
    /// most `KEEP_MEMBERS` more.
    #[test]
    fn the_members_kept_are_bounded() {
        let v: Vec<Seen> = (0..400)
            .map(|i| seen(i, "php-fpm", 5 + u64::from(i % 7)))
            .collect();
        let keep = super::choose(&v, 1.0);
        assert_eq!(
            keep.iter().filter(|k| **k).count(),
            super::KEEP_CPU + super::KEEP_MEMBERS
        );
    }

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
