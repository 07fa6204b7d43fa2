//! TCP/UDP stack rates (listen-queue overflows, retransmits, UDP buffer errors) and socket
//! gauges, and a NIC's link: settings, carrier changes and error rates.
//!
//! Retransmits are a share of the segments sent in the same interval (RetransSegs / OutSegs,
//! as `nstat`'s two counters would give), both from `/proc/net/snmp`. Socket memory is in
//! pages of the host's page size as the sample recorded it: never inferred, unknown without it.

use super::{ratio, Interval};
use crate::sample::{NicLink, PageKbFrom, Sample, TcpSample};
use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize)]
pub struct TcpMetrics {
    /// SYNs or completed connections dropped because an accept queue was full (TcpExt
    /// ListenOverflows), and every listen drop (ListenDrops counts overflows too).
    pub listen_overflows_per_s: Option<f64>,
    pub listen_drops_per_s: Option<f64>,
    pub backlog_drop_per_s: Option<f64>,
    pub timeouts_per_s: Option<f64>,
    pub rcvq_drop_per_s: Option<f64>,
    pub retrans_segs_per_s: Option<f64>,
    pub out_segs_per_s: Option<f64>,
    /// RetransSegs / OutSegs over the interval, in % (unknown when nothing was sent).
    pub retrans_pct: Option<f64>,
    pub in_errs_per_s: Option<f64>,
    pub curr_estab: Option<u64>,
    pub udp_rcvbuf_errors_per_s: Option<f64>,
    pub udp_sndbuf_errors_per_s: Option<f64>,
    pub inuse: Option<u64>,
    pub orphan: Option<u64>,
    pub tw: Option<u64>,
    /// TCP socket memory (sockstat `mem`), in pages and kB.
    pub mem_pages: Option<u64>,
    pub mem_kb: Option<u64>,
    /// `net.ipv4.tcp_mem` pressure and max thresholds, in pages; `mem_pages` of max in %.
    pub mem_pressure_pages: Option<u64>,
    pub mem_max_pages: Option<u64>,
    pub mem_of_max_pct: Option<f64>,
    /// On an interval whose listen overflows moved: the listening sockets with connections
    /// waiting to be accepted, fullest first (`source::tcp::listeners`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub listeners: Vec<crate::sample::Listener>,
    /// The seconds the rates run over when the counters were read in turns (a quiet host
    /// sampled faster than once a second) or after a gap: not the sample's interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table_secs: Option<f64>,
}

pub fn derive_tcp(iv: Interval, prev: Option<&Sample>, cur: &Sample) -> Option<TcpMetrics> {
    let t = cur.net.tcp.as_ref()?;
    // Counters read in turns (a quiet host sampled fast, `source::tcp`) or after a gap run
    // between their own two reads; unknown when there is no read before (as on a first
    // sample).
    let prev = prev.and_then(|p| p.net.tcp.as_ref());
    let (iv, p, table_secs) = super::turn_pair(iv, t.turn.as_deref(), prev);
    // Counters are the kernel's `unsigned long`: 64 bits here. A drop is a reset (a network
    // namespace recreated, a replay across a reboot): unknown.
    let d = |f: fn(&TcpSample) -> Option<u64>| iv.d64(p.and_then(f), f(t)?);
    let r = |f: fn(&TcpSample) -> Option<u64>| iv.rate(d(f));
    let retrans = d(|x| x.retrans_segs);
    let out = d(|x| x.out_segs);
    // The kernel's page size (live) or the one exact meminfo/vmstat pairs agree on (a fixture
    // root, an old recording); never the 4 kB default assumed when there was nothing to go by.
    let page_kb = cur.memory.page_kb.filter(|_| {
        cur.memory
            .page_kb_from
            .is_some_and(|f| f != PageKbFrom::Default)
    });
    let mem_max = t.tcp_mem.map(|m| m[2]);
    Some(TcpMetrics {
        listen_overflows_per_s: r(|x| x.listen_overflows),
        listen_drops_per_s: r(|x| x.listen_drops),
        backlog_drop_per_s: r(|x| x.backlog_drop),
        timeouts_per_s: r(|x| x.timeouts),
        rcvq_drop_per_s: r(|x| x.rcvq_drop),
        retrans_segs_per_s: iv.rate(retrans),
        out_segs_per_s: iv.rate(out),
        retrans_pct: retrans
            .zip(out)
            .and_then(|(r, o)| ratio(r as f64, o as f64))
            .map(|v| v * 100.0),
        in_errs_per_s: r(|x| x.in_errs),
        curr_estab: t.curr_estab,
        udp_rcvbuf_errors_per_s: r(|x| x.udp_rcvbuf_errors),
        udp_sndbuf_errors_per_s: r(|x| x.udp_sndbuf_errors),
        inuse: t.inuse,
        orphan: t.orphan,
        tw: t.tw,
        mem_pages: t.mem_pages,
        mem_kb: t.mem_pages.zip(page_kb).map(|(m, k)| m.saturating_mul(k)),
        mem_pressure_pages: t.tcp_mem.map(|m| m[1]),
        mem_max_pages: mem_max,
        mem_of_max_pct: t
            .mem_pages
            .zip(mem_max)
            .and_then(|(m, x)| ratio(m as f64, x as f64))
            .map(|v| v * 100.0),
        listeners: t.listeners.clone().unwrap_or_default(),
        table_secs,
    })
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct NicLinkMetrics {
    pub speed_mbps: Option<u64>,
    pub duplex: Option<String>,
    pub mtu: Option<u64>,
    pub tx_queue_len: Option<u64>,
    pub operstate: Option<String>,
    /// Carrier changes since boot, and in the interval (a flapping link).
    pub carrier_changes: Option<u64>,
    pub carrier_changes_delta: Option<u64>,
    pub rx_missed_per_s: Option<f64>,
    pub rx_crc_per_s: Option<f64>,
}

pub fn derive_link(iv: Interval, prev: Option<&NicLink>, cur: &NicLink) -> NicLinkMetrics {
    // `carrier_changes` is an atomic_t, the statistics the driver's 64-bit counters.
    let d = |f: fn(&NicLink) -> Option<u64>| iv.d64(prev.and_then(f), f(cur)?);
    NicLinkMetrics {
        speed_mbps: cur.speed_mbps,
        duplex: cur.duplex.clone(),
        mtu: cur.mtu,
        tx_queue_len: cur.tx_queue_len,
        operstate: cur.operstate.clone(),
        carrier_changes: cur.carrier_changes,
        // Since boot the count is not "flapping now": only a real interval counts.
        carrier_changes_delta: if iv.since_boot {
            None
        } else {
            d(|x| x.carrier_changes)
        },
        rx_missed_per_s: iv.rate(d(|x| x.rx_missed_errors)),
        rx_crc_per_s: iv.rate(d(|x| x.rx_crc_errors)),
    }
}
