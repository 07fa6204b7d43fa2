//! Disks in a sample: one `/proc/diskstats` line per device with its queue settings.

use super::DiskStack;
use serde::{Deserialize, Serialize};

/// One `/proc/diskstats` line. Counts are 64-bit; the kernel prints the *_ticks, io_ticks and
/// time_in_queue fields as 32-bit unsigned ms, so they wrap (derive handles that).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskSample {
    pub name: String,
    pub major: u32,
    pub minor: u32,
    /// Number of stat fields after the name: 4 (2.6 partitions), 11, 15 (discard, 4.18), 17 (flush, 5.5).
    pub fields: u8,
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks: u64,
    pub in_flight: u64,
    pub io_ticks: u64,
    pub time_in_queue: u64,
    pub discard_ios: Option<u64>,
    pub discard_merges: Option<u64>,
    pub discard_sectors: Option<u64>,
    pub discard_ticks: Option<u64>,
    pub flush_ios: Option<u64>,
    pub flush_ticks: Option<u64>,
    /// True when `sys/block/<name>` exists (a whole disk, not a partition).
    pub whole_disk: bool,
    pub dm_name: Option<String>,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
    pub nr_requests: Option<u64>,
    /// `sys/block/<dev>/inflight`: reads, writes.
    pub inflight: Option<[u64; 2]>,
    /// Queue settings, SCSI depth and state, dm/md slaves (`None`: partitions, older recordings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<DiskStack>,
}

impl DiskSample {
    /// The device has done no I/O since boot and holds none: every counter of its
    /// `/proc/diskstats` line is zero (iostat leaves such devices out unless asked for `ALL`).
    /// The loop devices the kernel makes ahead of use and an unconfigured zram are such.
    pub fn never_used(&self) -> bool {
        [self.read_ios, self.write_ios, self.in_flight, self.io_ticks]
            .iter()
            .all(|&n| n == 0)
            && [self.discard_ios, self.flush_ios]
                .iter()
                .all(|n| n.unwrap_or(0) == 0)
    }
}
