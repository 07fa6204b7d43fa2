//! The state directory (journal, lock, audit log): trusted as ssh's StrictModes trusts a home
//! directory, or refused; every file in it opened through the directory's descriptor without
//! following a link or waiting on a FIFO.
//!
//! Why: root's `tweak undo` writes kernel files from what the journal says, and `--state-dir`
//! can be anywhere. A directory another user can write lets them plant a journal (undo would
//! act on it), a link named `lock` or `audit.jsonl` (root would truncate or append to its
//! target), or a FIFO (every tweak command would hang in `open`). So:
//! - the directory and every directory above it belong to the user running perftop or to root;
//! - the directory is writable by nobody else; a directory above it may be only when sticky
//!   (`/tmp`: others cannot rename or remove what is ours in it);
//! - the directory is opened once with `O_NOFOLLOW`, checked through that descriptor (`fstat`),
//!   and its files opened relative to it (`openat`) with `O_NOFOLLOW | O_NONBLOCK`, then checked
//!   to be regular files of ours that nobody else can write.

use anyhow::{anyhow, bail, Context, Result};
use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;
use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// Largest state file read (a journal line is ~1-2 KiB: this is tens of thousands of changes).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// How a state file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// Read only; a missing file is `None`.
    Read,
    /// Read and write, created (mode 0600) when missing.
    Write,
    /// Appended to, created (mode 0600) when missing.
    Append,
}

/// A checked state directory, held open.
#[derive(Debug)]
pub struct StateDir {
    path: PathBuf,
    fd: OwnedFd,
}

fn refuse_dir(path: &Path, why: String) -> anyhow::Error {
    anyhow!(
        "refusing the state directory {}: {why}. Another user could plant a journal, a link or a \
         FIFO there that perftop (as root) would act on. Use a directory that only you (or root) \
         own and can write, e.g. `chmod 700` it, or the default /run/perftop",
        path.display()
    )
}

/// Every directory above `path` (resolved) must pass `trust::check_chain`.
fn check_ancestors(path: &Path) -> Result<()> {
    let Some(parent) = path.parent() else {
        return Ok(());
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    // The nearest directory that exists: those below it are created by us, mode 0700.
    let Some(parent) = parent
        .ancestors()
        .find_map(|p| std::fs::canonicalize(p).ok())
    else {
        bail!(
            "state directory {}: no directory above it exists",
            path.display()
        );
    };
    crate::trust::check_chain(&parent).map_err(|why| refuse_dir(path, format!("above it, {why}")))
}

/// A file's `fstat` checks: a regular file of ours (or root's) that nobody else can write.
fn check_file(fd: &OwnedFd, path: &Path) -> Result<()> {
    let st = rustix::fs::fstat(fd).with_context(|| format!("checking {}", path.display()))?;
    let kind = FileType::from_raw_mode(st.st_mode);
    if kind != FileType::RegularFile {
        bail!(
            "refusing {}: not a regular file ({}); perftop only reads and writes its own files \
             there",
            path.display(),
            match kind {
                FileType::Fifo => "a FIFO",
                FileType::Socket => "a socket",
                FileType::Directory => "a directory",
                FileType::CharacterDevice | FileType::BlockDevice => "a device",
                _ => "something else",
            }
        );
    }
    if !crate::trust::owner_ok(st.st_uid) {
        bail!(
            "refusing {}: it belongs to uid {}, not to you or root",
            path.display(),
            st.st_uid
        );
    }
    if st.st_mode & 0o022 != 0 {
        bail!(
            "refusing {}: others can write it (mode {:04o})",
            path.display(),
            st.st_mode & 0o7777
        );
    }
    Ok(())
}

impl StateDir {
    /// Opens and checks `path`, creating it (mode 0700) when missing and `create`. `Ok(None)`:
    /// missing and not created (nothing was ever journalled there).
    pub fn open(path: &Path, create: bool) -> Result<Option<StateDir>> {
        check_ancestors(path)?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match rustix::fs::open(path, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) if create => {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(path)
                    .with_context(|| format!("creating state directory {}", path.display()))?;
                // Created by us; checked again below all the same (a race could have put
                // someone else's directory there first).
                rustix::fs::open(path, flags, Mode::empty())
                    .with_context(|| format!("opening state directory {}", path.display()))?
            }
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP) => {
                return Err(refuse_dir(path, "it is a symbolic link".into()));
            }
            Err(Errno::NOTDIR) => bail!("state directory {}: not a directory", path.display()),
            Err(Errno::ACCESS) => bail!(
                "state directory {}: permission denied; the tweak state belongs to root (run \
                 perftop with sudo)",
                path.display()
            ),
            Err(e) => {
                return Err(std::io::Error::from(e))
                    .with_context(|| format!("opening state directory {}", path.display()))
            }
        };
        let st = rustix::fs::fstat(&fd)
            .with_context(|| format!("checking state directory {}", path.display()))?;
        if !crate::trust::owner_ok(st.st_uid) {
            return Err(refuse_dir(
                path,
                format!("it belongs to uid {}, not to you or root", st.st_uid),
            ));
        }
        if st.st_mode & 0o022 != 0 {
            return Err(refuse_dir(
                path,
                format!("others can write it (mode {:04o})", st.st_mode & 0o7777),
            ));
        }
        Ok(Some(StateDir {
            path: path.to_path_buf(),
            fd,
        }))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens `name` in the directory without following a link or blocking; `Ok(None)` when
    /// reading a file that does not exist.
    pub fn file(&self, name: &str, how: How) -> Result<Option<File>> {
        let path = self.path.join(name);
        let base = OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let flags = match how {
            How::Read => base | OFlags::RDONLY,
            How::Write => base | OFlags::RDWR | OFlags::CREATE,
            How::Append => base | OFlags::RDWR | OFlags::APPEND | OFlags::CREATE,
        };
        let fd = match rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o600)) {
            Ok(fd) => fd,
            Err(Errno::NOENT) if how == How::Read => return Ok(None),
            Err(Errno::LOOP) => bail!(
                "refusing {}: it is a symbolic link; perftop never writes through one",
                path.display()
            ),
            Err(e) => {
                return Err(std::io::Error::from(e))
                    .with_context(|| format!("opening {}", path.display()))
            }
        };
        check_file(&fd, &path)?;
        Ok(Some(File::from(fd)))
    }

    /// The whole of `name` (at most `MAX_FILE_BYTES`); empty when missing.
    pub fn read(&self, name: &str) -> Result<Vec<u8>> {
        let Some(f) = self.file(name, How::Read)? else {
            return Ok(Vec::new());
        };
        let mut data = Vec::new();
        f.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut data)
            .with_context(|| format!("reading {}", self.path.join(name).display()))?;
        if data.len() as u64 > MAX_FILE_BYTES {
            bail!(
                "{}: larger than the {} MiB perftop reads; not a journal perftop wrote",
                self.path.join(name).display(),
                MAX_FILE_BYTES >> 20
            );
        }
        Ok(data)
    }

    /// Makes the directory's entries durable (after creating a file in it).
    pub fn sync(&self) {
        let _ = rustix::fs::fsync(&self.fd);
    }
}
