//! Kernel threads whose CPU time perftop reports: `ksoftirqd/N` (softirq work deferred out of
//! interrupt context) and the memory threads (kswapd, kcompactd, khugepaged), found by one scan
//! of `proc/` and then read by pid: the process pass reads their `stat` (every sample while
//! they work, in turns while idle: `ProcState::always`, `memory_work`) and hands over what it
//! read.

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
fn comm_ticks(probe: &mut Probe, procs: &ProcState, pid: u32) -> Option<ThreadRead> {
    if let Some(t) = procs.thread(pid) {
        return Some(t);
    }
    let text = probe.quiet_text(&format!("proc/{pid}"), "stat")?;
    let (comm, ticks) = stat_comm_ticks(&text)?;
    Some(ThreadRead {
        comm: comm.to_string(),
        ticks,
        since: None,
    })
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
) -> Vec<KernelThread> {
    let found = pids
        .get_or_insert_with(|| scan_kthreads(probe))
        .ksoftirqd
        .clone();
    let read: Vec<Option<KernelThread>> = found
        .into_iter()
        .map(|(cpu, pid)| match comm_ticks(probe, procs, pid) {
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
) -> Vec<MemoryThread> {
    let found = pids
        .get_or_insert_with(|| scan_kthreads(probe))
        .memory
        .clone();
    let read: Vec<Option<MemoryThread>> = found
        .into_iter()
        .map(|(pid, want)| match comm_ticks(probe, procs, pid) {
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
