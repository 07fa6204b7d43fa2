//! The storage stack under one block device: its queue settings (`queue/*`), the SCSI device's
//! `queue_depth` and `state`, and for device-mapper and md devices the devices under them
//! (`slaves/`) and whether a dm map is a multipath map (`dm/uuid` starts with `mpath-`).
//! Settings and states only; the counters stay in `DiskSample`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskStack {
    /// `queue/read_ahead_kb`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u64>,
    /// `queue/max_sectors_kb`: the largest request the block layer builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sectors_kb: Option<u64>,
    /// `queue/rq_affinity`: 0, 1 (complete on the submitting CPU's group) or 2 (on that CPU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rq_affinity: Option<u64>,
    /// Hardware queues (`mq/` entries): `nr_requests` is per hardware queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw_queues: Option<u64>,
    /// SCSI `device/queue_depth` (absent on virtio, NVMe, dm, md: not SCSI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u64>,
    /// SCSI `device/state`: `running`, `offline`, `blocked`, `transport-offline`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// `slaves/`: the devices a dm or md device is built on (a multipath map's paths).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slaves: Vec<String>,
    /// A device-mapper multipath map (`dm/uuid` is `mpath-...`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub multipath: bool,
}
