//! The segmented file recorder ([`Recorder`]): segment files `PATH`, `PATH.1`, ..., size/age
//! retention, and each interval judged for its digest (`digest`) as it is written.

use super::format::{Action, Gap};
use super::writer::{header_for, mono_ns, wall_ms, Writer};
use crate::sample::Sample;
use anyhow::{bail, Context, Result};
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Segment `n` of the recording at `base`: `base` itself for 0, `base.N` after.
pub fn segment_path(base: &Path, n: u32) -> PathBuf {
    if n == 0 {
        return base.to_path_buf();
    }
    let mut s = base.as_os_str().to_os_string();
    s.push(format!(".{n}"));
    PathBuf::from(s)
}

/// The existing segments of the recording at `base`, by number.
pub fn list_segments(base: &Path) -> Vec<(u32, PathBuf)> {
    let Some(name) = base.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    let dir = match base.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            let f = e.file_name();
            let Some(f) = f.to_str() else { continue };
            let n = if f == name {
                Some(0)
            } else {
                f.strip_prefix(name)
                    .and_then(|r| r.strip_prefix('.'))
                    // Only the names perftop writes (`R.1`, not a stray `R.01`).
                    .filter(|r| {
                        !r.is_empty()
                            && r.bytes().all(|b| b.is_ascii_digit())
                            && !r.starts_with('0')
                    })
                    .and_then(|r| r.parse::<u32>().ok())
            };
            if let Some(n) = n {
                out.push((n, segment_path(base, n)));
            }
        }
    }
    out.sort();
    out
}

/// Where and how much to keep.
#[derive(Debug, Clone, Default)]
pub struct Retention {
    /// Total bytes over all segments; the oldest segments go first.
    pub max_size: Option<u64>,
    /// Segments whose last write is older than this are deleted.
    pub max_age: Option<Duration>,
}

impl Retention {
    /// Size at which the recorder starts a new segment.
    pub fn segment_limit(&self) -> Option<u64> {
        match (self.max_size, self.max_age) {
            (Some(m), _) => Some((m / 4).max(64 * 1024)),
            (None, Some(_)) => Some(16 << 20),
            (None, None) => None,
        }
    }
}

/// Writes samples to segment files `base`, `base.1`, ... A recorder started on an existing
/// recording opens a new segment (it never appends to a possibly torn file); with retention it
/// also rolls over to a new segment when the current one is full and deletes old segments.
pub struct Recorder {
    base: PathBuf,
    segment: u32,
    writer: Writer<File>,
    retention: Retention,
    interval: Duration,
    last_sync_ms: i64,
    /// Judges each interval and writes a digest when the findings change.
    digester: super::digest::Digester,
    /// Total samples and bytes written by this recorder (all segments).
    pub samples: u64,
    pub bytes: u64,
}

/// Refuses an output path that exists and is not a regular file (through a link, what it
/// names): a recording is a set of files `PATH`, `PATH.1`, ... side by side, so `-o /dev/full`
/// would otherwise make `/dev/full.1`, and a cut's `--force` replace a device node with a file.
pub fn refuse_non_regular(path: &Path, what: &str) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => bail!(
            "{} is a directory: give the {what}'s file path (e.g. {}/perftop.rec)",
            path.display(),
            path.display()
        ),
        Ok(m) if !m.is_file() => bail!(
            "{} is not a regular file (a device, FIFO or socket): a {what} is written as files beside it ({}, {}.1, ...); give a file path",
            path.display(),
            path.display(),
            path.display()
        ),
        _ => Ok(()),
    }
}

fn create_segment(base: &Path, n: u32) -> Result<(File, PathBuf)> {
    let path = segment_path(base, n);
    let f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .with_context(|| format!("creating {}", path.display()))?;
    Ok((f, path))
}

/// True for the errors a full disk or an exceeded file size limit give.
pub fn is_disk_full(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(28) | Some(27) | Some(122))
        || e.kind() == io::ErrorKind::StorageFull
        || e.kind() == io::ErrorKind::FileTooLarge
        || e.kind() == io::ErrorKind::QuotaExceeded
}

impl Recorder {
    /// Opens a new segment after any existing ones and writes its header and a `start` marker.
    pub fn create(
        base: &Path,
        first: &Sample,
        interval: Duration,
        retention: Retention,
    ) -> Result<Recorder> {
        refuse_non_regular(base, "recording")?;
        let segment = list_segments(base).last().map_or(0, |(n, _)| n + 1);
        let (file, _) = create_segment(base, segment)?;
        let header = header_for(first, interval, segment);
        let mut writer =
            Writer::new(file, &header).with_context(|| format!("writing {}", base.display()))?;
        writer
            .gap(
                &Gap {
                    reason: "start".into(),
                    detail: (segment > 0).then(|| "recorder restarted: new segment".to_string()),
                },
                wall_ms(),
                mono_ns(),
            )
            .with_context(|| format!("writing {}", base.display()))?;
        let mut r = Recorder {
            base: base.to_path_buf(),
            segment,
            bytes: writer.bytes(),
            writer,
            retention,
            interval,
            last_sync_ms: wall_ms(),
            digester: super::digest::Digester::new(crate::findings::Thresholds::default()),
            samples: 0,
        };
        r.apply_retention();
        Ok(r)
    }

    /// The file being written now.
    pub fn current_path(&self) -> PathBuf {
        segment_path(&self.base, self.segment)
    }

    /// Judges the digests with `t` (the config's thresholds) instead of the defaults; call it
    /// before the first sample.
    pub fn judge_with(&mut self, t: crate::findings::Thresholds) {
        self.digester = super::digest::Digester::new(t);
    }

    /// Writes `s` (and the digest of the interval it ends, when one is due), copying it as the
    /// next interval's start: for a caller that keeps the sample (the dashboard's recording).
    pub fn sample(&mut self, s: &Sample) -> io::Result<()> {
        let written = self.write(s);
        self.digester.keep_copy(s);
        written
    }

    /// [`Recorder::sample`], keeping `s` itself rather than a copy (the headless recorder's).
    pub fn sample_owned(&mut self, s: Sample) -> io::Result<()> {
        let written = self.write(&s);
        self.digester.keep(s);
        written
    }

    fn write(&mut self, s: &Sample) -> io::Result<()> {
        if self
            .retention
            .segment_limit()
            .is_some_and(|lim| self.writer.bytes() >= lim)
        {
            self.rotate(s)?;
        }
        let before = self.writer.bytes();
        let mono = mono_ns();
        if let Some((kind, p)) = self.digester.judge(s, self.writer.samples()) {
            self.writer.record(kind, p, s.time.wall_ms, mono)?;
        }
        self.writer.sample(s, mono)?;
        self.bytes += self.writer.bytes() - before;
        self.samples += 1;
        // Keyframes are the recovery points: make them durable about once a minute.
        let now = wall_ms();
        if now - self.last_sync_ms >= 60_000 {
            self.last_sync_ms = now;
            self.writer.get_ref().sync_data()?;
        }
        Ok(())
    }

    pub fn action(&mut self, a: &Action) -> io::Result<()> {
        self.writer.action(a, wall_ms(), mono_ns())
    }

    fn rotate(&mut self, s: &Sample) -> io::Result<()> {
        self.writer.get_ref().sync_data()?;
        let n = self.segment + 1;
        let (file, _) = create_segment(&self.base, n).map_err(io::Error::other)?;
        let header = header_for(s, self.interval, n);
        let w = Writer::new(file, &header)?;
        self.bytes += w.bytes();
        self.writer = w;
        self.segment = n;
        self.apply_retention();
        Ok(())
    }

    /// Deletes the oldest segments (never the current one) past the size or age limit.
    pub fn apply_retention(&mut self) {
        let segs = list_segments(&self.base);
        let now = SystemTime::now();
        let mut sized: Vec<(u32, PathBuf, u64, Option<SystemTime>)> = segs
            .into_iter()
            .filter_map(|(n, p)| {
                let m = std::fs::metadata(&p).ok()?;
                Some((n, p, m.len(), m.modified().ok()))
            })
            .collect();
        let mut total: u64 = sized.iter().map(|s| s.2).sum();
        sized.retain(|s| s.0 != self.segment);
        for (_, p, len, mtime) in sized {
            let too_big = self.retention.max_size.is_some_and(|m| total > m);
            let too_old = match (self.retention.max_age, mtime) {
                (Some(age), Some(t)) => now.duration_since(t).is_ok_and(|d| d > age),
                _ => false,
            };
            if (too_big || too_old) && std::fs::remove_file(&p).is_ok() {
                total = total.saturating_sub(len);
            }
        }
    }

    /// Writes a `stop` marker and makes the file durable.
    pub fn finish(mut self, reason: &str) -> io::Result<()> {
        self.writer.gap(
            &Gap {
                reason: reason.into(),
                detail: None,
            },
            wall_ms(),
            mono_ns(),
        )?;
        self.writer.get_ref().sync_all()
    }
}
