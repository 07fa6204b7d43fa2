//! Memory pressure: PSI shares of the interval (cpu, memory, io, irq), and reclaim, swap, OOM
//! kills and the memory kernel threads' CPU from `/proc/vmstat` and `/proc/PID/stat`.

use super::{Interval, USER_HZ};
use crate::sample::{PsiLine, PsiResource, Sample, VmStat};
use serde::Serialize;

/// `/proc/pressure/*` over the interval. A resource is `None` when the kernel has no file for
/// it (irq needs `CONFIG_IRQ_TIME_ACCOUNTING`), and `unknown` says why all are missing.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PressureMetrics {
    pub cpu: Option<PsiMetrics>,
    pub memory: Option<PsiMetrics>,
    pub io: Option<PsiMetrics>,
    pub irq: Option<PsiMetrics>,
    /// Why there are no PSI numbers at all (null when there are).
    pub unknown: Option<String>,
}

/// One resource: `*_pct` is the share of the interval (on perftop's clock) that some / all
/// non-idle tasks were stalled, from the kernel's microsecond totals; `*_avg*` are the
/// kernel's own running averages at the end of the interval.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PsiMetrics {
    pub some_pct: Option<f64>,
    pub full_pct: Option<f64>,
    pub some_avg10: Option<f64>,
    pub some_avg60: Option<f64>,
    pub some_avg300: Option<f64>,
    pub full_avg10: Option<f64>,
    pub full_avg60: Option<f64>,
    pub full_avg300: Option<f64>,
}

pub const PSI_NOT_ENABLED: &str = "PSI not enabled (boot with psi=1)";
/// `(major, minor)` of a kernel release (`3.10.0-1160.el7.x86_64` gives (3, 10)).
pub fn kernel_major_minor(release: &str) -> Option<(u32, u32)> {
    let mut it = release.split(|c: char| !c.is_ascii_digit());
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// Why there are no PSI files: a kernel before 4.18 has none (PSI came in 4.20; RHEL 8's 4.18
/// carries it backported, off unless booted with `psi=1`), a later one was built or booted
/// without it.
pub fn psi_missing_reason(kernel: Option<&str>) -> String {
    match kernel.and_then(kernel_major_minor) {
        Some(v) if v < (4, 18) => format!(
            "no /proc/pressure: Linux {}.{} predates PSI (4.20)",
            v.0, v.1
        ),
        _ => PSI_NOT_ENABLED.into(),
    }
}

pub const PSI_NOT_RECORDED: &str = "not in this recording (made before perftop read PSI)";

pub fn derive_pressure(iv: Interval, prev: Option<&Sample>, cur: &Sample) -> PressureMetrics {
    let Some(p) = &cur.pressure else {
        return PressureMetrics {
            unknown: Some(PSI_NOT_RECORDED.into()),
            ..Default::default()
        };
    };
    let before = prev.and_then(|s| s.pressure.as_ref());
    let one = |cur: &Option<PsiResource>, prev: Option<&Option<PsiResource>>| {
        let c = cur.as_ref()?;
        let p = prev.and_then(Option::as_ref);
        Some(psi(iv, p, c))
    };
    let m = PressureMetrics {
        cpu: one(&p.cpu, before.map(|b| &b.cpu)),
        memory: one(&p.memory, before.map(|b| &b.memory)),
        io: one(&p.io, before.map(|b| &b.io)),
        irq: one(&p.irq, before.map(|b| &b.irq)),
        unknown: None,
    };
    let none = m.cpu.is_none() && m.memory.is_none() && m.io.is_none() && m.irq.is_none();
    PressureMetrics {
        unknown: none.then(|| psi_missing_reason(cur.host.kernel.as_deref())),
        ..m
    }
}

fn psi(iv: Interval, prev: Option<&PsiResource>, cur: &PsiResource) -> PsiMetrics {
    let share = |c: Option<&PsiLine>, p: Option<&PsiLine>| -> Option<f64> {
        let c = c?;
        let us = iv.d64(p.map(|p| p.total_us), c.total_us)?;
        // Stall time over the interval's time, both in µs; clamped because the kernel's
        // totals and perftop's clock are read a few µs apart.
        Some((us as f64 / (iv.secs? * 1e6) * 100.0).clamp(0.0, 100.0))
    };
    let (s, f) = (cur.some.as_ref(), cur.full.as_ref());
    PsiMetrics {
        some_pct: share(s, prev.and_then(|p| p.some.as_ref())),
        full_pct: share(f, prev.and_then(|p| p.full.as_ref())),
        some_avg10: s.map(|l| l.avg10),
        some_avg60: s.map(|l| l.avg60),
        some_avg300: s.map(|l| l.avg300),
        full_avg10: f.map(|l| l.avg10),
        full_avg60: f.map(|l| l.avg60),
        full_avg300: f.map(|l| l.avg300),
    }
}

/// Reclaim, swap and OOM over the interval, and the policy that steers them. Part of the
/// `memory` JSON object.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReclaimMetrics {
    /// SwapTotal - SwapFree.
    pub swap_used_kb: Option<u64>,
    /// pswpin / pswpout in kB/s (vmstat's si / so).
    pub swap_in_kb_per_s: Option<f64>,
    pub swap_out_kb_per_s: Option<f64>,
    /// Pages per second, as `sar -B` prints them.
    pub major_faults_per_s: Option<f64>,
    pub pgscan_kswapd_per_s: Option<f64>,
    pub pgscan_direct_per_s: Option<f64>,
    pub pgsteal_kswapd_per_s: Option<f64>,
    pub pgsteal_direct_per_s: Option<f64>,
    /// Pages scanned / reclaimed by every reclaimer, cgroup limit reclaim included (which the
    /// kswapd/direct counters leave out): `pgscan_anon + pgscan_file`, `pgsteal_anon +
    /// pgsteal_file`.
    pub pgscan_per_s: Option<f64>,
    pub pgsteal_per_s: Option<f64>,
    /// Every `allocstall_*` summed: allocations that had to reclaim themselves.
    pub allocstall_per_s: Option<f64>,
    pub workingset_refault_per_s: Option<f64>,
    /// OOM kills in the interval (since boot when `since_boot`).
    pub oom_kills: Option<u64>,
    /// CPU% (of one CPU) of the kswapd threads, the kcompactd threads and khugepaged.
    pub kswapd_pct: Option<f64>,
    pub kcompactd_pct: Option<f64>,
    pub khugepaged_pct: Option<f64>,
    pub swappiness: Option<u64>,
    pub min_free_kbytes: Option<u64>,
    pub watermark_scale_factor: Option<u64>,
    pub overcommit_memory: Option<u64>,
    pub overcommit_ratio: Option<u64>,
    pub zone_reclaim_mode: Option<u64>,
}

pub fn derive_reclaim(
    iv: Interval,
    prev: Option<&Sample>,
    cur: &Sample,
    page_kb: u64,
) -> ReclaimMetrics {
    let vm = &cur.memory.vmstat;
    let pvm = prev.map(|p| &p.memory.vmstat);
    let d = |f: fn(&VmStat) -> Option<u64>| iv.d64(pvm.and_then(f), f(vm)?);
    let rate = |f: fn(&VmStat) -> Option<u64>| iv.rate(d(f));
    let kb_rate = |f: fn(&VmStat) -> Option<u64>| rate(f).map(|r| r * page_kb as f64);
    let mi = &cur.memory.meminfo;
    let sys = &cur.memory.vm;
    ReclaimMetrics {
        swap_used_kb: mi
            .swap_total
            .zip(mi.swap_free)
            .map(|(t, f)| t.saturating_sub(f)),
        swap_in_kb_per_s: kb_rate(|v| v.pswpin),
        swap_out_kb_per_s: kb_rate(|v| v.pswpout),
        major_faults_per_s: rate(|v| v.pgmajfault),
        pgscan_kswapd_per_s: rate(|v| v.pgscan_kswapd),
        pgscan_direct_per_s: rate(|v| v.pgscan_direct),
        pgsteal_kswapd_per_s: rate(|v| v.pgsteal_kswapd),
        pgsteal_direct_per_s: rate(|v| v.pgsteal_direct),
        pgscan_per_s: rate(|v| Some(v.pgscan_anon? + v.pgscan_file?)),
        pgsteal_per_s: rate(|v| Some(v.pgsteal_anon? + v.pgsteal_file?)),
        allocstall_per_s: rate(|v| v.allocstall),
        workingset_refault_per_s: rate(|v| v.workingset_refault),
        oom_kills: d(|v| v.oom_kill),
        kswapd_pct: thread_pct(iv, prev, cur, |c| c.starts_with("kswapd")),
        kcompactd_pct: thread_pct(iv, prev, cur, |c| c.starts_with("kcompactd")),
        khugepaged_pct: thread_pct(iv, prev, cur, |c| c == "khugepaged"),
        swappiness: sys.swappiness,
        min_free_kbytes: sys.min_free_kbytes,
        watermark_scale_factor: sys.watermark_scale_factor,
        overcommit_memory: sys.overcommit_memory,
        overcommit_ratio: sys.overcommit_ratio,
        zone_reclaim_mode: sys.zone_reclaim_mode,
    }
}

/// CPU% of the threads whose comm matches, summed; a thread counts only when the same pid was
/// in the previous sample (a restarted thread's ticks start again). Unknown when none is seen.
/// A thread read in turns (`since`) grew over its own interval, not the sample's.
fn thread_pct(
    iv: Interval,
    prev: Option<&Sample>,
    cur: &Sample,
    is: fn(&str) -> bool,
) -> Option<f64> {
    let mut pct = None;
    for t in cur.memory.kthreads.iter().filter(|t| is(&t.comm)) {
        let before = prev.and_then(|p| {
            p.memory
                .kthreads
                .iter()
                .find(|o| o.pid == t.pid && o.comm == t.comm)
                .map(|o| o.ticks)
        });
        let own = match &t.since {
            Some(at) if !iv.since_boot => Interval::of_times(Some(at), &cur.time),
            _ => iv,
        };
        if let Some(r) = own.rate(iv.d64(before, t.ticks)) {
            *pct.get_or_insert(0.0) += r / USER_HZ * 100.0;
        }
    }
    pct
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::{MemoryThread, Pressure};

    fn line(total_us: u64) -> PsiLine {
        PsiLine {
            avg10: 12.5,
            avg60: 3.0,
            avg300: 0.75,
            total_us,
        }
    }

    fn sample(uptime: f64, some: u64, full: u64) -> Sample {
        let mut s = Sample::default();
        s.time.uptime_s = Some(uptime);
        s.pressure = Some(Pressure {
            memory: Some(PsiResource {
                some: Some(line(some)),
                full: Some(line(full)),
            }),
            ..Default::default()
        });
        s
    }

    #[test]
    fn shares_are_stall_time_over_interval_time() {
        // 2 s apart; 500 ms of `some` stall and 100 ms of `full`: 25% and 5%, by hand.
        let a = sample(100.0, 1_000_000, 200_000);
        let b = sample(102.0, 1_500_000, 300_000);
        let p = derive_pressure(Interval::between(Some(&a), &b), Some(&a), &b);
        let m = p.memory.expect("memory");
        assert_eq!(m.some_pct, Some(25.0));
        assert_eq!(m.full_pct, Some(5.0));
        assert_eq!((m.some_avg10, m.full_avg300), (Some(12.5), Some(0.75)));
        assert!(p.cpu.is_none() && p.unknown.is_none());
        // A counter that went back (a reset) is unknown, not a negative share; over 100% clamps.
        let c = sample(103.0, 1_000, 3_000_000);
        let m = derive_pressure(Interval::between(Some(&b), &c), Some(&b), &c)
            .memory
            .expect("m");
        assert_eq!((m.some_pct, m.full_pct), (None, Some(100.0)));
    }

    #[test]
    fn missing_psi_says_why() {
        let mut s = Sample::default();
        s.time.uptime_s = Some(10.0);
        let iv = Interval::between(None, &s);
        assert_eq!(
            derive_pressure(iv, None, &s).unknown.as_deref(),
            Some(PSI_NOT_RECORDED)
        );
        s.pressure = Some(Pressure::default());
        assert_eq!(
            derive_pressure(iv, None, &s).unknown.as_deref(),
            Some(PSI_NOT_ENABLED)
        );
    }

    #[test]
    fn reclaim_rates_and_threads() {
        let mut a = Sample::default();
        a.time.uptime_s = Some(50.0);
        a.memory.vmstat.pswpin = Some(100);
        a.memory.vmstat.pgscan_direct = Some(1_000);
        a.memory.vmstat.oom_kill = Some(2);
        a.memory.kthreads = vec![MemoryThread {
            comm: "kswapd0".into(),
            pid: 45,
            ticks: 300,
            since: None,
        }];
        let mut b = a.clone();
        b.time.uptime_s = Some(54.0);
        b.memory.vmstat.pswpin = Some(500);
        b.memory.vmstat.pgscan_direct = Some(9_000);
        b.memory.vmstat.oom_kill = Some(3);
        b.memory.kthreads[0].ticks = 500;
        b.memory.kthreads.push(MemoryThread {
            comm: "kswapd1".into(),
            pid: 46,
            ticks: 7,
            since: None,
        });
        let iv = Interval::between(Some(&a), &b);
        let r = derive_reclaim(iv, Some(&a), &b, 4);
        // 400 pages in 4 s of 4 kB pages: 400 kB/s; 8000 pages scanned / 4 s.
        assert_eq!(r.swap_in_kb_per_s, Some(400.0));
        assert_eq!(r.pgscan_direct_per_s, Some(2_000.0));
        assert_eq!(r.oom_kills, Some(1));
        // kswapd0: 200 ticks in 4 s = 50% of a CPU; kswapd1 is new (no previous pid): not counted.
        assert_eq!(r.kswapd_pct, Some(50.0));
        assert_eq!(r.kcompactd_pct, None, "no such thread seen: unknown");
        assert_eq!(r.major_faults_per_s, None, "counter absent: unknown");
    }

    /// A memory thread read in turns: its growth since its last read, 12 s before this
    /// sample, is a rate over those 12 s, not over the sample's 4.
    #[test]
    fn memory_thread_read_in_turns_rates_over_its_own_interval() {
        let mut a = Sample::default();
        a.time.uptime_s = Some(50.0);
        a.memory.kthreads = vec![MemoryThread {
            comm: "kcompactd0".into(),
            pid: 36,
            ticks: 100,
            since: None,
        }];
        let mut b = a.clone();
        b.time.uptime_s = Some(54.0);
        b.memory.kthreads[0].ticks = 106;
        b.memory.kthreads[0].since = Some(crate::sample::SampleTime {
            uptime_s: Some(42.0),
            ..Default::default()
        });
        let iv = Interval::between(Some(&a), &b);
        let r = derive_reclaim(iv, Some(&a), &b, 4);
        // 6 ticks (60 ms) over 12 s: 0.5% of a CPU (over the sample's 4 s it would be 1.5%).
        let pct = r.kcompactd_pct.expect("known");
        assert!((pct - 0.5).abs() < 1e-9, "{pct}");
    }
}
