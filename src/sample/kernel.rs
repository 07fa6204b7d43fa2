//! Kernel events read from `/dev/kmsg` in one sample: the OOM killer's victims, hung tasks,
//! block I/O errors, soft lockups and NIC link changes (`source::kmsg` reads and parses them).

use serde::{Deserialize, Serialize};

/// What `/dev/kmsg` said since the previous sample. Only the records that arrived in this
/// sample's read are here: a recording keeps each event once, with the sample it arrived in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelEvents {
    /// Why the kernel log could not be read (not root, `dmesg_restrict`, no `/dev/kmsg`):
    /// events are then unknown, never "none".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<KernelEvent>,
    /// The OOM killer's victims (each is also an `oom_kill` event).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub oom_victims: Vec<OomVictim>,
    /// Records the kernel overwrote before perftop read them (EPIPE; counted from the
    /// sequence numbers): events may be missing.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost: u64,
    /// The per-sample bound (`source::kmsg::MAX_RECORDS`, `MAX_BYTES`) stopped the read: the
    /// rest is read by the next sample.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// One kernel log record of a kind perftop names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelEvent {
    /// `oom_kill`, `hung_task`, `io_error`, `soft_lockup`, `link_down`, `link_up`.
    pub kind: String,
    /// Seconds since boot, as the kernel stamped the record (what `dmesg` prints).
    pub time: f64,
    /// The record's text (at most `source::kmsg::MAX_MESSAGE` bytes, lossily decoded).
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comm: Option<String>,
    /// The block device (`io_error`) or network interface (`link_down`, `link_up`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
}

/// A process the OOM killer killed, from its `oom-kill:` and `Killed process` lines.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OomVictim {
    pub pid: u32,
    pub comm: String,
    /// `task_memcg`: the victim's memory cgroup (`None`: the kernel did not print one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anon_rss_kb: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_rss_kb: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shmem_rss_kb: Option<u64>,
    /// `CONSTRAINT_NONE` (the machine), `CONSTRAINT_MEMCG` (a cgroup's limit), ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraint: Option<String>,
    /// Seconds since boot (the `Killed process` record's stamp).
    pub time: f64,
}
