//! Assess: the stage after derive. An interval's metrics and the findings that hold for it, as
//! `delta`, `batch`, `dump`, the live view and replay all print them.
//!
//! `derive` computes rates and nothing else; `findings` judges them. Keeping the two apart
//! here (rather than derive calling the rules) is what lets derive stay free of thresholds and
//! lets the JSON keep one shape: `findings` is flattened in beside the derived keys.

use crate::derive::{derive, Derived};
use crate::findings::{evaluate, Finding, Thresholds};
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

/// Derives the interval `prev -> cur` and evaluates the findings over it.
pub fn assess(prev: Option<&Sample>, cur: &Sample, thresholds: &Thresholds) -> Assessed {
    let derived = derive(prev, cur);
    let findings = evaluate(&derived, thresholds, None);
    Assessed { derived, findings }
}
