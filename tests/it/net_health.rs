//! TCP/UDP stack and NIC health on a node_exporter-style tree: the vm-2cpu fixture's two
//! passes (2.00 s apart) with `proc/net/{netstat,snmp,sockstat}`, `net.ipv4.tcp_mem` and
//! `sys/class/net/eth0/` link files and `statistics/` added. Every expected number is worked
//! out by hand from the files written here. Then the network knobs through set, read-back and
//! undo on a fixture copy.

use crate::support;

use perftop::assess::assess;
use perftop::findings::Thresholds;
use perftop::root::Root;
use perftop::sample::Sample;
use perftop::source::Reader;
use perftop::tweak::apply::{self, FsWriter, Which};
use perftop::tweak::{plan, Ctx};
use std::fs;
use std::path::{Path, PathBuf};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(p, text).expect("write");
}

/// Counters of one pass.
struct Pass {
    overflows: u64,
    drops: u64,
    timeouts: u64,
    estab: u64,
    out_segs: u64,
    retrans: u64,
    rcvbuf: u64,
    carrier: u64,
    missed: u64,
}

const T0: Pass = Pass {
    overflows: 10,
    drops: 12,
    timeouts: 100,
    estab: 5,
    out_segs: 20_000,
    retrans: 100,
    rcvbuf: 0,
    carrier: 3,
    missed: 100,
};

/// Over 2 s: 10 overflows/s, 11 drops/s, 2 timeouts/s, 1000 segments/s out of which 30/s
/// retransmitted (3%), 3 UDP rcvbuf errors/s, 2 carrier changes, 10 missed/s.
const T1: Pass = Pass {
    overflows: 30,
    drops: 34,
    timeouts: 104,
    estab: 7,
    out_segs: 22_000,
    retrans: 160,
    rcvbuf: 6,
    carrier: 5,
    missed: 120,
};

fn tree(dir: &Path, when: &str, p: &Pass) -> PathBuf {
    let root = dir.join(when);
    support::copy_tree(&support::fixture("vm-2cpu").join(when), &root);
    // As Linux 6.x prints them (columns trimmed; the parser goes by name).
    write(
        &root,
        "proc/net/netstat",
        &format!(
            "TcpExt: SyncookiesSent SyncookiesRecv SyncookiesFailed EmbryonicRsts \
             ListenOverflows ListenDrops TCPBacklogDrop TCPTimeouts TCPRcvQDrop\n\
             TcpExt: 0 0 0 0 {} {} 0 {} 0\n\
             IpExt: InNoRoutes InTruncatedPkts\nIpExt: 0 0\n",
            p.overflows, p.drops, p.timeouts
        ),
    );
    write(
        &root,
        "proc/net/snmp",
        &format!(
            "Ip: Forwarding DefaultTTL\nIp: 2 64\n\
             Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails \
             EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n\
             Tcp: 1 200 120000 -1 100 50 0 0 {} 10000 {} {} 0 3 0\n\
             Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors \
             InCsumErrors IgnoredMulti MemErrors\n\
             Udp: 100 0 0 100 {} 0 0 0 0\n\
             UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\n\
             UdpLite: 0 0 0 0 99 0\n",
            p.estab, p.out_segs, p.retrans, p.rcvbuf
        ),
    );
    write(
        &root,
        "proc/net/sockstat",
        "sockets: used 30\nTCP: inuse 9 orphan 1 tw 4 alloc 12 mem 300\nUDP: inuse 2 mem 8\n",
    );
    write(&root, "proc/sys/net/ipv4/tcp_mem", "1000\t2000\t3000\n");
    let eth0 = "sys/class/net/eth0";
    for (f, v) in [
        ("speed", "10000".to_string()),
        ("duplex", "full".into()),
        ("mtu", "9000".into()),
        ("tx_queue_len", "1000".into()),
        ("operstate", "up".into()),
        ("carrier_changes", p.carrier.to_string()),
        ("statistics/rx_missed_errors", p.missed.to_string()),
        ("statistics/rx_crc_errors", "7".into()),
    ] {
        write(&root, &format!("{eth0}/{f}"), &format!("{v}\n"));
    }
    // The fixture's driver link makes eth0 a device NIC (its error counters are read, when
    // their /proc/net/dev columns move).
    assert!(fs::symlink_metadata(root.join(format!("{eth0}/device/driver"))).is_ok());
    // lo: the kernel answers EINVAL for speed/duplex; here they are simply absent.
    write(&root, "sys/class/net/lo/mtu", "65536\n");
    write(&root, "sys/class/net/lo/operstate", "unknown\n");
    root
}

/// eth0's link as a sample read it.
fn eth0_link(s: &Sample) -> perftop::sample::NicLink {
    s.net
        .devices
        .iter()
        .find(|d| d.name == "eth0")
        .and_then(|d| d.link.clone())
        .expect("eth0 link")
}

fn samples() -> (tempfile::TempDir, Sample, Sample) {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = Reader::new(Root::new(tree(dir.path(), "t0", &T0))).sample();
    let b = Reader::new(Root::new(tree(dir.path(), "t1", &T1))).sample();
    (dir, a, b)
}

#[test]
fn tcp_and_nic_health_read_and_derive_right() {
    let (_dir, a, b) = samples();
    assert!(b.problems.is_empty(), "{:?}", b.problems);
    let t = b.net.tcp.as_ref().expect("tcp read");
    assert_eq!(
        (
            t.listen_overflows,
            t.listen_drops,
            t.backlog_drop,
            t.rcvq_drop
        ),
        (Some(30), Some(34), Some(0), Some(0))
    );
    assert_eq!(
        (t.curr_estab, t.out_segs, t.retrans_segs, t.in_errs),
        (Some(7), Some(22_000), Some(160), Some(0))
    );
    // Udp's, not UdpLite's (99).
    assert_eq!(t.udp_rcvbuf_errors, Some(6));
    assert_eq!(
        (t.inuse, t.orphan, t.tw, t.mem_pages),
        (Some(9), Some(1), Some(4), Some(300))
    );
    assert_eq!(t.tcp_mem, Some([1000, 2000, 3000]));

    let d = assess(Some(&a), &b, &Thresholds::default());
    let iv = d.derived.interval_s.expect("interval");
    assert!((iv - 2.0).abs() < 1e-9, "uptime 1000.00 -> 1002.00: {iv}");
    let m = d.derived.tcp.as_ref().expect("tcp metrics");
    assert_eq!(m.listen_overflows_per_s, Some(10.0));
    assert_eq!(m.listen_drops_per_s, Some(11.0));
    assert_eq!(m.timeouts_per_s, Some(2.0));
    assert_eq!(m.out_segs_per_s, Some(1000.0));
    assert_eq!(m.retrans_segs_per_s, Some(30.0));
    assert_eq!(m.retrans_pct, Some(3.0));
    assert_eq!(m.udp_rcvbuf_errors_per_s, Some(3.0));
    assert_eq!(m.mem_of_max_pct, Some(10.0));
    // Socket memory in the page size the sample carries, never a guess.
    // (4 kB: what the fixture's exact meminfo/vmstat pairs agree on.)
    assert_eq!(
        (b.memory.page_kb, b.memory.page_kb_from.map(|f| f.as_str())),
        (Some(4), Some("inferred"))
    );
    assert_eq!(m.mem_kb, Some(1200));

    let nic = |name: &str| {
        d.derived
            .nics
            .iter()
            .find(|n| n.name == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let l = nic("eth0").link.as_ref().expect("eth0 link");
    assert_eq!(
        (l.speed_mbps, l.duplex.as_deref(), l.mtu, l.tx_queue_len),
        (Some(10_000), Some("full"), Some(9000), Some(1000))
    );
    assert_eq!(l.operstate.as_deref(), Some("up"));
    assert_eq!(
        (l.carrier_changes, l.carrier_changes_delta),
        (Some(5), Some(2))
    );
    assert_eq!((l.rx_missed_per_s, l.rx_crc_per_s), (Some(10.0), Some(0.0)));
    // lo has no device: no error counters read, speed unknown (not 0).
    let lo = nic("lo").link.as_ref().expect("lo link");
    assert_eq!((lo.speed_mbps, lo.carrier_changes), (None, None));
    assert_eq!(
        (lo.mtu, lo.operstate.as_deref()),
        (Some(65536), Some("unknown"))
    );

    let ids: Vec<&str> = d.findings.iter().map(|f| f.id.as_str()).collect();
    for id in [
        "net.listen_overflow",
        "net.retrans",
        "udp.rcvbuf",
        "nic.errors",
        "nic.link",
    ] {
        assert!(ids.contains(&id), "{id} in {ids:?}");
    }
    let f = |id: &str| {
        d.findings
            .iter()
            .find(|f| f.id == id)
            .map(|f| f.message.clone())
            .unwrap_or_default()
    };
    assert_eq!(
        f("net.retrans"),
        "TCP retransmits 3.0% of 1.0k segments/s out (30/s, 2 timeouts/s)"
    );
    assert_eq!(
        f("nic.errors"),
        "eth0: 10 missed/s (rx ring full: ethtool -G)"
    );
    assert_eq!(
        f("nic.link"),
        "eth0 carrier changed 2 times in 2s (flapping; now up)"
    );

    // The text report's TCP line and NIC link columns.
    let text = perftop::text::report(&d, 2, 200);
    assert!(
        text.contains("TCP lovf 10/s  retx 3.0% of 1.0k/s  tmo 2/s  est 7 tw 4"),
        "{text}"
    );
    assert!(text.contains("up 10G full"), "{text}");
}

#[test]
fn truncated_and_missing_stack_files_are_unknown_not_zero() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = tree(dir.path(), "t1", &T1);
    // A header without its value line; an older kernel's Tcp without InErrs.
    write(
        &root,
        "proc/net/netstat",
        "TcpExt: ListenOverflows ListenDrops\n",
    );
    write(
        &root,
        "proc/net/snmp",
        "Tcp: RtoAlgorithm CurrEstab OutSegs RetransSegs\nTcp: 1 7 22000 160\n",
    );
    fs::remove_file(root.join("proc/net/sockstat")).expect("rm sockstat");
    fs::write(root.join("sys/class/net/eth0/speed"), "-1\n").expect("speed");
    fs::write(root.join("sys/class/net/eth0/duplex"), "unknown\n").expect("duplex");
    let s = Reader::new(Root::new(&root)).sample();
    let t = s.net.tcp.as_ref().expect("tcp");
    assert_eq!((t.listen_overflows, t.in_errs, t.inuse), (None, None, None));
    assert_eq!((t.out_segs, t.udp_rcvbuf_errors), (Some(22_000), None));
    assert!(
        s.problems
            .iter()
            .any(|p| p.path == "proc/net/netstat" && p.what.contains("without values")),
        "{:?}",
        s.problems
    );
    let l = s
        .net
        .devices
        .iter()
        .find(|d| d.name == "eth0")
        .and_then(|d| d.link.as_ref());
    let l = l.expect("link");
    assert_eq!((l.speed_mbps, l.duplex.as_deref()), (None, None));
    let d = assess(None, &s, &Thresholds::default());
    let m = d.derived.tcp.expect("tcp");
    assert_eq!(m.listen_overflows_per_s, None);
}

// ---------------------------------------------------------------- tweaks

fn host() -> (tempfile::TempDir, Ctx) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    support::copy_tree(&support::fixture("vm-2cpu").join("t0"), &root);
    for (f, v) in [
        ("core/somaxconn", "4096"),
        ("ipv4/tcp_max_syn_backlog", "512"),
        ("core/rmem_max", "212992"),
        ("core/wmem_max", "212992"),
    ] {
        write(&root, &format!("proc/sys/net/{f}"), &format!("{v}\n"));
    }
    write(&root, "sys/class/net/eth0/queues/rx-0/rps_cpus", "0\n");
    let ctx = Ctx {
        root: Root::new(&root),
        state_dir: dir.path().join("state"),
        privileged: true,
        read_only: false,
    };
    (dir, ctx)
}

fn set(ctx: &Ctx, knob: &str, value: &str) -> Result<(), String> {
    let p = plan::plan(ctx, knob, value).map_err(|r| r.to_string())?;
    let r = apply::apply(ctx, &p, &mut FsWriter).map_err(|e| e.to_string())?;
    if r.ok() {
        Ok(())
    } else {
        Err(r.text())
    }
}

#[test]
fn socket_sysctls_set_read_back_and_undo() {
    let _writes = support::writing();
    let (_dir, ctx) = host();
    let read = |f: &str| ctx.root.read_line(&format!("proc/sys/net/{f}"));
    set(&ctx, "net.core.somaxconn", "8192").expect("somaxconn");
    set(&ctx, "net.ipv4.tcp_max_syn_backlog", "2048").expect("syn backlog");
    set(&ctx, "net.core.rmem_max", "16777216").expect("rmem_max");
    set(&ctx, "net.core.wmem_max", "268435456").expect("wmem_max at its bound");
    assert_eq!(read("core/somaxconn").as_deref(), Some("8192"));
    assert_eq!(read("ipv4/tcp_max_syn_backlog").as_deref(), Some("2048"));
    assert_eq!(read("core/rmem_max").as_deref(), Some("16777216"));
    assert_eq!(read("core/wmem_max").as_deref(), Some("268435456"));
    // Bounds: nothing written.
    for (k, v) in [
        ("net.core.somaxconn", "65536"),
        ("net.core.somaxconn", "127"),
        ("net.ipv4.tcp_max_syn_backlog", "262145"),
        ("net.core.rmem_max", "268435457"),
        ("net.core.wmem_max", "4096"),
    ] {
        assert!(set(&ctx, k, v).is_err(), "{k}={v} is out of bounds");
    }
    // The dashboard takes sizes: 16M is what the file takes.
    let k = perftop::tweak::knob::find(&ctx, "net.core.rmem_max").expect("knob");
    assert_eq!(k.parse_value("16M").as_deref(), Ok("16777216"));
    // Undo, newest first: every file is back.
    for _ in 0..4 {
        let u = apply::undo(&ctx, &mut FsWriter, Which::Last, None).expect("undo");
        assert!(u.ok(), "{}", u.text());
    }
    assert_eq!(read("core/somaxconn").as_deref(), Some("4096"));
    assert_eq!(read("ipv4/tcp_max_syn_backlog").as_deref(), Some("512"));
    assert_eq!(read("core/rmem_max").as_deref(), Some("212992"));
    assert_eq!(read("core/wmem_max").as_deref(), Some("212992"));
}

#[test]
fn rps_takes_a_cpu_list_or_mask_of_online_cpus_and_undoes() {
    let _writes = support::writing();
    let (_dir, ctx) = host();
    let rel = "sys/class/net/eth0/queues/rx-0/rps_cpus";
    let p = plan::plan(&ctx, "net.eth0.rx-0.rps_cpus", "0-1").expect("plan");
    assert_eq!(p.knob, "net.eth0.rx-0.rps_cpus");
    assert_eq!(p.value, "3", "CPUs 0-1 as the kernel's mask");
    assert!(apply::apply(&ctx, &p, &mut FsWriter).expect("apply").ok());
    assert_eq!(ctx.root.read_line(rel).as_deref(), Some("3"));
    // vm-2cpu has CPUs 0-1 online: CPU 2 is refused, as a list or a mask.
    let e = plan::plan(&ctx, "net.eth0.rx-0.rps_cpus", "2").expect_err("CPU 2 offline");
    assert!(e.to_string().contains("CPU 2 is not online"), "{e}");
    assert!(plan::plan(&ctx, "net.eth0.rx-0.rps_cpus", "0x4").is_err());
    set(&ctx, "net.eth0.rx-0.rps_cpus", "0x2").expect("mask");
    assert_eq!(ctx.root.read_line(rel).as_deref(), Some("2"));
    for _ in 0..2 {
        let u = apply::undo(&ctx, &mut FsWriter, Which::Last, None).expect("undo");
        assert!(u.ok(), "{}", u.text());
    }
    assert_eq!(ctx.root.read_line(rel).as_deref(), Some("0"));
    // A queue that does not exist: disabled with the reason and the command.
    let e = plan::plan(&ctx, "net.eth9.rx-0.rps_cpus", "0").expect_err("no eth9");
    assert!(e.to_string().contains("not present"), "{e}");
}

/// The link's settings are read in the settings tier, but a moved `carrier_changes` (a
/// counter, read every sample) reads them again in the same sample: a link that went down is
/// never shown up. Without a carrier change an edited `operstate` shows within the tier's 10
/// samples. (Serialised with the tweak tests: a perftop write makes every setting due.)
#[test]
fn a_carrier_change_rereads_the_link_state_at_once() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    let root = tree(dir.path(), "t0", &T0);
    let eth0 = root.join("sys/class/net/eth0");
    let mut reader = Reader::new(Root::new(&root));
    let state = |s: &Sample| {
        let l = eth0_link(s);
        (l.operstate, l.speed_mbps, l.carrier_changes)
    };
    let first = reader.sample();
    assert_eq!(state(&first), (Some("up".into()), Some(10_000), Some(3)));
    // No carrier change: the edit shows when the setting is due, within 10 samples (taken
    // back to back, well within the 2 s that make every setting due at once).
    fs::write(eth0.join("operstate"), "down\n").expect("operstate");
    let mut samples = 1;
    while state(&reader.sample()).0.as_deref() == Some("up") {
        samples += 1;
        assert!(samples <= 10, "operstate not read again in 10 samples");
    }
    // It was just read: due again only 10 samples on. The carrier comes back: the counter
    // moves, and the same sample reads the state (and the speed) again.
    fs::write(eth0.join("operstate"), "up\n").expect("operstate");
    fs::write(eth0.join("carrier_changes"), "4\n").expect("carrier");
    fs::write(eth0.join("speed"), "25000\n").expect("speed");
    let back = reader.sample();
    assert_eq!(state(&back), (Some("up".into()), Some(25_000), Some(4)));
    // And no change without one: an edit now waits for its refresh.
    fs::write(eth0.join("operstate"), "down\n").expect("operstate");
    assert_eq!(state(&reader.sample()).0.as_deref(), Some("up"));
}

/// At 80x24 the Softirq/NIC pane, focused with `6`, shows the TCP line, and the pane's headline
/// carries the alarms (the listen overflows first, so a narrow screen keeps them).
#[test]
fn the_tcp_line_and_alarms_show_at_80x24() {
    use perftop::ui::app::App;
    use ratatui::crossterm::event::KeyCode;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = App::new(
        std::time::Duration::from_secs(1),
        std::time::Duration::from_secs(600),
    );
    app.session.privilege = "root".into();
    for (t, p) in [("t0", &T0), ("t1", &T1)] {
        app.push_sample(Reader::new(Root::new(tree(dir.path(), t, p))).sample());
    }
    support::screen::key(&mut app, KeyCode::Char('6'));
    let s = support::screen::screen(&app, 80, 24);
    assert!(
        s.contains("TCP lovf 10/s  retx 3.0% of 1.0k/s  tmo 2/s  est 7 tw 4"),
        "{s}"
    );
    let headline = s
        .lines()
        .find(|l| l.contains("NET_RX"))
        .unwrap_or_else(|| panic!("no Softirq headline:\n{s}"));
    assert!(
        headline.contains("NET_RX 1.2k/s  lovf 10/s  retx 3.0%"),
        "{headline}"
    );
}

/// The listeners are read only on a sample whose ListenOverflows moved: one reader over one
/// tree, its counters rewritten between reads (t0's, then t1's with 20 more overflows, then
/// t1's again).
#[test]
fn listeners_are_read_when_overflows_move_and_name_the_port() {
    let dir = tempfile::tempdir().expect("tempdir");
    let live = dir.path().join("live");
    let t0 = tree(dir.path(), "t0", &T0);
    let t1 = tree(dir.path(), "t1", &T1);
    // :8080 on 127.0.0.1 with 2 waiting (a listen(1) socket is full at 2), :22 with none,
    // then an established row; tcp6 `::` :443 with 1.
    for root in [&t0, &t1] {
        write(
            root,
            "proc/net/tcp",
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
                0: 0100007F:1F90 00000000:0000 0A 00000000:00000002 00:00000000 00000000     0        0 1\n\
                1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2\n\
                2: 0100007F:1F90 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 3\n",
        );
        write(
            root,
            "proc/net/tcp6",
            "  sl  local_address                         remote_address                        st tx_queue rx_queue\n\
                0: 00000000000000000000000000000000:01BB 00000000000000000000000000000000:0000 0A 00000000:00000001 00:00000000\n",
        );
    }
    fs::rename(&t0, &live).expect("t0 in place");
    let mut reader = Reader::new(Root::new(&live));
    let first = reader.sample();
    assert_eq!(
        first.net.tcp.as_ref().and_then(|t| t.listeners.clone()),
        None,
        "nothing to compare the first sample's counter with"
    );
    fs::rename(&live, dir.path().join("was-t0")).expect("t0 out");
    fs::rename(&t1, &live).expect("t1 in place");
    let moved = reader.sample();
    let got: Vec<(String, u16, u64)> = moved
        .net
        .tcp
        .as_ref()
        .and_then(|t| t.listeners.clone())
        .expect("read when ListenOverflows moved")
        .into_iter()
        .map(|l| (l.addr, l.port, l.queue))
        .collect();
    assert_eq!(got, [("127.0.0.1".into(), 8080, 2), ("::".into(), 443, 1)]);
    let d = assess(Some(&first), &moved, &Thresholds::default());
    let f = d
        .findings
        .iter()
        .find(|f| f.id == "net.listen_overflow")
        .expect("overflow finding");
    assert!(
        f.message.contains(":8080 accept queue 2 full"),
        "{}",
        f.message
    );
    let still = reader.sample();
    assert_eq!(
        still.net.tcp.as_ref().and_then(|t| t.listeners.clone()),
        None,
        "the counter did not move: not read"
    );
}

/// `rx_missed_errors` and `rx_crc_errors` are read when `/proc/net/dev`'s `drop` and `frame`
/// columns (the kernel's sums that hold them) moved, on that same sample; while a column stays
/// put its counter is as last read, unread (2 of a healthy NIC's 3 files a sample).
#[test]
fn nic_error_counters_are_read_when_their_dev_column_moves() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = tree(dir.path(), "t0", &T0);
    let dev = |drop: u64, frame: u64| {
        format!(
            "Inter-|   Receive                                                |  Transmit\n \
             face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n    \
             lo:  123456     789    0    0    0     0          0         0   123456     789    0    0    0     0       0          0\n  \
             eth0: 98765432  123456    0 {drop}    0 {frame}          0         0 12345678   65432    0    0    0     0       0          0\n"
        )
    };
    let errors = |s: &Sample| {
        let l = eth0_link(s);
        (l.rx_missed_errors, l.rx_crc_errors)
    };
    write(&root, "proc/net/dev", &dev(103, 7));
    let mut reader = Reader::new(Root::new(&root));
    assert_eq!(errors(&reader.sample()), (Some(100), Some(7)));
    // 50 more missed: the drop column moves with them and the same sample reads the counter.
    write(
        &root,
        "sys/class/net/eth0/statistics/rx_missed_errors",
        "150\n",
    );
    write(&root, "proc/net/dev", &dev(153, 7));
    assert_eq!(errors(&reader.sample()), (Some(150), Some(7)));
    // A counter the kernel's sum does not say moved is not read: the file edited alone (which
    // the kernel never does) is not seen...
    write(&root, "sys/class/net/eth0/statistics/rx_crc_errors", "9\n");
    assert_eq!(errors(&reader.sample()), (Some(150), Some(7)));
    // ...until the frame column moves.
    write(&root, "proc/net/dev", &dev(153, 9));
    assert_eq!(errors(&reader.sample()), (Some(150), Some(9)));
}
