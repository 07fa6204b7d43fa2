//! The TCP counters in turns (`source::tcp::TcpTurns`): on a quiet host sampled faster than
//! once a second they are read about once a second and their rates are exact over their own
//! two reads on every sample; a busy host's, or any host's at 1 s, are read every sample.
//! Counts written by hand.

use perftop::derive::derive;
use perftop::root::Root;
use perftop::source::Reader;
use std::fs;
use std::path::Path;

/// Counters of the host at uptime `up`: `packets` through eth0 (received and sent alike),
/// `out` TCP segments sent, `timeouts` RTO expiries.
fn write(dir: &Path, up: f64, packets: u64, out: u64, timeouts: u64) {
    let net = dir.join("proc/net");
    fs::create_dir_all(&net).expect("mkdir");
    fs::write(
        dir.join("proc/uptime"),
        format!("{up:.2} {:.2}\n", 2.0 * up),
    )
    .expect("uptime");
    fs::write(
        net.join("dev"),
        format!(
            "Inter-|   Receive                                                |  Transmit\n \
             face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n  \
             eth0: {b} {packets} 0 0 0 0 0 0 {b} {packets} 0 0 0 0 0 0\n",
            b = packets * 100
        ),
    )
    .expect("dev");
    fs::write(
        net.join("snmp"),
        format!(
            "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n\
             Tcp: 1 200 120000 -1 10 5 0 0 3 1000 {out} {timeouts} 0 0 0\n\
             Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n\
             Udp: 1 0 0 1 0 0 0 0 0\n"
        ),
    )
    .expect("snmp");
    fs::write(
        net.join("netstat"),
        format!(
            "TcpExt: ListenOverflows ListenDrops TCPBacklogDrop TCPTimeouts TCPRcvQDrop\n\
             TcpExt: 0 0 0 {timeouts} 0\n"
        ),
    )
    .expect("netstat");
    fs::write(
        net.join("sockstat"),
        "sockets: used 10\nTCP: inuse 3 orphan 0 tw 1 alloc 4 mem 2\n",
    )
    .expect("sockstat");
}

/// Uptime of sample `t`, 0.25 s apart (exact in binary, so the rates below are exact).
fn up(t: u64) -> f64 {
    10_000.0 + t as f64 * 0.25
}

#[test]
fn quiet_fast_samples_read_tcp_about_once_a_second_with_exact_rates() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Quiet to t = 20: 10 packets, 8 segments and 1 timeout a sample (40 packets/s, 32
    // segments/s, 4 timeouts/s). Busy from t = 21: 1,000 packets and 400 segments a sample.
    let counts = |t: u64| {
        let quiet = t.min(20);
        let busy = t.saturating_sub(20);
        (10 * quiet + 1_000 * busy, 8 * quiet + 400 * busy, quiet)
    };
    let (p, o, x) = counts(0);
    write(dir.path(), up(0), p, o, x);
    let mut reader = Reader::new(Root::new(dir.path()));
    let mut prev = reader.sample();
    let mut read_at = Vec::new();
    for t in 1..=30u64 {
        let (p, o, x) = counts(t);
        write(dir.path(), up(t), p, o, x);
        let cur = reader.sample();
        let tcp = cur.net.tcp.as_ref().expect("tcp");
        // When the counters this sample shows were read (this sample unless turned).
        let at = tcp
            .turn
            .as_ref()
            .and_then(|turn| turn.at.uptime_s)
            .map_or(t, |u| ((u - 10_000.0) / 0.25).round() as u64);
        read_at.push(at);
        assert_eq!(tcp.out_segs, Some(counts(at).1), "carried as read at {at}");
        let d = derive(Some(&prev), &cur);
        let m = d.tcp.as_ref().expect("tcp metrics");
        if t <= 20 {
            assert_eq!(m.out_segs_per_s, Some(32.0), "segments at {t}");
            assert_eq!(m.timeouts_per_s, Some(4.0), "timeouts at {t}");
        }
        if (2..=20).contains(&t) {
            let secs = m.table_secs.expect("read in turns: its interval said");
            assert!((0.25..=1.0).contains(&secs), "{secs} s at {t}");
        }
        if t == 21 {
            // Busy: read at once, over its own second since the read at t = 17: three quiet
            // samples' 8 segments and one busy sample's 400.
            assert_eq!(at, 21, "the first busy sample reads them");
            assert_eq!(m.table_secs, Some(1.0));
            assert_eq!(m.out_segs_per_s, Some(424.0));
        }
        if t >= 22 {
            assert_eq!(at, t, "read every sample when busy");
            assert_eq!(m.out_segs_per_s, Some(1_600.0), "segments at {t}");
            assert_eq!(m.table_secs, None, "one sample's interval at {t}");
        }
        prev = cur;
    }
    // Two reads first (t = 0 and 1), then one every 4 samples (a second) while quiet.
    let reads: std::collections::BTreeSet<u64> = read_at[..20].iter().copied().collect();
    assert_eq!(
        reads,
        [1, 5, 9, 13, 17].into_iter().collect(),
        "{read_at:?}"
    );
    assert!(
        read_at[..20].iter().zip(1u64..).all(|(&at, t)| t - at < 4),
        "no counters older than 4 samples: {read_at:?}"
    );
}

#[test]
fn at_one_second_every_sample_reads_tcp() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), 10_000.0, 0, 0, 0);
    let mut reader = Reader::new(Root::new(dir.path()));
    let mut prev = reader.sample();
    for t in 1..=6u64 {
        write(dir.path(), 10_000.0 + t as f64, 10 * t, 8 * t, t);
        let cur = reader.sample();
        let tcp = cur.net.tcp.as_ref().expect("tcp");
        assert_eq!(tcp.turn, None, "read this sample at {t}");
        assert_eq!(tcp.out_segs, Some(8 * t));
        let d = derive(Some(&prev), &cur);
        let m = d.tcp.as_ref().expect("tcp metrics");
        assert_eq!(m.out_segs_per_s, Some(8.0), "at {t}");
        assert_eq!(m.table_secs, None);
        prev = cur;
    }
}
