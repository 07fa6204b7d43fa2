//! Disk metrics with the semantics and names of `iostat -x` (sysstat 12.x).
//!
//! Formulas follow sysstat's `compute_ext_disk_stats` and `write_ext_stat`: per-type awaits and
//! request sizes are 0.00 when no request of that type completed (as iostat prints), `aqu-sz` is
//! Δtime_in_queue/Δt, `%util` is Δio_ticks/Δt — not capped, as sysstat 12.6 does not cap it
//! either (io_ticks can run ahead of the uptime clock by a tick or two). The kernel prints every *_ticks
//! field as 32-bit ms, so those deltas are wrap-corrected; the I/O counts are 64-bit and a drop
//! means the device was re-created, which makes the whole interval unknown.

use super::{ratio, Interval};
use crate::sample::{DiskSample, Sample};
use serde::Serialize;
use std::collections::HashMap;

#[derive(Debug, Clone, Default, Serialize)]
pub struct DiskMetrics {
    pub disk_device: String,
    pub partition: bool,
    pub dm_name: Option<String>,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
    pub inflight: Option<u64>,
    /// Requests in flight at the end of the interval and none completed during it: a hung
    /// device. iostat shows it only as w/s 0.00 with %util 100 (aqu-sz stays 0: the kernel adds
    /// a request's queue time when it completes).
    pub stalled: bool,
    /// NVMe, device-mapper, md, rbd...: requests are served in parallel, so %util near 100 does
    /// not mean saturated; lead with aqu-sz and await.
    pub parallel: bool,
    /// No I/O since boot (`DiskSample::never_used`): its settings may be as old as the static
    /// refresh, and are read again on its first I/O.
    pub never_used: bool,
    #[serde(rename = "r/s")]
    pub r_s: Option<f64>,
    #[serde(rename = "w/s")]
    pub w_s: Option<f64>,
    #[serde(rename = "d/s")]
    pub d_s: Option<f64>,
    #[serde(rename = "f/s")]
    pub f_s: Option<f64>,
    #[serde(rename = "rkB/s")]
    pub rkb_s: Option<f64>,
    #[serde(rename = "wkB/s")]
    pub wkb_s: Option<f64>,
    #[serde(rename = "dkB/s")]
    pub dkb_s: Option<f64>,
    #[serde(rename = "rrqm/s")]
    pub rrqm_s: Option<f64>,
    #[serde(rename = "wrqm/s")]
    pub wrqm_s: Option<f64>,
    #[serde(rename = "drqm/s")]
    pub drqm_s: Option<f64>,
    /// %rrqm: merged / (merged + issued) reads.
    pub rrqm: Option<f64>,
    pub wrqm: Option<f64>,
    pub drqm: Option<f64>,
    pub r_await: Option<f64>,
    pub w_await: Option<f64>,
    pub d_await: Option<f64>,
    pub f_await: Option<f64>,
    #[serde(rename = "rareq-sz")]
    pub rareq_sz: Option<f64>,
    #[serde(rename = "wareq-sz")]
    pub wareq_sz: Option<f64>,
    #[serde(rename = "dareq-sz")]
    pub dareq_sz: Option<f64>,
    #[serde(rename = "aqu-sz")]
    pub aqu_sz: Option<f64>,
    pub util: Option<f64>,
    /// Queue settings, SCSI depth and state, dm/md slaves (`derive::storage`).
    #[serde(flatten)]
    pub stack: super::storage::StackMetrics,
}

/// Device families that serve many requests at once.
pub fn is_parallel(name: &str) -> bool {
    ["nvme", "dm-", "md", "rbd", "nbd", "zram", "loop"]
        .iter()
        .any(|p| name.starts_with(p))
}

pub fn derive_disks(iv: Interval, prev: Option<&Sample>, cur: &Sample) -> Vec<DiskMetrics> {
    // Pair by (name, major, minor): a name reused by another device is a different disk.
    let before: HashMap<(&str, u32, u32), &DiskSample> = prev
        .map(|p| {
            p.disks
                .iter()
                .map(|x| ((x.name.as_str(), x.major, x.minor), x))
                .collect()
        })
        .unwrap_or_default();
    cur.disks
        .iter()
        .map(|d| {
            let p = before.get(&(d.name.as_str(), d.major, d.minor)).copied();
            derive_disk(iv, p, d)
        })
        .collect()
}

/// Per-type deltas of one request kind (read, write, discard, flush).
struct Kind {
    ios: u64,
    merges: Option<u64>,
    sectors: Option<u64>,
    ticks: Option<u64>,
}

fn derive_disk(iv: Interval, p: Option<&DiskSample>, c: &DiskSample) -> DiskMetrics {
    let mut m = DiskMetrics {
        disk_device: c.name.clone(),
        partition: !c.whole_disk,
        dm_name: c.dm_name.clone(),
        rotational: c.rotational,
        scheduler: c.scheduler.clone(),
        inflight: c
            .inflight
            .map(|[r, w]| r.saturating_add(w))
            .or(Some(c.in_flight)),
        parallel: is_parallel(&c.name),
        never_used: c.never_used(),
        stack: super::storage::derive_stack(c),
        ..DiskMetrics::default()
    };
    let (Some(secs), true) = (iv.secs, iv.since_boot || p.is_some()) else {
        return m;
    };
    let full = c.fields >= 11;
    let pv = |f: fn(&DiskSample) -> u64| p.map(f);
    let pvo = |f: fn(&DiskSample) -> Option<u64>| p.and_then(f);
    let count = |f: fn(&DiskSample) -> u64| iv.d64(pv(f), f(c));
    let ticks = |f: fn(&DiskSample) -> u64| if full { iv.d32(pv(f), f(c)) } else { None };

    let (Some(r_ios), Some(w_ios)) = (count(|d| d.read_ios), count(|d| d.write_ios)) else {
        return m; // counts went down: the device was re-created
    };
    let read = Kind {
        ios: r_ios,
        merges: if full { count(|d| d.read_merges) } else { None },
        sectors: count(|d| d.read_sectors),
        ticks: ticks(|d| d.read_ticks),
    };
    let write = Kind {
        ios: w_ios,
        merges: if full {
            count(|d| d.write_merges)
        } else {
            None
        },
        sectors: count(|d| d.write_sectors),
        ticks: ticks(|d| d.write_ticks),
    };
    let discard = c.discard_ios.and_then(|ios| {
        Some(Kind {
            ios: iv.d64(pvo(|d| d.discard_ios), ios)?,
            merges: iv.d64(pvo(|d| d.discard_merges), c.discard_merges?),
            sectors: iv.d64(pvo(|d| d.discard_sectors), c.discard_sectors?),
            ticks: iv.d32(pvo(|d| d.discard_ticks), c.discard_ticks?),
        })
    });
    let flush = c.flush_ios.and_then(|ios| {
        Some(Kind {
            ios: iv.d64(pvo(|d| d.flush_ios), ios)?,
            merges: None,
            sectors: None,
            ticks: iv.d32(pvo(|d| d.flush_ticks), c.flush_ticks?),
        })
    });

    let per_s = |v: Option<u64>| v.map(|v| v as f64 / secs);
    let kb_s = |v: Option<u64>| v.map(|v| v as f64 / 2.0 / secs);
    // iostat prints 0.00 for await/size/%merged when no request of that kind completed.
    let per_io = |v: Option<u64>, ios: u64, scale: f64| {
        v.map(|v| ratio(v as f64, ios as f64).map_or(0.0, |x| x / scale))
    };
    let pct_merged = |k: &Kind| {
        k.merges
            .map(|mg| ratio(mg as f64 * 100.0, mg as f64 + k.ios as f64).unwrap_or(0.0))
    };

    m.r_s = per_s(Some(read.ios));
    m.w_s = per_s(Some(write.ios));
    m.rkb_s = kb_s(read.sectors);
    m.wkb_s = kb_s(write.sectors);
    m.rrqm_s = per_s(read.merges);
    m.wrqm_s = per_s(write.merges);
    m.rrqm = pct_merged(&read);
    m.wrqm = pct_merged(&write);
    m.r_await = per_io(read.ticks, read.ios, 1.0);
    m.w_await = per_io(write.ticks, write.ios, 1.0);
    m.rareq_sz = per_io(read.sectors, read.ios, 2.0);
    m.wareq_sz = per_io(write.sectors, write.ios, 2.0);
    if let Some(k) = &discard {
        m.d_s = per_s(Some(k.ios));
        m.dkb_s = kb_s(k.sectors);
        m.drqm_s = per_s(k.merges);
        m.drqm = pct_merged(k);
        m.d_await = per_io(k.ticks, k.ios, 1.0);
        m.dareq_sz = per_io(k.sectors, k.ios, 2.0);
    }
    if let Some(k) = &flush {
        m.f_s = per_s(Some(k.ios));
        m.f_await = per_io(k.ticks, k.ios, 1.0);
    }
    let none_completed = [Some(&read), Some(&write), discard.as_ref(), flush.as_ref()]
        .into_iter()
        .flatten()
        .all(|k| k.ios == 0);
    m.stalled = !iv.since_boot && none_completed && m.inflight.is_some_and(|n| n > 0);
    if full {
        m.aqu_sz = iv
            .d32(pv(|d| d.time_in_queue), c.time_in_queue)
            .map(|v| v as f64 / (secs * 1000.0));
        m.util = iv
            .d32(pv(|d| d.io_ticks), c.io_ticks)
            .map(|v| v as f64 / (secs * 1000.0) * 100.0);
    }
    m
}
