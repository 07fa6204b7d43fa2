//! Turns: which members of a big set (CPUs' idle-state counters and cpufreq files, idle
//! processes) a sample reads, so the files one sample opens stay within a budget however
//! many CPUs or processes the host has.
//!
//! Member `i` of a set read every `every` samples is read on the samples where
//! `sample_no % every == i % every`: each one exactly every `every` samples, and about the
//! same number of files every sample. What is read in turns is cumulative (idle-state
//! counters, process CPU and I/O) or a gauge, so a rate over a member's own interval is
//! exact; the sample says how often (`CpuSample::detail_every`).

/// Files a sample may spend on per-CPU detail (idle-state counters, `scaling_cur_freq`,
/// governor, EPP): a host with more is read in turns. 4 idle states x 4 counters + 3 cpufreq
/// files is 19 per CPU, so up to 67 CPUs read everything every sample; 512 CPUs every 8
/// samples, 4096 every 61. About 4 ms of a sample on this VM (3.3 µs a file).
pub const DETAIL_FILES_PER_SAMPLE: usize = 1280;

/// Above this many CPUs the dashboard's first look (`Reader::first_look`) leaves per-CPU
/// detail to the next sample: the CPUs whose detail is read in turns (67 and more at the
/// default budget) are the hosts where reading all of it at once is what delays a first frame.
pub const FIRST_LOOK_MIN_CPUS: usize = DETAIL_FILES_PER_SAMPLE / 19;

/// Per-CPU detail (idle-state counters, cpufreq) need not be fresher than this: when samples
/// come faster, each CPU's detail is read in turns, about once in this time. Its counters are
/// cumulative, so its rates over each CPU's own interval stay exact (the idle-state residency
/// beside that CPU's `/proc/stat` times of the same read), while busy, iowait and steal from
/// `/proc/stat` stay per sample. At `-d 0.25` on a 2-CPU host this saves ~7 of its ~10
/// idle-state files a sample; at 1 s and slower nothing changes.
pub const DETAIL_WITHIN_SECS: f64 = 1.0;

/// How many samples apart per-CPU detail is read when samples come `gap_s` seconds apart: the
/// nearest whole number of samples to `DETAIL_WITHIN_SECS` (4 at 0.25 s, 3 at 0.3 s, 2 at 0.5
/// s), 1 at `DETAIL_WITHIN_SECS` and slower or when the gap is unknown. `prev`, the period of
/// the sample before, is kept while the gap's jitter is all that moved (`steady`), so a period
/// on a rounding edge does not flip from sample to sample.
pub fn every_for_gap(prev: Option<u32>, gap_s: Option<f64>) -> u32 {
    match gap_s {
        Some(g) if g > 0.0 && g.is_finite() && g < DETAIL_WITHIN_SECS => {
            steady(prev, DETAIL_WITHIN_SECS / g, 1, 1_000)
        }
        _ => 1,
    }
}

/// Share of a period by which the samples-per-period a gap asks for may stray from the
/// period in force before it changes. Why: gaps are measured by the root's clock,
/// `/proc/uptime`, which moves in 10 ms steps, so samples 0.4 s apart read as 0.39, 0.40 or
/// 0.41 s: 2.56, 2.5 or 2.44 samples a second, rounded to 3 or 2. With the period flipping
/// between them, every flip ran a process pass at once (a changed period does) and moved
/// every CPU's and process's turn: at `-d 0.4` on the 2-vCPU VM ~30 % more `/proc/PID/stat`
/// reads than at 0.45 s. The steps are 4 % of a gap at the fastest interval, 0.25 s; 5 % of
/// the period covers them, and a real change of interval (0.25 s to 0.5 s) still moves it.
const HOLD: f64 = 0.05;

/// A period of `lo..=hi` samples that follows `wanted` (the samples per period the gap asks
/// for), rounded: `prev` is kept while `wanted` is within rounding (0.5) and `HOLD` of it.
pub fn steady(prev: Option<u32>, wanted: f64, lo: u32, hi: u32) -> u32 {
    let (lo_f, hi_f) = (f64::from(lo), f64::from(hi));
    let wanted = wanted.clamp(lo_f, hi_f);
    match prev.filter(|p| (lo..=hi).contains(p)) {
        Some(p) if (wanted - f64::from(p)).abs() < 0.5 + HOLD * f64::from(p) => p,
        _ => wanted.round().clamp(lo_f, hi_f) as u32,
    }
}

/// How many samples apart each member of a set of `members`, costing `files_each` files,
/// is read within `budget` files per sample (1: every sample).
pub fn every(members: usize, files_each: usize, budget: usize) -> u32 {
    let files = members.saturating_mul(files_each.max(1));
    let every = files.div_ceil(budget.max(1)).max(1);
    u32::try_from(every).unwrap_or(u32::MAX)
}

/// True when member `i` is read on sample `sample_no` (every member on every sample when
/// `every` is 1).
pub fn due(i: usize, sample_no: u64, every: u32) -> bool {
    let every = u64::from(every.max(1));
    i as u64 % every == sample_no % every
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_member_once_per_period_and_even_load() {
        for (members, each, budget) in [(4096, 19, 1280), (512, 19, 1280), (2, 19, 1280)] {
            let n = every(members, each, budget);
            assert!(members * each <= n as usize * budget, "{members}: {n}");
            let mut count = vec![0u32; members];
            let mut per_sample = Vec::new();
            for s in 0..u64::from(n) {
                let k = (0..members).filter(|&i| due(i, s, n)).count();
                per_sample.push(k);
                for (i, c) in count.iter_mut().enumerate() {
                    *c += u32::from(due(i, s, n));
                }
            }
            assert!(count.iter().all(|&c| c == 1), "{members}: each once");
            // Within one member of an even split: no sample pays for two.
            let most = per_sample.iter().max().copied().unwrap_or(0);
            assert!(most * each <= budget + each, "{members}: {most} per sample");
        }
        assert_eq!(every(67, 19, DETAIL_FILES_PER_SAMPLE), 1);
        assert_eq!(every(68, 19, DETAIL_FILES_PER_SAMPLE), 2);
        assert_eq!(every(512, 19, DETAIL_FILES_PER_SAMPLE), 8);
        assert_eq!(every(4096, 19, DETAIL_FILES_PER_SAMPLE), 61);
        assert_eq!(every(0, 19, DETAIL_FILES_PER_SAMPLE), 1);
    }

    #[test]
    fn detail_is_read_about_once_a_second_at_fast_intervals() {
        let cases = [
            (Some(0.25), 4),
            (Some(0.251), 4),
            (Some(0.249), 4),
            (Some(0.3), 3),
            (Some(0.5), 2),
            (Some(0.6), 2),
            (Some(0.8), 1),
            (Some(1.0), 1),
            (Some(5.0), 1),
            (Some(0.0), 1),
            (Some(f64::NAN), 1),
            (None, 1),
        ];
        for (gap, want) in cases {
            assert_eq!(every_for_gap(None, gap), want, "{gap:?}");
        }
    }

    /// Gaps as `/proc/uptime` gives them, in 10 ms steps around the interval, at the
    /// intervals whose samples a second sit on a rounding edge: the period is chosen on the
    /// first gap and kept. (Without `prev` each of these flips between two periods.)
    #[test]
    fn the_period_does_not_flip_on_the_clocks_10_ms_steps() {
        for d in [0.25, 0.28, 0.29, 0.3, 0.4, 0.41, 0.5, 0.66, 0.67] {
            let gaps = [
                d,
                d - 0.01,
                d + 0.01,
                d,
                d + 0.01,
                d - 0.01,
                d - 0.01,
                d + 0.01,
            ];
            let flips = gaps
                .windows(2)
                .any(|w| every_for_gap(None, Some(w[0])) != every_for_gap(None, Some(w[1])));
            let mut prev = None;
            let mut seen = Vec::new();
            for g in gaps {
                let e = every_for_gap(prev, Some(g));
                prev = Some(e);
                seen.push(e);
            }
            // At most one change, from the first gap's rounding to the other side's.
            let changes = seen.windows(2).filter(|w| w[0] != w[1]).count();
            assert!(changes <= 1, "{d}: {seen:?}");
            assert!(seen[2..].iter().all(|&e| e == seen[2]), "{d}: {seen:?}");
            // Each period read within a second and a half of detail, and not more often
            // than every 0.6 s.
            let secs = f64::from(seen[7]) * d;
            assert!((0.6..=1.5).contains(&secs), "{d}: {seen:?}");
            if [0.28, 0.29, 0.4, 0.41, 0.66, 0.67].contains(&d) {
                assert!(flips, "{d}: the edge case flips without prev");
            }
        }
    }

    /// A real change of interval moves the period at once; one within the hold of the period
    /// in force keeps it (0.25 s to 0.3 s: 3.33 samples a second against 4, read every 1.2 s).
    #[test]
    fn a_new_interval_moves_the_period() {
        let steps = [
            (0.25, 4),
            (0.5, 2),
            (1.0, 1),
            (0.25, 4),
            (0.3, 4),
            (0.35, 3),
            (2.0, 1),
            (0.34, 3),
        ];
        let mut prev = None;
        for (g, want) in steps {
            let e = every_for_gap(prev, Some(g));
            assert_eq!(e, want, "{g} after {prev:?}");
            prev = Some(e);
        }
        assert_eq!(steady(Some(16), 15.4, 16, 64), 16);
        assert_eq!(steady(Some(0), 3.0, 1, 1_000), 3);
        assert_eq!(steady(None, 2_500.0, 1, 1_000), 1_000);
    }
}
