//! Softirq findings: one CPU doing most of the NET_RX work or out of softirq budget, packets
//! dropped on the way in, and ksoftirqd threads taking the overflow.

use super::{culprits, raise, Hit, Severity, Thresholds};
use crate::derive::Derived;
use crate::units::compact;

pub(super) fn softirq_hotspot(d: &Derived, t: &Thresholds) -> Option<Hit> {
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
            let mut f = raise(sev, tweak, msg);
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
            let mut f = raise(Severity::Warn, tweak, msg);
            f.culprits = culprits::on_cpu(d, *cpu);
            Some(f)
        }
        (None, None) => None,
    }
}

pub(super) fn net_drops(d: &Derived, t: &Thresholds) -> Option<Hit> {
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
    Some(raise(sev, tweak, parts.join(", ")))
}

pub(super) fn ksoftirqd_busy(d: &Derived, t: &Thresholds) -> Option<Hit> {
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
    Some(raise(sev, Some("irq.affinity"), msg))
}
