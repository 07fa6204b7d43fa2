//! Assess: the stage after derive. An interval's metrics and the findings that hold for it, as
//! `delta`, `batch`, `dump`, the live view and replay all print them.
//!
//! `derive` computes rates and nothing else; `findings` judges them. Keeping the two apart
//! here (rather than derive calling the rules) is what lets derive stay free of thresholds and
//! lets the JSON keep one shape: `findings` is flattened in beside the derived keys.
//!
//! Two rules depend on history: `disk.saturated` compares a device's await with its own usual
//! await, `irq.storm` an IRQ line's rate with its usual rate (`Baselines`). [`Assessor`] is the
//! one place that learns those baselines, in order, so an interval gets the same findings in
//! batch, dump, replay and the live view.

use crate::derive::{derive, Derived};
use crate::findings::{evaluate, Baselines, Finding, Thresholds};
use crate::sample::Sample;
use serde::Serialize;
use std::ops::Deref;

#[derive(Debug, Clone, Serialize)]
pub struct Assessed {
    #[serde(flatten)]
    pub derived: Derived,
    /// The rules that hold for this interval (none for a since-boot report).
    pub findings: Vec<Finding>,
}

impl Deref for Assessed {
    type Target = Derived;

    fn deref(&self) -> &Derived {
        &self.derived
    }
}

/// Derives the interval `prev -> cur` and evaluates the findings over it, with no history (no
/// learned baselines; IRQ lines are compared with their averages since boot): `perftop delta`,
/// which sees only two samples.
pub fn assess(prev: Option<&Sample>, cur: &Sample, thresholds: &Thresholds) -> Assessed {
    let derived = derive(prev, cur);
    let findings = evaluate(&derived, thresholds, None);
    Assessed { derived, findings }
}

/// Assesses a sequence of intervals in order, carrying the baselines (disk awaits, IRQ line
/// rates) from one to the next. Each interval is judged against the baselines of the intervals before it and
/// then folded in (the order `FindingTracker` uses, so the strip and the findings agree).
#[derive(Debug, Clone)]
pub struct Assessor {
    thresholds: Thresholds,
    baselines: Baselines,
}

impl Assessor {
    pub fn new(thresholds: Thresholds) -> Assessor {
        Assessor {
            thresholds,
            baselines: Baselines::new(),
        }
    }

    pub fn thresholds(&self) -> &Thresholds {
        &self.thresholds
    }

    /// What has been learned so far: the baselines the next interval is judged against.
    pub fn baselines(&self) -> &Baselines {
        &self.baselines
    }

    /// Continues from baselines learned elsewhere (a replay checkpoint).
    pub fn set_baselines(&mut self, b: Baselines) {
        self.baselines = b;
    }

    /// Forgets the baselines: the next interval does not follow the last one (a recorder gap).
    pub fn reset(&mut self) {
        self.baselines = Baselines::new();
    }

    /// Derives and judges the next interval `prev -> cur`, then learns from it.
    pub fn next(&mut self, prev: Option<&Sample>, cur: &Sample) -> Assessed {
        self.judge(derive(prev, cur))
    }

    /// Judges an interval derived elsewhere (a dump worker thread), then learns from it.
    pub fn judge(&mut self, derived: Derived) -> Assessed {
        let findings = evaluate(&derived, &self.thresholds, Some(&self.baselines));
        self.baselines.update(&derived, &self.thresholds);
        Assessed { derived, findings }
    }

    /// Judges an interval without learning from it (a look back at a sample already learned).
    pub fn peek(&self, derived: Derived) -> Assessed {
        let findings = evaluate(&derived, &self.thresholds, Some(&self.baselines));
        Assessed { derived, findings }
    }
}
