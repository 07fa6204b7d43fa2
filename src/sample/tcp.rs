//! The TCP/UDP stack as the kernel counts it (`/proc/net/netstat`, `/proc/net/snmp`,
//! `/proc/net/sockstat`, `net.ipv4.tcp_mem`) and a NIC's link and error counters
//! (`sys/class/net/DEV/`). Raw cumulative counters and gauges only; derive computes the rates.
//! A column the kernel does not print is `None` (unknown), never 0.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpSample {
    // TcpExt (/proc/net/netstat): counters.
    pub listen_overflows: Option<u64>,
    pub listen_drops: Option<u64>,
    pub backlog_drop: Option<u64>,
    pub timeouts: Option<u64>,
    pub rcvq_drop: Option<u64>,
    // Tcp (/proc/net/snmp): counters, and CurrEstab, a gauge.
    pub retrans_segs: Option<u64>,
    pub out_segs: Option<u64>,
    pub in_errs: Option<u64>,
    pub curr_estab: Option<u64>,
    // Udp (/proc/net/snmp): counters.
    pub udp_rcvbuf_errors: Option<u64>,
    pub udp_sndbuf_errors: Option<u64>,
    // TCP line of /proc/net/sockstat: gauges; `mem_pages` in pages of the host's page size.
    pub inuse: Option<u64>,
    pub orphan: Option<u64>,
    pub tw: Option<u64>,
    pub mem_pages: Option<u64>,
    /// `net.ipv4.tcp_mem`: min, pressure, max, in pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_mem: Option<[u64; 3]>,
    /// Listening sockets with connections waiting in their accept queue, fullest first: read
    /// only on a sample whose ListenOverflows moved (`source::tcp::listeners`); `None` on
    /// every other sample and in older recordings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listeners: Option<Vec<Listener>>,
    /// Set when these counters' rates do not run from the previous sample's: read in turns on
    /// a quiet host sampled faster than once a second (`source::tcp`), or read again after a
    /// gap. `None`: read this sample, and the previous sample read them too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<Box<super::Turn<TcpSample>>>,
}

/// A listening TCP socket and its accept queue (`/proc/net/tcp{,6}`, state `0A`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listener {
    /// Local address as the kernel prints it, decoded: `127.0.0.1`, `::`, `::ffff:10.0.0.1`.
    pub addr: String,
    pub port: u16,
    /// Connections accepted by the kernel and not yet by the application (`rx_queue` of a
    /// listener: `sk_ack_backlog`). The queue is full when it exceeds the listen() backlog.
    pub queue: u64,
}

/// A NIC's link settings (settings tier) and its error counters not in `/proc/net/dev`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NicLink {
    /// `speed` in Mb/s; `None` when the link is down (EINVAL), the driver does not know (-1)
    /// or the file is missing.
    pub speed_mbps: Option<u64>,
    /// `duplex`: `full`, `half`; `None` when down or `unknown`.
    pub duplex: Option<String>,
    pub mtu: Option<u64>,
    pub tx_queue_len: Option<u64>,
    /// `operstate`: `up`, `down`, `unknown` (loopback, tun), `lowerlayerdown`, ...
    pub operstate: Option<String>,
    /// Counters, read every sample for NICs with a device (virtual ones have none).
    pub carrier_changes: Option<u64>,
    pub rx_missed_errors: Option<u64>,
    pub rx_crc_errors: Option<u64>,
}
