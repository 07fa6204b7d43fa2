//! What is normal on this host: the median and 95th percentile of a metric over the quiet
//! intervals (those in which no warn or crit finding held, nor any finding of the episode's
//! own family: an info episode's own intervals are not its normal) of the window or, where the
//! recording holds more, of an even sample of its last 7 days (the service keeps a week).

use super::{digests, families::family_of, Row};
use crate::findings::Thresholds;
use crate::record::reader::Recording;
use crate::record::walk;
use anyhow::Result;

/// How far back "normal here" looks when the recording holds more than the window: the
/// service's retention (`record::service::DEFAULT_RETAIN`).
pub const LOOK_BACK_MS: i64 = 7 * 86_400_000;

/// Median, p95 and how many quiet intervals knew the metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Normal {
    pub median: f64,
    pub p95: f64,
    pub quiet: usize,
    /// The quiet intervals are an even sample of the window's (explain read its digests and
    /// decoded only some intervals), not all of them.
    pub sampled: bool,
    /// They were sampled over this span of the recording (more than the window: its last 7
    /// days and the window), not over the window.
    pub over: Option<(i64, i64)>,
}

/// The span normal is taken over, given the recording's `(first, last)` and the window: the
/// recording's last 7 days and the window; `None` when that is the window itself.
pub fn span(rec: (i64, i64), (lo, hi): (i64, i64)) -> Option<(i64, i64)> {
    let from = rec.0.max(rec.1 - LOOK_BACK_MS).min(lo);
    let to = rec.1.max(hi);
    (from < lo || to > hi).then_some((from, to))
}

/// The rows of an even sample of `span`'s intervals (at most `digests::SAMPLED`, each decoded
/// after its keyframe and judged on its own, as the window's even sample is): a few hundred
/// intervals whatever the span's length.
pub fn sample_rows(
    rec: &Recording,
    span: (i64, i64),
    t: &Thresholds,
    threads: usize,
) -> Result<Vec<Row>> {
    let ends = digests::ends_of(rec, span);
    let want: Vec<usize> = ends
        .iter()
        .zip(digests::even(rec, &ends))
        .filter(|(_, s)| *s)
        .map(|(&i, _)| i)
        .collect();
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for &i in &want {
        match ranges.last_mut() {
            Some((_, e)) if *e + 1 >= i => *e = i + 1,
            _ => ranges.push((i - 1, i + 1)),
        }
    }
    let mut rows = Vec::with_capacity(want.len());
    walk::ranges(rec, &ranges, t, threads, &mut |_| {}, &mut |i, w, a| {
        if want.binary_search(&i).is_ok() {
            let secs = a.interval_s.unwrap_or(0.0);
            let times = (w - (secs * 1000.0).round() as i64, w);
            let families = a
                .findings
                .iter()
                .fold(0u32, |m, f| m | 1 << family_of(&f.id));
            rows.push(super::row(a, times, families, true));
        }
        Ok(())
    })?;
    Ok(rows)
}

/// The `q` quantile (0..=1) of sorted values, nearest rank.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

/// The known values of metric `m` over `rows` (those `keep` accepts), sorted.
pub fn values(rows: &[Row], m: usize, keep: impl Fn(&Row) -> bool) -> Vec<f64> {
    let mut v: Vec<f64> = rows
        .iter()
        .filter(|r| keep(r))
        .map(|r| f64::from(r.vals[m]))
        .filter(|v| v.is_finite())
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Metric `m`'s normal over the rows quiet for family `fam`; `None` when no such interval knew
/// it (the report then says the normal is unknown rather than quoting the episode itself).
pub fn normal(rows: &[Row], m: usize, fam: usize) -> Option<Normal> {
    let v = values(rows, m, |r| {
        r.sampled && !r.alarmed && r.families & (1 << fam) == 0
    });
    Some(Normal {
        median: quantile(&v, 0.5)?,
        p95: quantile(&v, 0.95)?,
        quiet: v.len(),
        sampled: rows.iter().any(|r| !r.sampled),
        over: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), Some(10.0));
        assert_eq!(quantile(&v, 0.95), Some(19.0));
        assert_eq!(quantile(&[3.0], 0.95), Some(3.0));
        assert_eq!(quantile(&[], 0.5), None);
    }

    /// An episode's own intervals are never its normal, even when its findings are only
    /// info (they are not "alarmed"): a window that is all episode has no normal.
    #[test]
    fn the_episodes_own_intervals_are_not_its_normal() {
        let row = |v: f32, families: u32| Row {
            end_ms: 0,
            start_ms: 0,
            vals: [v; crate::explain::metrics::METRICS.len()],
            families,
            alarmed: false,
            sampled: true,
        };
        let rows = [
            row(1.0, 0),
            row(2.0, 0),
            row(90.0, 1 << 3),
            row(95.0, 1 << 3),
        ];
        let n = normal(&rows, 0, 3).expect("two quiet rows");
        assert_eq!((n.median, n.p95, n.quiet, n.sampled), (1.0, 2.0, 2, false));
        assert_eq!(normal(&rows[2..], 0, 3), None);
    }

    /// Normal is taken over the recording's last 7 days and the window, when that is more.
    #[test]
    fn the_span_is_the_last_week_and_the_window() {
        const H: i64 = 3_600_000;
        const D: i64 = 24 * H;
        // The window is the whole recording: the window's own intervals.
        assert_eq!(span((0, 5 * H), (0, 5 * H)), None);
        // An hour of a 5-hour recording: all 5 hours.
        assert_eq!(span((0, 5 * H), (2 * H, 3 * H)), Some((0, 5 * H)));
        // An hour of a 10-day recording: its last 7 days.
        assert_eq!(span((0, 10 * D), (9 * D, 9 * D + H)), Some((3 * D, 10 * D)));
        // An hour older than the last 7 days: from that hour on.
        assert_eq!(span((0, 10 * D), (D, D + H)), Some((D, 10 * D)));
    }
}
