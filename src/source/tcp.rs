//! TCP and UDP stack counters: `/proc/net/netstat` (TcpExt), `/proc/net/snmp` (Tcp, Udp) and
//! `/proc/net/sockstat` (TCP sockets and their memory), read every sample, and
//! `net.ipv4.tcp_mem`, a setting. The first two are header-line/value-line pairs whose columns
//! differ by kernel: values are taken by name, and a column this kernel does not print is
//! unknown, not 0.

use super::parse::dec;
use super::Probe;
use crate::sample::TcpSample;
use std::collections::HashMap;

pub fn read_tcp(probe: &mut Probe) -> Option<TcpSample> {
    let mut t = TcpSample::default();
    let ext = probe.with_text("proc/net/netstat", false, |p, text| {
        let e = pairs(p, "proc/net/netstat", text, "TcpExt");
        t.listen_overflows = e.get("ListenOverflows").copied();
        t.listen_drops = e.get("ListenDrops").copied();
        t.backlog_drop = e.get("TCPBacklogDrop").copied();
        t.timeouts = e.get("TCPTimeouts").copied();
        t.rcvq_drop = e.get("TCPRcvQDrop").copied();
    });
    let snmp = probe.with_text("proc/net/snmp", false, |p, text| {
        let tcp = pairs(p, "proc/net/snmp", text, "Tcp");
        t.retrans_segs = tcp.get("RetransSegs").copied();
        t.out_segs = tcp.get("OutSegs").copied();
        t.in_errs = tcp.get("InErrs").copied();
        t.curr_estab = tcp.get("CurrEstab").copied();
        let udp = pairs(p, "proc/net/snmp", text, "Udp");
        t.udp_rcvbuf_errors = udp.get("RcvbufErrors").copied();
        t.udp_sndbuf_errors = udp.get("SndbufErrors").copied();
    });
    let sock = probe.with_text("proc/net/sockstat", false, |_, text| {
        let s = sockstat_tcp(text);
        t.inuse = s.get("inuse").copied();
        t.orphan = s.get("orphan").copied();
        t.tw = s.get("tw").copied();
        t.mem_pages = s.get("mem").copied();
    });
    if ext.is_none() && snmp.is_none() && sock.is_none() {
        return None;
    }
    // A sysctl no perftop tweak writes: the settings tier.
    t.tcp_mem = probe
        .setting_line("proc/sys/net/ipv4/tcp_mem")
        .and_then(|l| tcp_mem(&l));
    Some(t)
}

/// The `PREFIX:` header line's names zipped with the following `PREFIX:` value line. A value
/// that is not a number (Tcp `MaxConn` is -1) is left out: unknown. A header without its
/// value line, or a value line of another length, is noted and gives only the names both
/// lines agree on by position up to the shorter one.
pub fn pairs<'a>(
    probe: &mut Probe,
    rel: &str,
    text: &'a str,
    prefix: &str,
) -> HashMap<&'a str, u64> {
    let mut out = HashMap::new();
    let mut lines = text.lines().filter_map(|l| {
        let (p, rest) = l.split_once(':')?;
        (p == prefix).then_some(rest)
    });
    let Some(names) = lines.next() else {
        return out;
    };
    let Some(values) = lines.next() else {
        probe.note(rel, format!("{prefix}: header without values"));
        return out;
    };
    let names: Vec<&str> = names.split_ascii_whitespace().collect();
    let values: Vec<&str> = values.split_ascii_whitespace().collect();
    if names.len() != values.len() {
        probe.note(
            rel,
            format!("{prefix}: {} names, {} values", names.len(), values.len()),
        );
    }
    for (n, v) in names.into_iter().zip(values) {
        if let Some(v) = dec(v) {
            out.insert(n, v);
        }
    }
    out
}

/// `TCP: inuse 1 orphan 0 tw 1 alloc 1 mem 147` as name → value.
pub fn sockstat_tcp(text: &str) -> HashMap<&str, u64> {
    let mut out = HashMap::new();
    if let Some(rest) = text.lines().find_map(|l| l.strip_prefix("TCP:")) {
        let words: Vec<&str> = rest.split_ascii_whitespace().collect();
        for kv in words.chunks(2) {
            if let [k, v] = kv {
                if let Some(v) = dec(v) {
                    out.insert(*k, v);
                }
            }
        }
    }
    out
}

/// `net.ipv4.tcp_mem`: three page counts.
pub fn tcp_mem(line: &str) -> Option<[u64; 3]> {
    let v: Vec<u64> = line
        .split_ascii_whitespace()
        .map(dec)
        .collect::<Option<_>>()?;
    <[u64; 3]>::try_from(v).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::root::Root;

    #[test]
    fn pairs_by_name_and_missing_columns() {
        let mut p = Probe::new(Root::new("/nonexistent"));
        let text = "Tcp: RtoAlgorithm MaxConn RetransSegs OutSegs\nTcp: 1 -1 7 300\n\
                    Udp: InDatagrams RcvbufErrors\nUdp: 5 2\n";
        let tcp = pairs(&mut p, "snmp", text, "Tcp");
        assert_eq!(tcp.get("RetransSegs"), Some(&7));
        assert_eq!(tcp.get("OutSegs"), Some(&300));
        // -1 is not a count: unknown.
        assert_eq!(tcp.get("MaxConn"), None);
        // An older kernel without the column: unknown, not 0.
        assert_eq!(tcp.get("InErrs"), None);
        let udp = pairs(&mut p, "snmp", text, "Udp");
        assert_eq!(udp.get("RcvbufErrors"), Some(&2));
        assert!(p.problems.is_empty());
        // Truncated: a header without values, and a short value line.
        let cut = pairs(&mut p, "snmp", "Tcp: A B\n", "Tcp");
        assert!(cut.is_empty());
        let short = pairs(&mut p, "snmp", "Tcp: A B C\nTcp: 1 2\n", "Tcp");
        assert_eq!((short.get("B"), short.get("C")), (Some(&2), None));
        assert_eq!(p.problems.len(), 2);
    }

    #[test]
    fn sockstat_and_tcp_mem() {
        let s = sockstat_tcp(
            "sockets: used 10\nTCP: inuse 1 orphan 0 tw 3 alloc 1 mem 147\nUDP: inuse 0 mem 9\n",
        );
        assert_eq!(
            (s.get("inuse"), s.get("tw"), s.get("mem")),
            (Some(&1), Some(&3), Some(&147))
        );
        assert!(sockstat_tcp("TCP: inuse\n").is_empty());
        assert_eq!(
            tcp_mem("287898\t383866\t575796"),
            Some([287898, 383866, 575796])
        );
        assert_eq!(tcp_mem("1 2"), None);
        assert_eq!(tcp_mem("1 x 3"), None);
    }
}
