//! Softirq and network rules: the NET_RX hotspot, drops, a busy ksoftirqd.

use super::*;

#[test]
fn softirq_hotspot_one_cpu_does_the_net_rx_work() {
    let mut p = Pair::quiet(10.0);
    p.softnet(0, 4_000.0, 0.0, 0.0);
    let f = p.fires("softirq.hotspot");
    assert_eq!(f.severity, "warn");
    assert_eq!(
        (f.pane.as_str(), f.tweak.as_deref()),
        ("softirq", Some("irq.affinity"))
    );
    assert_eq!(
        f.message,
        "CPU0 does 57% of NET_RX work (4.0k of 7.0k pkts/s): spread IRQs/RPS"
    );
    // Just under 4x its peers.
    p.softnet(0, 3_900.0, 0.0, 0.0);
    p.silent("softirq.hotspot");
    // Lopsided but too little traffic to matter.
    for cpu in 1..CPUS {
        p.softnet(cpu, 330.0, 0.0, 0.0);
    }
    p.softnet(0, 4_000.0, 0.0, 0.0);
    p.silent("softirq.hotspot");
}

#[test]
fn softirq_hotspot_falls_back_to_net_rx_runs() {
    let mut p = Pair::quiet(10.0);
    p.a.net.softnet.clear();
    p.b.net.softnet.clear();
    p.b.net.softirqs.as_mut().expect("softirqs").rows[0].counts[2] += p.count(20_000.0);
    let f = p.fires("softirq.hotspot");
    assert!(f.message.contains("NET_RX runs/s"), "{}", f.message);
}

#[test]
fn softirq_hotspot_soft_time_with_squeezes() {
    let mut p = Pair::quiet(10.0);
    p.cpu(1, 60.0, 50.0);
    p.softnet(1, 1_000.0, 0.0, 1.0);
    let f = p.fires("softirq.hotspot");
    assert_eq!(
        f.message,
        "CPU1 %soft 50 with 1 squeezes/s: softirq budget exhausted"
    );
    p.silent("net.drops");
    p.cpu(1, 60.0, 49.0);
    p.silent("softirq.hotspot");
    p.cpu(1, 60.0, 50.0);
    p.softnet(1, 1_000.0, 0.0, 0.9);
    p.silent("softirq.hotspot");
}

#[test]
fn net_drops_softnet_backlog() {
    let mut p = Pair::quiet(10.0);
    p.softnet(0, 1_000.0, 1.0, 0.0);
    let f = p.fires("net.drops");
    assert_eq!(f.severity, "crit");
    assert_eq!(f.tweak.as_deref(), Some("net.core.netdev_max_backlog"));
    assert_eq!(f.message, "softnet drops 1/s (backlog full)");
    p.softnet(0, 1_000.0, 0.9, 0.0);
    p.silent("net.drops");
}

#[test]
fn net_drops_time_squeezes() {
    let mut p = Pair::quiet(10.0);
    p.softnet(0, 1_000.0, 0.0, 6.0);
    p.softnet(1, 1_000.0, 0.0, 4.0);
    let f = p.fires("net.drops");
    assert_eq!(f.severity, "warn");
    assert_eq!(f.tweak.as_deref(), Some("net.core.netdev_budget"));
    assert_eq!(f.message, "squeezes 10/s");
    p.softnet(1, 1_000.0, 0.0, 3.9);
    p.silent("net.drops");
}

#[test]
fn net_drops_nic() {
    let mut p = Pair::quiet(10.0);
    p.nic_drops(10.0);
    let f = p.fires("net.drops");
    assert_eq!((f.severity.as_str(), f.tweak.as_deref()), ("warn", None));
    assert_eq!(f.message, "eth0 drops 10/s");
    let mut p = Pair::quiet(10.0);
    p.nic_drops(9.9);
    p.silent("net.drops");
}

#[test]
fn ksoftirqd_busy() {
    let mut p = Pair::quiet(10.0);
    p.ksoftirqd(3, 10.0);
    let f = p.fires("ksoftirqd.busy");
    assert_eq!((f.severity.as_str(), f.pane.as_str()), ("warn", "softirq"));
    assert_eq!(
        f.message,
        "ksoftirqd/3 at 10% CPU: softirq work spills into threads"
    );
    p.ksoftirqd(3, 9.9);
    p.silent("ksoftirqd.busy");
    p.ksoftirqd(2, 50.0);
    assert_eq!(p.fires("ksoftirqd.busy").severity, "crit");
}
