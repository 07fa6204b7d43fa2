//! Where a capture reads from, without ever leaving the root: a file of a `--root` tree reached
//! through a link that resolves outside it (`proc/meminfo -> /etc/shadow`) is refused and
//! listed, never copied into a bug report; and each file's mode, so the copy is no more
//! readable than the source (`/proc/PID/io` is 0400).
//!
//! The live root (`/`) is read through `Root` as the dashboard reads it: nothing can lead out
//! of `/`, and the descriptors `Root` keeps make t0 and t1 re-reads (see `capture`). Any other
//! root is read here, and the check is the open itself: `openat2` with `RESOLVE_BENEATH`
//! (Linux 5.6) makes the kernel refuse, within the same path walk, any absolute link or `..`
//! that would leave the root's directory, so no link can be swapped between a check and the
//! read (canonicalizing first could not promise that), and it costs no syscall more than an
//! `open`. Where `openat2` is missing (RHEL 8's 4.18) or filtered, the file is opened as
//! before and the kernel is asked where that descriptor lies (`/proc/self/fd/N`): also a
//! check of what was opened, one `readlink` more. `Root`'s own reads are not touched.

use crate::root::{ReadBuf, ReadError, Root, MAX_FILE_BYTES};
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

/// Why a file under another root was not copied: a link led out of it.
pub const OUTSIDE: &str = "a symbolic link or `..` on the way leads out of the root: not copied";

/// How a file under a root other than `/` is opened.
enum Check {
    /// `openat2(RESOLVE_BENEATH)`: the kernel refuses to leave the directory.
    Kernel,
    /// `openat`, then the descriptor's real path must lie under this (the root's real path).
    FdPath(PathBuf),
}

/// A root other than `/`, opened once; every file is opened relative to it.
pub struct Beneath {
    dir: OwnedFd,
    check: Check,
}

impl Beneath {
    pub fn open(base: &Path) -> std::io::Result<Beneath> {
        let dir = rustix::fs::open(
            base,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let probe = rustix::fs::openat2(
            &dir,
            ".",
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH,
        );
        let check = match probe {
            Ok(_) => Check::Kernel,
            // No openat2 (before 5.6), or a seccomp filter that answers EPERM for it.
            Err(Errno::NOSYS | Errno::PERM) => Check::FdPath(fd_path(&dir)?),
            Err(e) => return Err(e.into()),
        };
        Ok(Beneath { dir, check })
    }

    /// The fallback check, whatever the kernel has (tests).
    #[cfg(test)]
    pub fn open_without_openat2(base: &Path) -> std::io::Result<Beneath> {
        let dir = rustix::fs::open(
            base,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let check = Check::FdPath(fd_path(&dir)?);
        Ok(Beneath { dir, check })
    }

    fn open_at(&self, rel: &str, flags: OFlags) -> Result<OwnedFd, ReadError> {
        let rel = match rel.trim_start_matches('/') {
            "" => ".",
            r => r,
        };
        // openat2 refuses (EINVAL) any flag but these beside O_PATH.
        let flags = match flags.contains(OFlags::PATH) {
            true => flags | OFlags::CLOEXEC,
            false => flags | OFlags::CLOEXEC | OFlags::NOCTTY,
        };
        let opened = match &self.check {
            // EAGAIN: a rename elsewhere raced a `..` walk; the kernel asks for a retry.
            Check::Kernel => (0..4)
                .map(|_| {
                    rustix::fs::openat2(&self.dir, rel, flags, Mode::empty(), ResolveFlags::BENEATH)
                })
                .find(|r| !matches!(r, Err(Errno::AGAIN)))
                .unwrap_or(Err(Errno::AGAIN)),
            Check::FdPath(_) => rustix::fs::openat(&self.dir, rel, flags, Mode::empty()),
        };
        let fd = opened.map_err(|e| match e {
            Errno::NOENT | Errno::NOTDIR => ReadError::Missing,
            Errno::ACCESS | Errno::PERM => ReadError::Denied,
            // EXDEV: an absolute link or `..` out of the root; ELOOP: a /proc magic link
            // (`RESOLVE_BENEATH` never follows one) or a loop.
            Errno::XDEV | Errno::LOOP => ReadError::Io(OUTSIDE.into()),
            e => ReadError::Io(std::io::Error::from(e).to_string()),
        })?;
        if let Check::FdPath(base) = &self.check {
            let at = fd_path(&fd).map_err(|e| {
                ReadError::Io(format!("cannot tell whether it lies in the root: {e}"))
            })?;
            if !at.starts_with(base) {
                return Err(ReadError::Io(OUTSIDE.into()));
            }
        }
        Ok(fd)
    }

    /// Appends the regular file `rel` to `out` (at most `MAX_FILE_BYTES`; `too_large` says it
    /// was cut) and returns its mode. Nothing is appended on an error.
    pub fn read(&self, rel: &str, out: &mut Vec<u8>) -> Result<(bool, u32), ReadError> {
        let fd = self.open_at(rel, OFlags::RDONLY | OFlags::NONBLOCK)?;
        let st = rustix::fs::fstat(&fd).map_err(|e| ReadError::Io(e.to_string()))?;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => {}
            FileType::Directory => return Err(ReadError::NotAFile),
            _ => return Err(ReadError::Special),
        }
        let start = out.len();
        let read = File::from(fd).take(MAX_FILE_BYTES + 1).read_to_end(out);
        if let Err(e) = read {
            out.truncate(start);
            return Err(match e.kind() {
                std::io::ErrorKind::PermissionDenied => ReadError::Denied,
                _ => ReadError::Io(e.to_string()),
            });
        }
        let too_large = (out.len() - start) as u64 > MAX_FILE_BYTES;
        out.truncate(start + (out.len() - start).min(MAX_FILE_BYTES as usize));
        Ok((too_large, st.st_mode & 0o7777))
    }

    /// The target of the link `rel`, its directory reached without leaving the root.
    pub fn read_link(&self, rel: &str) -> Result<PathBuf, ReadError> {
        let rel = rel.trim_start_matches('/');
        let (parent, name) = rel.rsplit_once('/').unwrap_or((".", rel));
        let dir = self.open_at(parent, OFlags::PATH | OFlags::DIRECTORY)?;
        match rustix::fs::readlinkat(&dir, name, Vec::new()) {
            Ok(target) => Ok(PathBuf::from(std::ffi::OsString::from_vec(
                target.into_bytes(),
            ))),
            Err(Errno::NOENT) => Err(ReadError::Missing),
            Err(e) => Err(ReadError::Io(std::io::Error::from(e).to_string())),
        }
    }
}

/// Where the kernel says an open descriptor lies.
fn fd_path(fd: &impl AsFd) -> std::io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_fd().as_raw_fd()))
}

/// What a capture reads from: the live root through `Root`, any other through `Beneath`.
pub struct Source<'a> {
    root: &'a Root,
    beneath: Option<Beneath>,
    buf: ReadBuf,
}

impl<'a> Source<'a> {
    pub fn new(root: &'a Root) -> std::io::Result<Source<'a>> {
        let beneath = if root.is_live() {
            None
        } else {
            Some(Beneath::open(root.base())?)
        };
        Ok(Source {
            root,
            beneath,
            buf: ReadBuf::default(),
        })
    }

    #[cfg(test)]
    pub fn with(root: &'a Root, beneath: Beneath) -> Source<'a> {
        Source {
            root,
            beneath: Some(beneath),
            buf: ReadBuf::default(),
        }
    }

    /// Appends the file `rel` to `out`: whether it was cut at `MAX_FILE_BYTES`, and its mode
    /// where the open gave it (another root; the live root's is asked for by `mode`).
    pub fn read(&mut self, rel: &str, out: &mut Vec<u8>) -> Result<(bool, Option<u32>), ReadError> {
        match &self.beneath {
            Some(b) => b.read(rel, out).map(|(cut, mode)| (cut, Some(mode))),
            None => {
                let cut = self.root.read_into(rel, "", &mut self.buf)?;
                out.extend_from_slice(self.buf.bytes());
                Ok((cut, None))
            }
        }
    }

    /// The mode of a file of the live root, asked after the timed reads; a file gone since is
    /// given the tightest mode (owner only).
    pub fn mode(&self, rel: &str) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(self.root.path(rel)).map_or(0o400, |m| m.permissions().mode() & 0o7777)
    }

    pub fn read_link(&self, rel: &str) -> Result<PathBuf, ReadError> {
        match &self.beneath {
            Some(b) => b.read_link(rel),
            None => {
                std::fs::read_link(self.root.path(rel)).map_err(|e| ReadError::Io(e.to_string()))
            }
        }
    }

    /// The file's first line, trimmed; `None` when missing, unreadable, outside or empty.
    pub fn read_line(&mut self, rel: &str) -> Option<String> {
        let mut bytes = Vec::new();
        self.read(rel, &mut bytes).ok()?;
        let text = String::from_utf8_lossy(&bytes);
        let line = text.lines().next()?.trim();
        (!line.is_empty()).then(|| line.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    /// `root/in` and `root/sub/rel` lead out of the root, `root/ok -> sub/f` stays in it; both
    /// checks refuse the first two and read the third with its mode.
    #[test]
    fn links_out_of_the_root_are_refused_both_ways() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("root");
        std::fs::create_dir_all(root.join("sub")).expect("mkdir");
        let decoy = tmp.path().join("decoy");
        std::fs::write(&decoy, "secret\n").expect("write");
        std::fs::set_permissions(&decoy, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        symlink(&decoy, root.join("in")).expect("ln");
        symlink("../../decoy", root.join("sub/rel")).expect("ln");
        std::fs::write(root.join("sub/f"), "mine\n").expect("write");
        std::fs::set_permissions(root.join("sub/f"), std::fs::Permissions::from_mode(0o440))
            .expect("chmod");
        symlink("sub/f", root.join("ok")).expect("ln");
        symlink("/etc", root.join("etc")).expect("ln");
        for b in [
            Beneath::open(&root).expect("open"),
            Beneath::open_without_openat2(&root).expect("open"),
        ] {
            let mut out = Vec::new();
            for rel in ["in", "sub/rel", "etc/passwd"] {
                assert_eq!(
                    b.read(rel, &mut out).err(),
                    Some(ReadError::Io(OUTSIDE.into())),
                    "{rel}"
                );
            }
            assert!(out.is_empty());
            assert_eq!(b.read("ok", &mut out), Ok((false, 0o440)));
            assert_eq!(out, b"mine\n");
            assert_eq!(b.read("sub/none", &mut out), Err(ReadError::Missing));
            assert_eq!(b.read("sub", &mut out), Err(ReadError::NotAFile));
            assert_eq!(b.read_link("ok"), Ok(PathBuf::from("sub/f")));
            assert_eq!(
                b.read_link("etc/x").err(),
                Some(ReadError::Io(OUTSIDE.into()))
            );
        }
    }
}
