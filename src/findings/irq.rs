//! Interrupt rules: `irq.storm` (one IRQ line far above its own usual rate, and fast) and
//! `ipi.storm` (a CPU flooded with function-call and TLB-shootdown IPIs), and the per-line
//! baselines `irq.storm` learns over a run.
//!
//! A line's usual rate is the EWMA of its rate (weight `irq_baseline_alpha`), learned from
//! every interval in which the line is not storming, so a storm never becomes its own norm.
//! Until a run has learned `irq_baseline_min_samples` intervals (and in `delta`, which has no
//! run) the line's average since boot stands in; that is unknown (and the rule silent for the
//! line) when a 32-bit per-CPU count could have wrapped since boot at the current rate. Only
//! what matters is kept: a line whose EWMA drops under 1/s is forgotten, and counts as ~0.

use super::{worst, Hit, Severity, Thresholds};
use crate::derive::{Derived, IrqKind, IrqLineMetrics};
use crate::units::{compact, fit};
use serde::Serialize;

/// An EWMA under this (interrupts/s) is not kept: such a line counts as quiet.
const KEEP_PER_S: f32 = 1.0;

/// Per-line usual rates for `irq.storm`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct IrqBaselines {
    /// Intervals folded in since the run started.
    intervals: u32,
    /// (IRQ, EWMA of its rate), sorted by IRQ; f32 because the live view keeps a copy per
    /// sample in its ring.
    rates: Vec<(u32, f32)>,
}

/// Where a line's baseline came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaselineFrom {
    /// The EWMA learned over this run.
    Learned,
    /// The line's average since boot.
    Boot,
}

impl IrqBaselines {
    pub fn new() -> Self {
        Self::default()
    }

    /// Intervals learned since the run started.
    pub fn intervals(&self) -> u32 {
        self.intervals
    }

    /// The learned EWMA of `irq`'s rate, if kept.
    pub fn learned(&self, irq: u32) -> Option<f64> {
        self.rates
            .binary_search_by_key(&irq, |&(i, _)| i)
            .ok()
            .map(|i| f64::from(self.rates[i].1))
    }

    /// The rate `line` is compared with, and where it came from; `None`: unknown.
    pub fn baseline(
        this: Option<&Self>,
        line: &IrqLineMetrics,
        t: &Thresholds,
    ) -> Option<(f64, BaselineFrom)> {
        match this {
            Some(b) if b.intervals >= t.irq_baseline_min_samples => {
                Some((b.learned(line.irq).unwrap_or(0.0), BaselineFrom::Learned))
            }
            _ => line.boot_per_s.map(|r| (r, BaselineFrom::Boot)),
        }
    }

    /// Folds one interval in: every line not storming moves its EWMA; lines that are gone
    /// are forgotten.
    pub fn update(&mut self, d: &Derived, t: &Thresholds) {
        let alpha = t.irq_baseline_alpha;
        let mut next = Vec::with_capacity(self.rates.len());
        for line in &d.interrupts.lines {
            let old = self.learned(line.irq);
            let new = match line.per_s {
                None => old,
                Some(r) if storming(r, IrqBaselines::baseline(Some(self), line, t), t) => old,
                Some(r) => Some(match old {
                    Some(e) => e + alpha * (r - e),
                    // First interval of the run: the line's rate as it is; later, a line
                    // that was not kept was under 1/s.
                    None if self.intervals == 0 => r,
                    None => alpha * r,
                }),
            };
            if let Some(e) = new.map(|e| e as f32).filter(|e| *e >= KEEP_PER_S) {
                next.push((line.irq, e));
            }
        }
        // Derive lists lines in IRQ order; a damaged file may not.
        if !next.is_sorted_by_key(|&(i, _)| i) {
            next.sort_by_key(|&(i, _)| i);
        }
        self.rates = next;
        self.intervals = self.intervals.saturating_add(1);
    }
}

fn storming(rate: f64, base: Option<(f64, BaselineFrom)>, t: &Thresholds) -> bool {
    base.is_some_and(|(b, _)| rate >= t.irq_storm_per_s && rate >= t.irq_storm_vs_baseline * b)
}

/// One IRQ line at >= `irq_storm_per_s` and >= `irq_storm_vs_baseline` x its usual rate.
pub fn irq_storm(d: &Derived, t: &Thresholds, b: Option<&IrqBaselines>) -> Option<Hit> {
    let mut hits = Vec::new();
    let mut busiest: Option<(f64, u32)> = None;
    for line in &d.interrupts.lines {
        let Some(rate) = line.per_s else { continue };
        let base = IrqBaselines::baseline(b, line, t);
        let Some((usual, from)) = base.filter(|_| storming(rate, base, t)) else {
            continue;
        };
        let usual = match from {
            BaselineFrom::Learned => format!("usual {}/s", compact(Some(usual))),
            BaselineFrom::Boot => format!("{}/s since boot", compact(Some(usual))),
        };
        let msg = format!(
            "IRQ {} {} at {}/s vs {usual}: interrupt storm",
            line.irq,
            fit(&line.name, 20),
            compact(Some(rate))
        );
        if busiest.is_none_or(|(r, _)| rate > r) {
            busiest = Some((rate, line.irq));
        }
        hits.push((Severity::Warn, rate, msg));
    }
    // What addresses it: the busiest storming line's affinity (move it off a busy CPU).
    let tweak = busiest.map(|(_, irq)| format!("irq.{irq}"));
    worst(tweak.as_deref(), hits)
}

/// A CPU taking >= `ipi_storm_per_s` function-call plus TLB-shootdown IPIs.
pub fn ipi_storm(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let m = &d.interrupts;
    let hits = m
        .cpus
        .iter()
        .filter_map(|c| {
            let v = c.call_tlb_per_s.filter(|v| *v >= t.ipi_storm_per_s)?;
            let parts: Vec<String> = m
                .types
                .iter()
                .filter(|ty| matches!(ty.kind, IrqKind::Call | IrqKind::Tlb))
                .map(|ty| {
                    let r = c.rates.get(ty.name.as_str()).copied().flatten();
                    format!("{} {}", ty.name, compact(r))
                })
                .collect();
            let msg = format!(
                "CPU{}: {}/s function-call + TLB IPIs ({})",
                c.cpu,
                compact(Some(v)),
                parts.join(", ")
            );
            Some((Severity::Warn, v, msg))
        })
        .collect();
    worst(None, hits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::{derive, Derived};

    fn interval(rates: &[(u32, Option<f64>)]) -> Derived {
        let mut d = derive(None, &crate::sample::Sample::default());
        d.since_boot = false;
        d.interval_s = Some(1.0);
        d.interrupts.lines = rates
            .iter()
            .map(|&(irq, per_s)| IrqLineMetrics {
                irq,
                per_s,
                ..IrqLineMetrics::default()
            })
            .collect();
        d
    }

    #[test]
    fn keeps_only_lines_that_matter_and_forgets_gone_ones() {
        let t = Thresholds::default();
        let mut b = IrqBaselines::new();
        b.update(
            &interval(&[(1, Some(0.5)), (2, Some(100.0)), (3, None)]),
            &t,
        );
        assert_eq!(
            (b.learned(1), b.learned(2), b.learned(3)),
            (None, Some(100.0), None)
        );
        // 10% of the way to 200/s; line 3's first rate after the run started counts from ~0.
        b.update(&interval(&[(2, Some(200.0)), (3, Some(50.0))]), &t);
        assert_eq!((b.learned(2), b.learned(3)), (Some(110.0), Some(5.0)));
        // Line 2 is gone; an unknown rate keeps what line 3 had.
        b.update(&interval(&[(3, None)]), &t);
        assert_eq!(
            (b.learned(2), b.learned(3), b.intervals()),
            (None, Some(5.0), 3)
        );
    }
}
