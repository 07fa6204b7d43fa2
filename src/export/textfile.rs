//! `--textfile DIR`: `DIR/perftop.prom` for node_exporter's textfile collector, replaced whole
//! every interval. Each page is written to a new `DIR/.perftop.prom.PID.NONCE.tmp`, then
//! exchanged with the old page in the same directory (or renamed over it; see `replace`), so a
//! reader sees the old page or the new one, never part of one; the collector reads only
//! `*.prom`, so a temp file a crash leaves is never read, and the next start removes it. The
//! page is not synced: it is replaced a second later, a power cut loses nothing that is not
//! re-read at start, and a `fsync` a second is a journal commit a second on the disk of a host
//! that may be in an I/O incident.
//!
//! perftop runs as root and the directory may be shared (`/tmp`, a collector's spool): the
//! directory and every directory above it must be owned by root or by us and not writable by
//! group or others unless sticky (ssh's StrictModes rule); the temp file is created new
//! (`O_CREAT|O_EXCL|O_NOFOLLOW`) under a name nobody can guess, so a link or file planted
//! there is never opened, only refused.

use anyhow::{bail, Context, Result};
use std::cell::Cell;
use std::fs::{File, OpenOptions, Permissions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

const NAME: &str = "perftop.prom";
const TMP_PREFIX: &str = ".perftop.prom.";
/// Readable by a collector that does not run as root, whatever our umask.
const MODE: u32 = 0o644;
/// Fresh names tried when one is taken (planted, or left by a crash) before giving up.
const TRIES: u32 = 8;

pub struct Textfile {
    dir: PathBuf,
    path: PathBuf,
    /// Pages written: part of every name (`nonce`).
    written: Cell<u64>,
    /// 64 bits from `/dev/urandom` read once at start (`None`: it could not be read).
    seed: Option<u64>,
}

impl Textfile {
    /// Checks `dir` is a directory only root or we can change, and removes temp files earlier
    /// runs left.
    pub fn open(dir: &Path) -> Result<Textfile> {
        if !dir.is_dir() {
            bail!("--textfile {}: not a directory", dir.display());
        }
        // The checked directory is the one written to: the canonical path has no link a
        // later change could repoint.
        let real = dir
            .canonicalize()
            .with_context(|| format!("--textfile {}", dir.display()))?;
        // Anyone who can write a directory on the way could replace the page or plant links;
        // in a sticky one (`/tmp`) the O_EXCL create and the rename never write through theirs.
        crate::trust::check_chain(&real).map_err(|why| {
            anyhow::anyhow!(
                "--textfile {}: refused: {why}: another user could replace the page or plant \
                 links (chown it to root and chmod go-w, or +t as /tmp is)",
                dir.display()
            )
        })?;
        let entries = std::fs::read_dir(&real)
            .with_context(|| format!("--textfile {}: cannot list it", dir.display()))?;
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(TMP_PREFIX) && name.ends_with(".tmp") {
                // unlink: a planted link goes, its target is untouched.
                let _ = std::fs::remove_file(e.path());
            }
        }
        let mut b = [0u8; 8];
        let seed = File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut b))
            .ok()
            .map(|()| u64::from_ne_bytes(b));
        let t = Textfile {
            path: real.join(NAME),
            dir: real,
            written: Cell::new(0),
            seed,
        };
        // Fail at start, not on the first interval: a read-only directory is a set-up error.
        t.write("")
            .with_context(|| format!("--textfile {}", dir.display()))?;
        Ok(t)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Replaces the page with `text`.
    pub fn write(&self, text: &str) -> Result<()> {
        let (tmp, mut f) = self.create_tmp()?;
        let written = f
            .set_permissions(Permissions::from_mode(MODE))
            .and_then(|()| f.write_all(text.as_bytes()))
            .with_context(|| format!("writing {}", tmp.display()));
        let renamed = written.and_then(|()| self.replace(&tmp));
        // After an exchange the temp name holds the old page; after a failure, the new one.
        // Neither is wanted (unlink: a link swapped in goes, its target is untouched).
        if !matches!(renamed, Ok(Replaced::Renamed)) {
            let _ = std::fs::remove_file(&tmp);
        }
        self.written.set(self.written.get().wrapping_add(1));
        renamed.map(|_| ())
    }

    /// Puts the page at `tmp` in place of perftop.prom. Neither call follows a link at
    /// either name, so a link planted as perftop.prom is replaced, not written through.
    ///
    /// An exchange first (`renameat2(RENAME_EXCHANGE)`), and the old page unlinked after it:
    /// ext4 (`auto_da_alloc`, on by default) starts writing a file to disk when it is renamed
    /// over another, so a plain rename wrote every page to the disk, a second apart, on a host
    /// that may be in an I/O incident (10 % of `export --textfile`'s CPU, `perf`, 2026-12-07).
    /// A page that is exchanged and then replaced is never written. A plain rename where
    /// there is no page yet or the file system cannot exchange (`EINVAL`: before Linux 3.15,
    /// some network file systems).
    fn replace(&self, tmp: &Path) -> Result<Replaced> {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        use rustix::io::Errno;
        match renameat_with(CWD, tmp, CWD, &self.path, RenameFlags::EXCHANGE) {
            Ok(()) => return Ok(Replaced::Exchanged),
            // No page yet, or no exchange here: the rename below says what is wrong, if
            // anything is.
            Err(e) if [Errno::NOENT, Errno::INVAL, Errno::NOSYS, Errno::NOTSUP].contains(&e) => {}
            Err(e) => {
                return Err(std::io::Error::from(e))
                    .with_context(|| format!("replacing {}", self.path.display()))
            }
        }
        std::fs::rename(tmp, &self.path)
            .with_context(|| format!("replacing {}", self.path.display()))?;
        Ok(Replaced::Renamed)
    }

    /// A temp file of our own, new: `O_EXCL` fails on any name that exists (a link included,
    /// whatever it points at) and `O_NOFOLLOW` says so twice; a taken name is tried again
    /// under another nonce.
    fn create_tmp(&self) -> Result<(PathBuf, File)> {
        let mut last = None;
        for attempt in 0..TRIES {
            let tmp = self.dir.join(format!(
                "{TMP_PREFIX}{}.{:016x}.tmp",
                std::process::id(),
                self.nonce(attempt)
            ));
            let opened = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(MODE)
                .custom_flags(
                    (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC).bits() as i32,
                )
                .open(&tmp);
            match opened {
                Ok(f) => return Ok((tmp, f)),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => last = Some((tmp, e)),
                Err(e) => return Err(e).with_context(|| format!("creating {}", tmp.display())),
            }
        }
        match last {
            Some((tmp, e)) => Err(e).with_context(|| {
                format!(
                    "creating {}: {TRIES} fresh names were all taken",
                    tmp.display()
                )
            }),
            None => bail!("creating a temp file in {}", self.dir.display()),
        }
    }

    /// 64 bits nobody else can predict: the secret seed read once from `/dev/urandom` (an
    /// open and a read a page cost more than the rest of the name), mixed with the pages
    /// written and the attempt so no name repeats; without a seed the clock's nanoseconds
    /// (unique to us; `O_EXCL` still guards a guess).
    fn nonce(&self, attempt: u32) -> u64 {
        let count = self.written.get().rotate_left(40) ^ u64::from(attempt) << 32;
        let base = self.seed.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0)
        });
        splitmix(base ^ count)
    }

    /// On a clean stop the page goes too: a stale page would say the host is as it was.
    pub fn clean(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// How the page went in: by an exchange, leaving the old page at the temp name, or by a
/// rename, leaving nothing.
enum Replaced {
    Exchanged,
    Renamed,
}

/// splitmix64's finaliser: spreads the clock's low-entropy bits over the whole nonce.
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonces_differ() {
        let dir = tempfile::tempdir().expect("tempdir");
        let t = Textfile::open(dir.path()).expect("open");
        let a: std::collections::HashSet<u64> = (0..64).map(|i| t.nonce(i)).collect();
        assert_eq!(a.len(), 64);
    }

    /// Exchanged or renamed, each page replaces the last whole and leaves no temp file.
    #[test]
    fn each_page_replaces_the_last_and_leaves_nothing_else() {
        let dir = tempfile::tempdir().expect("tempdir");
        let t = Textfile::open(dir.path()).expect("open");
        for page in ["a 1\n", "b 2\n", "c 3\n"] {
            t.write(page).expect("write");
            assert_eq!(std::fs::read_to_string(t.path()).expect("read"), page);
            let names: Vec<String> = std::fs::read_dir(dir.path())
                .expect("list")
                .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .collect();
            assert_eq!(names, [NAME]);
        }
        let mode = std::fs::metadata(t.path())
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, MODE);
    }

    /// A link planted as the page is swapped out and removed; what it pointed at is untouched.
    #[test]
    fn a_link_planted_as_the_page_is_replaced_not_written_through() {
        let dir = tempfile::tempdir().expect("tempdir");
        let t = Textfile::open(dir.path()).expect("open");
        let target = dir.path().join("victim");
        std::fs::write(&target, "keep\n").expect("victim");
        std::fs::remove_file(t.path()).expect("rm");
        std::os::unix::fs::symlink(&target, t.path()).expect("plant");
        t.write("page 1\n").expect("write");
        assert_eq!(std::fs::read_to_string(&target).expect("victim"), "keep\n");
        let meta = std::fs::symlink_metadata(t.path()).expect("lstat");
        assert!(meta.file_type().is_file());
        assert_eq!(std::fs::read_to_string(t.path()).expect("page"), "page 1\n");
    }
}
