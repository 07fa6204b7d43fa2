//! Kernel threads whose CPU time perftop reports: `ksoftirqd/N` (softirq work deferred out of
//! interrupt context) and the memory threads (kswapd, kcompactd, khugepaged), found by one scan
//! of `proc/` and then read by pid: the process pass reads their `stat` (every sample while
//! they work, in turns while idle: `ProcState::always`, `memory_work`) and hands over what it
//! read; between passes (samples faster than a second) a working one is read on its own
//! (`ThreadReads`).

use super::parse::dec;
use super::processes::{ProcState, ThreadRead};
use super::Probe;
use crate::sample::{KernelThread, MemoryThread, VmStat};

/// The `/proc/vmstat` counters that move when a memory thread works: kswapd's reclaim runs
/// and scans, kcompactd's wakes, khugepaged's collapses. While none moves the threads are
/// idle and read in turns like any idle process (three `stat` reads a sample, ~36 µs, on a
/// host whose memory is quiet); when one does they are read every sample. Work that moves
/// none of these (khugepaged scanning without collapsing) shows as CPU the pass cannot
/// explain, which reads every idle process.
pub fn memory_work(vm: &VmStat) -> [Option<u64>; 6] {
    [
        vm.pageoutrun,
        vm.pgscan_kswapd,
        vm.pgsteal_kswapd,
        vm.compact_daemon_wake,
        vm.thp_collapse_alloc,
        vm.thp_collapse_alloc_failed,
    ]
}

/// True when the memory threads are read every sample: the first sample, a `memory_work`
/// counter moved, or none can be read (unknown is not idle).
pub fn memory_threads_due(before: Option<&[Option<u64>; 6]>, now: &[Option<u64>; 6]) -> bool {
    now.iter().all(Option::is_none) || before != Some(now)
}

impl KthreadPids {
    /// The memory threads' pids: the process pass reads them every sample while they work.
    pub fn memory_pids(&self) -> Vec<u32> {
        self.memory.iter().map(|(pid, _)| *pid).collect()
    }

    /// Every pid this module reports, for the process pass to hand over.
    pub fn all(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.ksoftirqd.iter().map(|&(_, pid)| pid).collect();
        v.extend(self.memory_pids());
        v
    }
}

/// A thread as the process pass saw it, else read now.
fn pass_or_read(probe: &mut Probe, procs: &ProcState, pid: u32) -> Option<ThreadRead> {
    if let Some(t) = procs.thread(pid) {
        return Some(t);
    }
    read_now(probe, pid)
}

fn read_now(probe: &mut Probe, pid: u32) -> Option<ThreadRead> {
    let text = probe.quiet_text(&format!("proc/{pid}"), "stat")?;
    let (comm, ticks) = stat_comm_ticks(&text)?;
    Some(ThreadRead {
        comm: comm.to_string(),
        ticks,
        since: None,
    })
}

/// The watched threads' last reads. When samples come faster than a second the process pass
/// runs about once a second (`ProcState::pass_due`); between passes a thread that worked at
/// its last read (or a memory thread while memory work moves, `ProcState::always`) is read
/// on its own, one `stat` each, and an idle one is carried as last read. A thread read after
/// an earlier read than the previous sample's says since when (`since`): its growth is over
/// that interval.
#[derive(Debug, Default)]
pub struct ThreadReads {
    last: foldhash::HashMap<u32, LastRead>,
    /// The previous sample's time and this one's.
    prev: Option<crate::sample::SampleTime>,
    now: Option<crate::sample::SampleTime>,
}

#[derive(Debug)]
struct LastRead {
    comm: String,
    ticks: u64,
    at: crate::sample::SampleTime,
    active: bool,
}

impl LastRead {
    fn of(t: &ThreadRead, at: crate::sample::SampleTime, active: bool) -> LastRead {
        LastRead {
            comm: t.comm.clone(),
            ticks: t.ticks,
            at,
            active,
        }
    }
}

impl ThreadReads {
    /// A new sample, taken at `time`.
    pub fn begin(&mut self, time: &crate::sample::SampleTime) {
        self.prev = self.now.replace(time.clone());
    }

    /// `pid` this sample: from the pass when it ran, else read or carried (see the type).
    fn get(&mut self, probe: &mut Probe, procs: &ProcState, pid: u32) -> Option<ThreadRead> {
        let last = self.last.get(&pid);
        let fresh = if procs.passed {
            procs.fresh_thread(pid)
        } else if last.is_none_or(|l| l.active) || procs.always.binary_search(&pid).is_ok() {
            read_now(probe, pid)
        } else {
            None
        };
        let now = self.now.clone()?;
        match fresh {
            Some(t) => {
                let since = last
                    .filter(|l| self.prev.as_ref().is_none_or(|p| p.wall_ms != l.at.wall_ms))
                    .map(|l| l.at.clone());
                let active = last.is_some_and(|l| l.ticks != t.ticks);
                self.last.insert(pid, LastRead::of(&t, now, active));
                Some(ThreadRead { since, ..t })
            }
            None => match last {
                Some(l) => Some(ThreadRead {
                    comm: l.comm.clone(),
                    ticks: l.ticks,
                    since: None,
                }),
                // Not read yet and not read by the pass: as the pass last saw it, else now.
                None => {
                    let t = pass_or_read(probe, procs, pid)?;
                    self.last.insert(pid, LastRead::of(&t, now, false));
                    Some(t)
                }
            },
        }
    }

    /// Forgets the threads not in `pids` (gone, or no longer watched).
    pub fn retain(&mut self, pids: &[u32]) {
        self.last.retain(|pid, _| pids.contains(pid));
    }
}

/// Kernel threads found by one scan of `proc/` (cached, and redone when one vanishes), so each
/// sample costs one small read per thread.
#[derive(Debug, Clone, Default)]
pub struct KthreadPids {
    /// (cpu, pid) of each `ksoftirqd/N`.
    pub ksoftirqd: Vec<(u32, u32)>,
    /// (pid, comm) of each kswapd, kcompactd and khugepaged thread.
    pub memory: Vec<(u32, String)>,
}

/// Memory-management threads: `kswapdN`, `kcompactdN` (one per node), `khugepaged`.
pub fn is_memory_thread(comm: &str) -> bool {
    comm.starts_with("kswapd") || comm.starts_with("kcompactd") || comm == "khugepaged"
}

/// utime+stime of each `ksoftirqd/N`.
pub fn read_ksoftirqd(
    probe: &mut Probe,
    pids: &mut Option<KthreadPids>,
    procs: &ProcState,
    reads: &mut ThreadReads,
) -> Vec<KernelThread> {
    let found = pids
        .get_or_insert_with(|| scan_kthreads(probe))
        .ksoftirqd
        .clone();
    let read: Vec<Option<KernelThread>> = found
        .into_iter()
        .map(|(cpu, pid)| match reads.get(probe, procs, pid) {
            Some(t) if is_ksoftirqd_of(&t.comm, cpu) => Some(KernelThread {
                cpu,
                pid,
                ticks: t.ticks,
                since: t.since,
            }),
            _ => None,
        })
        .collect();
    // A thread that vanished (CPU offlined, pid reused): find them all again next time.
    if read.iter().any(Option::is_none) {
        *pids = None;
    }
    read.into_iter().flatten().collect()
}

/// utime+stime of each memory-management thread.
pub fn read_memory_threads(
    probe: &mut Probe,
    pids: &mut Option<KthreadPids>,
    procs: &ProcState,
    reads: &mut ThreadReads,
) -> Vec<MemoryThread> {
    let found = pids
        .get_or_insert_with(|| scan_kthreads(probe))
        .memory
        .clone();
    let read: Vec<Option<MemoryThread>> = found
        .into_iter()
        .map(|(pid, want)| match reads.get(probe, procs, pid) {
            Some(t) if t.comm == want => Some(MemoryThread {
                comm: want,
                pid,
                ticks: t.ticks,
                since: t.since,
            }),
            _ => None,
        })
        .collect();
    if read.iter().any(Option::is_none) {
        *pids = None;
    }
    read.into_iter().flatten().collect()
}

/// `comm == format!("ksoftirqd/{cpu}")`, without formatting a string per thread per sample.
fn is_ksoftirqd_of(comm: &str, cpu: u32) -> bool {
    comm.strip_prefix("ksoftirqd/")
        .is_some_and(|n| (n == "0" || !n.starts_with('0')) && dec(n) == Some(u64::from(cpu)))
}

/// `comm` and utime+stime of a `/proc/PID/stat` line. Parsed here because procfs-core's `Stat`
/// slices the line around the parens and panics on a garbled one (a reused pid, a bad root).
fn stat_comm_ticks(text: &str) -> Option<(&str, u64)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?;
    // state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
    let mut rest = text.get(close + 1..)?.split_ascii_whitespace();
    let utime = dec(rest.nth(11)?)?;
    let stime = dec(rest.next()?)?;
    Some((comm, utime.saturating_add(stime)))
}

pub fn scan_kthreads(probe: &mut Probe) -> KthreadPids {
    let mut found = KthreadPids::default();
    for name in probe.root.list_dir("proc") {
        let Some(pid) = dec(&name).and_then(|p| u32::try_from(p).ok()) else {
            continue;
        };
        let dir = format!("proc/{pid}");
        let Some(comm) = probe.quiet_text(&dir, "comm") else {
            continue;
        };
        let comm = comm.trim();
        if let Some(cpu) = comm.strip_prefix("ksoftirqd/").and_then(dec) {
            if let Ok(cpu) = u32::try_from(cpu) {
                found.ksoftirqd.push((cpu, pid));
            }
        } else if is_memory_thread(comm) {
            let comm = comm.to_string();
            found.memory.push((pid, comm));
        }
    }
    found.ksoftirqd.sort_unstable();
    found.memory.sort_unstable();
    found
}
