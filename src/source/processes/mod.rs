//! Per-process sampling: one `stat` read per process per pass (an idle one's in turns), `io`
//! for every one whose `stat` moved on a small host and for the busiest and blocked ones on a
//! big one (`pick`), `cgroup` only for the few
//! processes kept in the sample. Never `smaps` (it walks every mapping under the mm lock:
//! atop stopped reading it after it stalled Redis) and never `cmdline` (it takes the mm lock
//! too, which a process stuck in a page fault holds).

mod cmdline;
pub mod everyone;
mod parse;
mod pass;
mod pick;
mod rates;
mod who;

pub use cmdline::parse as parse_cmdline;
pub use parse::{parse_cgroup, parse_cgroups, parse_io, parse_stat, CgroupPaths, Stat, PF_KTHREAD};
pub use pass::idle_every;
pub use pick::{IO_ALL_MAX, IO_TOP_CPU};

use super::parse::dec;
use super::Probe;
use crate::sample::{Processes, SampleTime, Task, TaskCounters};
use foldhash::HashMap;
use rates::{own_scale, per_second_of_life, scaled};

/// An idle process (no CPU, I/O, faults or RSS change, not R or D, not shown, when last
/// read) is read every this many passes, in turns; an active one every pass. Its counters are
/// cumulative, so when it is read its rates over its own interval are exact.
pub const IDLE_EVERY: u32 = 16;

/// CPU time (`/proc/stat` user + nice + system) the processes read this pass must account
/// for, within this many ticks per second (a tenth of a CPU): more unexplained than that and
/// the pass reads the idle processes too (a long-idle process that started working shows at
/// once). On this idle VM 0 to 7 ticks a second go unexplained (exited processes, tick
/// sampling), so a lower bar reads everything every few samples.
const UNEXPLAINED_TICKS_PER_S: f64 = 10.0;

/// What one pass remembers for the next.
#[derive(Debug, Default)]
pub struct ProcState {
    /// Per pid: what it was when last read, and when.
    prev: HashMap<u32, Prev>,
    /// Per pid: (start time, cgroup paths) of the processes kept so far.
    cgroups: HashMap<u32, (u64, CgroupPaths)>,
    /// The previous pass's time, and the host's busy ticks (`/proc/stat`) then.
    last: Option<SampleTime>,
    last_busy: Option<u64>,
    passes: u64,
    /// Kernel threads read every pass for the other panes (kswapd, kcompactd, khugepaged).
    pub(crate) always: Vec<u32>,
    /// Kernel threads whose `comm` and CPU ticks the other panes take from this pass
    /// (`kthreads`): the `always` ones and the ksoftirqd threads, read like any process.
    pub(crate) watch: Vec<u32>,
    read_now: HashMap<u32, ThreadRead>,
    /// Command lines of the processes kept, read off the sampling thread on the live host.
    cmdlines: cmdline::Cmdlines,
    /// The pids of the last pass and `/proc/stat`'s fork count when `/proc` was last listed:
    /// see `pids_now`.
    pids: Vec<u32>,
    listed_at_forks: Option<u64>,
    /// This pass's `idle_every`.
    idle_every: u32,
    /// Whether this sample ran a pass (`pass_due`): between passes `read_now` is the last
    /// pass's, not this sample's.
    pub(crate) passed: bool,
    /// The last pass's output, kept for the samples between passes when they come faster
    /// than a second (`carried`); `None` when every sample runs a pass.
    last_out: Option<Processes>,
}

/// A watched kernel thread as the last pass read it (or, not its turn, as last read).
#[derive(Debug, Clone)]
pub struct ThreadRead {
    pub comm: String,
    pub ticks: u64,
    /// Read this pass, and read before that on an earlier pass than the previous one: its
    /// growth since then is over this longer interval.
    pub since: Option<SampleTime>,
}

#[derive(Debug, Clone)]
struct Prev {
    stat: Stat,
    c: TaskCounters,
    kept: bool,
    /// Did something (CPU, I/O, faults, RSS) since the read before, or runs or waits (R, D).
    active: bool,
    /// When it was read.
    at: SampleTime,
    /// In D since this uptime (seconds) on consecutive reads (`Task::blocked_since`).
    d_since: Option<f64>,
}

impl ProcState {
    /// Forgets cached cgroup paths (a process can be moved), with the other static caches.
    pub fn forget(&mut self) {
        self.cgroups.clear();
        self.listed_at_forks = None;
    }

    /// A watched kernel thread (`watch`) as this pass saw it: read now, or as last read.
    pub fn thread(&self, pid: u32) -> Option<ThreadRead> {
        if let Some(t) = self.read_now.get(&pid) {
            return Some(t.clone());
        }
        self.prev.get(&pid).map(|p| ThreadRead {
            comm: p.stat.comm.to_string(),
            ticks: p.c.ticks,
            since: None,
        })
    }

    /// A watched kernel thread read by this sample's pass (`None` between passes, or not
    /// read on this pass).
    pub fn fresh_thread(&self, pid: u32) -> Option<ThreadRead> {
        self.passed.then(|| self.read_now.get(&pid).cloned())?
    }

    /// True when `pid`, last read as `p`, must be read this pass: active when last read,
    /// wanted by another pane, or its turn among the idle. (A new one always is.) A shown one
    /// that was idle is idle too: it is carried, as last read, between its turns.
    fn due(&self, pid: u32, p: &Prev, pass: u64) -> bool {
        p.active
            || self.always.binary_search(&pid).is_ok()
            || super::turns::due(pid as usize, pass, self.idle_every)
    }
}

/// One process read this pass (an idle one not read is only counted, from its last read).
struct Seen {
    pid: u32,
    stat: Stat,
    io: Option<(u64, u64)>,
    /// Growth since it was last read (same process), scaled to this pass's interval: ticks,
    /// I/O bytes, major faults, RSS pages.
    d_ticks: u64,
    /// Growth of the ticks of its reaped children (`cutime + cstime`), scaled like `d_ticks`.
    d_child_ticks: u64,
    d_io: u64,
    d_majflt: u64,
    d_rss: u64,
    /// RSS changed either way since the last read.
    rss_moved: bool,
    /// Not read this pass: shown last pass and idle then, so carried as last read (counted
    /// with the idle ones, its `io` not read, its last read's time and counters kept).
    carried: bool,
}

/// The host's busy CPU ticks so far (`/proc/stat` user + nice + system, all CPUs): what the
/// processes' own ticks are checked against.
pub fn busy_ticks(total: Option<&crate::sample::CpuTimes>) -> Option<u64> {
    total.map(|t| t.user.saturating_add(t.nice).saturating_add(t.system))
}

/// Reads the processes (every one that is active, new, shown or wanted by another pane, the
/// idle ones in turns): counts, and the kept ones with their counters. `busy`: the host's
/// busy ticks now (`busy_ticks`).
pub fn read_processes(
    probe: &mut Probe,
    state: &mut ProcState,
    time: &SampleTime,
    busy: Option<u64>,
    forks: Option<u64>,
) -> Processes {
    let now_ticks = time.uptime_s.map(|u| (u * 100.0) as u64);
    // Passes once in `every` samples when samples come faster than a second (`pass_due`):
    // an idle process's turn is counted in passes, so in seconds from the passes' own gap.
    let every = probe.tier.detail_every;
    state.passed = true;
    state.idle_every = idle_every(
        Some(state.idle_every),
        probe.tier.gap_s.map(|g| g * f64::from(every)),
    );
    let pids = pids_now(probe, state, forks);
    state.always.sort_unstable();
    state.watch.sort_unstable();
    state.read_now.clear();
    let pass = state.passes;
    state.passes += 1;
    // The root's own clock (`/proc/uptime`, as derive's intervals), so a fixture tree written
    // one tick apart reads as a second apart whenever it is read.
    let secs = match &state.last {
        Some(last) => time.secs_since(last),
        None => None,
    }
    .map_or(1.0, |s| s.clamp(0.001, 3600.0));
    let mut out = Processes {
        base_wall_ms: state.last.as_ref().map(|t| t.wall_ms),
        every: (every > 1).then_some(every),
        ..Processes::default()
    };
    let mut seen: Vec<Seen> = Vec::new();
    // The idle ones not due, counted from their last read in the same lookup that said so:
    // with 1,000 idle processes, touching each one more than once a pass cost more CPU than
    // reading the sixteenth of them that are due.
    let mut skipped: Vec<u32> = Vec::with_capacity(pids.len());
    let mut idle = Processes::default();
    // The pids there are this pass: those read, and the idle ones as last read (left in
    // `prev` as they are).
    let mut live: Vec<u32> = Vec::with_capacity(pids.len());
    for &pid in &pids {
        let turn = match state.prev.get(&pid) {
            // A shown process must still be there to be shown: one gone is read (and found
            // gone) now, not carried until its turn.
            Some(p) if !state.due(pid, p, pass) && (!p.kept || probe.root.pid_exists(pid)) => {
                count(&mut idle, &p.stat);
                skipped.push(pid);
                continue;
            }
            Some(p) => !p.active && !p.kept && state.always.binary_search(&pid).is_err(),
            None => false,
        };
        let found = read_one(probe, state, pid, turn, now_ticks, time, secs);
        file(found, &mut seen, &mut out, &mut live);
    }
    // Everything the processes read did on the CPU, against what the host did: a gap means
    // an idle process woke up, so the idle ones are read this pass too. Children that ran
    // and exited between two passes (a build's compilers) are in their parent's cutime and
    // cstime once reaped: counted as explained, they do not make a build host read every
    // idle process every pass.
    let explained: u64 = seen
        .iter()
        .map(|s| s.d_ticks.saturating_add(s.d_child_ticks))
        .sum();
    let unexplained = match (state.last_busy, busy) {
        (Some(a), Some(b)) if state.last.is_some() => b.saturating_sub(a).saturating_sub(explained),
        _ => 0,
    };
    let read_idle = unexplained as f64 > UNEXPLAINED_TICKS_PER_S * secs;
    if read_idle {
        for pid in skipped {
            // A shown one is read in full, so that it stays shown.
            let turn = !state.prev.get(&pid).is_some_and(|p| p.kept);
            let found = read_one(probe, state, pid, turn, now_ticks, time, secs);
            file(found, &mut seen, &mut out, &mut live);
        }
    } else {
        seen.extend(
            skipped
                .iter()
                .filter_map(|&pid| carry(state.prev.get(&pid)?, pid)),
        );
        out.total += idle.total;
        out.running += idle.running;
        out.blocked += idle.blocked;
        out.zombies += idle.zombies;
        out.kernel_threads += idle.kernel_threads;
        out.threads += idle.threads;
        live.extend(skipped);
    }
    seen.sort_unstable_by_key(|s| s.pid);
    for s in seen.iter().filter(|s| !s.carried) {
        count(&mut out, &s.stat);
        live.push(s.pid);
    }
    pick::read_io(probe, state, &mut seen, &mut out);
    for s in seen.iter_mut().filter(|s| !s.carried) {
        match state
            .prev
            .get(&s.pid)
            .filter(|p| p.stat.start == s.stat.start)
        {
            Some(p) => {
                let scale = own_scale(&p.at, time, secs);
                s.d_majflt = scaled(s.stat.majflt.saturating_sub(p.c.majflt), scale);
                s.d_rss = scaled(s.stat.rss_pages.saturating_sub(p.c.rss_pages), scale);
                s.rss_moved = s.stat.rss_pages != p.c.rss_pages;
                if let (Some((r, w)), Some(pr), Some(pw)) = (s.io, p.c.read_bytes, p.c.write_bytes)
                {
                    let d = r.saturating_sub(pr).saturating_add(w.saturating_sub(pw));
                    s.d_io = scaled(d, scale);
                }
            }
            None => {
                let life = |v| per_second_of_life(v, s.stat.start, now_ticks);
                s.d_majflt = life(s.stat.majflt);
                s.d_io = life(s.io.map_or(0, |(r, w)| r.saturating_add(w)));
                // A process new since the last pass grew from nothing; on the first pass every
                // process is new, and counting them all as moved read all of them again on the
                // second (2,000 files with 1,000 idle processes).
                s.rss_moved = state.last.is_some();
            }
        }
    }
    let keep = pick::choose(&seen, secs);
    for (i, s) in seen.into_iter().enumerate() {
        let Seen {
            pid,
            stat,
            io,
            carried,
            ..
        } = s;
        let c = TaskCounters {
            ticks: stat.ticks,
            majflt: stat.majflt,
            rss_pages: stat.rss_pages,
            read_bytes: io.map(|io| io.0),
            write_bytes: io.map(|io| io.1),
        };
        let before = state.prev.get(&pid).filter(|p| p.stat.start == stat.start);
        // Passes once in several samples: every process's rates are over its own two reads
        // (the previous sample is not the previous pass), shown ones included.
        let in_turns = every > 1;
        let base = before.filter(|p| in_turns || !p.kept).map(|p| p.c);
        // Read before the previous pass: the base's own time goes with it.
        let base_time = before
            .filter(|p| {
                in_turns
                    || (!p.kept
                        && state
                            .last
                            .as_ref()
                            .is_some_and(|l| l.wall_ms != p.at.wall_ms))
            })
            .map(|p| p.at.clone());
        // In D on this read and the one before (the same process): blocked since then.
        let d_since = match stat.state {
            'D' => before
                .and_then(|p| p.d_since)
                .or(time.uptime_s)
                .filter(|_| !carried),
            _ => None,
        };
        let d_since = match (carried, before) {
            (true, Some(p)) => p.d_since,
            _ => d_since,
        };
        let active = s.d_ticks > 0
            || s.d_io > 0
            || s.d_majflt > 0
            || s.rss_moved
            || matches!(stat.state, 'R' | 'D');
        if keep[i] {
            let cgroups = who::cgroup_of(probe, &mut state.cgroups, pid, stat.start);
            let kernel = stat.flags & PF_KTHREAD != 0;
            let wchan = who::wchan_of(probe, pid, stat.state);
            let cmdline = if kernel {
                None
            } else {
                state
                    .cmdlines
                    .get(&probe.root, (pid, stat.start), stat.state)
            };
            out.tasks.push(Task {
                pid,
                ppid: stat.ppid,
                start: stat.start,
                comm: stat.comm.to_string(),
                state: stat.state,
                kernel: stat.flags & PF_KTHREAD != 0,
                threads: stat.threads,
                cpu: stat.cpu,
                counters: c,
                cgroup: cgroups.main,
                memory_cgroup: cgroups.memory,
                cpu_cgroup: cgroups.cpu,
                blkio_cgroup: cgroups.blkio,
                cmdline,
                wchan,
                blocked_since: d_since,
                base,
                base_time,
            });
        }
        // A carried one keeps its last read's time: its next read measures from there.
        let at = match before.filter(|_| carried) {
            Some(p) => p.at.clone(),
            None => time.clone(),
        };
        let read = Prev {
            stat,
            c,
            kept: keep[i],
            active,
            at,
            d_since,
        };
        state.prev.insert(pid, read);
    }
    // What the next pass starts from when nothing forked: the processes there were, less the
    // ones that could not be read (exited). `live` is a subset of `prev`'s pids, so equal
    // sizes mean nothing exited.
    live.sort_unstable();
    if state.prev.len() != live.len() {
        state.prev.retain(|pid, _| live.binary_search(pid).is_ok());
    }
    state.pids = live;
    state.cgroups.retain(|pid, _| state.prev.contains_key(pid));
    let prev = &state.prev;
    state.cmdlines.retain(|(pid, start)| {
        prev.get(pid)
            .is_some_and(|p| p.kept && p.stat.start == *start)
    });
    if let Some(why) = state.cmdlines.trouble() {
        probe.note("proc/PID/cmdline", why);
    }
    state.last = Some(time.clone());
    state.last_busy = busy;
    state.last_out = (every > 1).then(|| out.clone());
    out
}

/// The pids to look at this pass. Listing `/proc` costs the kernel a dentry per process
/// (~0.45 ms for 1,100 processes on this project's VM, as much as reading an eighth of their
/// files), and only a fork can add a process: when `/proc/stat`'s fork count has not moved
/// since the last listing, the last pass's pids are the pids (less those found gone since).
/// A process that exits while idle is then counted until its turn to be read finds it gone,
/// at most `IDLE_EVERY` passes later (a shown one is checked every pass). Every fork and
/// thread counts in the fork count (`copy_process`), so nothing new is missed; `/proc` is
/// listed again anyway with the static caches (`forget`, every 300 samples). Listing it
/// every `IDLE_EVERY` passes as well, as perftop did until 2026-11-26, found nothing the
/// turns did not, at ~0.5 ms a listing on the idle 2-vCPU VM (66 processes, cold caches).
fn pids_now(probe: &mut Probe, state: &mut ProcState, forks: Option<u64>) -> Vec<u32> {
    let unchanged = forks.is_some() && forks == state.listed_at_forks;
    if unchanged {
        return std::mem::take(&mut state.pids);
    }
    state.listed_at_forks = forks;
    let mut pids: Vec<u32> = probe
        .root
        .list_dir("proc")
        .iter()
        .filter_map(|n| dec(n).and_then(|p| u32::try_from(p).ok()))
        .collect();
    pids.sort_unstable();
    pids
}

/// The first sample's command lines: waits (at most 200 ms, once) for the ones its process
/// pass asked for. Called when every other file of the sample has been read, so the wait
/// does not stretch the time between the sample's clock and its counters.
pub fn settle_first_cmdlines(probe: &Probe, state: &mut ProcState, out: &mut Processes) {
    if !state.cmdlines.settle_first() {
        return;
    }
    for t in out
        .tasks
        .iter_mut()
        .filter(|t| t.cmdline.is_none() && !t.kernel)
    {
        t.cmdline = state.cmdlines.get(&probe.root, (t.pid, t.start), t.state);
    }
}

/// What reading one process's `stat` found.
enum Found {
    Read(Seen),
    /// Read on its idle turn with nothing in its `stat` moved (`Stat::idle_since`): counted,
    /// and left as last read, `io` unread (on an idle host most turns end here, and `io`
    /// was half of what 1,000 idle processes cost). Its next read measures from the last.
    Unmoved(u32, Stat),
}

/// Files what `read_one` found: a process read joins `seen`, an unmoved one is counted.
fn file(found: Option<Found>, seen: &mut Vec<Seen>, out: &mut Processes, live: &mut Vec<u32>) {
    match found {
        Some(Found::Read(s)) => seen.push(s),
        Some(Found::Unmoved(pid, stat)) => {
            count(out, &stat);
            live.push(pid);
        }
        None => {}
    }
}

/// Reads one process's `stat` (`None`: gone since the listing, or garbled), with its CPU
/// ticks since it was last read scaled to this pass's `secs`. `turn`: read only because it
/// is its idle turn.
fn read_one(
    probe: &mut Probe,
    state: &mut ProcState,
    pid: u32,
    turn: bool,
    now_ticks: Option<u64>,
    time: &SampleTime,
    secs: f64,
) -> Option<Found> {
    let dir = format!("proc/{pid}");
    // An idle process is read on its turn, every `idle_every` passes: a schedule, so its
    // descriptor is kept between turns (`root::kept`) instead of opened by path each time.
    let every = if turn {
        crate::root::Every::Samples(u64::from(state.idle_every))
    } else {
        crate::root::Every::Sample
    };
    // Gone since the listing (ENOENT/ESRCH) or garbled: not a process this pass.
    let stat = probe
        .quiet_text_every(&dir, "stat", every)
        .and_then(|t| parse_stat(&t))?;
    let prev = state.prev.get(&pid).filter(|p| p.stat.start == stat.start);
    // A watched kernel thread is handed to the other panes as read now.
    let watched = state.watch.binary_search(&pid).is_ok();
    if turn && !watched && prev.is_some_and(|p| stat.idle_since(&p.stat)) {
        return Some(Found::Unmoved(pid, stat));
    }
    if watched {
        let since = prev
            .filter(|p| {
                state
                    .last
                    .as_ref()
                    .is_some_and(|l| l.wall_ms != p.at.wall_ms)
            })
            .map(|p| p.at.clone());
        let comm = stat.comm.to_string();
        let ticks = stat.ticks;
        state
            .read_now
            .insert(pid, ThreadRead { comm, ticks, since });
    }
    let (d_ticks, d_child_ticks) = match state.prev.get(&pid).filter(|p| p.stat.start == stat.start)
    {
        Some(p) => {
            let scale = own_scale(&p.at, time, secs);
            (
                scaled(stat.ticks.saturating_sub(p.c.ticks), scale),
                scaled(stat.child_ticks.saturating_sub(p.stat.child_ticks), scale),
            )
        }
        None => (per_second_of_life(stat.ticks, stat.start, now_ticks), 0),
    };
    Some(Found::Read(Seen {
        pid,
        stat,
        io: None,
        d_ticks,
        d_child_ticks,
        d_io: 0,
        d_majflt: 0,
        d_rss: 0,
        rss_moved: false,
        carried: false,
    }))
}

/// A process shown last pass and idle when last read, not read this pass: as last read, with
/// nothing done since (an idle process that wakes is caught by the pass's CPU check).
fn carry(p: &Prev, pid: u32) -> Option<Seen> {
    p.kept.then(|| Seen {
        pid,
        stat: p.stat.clone(),
        io: p.c.read_bytes.zip(p.c.write_bytes),
        d_ticks: 0,
        d_child_ticks: 0,
        d_io: 0,
        d_majflt: 0,
        d_rss: 0,
        rss_moved: false,
        carried: true,
    })
}

/// Counts one process of the pass by its state and kind.
fn count(out: &mut Processes, stat: &Stat) {
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
}
