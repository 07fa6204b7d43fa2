//! Processes as read from `/proc/PID/{stat,io,cgroup}`: the counts of every task state, and
//! the cumulative counters of the few processes worth keeping (see `source::processes`).

use serde::{Deserialize, Serialize};

/// One pass over `/proc`. Every process is counted; only the busiest, the biggest and the
/// blocked are kept, so a recording of an idle host stays small.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Processes {
    /// Processes listed (kernel threads included; threads of a process are not processes).
    pub total: u32,
    /// In state R, D and Z when read.
    pub running: u32,
    pub blocked: u32,
    pub zombies: u32,
    pub kernel_threads: u32,
    /// Threads of all processes (the `num_threads` sum).
    pub threads: u64,
    /// Wall time of the previous pass (its `at`, or its sample's stamp when it had none),
    /// which every `Task::base` was read in: derive uses a task's base only when the previous
    /// sample is that pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_wall_ms: Option<i64>,
    /// How many `io` files were read: all of them on a small host, the busiest and blocked
    /// processes' on a big one (`source::processes::IO_ALL_MAX`).
    pub io_read: u32,
    /// Why I/O counters are unknown, when they are for some process (not root, no task I/O
    /// accounting in the kernel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_unknown: Option<String>,
    /// The kept processes, by pid.
    pub tasks: Vec<Task>,
    /// Read once in this many samples (samples faster than a second read processes about
    /// once a second, `source::processes::ProcState::pass_due`); `None`: every sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<u32>,
    /// When the pass read them: on a live host its own start, taken just before the `stat`
    /// reads (a pass runs 5-100 ms after the sample's stamp, by a different amount each
    /// sample, and a rate over the stamps' interval was that much off: a burner at 98% of a
    /// CPU read 92% on a first interval); on a sample between passes, the carried pass's time,
    /// so the rates are that pass's. `None`: at the stamp (a fixture root, older recordings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<super::SampleTime>,
}

/// One process's cumulative counters and state when read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub pid: u32,
    pub ppid: u32,
    /// Start time in clock ticks after boot: with the pid, who this process is (a reused pid
    /// is a new process, with no rates).
    pub start: u64,
    /// `comm` as the kernel prints it (may hold spaces, parentheses, control characters).
    pub comm: String,
    /// The one-letter state (`R`, `S`, `D`, `Z`, `T`, `I`...).
    pub state: char,
    /// A kernel thread (PF_KTHREAD): shown as `[comm]`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kernel: bool,
    pub threads: u32,
    /// The CPU it last ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<u32>,
    #[serde(flatten)]
    pub counters: TaskCounters,
    /// The cgroup path (the unified one on v2; on v1 the `name=systemd`, else `memory`,
    /// else `cpu` controller's), `None` when it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    /// On cgroup v1, the memory, cpu and blkio controllers' paths where they differ from
    /// `cgroup` (a group made in one hierarchy alone); `None` where they are the same, on v2
    /// and in older recordings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_cgroup: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_cgroup: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blkio_cgroup: Option<String>,
    /// The command line (arguments parted by spaces, at most 256 bytes), `None` until read,
    /// for kernel threads, and in recordings made before perftop read it (see
    /// `source::processes::cmdline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<String>,
    /// What it waits in (`/proc/PID/wchan`: a kernel function such as `percpu_rwsem_wait`),
    /// read for a task in D only; `None` otherwise, when the kernel says `0` (not root) and in
    /// older recordings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wchan: Option<String>,
    /// In D: when (seconds since boot, the pass's `uptime_s`) it was first read in D on
    /// consecutive passes. Equal to the read's own time on the first pass it is in D.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_since: Option<f64>,
    /// The counters at the previous pass, for a process the previous pass did not keep (so
    /// its rates are known from the first sample it is kept in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<TaskCounters>,
    /// When `base` was read, where that was before the previous pass (an idle process is
    /// read in turns, `source::processes`): its rates are over its own interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_time: Option<super::SampleTime>,
}

/// The counters rates are computed from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskCounters {
    /// utime + stime, in USER_HZ ticks.
    pub ticks: u64,
    pub majflt: u64,
    /// Resident pages (`stat` field 24), in the sample's page size.
    pub rss_pages: u64,
    /// `io` read_bytes / write_bytes: what the process made the block layer read and dirtied
    /// for writing. `None` when unreadable (another user's without root) or not read this
    /// pass (a big host reads `io` of the busiest processes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes: Option<u64>,
}
