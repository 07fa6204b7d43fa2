//! `--listen ADDR:PORT`: `GET /metrics` bound to exactly the address given (no default port:
//! 9100-9999 belong to other exporters). An acceptor thread hands each connection to a thread
//! of its own, at most `CONNS` at a time; each has 2 s to send its whole request (8 KiB at
//! most) and 2 s to take the whole answer, deadlines rather than per-read timeouts, so a
//! client that trickles a byte a second is cut off all the same. When all `CONNS` are busy,
//! the oldest connection still sending its request is dropped for the new one: idle and slow
//! clients cannot starve a scraper, whose request arrives with its connection. The sampler
//! only swaps the page in. OpenMetrics when the scraper's `Accept` asks for it, else text
//! format 0.0.4.

use super::Page;
use crate::record::openmetrics::EOF as OPENMETRICS_END;
use anyhow::{Context, Result};
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Connections served at once: a scraper or two, with room for slow and idle ones to be
/// dropped in turn. Threads and memory stay flat at this (each thread touches a few pages of
/// its stack and an 8 KiB buffer at most).
const CONNS: usize = 32;
const READ_DEADLINE: Duration = Duration::from_secs(2);
const WRITE_DEADLINE: Duration = Duration::from_secs(2);
const MAX_REQUEST: usize = 8 << 10;
const STACK: usize = 256 << 10;
const TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

pub struct Server {
    pub addr: SocketAddr,
}

/// Binds `addr` and serves `latest` until the process ends.
pub fn serve(addr: &str, latest: Arc<Mutex<Option<Arc<Page>>>>) -> Result<Server> {
    let listener = TcpListener::bind(addr).with_context(|| format!("--listen {addr}"))?;
    let bound = listener.local_addr().context("--listen: local address")?;
    let conns = Arc::new(Conns::default());
    std::thread::Builder::new()
        .name("perftop-http".into())
        .spawn(move || accept(&listener, &conns, &latest))
        .context("starting the HTTP thread")?;
    Ok(Server { addr: bound })
}

/// The connections being served: how many threads hold one, and those still reading their
/// request, oldest first, each with a handle to cut it off.
#[derive(Default)]
struct Conns {
    table: Mutex<Table>,
    /// Signalled when a connection's thread ends.
    freed: Condvar,
}

#[derive(Default)]
struct Table {
    serving: usize,
    reading: VecDeque<(u64, TcpStream)>,
    next: u64,
}

impl Conns {
    fn lock(&self) -> MutexGuard<'_, Table> {
        // Nothing under the lock can panic half-way; a poisoned table is still consistent.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for a free place, dropping the oldest connection still reading its request when
    /// there is none, and takes it; `None` when `conn` cannot be tracked (no descriptor left).
    fn admit(self: &Arc<Self>, conn: &TcpStream) -> Option<Place> {
        let handle = conn.try_clone().ok()?;
        let mut t = self.lock();
        while t.serving >= CONNS {
            // Its blocked read returns at once and its thread ends; with every place busy
            // answering instead, one frees within the write deadline.
            if let Some((_, oldest)) = t.reading.pop_front() {
                let _ = oldest.shutdown(Shutdown::Both);
            }
            t = self
                .freed
                .wait_timeout(t, WRITE_DEADLINE)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        t.serving += 1;
        t.next += 1;
        let id = t.next;
        t.reading.push_back((id, handle));
        Some(Place {
            conns: Arc::clone(self),
            id,
        })
    }
}

/// A connection's place among the `CONNS`, given back when its thread ends (or never starts).
struct Place {
    conns: Arc<Conns>,
    id: u64,
}

impl Place {
    /// The request is in: from now on the connection is answered, not dropped for a newer one.
    fn read_done(&self) {
        self.conns.lock().reading.retain(|(id, _)| *id != self.id);
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut t = self.conns.lock();
        t.reading.retain(|(id, _)| *id != self.id);
        t.serving = t.serving.saturating_sub(1);
        drop(t);
        self.conns.freed.notify_one();
    }
}

fn accept(listener: &TcpListener, conns: &Arc<Conns>, latest: &Arc<Mutex<Option<Arc<Page>>>>) {
    loop {
        let conn = match listener.accept() {
            Ok((conn, _)) => conn,
            Err(e) => {
                // Out of descriptors or memory: retrying at once would spin on the same
                // error; a client that broke off (ECONNABORTED) is simply gone.
                if e.kind() != ErrorKind::ConnectionAborted && e.kind() != ErrorKind::Interrupted {
                    std::thread::sleep(Duration::from_millis(50));
                }
                continue;
            }
        };
        let Some(place) = conns.admit(&conn) else {
            continue;
        };
        let latest = Arc::clone(latest);
        // A thread that cannot start drops its closure, and with it the place.
        let _ = std::thread::Builder::new()
            .name("perftop-http-conn".into())
            .stack_size(STACK)
            .spawn(move || {
                // A client that breaks off is its own problem; the next one is served.
                let _ = answer(conn, &place, &latest);
            });
    }
}

/// The byte just past the empty line that ends a request's head: `\r\n\r\n`, or bare LFs
/// (`\n\n`, `\r\n\n`) as RFC 9112 allows (`printf 'GET /metrics HTTP/1.0\n\n' | nc`).
fn head_end(buf: &[u8]) -> Option<usize> {
    (0..buf.len()).find_map(|i| match &buf[i..] {
        [b'\n', b'\n', ..] => Some(i + 2),
        [b'\n', b'\r', b'\n', ..] => Some(i + 3),
        _ => None,
    })
}

/// The request's method, path and `Accept` header (`None`: not a request we can read).
/// Lines end in `\n`, a `\r` before it is dropped.
fn parse(req: &str) -> Option<(&str, &str, bool)> {
    let mut lines = req.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let mut first = lines.next()?.split(' ');
    let (method, target) = (first.next()?, first.next()?);
    let path = target.split('?').next().unwrap_or(target);
    let om = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .any(|(k, v)| {
            k.trim().eq_ignore_ascii_case("accept") && v.contains("application/openmetrics-text")
        });
    Some((method, path, om))
}

/// Why a request was not read.
enum Unread {
    /// Closed early, or over `MAX_REQUEST`.
    Bad,
    /// Not whole by the deadline.
    Late,
    Io(std::io::Error),
}

/// Reads up to the end of the request's head, all of it within `READ_DEADLINE`.
fn read_request(conn: &mut TcpStream) -> Result<Vec<u8>, Unread> {
    let deadline = Instant::now() + READ_DEADLINE;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = head_end(&buf) {
            buf.truncate(end);
            return Ok(buf);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Unread::Late);
        }
        conn.set_read_timeout(Some(left)).map_err(Unread::Io)?;
        match conn.read(&mut chunk) {
            Ok(0) => return Err(Unread::Bad),
            Ok(n) if buf.len() + n > MAX_REQUEST => return Err(Unread::Bad),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(Unread::Late)
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(Unread::Io(e)),
        }
    }
}

fn answer(
    mut conn: TcpStream,
    place: &Place,
    latest: &Mutex<Option<Arc<Page>>>,
) -> std::io::Result<()> {
    let buf = match read_request(&mut conn) {
        Ok(buf) => buf,
        Err(Unread::Bad) => {
            return reply(&mut conn, "400 Bad Request", TEXT, "bad request\n", true)
        }
        Err(Unread::Late) => {
            let body = "the request was not complete within 2 s\n";
            return reply(&mut conn, "408 Request Timeout", TEXT, body, true);
        }
        Err(Unread::Io(e)) => return Err(e),
    };
    place.read_done();
    let req = String::from_utf8_lossy(&buf);
    let Some((method, path, om)) = parse(&req) else {
        return reply(&mut conn, "400 Bad Request", TEXT, "bad request\n", true);
    };
    let head = method == "HEAD";
    if method != "GET" && !head {
        return reply(
            &mut conn,
            "405 Method Not Allowed",
            TEXT,
            "GET or HEAD\n",
            true,
        );
    }
    if path != "/metrics" {
        let body = "perftop: metrics are at /metrics\n";
        return reply(&mut conn, "404 Not Found", TEXT, body, !head);
    }
    // A reference, not a copy of the page: the lock is held for a counter's increment.
    let page = latest.lock().ok().and_then(|p| p.clone());
    match page {
        Some(p) if om => {
            let body = [p.text.as_str(), OPENMETRICS_END];
            reply_parts(&mut conn, "200 OK", OPENMETRICS, &body, !head)
        }
        Some(p) => reply(&mut conn, "200 OK", TEXT, &p.text, !head),
        None => {
            let body = "perftop: the first interval is not over yet\n";
            reply(&mut conn, "503 Service Unavailable", TEXT, body, !head)
        }
    }
}

/// Sends the answer, all of it within `WRITE_DEADLINE`: a client that reads a byte a second
/// is cut off at the deadline like one that reads nothing.
fn reply(
    conn: &mut TcpStream,
    status: &str,
    kind: &str,
    body: &str,
    with_body: bool,
) -> std::io::Result<()> {
    reply_parts(conn, status, kind, &[body], with_body)
}

/// `reply` with a body in parts, sent one after the other.
fn reply_parts(
    conn: &mut TcpStream,
    status: &str,
    kind: &str,
    body: &[&str],
    with_body: bool,
) -> std::io::Result<()> {
    let len: usize = body.iter().map(|b| b.len()).sum();
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
    );
    let deadline = Instant::now() + WRITE_DEADLINE;
    send(conn, head.as_bytes(), deadline)?;
    if with_body {
        for b in body {
            send(conn, b.as_bytes(), deadline)?;
        }
    }
    Ok(())
}

fn send(conn: &mut TcpStream, mut bytes: &[u8], deadline: Instant) -> std::io::Result<()> {
    while !bytes.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        conn.set_write_timeout(Some(left))?;
        match conn.write(bytes) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{head_end, parse};

    #[test]
    fn requests_and_accept_headers() {
        let r = "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5\r\n\r\n";
        assert_eq!(parse(r), Some(("GET", "/metrics", true)));
        let r = "GET /metrics?x=1 HTTP/1.1\r\naccept: text/plain\r\n\r\n";
        assert_eq!(parse(r), Some(("GET", "/metrics", false)));
        assert_eq!(parse("garbage"), None);
        // Bare LF line ends, and a CR before some of them.
        let r = "GET /metrics HTTP/1.0\nAccept: application/openmetrics-text\r\n\n";
        assert_eq!(parse(r), Some(("GET", "/metrics", true)));
    }

    #[test]
    fn the_head_ends_at_the_first_empty_line() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: x\r\n\r\nbody"), Some(27));
        assert_eq!(head_end(b"GET / HTTP/1.1\nHost: x\n\nbody"), Some(24));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: x\r\n\n"), Some(26));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: x\r\n\r"), None);
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: x\r\n"), None);
        assert_eq!(head_end(b""), None);
    }
}
