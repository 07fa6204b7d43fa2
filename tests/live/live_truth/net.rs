//! Interrupts, softirqs, context switches and loopback packets against mpstat -I SCPU, vmstat and sar.

use super::live::{self, f, find, LoadThread, Recording, Table};
use super::*;
use std::time::Duration;

/// Loopback TCP ping-pong: many small packets, wakeups and context switches at a steady rate.
fn loopback_pingpong() -> (LoadThread, LoadThread) {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    let client = TcpStream::connect(addr).expect("connect loopback");
    let (server, _) = listener.accept().expect("accept");
    for s in [&client, &server] {
        s.set_nodelay(true).expect("nodelay");
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .expect("timeout");
    }
    let mut srv = server;
    let echo = LoadThread::start(move || {
        let mut buf = [0u8; 256];
        if let Ok(n) = srv.read(&mut buf) {
            if n > 0 {
                let _ = srv.write_all(&buf[..n]);
            }
        }
    });
    let mut cli = client;
    let ping = LoadThread::start(move || {
        let mut buf = [0u8; 256];
        if cli.write_all(&[7u8; 200]).is_ok() {
            let _ = cli.read(&mut buf);
        }
    });
    (ping, echo)
}

/// `vmstat D N+1` data lines after the first (since boot): (in, cs) per interval.
fn vmstat_in_cs(text: &str) -> Vec<(f64, f64)> {
    let mut cols: Option<(usize, usize)> = None;
    let mut rows = Vec::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if let (Some(i), Some(c)) = (
            w.iter().position(|x| *x == "in"),
            w.iter().position(|x| *x == "cs"),
        ) {
            cols = Some((i, c));
            continue;
        }
        if let Some((i, c)) = cols {
            if let (Some(a), Some(b)) = (w.get(i), w.get(c)) {
                if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
                    rows.push((a, b));
                }
            }
        }
    }
    rows.into_iter().skip(1).collect()
}

/// `sar -n DEV D N` (C locale): `rxpck/s`, `txpck/s` of `dev` per interval.
fn sar_dev(text: &str, dev: &str) -> Vec<(f64, f64)> {
    let mut cols: Option<(usize, usize, usize)> = None;
    let mut rows = Vec::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.first() == Some(&"Average:") {
            continue;
        }
        if let Some(iface) = w.iter().position(|x| *x == "IFACE") {
            let rx = w.iter().position(|x| *x == "rxpck/s");
            let tx = w.iter().position(|x| *x == "txpck/s");
            cols = rx.zip(tx).map(|(r, t)| (iface, r, t));
            continue;
        }
        if let Some((i, r, t)) = cols {
            if w.get(i) == Some(&dev) {
                let p = |k: usize| w.get(k).and_then(|x| x.parse().ok()).unwrap_or(f64::NAN);
                rows.push((p(r), p(t)));
            }
        }
    }
    rows
}

#[test]
fn interrupts_softirqs_and_context_switches_match() {
    const T: &str = "interrupts_softirqs_and_context_switches_match";
    let _machine = support::machine();
    if !live::ready(T, &["mpstat", "vmstat", "sar"]) {
        return;
    }
    let _load = loopback_pingpong();
    live::sleep_ms(300);
    const D: u32 = 2;
    const N: usize = 2;
    let (ds, ns, n1) = (D.to_string(), N.to_string(), (N + 1).to_string());
    let rec = Recording::start(D.into(), N as u32 + 1);
    let mp = live::spawn("mpstat", &["-I", "SCPU", "-o", "JSON", &ds, &ns]);
    let vm = live::spawn("vmstat", &["-n", &ds, &n1]);
    let sar = live::spawn("sar", &["-n", "DEV", &ds, &ns]);
    let frames = rec.finish();
    let softirqs = sysstat(&live::output(mp));
    let vmstat = vmstat_in_cs(&live::output(vm));
    let lo = sar_dev(&live::output(sar), "lo");
    drop(_load);
    let mut t = Table::new(T);
    assert_eq!(frames.len(), N, "perftop intervals");
    assert_eq!(softirqs.len(), N, "mpstat reports");
    assert_eq!(vmstat.len(), N, "vmstat reports");
    for (i, fr) in frames.iter().enumerate() {
        // Softirq and interrupt rates follow the ping-pong, which is steady but not constant
        // (it shares 2 vCPUs with everything else). A few ms of window skew at each end of a
        // 2 s interval moves a share of the *whole* machine's rate, and the ping-pong threads
        // migrate between CPUs, so the skew can land on either CPU: 5% of the rate summed
        // over CPUs, plus 10/s.
        let rows = softirqs[i]["soft-interrupts"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let total = |name: &str| -> f64 {
            rows.iter()
                .filter(|r| r["cpu"] != "all")
                .filter_map(|r| find(&r["intr"], "name", name)?["value"].as_f64())
                .sum()
        };
        for row in &rows {
            let id = row["cpu"].as_str().unwrap_or("?");
            let Some(ours) = find(&fr["softirq_cpus"], "cpu", id) else {
                t.holds(
                    &format!("[{i}] cpu {id}"),
                    "absent".into(),
                    "present".into(),
                    false,
                );
                continue;
            };
            for name in ["NET_RX", "NET_TX", "TIMER", "SCHED", "RCU"] {
                let Some(theirs) =
                    find(&row["intr"], "name", name).and_then(|x| x["value"].as_f64())
                else {
                    continue;
                };
                let m = format!("[{i}] cpu {id} {name}/s");
                t.close(
                    &m,
                    f(ours, &["rates", name]),
                    theirs,
                    0.05 * total(name) + 10.0,
                );
            }
        }
        // vmstat prints integers and divides by the interval it asked for (2 s), not the one
        // that passed; it also sleeps D after its own work, so its windows drift a few ms per
        // interval: 5% plus 2/s.
        let (vin, vcs) = vmstat[i];
        t.rel(
            &format!("[{i}] intr_per_s vs vmstat in"),
            f(&fr["host"], &["intr_per_s"]),
            vin,
            0.05,
            2.0,
        );
        t.rel(
            &format!("[{i}] ctxt_per_s vs vmstat cs"),
            f(&fr["host"], &["ctxt_per_s"]),
            vcs,
            0.05,
            2.0,
        );
        match (find(&fr["nics"], "name", "lo"), lo.get(i)) {
            (Some(nic), Some(&(rx, tx))) => {
                t.rel(
                    &format!("[{i}] lo rx_packets_per_s vs sar rxpck/s"),
                    f(nic, &["rx_packets_per_s"]),
                    rx,
                    0.05,
                    2.0,
                );
                t.rel(
                    &format!("[{i}] lo tx_packets_per_s vs sar txpck/s"),
                    f(nic, &["tx_packets_per_s"]),
                    tx,
                    0.05,
                    2.0,
                );
            }
            _ => t.note(&format!("[{i}] lo"), "not in nics[]", "or not in sar"),
        }
        // Summed over every CPU: on the 16-CPU device host the ping-pong ran on CPUs 7, 8 and
        // 15 (perftop 49856/s vs mpstat 49948/s on CPU 7), and a sum over CPUs 0-1 read 0.
        let rx = fr["softirq_cpus"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| f(c, &["rates", "NET_RX"]))
            .sum::<f64>();
        t.holds(
            &format!("[{i}] loopback load visible (sum NET_RX/s > 1000)"),
            format!("{rx:.2}"),
            "> 1000".into(),
            rx > 1000.0,
        );
    }
    t.finish();
}
