//! Filesystem space and temperature sensors as the sysinfo thread last read them
//! (`source::filesystems`), copied into each live sample with the time of that read.
//!
//! These are the only sample fields read off the sampling thread: `statvfs` on a hung NFS or
//! FUSE mount never returns, so a sample carries the latest finished read and when it finished,
//! and derive says how old it is. A `--root` fixture and recordings made before perftop read them
//! have neither (`None`: unknown, "live host only").

use serde::{Deserialize, Serialize};

/// When the thread's read was taken, on the sample's own clock (`SampleTime::boottime_ns`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadAt {
    /// CLOCK_BOOTTIME (ns) when the read these values come from finished; `None` while the
    /// thread's first read has not finished (a mount that does not answer from the start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ns: Option<u64>,
    /// CLOCK_BOOTTIME (ns) when the thread started: how long a first read has been waited for.
    pub started_ns: u64,
    /// How often the thread reads, in ms; derive calls a read older than three of these stale.
    pub period_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Filesystems {
    pub at: ReadAt,
    /// Sorted by mount point; one entry per filesystem (bind mounts and overlay copies of a
    /// filesystem already listed are left out).
    #[serde(default)]
    pub mounts: Vec<Filesystem>,
}

/// One mounted filesystem's `statvfs`, in bytes (blocks × `f_frsize`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Filesystem {
    pub mount: String,
    /// The mount source as `/proc/mounts` names it (`/dev/vda`, `tmpfs`).
    pub device: String,
    pub fstype: String,
    /// `f_blocks`: the size df reports.
    pub size_bytes: u64,
    /// `f_bfree`: free blocks, root's reserve included (df's "used" is size − this).
    pub free_bytes: u64,
    /// `f_bavail`: what an unprivileged writer can still use (df's "Avail").
    pub avail_bytes: u64,
    /// `f_files` / `f_ffree`; `None` where the filesystem has no inode limit (reports 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inodes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inodes_free: Option<u64>,
    /// `ST_RDONLY`: mounted read-only (nothing can fill it).
    pub read_only: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Temperatures {
    pub at: ReadAt,
    /// Empty when the host has no hwmon sensor (most VMs): read, and none there.
    #[serde(default)]
    pub sensors: Vec<Sensor>,
}

/// One hwmon temperature channel, in °C to one decimal.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sensor {
    /// sysinfo's label: the chip, then the channel (`coretemp Package id 0`, `k10temp Tctl`).
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub celsius: Option<f64>,
    /// The highest value sysinfo saw since perftop started (`tempN_max` where there is one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_c: Option<f64>,
    /// The chip's `tempN_crit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critical_c: Option<f64>,
}
