//! The tweak lock: an exclusive `flock` on `STATE_DIR/lock`, which the kernel releases when the
//! holder's file is closed — on exit, crash or `kill -9` alike — so a lock is never stale and the
//! file is never deleted (deleting it could free a lock someone else holds).
//!
//! While held, the file holds one JSON line, padded to a fixed size, naming the holder (pid, uid,
//! since when, command) for `perftop tweak status` and for the refusal message. It also keeps
//! `last_id`, the newest change id ever begun: ids are allocated under the lock from the journal
//! and this number, so an id is never given twice, and a journal cut at a record boundary (which
//! reads like a clean, shorter journal) is noticed by undo.
//!
//! The fixed size matters on a full state filesystem: rewriting the holder line overwrites
//! blocks the file already has and needs no new space.

use super::state::{How, StateDir};
use anyhow::{bail, Context, Result};
use rustix::fs::{flock, FlockOperation};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bytes of the holder record, padding included.
const SLOT: usize = 1024;
/// How long `take` waits for another holder before refusing: long enough for a `tweak status`
/// probe or a quick change on a fixture root, short enough that nobody waits on a stuck holder.
const WAIT: Duration = Duration::from_millis(250);

/// Who holds (or last held) the lock, and the newest change id begun.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Holder {
    pub pid: u32,
    pub uid: u32,
    /// Unix time the lock was taken.
    pub since: f64,
    pub cmd: String,
    #[serde(default)]
    pub last_id: u64,
}

impl Holder {
    fn ours(last_id: u64) -> Holder {
        let cmd: Vec<String> = std::env::args().collect();
        let mut cmd = cmd.join(" ");
        if cmd.len() > 400 {
            let mut end = 400;
            while !cmd.is_char_boundary(end) {
                end -= 1;
            }
            cmd.truncate(end);
        }
        Holder {
            pid: std::process::id(),
            uid: rustix::process::getuid().as_raw(),
            since: super::journal::now(),
            cmd,
            last_id,
        }
    }

    /// `pid 123 (uid 0), for 2.1 s: perftop tweak set …`, control characters removed.
    pub fn describe(&self) -> String {
        let ago = (super::journal::now() - self.since).max(0.0);
        let cmd: String = self.cmd.chars().filter(|c| !c.is_control()).collect();
        format!("pid {} (uid {}), for {ago:.1} s: {cmd}", self.pid, self.uid)
    }
}

/// Held while a change or undo runs; the kernel drops it with the file.
#[derive(Debug)]
pub struct Lock {
    file: File,
    path: PathBuf,
    holder: Holder,
}

/// What `tweak status` reports.
#[derive(Debug, Clone, PartialEq)]
pub enum State {
    /// No lock file yet: no change was ever made with this state directory.
    Missing,
    /// Nobody holds it; the last record (if readable) says who held it last.
    Free(Option<Holder>),
    /// Held; `None` when the holder has not written its name yet.
    Held(Option<Holder>),
}

pub fn path(dir: &Path) -> PathBuf {
    dir.join("lock")
}

/// The lock file through the checked state directory (no link, no FIFO: a FIFO named `lock`
/// used to hang every tweak command in `open`). `None`: no directory or no file yet.
fn open(dir: &Path, create: bool) -> Result<Option<File>> {
    let Some(d) = StateDir::open(dir, create)? else {
        return Ok(None);
    };
    d.file("lock", if create { How::Write } else { How::Read })
}

fn read_holder_at_start(file: &File) -> Option<Holder> {
    let mut buf = vec![0u8; SLOT * 4];
    let n = file.read_at(&mut buf, 0).ok()?;
    buf.truncate(n);
    let text = String::from_utf8_lossy(&buf);
    serde_json::from_str(text.trim_matches(|c: char| c.is_whitespace() || c == '\0')).ok()
}

fn write_holder(file: &File, h: &Holder) -> std::io::Result<()> {
    let mut line = serde_json::to_string(h).map_err(std::io::Error::other)?;
    if line.len() < SLOT - 1 {
        line.push_str(&" ".repeat(SLOT - 1 - line.len()));
    }
    line.push('\n');
    file.write_all_at(line.as_bytes(), 0)?;
    // A longer record from an older format may follow: cut it (shrinking needs no space).
    if file.metadata()?.len() > line.len() as u64 {
        file.set_len(line.len() as u64)?;
    }
    file.sync_data()
}

/// Takes the lock, waiting up to a quarter second; refuses naming the holder.
pub fn take(dir: &Path) -> Result<Lock> {
    let path = path(dir);
    let file = open(dir, true)?.with_context(|| format!("opening the lock {}", path.display()))?;
    let start = Instant::now();
    loop {
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => break,
            Err(rustix::io::Errno::WOULDBLOCK) if start.elapsed() < WAIT => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(rustix::io::Errno::WOULDBLOCK) => {
                let who = read_holder_at_start(&file)
                    .map(|h| h.describe())
                    .unwrap_or_else(|| "a process that has not written its name yet".into());
                bail!(
                    "another perftop is changing settings: {} holds the lock {} \
                     (`perftop tweak status` shows it)",
                    who,
                    path.display()
                );
            }
            Err(e) => {
                return Err(std::io::Error::from(e))
                    .with_context(|| format!("locking {}", path.display()))
            }
        }
    }
    let last_id = read_holder_at_start(&file).map(|h| h.last_id).unwrap_or(0);
    let holder = Holder::ours(last_id);
    write_holder(&file, &holder)
        .with_context(|| format!("writing the holder into the lock {}", path.display()))?;
    Ok(Lock { file, path, holder })
}

impl Lock {
    /// The newest change id ever begun under this state directory (0: none recorded).
    pub fn last_id(&self) -> u64 {
        self.holder.last_id
    }

    /// Records that change `id` was begun (after its journal record is on disk).
    pub fn set_last_id(&mut self, id: u64) -> Result<()> {
        self.holder.last_id = id;
        write_holder(&self.file, &self.holder)
            .with_context(|| format!("recording change #{id} in {}", self.path.display()))
    }
}

/// Who holds the lock, probing with a shared lock that is dropped at once.
pub fn state(dir: &Path) -> Result<State> {
    let path = path(dir);
    let Some(file) = open(dir, false)? else {
        return Ok(State::Missing);
    };
    let holder = read_holder_at_start(&file);
    match flock(&file, FlockOperation::NonBlockingLockShared) {
        Ok(()) => {
            let _ = flock(&file, FlockOperation::Unlock);
            Ok(State::Free(holder))
        }
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(State::Held(holder)),
        Err(e) => {
            Err(std::io::Error::from(e)).with_context(|| format!("probing {}", path.display()))
        }
    }
}

/// The newest change id begun, read without locking (for previews).
pub fn last_id(dir: &Path) -> u64 {
    open(dir, false)
        .ok()
        .flatten()
        .and_then(|f| read_holder_at_start(&f))
        .map(|h| h.last_id)
        .unwrap_or(0)
}
