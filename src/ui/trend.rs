//! The few headline values kept per sample for the sparklines of large terminals.

use crate::derive::Derived;

/// A few headline values per live sample, for sparklines on large terminals.
#[derive(Debug, Clone, Copy, Default)]
pub struct TrendPoint {
    pub busy_pct: Option<f64>,
    pub dirty_kb: Option<u64>,
    pub disk_aqu: Option<f64>,
    pub softirq_pct: Option<f64>,
    /// The largest PSI `some` share of cpu, memory and io: how much of the interval stalled.
    pub psi_some_pct: Option<f64>,
}

impl TrendPoint {
    pub fn of(d: &Derived) -> TrendPoint {
        TrendPoint {
            busy_pct: d.host.busy_pct,
            dirty_kb: d.dirty.dirty_kb,
            disk_aqu: d
                .disks
                .iter()
                .filter(|x| !x.partition)
                .filter_map(|x| x.aqu_sz)
                .reduce(f64::max),
            softirq_pct: d
                .softirq_cpus
                .iter()
                .filter_map(|c| c.soft_pct)
                .reduce(f64::max),
            psi_some_pct: [&d.pressure.cpu, &d.pressure.memory, &d.pressure.io]
                .into_iter()
                .filter_map(|r| r.as_ref()?.some_pct)
                .reduce(f64::max),
        }
    }
}
