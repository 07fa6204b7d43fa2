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

/// Per-CPU detail (idle-state counters, cpufreq) need not be fresher than this: when samples
/// come faster, each CPU's detail is read in turns, about once in this time. Its counters are
/// cumulative, so its rates over each CPU's own interval stay exact (the idle-state residency
/// beside that CPU's `/proc/stat` times of the same read), while busy, iowait and steal from
/// `/proc/stat` stay per sample. At `-d 0.25` on a 2-CPU host this saves ~7 of its ~10
/// idle-state files a sample; at 1 s and slower nothing changes.
pub const DETAIL_WITHIN_SECS: f64 = 1.0;

/// How many samples apart per-CPU detail is read when samples come `gap_s` seconds apart: the
/// nearest whole number of samples to `DETAIL_WITHIN_SECS` (4 at 0.25 s, 3 at 0.3 s, 2 at 0.5
/// s), 1 at `DETAIL_WITHIN_SECS` and slower or when the gap is unknown. Rounded, not floored,
/// so that a sample a millisecond late (0.251 s) does not switch the period from 4 to 3 and
/// back.
pub fn every_for_gap(gap_s: Option<f64>) -> u32 {
    match gap_s {
        Some(g) if g > 0.0 && g.is_finite() && g < DETAIL_WITHIN_SECS => {
            (DETAIL_WITHIN_SECS / g).round().clamp(1.0, 1_000.0) as u32
        }
        _ => 1,
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
            assert_eq!(every_for_gap(gap), want, "{gap:?}");
        }
    }
}
