//! `perftop stream`: the remote end of `perftop ssh`. Samples on the one clock and writes the
//! recording format's frames to stdout (`record::stream`), each flushed as it is written.
//!
//! It lives only as long as its channel: it exits when stdout is closed (EPIPE) or when stdin
//! reaches end of file — the SSH channel closed, the link dropped — so that no sampler is left
//! running on a host after the dashboard that asked for it has gone. Nothing is written
//! anywhere but stdout. Its stdin also carries the dashboard's interval changes.

use crate::record::writer::{header_for, mono_ns, Writer};
use crate::root::Root;
use crate::sampler::Clock;
use crate::source::Reader;
use anyhow::{Context, Result};
use std::io::{ErrorKind, Read};
use std::sync::mpsc::Sender;
use std::time::Duration;

/// Streams samples of `root` every `interval` until the channel closes or a signal.
pub fn run(root: &Root, interval: Duration) -> Result<()> {
    super::root_check(root)?;
    let (ctl, intervals) = std::sync::mpsc::channel();
    watch_stdin(ctl)?;
    let (stop, wake) = Clock::signals()?;
    let mut reader = Reader::new(root.clone());
    // Problems reading a file are the sample's (the dashboard shows them); stderr would only
    // reach the other end's terminal.
    let first = reader.sample();
    let out = std::io::stdout().lock();
    let mut w = match Writer::new(out, &header_for(&first, interval, 0)) {
        Ok(w) => w,
        Err(e) if e.kind() == ErrorKind::BrokenPipe => return Ok(()),
        Err(e) => return Err(e).context("writing the stream header"),
    };
    let mut clock = Clock::new(interval).wake_on(stop, wake).control(intervals);
    let mut s = first;
    loop {
        match w.sample(&s, mono_ns()) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::BrokenPipe => return Ok(()),
            Err(e) => return Err(e).context("writing to the stream"),
        }
        if !clock.wait() {
            return Ok(());
        }
        s = reader.sample();
    }
}

/// Ends the process when stdin reaches end of file or fails: the channel is gone. Frames are
/// flushed as written, so there is nothing to finish. A line `interval MS` (the dashboard's
/// `+`/`-`) sets the sampling interval; anything else, or a value outside
/// `INTERVAL_MS`, is ignored, and a line is read up to `LINE_MAX` bytes.
fn watch_stdin(ctl: Sender<Duration>) -> Result<()> {
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            let mut buf = [0u8; 512];
            let mut line = Vec::with_capacity(LINE_MAX);
            let mut too_long = false;
            let mut stdin = std::io::stdin().lock();
            loop {
                let n = match stdin.read(&mut buf) {
                    Ok(0) => std::process::exit(0),
                    Ok(n) => n,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(_) => std::process::exit(0),
                };
                for &b in &buf[..n] {
                    if b != b'\n' {
                        too_long |= line.len() >= LINE_MAX;
                        if !too_long {
                            line.push(b);
                        }
                        continue;
                    }
                    if let Some(d) = (!too_long).then(|| interval_line(&line)).flatten() {
                        let _ = ctl.send(d);
                    }
                    line.clear();
                    too_long = false;
                }
            }
        })
        .context("starting the stdin watcher")?;
    Ok(())
}

/// The longest control line read.
const LINE_MAX: usize = 64;
/// The intervals a remote sampler takes, in ms (the dashboard's `+`/`-` steps lie inside).
const INTERVAL_MS: std::ops::RangeInclusive<u64> = 100..=60_000;

/// `interval MS` as a duration, when it is one and in `INTERVAL_MS`.
fn interval_line(line: &[u8]) -> Option<Duration> {
    let text = std::str::from_utf8(line).ok()?.trim();
    let ms: u64 = text.strip_prefix("interval ")?.trim().parse().ok()?;
    INTERVAL_MS.contains(&ms).then(|| Duration::from_millis(ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_lines_set_a_bounded_interval() {
        assert_eq!(
            interval_line(b"interval 500"),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            interval_line(b"interval 60000\r"),
            Some(Duration::from_secs(60))
        );
        for bad in [
            &b"interval 0"[..],
            b"interval 99",
            b"interval 60001",
            b"interval -5",
            b"interval 1e3",
            b"interval",
            b"intervals 500",
            b"\xff\xfe",
            b"",
        ] {
            assert_eq!(
                interval_line(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
