//! Per-process sampling: one `stat` read per process per pass, `io` for all of them on a
//! small host and for the busiest and blocked ones on a big one, `cgroup` only for the few
//! processes kept in the sample. Never `smaps` (it walks every mapping under the mm lock:
//! atop stopped reading it after it stalled Redis) and never `cmdline` (it takes the mm lock
//! too, which a process stuck in a page fault holds).

use super::parse::dec;
use super::Probe;
use crate::root::ReadError;
use crate::sample::{Processes, Task, TaskCounters};
use std::collections::HashMap;

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

/// PF_KTHREAD in `stat`'s flags: the task is a kernel thread.
const PF_KTHREAD: u64 = 0x0020_0000;

/// What one pass remembers for the next.
#[derive(Debug, Default)]
pub struct ProcState {
    /// Per pid: its start time, counters and whether the pass kept it.
    prev: HashMap<u32, Prev>,
    /// Per pid: (start time, cgroup path) of the processes kept so far.
    cgroups: HashMap<u32, (u64, Option<String>)>,
    /// The previous pass's wall time and uptime.
    last_wall_ms: Option<i64>,
    last_uptime_s: Option<f64>,
}

#[derive(Debug, Clone, Copy)]
struct Prev {
    start: u64,
    c: TaskCounters,
    kept: bool,
}

impl ProcState {
    /// Forgets cached cgroup paths (a process can be moved), with the other static caches.
    pub fn forget(&mut self) {
        self.cgroups.clear();
    }
}

/// The fields of `/proc/PID/stat` perftop uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Stat {
    pub comm: String,
    pub state: char,
    pub ppid: u32,
    pub flags: u64,
    pub majflt: u64,
    pub ticks: u64,
    pub threads: u32,
    pub start: u64,
    pub rss_pages: u64,
    pub cpu: Option<u32>,
}

/// Parses a `/proc/PID/stat` line. `comm` is what lies between the first `(` and the last
/// `)`: it may itself hold spaces, parentheses and newlines. `None` when garbled.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?;
    let mut f = text.get(close + 1..)?.split_ascii_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = u32::try_from(dec(f.next()?)?).ok()?;
    // pgrp session tty_nr tpgid: signed, not used.
    let flags = dec(f.nth(4)?)?;
    // minflt cminflt
    let majflt = dec(f.nth(2)?)?;
    // cmajflt
    let utime = dec(f.nth(1)?)?;
    let stime = dec(f.next()?)?;
    // cutime cstime priority nice: signed, not used.
    let threads = u32::try_from(dec(f.nth(4)?)?).ok()?;
    // itrealvalue
    let start = dec(f.nth(1)?)?;
    // vsize
    let rss_pages = dec(f.nth(1)?)?;
    // rsslim startcode endcode startstack kstkesp kstkeip signal blocked sigignore sigcatch
    // wchan nswap cnswap exit_signal, then processor (absent on very old kernels).
    let cpu = f.nth(14).and_then(dec).and_then(|c| u32::try_from(c).ok());
    Some(Stat {
        comm: comm.to_string(),
        state,
        ppid,
        flags,
        majflt,
        ticks: utime.saturating_add(stime),
        threads,
        start,
        rss_pages,
        cpu,
    })
}

/// `read_bytes` and `write_bytes` of a `/proc/PID/io` text.
pub fn parse_io(text: &str) -> Option<(u64, u64)> {
    let (mut read, mut write) = (None, None);
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key {
            "read_bytes" => read = dec(value.trim()),
            "write_bytes" => write = dec(value.trim()),
            _ => {}
        }
    }
    Some((read?, write?))
}

/// The cgroup path of a `/proc/PID/cgroup` text: v1's `name=systemd` hierarchy (on a hybrid
/// host the unified one says only `/`), else v1 `memory`, else `cpu`, else the v2 line.
pub fn parse_cgroup(text: &str) -> Option<String> {
    let mut best: Option<(u8, &str)> = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let rank = if controllers.split(',').any(|c| c == "name=systemd") {
            0
        } else if controllers.split(',').any(|c| c == "memory") {
            1
        } else if controllers.split(',').any(|c| c == "cpu") {
            2
        } else if controllers.is_empty() {
            3
        } else {
            continue;
        };
        if best.is_none_or(|(r, _)| rank < r) {
            best = Some((rank, path));
        }
    }
    best.map(|(_, p)| p.to_string())
}

/// One process read this pass, before the pass decides whether to keep it.
struct Seen {
    pid: u32,
    stat: Stat,
    io: Option<(u64, u64)>,
    /// Growth since the previous pass (same process): ticks, I/O bytes, major faults, RSS.
    d_ticks: u64,
    d_io: u64,
    d_majflt: u64,
    d_rss: u64,
}

/// Reads every process: counts, and the kept ones with their counters.
pub fn read_processes(
    probe: &mut Probe,
    state: &mut ProcState,
    wall_ms: i64,
    uptime_s: Option<f64>,
) -> Processes {
    let now_ticks = uptime_s.map(|u| (u * 100.0) as u64);
    let mut pids: Vec<u32> = probe
        .root
        .list_dir("proc")
        .iter()
        .filter_map(|n| dec(n).and_then(|p| u32::try_from(p).ok()))
        .collect();
    pids.sort_unstable();
    let mut out = Processes {
        base_wall_ms: state.last_wall_ms,
        ..Processes::default()
    };
    let mut seen: Vec<Seen> = Vec::with_capacity(pids.len());
    for pid in pids {
        let dir = format!("proc/{pid}");
        // Gone since the listing (ENOENT/ESRCH) or garbled: not a process this pass.
        let Some(stat) = probe.quiet_text(&dir, "stat").and_then(|t| parse_stat(&t)) else {
            continue;
        };
        out.total += 1;
        match stat.state {
            'R' => out.running += 1,
            'D' => out.blocked += 1,
            'Z' => out.zombies += 1,
            _ => {}
        }
        if stat.flags & PF_KTHREAD != 0 {
            out.kernel_threads += 1;
        }
        out.threads += u64::from(stat.threads);
        let prev = state.prev.get(&pid).filter(|p| p.start == stat.start);
        let d_ticks = match prev {
            Some(p) => stat.ticks.saturating_sub(p.c.ticks),
            None => per_second_of_life(stat.ticks, stat.start, now_ticks),
        };
        seen.push(Seen {
            pid,
            stat,
            io: None,
            d_ticks,
            d_io: 0,
            d_majflt: 0,
            d_rss: 0,
        });
    }
    read_io(probe, state, &mut seen, &mut out);
    for s in &mut seen {
        match state.prev.get(&s.pid).filter(|p| p.start == s.stat.start) {
            Some(p) => {
                s.d_majflt = s.stat.majflt.saturating_sub(p.c.majflt);
                s.d_rss = s.stat.rss_pages.saturating_sub(p.c.rss_pages);
                if let (Some((r, w)), Some(pr), Some(pw)) = (s.io, p.c.read_bytes, p.c.write_bytes)
                {
                    s.d_io = r.saturating_sub(pr).saturating_add(w.saturating_sub(pw));
                }
            }
            None => {
                let life = |v| per_second_of_life(v, s.stat.start, now_ticks);
                s.d_majflt = life(s.stat.majflt);
                s.d_io = life(s.io.map_or(0, |(r, w)| r.saturating_add(w)));
            }
        }
    }
    // The root's own clock (`/proc/uptime`, as derive's intervals), so a fixture tree written
    // one tick apart reads as a second apart whenever it is read.
    let secs = match (state.last_uptime_s, uptime_s) {
        (Some(a), Some(b)) => b - a,
        _ => state
            .last_wall_ms
            .map_or(1.0, |t| (wall_ms - t) as f64 / 1000.0),
    };
    let secs = if secs.is_finite() {
        secs.clamp(0.001, 3600.0)
    } else {
        1.0
    };
    let keep = choose(&seen, secs);
    let mut next = HashMap::with_capacity(seen.len());
    for (i, s) in seen.iter().enumerate() {
        let c = TaskCounters {
            ticks: s.stat.ticks,
            majflt: s.stat.majflt,
            rss_pages: s.stat.rss_pages,
            read_bytes: s.io.map(|io| io.0),
            write_bytes: s.io.map(|io| io.1),
        };
        let base = state
            .prev
            .get(&s.pid)
            .filter(|p| p.start == s.stat.start && !p.kept)
            .map(|p| p.c);
        if keep[i] {
            let cgroup = cgroup_of(probe, &mut state.cgroups, s.pid, s.stat.start);
            out.tasks.push(Task {
                pid: s.pid,
                ppid: s.stat.ppid,
                start: s.stat.start,
                comm: s.stat.comm.clone(),
                state: s.stat.state,
                kernel: s.stat.flags & PF_KTHREAD != 0,
                threads: s.stat.threads,
                cpu: s.stat.cpu,
                counters: c,
                cgroup,
                base,
            });
        }
        next.insert(
            s.pid,
            Prev {
                start: s.stat.start,
                c,
                kept: keep[i],
            },
        );
    }
    state.prev = next;
    state.cgroups.retain(|pid, _| state.prev.contains_key(pid));
    state.last_wall_ms = Some(wall_ms);
    state.last_uptime_s = uptime_s;
    out
}

/// A process the previous pass did not see (the first pass, a new process, a reused pid)
/// ranks by what it did per second of its life, as `ps` shows %CPU: a process younger than a
/// second by all it did.
fn per_second_of_life(v: u64, start: u64, now_ticks: Option<u64>) -> u64 {
    match now_ticks {
        Some(now) => {
            let age = now.saturating_sub(start).max(100);
            (u128::from(v) * 100 / u128::from(age)) as u64
        }
        None => v,
    }
}

/// Reads `io` for every process on a small host; on a big one for the busiest by CPU, the
/// blocked and those kept last pass. Notes why I/O is unknown when it is.
fn read_io(probe: &mut Probe, state: &ProcState, seen: &mut [Seen], out: &mut Processes) {
    let wanted: Vec<bool> = if seen.len() <= IO_ALL_MAX {
        vec![true; seen.len()]
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
                .is_some_and(|p| p.kept && p.start == s.stat.start);
            if s.stat.state == 'D' || kept {
                w[i] = true;
            }
        }
        w
    };
    let (mut denied, mut missing, mut read) = (0u32, 0u32, 0u32);
    let mut buf_dir = String::new();
    for (s, want) in seen.iter_mut().zip(wanted) {
        if !want || s.stat.state == 'Z' {
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
        Some(format!(
            "{denied} processes' /proc/PID/io unreadable ({why})"
        ))
    } else if read == 0 && missing > 0 {
        Some("no /proc/PID/io: kernel without task I/O accounting".to_string())
    } else if seen.len() > IO_ALL_MAX {
        Some(format!(
            "{} of {} processes: I/O read for the {IO_TOP_CPU} busiest, the blocked and those shown",
            read,
            seen.len()
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
fn choose(seen: &[Seen], secs: f64) -> Vec<bool> {
    let floor = |per_s: f64| ((per_s * secs).ceil() as u64).max(1);
    let mut keep = vec![false; seen.len()];
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

/// The cgroup path of a kept process, read once per process (and again with the static
/// caches); `None` when it vanished or the file says nothing usable.
fn cgroup_of(
    probe: &mut Probe,
    cache: &mut HashMap<u32, (u64, Option<String>)>,
    pid: u32,
    start: u64,
) -> Option<String> {
    if let Some((s, path)) = cache.get(&pid) {
        if *s == start {
            return path.clone();
        }
    }
    let path = probe
        .quiet_text(&format!("proc/{pid}"), "cgroup")
        .and_then(|t| parse_cgroup(&t));
    cache.insert(pid, (start, path.clone()));
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_by_hand() {
        // A real 6.18 line of `cat` with a comm holding spaces and parentheses.
        let line = "4242 (a b) (c)) S 1 4242 4242 0 -1 4194560 120 0 3 0 25 17 0 0 20 0 2 0 \
                    987654 5050368 321 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 \
                    0 0 0 0 0 0 0 0 0 0 0";
        let s = parse_stat(line).expect("parses");
        assert_eq!(s.comm, "a b) (c)");
        assert_eq!(s.state, 'S');
        assert_eq!(s.ppid, 1);
        assert_eq!(s.flags, 4_194_560);
        assert_eq!(s.majflt, 3);
        assert_eq!(s.ticks, 42);
        assert_eq!(s.threads, 2);
        assert_eq!(s.start, 987_654);
        assert_eq!(s.rss_pages, 321);
        assert_eq!(s.cpu, Some(1));
        let kthread = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 1 0 0 20 0 1 0 2 0 0 \
                       18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 0 0 0 0 0 0 0 0 0 \
                       0 0 0 0 0";
        let k = parse_stat(kthread).expect("parses");
        assert_ne!(k.flags & PF_KTHREAD, 0);
        assert_eq!(k.cpu, Some(0));
    }

    #[test]
    fn garbled_stat_is_none() {
        for bad in [
            "",
            "12 (x",
            "12 x) S",
            "12 (x) S 1 2 3",
            "12 (x) S -1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0",
        ] {
            assert_eq!(parse_stat(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn io_and_cgroup_files() {
        let io = "rchar: 100\nwchar: 200\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\n\
                  write_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_io(io), Some((4096, 8192)));
        assert_eq!(parse_io("read_bytes: 1\n"), None);
        let v1 = "12:pids:/user.slice\n4:memory:/user.slice/x\n\
                  1:name=systemd:/user.slice/user-0.slice/session-1.scope\n0::/\n";
        assert_eq!(
            parse_cgroup(v1).as_deref(),
            Some("/user.slice/user-0.slice/session-1.scope")
        );
        assert_eq!(
            parse_cgroup("0::/system.slice/docker-ab.scope\n").as_deref(),
            Some("/system.slice/docker-ab.scope")
        );
        assert_eq!(
            parse_cgroup("3:cpu,cpuacct:/a\n0::/\n").as_deref(),
            Some("/a")
        );
        assert_eq!(parse_cgroup("garbage\n"), None);
    }
}
