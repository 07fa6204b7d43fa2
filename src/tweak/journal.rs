//! Write-ahead journal of old values, and the lock that keeps two perftop instances apart.
//!
//! `STATE_DIR/journal.jsonl`: one JSON record per line, mode 0600, fsync'd (file and directory)
//! after every append. A change is journalled as `pending` with its full plan (old values)
//! before the first write, then marked `applied`, `rolled-back` or `undone`. The last change
//! whose latest status is `pending` or `applied` is what undo restores — after a crash too.

use super::plan::Plan;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Pending,
    Applied,
    RolledBack,
    Undone,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub id: u64,
    pub time: f64,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
}

pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Creates the state directory (mode 0700) when missing.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    if !dir.is_dir() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("creating state directory {}", dir.display()))?;
    }
    Ok(())
}

/// Appends one line with mode 0600 and fsyncs the file and its directory.
pub fn append_line(path: &Path, line: &str) -> Result<()> {
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    f.write_all(format!("{line}\n").as_bytes())
        .and_then(|()| f.sync_all())
        .with_context(|| format!("writing {}", path.display()))?;
    if let Some(dir) = path.parent() {
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

pub struct Journal {
    dir: PathBuf,
}

/// Held while a change or undo runs; removed on drop.
#[derive(Debug)]
pub struct Lock {
    path: PathBuf,
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

impl Journal {
    pub fn new(dir: &Path) -> Journal {
        Journal {
            dir: dir.to_path_buf(),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join("journal.jsonl")
    }

    /// Takes the lock file (with our pid); a lock left by a dead process is taken over.
    pub fn lock(&self) -> Result<Lock> {
        ensure_dir(&self.dir)?;
        let path = self.dir.join("lock");
        for _ in 0..2 {
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(mut f) => {
                    let _ = writeln!(f, "{}", std::process::id());
                    return Ok(Lock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let pid = fs::read_to_string(&path).unwrap_or_default();
                    let pid = pid.trim();
                    // The lock holder runs on this machine, so its liveness is a live /proc question.
                    let alive = !pid.is_empty()
                        && crate::root::Root::new("/").exists(&format!("proc/{pid}"));
                    if alive {
                        bail!(
                            "another perftop (pid {pid}) is changing settings ({} is locked)",
                            path.display()
                        );
                    }
                    let _ = fs::remove_file(&path);
                }
                Err(e) => {
                    return Err(e).with_context(|| format!("creating lock {}", path.display()))
                }
            }
        }
        bail!("could not take the lock {}", path.display())
    }

    pub fn records(&self) -> Result<Vec<Record>> {
        let text = match fs::read_to_string(self.path()) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e).with_context(|| format!("reading {}", self.path().display())),
        };
        // A torn last line (crash during append) is skipped.
        Ok(text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect())
    }

    fn append(&self, r: &Record) -> Result<()> {
        ensure_dir(&self.dir)?;
        let line = serde_json::to_string(r).context("encoding journal record")?;
        append_line(&self.path(), &line)
    }

    /// Journals the old values (fsync'd) before the first write; returns the change's id.
    pub fn begin(&self, plan: &Plan) -> Result<u64> {
        let id = self.records()?.iter().map(|r| r.id).max().unwrap_or(0) + 1;
        self.append(&Record {
            id,
            time: now(),
            status: Status::Pending,
            plan: Some(plan.clone()),
        })?;
        Ok(id)
    }

    pub fn mark(&self, id: u64, status: Status) -> Result<()> {
        self.append(&Record {
            id,
            time: now(),
            status,
            plan: None,
        })
    }

    /// The last change still in effect (latest status pending or applied), with its plan.
    pub fn last_open(&self) -> Result<Option<(u64, Plan)>> {
        let recs = self.records()?;
        let mut ids: Vec<u64> = recs
            .iter()
            .filter(|r| r.plan.is_some())
            .map(|r| r.id)
            .collect();
        ids.sort_unstable();
        for id in ids.into_iter().rev() {
            let latest = recs.iter().rev().find(|r| r.id == id).map(|r| r.status);
            if matches!(latest, Some(Status::Pending | Status::Applied)) {
                let plan = recs
                    .iter()
                    .find(|r| r.id == id)
                    .and_then(|r| r.plan.clone());
                return Ok(plan.map(|p| (id, p)));
            }
        }
        Ok(None)
    }
}
