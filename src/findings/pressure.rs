//! Memory-pressure and stall findings: PSI (memory, cpu, io), direct reclaim, swapping and OOM
//! kills. Each reads only the interval's `pressure` and `memory` numbers.

use super::{raise, Hit, Severity, Thresholds};
use crate::derive::Derived;

pub(super) fn oom_kill(d: &Derived) -> Option<Hit> {
    let victims = &d.memory.oom_victims;
    // The counter, or the kernel log's victims when the counter is unknown (or lagged).
    let n = d
        .memory
        .reclaim
        .oom_kills
        .unwrap_or(0)
        .max(victims.len() as u64);
    if n == 0 {
        return None;
    }
    let avail = d
        .memory
        .mem_available_kb
        .map(|kb| format!(", {} available", crate::units::kb(Some(kb))))
        .unwrap_or_default();
    let what = if n == 1 {
        "1 process".to_string()
    } else {
        format!("{n} processes")
    };
    let named = super::kernel::victims(victims);
    let who = match (named.is_empty(), d.host.kernel_events_unknown.is_some()) {
        (false, _) => format!(": {named}"),
        // The log could not be read (not root): say where the name is.
        (true, true) => " (dmesg names it)".to_string(),
        // Read, and no victim line arrived with the counter (it may come next sample).
        (true, false) => String::new(),
    };
    Some(super::happened(
        Severity::Crit,
        format!("OOM killer: {what} killed{avail}{who}"),
    ))
}

pub(super) fn memory_pressure(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let m = d.pressure.memory.as_ref()?;
    let (some, full) = (m.some_pct.unwrap_or(0.0), m.full_pct.unwrap_or(0.0));
    if full < t.memory_psi_full_pct && some < t.memory_psi_some_pct {
        return None;
    }
    let sev = if full >= t.memory_psi_full_pct {
        Severity::Crit
    } else {
        Severity::Warn
    };
    Some(raise(
        sev,
        Some("vm.swappiness"),
        format!("memory stalls: all tasks {full:.0}%, some {some:.0}% of the time (PSI)"),
    ))
}

pub(super) fn direct_reclaim(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let r = &d.memory.reclaim;
    let stalls = r.allocstall_per_s.unwrap_or(0.0);
    let scans = r.pgscan_direct_per_s.unwrap_or(0.0);
    if stalls < t.direct_reclaim_allocstall_per_s && scans < t.direct_reclaim_scan_per_s {
        return None;
    }
    Some(raise(Severity::Warn, Some("vm.min_free_kbytes"), format!(
            "direct reclaim: {stalls:.0} alloc stalls/s, {scans:.0} pages/s scanned by allocating tasks"
        )))
}

pub(super) fn swapping(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let r = &d.memory.reclaim;
    let page_kb = d.memory.page_kb.max(1) as f64;
    let kb = r.swap_in_kb_per_s.unwrap_or(0.0) + r.swap_out_kb_per_s.unwrap_or(0.0);
    if kb / page_kb < t.swapping_pages_per_s {
        return None;
    }
    Some(raise(
        Severity::Warn,
        Some("vm.swappiness"),
        format!(
            "swapping: in {}/s, out {}/s",
            crate::units::kb(r.swap_in_kb_per_s.map(|x| x as u64)),
            crate::units::kb(r.swap_out_kb_per_s.map(|x| x as u64))
        ),
    ))
}

pub(super) fn cpu_pressure(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let some = d.pressure.cpu.as_ref()?.some_pct?;
    (some >= t.cpu_psi_some_pct).then(|| {
        raise(
            Severity::Warn,
            None,
            format!("runnable tasks waited for a CPU {some:.0}% of the time (PSI cpu some)"),
        )
    })
}

pub(super) fn io_pressure(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let full = d.pressure.io.as_ref()?.full_pct?;
    (full >= t.io_psi_full_pct).then(|| {
        raise(
            Severity::Warn,
            None,
            format!("all non-idle tasks stalled on I/O {full:.0}% of the time (PSI io full)"),
        )
    })
}
