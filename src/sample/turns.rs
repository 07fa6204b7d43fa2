//! A table read in turns (on a quiet host, or faster than its detail needs): when the table a
//! sample carries was read, and the read before it, so that its rates run between its own two
//! reads instead of the sample's interval.

use super::SampleTime;
use serde::{Deserialize, Serialize};

/// When a table was read and the read before it: its rates run between the two.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Turn<T> {
    /// When this table was read (this sample, or an earlier one).
    pub at: SampleTime,
    /// The read before it and when it was made (`None`: none to measure from, rates unknown).
    /// Stored without its own turn: one read back is all a rate needs.
    pub before: Option<(SampleTime, T)>,
}
