//! `cpu.thermal_throttle`: a busy core or package clamped by its thermal or power limit. When
//! it holds, low MHz is the hardware's doing, so no governor change will help.

use super::{finding, Finding, Severity, Thresholds};
use crate::cpulist::CpuList;
use crate::derive::{Derived, ThrottleMetrics};
use crate::pane::Pane;

pub fn thermal_throttle(d: &Derived, t: &Thresholds) -> Option<Finding> {
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
    Some(finding(
        "cpu.thermal_throttle",
        sev,
        Pane::Cpu.name(),
        None,
        msg,
    ))
}
