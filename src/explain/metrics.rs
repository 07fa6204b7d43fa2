//! The key metrics of explain and diff: one number per interval each, read from what `assess`
//! derived (never recomputed), with the unit and the threshold a chart draws.
//!
//! A metric a recording does not hold (an older perftop, a kernel without PSI) is `None` for
//! that interval: unknown stays unknown, it is not zero.

use crate::assess::Assessed;
use crate::findings::{disk_await, Thresholds};

/// One key metric: its name in reports and JSON, its unit, how to read it from an interval and
/// the threshold the rule that watches it uses (where one number says it).
pub struct Metric {
    pub name: &'static str,
    pub unit: &'static str,
    read: fn(&Assessed) -> Option<f64>,
    threshold: fn(&Thresholds) -> Option<f64>,
}

impl Metric {
    pub fn read(&self, a: &Assessed) -> Option<f64> {
        (self.read)(a).filter(|v| v.is_finite())
    }

    pub fn threshold(&self, t: &Thresholds) -> Option<f64> {
        (self.threshold)(t)
    }
}

const fn metric(
    name: &'static str,
    unit: &'static str,
    read: fn(&Assessed) -> Option<f64>,
    threshold: fn(&Thresholds) -> Option<f64>,
) -> Metric {
    Metric {
        name,
        unit,
        read,
        threshold,
    }
}

fn none(_: &Thresholds) -> Option<f64> {
    None
}

/// The largest of a per-disk number over whole disks (partitions repeat their disk's I/O).
fn worst_disk(a: &Assessed, f: fn(&crate::derive::DiskMetrics) -> Option<f64>) -> Option<f64> {
    a.disks
        .iter()
        .filter(|m| !m.partition)
        .filter_map(f)
        .reduce(f64::max)
}

/// Every key metric, in report order. Indices into this table are what a `Row` stores.
pub const METRICS: [Metric; 19] = [
    metric(
        "memory.psi_some_pct",
        "%",
        |a| a.pressure.memory.as_ref()?.some_pct,
        |t| Some(t.memory_psi_some_pct),
    ),
    metric(
        "memory.psi_full_pct",
        "%",
        |a| a.pressure.memory.as_ref()?.full_pct,
        |t| Some(t.memory_psi_full_pct),
    ),
    metric(
        "swap.pages_per_s",
        "pages/s",
        |a| {
            let r = &a.memory.reclaim;
            let page_kb = a.memory.page_kb.max(1) as f64;
            Some((r.swap_in_kb_per_s? + r.swap_out_kb_per_s?) / page_kb)
        },
        |t| Some(t.swapping_pages_per_s),
    ),
    metric(
        "reclaim.allocstall_per_s",
        "/s",
        |a| a.memory.reclaim.allocstall_per_s,
        |t| Some(t.direct_reclaim_allocstall_per_s),
    ),
    metric(
        "reclaim.direct_scan_per_s",
        "pages/s",
        |a| a.memory.reclaim.pgscan_direct_per_s,
        |t| Some(t.direct_reclaim_scan_per_s),
    ),
    metric(
        "io.psi_full_pct",
        "%",
        |a| a.pressure.io.as_ref()?.full_pct,
        |t| Some(t.io_psi_full_pct),
    ),
    metric(
        "io.psi_some_pct",
        "%",
        |a| a.pressure.io.as_ref()?.some_pct,
        none,
    ),
    // The tasks `proc.blocked` counts (read in D on two passes or more): its own number, the
    // one its message gives (its rule is about how long each waited, which no one number says).
    metric(
        "proc.blocked_tasks",
        "tasks",
        |a| Some(crate::findings::blocked::counted(a) as f64),
        none,
    ),
    metric(
        "dirty.dirty_wb_pct_of_freerun",
        "%",
        |a| {
            let m = &a.dirty;
            let dw = m.dirty_kb?.saturating_add(m.writeback_kb.unwrap_or(0));
            let freerun = m.freerun_kb.filter(|f| *f > 0)?;
            Some(100.0 * dw as f64 / freerun as f64)
        },
        |t| Some(100.0 * t.dirty_throttled_factor),
    ),
    metric(
        "disk.await_ms",
        "ms",
        |a| worst_disk(a, |m| disk_await(m).filter(|(n, _)| *n > 0.0).map(|x| x.1)),
        |t| Some(t.disk_await_min_ms),
    ),
    metric(
        "disk.aqu_sz",
        "",
        |a| worst_disk(a, |m| m.aqu_sz),
        |t| Some(t.disk_aqu_sz),
    ),
    metric("disk.util_pct", "%", |a| worst_disk(a, |m| m.util), none),
    metric("cpu.iowait_pct", "%", |a| a.host.iowait_pct, none),
    metric("cpu.busy_pct", "%", |a| a.host.busy_pct, none),
    metric(
        "cpu.psi_some_pct",
        "%",
        |a| a.pressure.cpu.as_ref()?.some_pct,
        |t| Some(t.cpu_psi_some_pct),
    ),
    metric(
        "softirq.max_cpu_pct",
        "%",
        |a| {
            a.softirq_cpus
                .iter()
                .filter_map(|c| c.soft_pct)
                .reduce(f64::max)
        },
        |t| Some(t.softirq_soft_pct),
    ),
    metric(
        "net.softnet_drops_per_s",
        "/s",
        |a| {
            let v: Vec<f64> = a
                .softirq_cpus
                .iter()
                .filter_map(|c| c.softnet_dropped_per_s)
                .collect();
            (!v.is_empty()).then(|| v.iter().sum())
        },
        |t| Some(t.net_softnet_drops_per_s),
    ),
    metric(
        "cpu.throttled_pct",
        "%",
        |a| {
            a.power
                .throttle
                .iter()
                .filter_map(|t| t.throttled_pct)
                .reduce(f64::max)
        },
        |t| Some(t.thermal_throttle_pct),
    ),
    metric(
        "tcp.retrans_pct",
        "%",
        |a| a.tcp.as_ref()?.retrans_pct,
        |t| Some(t.net_retrans_pct),
    ),
];

/// The index of a metric in [`METRICS`] by name.
pub fn index(name: &str) -> Option<usize> {
    METRICS.iter().position(|m| m.name == name)
}

/// Every key metric of one interval (NaN where unknown: a row is a plain array so a day of
/// them stays a few MB).
pub fn read_all(a: &Assessed) -> [f32; METRICS.len()] {
    let mut out = [f32::NAN; METRICS.len()];
    for (o, m) in out.iter_mut().zip(METRICS.iter()) {
        if let Some(v) = m.read(a) {
            *o = v as f32;
        }
    }
    out
}

/// `14 ms`, `0.2 %`, `1,200 pages/s`: a value with its unit, to two significant places for
/// small numbers.
pub fn show(v: f64, unit: &str) -> String {
    let n = if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    match unit {
        "" => n,
        "%" => format!("{n}%"),
        "tasks" if v.round() == 1.0 => "1 task".to_string(),
        "tasks" => format!("{v:.0} tasks"),
        u => format!("{n} {u}"),
    }
}

#[cfg(test)]
mod tests {
    use crate::assess::Assessed;
    use crate::derive::ProcessMetrics;

    /// `proc.blocked`'s number is the tasks its message counts (in D on two passes), not the
    /// kernel's `procs_blocked` read at another moment: an episode once read "1 task blocked
    /// in D for 1 s" beside "peak: proc.blocked_tasks 0 tasks".
    #[test]
    fn blocked_tasks_are_the_ones_the_rule_counts() {
        let mut d = crate::derive::derive(None, &crate::sample::Sample::default());
        d.host.procs_blocked = Some(0);
        let task = |pid, state: &str, blocked_s| ProcessMetrics {
            pid,
            comm: "stress-ng-io".into(),
            state: state.into(),
            blocked_s,
            ..ProcessMetrics::default()
        };
        // In D on two passes; just entered D (0 s); running.
        d.processes = vec![
            task(1, "D", Some(1.0)),
            task(2, "D", Some(0.0)),
            task(3, "R", None),
        ];
        let a = Assessed {
            derived: d,
            findings: Vec::new(),
        };
        let m = &super::METRICS[super::index("proc.blocked_tasks").expect("metric")];
        assert_eq!(m.read(&a), Some(1.0));
    }
}
