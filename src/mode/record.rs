//! `perftop record`: samples to a recording, headless, on the machinery of `crate::record`
//! (the writer, rotation and retention).

use crate::record::writer::{is_disk_full, Recorder, Retention};
use crate::record::{parse_duration, parse_size};
use crate::root::Root;
use crate::sampler::Clock;
use crate::source::Reader;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct RecordArgs {
    pub output: PathBuf,
    pub interval: Duration,
    pub count: Option<u64>,
    pub duration: Option<String>,
    pub max_size: Option<String>,
    pub retain: Option<String>,
    /// The config's thresholds: they judge the digests.
    pub thresholds: crate::findings::Thresholds,
}

/// `record --print-unit`: the systemd unit that runs this recorder as a service, on stdout.
pub fn print_unit(args: crate::record::service::UnitArgs) -> Result<()> {
    let unit = crate::record::service::unit(&args)?;
    std::io::Write::write_all(&mut std::io::stdout().lock(), unit.as_bytes())
        .context("writing to stdout")
}

/// Records until the count or duration is reached or a SIGTERM/SIGINT/SIGHUP arrives, then
/// writes a `stop` marker and syncs. A full disk ends the recording with an error.
pub fn record(root: &Root, args: &RecordArgs) -> Result<()> {
    super::root_check(root)?;
    let duration = args.duration.as_deref().map(parse_duration).transpose()?;
    let retention = Retention {
        max_size: args.max_size.as_deref().map(parse_size).transpose()?,
        max_age: args.retain.as_deref().map(parse_duration).transpose()?,
    };
    let (stop, wake) = Clock::signals()?;
    let mut reader = Reader::new(root.clone());
    let first = reader.sample();
    let mut rec = Recorder::create(&args.output, &first, args.interval, retention)?;
    rec.judge_with(args.thresholds.clone());
    eprintln!("perftop: recording to {}", rec.current_path().display());
    let start = Instant::now();
    let mut clock = Clock::new(args.interval).wake_on(Arc::clone(&stop), wake);
    let start_ms = super::cpu_ms();
    let mut sample = Some(first);
    let mut n = 0u64;
    let result = loop {
        let s = match sample.take() {
            Some(s) => s,
            None => reader.sample(),
        };
        if let Err(e) = rec.sample_owned(s) {
            let path = rec.current_path();
            break Err(if is_disk_full(&e) {
                anyhow::anyhow!(
                    "disk full: recording stopped after {n} samples; {} ends at its last complete record ({e})",
                    path.display()
                )
            } else {
                anyhow::anyhow!(
                    "writing {}: {e}; recording stopped after {n} samples",
                    path.display()
                )
            });
        }
        n += 1;
        if args.count.is_some_and(|c| n >= c) || duration.is_some_and(|d| start.elapsed() >= d) {
            break Ok(());
        }
        // A signal ends the wait (and the recording) within a fraction of a second.
        if !clock.wait() {
            break Ok(());
        }
    };
    let (samples, bytes, path) = (rec.samples, rec.bytes, rec.current_path());
    match result {
        Ok(()) => {
            rec.finish("stop")
                .with_context(|| format!("closing {}", path.display()))?;
            let hwm_kb = super::peak_rss_kb();
            eprintln!(
                "perftop: recorded {samples} samples, {bytes} bytes ({} bytes/sample, {}, peak RSS {:.1} MB) to {}",
                bytes / samples.max(1),
                super::cpu_words(super::cpu_ms(), start_ms, samples, "sample"),
                hwm_kb as f64 / 1024.0,
                path.display()
            );
            Ok(())
        }
        Err(e) => Err(e),
    }
}
