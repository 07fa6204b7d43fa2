//! The storage stack of one disk as `disks[]` reports it: queue settings, the SCSI depth and
//! state (or why they are unknown), the limit requests queue against in the host, and a
//! device-mapper or md device's slaves. Settings need no interval; they are the current sample's.

use crate::sample::DiskSample;
use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize)]
pub struct StackMetrics {
    pub nr_requests: Option<u64>,
    pub read_ahead_kb: Option<u64>,
    pub max_sectors_kb: Option<u64>,
    pub rq_affinity: Option<u64>,
    /// Hardware queues: `nr_requests` applies to each.
    pub hw_queues: Option<u64>,
    /// SCSI `device/queue_depth`; `None` with `queue_depth_unknown` saying why.
    pub queue_depth: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_depth_unknown: Option<String>,
    /// SCSI `device/state` (`running`, `offline`, ...); `None` where the disk is not SCSI.
    pub device_state: Option<String>,
    /// The devices a dm or md device is built on; empty for everything else.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub slaves: Vec<String>,
    /// A device-mapper multipath map (`dm/uuid` `mpath-...`): its slaves are its paths.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub multipath: bool,
}

impl StackMetrics {
    /// Requests the host queues before the device: (limit, which file set it). The SCSI
    /// `queue_depth` is the device's own limit and the tighter one where there is one; else
    /// `nr_requests` times the hardware queues (it is per queue). A device with no hardware
    /// queue (bio-based dm, md) has none: its `nr_requests` limits nothing it counts.
    pub fn queue_limit(&self) -> Option<(u64, &'static str)> {
        if let Some(q) = self.queue_depth.filter(|q| *q > 0) {
            return Some((q, "queue_depth"));
        }
        let n = self.nr_requests.filter(|n| *n > 0)?;
        Some((n.saturating_mul(self.hw_queues?), "nr_requests"))
    }
}

impl super::DiskMetrics {
    /// How full the host-side queue is: the deeper of in-flight and aqu-sz as a share (%) of
    /// `queue_limit`, with the limit and its name. `None` when there is no limit or neither
    /// depth is known. The finding and the zoomed table both judge it from here.
    pub fn queue_fill_pct(&self) -> Option<(f64, u64, &'static str)> {
        let (limit, what) = self.stack.queue_limit()?;
        let depth = match (self.inflight, self.aqu_sz) {
            (None, None) => return None,
            (i, a) => (i.unwrap_or(0) as f64).max(a.unwrap_or(0.0)),
        };
        Some((depth / limit as f64 * 100.0, limit, what))
    }
}

pub fn derive_stack(c: &DiskSample) -> StackMetrics {
    let s = c.stack.clone().unwrap_or_default();
    let queue_depth_unknown = match (&c.stack, s.queue_depth) {
        (_, Some(_)) => None,
        (None, _) if c.whole_disk => Some("not read (recording made before perftop read it)"),
        (None, _) => None,
        (Some(st), None) if st.state.is_some() => Some("SCSI device/queue_depth unreadable"),
        (Some(_), None) => Some("not SCSI (no device/queue_depth)"),
    };
    StackMetrics {
        nr_requests: c.nr_requests,
        read_ahead_kb: s.read_ahead_kb,
        max_sectors_kb: s.max_sectors_kb,
        rq_affinity: s.rq_affinity,
        hw_queues: s.hw_queues,
        queue_depth: s.queue_depth,
        queue_depth_unknown: queue_depth_unknown.map(str::to_string),
        device_state: s.state,
        slaves: s.slaves,
        multipath: s.multipath,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::DiskStack;

    #[test]
    fn limit_and_reasons() {
        let mut d = DiskSample {
            name: "vda".into(),
            whole_disk: true,
            nr_requests: Some(256),
            stack: Some(DiskStack {
                hw_queues: Some(2),
                ..DiskStack::default()
            }),
            ..DiskSample::default()
        };
        let m = derive_stack(&d);
        assert_eq!(m.queue_limit(), Some((512, "nr_requests")));
        assert_eq!(
            m.queue_depth_unknown.as_deref(),
            Some("not SCSI (no device/queue_depth)")
        );
        d.stack = Some(DiskStack {
            queue_depth: Some(32),
            state: Some("running".into()),
            ..DiskStack::default()
        });
        let m = derive_stack(&d);
        assert_eq!(m.queue_limit(), Some((32, "queue_depth")));
        assert_eq!(m.queue_depth_unknown, None);
        d.stack = Some(DiskStack::default());
        assert_eq!(
            derive_stack(&d).queue_limit(),
            None,
            "no hardware queue: bio-based"
        );
        d.stack = None;
        assert!(derive_stack(&d).queue_depth_unknown.is_some());
        d.whole_disk = false;
        assert_eq!(derive_stack(&d).queue_depth_unknown, None);
    }
}
