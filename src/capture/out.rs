//! Where a capture is written: one new or empty directory of the user running perftop that no
//! one else can write, held open while everything is created inside it, never through a link.
//!
//! perftop runs as root, and `-o` may name a place another user can reach (`/tmp/cap`). A link
//! planted there (`cap -> /etc`) would otherwise receive hundreds of files. So the directory is
//! opened with `O_NOFOLLOW` (a trailing `/`, which would make the kernel follow a link, is
//! dropped first), refused unless it is ours, not group- or world-writable, and empty; then
//! every directory, file and link is made relative to that descriptor (`mkdirat`, `openat`
//! with `O_CREAT | O_EXCL | O_NOFOLLOW`, `symlinkat`), so renaming a parent of it midway
//! changes nothing. No one else can write inside it, so the paths below it stay ours.

use super::{Pass, Plan};
use anyhow::{bail, Context, Result};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use std::collections::HashSet;
use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// The output directory, open.
pub struct OutDir {
    fd: OwnedFd,
    path: PathBuf,
}

/// Opens (creating it when missing) the output directory; refuses a link, a non-directory, a
/// directory of another user or one others can write, and a non-empty one.
pub fn prepare_output(out: &Path) -> Result<OutDir> {
    let out: PathBuf = out.components().collect();
    let shown = crate::safe::line(&out.display().to_string()).into_owned();
    match std::fs::symlink_metadata(&out) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("creating {}", parent.display()))?;
            }
            match rustix::fs::mkdir(&out, Mode::from_raw_mode(0o755)) {
                // Made by someone else meanwhile: the checks below judge it.
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(std::io::Error::from(e)).context(format!("creating {shown}")),
            }
        }
        Err(e) => return Err(e).context(format!("reading {shown}")),
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = match rustix::fs::open(&out, flags, Mode::empty()) {
        Ok(fd) => fd,
        // O_NOFOLLOW | O_DIRECTORY gives ENOTDIR for a link, ELOOP without O_DIRECTORY.
        Err(Errno::LOOP | Errno::NOTDIR)
            if std::fs::symlink_metadata(&out).is_ok_and(|m| m.is_symlink()) =>
        {
            bail!(
            "{shown} is a symbolic link: capture writes into a real directory, never through a link"
        )
        }
        Err(Errno::NOTDIR) => bail!("{shown} is not a directory"),
        Err(e) => return Err(std::io::Error::from(e)).context(format!("opening {shown}")),
    };
    let st = rustix::fs::fstat(&fd).with_context(|| format!("reading {shown}"))?;
    let me = rustix::process::geteuid().as_raw();
    if st.st_uid != me {
        bail!(
            "{shown} belongs to uid {}, not to the user running perftop (uid {me}): capture \
             writes only into its own directory",
            st.st_uid
        );
    }
    if st.st_mode & 0o022 != 0 {
        bail!(
            "{shown} is writable by group or others (mode {:o}): capture writes only into a \
             directory no one else can change",
            st.st_mode & 0o7777
        );
    }
    let mut entries =
        rustix::fs::Dir::read_from(&fd).with_context(|| format!("reading {shown}"))?;
    while let Some(e) = entries.read() {
        let e = e.with_context(|| format!("reading {shown}"))?;
        if !matches!(e.file_name().to_bytes(), b"." | b"..") {
            bail!("{shown} is not empty: capture writes into a new or empty directory");
        }
    }
    Ok(OutDir { fd, path: out })
}

impl OutDir {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates the new file `rel` (never an existing one, never through a link) with `mode`.
    pub fn write_file(&self, rel: &Path, bytes: &[u8], mode: u32) -> Result<()> {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        rustix::fs::openat(&self.fd, rel, flags, Mode::from_raw_mode(mode))
            .map_err(std::io::Error::from)
            .and_then(|fd| File::from(fd).write_all(bytes))
            .with_context(|| format!("writing {}", self.path.join(rel).display()))
    }

    fn mkdir(&self, rel: &Path) -> Result<()> {
        match rustix::fs::mkdirat(&self.fd, rel, Mode::from_raw_mode(0o755)) {
            // Made earlier by this capture (no one else can write here).
            Ok(()) | Err(Errno::EXIST) => Ok(()),
            Err(e) => Err(std::io::Error::from(e))
                .with_context(|| format!("creating {}", self.path.join(rel).display())),
        }
    }
}

/// Creates directories once each (a capture has hundreds of files in a few dozen of them),
/// each of their parents first.
struct DirMaker<'a> {
    out: &'a OutDir,
    made: HashSet<PathBuf>,
}

impl DirMaker<'_> {
    fn ensure(&mut self, dir: &Path) -> Result<()> {
        if dir.as_os_str().is_empty() || self.made.contains(dir) {
            return Ok(());
        }
        if let Some(parent) = dir.parent() {
            self.ensure(parent)?;
        }
        self.out.mkdir(dir)?;
        self.made.insert(dir.to_path_buf());
        Ok(())
    }

    fn parent_of(&mut self, path: &Path) -> Result<()> {
        match path.parent() {
            Some(p) => self.ensure(p),
            None => Ok(()),
        }
    }
}

/// The mode a copy gets: the source's read and write bits, never more than `rw-r--r--`, so a
/// 0400 `/proc/PID/io` stays 0400 and nothing becomes executable or writable by others.
pub fn copy_mode(source: u32) -> u32 {
    source & 0o644
}

/// Writes one pass as a fixture root at `sub` (`t0`, `t1`) of the output directory.
pub fn write_pass(out: &OutDir, sub: &str, plan: &Plan, pass: &Pass) -> Result<()> {
    let base = Path::new(sub);
    let mut mk = DirMaker {
        out,
        made: HashSet::new(),
    };
    mk.ensure(base)?;
    for rel in plan
        .dirs
        .iter()
        .chain(pass.dirs.iter().map(|&i| &plan.files[i]))
    {
        mk.ensure(&base.join(rel))?;
    }
    for (i, range, mode) in &pass.files {
        let path = base.join(&plan.files[*i]);
        mk.parent_of(&path)?;
        let bytes = pass.arena.get(range.clone()).unwrap_or_default();
        out.write_file(&path, bytes, copy_mode(*mode))?;
    }
    // Last: nothing is written through a link made here.
    for (rel, target) in &pass.links {
        let path = base.join(rel);
        mk.parent_of(&path)?;
        // The target is kept as the kernel wrote it (relative, pointing into sysfs): perftop
        // only reads its last component, so it may dangle in the capture.
        rustix::fs::symlinkat(target, &out.fd, &path)
            .map_err(std::io::Error::from)
            .with_context(|| format!("creating link {}", out.path.join(&path).display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn refuses_a_non_empty_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        prepare_output(dir.path()).expect("empty is fine");
        fs::write(dir.path().join("x"), "").expect("write");
        assert!(prepare_output(dir.path()).is_err());
        prepare_output(&dir.path().join("new/sub")).expect("created");
        assert!(dir.path().join("new/sub").is_dir());
    }

    /// A planted link (to an empty directory of ours, so only the link is wrong), with and
    /// without a trailing `/`, and a directory others can write are refused; nothing is made.
    #[test]
    fn refuses_links_and_directories_others_can_write() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("target");
        fs::create_dir(&target).expect("mkdir");
        let link = dir.path().join("cap");
        std::os::unix::fs::symlink(&target, &link).expect("ln");
        for out in [link.clone(), dir.path().join("cap/")] {
            let e = prepare_output(&out).err().expect("a link is refused");
            assert!(e.to_string().contains("symbolic link"), "{e:#}");
        }
        let open = dir.path().join("open");
        fs::create_dir(&open).expect("mkdir");
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).expect("chmod");
        let e = prepare_output(&open).err().expect("0777 is refused");
        assert!(
            e.to_string().contains("writable by group or others"),
            "{e:#}"
        );
        fs::set_permissions(&open, fs::Permissions::from_mode(0o775)).expect("chmod");
        assert!(prepare_output(&open).is_err(), "group-writable");
        let out = prepare_output(&dir.path().join("new")).expect("a new one");
        out.write_file(Path::new("f"), b"x", 0o600)
            .expect("new file");
        assert!(
            out.write_file(Path::new("f"), b"y", 0o600).is_err(),
            "never an existing one"
        );
        assert_eq!(fs::read(dir.path().join("new/f")).expect("read"), b"x");
        assert_eq!(fs::read_dir(&target).expect("ls").count(), 0);
    }

    #[test]
    fn a_copy_is_never_more_readable_than_its_source() {
        assert_eq!(
            [0o400, 0o444, 0o600, 0o644, 0o666, 0o755, 0o4777, 0o200].map(copy_mode),
            [0o400, 0o444, 0o600, 0o644, 0o644, 0o644, 0o644, 0o200]
        );
    }
}
