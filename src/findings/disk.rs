//! Disk rules: `disk.stalled` (requests in flight, none completed) and `disk.saturated` (a queue
//! building, await far above the device's own baseline or its class's limit).

use super::Hit;
use super::{worst, Baselines, Severity, Thresholds};
use crate::derive::{Derived, DiskMetrics};

/// (completions per second, their mean await in ms) over reads, writes and discards, as the
/// `await` column of older iostat. Flushes are left out: their latency is the cache's, not the queue's.
pub fn disk_await(m: &DiskMetrics) -> Option<(f64, f64)> {
    let kinds = [(m.r_s, m.r_await), (m.w_s, m.w_await), (m.d_s, m.d_await)];
    let (mut ios, mut weighted) = (0.0, 0.0);
    for (n, a) in kinds {
        if let Some(n) = n {
            ios += n;
            weighted += n * a?;
        }
    }
    Some((ios, if ios > 0.0 { weighted / ios } else { 0.0 }))
}

fn label(m: &DiskMetrics) -> String {
    match &m.dm_name {
        Some(n) => format!("{} ({n})", m.disk_device),
        None => m.disk_device.clone(),
    }
}

/// Requests in flight and nothing completed over the whole interval: a hung device, path or
/// controller. aqu-sz and await cannot show it (the kernel adds a request's time only when it
/// completes), so the rule reads the in-flight count (`derive::disk` sets `stalled`).
pub fn stalled(d: &Derived) -> Option<Hit> {
    let secs = d.interval_s?;
    let hits = d
        .disks
        .iter()
        .filter(|m| !m.partition && m.stalled)
        .map(|m| {
            let n = m.inflight.unwrap_or(0);
            let msg = format!(
                "{}: {n} request(s) in flight, none completed in {secs:.1}s: stalled",
                label(m)
            );
            (Severity::Crit, n as f64, msg)
        })
        .collect();
    worst(None, hits)
}

pub fn saturated(d: &Derived, t: &Thresholds, baseline: Option<&Baselines>) -> Option<Hit> {
    d.interval_s?;
    let mut hits: Vec<(Severity, f64, String)> = Vec::new();
    for m in d.disks.iter().filter(|m| !m.partition) {
        let Some(aqu) = m.aqu_sz.filter(|a| *a >= t.disk_aqu_sz) else {
            continue;
        };
        // Nothing completed: aqu-sz came from requests that finished earlier, and a device
        // with requests still in flight is `disk.stalled`'s.
        let Some((_, wait)) = disk_await(m).filter(|(ios, _)| *ios > 0.0) else {
            continue;
        };
        let sev = if aqu >= t.disk_aqu_sz_crit {
            Severity::Crit
        } else {
            Severity::Warn
        };
        let name = label(m);
        let base = baseline
            .and_then(|b| b.get(&m.disk_device))
            .filter(|b| b.samples >= t.disk_baseline_min_samples);
        let msg = match base {
            Some(b) => {
                let limit = (b.await_ms * t.disk_await_vs_baseline).max(t.disk_await_min_ms);
                if wait < limit {
                    continue;
                }
                format!(
                    "{name} aqu-sz {aqu:.1}, await {wait:.1}ms vs usual {:.1}ms: queue building",
                    b.await_ms
                )
            }
            None => {
                let rotational = m.rotational.unwrap_or(!m.parallel);
                let limit = if rotational {
                    t.disk_await_rotational_ms
                } else {
                    t.disk_await_ssd_ms
                };
                if wait < limit {
                    continue;
                }
                format!("{name} aqu-sz {aqu:.1}, await {wait:.1}ms (>= {limit}ms): queue building")
            }
        };
        hits.push((sev, aqu, msg));
    }
    worst(None, hits)
}
