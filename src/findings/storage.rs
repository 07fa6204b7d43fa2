//! Storage stack rules: `disk.queue_full` (requests wait in the host because the device's
//! queue — SCSI `queue_depth`, else `nr_requests` per hardware queue — is nearly full),
//! `mpath.path_down` (a multipath path's SCSI state is not `running`) and `mpath.path_idle`
//! (one running path of a multipath map carries nearly all its I/O).
//!
//! sysfs does not say whether a map's path groups are multibus or failover (that is in the
//! dm table, `dmsetup table`/`multipath -ll`), so `mpath.path_idle` is judged on every map with
//! two or more running paths and says, at `info`, that a failover map does this by design.

use super::{worst, Hit, Severity, Thresholds};
use crate::derive::{Derived, DiskMetrics};

fn label(m: &DiskMetrics) -> String {
    match &m.dm_name {
        Some(n) => format!("{n} ({})", m.disk_device),
        None => m.disk_device.clone(),
    }
}

/// Completions per second (reads, writes, discards): the I/O a path carries.
fn ios(m: &DiskMetrics) -> Option<f64> {
    let v: Vec<f64> = [m.r_s, m.w_s, m.d_s].into_iter().flatten().collect();
    (!v.is_empty()).then(|| v.iter().sum())
}

/// The multipath maps and their paths as found in `disks[]` (a path not listed is skipped).
fn maps(d: &Derived) -> impl Iterator<Item = (&DiskMetrics, Vec<&DiskMetrics>)> {
    d.disks.iter().filter(|m| m.stack.multipath).map(|map| {
        let paths = map
            .stack
            .slaves
            .iter()
            .filter_map(|s| d.disks.iter().find(|m| &m.disk_device == s))
            .collect();
        (map, paths)
    })
}

pub fn queue_full(d: &Derived, t: &Thresholds) -> Option<Hit> {
    d.interval_s?;
    let mut hits = Vec::new();
    let mut tweak = None;
    for m in d.disks.iter().filter(|m| !m.partition) {
        let Some((pct, limit, what)) = m.queue_fill_pct() else {
            continue;
        };
        if pct < t.disk_queue_full_pct {
            continue;
        }
        let knob = match what {
            "queue_depth" => format!("scsi.{}.queue_depth", m.disk_device),
            _ => format!("disk.{}.nr_requests", m.disk_device),
        };
        let per_queue = match (what, m.stack.hw_queues) {
            ("nr_requests", Some(q)) if q > 1 => format!(" ({q} queues)"),
            _ => String::new(),
        };
        let msg = format!(
            "{}: {} in flight, aqu-sz {} = {pct:.0}% of {what} {limit}{per_queue}: \
             requests wait in the host, not the device ({knob})",
            label(m),
            m.inflight.map_or("-".to_string(), |n| n.to_string()),
            m.aqu_sz.map_or("-".to_string(), |a| format!("{a:.1}")),
        );
        hits.push((Severity::Warn, pct, msg, knob));
    }
    hits.sort_by(|a, b| b.1.total_cmp(&a.1));
    if let Some(h) = hits.first() {
        tweak = Some(h.3.clone());
    }
    let hits = hits.into_iter().map(|(s, v, m, _)| (s, v, m)).collect();
    worst(tweak.as_deref(), hits)
}

pub fn path_down(d: &Derived) -> Option<Hit> {
    d.interval_s?;
    let mut hits = Vec::new();
    for (map, paths) in maps(d) {
        let down: Vec<&&DiskMetrics> = paths
            .iter()
            .filter(|p| {
                p.stack
                    .device_state
                    .as_deref()
                    .is_some_and(|s| s != "running")
            })
            .collect();
        if down.is_empty() {
            continue;
        }
        let running = paths
            .iter()
            .filter(|p| p.stack.device_state.as_deref() == Some("running"))
            .count();
        let which: Vec<String> = down
            .iter()
            .map(|p| {
                format!(
                    "{} {}",
                    p.disk_device,
                    p.stack.device_state.as_deref().unwrap_or("-")
                )
            })
            .collect();
        let (sev, left) = if running == 0 {
            (Severity::Crit, "no running path left".to_string())
        } else {
            (
                Severity::Warn,
                format!("{running} of {} running", paths.len()),
            )
        };
        let msg = format!("{}: path {}: {left}", label(map), which.join(", path "));
        hits.push((sev, down.len() as f64, msg));
    }
    worst(None, hits)
}

pub fn path_idle(d: &Derived, t: &Thresholds) -> Option<Hit> {
    d.interval_s?;
    let mut hits = Vec::new();
    for (map, paths) in maps(d) {
        let running: Vec<(&DiskMetrics, f64)> = paths
            .iter()
            .filter(|p| p.stack.device_state.as_deref() == Some("running"))
            .filter_map(|p| Some((*p, ios(p)?)))
            .collect();
        if running.len() < 2 {
            continue;
        }
        let total: f64 = running.iter().map(|(_, n)| n).sum();
        if total < t.mpath_min_ios_per_s {
            continue;
        }
        let Some((top, n)) = running.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
            continue;
        };
        let share = n / total;
        if share < t.mpath_path_idle_share {
            continue;
        }
        let msg = format!(
            "{}: {} carries {:.0}% of {total:.0} IO/s over {} running paths: the others idle \
             (by design on a failover map; on multibus check the path selector)",
            label(map),
            top.disk_device,
            share * 100.0,
            running.len()
        );
        hits.push((Severity::Info, share, msg));
    }
    worst(None, hits)
}
