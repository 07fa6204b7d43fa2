//! Findings: plain-language incident hints computed from derived metrics.
//!
//! `evaluate` is pure: the rules over one `Derived`, as `perftop delta` reports them for its
//! single interval. `FindingTracker` adds time for the live/replay strip: a finding is raised
//! only after it held for `raise_after` consecutive samples, and once raised it clears with
//! hysteresis (see `FindingTracker`). Every number a rule uses lives in `Thresholds`, whose
//! defaults are the README's "Findings thresholds" table and which a config file can override.

mod cgroups;
pub mod culprits;
mod disk;
mod filesystems;
mod irq;
mod memory;
mod nic;
mod power;
mod pressure;
mod storage;
mod tcp;
mod thresholds;
mod tracker;

pub use disk::disk_await;
pub use filesystems::{fs_low_avail, fs_watched};
pub use irq::{BaselineFrom, IrqBaselines};
pub use thresholds::Thresholds;
pub use tracker::{
    strip_lines, strip_rows, ActiveFinding, Baselines, DiskBaseline, FindingTracker,
};

use crate::derive::Derived;
use crate::pane::Pane;
use crate::units::{compact, kb};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Every rule id, in evaluation order. Ids are stable: scripts and configs key on them.
pub const RULE_IDS: [&str; 32] = [
    "dirty.background",
    "dirty.throttled",
    "disk.stalled",
    "disk.saturated",
    "fs.full",
    "softirq.hotspot",
    "net.drops",
    "net.listen_overflow",
    "net.retrans",
    "udp.rcvbuf",
    "nic.errors",
    "nic.link",
    "numa.misses",
    "thp.fallback",
    "hugepages.unused",
    "pagetables.large",
    "cpu.powersave_busy",
    "cpu.thermal_throttle",
    "ksoftirqd.busy",
    "irq.storm",
    "ipi.storm",
    // `cgroups::IDS`, in its order.
    "cgroup.throttled",
    "cgroup.memory_high",
    // `storage`, evaluated after the rules array (before pressure, whose ids end the list).
    "disk.queue_full",
    "mpath.path_down",
    "mpath.path_idle",
    // `pressure::IDS`, in its order (a test keeps the two lists equal).
    "memory.oom_kill",
    "memory.pressure",
    "memory.direct_reclaim",
    "memory.swapping",
    "cpu.pressure",
    "io.pressure",
];

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
    /// The pane to jump to: `cpu`, `numa`, `hugepages`, `dirty`, `disks` or `softirq`.
    pub pane: String,
    /// The tweak that addresses it, when one exists (e.g. `vm.dirty_ratio`, `governor`).
    pub tweak: Option<String>,
    /// The processes behind it, where one can be named (`culprits::attach`), top first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub culprits: Vec<culprits::Culprit>,
}

fn finding(id: &str, sev: Severity, pane: &str, tweak: Option<&str>, message: String) -> Finding {
    Finding {
        id: id.to_string(),
        severity: sev,
        message,
        pane: pane.to_string(),
        tweak: tweak.map(str::to_string),
        culprits: Vec::new(),
    }
}

type Rule = fn(&Derived, &Thresholds, Option<&Baselines>) -> Option<Finding>;

/// The rules that hold for one interval, at most one finding per rule id, in `RULE_IDS` order.
/// A since-boot `Derived` gives none: averages since boot say nothing about now.
pub fn evaluate(d: &Derived, t: &Thresholds, baseline: Option<&Baselines>) -> Vec<Finding> {
    if d.since_boot {
        return Vec::new();
    }
    let rules: [Rule; 23] = [
        |d, t, _| dirty_background(d, t),
        |d, t, _| dirty_throttled(d, t),
        |d, _, _| disk::stalled(d),
        disk::saturated,
        |d, t, _| filesystems::full(d, t),
        |d, t, _| softirq_hotspot(d, t).map(|f| nic::point_to_rps(d, f)),
        |d, t, _| net_drops(d, t),
        |d, t, _| tcp::listen_overflow(d, t),
        |d, t, _| tcp::retrans(d, t),
        |d, t, _| tcp::udp_rcvbuf(d, t),
        |d, t, _| nic::errors(d, t),
        |d, t, _| nic::link(d, t),
        |d, t, _| memory::numa_misses(d, t),
        |d, t, _| memory::thp_fallback(d, t),
        |d, t, _| memory::hugepages_unused(d, t),
        |d, t, _| memory::pagetables_large(d, t),
        |d, t, _| powersave_busy(d, t),
        |d, t, _| power::thermal_throttle(d, t),
        |d, t, _| ksoftirqd_busy(d, t),
        |d, t, b| irq::irq_storm(d, t, b.map(Baselines::irqs)),
        |d, t, _| irq::ipi_storm(d, t),
        |d, t, _| cgroups::throttled(d, t),
        |d, t, _| cgroups::memory_high(d, t),
    ];
    let mut out: Vec<Finding> = rules.iter().filter_map(|r| r(d, t, baseline)).collect();
    out.extend(storage::queue_full(d, t));
    out.extend(storage::path_down(d));
    out.extend(storage::path_idle(d, t));
    out.extend(pressure::evaluate(d, t));
    culprits::attach(&mut out, d);
    out
}

fn sysctl(name: &str, bytes: Option<u64>, ratio: Option<u64>, from: Option<&str>) -> String {
    match (from, bytes, ratio) {
        (Some("bytes"), Some(b), _) => format!("vm.{name}_bytes {}", kb(Some(b / 1024))),
        (_, _, Some(r)) => format!("vm.{name}_ratio {r}"),
        _ => format!("vm.{name}"),
    }
}

fn dirty_background(d: &Derived, t: &Thresholds) -> Option<Finding> {
    let m = &d.dirty;
    let (dirty, bg) = (m.dirty_kb?, m.background_threshold_kb?);
    // Throttling says more; it supersedes the background hint.
    if bg == 0
        || dirty as f64 <= bg as f64 * t.dirty_background_factor
        || dirty_throttled(d, t).is_some()
    {
        return None;
    }
    let knob = sysctl(
        "dirty_background",
        m.dirty_background_bytes,
        m.dirty_background_ratio,
        m.background_limit_from.as_deref(),
    );
    let tweak = match m.background_limit_from.as_deref() {
        Some("bytes") => "vm.dirty_background_bytes",
        _ => "vm.dirty_background_ratio",
    };
    let msg = format!(
        "dirty {} past background {}: flushing ({knob})",
        kb(Some(dirty)),
        kb(Some(bg))
    );
    Some(finding(
        "dirty.background",
        Severity::Info,
        Pane::Dirty.name(),
        Some(tweak),
        msg,
    ))
}

fn dirty_throttled(d: &Derived, t: &Thresholds) -> Option<Finding> {
    let m = &d.dirty;
    let dw = m.dirty_kb?.saturating_add(m.writeback_kb.unwrap_or(0));
    let freerun = m.freerun_kb?;
    if freerun == 0 || dw as f64 <= freerun as f64 * t.dirty_throttled_factor {
        return None;
    }
    let knob = sysctl(
        Pane::Dirty.name(),
        m.dirty_bytes,
        m.dirty_ratio,
        m.limit_from.as_deref(),
    );
    let tweak = match m.limit_from.as_deref() {
        Some("bytes") => "vm.dirty_bytes",
        _ => "vm.dirty_ratio",
    };
    let (sev, msg) = match m.threshold_kb {
        Some(hard) if dw >= hard => (
            Severity::Crit,
            format!(
                "dirty+wb {} at limit {}: writers blocked ({knob})",
                kb(Some(dw)),
                kb(Some(hard))
            ),
        ),
        _ => (
            Severity::Warn,
            format!(
                "dirty+wb {} past freerun {}: writers throttled ({knob})",
                kb(Some(dw)),
                kb(Some(freerun))
            ),
        ),
    };
    Some(finding(
        "dirty.throttled",
        sev,
        Pane::Dirty.name(),
        Some(tweak),
        msg,
    ))
}

/// The most severe (then largest) of several subjects of one rule, with "+k more".
pub(crate) fn worst(
    id: &str,
    pane: &str,
    tweak: Option<&str>,
    mut hits: Vec<(Severity, f64, String)>,
) -> Option<Finding> {
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.total_cmp(&a.1)));
    let more = hits.len().saturating_sub(1);
    let (sev, _, mut msg) = hits.into_iter().next()?;
    if more > 0 {
        msg.push_str(&format!(" (+{more} more)"));
    }
    Some(finding(id, sev, pane, tweak, msg))
}

fn softirq_hotspot(d: &Derived, t: &Thresholds) -> Option<Finding> {
    let online: Vec<_> = d.softirq_cpus.iter().filter(|c| c.online).collect();
    // Acute case first: a CPU saturated by softirq work and still running out of budget.
    let squeezed = online
        .iter()
        .filter_map(|c| Some((c.cpu, c.soft_pct?, c.softnet_squeezed_per_s?)))
        .filter(|(_, soft, sq)| *soft >= t.softirq_soft_pct && *sq >= t.softirq_soft_squeeze_per_s)
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let softnet = online.iter().any(|c| c.softnet_processed_per_s.is_some());
    let (what, load): (&str, Vec<(u32, f64)>) = if softnet {
        (
            "pkts",
            online
                .iter()
                .filter_map(|c| Some((c.cpu, c.softnet_processed_per_s?)))
                .collect(),
        )
    } else {
        (
            "NET_RX runs",
            online
                .iter()
                .filter_map(|c| Some((c.cpu, c.rates.get("NET_RX").copied().flatten()?)))
                .collect(),
        )
    };
    let total: f64 = load.iter().map(|l| l.1).sum();
    let hot = load
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|_| load.len() >= 2 && total >= t.softirq_hotspot_min_per_s)
        .filter(|(_, top)| {
            let peers = (total - top) / (load.len() - 1) as f64;
            top / total >= t.softirq_hotspot_share
                && (peers == 0.0 || top / peers >= t.softirq_hotspot_vs_peers)
        });
    let tweak = Some("irq.affinity");
    match (squeezed, hot) {
        (Some((cpu, soft, sq)), h) => {
            let sev = if h.is_some() {
                Severity::Crit
            } else {
                Severity::Warn
            };
            let msg = format!(
                "CPU{cpu} %soft {soft:.0} with {} squeezes/s: softirq budget exhausted",
                compact(Some(sq))
            );
            let mut f = finding("softirq.hotspot", sev, Pane::Softirq.name(), tweak, msg);
            f.culprits = culprits::on_cpu(d, cpu);
            Some(f)
        }
        (None, Some((cpu, top))) => {
            let msg = format!(
                "CPU{cpu} does {:.0}% of NET_RX work ({} of {} {what}/s): spread IRQs/RPS",
                top / total * 100.0,
                compact(Some(*top)),
                compact(Some(total))
            );
            let mut f = finding(
                "softirq.hotspot",
                Severity::Warn,
                Pane::Softirq.name(),
                tweak,
                msg,
            );
            f.culprits = culprits::on_cpu(d, *cpu);
            Some(f)
        }
        (None, None) => None,
    }
}

fn net_drops(d: &Derived, t: &Thresholds) -> Option<Finding> {
    let sum = |f: fn(&crate::derive::SoftirqCpuMetrics) -> Option<f64>| -> f64 {
        d.softirq_cpus.iter().filter_map(f).sum()
    };
    let dropped = sum(|c| c.softnet_dropped_per_s);
    let squeezed = sum(|c| c.softnet_squeezed_per_s);
    let nic = d
        .nics
        .iter()
        .filter_map(|n| {
            let v = n.rx_drop_per_s.unwrap_or(0.0) + n.tx_drop_per_s.unwrap_or(0.0);
            (n.rx_drop_per_s.is_some() || n.tx_drop_per_s.is_some()).then_some((n.name.as_str(), v))
        })
        .filter(|(_, v)| *v >= t.net_nic_drops_per_s)
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let mut parts = Vec::new();
    let (mut sev, mut tweak) = (Severity::Warn, None);
    if dropped >= t.net_softnet_drops_per_s {
        parts.push(format!(
            "softnet drops {}/s (backlog full)",
            compact(Some(dropped))
        ));
        sev = Severity::Crit;
        tweak = Some("net.core.netdev_max_backlog");
    }
    if squeezed >= t.net_squeeze_per_s {
        parts.push(format!("squeezes {}/s", compact(Some(squeezed))));
        tweak = tweak.or(Some("net.core.netdev_budget"));
    }
    if let Some((name, v)) = nic {
        parts.push(format!("{name} drops {}/s", compact(Some(v))));
    }
    if parts.is_empty() {
        return None;
    }
    Some(finding(
        "net.drops",
        sev,
        Pane::Softirq.name(),
        tweak,
        parts.join(", "),
    ))
}

fn powersave_busy(d: &Derived, t: &Thresholds) -> Option<Finding> {
    let mut busy: BTreeMap<u32, &str> = BTreeMap::new();
    // By id through an index: a 4096-CPU host searched per policy CPU is 16M comparisons.
    let by_id: std::collections::HashMap<u32, &crate::derive::CpuMetrics> = d
        .cpus
        .iter()
        .filter(|c| c.online)
        .map(|c| (c.cpu, c))
        .collect();
    for p in &d.policies {
        let Some(gov) = p.governor.as_deref().filter(|g| *g != "performance") else {
            continue;
        };
        for id in &p.cpus {
            let c0 = by_id.get(id).and_then(|c| c.c0_pct);
            if c0.is_some_and(|c| c >= t.powersave_busy_pct) {
                busy.insert(*id, gov);
            }
        }
    }
    let online = d.cpus.iter().filter(|c| c.online).count().max(1);
    if busy.is_empty() || (busy.len() as f64) < t.powersave_busy_cpu_share * online as f64 {
        return None;
    }
    let mut govs: Vec<&str> = busy.values().copied().collect();
    govs.sort_unstable();
    govs.dedup();
    let msg = format!(
        "{} of {online} CPUs >= {:.0}% busy under governor {}: ramping adds latency",
        busy.len(),
        t.powersave_busy_pct,
        govs.join("/")
    );
    Some(finding(
        "cpu.powersave_busy",
        Severity::Info,
        Pane::Cpu.name(),
        Some("governor"),
        msg,
    ))
}

fn ksoftirqd_busy(d: &Derived, t: &Thresholds) -> Option<Finding> {
    let hits: Vec<(u32, f64)> = d
        .softirq_cpus
        .iter()
        .filter_map(|c| Some((c.cpu, c.ksoftirqd_pct?)))
        .filter(|(_, p)| *p >= t.ksoftirqd_pct)
        .collect();
    let (cpu, pct) = hits.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1))?;
    let sev = if pct >= t.ksoftirqd_pct_crit {
        Severity::Crit
    } else {
        Severity::Warn
    };
    let others = if hits.len() > 1 {
        format!(" (+{} more)", hits.len() - 1)
    } else {
        String::new()
    };
    let msg = format!("ksoftirqd/{cpu} at {pct:.0}% CPU: softirq work spills into threads{others}");
    Some(finding(
        "ksoftirqd.busy",
        sev,
        Pane::Softirq.name(),
        Some("irq.affinity"),
        msg,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::DiskMetrics;

    #[test]
    fn severity_orders_and_parses() {
        assert!(Severity::Crit > Severity::Warn && Severity::Warn > Severity::Info);
        let f = finding("x", Severity::Crit, Pane::Cpu.name(), None, String::new());
        assert_eq!(f.severity, Severity::Crit);
        assert_eq!(
            serde_json::to_string(&Severity::Warn).ok().as_deref(),
            Some("\"warn\"")
        );
    }

    /// Every rule id is unique and documented in the README's findings table, and the table
    /// lists no rule that does not exist.
    #[test]
    fn rule_ids_are_unique_and_documented() {
        let mut ids = RULE_IDS.to_vec();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RULE_IDS.len(), "duplicate rule id");
        let readme = include_str!("../README.md");
        let section = readme
            .split("### Findings thresholds")
            .nth(1)
            .and_then(|rest| rest.split("\n## ").next())
            .unwrap_or("");
        let table: Vec<&str> = section
            .lines()
            .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
            .filter(|id| id.contains('.') && !id.contains(' '))
            .collect();
        for id in RULE_IDS {
            assert!(
                table.contains(&id),
                "{id} is not in the README findings table"
            );
        }
        for id in &table {
            assert!(RULE_IDS.contains(id), "README lists {id}, which is no rule");
        }
    }

    #[test]
    fn cgroup_ids_follow_ipi_storm() {
        let at = RULE_IDS.iter().position(|id| *id == "ipi.storm");
        let ids = at.map(|i| &RULE_IDS[i + 1..i + 1 + cgroups::IDS.len()]);
        assert_eq!(ids, Some(&cgroups::IDS[..]));
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
