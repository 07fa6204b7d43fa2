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
