//! CPU power findings: `cpu.thermal_throttle`, a busy core or package clamped by its thermal
//! or power limit (when it holds, low MHz is the hardware's doing, so no governor change will
//! help), and `cpu.powersave_busy`, busy CPUs under a governor that ramps up late.

use super::{raise, Hit, Severity, Thresholds};
use crate::cpulist::CpuList;
use crate::derive::{Derived, ThrottleMetrics};
use std::collections::BTreeMap;

pub fn thermal_throttle(d: &Derived, t: &Thresholds) -> Option<Hit> {
    // Per entry: the share of the interval throttled where the kernel counts time (5.18+),
    // else any throttle event at all.
    let hit = |m: &ThrottleMetrics| match (m.throttled_pct, m.events_per_s) {
        (Some(p), _) => p >= t.thermal_throttle_pct,
        (None, Some(e)) => e > 0.0,
        (None, None) => false,
    };
    let busy = |m: &ThrottleMetrics| m.busy_pct.is_some_and(|b| b >= t.thermal_throttle_busy_pct);
    let hits: Vec<&ThrottleMetrics> = d
        .power
        .throttle
        .iter()
        .filter(|m| hit(m) && busy(m))
        .collect();
    // The worst: the longest throttled, then the most events; a package before its cores.
    let worst = hits.iter().copied().max_by(|a, b| {
        let key = |m: &ThrottleMetrics| {
            (
                m.throttled_pct.unwrap_or(0.0),
                m.events_per_s.unwrap_or(0.0),
            )
        };
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.scope.cmp(&b.scope))
    })?;
    let crit = worst
        .throttled_pct
        .is_some_and(|p| p >= t.thermal_throttle_pct_crit);
    let what = match (worst.scope, worst.package, worst.core) {
        (crate::sample::ThrottleScope::Package, Some(p), _) => format!("package {p}"),
        (_, p, Some(c)) => format!(
            "core {c}{}",
            p.map(|p| format!(" of package {p}")).unwrap_or_default()
        ),
        _ => "a core".to_string(),
    };
    let cpus = CpuList::from_ids(worst.cpus.clone()).to_string();
    let how = match worst.throttled_pct {
        Some(p) => format!("throttled {p:.0}% of the interval"),
        None => "throttled".to_string(),
    };
    let events = worst
        .events_per_s
        .map(|e| format!(" ({} events/s)", crate::units::compact(Some(e))))
        .unwrap_or_default();
    let others = hits.len() - 1;
    let more = if others > 0 {
        format!("; {others} more throttled")
    } else {
        String::new()
    };
    let msg = format!(
        "{what} (CPUs {cpus}) {how}{events} at {:.0}% busy: heat or power limits clamp it, \
         not the governor{more}",
        worst.busy_pct.unwrap_or(0.0)
    );
    let sev = if crit { Severity::Crit } else { Severity::Warn };
    Some(raise(sev, None, msg))
}

pub(super) fn powersave_busy(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let mut busy: BTreeMap<u32, &str> = BTreeMap::new();
    // By id through an index: a 4096-CPU host searched per policy CPU is 16M comparisons.
    let by_id: std::collections::HashMap<u32, &crate::derive::CpuMetrics> = d
        .cpus
        .iter()
        .filter(|c| c.online)
        .map(|c| (c.cpu, c))
        .collect();
    for p in &d.policies {
        let Some(gov) = p.governor.as_deref().filter(|g| *g != "performance") else {
            continue;
        };
        for id in &p.cpus {
            let c0 = by_id.get(id).and_then(|c| c.c0_pct);
            if c0.is_some_and(|c| c >= t.powersave_busy_pct) {
                busy.insert(*id, gov);
            }
        }
    }
    let online = d.cpus.iter().filter(|c| c.online).count().max(1);
    if busy.is_empty() || (busy.len() as f64) < t.powersave_busy_cpu_share * online as f64 {
        return None;
    }
    let mut govs: Vec<&str> = busy.values().copied().collect();
    govs.sort_unstable();
    govs.dedup();
    let msg = format!(
        "{} of {online} CPUs >= {:.0}% busy under governor {}: ramping adds latency",
        busy.len(),
        t.powersave_busy_pct,
        govs.join("/")
    );
    Some(raise(Severity::Info, Some("governor"), msg))
}
