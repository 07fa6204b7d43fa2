//! Per-process rates (CPU %, I/O, major faults, RSS growth) of the processes a sample kept,
//! and the task counts, ranked by activity.

use super::{finite, Interval, USER_HZ};
use crate::sample::{Sample, Task, TaskCounters};
use serde::{Serialize, Serializer};

/// Processes in the JSON (`processes[]`): the top of the activity ranking.
pub const JSON_TOP: usize = 20;

/// One process over the interval.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ProcessMetrics {
    pub pid: u32,
    pub ppid: u32,
    pub comm: String,
    /// The one-letter state when read (`R`, `S`, `D`...).
    pub state: String,
    /// A kernel thread (shown as `[comm]`).
    pub kernel_thread: bool,
    pub threads: u32,
    /// The CPU it last ran on.
    pub last_cpu: Option<u32>,
    /// Share of one CPU (200 = two CPUs' worth), as top and htop show it.
    pub cpu_pct: Option<f64>,
    pub read_kb_per_s: Option<f64>,
    pub write_kb_per_s: Option<f64>,
    pub major_faults_per_s: Option<f64>,
    pub rss_kb: Option<u64>,
    /// RSS growth over the interval (negative: shrinking).
    pub rss_growth_kb_per_s: Option<f64>,
    pub cgroup: Option<String>,
    /// On cgroup v1, the memory, cpu and blkio controllers' own paths where they differ from
    /// `cgroup` (absent otherwise): what a v1 group's findings match processes by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_cgroup: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_cgroup: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blkio_cgroup: Option<String>,
    /// The command line, `null` until read (it is read off the sampling thread: from the
    /// sample after a process is first kept), for kernel threads and old recordings.
    pub cmdline: Option<String>,
    /// What a task in D waits in (`/proc/PID/wchan`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wchan: Option<String>,
    /// How long a task in D has been in D on consecutive reads, in seconds (0 on the first
    /// read it is in D); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_s: Option<f64>,
    /// The ranking key (see `activity`).
    #[serde(skip)]
    pub activity: f64,
}

/// Task counts of the whole host, from the same pass.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TaskCounts {
    pub total: u32,
    pub running: u32,
    /// In uninterruptible sleep (D): waiting on I/O or a lock; they count in the load average.
    pub blocked: u32,
    pub zombies: u32,
    pub kernel_threads: u32,
    pub threads: u64,
    /// How many `/proc/PID/io` files were read, and why I/O is unknown where it is.
    pub io_read: u32,
    pub io_unknown: Option<String>,
    /// Read once in this many samples (samples faster than a second), `None`: every sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub every: Option<u32>,
}

/// How much a process is doing, in one number to rank by: 1% of a CPU, 1 MiB/s of I/O, 10
/// major faults/s and being blocked (D) each weigh 1.
pub fn activity(m: &ProcessMetrics) -> f64 {
    let io = m.read_kb_per_s.unwrap_or(0.0) + m.write_kb_per_s.unwrap_or(0.0);
    m.cpu_pct.unwrap_or(0.0)
        + io / 1024.0
        + m.major_faults_per_s.unwrap_or(0.0) / 10.0
        + if m.state == "D" { 1.0 } else { 0.0 }
}

/// The kept processes with their rates, busiest first, and the task counts. Rates need the
/// same process (pid and start time) in the previous sample, or its `base` when the
/// previous sample is the pass the base was read in; with no previous sample they are
/// averages over the process's lifetime (as `ps` shows %CPU).
pub fn derive_processes(
    iv: Interval,
    prev: Option<&Sample>,
    cur: &Sample,
) -> (Vec<ProcessMetrics>, Option<TaskCounts>) {
    let Some(p) = cur.processes.as_ref() else {
        return (Vec::new(), None);
    };
    let page_kb = cur.memory.page_kb;
    let prev_procs = prev.and_then(|s| s.processes.as_ref());
    let prev_read = prev_procs.and_then(|pp| pp.at.as_ref());
    let adjacent =
        prev.is_some_and(|s| p.base_wall_ms == Some(prev_read.unwrap_or(&s.time).wall_ms));
    // Read once in several samples (samples faster than a second): every task's rates are
    // over its own two reads, `base` at `base_time` to this pass's read, on the pass's
    // sample and on the samples that carry it alike.
    let in_turns = p.every.is_some_and(|e| e > 1);
    let read_at = p.at.as_ref().unwrap_or(&cur.time);
    let mut out: Vec<ProcessMetrics> = p
        .tasks
        .iter()
        .map(|t| {
            let (base, iv) = if iv.since_boot {
                let zero = TaskCounters {
                    read_bytes: Some(0),
                    write_bytes: Some(0),
                    ..TaskCounters::default()
                };
                (Some(zero), lifetime(cur, t))
            } else if in_turns {
                match (&t.base, &t.base_time) {
                    (Some(_), Some(at)) => (t.base, Interval::of_times(Some(at), read_at)),
                    _ => (None, iv),
                }
            } else {
                let same = prev_procs.and_then(|pp| {
                    let i = pp.tasks.binary_search_by_key(&t.pid, |x| x.pid).ok()?;
                    let x = &pp.tasks[i];
                    (x.start == t.start).then_some(x.counters)
                });
                match (same, &t.base_time) {
                    // The previous sample carried an earlier pass (the interval just went
                    // from under a second to a second or more): over that pass's time.
                    // On a live host both passes carry their own read times.
                    (Some(same), _) => match prev_read {
                        Some(at) => (Some(same), Interval::of_times(Some(at), read_at)),
                        None => (Some(same), iv),
                    },
                    // Its base was read a few passes ago (an idle process read in turns).
                    (None, Some(at)) => (t.base, Interval::of_times(Some(at), read_at)),
                    (None, None) => (
                        t.base.filter(|_| adjacent),
                        prev_read.map_or(iv, |at| Interval::of_times(Some(at), read_at)),
                    ),
                }
            };
            let mut m = metrics(t, base.as_ref(), iv, page_kb);
            m.blocked_s = t
                .blocked_since
                .zip(read_at.uptime_s)
                .map(|(since, now)| (now - since).max(0.0))
                .filter(|s| s.is_finite());
            m.activity = activity(&m);
            m
        })
        .collect();
    out.sort_by(|a, b| b.activity.total_cmp(&a.activity).then(a.pid.cmp(&b.pid)));
    let counts = TaskCounts {
        total: p.total,
        running: p.running,
        blocked: p.blocked,
        zombies: p.zombies,
        kernel_threads: p.kernel_threads,
        threads: p.threads,
        io_read: p.io_read,
        io_unknown: p.io_unknown.clone(),
        every: p.every,
    };
    (out, Some(counts))
}

/// The interval a since-boot average of a process covers: its lifetime, at least a second.
fn lifetime(cur: &Sample, t: &Task) -> Interval {
    let secs = cur
        .time
        .uptime_s
        .map(|up| up - t.start as f64 / USER_HZ)
        .filter(|s| s.is_finite() && *s >= 0.0)
        // A process younger than a second: its exec's reads over 10 ms are not 600 MB/s.
        .map(|s| s.max(1.0));
    Interval {
        secs,
        since_boot: true,
    }
}

fn metrics(
    t: &Task,
    base: Option<&TaskCounters>,
    iv: Interval,
    page_kb: Option<u64>,
) -> ProcessMetrics {
    let c = &t.counters;
    let d = |cur: u64, prev: Option<u64>| prev.and_then(|p| cur.checked_sub(p));
    let per_s = |delta: Option<u64>| iv.rate(delta);
    let bytes_kb = |cur: Option<u64>, prev: Option<Option<u64>>| {
        per_s(d(cur?, prev.flatten())).map(|b| b / 1024.0)
    };
    let rss_kb = page_kb.map(|k| c.rss_pages.saturating_mul(k));
    let rss_growth = match (base, page_kb, iv.secs) {
        (Some(b), Some(k), Some(s)) if !iv.since_boot => {
            finite((c.rss_pages as f64 - b.rss_pages as f64) * k as f64 / s)
        }
        _ => None,
    };
    ProcessMetrics {
        pid: t.pid,
        ppid: t.ppid,
        comm: t.comm.clone(),
        state: t.state.to_string(),
        kernel_thread: t.kernel,
        threads: t.threads,
        last_cpu: t.cpu,
        cpu_pct: per_s(d(c.ticks, base.map(|b| b.ticks))).map(|ticks| ticks / USER_HZ * 100.0),
        read_kb_per_s: bytes_kb(c.read_bytes, base.map(|b| b.read_bytes)),
        write_kb_per_s: bytes_kb(c.write_bytes, base.map(|b| b.write_bytes)),
        major_faults_per_s: per_s(d(c.majflt, base.map(|b| b.majflt))),
        rss_kb,
        rss_growth_kb_per_s: rss_growth,
        cgroup: t.cgroup.clone(),
        memory_cgroup: t.memory_cgroup.clone(),
        cpu_cgroup: t.cpu_cgroup.clone(),
        blkio_cgroup: t.blkio_cgroup.clone(),
        cmdline: t.cmdline.clone(),
        wchan: t.wchan.clone(),
        blocked_s: None,
        activity: 0.0,
    }
}

/// Serializes the first `JSON_TOP` processes (the ranking's top).
pub fn top_json<S: Serializer>(v: &[ProcessMetrics], s: S) -> Result<S::Ok, S::Error> {
    Top(v).serialize(s)
}

/// The processes as the JSON holds them: the first `JSON_TOP`.
pub struct Top<'a>(pub &'a [ProcessMetrics]);

impl Serialize for Top<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0[..self.0.len().min(JSON_TOP)].serialize(s)
    }
}
