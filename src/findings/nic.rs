//! NIC health rules: `nic.errors` (frames missed for a full ring, or arriving corrupt) and
//! `nic.link` (half duplex, a flapping carrier); and the RPS pointer `softirq.hotspot` gets when
//! the busy NIC has a single rx queue, where moving its one IRQ only moves the hotspot.

use super::{raise, Hit, Severity, Thresholds};
use crate::derive::{Derived, NicMetrics};
use crate::units::compact;

pub fn errors(d: &Derived, t: &Thresholds) -> Option<Hit> {
    // Per NIC: ring overflows (rx_missed_errors; drivers that count them as FIFO errors
    // instead) and CRC errors.
    let bad = |n: &NicMetrics| {
        let l = n.link.as_ref();
        let ring = l
            .and_then(|l| l.rx_missed_per_s)
            .into_iter()
            .chain(n.rx_fifo_per_s)
            .fold(None, |a: Option<f64>, v| Some(a.map_or(v, |a| a.max(v))));
        let crc = l.and_then(|l| l.rx_crc_per_s);
        (ring, crc)
    };
    let worst = d
        .nics
        .iter()
        .map(|n| (n, bad(n)))
        .filter(|(_, (ring, crc))| {
            ring.is_some_and(|v| v >= t.nic_errors_per_s)
                || crc.is_some_and(|v| v >= t.nic_errors_per_s)
        })
        .max_by(|a, b| {
            let s = |x: &(Option<f64>, Option<f64>)| x.0.unwrap_or(0.0) + x.1.unwrap_or(0.0);
            s(&a.1).total_cmp(&s(&b.1))
        })?;
    let (n, (ring, crc)) = worst;
    let mut why = Vec::new();
    if let Some(r) = ring.filter(|&v| v >= t.nic_errors_per_s) {
        why.push(format!(
            "{} missed/s (rx ring full: ethtool -G)",
            compact(Some(r))
        ));
    }
    if let Some(c) = crc.filter(|&v| v >= t.nic_errors_per_s) {
        why.push(format!(
            "{} CRC errors/s (bad cable, optic or port)",
            compact(Some(c))
        ));
    }
    let msg = if why.len() > 1 {
        // Both: the short forms, so the line fits the strip.
        format!(
            "{}: {} missed/s (rx ring full), {} CRC errors/s (bad link)",
            n.name,
            compact(ring),
            compact(crc)
        )
    } else {
        format!("{}: {}", n.name, why.join(", "))
    };
    Some(raise(Severity::Warn, None, msg))
}

pub fn link(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let mut why = Vec::new();
    for n in &d.nics {
        let Some(l) = &n.link else { continue };
        let up = l.operstate.as_deref() == Some("up");
        if up && l.duplex.as_deref() == Some("half") {
            why.push(format!(
                "{} is half duplex{}: autonegotiation failed",
                n.name,
                l.speed_mbps
                    .map(|s| format!(" at {s} Mb/s"))
                    .unwrap_or_default()
            ));
        }
        if let Some(c) = l
            .carrier_changes_delta
            .filter(|&c| c as f64 >= t.nic_carrier_changes)
        {
            why.push(format!(
                "{} carrier changed {c} time{} in {}s (flapping; now {})",
                n.name,
                if c == 1 { "" } else { "s" },
                d.interval_s
                    .map(|s| format!("{s:.0}"))
                    .unwrap_or_else(|| "-".into()),
                l.operstate.as_deref().unwrap_or("-")
            ));
        }
    }
    let first = why.first()?.clone();
    let msg = match why.len() {
        1 => first,
        n => format!("{first}; +{} more", n - 1),
    };
    Some(raise(Severity::Warn, None, msg))
}

/// `softirq.hotspot` on a host whose busiest receiving NIC has one rx queue: spreading IRQs
/// cannot help, RPS can; the finding names the `net.DEV.rx-0.rps_cpus` tweak instead.
pub fn point_to_rps(d: &Derived, mut f: Hit) -> Hit {
    let single = d
        .nics
        .iter()
        .filter(|n| n.driver.is_some() && n.rx_queues == 1)
        .filter(|n| n.rx_packets_per_s.is_some_and(|p| p > 0.0))
        .max_by(|a, b| {
            a.rx_packets_per_s
                .unwrap_or(0.0)
                .total_cmp(&b.rx_packets_per_s.unwrap_or(0.0))
        });
    let busiest_any = d.nics.iter().filter(|n| n.driver.is_some()).max_by(|a, b| {
        a.rx_packets_per_s
            .unwrap_or(0.0)
            .total_cmp(&b.rx_packets_per_s.unwrap_or(0.0))
    });
    // Only when the single-queue NIC is the busiest one with a driver.
    if let (Some(n), Some(b)) = (single, busiest_any) {
        if n.name == b.name {
            let tweak = format!("net.{}.rx-0.rps_cpus", n.name);
            // The strip has 76 columns: the longest wording that fits.
            let base = f
                .message
                .strip_suffix(": spread IRQs/RPS")
                .unwrap_or(&f.message)
                .to_string();
            let fits = |m: &String| m.chars().count() <= 76;
            let long = format!("{base}: 1-queue {}, use RPS", n.name);
            let short = format!("{base}: 1 rx queue, use RPS");
            if fits(&long) {
                f.message = long;
            } else if fits(&short) {
                f.message = short;
            }
            f.tweak = Some(tweak);
        }
    }
    f
}
