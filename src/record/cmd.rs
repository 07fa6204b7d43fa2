//! The `perftop record` and `perftop dump` run modes.

use super::dump::{dump, DumpOptions, Format};
use super::reader::Recording;
use super::writer::{is_disk_full, Recorder, Retention};
use super::{parse_duration, parse_size};
use crate::findings::Thresholds;
use crate::root::Root;
use crate::sampler::Clock;
use crate::source::Reader;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
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
}

/// Records until the count or duration is reached or a SIGTERM/SIGINT/SIGHUP arrives, then
/// writes a `stop` marker and syncs. A full disk ends the recording with an error.
pub fn record(root: &Root, args: &RecordArgs) -> Result<()> {
    if !root.base().is_dir() {
        bail!("root {} is not a directory", root.base().display());
    }
    let duration = args.duration.as_deref().map(parse_duration).transpose()?;
    let retention = Retention {
        max_size: args.max_size.as_deref().map(parse_size).transpose()?,
        max_age: args.retain.as_deref().map(parse_duration).transpose()?,
    };
    let (stop, wake) = Clock::signals()?;
    let mut reader = Reader::new(root.clone());
    let first = reader.sample();
    let mut rec = Recorder::create(&args.output, &first, args.interval, retention)?;
    eprintln!("perftop: recording to {}", rec.current_path().display());
    let start = Instant::now();
    let mut clock = Clock::new(args.interval).wake_on(Arc::clone(&stop), wake);
    let mut sample = Some(first);
    let mut n = 0u64;
    let result = loop {
        let s = match sample.take() {
            Some(s) => s,
            None => reader.sample(),
        };
        if let Err(e) = rec.sample(&s) {
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
            let (cpu_ms, hwm_kb) = self_cost();
            eprintln!(
                "perftop: recorded {samples} samples, {bytes} bytes ({} bytes/sample, {:.2} ms CPU/sample, peak RSS {:.1} MB) to {}",
                bytes / samples.max(1),
                cpu_ms / samples.max(1) as f64,
                hwm_kb as f64 / 1024.0,
                path.display()
            );
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// This process's CPU time (user + system, ms) and peak RSS (kB), from the live /proc/self
/// (about the recorder itself, whatever `--root` says).
pub(crate) fn self_cost() -> (f64, u64) {
    let live = crate::root::Root::new("/");
    let cpu = live
        .read("proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
            Some(ticks as f64 * 10.0)
        })
        .unwrap_or(0.0);
    let hwm = live
        .read("proc/self/status")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            l.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0);
    (cpu, hwm)
}

/// Opens a recording and prints its warnings (damaged or torn records) on stderr.
pub fn open(path: &Path) -> Result<Recording> {
    let rec = Recording::open(path)?;
    for w in &rec.warnings {
        eprintln!("perftop: warning: {}", crate::text::safe::line(w));
    }
    Ok(rec)
}

pub fn dump_cmd(
    path: &Path,
    format: &str,
    from: Option<String>,
    to: Option<String>,
    pane: Option<String>,
    width: usize,
    thresholds: &Thresholds,
) -> Result<()> {
    let format: Format = format.parse()?;
    let rec = open(path)?;
    let opts = DumpOptions {
        format,
        from,
        to,
        pane,
        width,
        thresholds: thresholds.clone(),
        threads: 0,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    dump(&rec, &opts, &mut out, &mut |w| {
        eprintln!("perftop: warning: {}", crate::text::safe::line(&w))
    })?;
    Ok(())
}
