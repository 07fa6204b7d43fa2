//! The storage stack of each whole disk: queue settings (`read_ahead_kb`, `max_sectors_kb`,
//! `rq_affinity`, the hardware queue count), the SCSI device's `queue_depth` and `state`, and
//! the `slaves` of device-mapper and md devices (a multipath map's paths).
//!
//! Cost: every file here is a setting, read with the disk's others when they fall due together
//! (`disk::DiskCache`: within `Tier::refresh` samples, staggered by disk, on the sample after
//! a perftop write, and for a device that has never done I/O, on the sample its first shows),
//! except the `state` of a multipath map's paths, read every sample: it flips when a path
//! fails, and a failed path is what `mpath.path_down` must see at once. Whether a disk is
//! SCSI at all is asked once per static refresh (`device/scsi_device`), so a virtio or NVMe
//! disk pays for no SCSI file.

use super::Probe;
use crate::sample::{DiskSample, DiskStack};
use std::collections::HashSet;

/// Reads the state of every multipath map's paths (each disk's `stack` is its settings as
/// last read: `read_settings`, through `disk::DiskCache`).
pub fn read_path_states(probe: &mut Probe, disks: &mut [DiskSample]) {
    let paths: HashSet<String> = disks
        .iter()
        .filter_map(|d| d.stack.as_ref())
        .filter(|s| s.multipath)
        .flat_map(|s| s.slaves.iter().cloned())
        .collect();
    if paths.is_empty() {
        return;
    }
    for d in disks.iter_mut().filter(|d| paths.contains(&d.name)) {
        let rel = format!("sys/block/{}/device/state", d.name);
        if let Some(s) = d
            .stack
            .as_mut()
            .filter(|_| probe.static_is_dir(&scsi(&d.name)))
        {
            s.state = probe.line(&rel);
        }
    }
}

fn scsi(name: &str) -> String {
    format!("sys/block/{name}/device/scsi_device")
}

/// A whole disk's stack, every file read now (the disk's settings fall due together).
pub fn read_settings(probe: &mut Probe, name: &str) -> DiskStack {
    let dir = format!("sys/block/{name}");
    let q = format!("{dir}/queue");
    let mut s = DiskStack {
        read_ahead_kb: probe.setting_now_u64(&format!("{q}/read_ahead_kb")),
        max_sectors_kb: probe.setting_now_u64(&format!("{q}/max_sectors_kb")),
        rq_affinity: probe.setting_now_u64(&format!("{q}/rq_affinity")),
        ..DiskStack::default()
    };
    // The hardware queues change only when a driver resets its device: listed once per static
    // refresh, not with the settings (a directory listing is 5 syscalls, ~25 µs a disk here).
    let mq = probe.static_list_dir(&format!("{dir}/mq")).len();
    s.hw_queues = (mq > 0).then_some(mq as u64);
    if probe.static_is_dir(&scsi(name)) {
        s.queue_depth = probe.setting_now_u64(&format!("{dir}/device/queue_depth"));
        s.state = probe.setting_now(&format!("{dir}/device/state"), str::to_string);
    }
    if name.starts_with("dm-") || name.starts_with("md") {
        let mut slaves = probe.root.list_dir(&format!("{dir}/slaves"));
        slaves.sort();
        s.slaves = slaves;
    }
    if name.starts_with("dm-") {
        s.multipath = probe
            .static_line(&format!("{dir}/dm/uuid"))
            .is_some_and(|u| u.starts_with("mpath-"));
    }
    s
}
