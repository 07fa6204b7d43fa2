//! Causes: links between episodes by known mechanisms, only where the data supports them — the
//! cause starts no later than the effect, the effect starts while the cause holds (or within
//! a gap of it), and the effect's metric moves with the cause's: from before the cause began to
//! its end, their correlation is at least [`MIN_R`].

use super::episodes::GAP;
use super::families::FAMILIES;
use super::metrics::{index, show, METRICS};
use super::{Episode, Row};

/// The correlation a link needs.
pub const MIN_R: f64 = 0.6;

/// Intervals before the cause that the correlation also looks at (at most): two minutes at
/// 1 s, enough quiet rows to show the effect rising with the cause. It was 300; explain
/// decodes these intervals, and the longer look-back was a third of a day's decoding
/// (docs/explain.md "Cost").
pub const BEFORE: usize = 120;

/// One known mechanism: the cause family (and a rule that must have held in it), the effect
/// family, the two metrics that must move together, and the words for it.
pub struct Mechanism {
    pub cause: &'static str,
    pub needs: Option<&'static str>,
    pub effect: &'static str,
    pub cause_metric: &'static str,
    pub effect_metric: &'static str,
    pub words: &'static str,
}

pub const MECHANISMS: [Mechanism; 6] = [
    Mechanism {
        cause: "memory",
        needs: Some("memory.swapping"),
        effect: "io",
        cause_metric: "swap.pages_per_s",
        effect_metric: "io.psi_full_pct",
        words: "reclaim swapped pages out, loading the disk: tasks stalled on I/O",
    },
    Mechanism {
        cause: "memory",
        needs: Some("memory.direct_reclaim"),
        effect: "io",
        cause_metric: "reclaim.direct_scan_per_s",
        effect_metric: "io.psi_full_pct",
        words: "direct reclaim wrote back and read in pages: tasks stalled on I/O",
    },
    Mechanism {
        cause: "dirty",
        needs: Some("dirty.throttled"),
        effect: "io",
        cause_metric: "dirty.dirty_wb_pct_of_freerun",
        effect_metric: "cpu.iowait_pct",
        words: "dirty pages over the limit: writers throttled, waiting on writeback (iowait)",
    },
    Mechanism {
        cause: "softirq",
        needs: None,
        effect: "drops",
        cause_metric: "softirq.max_cpu_pct",
        effect_metric: "net.softnet_drops_per_s",
        words: "a CPU saturated by softirqs dropped packets from its backlog",
    },
    Mechanism {
        cause: "drops",
        needs: None,
        effect: "tcp",
        cause_metric: "net.softnet_drops_per_s",
        effect_metric: "tcp.retrans_pct",
        words: "dropped packets were retransmitted by TCP",
    },
    Mechanism {
        cause: "power",
        needs: Some("cpu.thermal_throttle"),
        effect: "cpu",
        cause_metric: "cpu.throttled_pct",
        effect_metric: "cpu.psi_some_pct",
        words: "thermal throttling cut the clock: runnable tasks waited for a CPU",
    },
];

/// A link from an earlier episode.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub cause: usize,
    pub words: String,
    pub evidence: String,
}

/// Pearson's r over the rows `lo..=hi` where both metrics are known (`None`: fewer than four
/// such rows, or one metric did not move).
pub fn correlation(rows: &[Row], lo: usize, hi: usize, a: usize, b: usize) -> Option<(f64, usize)> {
    let pairs: Vec<(f64, f64)> = rows
        .get(lo..=hi)?
        .iter()
        .map(|r| (f64::from(r.vals[a]), f64::from(r.vals[b])))
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    let n = pairs.len();
    if n < 4 {
        return None;
    }
    let (mx, my) = pairs
        .iter()
        .fold((0.0, 0.0), |(sx, sy), (x, y)| (sx + x, sy + y));
    let (mx, my) = (mx / n as f64, my / n as f64);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in &pairs {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    if sxx <= 0.0 || syy <= 0.0 {
        return None;
    }
    Some((sxy / (sxx * syy).sqrt(), n))
}

/// The links into episode `e` from the episodes before it.
pub fn links(eps: &[Episode], rows: &[Row], e: usize) -> Vec<Link> {
    let eff = &eps[e];
    let mut out = Vec::new();
    for (c, cause) in eps.iter().enumerate() {
        if c == e {
            continue;
        }
        for m in MECHANISMS.iter().filter(|m| {
            FAMILIES[cause.family].name == m.cause
                && FAMILIES[eff.family].name == m.effect
                && m.needs.is_none_or(|id| cause.ids.iter().any(|i| i == id))
        }) {
            // The cause starts first, and the effect starts while it holds (or within a gap).
            if cause.first_row > eff.first_row || eff.first_row > cause.last_row + GAP {
                continue;
            }
            let (Some(a), Some(b)) = (index(m.cause_metric), index(m.effect_metric)) else {
                continue;
            };
            let lo = cause
                .first_row
                .saturating_sub((cause.last_row - cause.first_row + 1).clamp(GAP + 2, BEFORE));
            let Some((r, n)) = correlation(rows, lo, cause.last_row, a, b) else {
                continue;
            };
            if r < MIN_R {
                continue;
            }
            let peak = |k: usize| {
                rows[cause.first_row..=cause.last_row]
                    .iter()
                    .map(|x| f64::from(x.vals[k]))
                    .filter(|v| v.is_finite())
                    .reduce(f64::max)
                    .map_or("-".to_string(), |v| show(v, METRICS[k].unit))
            };
            out.push(Link {
                cause: c,
                words: m.words.to_string(),
                evidence: format!(
                    "{} up to {} and {} up to {} moved together (r = {r:.2} over {n} intervals)",
                    m.cause_metric,
                    peak(a),
                    m.effect_metric,
                    peak(b)
                ),
            });
            break;
        }
    }
    out
}
