//! The live dashboard's `R` recording: a `Recorder` fed with the samples the dashboard reads,
//! started and stopped by key, and stopped on its own — the dashboard going on — when a write
//! fails (disk full, file size limit, any other error). The file then ends at its last complete
//! record, as after `kill -9`.

use super::writer::{is_disk_full, Recorder, Retention};
use super::{format_rfc3339, Action};
use crate::sample::Sample;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A recording of the live stream in progress.
pub struct LiveRecording {
    pub rec: Recorder,
    pub path: PathBuf,
}

/// Where `R` stands.
#[derive(Default)]
pub enum LiveRecorder {
    #[default]
    Off,
    On(Box<LiveRecording>),
    /// A write failed; `why` says which way (kept for the status line until `R` again).
    Stopped {
        why: String,
    },
}

impl LiveRecorder {
    /// The recording in progress, if any.
    pub fn active(&self) -> Option<&LiveRecording> {
        match self {
            LiveRecorder::On(r) => Some(r),
            _ => None,
        }
    }

    pub fn is_on(&self) -> bool {
        self.active().is_some()
    }

    /// `R`: stops the recording in progress, or starts one in `dir` whose first sample is
    /// `newest` (the one on screen), its digests judged with the dashboard's `thresholds` (so
    /// that `explain` under the same config reads them). Returns the status line.
    pub fn toggle(
        &mut self,
        dir: &Path,
        newest: Option<&Sample>,
        interval: Duration,
        thresholds: &crate::findings::Thresholds,
    ) -> String {
        if let LiveRecorder::On(r) = std::mem::take(self) {
            let (n, bytes) = (r.rec.samples, r.rec.bytes);
            return match r.rec.finish("stop") {
                Ok(()) => format!(
                    "recording stopped: {} ({n} samples, {})",
                    r.path.display(),
                    crate::units::kb(Some(bytes / 1024))
                ),
                Err(e) => format!("recording stopped with an error: {}: {e}", r.path.display()),
            };
        }
        let Some(newest) = newest else {
            return "no sample yet to record".into();
        };
        let path = dir.join(file_name(newest));
        let path = std::path::absolute(&path).unwrap_or(path);
        let started =
            Recorder::create(&path, newest, interval, Retention::default()).and_then(|mut rec| {
                rec.judge_with(thresholds.clone());
                // The sample on screen is the recording's first.
                rec.sample(newest)
                    .map_err(anyhow::Error::from)
                    .map(|()| rec)
            });
        match started {
            Ok(rec) => {
                let status = format!("recording to {} (R stops)", path.display());
                *self = LiveRecorder::On(Box::new(LiveRecording { rec, path }));
                status
            }
            Err(e) => format!("cannot record: {e:#}"),
        }
    }

    /// Records a live sample. A failed write stops the recording and returns the status line.
    pub fn sample(&mut self, s: &Sample) -> Option<String> {
        let LiveRecorder::On(r) = self else {
            return None;
        };
        let e = r.rec.sample(s).err()?;
        let why = match e.raw_os_error() {
            Some(27) => "file size limit reached".to_string(),
            _ if is_disk_full(&e) => "disk full".to_string(),
            _ => e.to_string(),
        };
        let status = format!(
            "recording stopped: {why}: {} ({} samples kept)",
            r.path.display(),
            r.rec.samples
        );
        *self = LiveRecorder::Stopped { why };
        Some(status)
    }

    /// Writes a tweak applied or undone; returns the status line when that failed.
    pub fn action(&mut self, a: &Action) -> Option<String> {
        let LiveRecorder::On(r) = self else {
            return None;
        };
        let e = r.rec.action(a).err()?;
        Some(format!("recording: action not written: {e}"))
    }

    /// Ends a recording on quit with a `stop` marker, so replay shows where it ended.
    pub fn finish(&mut self) -> Option<String> {
        let LiveRecorder::On(r) = std::mem::take(self) else {
            return None;
        };
        Some(match r.rec.finish("stop") {
            Ok(()) => format!("perftop: recorded to {}", r.path.display()),
            Err(e) => format!(
                "perftop: recording {} ended with an error: {e}",
                r.path.display()
            ),
        })
    }
}

/// Checks that `dir` is a directory `R` can write recordings into: it exists, is a directory,
/// and a file can be created in it (and is removed at once). Permission bits alone do not say
/// (root, read-only mounts, ACLs), so it tries.
pub fn check_dir(dir: &Path) -> anyhow::Result<()> {
    use anyhow::Context;
    let meta = std::fs::metadata(dir).context("cannot use it for recordings")?;
    if !meta.is_dir() {
        anyhow::bail!("not a directory");
    }
    let probe = dir.join(format!(".perftop-write-check-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .context("cannot create a file there")?;
    std::fs::remove_file(&probe)
        .with_context(|| format!("cannot remove the check file {}", probe.display()))
}

/// `perftop-HOST-YYYYMMDDTHHMMSS.ptrec` (UTC), the host name reduced to safe characters.
fn file_name(newest: &Sample) -> String {
    let host = newest
        .host
        .hostname
        .as_deref()
        .unwrap_or("host")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect::<String>();
    let stamp: String = format_rfc3339(newest.time.wall_ms)
        .chars()
        .take(19)
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect();
    format!("perftop-{host}-{stamp}.ptrec")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Thresholds;

    /// `R`'s digests are judged with the dashboard's thresholds, not the defaults: `explain`
    /// under the same config trusts only digests of its own fingerprint.
    #[test]
    fn r_judges_its_digests_with_the_dashboards_thresholds() {
        let dir = tempfile::tempdir().expect("dir");
        let t = Thresholds {
            dirty_background_factor: 1.5,
            ..Thresholds::default()
        };
        let mut s = Sample::default();
        s.time.wall_ms = 1_763_733_930_000;
        let mut r = LiveRecorder::default();
        let status = r.toggle(dir.path(), Some(&s), Duration::from_secs(1), &t);
        assert!(status.starts_with("recording to "), "{status}");
        s.time.wall_ms += 1000;
        assert_eq!(r.sample(&s), None);
        let path = r.active().map(|a| a.path.clone()).expect("recording");
        assert!(r.finish().is_some());
        let rec = crate::record::Recording::open(&path).expect("open");
        let fp = crate::record::digest::fingerprint(&t);
        assert_ne!(
            fp,
            crate::record::digest::fingerprint(&Thresholds::default())
        );
        assert!(
            !rec.digests.is_empty()
                && rec
                    .digests
                    .iter()
                    .all(|d| d.judged.as_ref().is_some_and(|(f, _)| *f == fp)),
            "{:?}",
            rec.digests
        );
    }
}
