//! `perftop export --listen` against hostile clients: slow and idle connections beside a
//! scraper, and requests with bare-LF line ends.

use super::{exporter, support, wait_for};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Starts `perftop export --listen 127.0.0.1:0 ARGS` and reads the address it bound from its
/// first stderr line; the rest of stderr is drained on a thread (which ends with the child).
fn exporter_on_loopback(args: &[&str]) -> (Child, SocketAddr) {
    let mut all = vec!["--listen", "127.0.0.1:0"];
    all.extend_from_slice(args);
    let mut child = exporter(&all);
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    let mut addr = None;
    // Bounded: the exporter prints this before its first interval, or exits (EOF).
    for _ in 0..8 {
        line.clear();
        if err.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        if let Some(a) = line.trim().strip_prefix("perftop: serving http://") {
            addr = a.strip_suffix("/metrics").and_then(|a| a.parse().ok());
            break;
        }
    }
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    let addr = addr.unwrap_or_else(|| {
        let _ = child.kill();
        panic!("no 'serving http://' line (last: {line:?})")
    });
    (child, addr)
}

/// One scrape with 3 s limits on connect and on the answer: the status line, the body and how
/// long it took.
fn scrape(addr: SocketAddr, request: &str) -> (String, String, Duration) {
    let t = Instant::now();
    let limit = Duration::from_secs(3);
    let Ok(mut c) = TcpStream::connect_timeout(&addr, limit) else {
        return ("no connection".into(), String::new(), t.elapsed());
    };
    let _ = c.set_read_timeout(Some(limit));
    let _ = c.set_write_timeout(Some(limit));
    let _ = c.write_all(request.as_bytes());
    let mut out = Vec::new();
    let _ = c.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let status = head.lines().next().unwrap_or("").to_string();
    (status, body.to_string(), t.elapsed())
}

/// `Threads` and `VmRSS` (kB) of a process.
fn threads_and_rss(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (field("Threads:"), field("VmRSS:"))
}

/// A client that sends one byte of a request every 1.5 s until `stop`, and connects again
/// whenever the server has dropped it.
fn slow_client(addr: SocketAddr, stop: Arc<AtomicBool>, until: Instant) {
    let req = b"GET /metrics HTTP/1.1\r\nHost: slow\r\nX-Slow: 1\r\n\r\n";
    let mut conn: Option<TcpStream> = None;
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) && Instant::now() < until {
        let c = match conn.take() {
            Some(c) => c,
            None => match TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
                Ok(c) => c,
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
            },
        };
        // Dropped (EOF) or answered (a 408): connect again at once.
        let _ = c.set_read_timeout(Some(Duration::from_millis(1)));
        let mut b = [0u8; 64];
        if (&c).read(&mut b).is_ok() {
            continue;
        }
        if (&c).write_all(&req[i % req.len()..][..1]).is_err() {
            continue;
        }
        i += 1;
        conn = Some(c);
        std::thread::sleep(Duration::from_millis(1500));
    }
}

/// Item 7 of issue 37: one client sending a byte every 1.5 s held scrapes for 29.6 s, and 500
/// idle connections made most scrapes time out. Three slow clients and 400 idle connections
/// (half open before the first scrape, half arriving between scrapes): every scrape is answered
/// within 1.5 s, and the exporter's threads and memory stay flat.
#[test]
fn slow_and_idle_clients_do_not_hold_up_scrapes() {
    let _machine = support::machine();
    let (mut child, addr) = exporter_on_loopback(&["-d", "0.25"]);
    let ready = wait_for(10.0, || {
        scrape(addr, "GET /metrics HTTP/1.1\r\n\r\n").0 == "HTTP/1.1 200 OK"
    });
    let (threads0, rss0) = threads_and_rss(child.id());
    let stop = Arc::new(AtomicBool::new(false));
    let until = Instant::now() + Duration::from_secs(30);
    let slow: Vec<_> = (0..3)
        .map(|_| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || slow_client(addr, stop, until))
        })
        .collect();
    // Idle connections say nothing and are held (client side) to the end of the test; opening
    // them is bounded in time, whether the server accepts them or not.
    let open_idle = |n: usize, idle: &mut Vec<TcpStream>| {
        let by = Instant::now() + Duration::from_secs(3);
        for _ in 0..n {
            if Instant::now() > by {
                break;
            }
            if let Ok(c) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) {
                idle.push(c);
            }
        }
    };
    let mut idle = Vec::new();
    open_idle(200, &mut idle);
    // Let the slow clients each send a byte or two first.
    std::thread::sleep(Duration::from_millis(2000));
    let mut times = Vec::new();
    let mut bad = Vec::new();
    let (mut threads_max, mut rss_max) = (threads0, rss0);
    for i in 0..12 {
        let (status, body, took) = scrape(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        let (t, r) = threads_and_rss(child.id());
        (threads_max, rss_max) = (threads_max.max(t), rss_max.max(r));
        times.push(took.as_secs_f64());
        let whole = body.contains("perftop_read_problems");
        if status != "HTTP/1.1 200 OK" || !whole || took > Duration::from_millis(1500) {
            bad.push(format!("scrape {i}: {status:?} in {took:?}"));
            // Bounded on the old code, which answers nothing for minutes: three are enough.
            if bad.len() >= 3 {
                break;
            }
        }
        if i % 3 == 0 {
            open_idle(50, &mut idle);
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    stop.store(true, Ordering::Relaxed);
    let opened = idle.len();
    drop(idle);
    for s in slow {
        let _ = s.join();
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(ready, "exporter did not serve within 10 s");
    eprintln!(
        "{opened} idle connections, scrapes (s): {times:.3?}; threads {threads0} -> max \
         {threads_max}, RSS {rss0} kB -> max {rss_max} kB"
    );
    assert!(
        bad.is_empty(),
        "slow scrapes: {bad:?}; all (s): {times:.3?}"
    );
    assert!(opened >= 300, "only {opened} idle connections opened");
    // At most 64 connection threads beside the ones the exporter had idle.
    assert!(
        threads_max <= threads0 + 64,
        "threads {threads0} -> {threads_max}"
    );
    // Each connection costs a thread's touched stack and an 8 KiB request buffer at most:
    // 64 of them stay far below 32 MB.
    assert!(rss_max <= rss0 + 32 * 1024, "RSS {rss0} kB -> {rss_max} kB");
}

/// A request whose lines end in a bare LF (`printf 'GET /metrics HTTP/1.0\n\n' | nc`) is
/// answered, its headers read as well (the OpenMetrics `Accept`).
#[test]
fn a_request_with_bare_lf_line_ends_is_answered() {
    let _machine = support::machine();
    let (mut child, addr) = exporter_on_loopback(&["-d", "0.25"]);
    let ready = wait_for(10.0, || {
        scrape(addr, "GET /metrics HTTP/1.1\r\n\r\n").0 == "HTTP/1.1 200 OK"
    });
    let lf = scrape(
        addr,
        "GET /metrics HTTP/1.1\nHost: x\nAccept: application/openmetrics-text; version=1.0.0\n\n",
    );
    let mixed = scrape(addr, "GET /metrics HTTP/1.0\r\nHost: x\n\n");
    let _ = child.kill();
    let _ = child.wait();
    assert!(ready, "exporter did not serve within 10 s");
    assert_eq!(lf.0, "HTTP/1.1 200 OK", "bare LF, after {:?}", lf.2);
    assert!(lf.1.ends_with("# EOF\n"), "the Accept header was read");
    assert_eq!(
        mixed.0, "HTTP/1.1 200 OK",
        "CRLF then LF, after {:?}",
        mixed.2
    );
    assert!(!mixed.1.contains("# EOF"), "text format without Accept");
}

/// The 2 s for a request are a deadline, not a timeout per read: a client sending a byte every
/// 0.3 s (which a per-read timeout never ends) gets `408` 2 s after it connected.
#[test]
fn a_trickled_request_is_cut_off_at_its_deadline() {
    let _machine = support::machine();
    let (mut child, addr) = exporter_on_loopback(&["-d", "0.25"]);
    let mut c = TcpStream::connect(addr).expect("connect");
    let t = Instant::now();
    let _ = c.set_read_timeout(Some(Duration::from_millis(300)));
    let mut got = Vec::new();
    // Bounded: 8 s at most, then the verdict.
    while t.elapsed() < Duration::from_secs(8) {
        if c.write_all(b"X").is_err() {
            break;
        }
        let mut b = [0u8; 256];
        match c.read(&mut b) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&b[..n]),
            Err(_) => {}
        }
    }
    let took = t.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    let got = String::from_utf8_lossy(&got);
    assert!(
        got.starts_with("HTTP/1.1 408 Request Timeout"),
        "after {took:?}: {got:?}"
    );
    // 2 s, and up to 1.5 s more for a loaded machine to get round to it.
    assert!(
        (1.9..3.5).contains(&took.as_secs_f64()),
        "cut off after {took:?}"
    );
}
