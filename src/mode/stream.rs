//! `perftop stream`: the remote end of `perftop ssh`. Samples on the one clock and writes the
//! recording format's frames to stdout (`record::stream`), each flushed as it is written.
//!
//! It lives only as long as its channel: it exits when stdout is closed (EPIPE) or when stdin
//! reaches end of file — the SSH channel closed, the link dropped — so that no sampler is left
//! running on a host after the dashboard that asked for it has gone. Nothing is written
//! anywhere but stdout.

use crate::record::writer::{header_for, mono_ns, Writer};
use crate::root::Root;
use crate::sampler::Clock;
use crate::source::Reader;
use anyhow::{Context, Result};
use std::io::{ErrorKind, Read};
use std::time::Duration;

/// Streams samples of `root` every `interval` until the channel closes or a signal.
pub fn run(root: &Root, interval: Duration) -> Result<()> {
    super::root_check(root)?;
    watch_stdin()?;
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
    let mut clock = Clock::new(interval).wake_on(stop, wake);
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
/// flushed as written, so there is nothing to finish.
fn watch_stdin() -> Result<()> {
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(|| {
            let mut buf = [0u8; 512];
            let mut stdin = std::io::stdin().lock();
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) => std::process::exit(0),
                    Ok(_) => {}
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(_) => std::process::exit(0),
                }
            }
        })
        .context("starting the stdin watcher")?;
    Ok(())
}
