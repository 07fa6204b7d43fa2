//! Every process, and on demand every thread, for the screens that show them all (the zoomed
//! Processes pane, its `/` filter, `H`). Built only while the dashboard asks (`Want`), from
//! the process pass's own reads: the pass already reads every active process's `stat` every
//! second and the idle ones in turns (their counters unchanged, so their rates are 0), so the
//! full list adds no `stat` read of its own. What it adds, bounded per build: `status`
//! (user, `VmSwap`) and `schedstat` (run delay) for the processes that moved, are new or
//! whose turn it is; `cgroup` and `cmdline` once per process (the second off the sampling
//! thread, as the kept ones'); `wchan` and, as root, the top of `stack` for tasks in D; with
//! threads, each thread's `task/TID/stat`, at most `MAX_THREAD_READS` a build.
//!
//! Never part of a sample: the recorder, JSON and findings keep the pass's bounded selection.
//! Rates are over this list's own builds, keyed by pid and start time: a reused pid starts
//! with no rate, never with the last process's counters.

use super::cmdline::Cmdlines;
use super::{parse_cgroups, parse_stat, ProcState, PF_KTHREAD};
use crate::sample::SampleTime;
use crate::source::Probe;
use foldhash::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Thread `stat` files read at most per build with `H` on; more threads than this are cut
/// (and said): 100,000 threads would cost a second of CPU a second.
pub const MAX_THREAD_READS: usize = 10_000;
/// Tasks in D whose `stack` (root) and `wchan` are read at most per build.
const MAX_STUCK_READS: usize = 32;
/// Frames of `/proc/PID/stack` kept.
pub const STACK_FRAMES: usize = 4;
/// An idle process's `status` and `schedstat` are read every this many builds (its swap
/// can grow while it sleeps; its run delay cannot).
const DETAIL_EVERY: u32 = super::IDLE_EVERY;
/// Command lines waiting for the reader at most (one request per process, once).
const CMDLINE_QUEUE: usize = 8192;
/// `USER_HZ`: the kernel's unit for `stat`'s CPU and start times on every architecture.
const TICKS_PER_S: f64 = 100.0;

/// What the dashboard asks of the sampler thread: the full list, and threads in it.
#[derive(Debug, Default)]
pub struct Want {
    on: AtomicBool,
    threads: AtomicBool,
}

impl Want {
    pub fn set(&self, on: bool, threads: bool) {
        self.on.store(on, Ordering::Relaxed);
        self.threads.store(on && threads, Ordering::Relaxed);
    }

    pub fn on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    pub fn threads(&self) -> bool {
        self.threads.load(Ordering::Relaxed)
    }
}

/// Every process (and thread) as the last build saw it.
#[derive(Debug, Clone, Default)]
pub struct Everyone {
    pub entries: Vec<Entry>,
    /// Threads listed (`H`).
    pub threads: bool,
    /// Threads read of the threads there are, when `MAX_THREAD_READS` cut the list.
    pub threads_cut: Option<(usize, u64)>,
    /// The first build: no rates yet.
    pub first: bool,
    /// When it was built (wall clock).
    pub wall_ms: i64,
}

/// One process, or one thread (`tgid` != `pid`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Entry {
    pub pid: u32,
    /// The process a thread belongs to (its own pid for a process).
    pub tgid: u32,
    pub comm: Arc<str>,
    pub state: char,
    pub kernel: bool,
    pub cpu_pct: Option<f64>,
    pub rss_kb: Option<u64>,
    pub swap_kb: Option<u64>,
    pub read_kb_s: Option<f64>,
    pub write_kb_s: Option<f64>,
    pub majflt_s: Option<f64>,
    /// Time waited for a CPU, ms a second (`schedstat`'s second field).
    pub delay_ms_s: Option<f64>,
    pub threads: u32,
    pub nice: Option<i8>,
    pub last_cpu: Option<u32>,
    /// Start time, wall clock ms.
    pub started_ms: Option<i64>,
    pub user: Option<String>,
    pub cgroup: Option<String>,
    pub cmdline: Option<String>,
    pub wchan: Option<String>,
    /// Top frames of `/proc/PID/stack` (root, tasks in D).
    pub stack: Vec<String>,
}

/// Counters of one task at the last build.
#[derive(Debug, Clone)]
struct Was {
    start: u64,
    ticks: u64,
    majflt: u64,
    read: Option<u64>,
    write: Option<u64>,
    at: f64,
}

/// What `status`, `schedstat` and `cgroup` said of one task when last read.
#[derive(Debug, Clone, Default)]
struct Detail {
    start: u64,
    uid: Option<u32>,
    swap_kb: Option<u64>,
    cgroup: Option<Option<String>>,
    /// Run delay (ns) and when read (uptime s); and the rate between the last two reads.
    delay: Option<(u64, f64)>,
    delay_rate: Option<f64>,
}

impl Detail {
    /// The last reads of task `id`, if they were of this very task (same start time: a
    /// reused id starts afresh).
    fn kept(map: &mut HashMap<u32, Detail>, id: u32, start: u64) -> Detail {
        map.remove(&id)
            .filter(|d| d.start == start)
            .unwrap_or(Detail {
                start,
                ..Detail::default()
            })
    }
}

/// What the full list remembers between builds.
#[derive(Debug, Default)]
pub struct FullState {
    prev: HashMap<u32, Was>,
    detail: HashMap<u32, Detail>,
    cmdlines: Option<Cmdlines>,
    users: Option<HashMap<u32, String>>,
    builds: u64,
}

/// Builds the full list from this sample's process pass (`procs`, which must have run a pass
/// this sample: `ProcState::passed`).
pub fn build(
    probe: &mut Probe,
    procs: &ProcState,
    full: &mut FullState,
    time: &SampleTime,
    page_kb: u64,
    threads: bool,
) -> Everyone {
    // The boot clock in ns where there is one: `/proc/uptime`'s 10 ms steps were up to 1% of
    // a second's rate.
    let now = time
        .boottime_ns
        .map(|ns| ns as f64 / 1e9)
        .or(time.uptime_s)
        .unwrap_or(0.0);
    let build_no = full.builds;
    full.builds += 1;
    let first = full.prev.is_empty();
    let boot_ms = time
        .uptime_s
        .map(|u| time.wall_ms - (u * 1000.0).round() as i64);
    if full.users.is_none() {
        full.users = Some(read_users(probe));
    }
    let cmdlines = full
        .cmdlines
        .get_or_insert_with(|| Cmdlines::with_queue(CMDLINE_QUEUE));
    let mut prev = std::mem::take(&mut full.prev);
    let mut detail = std::mem::take(&mut full.detail);
    let mut next_prev: HashMap<u32, Was> = HashMap::default();
    let mut next_detail: HashMap<u32, Detail> = HashMap::default();
    next_prev.reserve(procs.prev.len());
    let mut entries = Vec::with_capacity(procs.prev.len());
    let mut stuck = 0usize;
    let mut pids: Vec<u32> = procs.prev.keys().copied().collect();
    pids.sort_unstable();
    for pid in pids {
        let Some(p) = procs.prev.get(&pid) else {
            continue;
        };
        let stat = &p.stat;
        let kernel = stat.flags & PF_KTHREAD != 0;
        let was = prev.remove(&pid).filter(|w| w.start == stat.start);
        let c = &p.c;
        let moved = was.as_ref().is_none_or(|w| w.ticks != c.ticks);
        let dt = was.as_ref().map(|w| now - w.at).filter(|d| *d > 0.0);
        let rate = |a: Option<u64>, b: Option<u64>| match (a, b, dt) {
            (Some(a), Some(b), Some(dt)) => Some(a.saturating_sub(b) as f64 / dt),
            _ => None,
        };
        let w = was.as_ref();
        let cpu_pct = rate(Some(c.ticks), w.map(|w| w.ticks)).map(|t| t * 100.0 / TICKS_PER_S);
        let majflt_s = rate(Some(c.majflt), w.map(|w| w.majflt));
        let read_kb_s = rate(c.read_bytes, w.and_then(|w| w.read)).map(|b| b / 1024.0);
        let write_kb_s = rate(c.write_bytes, w.and_then(|w| w.write)).map(|b| b / 1024.0);
        next_prev.insert(
            pid,
            Was {
                start: stat.start,
                ticks: c.ticks,
                majflt: c.majflt,
                read: c.read_bytes,
                write: c.write_bytes,
                at: now,
            },
        );
        let mut d = Detail::kept(&mut detail, pid, stat.start);
        let due = moved
            || matches!(stat.state, 'R' | 'D')
            || crate::source::turns::due(pid as usize, build_no, DETAIL_EVERY);
        let dir = format!("proc/{pid}");
        let mut gone = false;
        if due {
            gone = !read_detail(probe, &dir, &mut d, now);
        } else if d.delay.is_some() {
            // Not on a CPU since (no tick moved, not runnable): it waited for none.
            d.delay_rate = Some(0.0);
        }
        if gone {
            // Exited since the pass read it: not shown as live.
            next_prev.remove(&pid);
            continue;
        }
        if d.cgroup.is_none() {
            d.cgroup = Some(
                probe
                    .quiet_text(&dir, "cgroup")
                    .map(|t| parse_cgroups(&t))
                    .and_then(|c| c.main),
            );
        }
        let (wchan, stack) = if stat.state == 'D' && stuck < MAX_STUCK_READS {
            stuck += 1;
            (super::who::wchan_of(probe, pid, 'D'), stack_of(probe, &dir))
        } else {
            (None, Vec::new())
        };
        let cmdline = if kernel {
            None
        } else {
            cmdlines.get(&probe.root, (pid, stat.start), stat.state)
        };
        let users = full.users.as_ref();
        entries.push(Entry {
            pid,
            tgid: pid,
            comm: stat.comm.clone(),
            state: stat.state,
            kernel,
            cpu_pct,
            rss_kb: Some(stat.rss_pages.saturating_mul(page_kb)),
            swap_kb: d.swap_kb,
            read_kb_s,
            write_kb_s,
            majflt_s,
            delay_ms_s: d.delay_rate,
            threads: stat.threads,
            nice: stat.nice,
            last_cpu: stat.cpu,
            started_ms: boot_ms.map(|b| b + (stat.start as f64 * 1000.0 / TICKS_PER_S) as i64),
            user: d.uid.map(|u| user_name(users, u)),
            cgroup: d.cgroup.clone().flatten(),
            cmdline,
            wchan,
            stack,
        });
        next_detail.insert(pid, d);
    }
    let mut threads_cut = None;
    if threads {
        let mut ctx = ThreadPass {
            probe,
            prev: &mut prev,
            detail: &mut detail,
            next_prev: &mut next_prev,
            next_detail: &mut next_detail,
            now,
            boot_ms,
            build_no,
            read: 0,
        };
        threads_cut = ctx.add_threads(&mut entries);
    }
    let alive: std::collections::HashSet<(u32, u64)> =
        next_prev.iter().map(|(pid, w)| (*pid, w.start)).collect();
    cmdlines.retain(|k| alive.contains(k));
    full.prev = next_prev;
    full.detail = next_detail;
    Everyone {
        entries,
        threads,
        threads_cut,
        first,
        wall_ms: time.wall_ms,
    }
}

/// Reads `status` (user, swap) and `schedstat` (run delay) into `d`; false when the task is
/// gone.
fn read_detail(probe: &mut Probe, dir: &str, d: &mut Detail, now: f64) -> bool {
    let Some(status) = probe.quiet_text(dir, "status") else {
        return false;
    };
    let (uid, swap) = parse_status(&status);
    d.uid = uid.or(d.uid);
    d.swap_kb = swap;
    if let Some(ns) = probe
        .quiet_text(dir, "schedstat")
        .and_then(|t| parse_schedstat(&t))
    {
        d.delay_rate = match d.delay {
            Some((was, at)) if now > at => Some(ns.saturating_sub(was) as f64 / 1e6 / (now - at)),
            _ => d.delay_rate,
        };
        d.delay = Some((ns, now));
    }
    true
}

/// Reads threads of the processes listed so far.
struct ThreadPass<'a> {
    probe: &'a mut Probe,
    prev: &'a mut HashMap<u32, Was>,
    detail: &'a mut HashMap<u32, Detail>,
    next_prev: &'a mut HashMap<u32, Was>,
    next_detail: &'a mut HashMap<u32, Detail>,
    now: f64,
    boot_ms: Option<i64>,
    build_no: u64,
    read: usize,
}

impl ThreadPass<'_> {
    /// Adds a row per thread (not the main one: the process's own row is it) of every
    /// multi-threaded process in `entries`; `Some((read, there))` when the budget cut it.
    fn add_threads(&mut self, entries: &mut Vec<Entry>) -> Option<(usize, u64)> {
        let there: u64 = entries.iter().map(|e| u64::from(e.threads)).sum();
        let mut cut = false;
        let mut added = Vec::new();
        for e in entries.iter().filter(|e| e.threads > 1 && !e.kernel) {
            let tdir = format!("proc/{}/task", e.pid);
            for tid in self.probe.root.numbered_entries(&tdir, "") {
                if tid == e.pid {
                    continue;
                }
                if self.read >= MAX_THREAD_READS {
                    cut = true;
                    break;
                }
                self.read += 1;
                if let Some(t) = self.thread(e, &format!("{tdir}/{tid}"), tid) {
                    added.push(t);
                }
            }
            if cut {
                break;
            }
        }
        entries.extend(added);
        cut.then_some((
            self.read + entries.iter().filter(|e| e.tgid == e.pid).count(),
            there,
        ))
    }

    fn thread(&mut self, owner: &Entry, dir: &str, tid: u32) -> Option<Entry> {
        let stat = self
            .probe
            .quiet_text(dir, "stat")
            .and_then(|t| parse_stat(&t))?;
        let was = self.prev.remove(&tid).filter(|w| w.start == stat.start);
        let dt = was.as_ref().map(|w| self.now - w.at).filter(|d| *d > 0.0);
        let cpu_pct = match (&was, dt) {
            (Some(w), Some(dt)) => {
                Some(stat.ticks.saturating_sub(w.ticks) as f64 / dt * 100.0 / TICKS_PER_S)
            }
            _ => None,
        };
        let moved = was.as_ref().is_none_or(|w| w.ticks != stat.ticks);
        self.next_prev.insert(
            tid,
            Was {
                start: stat.start,
                ticks: stat.ticks,
                majflt: stat.majflt,
                read: None,
                write: None,
                at: self.now,
            },
        );
        let mut d = Detail::kept(self.detail, tid, stat.start);
        let due = moved
            || matches!(stat.state, 'R' | 'D')
            || crate::source::turns::due(tid as usize, self.build_no, DETAIL_EVERY);
        if due {
            if let Some(ns) = self
                .probe
                .quiet_text(dir, "schedstat")
                .and_then(|t| parse_schedstat(&t))
            {
                d.delay_rate = match d.delay {
                    Some((was, at)) if self.now > at => {
                        Some(ns.saturating_sub(was) as f64 / 1e6 / (self.now - at))
                    }
                    _ => d.delay_rate,
                };
                d.delay = Some((ns, self.now));
            }
        } else if d.delay.is_some() {
            d.delay_rate = Some(0.0);
        }
        let e = Entry {
            pid: tid,
            tgid: owner.pid,
            comm: stat.comm.clone(),
            state: stat.state,
            kernel: false,
            cpu_pct,
            majflt_s: None,
            delay_ms_s: d.delay_rate,
            threads: 1,
            nice: stat.nice,
            last_cpu: stat.cpu,
            started_ms: self
                .boot_ms
                .map(|b| b + (stat.start as f64 * 1000.0 / TICKS_PER_S) as i64),
            user: owner.user.clone(),
            cgroup: owner.cgroup.clone(),
            cmdline: owner.cmdline.clone(),
            ..Entry::default()
        };
        self.next_detail.insert(tid, d);
        Some(e)
    }
}

/// The top `STACK_FRAMES` function names of `/proc/PID/stack` (root only: the kernel refuses
/// others, and an empty list is said as unknown by the pane).
fn stack_of(probe: &mut Probe, dir: &str) -> Vec<String> {
    probe
        .quiet_text(dir, "stack")
        .map(|t| parse_stack(&t))
        .unwrap_or_default()
}

/// `[<0>] percpu_rwsem_wait+0x11f/0x150` lines as `percpu_rwsem_wait`.
pub fn parse_stack(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let f = l.rsplit("] ").next()?.trim();
            let name = f.split('+').next()?.trim();
            (!name.is_empty() && name.len() <= 64).then(|| name.to_string())
        })
        .take(STACK_FRAMES)
        .collect()
}

/// `Uid:` (real) and `VmSwap:` (kB) of a `status` text.
pub fn parse_status(text: &str) -> (Option<u32>, Option<u64>) {
    let (mut uid, mut swap) = (None, None);
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("Uid:") {
            uid = v
                .split_ascii_whitespace()
                .next()
                .and_then(|u| u.parse().ok());
        } else if let Some(v) = line.strip_prefix("VmSwap:") {
            swap = v
                .split_ascii_whitespace()
                .next()
                .and_then(|u| u.parse().ok());
        }
    }
    (uid, swap)
}

/// The second field of `schedstat`: ns spent runnable, waiting for a CPU.
pub fn parse_schedstat(text: &str) -> Option<u64> {
    text.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// uid -> name from the root's `etc/passwd` (a fixture may have none: numbers then).
fn read_users(probe: &mut Probe) -> HashMap<u32, String> {
    let mut users = HashMap::default();
    if let Some(text) = probe.quiet_text("etc", "passwd") {
        for line in text.lines() {
            let mut f = line.split(':');
            let (Some(name), Some(uid)) = (f.next(), f.nth(1)) else {
                continue;
            };
            if let Ok(uid) = uid.parse::<u32>() {
                if name.len() <= 32 {
                    users.entry(uid).or_insert_with(|| name.to_string());
                }
            }
        }
    }
    users
}

fn user_name(users: Option<&HashMap<u32, String>>, uid: u32) -> String {
    users
        .and_then(|u| u.get(&uid).cloned())
        .unwrap_or_else(|| uid.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_schedstat_and_stack_by_hand() {
        let status =
            "Name:\tsleep\nUid:\t1000\t1000\t1000\t1000\nVmRSS:\t  900 kB\nVmSwap:\t  128 kB\n";
        assert_eq!(parse_status(status), (Some(1000), Some(128)));
        assert_eq!(parse_status("Name:\tkthreadd\n"), (None, None));
        assert_eq!(parse_schedstat("1214990 553372 12\n"), Some(553_372));
        assert_eq!(parse_schedstat("garbage"), None);
        let stack = "[<0>] percpu_rwsem_wait+0x11f/0x150\n[<0>] __sb_start_write+0x4d/0x60\n\
                     [<0>] vfs_write+0x2bb/0x3a0\n[<0>] ksys_write+0x67/0xe0\n[<0>] do_syscall_64+0x58/0x80\n";
        assert_eq!(
            parse_stack(stack),
            [
                "percpu_rwsem_wait",
                "__sb_start_write",
                "vfs_write",
                "ksys_write"
            ]
        );
    }
}
