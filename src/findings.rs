//! Findings: plain-language incident hints computed from derived metrics.
//!
//! `evaluate` is pure: the rules over one `Derived`, as `perftop delta` reports them for its
//! single interval. `FindingTracker` adds time for the live/replay strip: a finding is raised
//! only after it held for `raise_after` consecutive samples, and once raised it clears with
//! hysteresis (see `FindingTracker`). Every number a rule uses lives in `Thresholds`, whose
//! defaults are the "Findings thresholds" table of docs/findings.md and which a config file can override.

pub mod blocked;
mod cgroups;
pub mod culprits;
mod dirty;
mod disk;
mod filesystems;
mod irq;
mod kernel;
mod memory;
mod nic;
mod power;
mod pressure;
mod softirq;
mod storage;
#[cfg(test)]
mod table;
mod tcp;
mod thresholds;
mod tracker;

pub use disk::disk_await;
pub use filesystems::{fs_low_avail, fs_watched};
pub use irq::{BaselineFrom, IrqBaselines};
pub use kernel::victims as oom_victims;
pub use thresholds::Thresholds;
pub use tracker::{
    strip_lines, strip_rows, ActiveFinding, Baselines, Clearing, DiskBaseline, FindingTracker,
    StripRow,
};

use crate::derive::Derived;
use crate::pane::Pane;
use serde::{Deserialize, Serialize};

/// One rule: its stable id (scripts and configs key on it), the pane its finding points to,
/// the config keys of the thresholds it judges by, and the check. The one list of rules: ids,
/// panes, order and the findings table's keys all come from here (tests below hold
/// `Thresholds` and docs/findings.md to it).
pub struct Rule {
    pub id: &'static str,
    pub pane: Pane,
    /// `[findings]` config keys (`Thresholds` fields) this rule reads, in the order the
    /// findings table names them.
    pub thresholds: &'static [&'static str],
    check: fn(&Derived, &Thresholds, Option<&Baselines>) -> Option<Hit>,
}

const fn rule(
    id: &'static str,
    pane: Pane,
    thresholds: &'static [&'static str],
    check: fn(&Derived, &Thresholds, Option<&Baselines>) -> Option<Hit>,
) -> Rule {
    Rule {
        id,
        pane,
        thresholds,
        check,
    }
}

/// Config keys no rule owns: when the strip raises and clears a finding (`FindingTracker`).
pub const STRIP_KEYS: [&str; 3] = ["raise_after", "clear_after", "clear_factor"];

/// Every rule, in evaluation order (the order findings are listed in).
pub const RULES: [Rule; 34] = [
    rule(
        "dirty.background",
        Pane::Dirty,
        &["dirty_background_factor"],
        |d, t, _| dirty::dirty_background(d, t),
    ),
    rule(
        "dirty.throttled",
        Pane::Dirty,
        &["dirty_throttled_factor"],
        |d, t, _| dirty::dirty_throttled(d, t),
    ),
    rule("disk.stalled", Pane::Disks, &[], |d, _, _| disk::stalled(d)),
    rule("proc.blocked", Pane::Procs, &[], |d, _, _| {
        blocked::blocked(d)
    }),
    rule(
        "disk.saturated",
        Pane::Disks,
        &[
            "disk_aqu_sz",
            "disk_await_vs_baseline",
            "disk_baseline_alpha",
            "disk_baseline_min_samples",
            "disk_await_min_ms",
            "disk_await_rotational_ms",
            "disk_await_ssd_ms",
            "disk_aqu_sz_crit",
        ],
        disk::saturated,
    ),
    rule(
        "fs.full",
        Pane::Disks,
        &[
            "fs_min_size_mib",
            "fs_full_pct",
            "fs_full_avail_gib",
            "fs_full_avail_min_size_gib",
            "fs_full_pct_crit",
        ],
        |d, t, _| filesystems::full(d, t),
    ),
    rule(
        "softirq.hotspot",
        Pane::Softirq,
        &[
            "softirq_hotspot_share",
            "softirq_hotspot_vs_peers",
            "softirq_hotspot_min_per_s",
            "softirq_soft_pct",
            "softirq_soft_squeeze_per_s",
        ],
        |d, t, _| softirq::softirq_hotspot(d, t).map(|f| nic::point_to_rps(d, f)),
    ),
    rule(
        "net.drops",
        Pane::Softirq,
        &[
            "net_softnet_drops_per_s",
            "net_squeeze_per_s",
            "net_nic_drops_per_s",
        ],
        |d, t, _| softirq::net_drops(d, t),
    ),
    rule(
        "net.listen_overflow",
        Pane::Softirq,
        &["net_listen_overflow_per_s"],
        |d, t, _| tcp::listen_overflow(d, t),
    ),
    rule(
        "net.retrans",
        Pane::Softirq,
        &[
            "net_retrans_pct",
            "net_retrans_min_segs_per_s",
            "net_retrans_pct_crit",
        ],
        |d, t, _| tcp::retrans(d, t),
    ),
    rule(
        "udp.rcvbuf",
        Pane::Softirq,
        &["udp_rcvbuf_errors_per_s"],
        |d, t, _| tcp::udp_rcvbuf(d, t),
    ),
    rule(
        "nic.errors",
        Pane::Softirq,
        &["nic_errors_per_s"],
        |d, t, _| nic::errors(d, t),
    ),
    rule(
        "nic.link",
        Pane::Softirq,
        &["nic_carrier_changes"],
        |d, t, _| nic::link(d, t),
    ),
    rule(
        "numa.misses",
        Pane::Numa,
        &[
            "numa_miss_ratio",
            "numa_min_pages_per_s",
            "numa_miss_ratio_crit",
        ],
        |d, t, _| memory::numa_misses(d, t),
    ),
    rule(
        "thp.fallback",
        Pane::Huge,
        &[
            "thp_fallback_ratio",
            "thp_min_faults_per_s",
            "thp_compact_stall_per_s",
        ],
        |d, t, _| memory::thp_fallback(d, t),
    ),
    rule(
        "hugepages.unused",
        Pane::Huge,
        &["hugepages_unused_share", "hugepages_unused_min_pct_ram"],
        |d, t, _| memory::hugepages_unused(d, t),
    ),
    rule(
        "pagetables.large",
        Pane::Huge,
        &["pagetables_pct", "pagetables_pct_crit"],
        |d, t, _| memory::pagetables_large(d, t),
    ),
    rule(
        "cpu.powersave_busy",
        Pane::Cpu,
        &["powersave_busy_pct", "powersave_busy_cpu_share"],
        |d, t, _| power::powersave_busy(d, t),
    ),
    rule(
        "cpu.thermal_throttle",
        Pane::Cpu,
        &[
            "thermal_throttle_pct",
            "thermal_throttle_busy_pct",
            "thermal_throttle_pct_crit",
        ],
        |d, t, _| power::thermal_throttle(d, t),
    ),
    rule(
        "ksoftirqd.busy",
        Pane::Softirq,
        &["ksoftirqd_pct", "ksoftirqd_pct_crit"],
        |d, t, _| softirq::ksoftirqd_busy(d, t),
    ),
    rule(
        "irq.storm",
        Pane::Softirq,
        &[
            "irq_storm_per_s",
            "irq_storm_vs_baseline",
            "irq_baseline_alpha",
            "irq_baseline_min_samples",
        ],
        |d, t, b| irq::irq_storm(d, t, b.map(Baselines::irqs)),
    ),
    rule(
        "ipi.storm",
        Pane::Softirq,
        &["ipi_storm_per_s"],
        |d, t, _| irq::ipi_storm(d, t),
    ),
    rule(
        "cgroup.throttled",
        Pane::Procs,
        &[
            "cgroup_throttled_pct",
            "cgroup_throttled_ms_per_s",
            "cgroup_throttled_pct_crit",
        ],
        |d, t, _| cgroups::throttled(d, t),
    ),
    rule(
        "cgroup.memory_high",
        Pane::Procs,
        &["cgroup_memory_max_pct", "oom_kill_hold_s"],
        |d, t, _| cgroups::memory_high(d, t),
    ),
    rule(
        "disk.queue_full",
        Pane::Disks,
        &["disk_queue_full_pct"],
        |d, t, _| storage::queue_full(d, t),
    ),
    rule("mpath.path_down", Pane::Disks, &[], |d, _, _| {
        storage::path_down(d)
    }),
    rule(
        "mpath.path_idle",
        Pane::Disks,
        &["mpath_min_ios_per_s", "mpath_path_idle_share"],
        |d, t, _| storage::path_idle(d, t),
    ),
    rule(
        "memory.oom_kill",
        Pane::Pressure,
        &["oom_kill_hold_s"],
        |d, _, _| pressure::oom_kill(d),
    ),
    rule(
        "kernel.events",
        Pane::Pressure,
        &["oom_kill_hold_s"],
        |d, _, _| kernel::events(d),
    ),
    rule(
        "memory.pressure",
        Pane::Pressure,
        &["memory_psi_full_pct", "memory_psi_some_pct"],
        |d, t, _| pressure::memory_pressure(d, t),
    ),
    rule(
        "memory.direct_reclaim",
        Pane::Pressure,
        &[
            "direct_reclaim_allocstall_per_s",
            "direct_reclaim_scan_per_s",
        ],
        |d, t, _| pressure::direct_reclaim(d, t),
    ),
    rule(
        "memory.swapping",
        Pane::Pressure,
        &["swapping_pages_per_s"],
        |d, t, _| pressure::swapping(d, t),
    ),
    rule(
        "cpu.pressure",
        Pane::Pressure,
        &["cpu_psi_some_pct"],
        |d, t, _| pressure::cpu_pressure(d, t),
    ),
    rule(
        "io.pressure",
        Pane::Pressure,
        &["io_psi_full_pct"],
        |d, t, _| pressure::io_pressure(d, t),
    ),
];

/// Every rule id, in evaluation order: `RULES`' ids.
pub const RULE_IDS: [&str; RULES.len()] = {
    let mut ids = [""; RULES.len()];
    let mut i = 0;
    while i < RULES.len() {
        ids[i] = RULES[i].id;
        i += 1;
    }
    ids
};

/// How bad a finding is; serialized as `"info"`, `"warn"` or `"crit"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warn,
    Crit,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warn => "warn",
            Severity::Crit => "crit",
        }
    }
}

impl PartialEq<&str> for Severity {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// One plain-language hint, with the numbers that triggered it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    /// Stable rule id, e.g. `dirty.throttled`.
    pub id: String,
    pub severity: Severity,
    /// One line with the numbers that triggered it.
    pub message: String,
    /// The pane to jump to (its short name in JSON: `cpu`, `disks`, `pressure`, ...).
    pub pane: Pane,
    /// The tweak that addresses it, when one exists (e.g. `vm.dirty_ratio`, `governor`).
    pub tweak: Option<String>,
    /// The processes behind it, where one can be named (`culprits::attach`), top first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub culprits: Vec<culprits::Culprit>,
    /// It reports an event (an OOM kill, a kernel message), not a level: the strip keeps it
    /// for `oom_kill_hold_s` after the sample it came in, where a level clears as it falls.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub event: bool,
}

/// What a rule's check says when it holds; `evaluate` makes it a `Finding` with the rule's id
/// and pane.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub severity: Severity,
    pub message: String,
    pub tweak: Option<String>,
    pub culprits: Vec<culprits::Culprit>,
    /// An event, not a level (`Finding::event`).
    pub event: bool,
}

/// A finding about an event (`Finding::event`): raised at once, held on the strip a while.
fn happened(severity: Severity, message: String) -> Hit {
    Hit {
        event: true,
        ..raise(severity, None, message)
    }
}

fn raise(severity: Severity, tweak: Option<&str>, message: String) -> Hit {
    Hit {
        severity,
        message,
        tweak: tweak.map(str::to_string),
        culprits: Vec::new(),
        event: false,
    }
}

/// The rules that hold for one interval, at most one finding per rule id, in `RULES` order.
/// A since-boot `Derived` gives none: averages since boot say nothing about now.
pub fn evaluate(d: &Derived, t: &Thresholds, baseline: Option<&Baselines>) -> Vec<Finding> {
    if d.since_boot {
        return Vec::new();
    }
    let mut out: Vec<Finding> = RULES
        .iter()
        .filter_map(|r| {
            let h = (r.check)(d, t, baseline)?;
            Some(Finding {
                id: r.id.to_string(),
                severity: h.severity,
                message: h.message,
                pane: r.pane,
                tweak: h.tweak,
                culprits: h.culprits,
                event: h.event,
            })
        })
        .collect();
    culprits::attach(&mut out, d);
    out
}

/// The most severe (then largest) of several subjects of one rule, with "+k more".
pub(crate) fn worst(tweak: Option<&str>, mut hits: Vec<(Severity, f64, String)>) -> Option<Hit> {
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.total_cmp(&a.1)));
    let more = hits.len().saturating_sub(1);
    let (sev, _, mut msg) = hits.into_iter().next()?;
    if more > 0 {
        msg.push_str(&format!(" (+{more} more)"));
    }
    Some(raise(sev, tweak, msg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::DiskMetrics;

    #[test]
    fn severity_orders_and_parses() {
        assert!(Severity::Crit > Severity::Warn && Severity::Warn > Severity::Info);
        let f = raise(Severity::Crit, None, String::new());
        assert_eq!(f.severity, Severity::Crit);
        assert_eq!(
            serde_json::to_string(&Severity::Warn).ok().as_deref(),
            Some("\"warn\"")
        );
    }

    #[test]
    fn combined_await_weights_by_completions() {
        let m = DiskMetrics {
            r_s: Some(100.0),
            r_await: Some(1.0),
            w_s: Some(300.0),
            w_await: Some(5.0),
            ..DiskMetrics::default()
        };
        assert_eq!(disk_await(&m), Some((400.0, 4.0)));
        assert_eq!(disk_await(&DiskMetrics::default()), Some((0.0, 0.0)));
    }
}
