//! TCP/UDP stack and NIC health rules: a pair that triggers each and one just under.
//! Counts are whole counters over a 10 s interval, so rates are count / 10.

use super::*;
use perftop::sample::{NicLink, TcpSample};

/// The quiet pair with the TCP counters of a busy but healthy server: 10 000 segments/s out,
/// no overflows, no retransmits, no UDP errors.
fn tcp_pair() -> Pair {
    let mut p = Pair::quiet(10.0);
    let base = TcpSample {
        listen_overflows: Some(100),
        listen_drops: Some(100),
        backlog_drop: Some(0),
        timeouts: Some(10),
        rcvq_drop: Some(0),
        retrans_segs: Some(1_000),
        out_segs: Some(1_000_000),
        in_errs: Some(0),
        curr_estab: Some(12),
        udp_rcvbuf_errors: Some(5),
        udp_sndbuf_errors: Some(0),
        inuse: Some(14),
        orphan: Some(0),
        tw: Some(3),
        mem_pages: Some(147),
        tcp_mem: Some([287_898, 383_866, 575_796]),
        listeners: None,
        turn: None,
    };
    p.a.net.tcp = Some(base.clone());
    let mut b = base;
    b.out_segs = Some(1_000_000 + p.count(10_000.0));
    p.b.net.tcp = Some(b);
    p
}

fn tcp(p: &mut Pair) -> &mut TcpSample {
    p.b.net.tcp.as_mut().expect("tcp")
}

#[test]
fn a_healthy_stack_raises_nothing_and_derives_by_hand() {
    let p = tcp_pair();
    for id in ["net.listen_overflow", "net.retrans", "udp.rcvbuf"] {
        p.silent(id);
    }
    let d = p.derive().derived;
    let m = d.tcp.expect("tcp metrics");
    assert_eq!(m.out_segs_per_s, Some(10_000.0));
    assert_eq!(m.retrans_pct, Some(0.0));
    assert_eq!(m.curr_estab, Some(12));
    // 147 pages of the quiet pair's 4 kB: 588 kB; of tcp_mem's max 575796 pages.
    assert_eq!(
        p.b.memory.page_kb, None,
        "the quiet pair records no page size"
    );
    assert_eq!(m.mem_kb, None, "no page size: unknown, never a guess");
    let mut q = tcp_pair();
    q.b.memory.page_kb = Some(4);
    q.b.memory.page_kb_from = Some(perftop::sample::PageKbFrom::Default);
    assert_eq!(
        q.derive().derived.tcp.expect("tcp").mem_kb,
        None,
        "a 4 kB page assumed for want of anything to go by is not the host's"
    );
    q.b.memory.page_kb_from = Some(perftop::sample::PageKbFrom::Host);
    let m = q.derive().derived.tcp.expect("tcp");
    assert_eq!(m.mem_kb, Some(588));
    let pct = m.mem_of_max_pct.expect("pct");
    assert!((pct - 147.0 / 575_796.0 * 100.0).abs() < 1e-12, "{pct}");
}

#[test]
fn listen_overflow_is_crit_and_names_somaxconn() {
    let mut p = tcp_pair();
    let n = p.count(1.0);
    tcp(&mut p).listen_overflows = Some(100 + n);
    tcp(&mut p).listen_drops = Some(100 + n);
    let f = p.fires("net.listen_overflow");
    assert_eq!(f.severity, "crit");
    assert_eq!(
        (f.pane.as_str(), f.tweak.as_deref()),
        ("softirq", Some("net.core.somaxconn"))
    );
    assert_eq!(
        f.message,
        "1 listen overflows/s: accept queue full, apps time out, box looks idle"
    );
    // The sample read the listeners (its counter moved): the fullest names the port.
    tcp(&mut p).listeners = Some(vec![
        perftop::sample::Listener {
            addr: "0.0.0.0".into(),
            port: 8080,
            queue: 129,
        },
        perftop::sample::Listener {
            addr: "::".into(),
            port: 443,
            queue: 3,
        },
    ]);
    let f = p.fires("net.listen_overflow");
    assert_eq!(
        f.message,
        "1 listen overflows/s: :8080 accept queue 129 full, apps time out"
    );
    let listeners = &p.derive().derived.tcp.expect("tcp").listeners;
    assert_eq!(listeners.len(), 2, "{listeners:?}");
    tcp(&mut p).listeners = None;
    // 9 in 10 s: 0.9/s, just under.
    tcp(&mut p).listen_overflows = Some(109);
    p.silent("net.listen_overflow");
    // A counter that went backwards (a namespace recreated) is unknown, not an overflow.
    tcp(&mut p).listen_overflows = Some(0);
    p.silent("net.listen_overflow");
    // An older kernel without the column: unknown, silent.
    tcp(&mut p).listen_overflows = None;
    p.silent("net.listen_overflow");
}

#[test]
fn retransmits_share_of_segments_out_with_a_floor() {
    let mut p = tcp_pair();
    // 200/s of 10 000/s out: 2.0%.
    tcp(&mut p).retrans_segs = Some(1_000 + p.count(200.0));
    let f = p.fires("net.retrans");
    assert_eq!((f.severity.as_str(), f.tweak.as_deref()), ("warn", None));
    assert_eq!(
        f.message,
        "TCP retransmits 2.0% of 10k segments/s out (200/s, 0 timeouts/s)"
    );
    tcp(&mut p).retrans_segs = Some(1_000 + p.count(199.0));
    p.silent("net.retrans");
    // 10% is crit.
    tcp(&mut p).retrans_segs = Some(1_000 + p.count(1_000.0));
    assert_eq!(p.fires("net.retrans").severity, "crit");
    // An idle box: 5 of 50 segments/s is 10%, but under the 100 segments/s floor.
    tcp(&mut p).out_segs = Some(1_000_000 + p.count(50.0));
    tcp(&mut p).retrans_segs = Some(1_000 + p.count(5.0));
    p.silent("net.retrans");
    tcp(&mut p).out_segs = Some(1_000_000 + p.count(100.0));
    tcp(&mut p).retrans_segs = Some(1_000 + p.count(10.0));
    p.fires("net.retrans");
}

#[test]
fn udp_receive_buffer_errors() {
    let mut p = tcp_pair();
    tcp(&mut p).udp_rcvbuf_errors = Some(5 + p.count(1.0));
    let f = p.fires("udp.rcvbuf");
    assert_eq!(
        (f.severity.as_str(), f.tweak.as_deref()),
        ("warn", Some("net.core.rmem_max"))
    );
    assert_eq!(
        f.message,
        "1 UDP datagrams/s dropped: socket receive buffers full (app too slow)"
    );
    tcp(&mut p).udp_rcvbuf_errors = Some(5 + 9);
    p.silent("udp.rcvbuf");
}

/// eth0 with a link, up at 10G full duplex, its counters `missed`, `crc`, `carrier` in b.
fn nic_pair(missed: u64, crc: u64, carrier: u64, duplex: &str) -> Pair {
    let mut p = Pair::quiet(10.0);
    let link = |m: u64, c: u64, k: u64| NicLink {
        speed_mbps: Some(10_000),
        duplex: Some(duplex.to_string()),
        mtu: Some(1500),
        tx_queue_len: Some(1000),
        operstate: Some("up".into()),
        carrier_changes: Some(k),
        rx_missed_errors: Some(m),
        rx_crc_errors: Some(c),
    };
    p.a.net.devices[0].link = Some(link(1_000, 50, 4));
    p.b.net.devices[0].link = Some(link(1_000 + missed, 50 + crc, 4 + carrier));
    p
}

#[test]
fn nic_errors_missed_or_crc() {
    let p = nic_pair(10, 0, 0, "full");
    let f = p.fires("nic.errors");
    assert_eq!(f.message, "eth0: 1 missed/s (rx ring full: ethtool -G)");
    nic_pair(9, 9, 0, "full").silent("nic.errors");
    let f = nic_pair(0, 25, 0, "full").fires("nic.errors");
    assert_eq!(
        f.message,
        "eth0: 2.5 CRC errors/s (bad cable, optic or port)"
    );
    // The FIFO column of /proc/net/dev counts ring overflows on drivers without rx_missed.
    let mut p = nic_pair(0, 0, 0, "full");
    p.b.net.devices[0].rx_fifo = p.a.net.devices[0].rx_fifo + 10;
    assert!(p.fires("nic.errors").message.contains("1 missed/s"));
    // Both at once: one line names both.
    assert_eq!(
        nic_pair(10, 10, 0, "full").fires("nic.errors").message,
        "eth0: 1 missed/s (rx ring full), 1 CRC errors/s (bad link)"
    );
}

#[test]
fn nic_link_half_duplex_and_carrier_flaps() {
    let f = nic_pair(0, 0, 0, "half").fires("nic.link");
    assert_eq!(
        f.message,
        "eth0 is half duplex at 10000 Mb/s: autonegotiation failed"
    );
    let f = nic_pair(0, 0, 2, "full").fires("nic.link");
    assert_eq!(
        f.message,
        "eth0 carrier changed 2 times in 10s (flapping; now up)"
    );
    nic_pair(0, 0, 0, "full").silent("nic.link");
    // Half duplex on a link that is down is no finding (duplex is unknown there anyway).
    let mut p = nic_pair(0, 0, 0, "half");
    if let Some(l) = p.b.net.devices[0].link.as_mut() {
        l.operstate = Some("down".into());
    }
    p.silent("nic.link");
}

#[test]
fn softirq_hotspot_points_to_rps_on_a_single_queue_nic() {
    let mut p = Pair::quiet(10.0);
    p.softnet(0, 4_000.0, 0.0, 0.0);
    // eth0: one rx queue, a driver, and receiving.
    for s in [&mut p.a, &mut p.b] {
        s.net.devices[0].driver = Some("virtio_net".into());
        s.net.devices[0].rx_queues = vec![CpuList::parse("")];
    }
    p.b.net.devices[0].rx_packets += p.count(7_000.0);
    let f = p.fires("softirq.hotspot");
    assert_eq!(f.tweak.as_deref(), Some("net.eth0.rx-0.rps_cpus"));
    assert_eq!(
        f.message,
        "CPU0 does 57% of NET_RX work (4.0k of 7.0k pkts/s): 1-queue eth0, use RPS"
    );
    // Four rx queues: spreading IRQs can help, the tweak stays irq.affinity.
    for s in [&mut p.a, &mut p.b] {
        s.net.devices[0].rx_queues = vec![CpuList::parse(""); 4];
    }
    assert_eq!(
        p.fires("softirq.hotspot").tweak.as_deref(),
        Some("irq.affinity")
    );
}
