//! Pressure rules: PSI memory/cpu/io, direct reclaim, swapping, OOM kills (and how long a kill
//! stays on the strip).

use super::*;
use perftop::sample::{Pressure, PsiLine, PsiResource};

/// PSI totals for one resource so the interval's `some`/`full` shares are the given percents.
pub(super) fn psi(
    p: &mut Pair,
    which: fn(&mut Pressure) -> &mut Option<PsiResource>,
    some: f64,
    full: f64,
) {
    let us = |pct: f64| (pct / 100.0 * p.secs * 1e6).round() as u64;
    let line = |total_us| PsiLine {
        avg10: 0.0,
        avg60: 0.0,
        avg300: 0.0,
        total_us,
    };
    let before = PsiResource {
        some: Some(line(5_000_000)),
        full: Some(line(1_000_000)),
    };
    let after = PsiResource {
        some: Some(line(5_000_000 + us(some))),
        full: Some(line(1_000_000 + us(full))),
    };
    *which(p.a.pressure.get_or_insert_with(Pressure::default)) = Some(before);
    *which(p.b.pressure.get_or_insert_with(Pressure::default)) = Some(after);
}

#[test]
fn memory_pressure_full_is_crit_some_is_warn() {
    let mut p = Pair::quiet(2.0);
    psi(&mut p, |x| &mut x.memory, 12.0, 10.0);
    let f = p.fires("memory.pressure");
    assert_eq!((f.severity.as_str(), f.pane.as_str()), ("crit", "pressure"));
    assert_eq!(
        f.message,
        "memory stalls: all tasks 10%, some 12% of the time (PSI)"
    );
    assert_eq!(f.tweak.as_deref(), Some("vm.swappiness"));
    psi(&mut p, |x| &mut x.memory, 29.9, 9.9);
    p.silent("memory.pressure");
    psi(&mut p, |x| &mut x.memory, 30.0, 0.0);
    assert_eq!(p.fires("memory.pressure").severity, "warn");
}

#[test]
fn cpu_and_io_pressure() {
    let mut p = Pair::quiet(2.0);
    psi(&mut p, |x| &mut x.cpu, 50.0, 0.0);
    assert_eq!(
        p.fires("cpu.pressure").message,
        "runnable tasks waited for a CPU 50% of the time (PSI cpu some)"
    );
    psi(&mut p, |x| &mut x.cpu, 49.9, 0.0);
    p.silent("cpu.pressure");
    psi(&mut p, |x| &mut x.io, 90.0, 20.0);
    assert_eq!(
        p.fires("io.pressure").message,
        "all non-idle tasks stalled on I/O 20% of the time (PSI io full)"
    );
    psi(&mut p, |x| &mut x.io, 90.0, 19.9);
    p.silent("io.pressure");
}

#[test]
fn no_psi_is_no_pressure_finding() {
    // Unknown is not 0 and not a stall: a kernel without PSI raises nothing.
    let mut p = Pair::quiet(2.0);
    p.b.pressure = Some(Pressure::default());
    for id in ["memory.pressure", "cpu.pressure", "io.pressure"] {
        p.silent(id);
    }
}

#[test]
fn direct_reclaim_by_stalls_or_scans() {
    let mut p = Pair::quiet(10.0);
    p.vm(|v| &mut v.allocstall, 1.0);
    let f = p.fires("memory.direct_reclaim");
    assert_eq!(
        f.message,
        "direct reclaim: 1 alloc stalls/s, 0 pages/s scanned by allocating tasks"
    );
    assert_eq!(f.tweak.as_deref(), Some("vm.min_free_kbytes"));
    p.vm(|v| &mut v.allocstall, 0.9);
    p.silent("memory.direct_reclaim");
    p.vm(|v| &mut v.pgscan_direct, 1000.0);
    p.fires("memory.direct_reclaim");
    p.vm(|v| &mut v.pgscan_direct, 999.0);
    p.silent("memory.direct_reclaim");
}

#[test]
fn swapping_counts_pages_in_and_out() {
    let mut p = Pair::quiet(10.0);
    p.vm(|v| &mut v.pswpin, 100.0);
    p.vm(|v| &mut v.pswpout, 156.0);
    // 256 pages/s of 4 kB: 400 kB/s in, 624 kB/s out.
    let f = p.fires("memory.swapping");
    assert_eq!(f.message, "swapping: in 400K/s, out 624K/s");
    p.vm(|v| &mut v.pswpout, 155.0);
    p.silent("memory.swapping");
}

#[test]
fn an_oom_kill_is_crit_at_once_and_stays_a_minute() {
    let mut p = Pair::quiet(1.0);
    p.a.memory.vmstat.oom_kill = Some(4);
    p.b.memory.vmstat.oom_kill = Some(4);
    p.silent("memory.oom_kill");
    p.b.memory.vmstat.oom_kill = Some(5);
    let f = p.fires("memory.oom_kill");
    assert_eq!(f.severity, "crit");
    assert!(
        f.message.starts_with("OOM killer: 1 process killed"),
        "{}",
        f.message
    );
    // On the strip: raised by the one sample (raise_after is 3 for the others), then kept for
    // oom_kill_hold_s (60 s) of quiet samples, gone on the first sample past it.
    let mut t = FindingTracker::new(Thresholds::default());
    let mut prev = p.b.clone();
    let kill = derive(Some(&p.a), &p.b).derived;
    assert_eq!(active_ids(&t.update(&kill)), ["memory.oom_kill"]);
    for second in 1..=61 {
        let mut next = prev.clone();
        next.time.uptime_s = prev.time.uptime_s.map(|u| u + 1.0);
        next.time.wall_ms = prev.time.wall_ms + 1000;
        let d = derive(Some(&prev), &next).derived;
        let ids = t.update(&d);
        if second < 60 {
            assert_eq!(active_ids(&ids), ["memory.oom_kill"], "second {second}");
        } else {
            assert!(ids.is_empty(), "second {second}: {ids:?}");
        }
        prev = next;
    }
}

fn active_ids(v: &[ActiveFinding]) -> Vec<&str> {
    v.iter().map(|a| a.finding.id.as_str()).collect()
}
