//! One host's link: `ssh HOST perftop stream`, its stdout decoded as it comes
//! (`record::stream`), and when it ends — the connection dropped, the remote process killed,
//! nothing heard for too long — the same again after a backoff (1 s, doubling to 30 s, back to
//! 1 s once samples flow again), until the caller says stop.
//!
//! The ssh child's stdin is a pipe held open for the life of the link: the remote sampler reads
//! its stdin and exits at end of file, so closing the link (or this process ending, which
//! closes the pipe) ends it on the remote too. It is also how the dashboard's `+`/`-` reach the
//! remote sampler: a line `interval MS` each time the wanted interval changes (`Wanted`), and
//! again on every new connection.

use super::{ssh_command, Target};
use crate::record::stream::{Got, StreamDecoder};
use std::io::{Read, Write};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const FIRST_RETRY: Duration = Duration::from_secs(1);
const LAST_RETRY: Duration = Duration::from_secs(30);
/// The most of ssh's stderr kept to say why a link ended.
const STDERR_KEEP: usize = 4096;
/// How often a quiet link looks whether the wanted interval changed.
const CHANGE_POLL: Duration = Duration::from_millis(250);

/// The interval (ms) the dashboard wants the remote to sample at; 0 until it says.
pub type Wanted = Arc<AtomicU64>;

/// How long a link may stay silent before it is given up: a few intervals, never under 15 s
/// (ssh's own keep-alives give up after 15 s).
pub fn stall(interval: Duration) -> Duration {
    (interval * 5).max(Duration::from_secs(15))
}

/// What happened to the link.
#[derive(Debug, Clone, PartialEq)]
pub enum LinkEvent {
    /// Samples flow (again).
    Up,
    /// The link ended at `at_ms` (wall clock); the next try is in `retry`.
    Lost {
        at_ms: i64,
        why: String,
        retry: Duration,
    },
}

/// Runs the link until `on_got` or `on_link` returns false. `started`: the interval
/// `remote_cmd` starts the sampler at; `want`: the one the dashboard asks for now, sent to the
/// remote when it differs. A link silent for `stall(interval)` is given up as dead.
pub fn run(
    t: &Target,
    remote_cmd: &str,
    started: Duration,
    want: &Wanted,
    mut on_got: impl FnMut(Got) -> bool,
    mut on_link: impl FnMut(LinkEvent) -> bool,
) {
    let mut retry = FIRST_RETRY;
    loop {
        let (why, go_on) = match connect(t, remote_cmd) {
            Ok(mut conn) => {
                conn.sent_ms = started.as_millis() as u64;
                let (why, go_on) = conn.pump(want, &mut retry, &mut on_got, &mut on_link);
                let why = conn.finish(why);
                (why, go_on)
            }
            Err(e) => (format!("{e:#}"), true),
        };
        if !go_on {
            return;
        }
        let at_ms = crate::record::writer::wall_ms();
        if !on_link(LinkEvent::Lost { at_ms, why, retry }) {
            return;
        }
        std::thread::sleep(retry);
        retry = (retry * 2).min(LAST_RETRY);
    }
}

/// One ssh connection and the threads reading its output.
struct Conn {
    child: Child,
    /// Held open: the remote sampler ends at its end of file, and reads interval changes.
    stdin: Option<std::process::ChildStdin>,
    /// The interval (ms) the remote sampler was last told.
    sent_ms: u64,
    chunks: Receiver<std::io::Result<Vec<u8>>>,
    stderr: Arc<Mutex<String>>,
}

fn connect(t: &Target, remote_cmd: &str) -> anyhow::Result<Conn> {
    use anyhow::Context;
    let mut child = ssh_command(t, remote_cmd)?
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting ssh")?;
    let stdin = child.stdin.take();
    let mut stdout = child.stdout.take().context("ssh's stdout")?;
    let mut errout = child.stderr.take().context("ssh's stderr")?;
    // Bounded: a reader that gets ahead waits for the decoder.
    let (tx, chunks) = sync_channel(64);
    std::thread::Builder::new()
        .name("ssh-out".into())
        .spawn(move || {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                let r = stdout.read(&mut buf).map(|n| buf[..n].to_vec());
                let end = !matches!(&r, Ok(b) if !b.is_empty());
                if tx.send(r).is_err() || end {
                    return;
                }
            }
        })
        .context("starting the ssh reader")?;
    let stderr = Arc::new(Mutex::new(String::new()));
    let keep = Arc::clone(&stderr);
    std::thread::Builder::new()
        .name("ssh-err".into())
        .spawn(move || {
            let mut buf = [0u8; 1024];
            while let Ok(n) = errout.read(&mut buf) {
                if n == 0 {
                    return;
                }
                if let Ok(mut s) = keep.lock() {
                    s.push_str(&String::from_utf8_lossy(&buf[..n]));
                    if s.len() > STDERR_KEEP {
                        let cut = s.len() - STDERR_KEEP;
                        let cut = (cut..s.len()).find(|&i| s.is_char_boundary(i)).unwrap_or(0);
                        s.drain(..cut);
                    }
                }
            }
        })
        .context("starting the ssh error reader")?;
    Ok(Conn {
        child,
        stdin,
        sent_ms: 0,
        chunks,
        stderr,
    })
}

impl Conn {
    /// Feeds what arrives to `on_got` until the link ends: why it ended, and whether to go on.
    fn pump(
        &mut self,
        want: &Wanted,
        retry: &mut Duration,
        on_got: &mut impl FnMut(Got) -> bool,
        on_link: &mut impl FnMut(LinkEvent) -> bool,
    ) -> (String, bool) {
        let mut dec = StreamDecoder::new();
        let mut up = false;
        let mut heard = Instant::now();
        loop {
            self.tell_interval(want);
            let stall = stall(Duration::from_millis(self.sent_ms));
            let chunk = match self.chunks.recv_timeout(CHANGE_POLL) {
                Ok(Ok(b)) if !b.is_empty() => b,
                Ok(Ok(_)) | Err(RecvTimeoutError::Disconnected) => {
                    return ("the connection closed".into(), true)
                }
                Ok(Err(e)) => return (format!("reading from ssh: {e}"), true),
                Err(RecvTimeoutError::Timeout) if heard.elapsed() < stall => continue,
                Err(RecvTimeoutError::Timeout) => {
                    return (format!("nothing heard for {} s", stall.as_secs()), true)
                }
            };
            heard = Instant::now();
            let got = match dec.push(&chunk) {
                Ok(g) => g,
                Err(e) => return (format!("{e:#}"), true),
            };
            for g in got {
                if matches!(g, Got::Sample(_)) && !up {
                    up = true;
                    *retry = FIRST_RETRY;
                    if !on_link(LinkEvent::Up) {
                        return (String::new(), false);
                    }
                }
                if !on_got(g) {
                    return (String::new(), false);
                }
            }
        }
    }

    /// Sends `interval MS` when the dashboard wants another interval than the remote was told
    /// (a failed write is the link's end, which the reads notice).
    fn tell_interval(&mut self, want: &Wanted) {
        let ms = want.load(Ordering::Relaxed);
        if ms == 0 || ms == self.sent_ms {
            return;
        }
        if let Some(w) = &mut self.stdin {
            if writeln!(w, "interval {ms}")
                .and_then(|()| w.flush())
                .is_ok()
            {
                self.sent_ms = ms;
            }
        }
    }

    /// Ends the ssh child; says why the link ended, in ssh's words when it has some.
    fn finish(mut self, why: String) -> String {
        let _ = self.child.kill();
        let status = self.child.wait();
        // The stderr reader gets its end of file once ssh is gone.
        std::thread::sleep(Duration::from_millis(50));
        let said = self
            .stderr
            .lock()
            .map(|s| {
                s.lines()
                    .map(str::trim)
                    .rfind(|l| !l.is_empty())
                    .unwrap_or_default()
                    .to_string()
            })
            .unwrap_or_default();
        match (said.is_empty(), status) {
            (false, _) => format!("{why}: {}", crate::safe::line(&said)),
            (true, Ok(st)) if !st.success() && st.code().is_some() => format!("{why} ({st})"),
            _ => why,
        }
    }
}
