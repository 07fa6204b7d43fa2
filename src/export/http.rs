//! `--listen ADDR:PORT`: `GET /metrics` on a thread of its own, bound to exactly the address
//! given (no default port: 9100-9999 belong to other exporters). One connection at a time,
//! each with a 2 s read and write timeout and an 8 KiB request limit, so a slow or hostile
//! client costs the server at most a few seconds and never the sampler, which only swaps the
//! page in. OpenMetrics when the scraper's `Accept` asks for it, else text format 0.0.4.

use super::Page;
use anyhow::{Context, Result};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(2);
const MAX_REQUEST: usize = 8 << 10;
const TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

pub struct Server {
    pub addr: SocketAddr,
}

/// Binds `addr` and serves `latest` until the process ends.
pub fn serve(addr: &str, latest: Arc<Mutex<Option<Page>>>) -> Result<Server> {
    let listener = TcpListener::bind(addr).with_context(|| format!("--listen {addr}"))?;
    let bound = listener.local_addr().context("--listen: local address")?;
    std::thread::Builder::new()
        .name("perftop-http".into())
        .spawn(move || {
            for conn in listener.incoming().flatten() {
                // A client that breaks off is its own problem; the next one is served.
                let _ = answer(conn, &latest);
            }
        })
        .context("starting the HTTP thread")?;
    Ok(Server { addr: bound })
}

/// The request's method, path and `Accept` header (`None`: not a request we can read).
fn parse(req: &str) -> Option<(&str, &str, bool)> {
    let mut lines = req.split("\r\n");
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

fn answer(mut conn: TcpStream, latest: &Mutex<Option<Page>>) -> std::io::Result<()> {
    conn.set_read_timeout(Some(TIMEOUT))?;
    conn.set_write_timeout(Some(TIMEOUT))?;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = conn.read(&mut chunk)?;
        if n == 0 || buf.len() + n > MAX_REQUEST {
            return reply(&mut conn, "400 Bad Request", TEXT, "bad request\n", true);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
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
    let page = latest.lock().ok().and_then(|p| p.clone());
    match page {
        Some(p) if om => reply(&mut conn, "200 OK", OPENMETRICS, &p.openmetrics, !head),
        Some(p) => reply(&mut conn, "200 OK", TEXT, &p.text, !head),
        None => {
            let body = "perftop: the first interval is not over yet\n";
            reply(&mut conn, "503 Service Unavailable", TEXT, body, !head)
        }
    }
}

fn reply(
    conn: &mut TcpStream,
    status: &str,
    kind: &str,
    body: &str,
    with_body: bool,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    conn.write_all(head.as_bytes())?;
    if with_body {
        conn.write_all(body.as_bytes())?;
    }
    conn.flush()
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn requests_and_accept_headers() {
        let r = "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5\r\n\r\n";
        assert_eq!(parse(r), Some(("GET", "/metrics", true)));
        let r = "GET /metrics?x=1 HTTP/1.1\r\naccept: text/plain\r\n\r\n";
        assert_eq!(parse(r), Some(("GET", "/metrics", false)));
        assert_eq!(parse("garbage"), None);
    }
}
