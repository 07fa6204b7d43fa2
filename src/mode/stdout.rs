//! Whether stdout can take what a text mode writes (`batch`, `snapshot`, `delta`, `dump`, the
//! tweak commands, the printed unit).
//!
//! Started with stdout closed (`perftop batch >&-`), a Rust program finds `/dev/null` there:
//! the runtime opens it read-write on a closed standard descriptor before `main` (so no file
//! opened later can land on descriptor 1 and receive the output). Every write then succeeds
//! into nothing and perftop exited 0 without a word. A read-write `/dev/null` on stdout is that
//! case: a shell's `> /dev/null` opens it write-only, and stays the way to discard output.
//! A write that fails (`> /dev/full`) is already an error with a message; a closed pipe
//! (`| head`) ends quietly with status 0, as the Unix tools do (see `cli::main`).

use anyhow::{bail, Result};
use rustix::fs::{FileType, OFlags};

/// True when stdout is closed, or is the `/dev/null` the runtime put in its place.
pub fn closed() -> bool {
    let out = std::io::stdout();
    let Ok(st) = rustix::fs::fstat(&out) else {
        return true;
    };
    let null = FileType::from_raw_mode(st.st_mode) == FileType::CharacterDevice
        && (rustix::fs::major(st.st_rdev), rustix::fs::minor(st.st_rdev)) == (1, 3);
    let read_write =
        rustix::fs::fcntl_getfl(&out).is_ok_and(|f| f & OFlags::RWMODE == OFlags::RDWR);
    null && read_write
}

/// Refuses to run a mode whose output would be lost.
pub fn check() -> Result<()> {
    if closed() {
        bail!(
            "stdout is closed (started with `>&-`?): the output would be lost; redirect it to \
             a file or a pipe (`> /dev/null` discards it)"
        );
    }
    Ok(())
}
