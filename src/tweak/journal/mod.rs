//! Write-ahead journal of old values (`STATE_DIR/journal.jsonl`), written under the lock.
//!
//! One JSON record per line ending in a CRC32 of the rest and carrying the CRC32 of the line
//! before it (`record`), the file ending in a seal (`record::Seal`), mode 0600, fsync'd after
//! every write. A change is journalled as `pending` with its full plan (old values) and its root
//! (canonical path) before the first write, then marked `applied`, `rolled-back` or `undone`.
//! Changes are begun under the lock (`lock`), which allocates their ids. How the file is read
//! back and how undo picks a change: `contents`.
//!
//! The journal says which kernel files root's undo writes, so it is only ever opened through a
//! checked state directory (`state`), never through a link, never a FIFO.

mod contents;
mod record;

pub use contents::{Contents, Damaged, End, Line, Open, Pick};
pub use record::{encode, Record, Seal, Status};

use super::lock::{self, Lock};
use super::plan::Plan;
use super::state::{How, StateDir};
use anyhow::{Context, Result};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

const NAME: &str = "journal.jsonl";

pub struct Journal {
    dir: PathBuf,
}

impl Journal {
    pub fn new(dir: &Path) -> Journal {
        Journal {
            dir: dir.to_path_buf(),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join(NAME)
    }

    /// Takes the tweak lock (`lock::take`).
    pub fn lock(&self) -> Result<Lock> {
        lock::take(&self.dir)
    }

    /// The journal's lines; no directory or no file is an empty journal.
    pub fn read(&self) -> Result<Contents> {
        match StateDir::open(&self.dir, false)? {
            None => Ok(Contents::parse(b"")),
            Some(dir) => Ok(Contents::parse(&dir.read(NAME)?)),
        }
    }

    /// Writes `r` (its `prev` filled in) where the seal was, or at the end when the journal
    /// does not end in one, followed by a new seal; fsync'd. A failed write (a full
    /// filesystem) puts the old end back, so it leaves no torn line behind.
    fn append(&self, mut r: Record, last_id: u64) -> Result<()> {
        let dir = StateDir::open(&self.dir, true)?
            .with_context(|| format!("creating {}", self.dir.display()))?;
        let path = self.path();
        let file = dir
            .file(NAME, How::Write)?
            .with_context(|| format!("opening {}", path.display()))?;
        let mut old = Vec::new();
        (&file)
            .take(super::state::MAX_FILE_BYTES + 1)
            .read_to_end(&mut old)
            .with_context(|| format!("reading {}", path.display()))?;
        if old.len() as u64 > super::state::MAX_FILE_BYTES {
            anyhow::bail!(
                "{}: too large to be a journal perftop wrote",
                path.display()
            );
        }
        let c = Contents::parse(&old);
        r.prev = c.next_prev.clone();
        let line = encode(&r)?;
        let (at, lines_before) = match c.tail.seal_at {
            Some(at) => (at, c.tail.lines),
            None => (old.len(), c.tail.lines),
        };
        let mut bytes = Vec::with_capacity(line.len() + 160);
        if at > 0 && old.get(at - 1) != Some(&b'\n') {
            // The file ends mid-line (torn): end that line first, so the new one stays readable.
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        let seal = Seal {
            lines: lines_before + 1,
            last: record::line_crc(line.as_bytes()),
            last_id: last_id.max(c.max_id()).max(r.id),
        };
        bytes.extend_from_slice(record::encode_seal(&seal)?.as_bytes());
        bytes.push(b'\n');
        let end = (at + bytes.len()) as u64;
        let written = file
            .write_all_at(&bytes, at as u64)
            .and_then(|()| file.set_len(end.max(at as u64)))
            .and_then(|()| file.sync_all());
        if let Err(e) = written {
            let _ = file.write_all_at(&old[at.min(old.len())..], at as u64);
            let _ = file.set_len(old.len() as u64);
            let _ = file.sync_all();
            return Err(e).with_context(|| format!("writing {}", path.display()));
        }
        dir.sync();
        Ok(())
    }

    /// Journals the old values and root (fsync'd) before the first write, under the lock that
    /// allocates the id. Returns the id and a warning when the lock file could not record it.
    pub fn begin(&self, lock: &mut Lock, plan: &Plan, root: &str) -> Result<(u64, Vec<String>)> {
        let id = self.read()?.max_id().max(lock.last_id()) + 1;
        self.append(
            Record {
                id,
                time: now(),
                status: Status::Pending,
                root: Some(root.to_string()),
                plan: Some(plan.clone()),
                prev: String::new(),
            },
            id,
        )?;
        let mut warnings = Vec::new();
        if let Err(e) = lock.set_last_id(id) {
            warnings.push(format!(
                "{e:#}: the journal's seal still records change #{id}"
            ));
        }
        Ok((id, warnings))
    }

    pub fn mark(&self, id: u64, status: Status) -> Result<()> {
        self.append(
            Record {
                id,
                time: now(),
                status,
                root: None,
                plan: None,
                prev: String::new(),
            },
            0,
        )
    }

    /// The change undo would restore, ignoring damage (a hint for the governor toggle).
    pub fn last_open(&self) -> Option<(u64, Plan)> {
        let c = self
            .read()
            .ok()?
            .changes()
            .into_iter()
            .filter(|c| matches!(c.status, Status::Pending | Status::Applied))
            .max_by_key(|c| c.line)?;
        Some((c.id, c.plan))
    }
}
