//! What is normal on this host: the median and 95th percentile of a metric over the quiet
//! intervals of the window (those in which no warn or crit finding held, nor any finding of
//! the episode's own family: an info episode's own intervals are not its normal).

use super::Row;

/// Median, p95 and how many quiet intervals knew the metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Normal {
    pub median: f64,
    pub p95: f64,
    pub quiet: usize,
    /// The quiet intervals are an even sample of the window's (explain read its digests and
    /// decoded only some intervals), not all of them.
    pub sampled: bool,
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
}
