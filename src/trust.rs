//! Which directories root's perftop may write in, as ssh's StrictModes decides for a home
//! directory: each one, and every one above it, belongs to root or to the user running perftop
//! and is writable by nobody else unless sticky (`/tmp`: others can add names of their own but
//! cannot rename or remove ours). Anyone who can write a non-sticky directory above the one
//! perftop writes in can swap it for a link; its owner can change its mode. Used for the tweak
//! state directory and the `--textfile` directory.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Root or the user running perftop.
pub fn owner_ok(uid: u32) -> bool {
    uid == 0 || uid == rustix::process::geteuid().as_raw()
}

/// Group or others may write it, and it is not sticky.
pub fn open_to_others(mode: u32) -> bool {
    mode & 0o022 != 0 && mode & 0o1000 == 0
}

/// The first directory of `dir` and those above it (`dir` already resolved: no link in it)
/// that fails the rule, with why in words; `Ok` when none does.
pub fn check_chain(dir: &Path) -> Result<(), String> {
    for d in dir.ancestors() {
        let m = std::fs::metadata(d).map_err(|e| format!("{}: {e}", d.display()))?;
        if !owner_ok(m.uid()) {
            return Err(format!(
                "{} is owned by uid {}, not by root or the user running perftop",
                d.display(),
                m.uid()
            ));
        }
        if open_to_others(m.mode()) {
            return Err(format!(
                "{} is writable by group or others (mode {:04o}) and not sticky",
                d.display(),
                m.mode() & 0o7777
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sticky_directories_may_be_open_to_others() {
        assert!(!open_to_others(0o1777), "/tmp");
        assert!(open_to_others(0o777));
        assert!(open_to_others(0o775), "group-writable");
        assert!(!open_to_others(0o755));
        assert!(check_chain(Path::new("/")).is_ok());
        let dir = tempfile::tempdir().expect("tempdir");
        let open = dir.path().join("open");
        std::fs::create_dir(&open).expect("mkdir");
        std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o777))
            .expect("chmod");
        let inner = open.join("inner");
        std::fs::create_dir(&inner).expect("mkdir");
        let why = check_chain(&inner).expect_err("under a 0777 directory");
        assert!(why.contains("open") && why.contains("0777"), "{why}");
    }
}
