//! `perftop explain`: a window of a recording as episodes, causes, culprits and baselines, on
//! the machinery of `crate::explain`; and the one way its reports (and `diff`'s) reach a file.

use crate::explain::render::{render, Format};
use crate::findings::Thresholds;
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

pub fn run(
    path: &Path,
    format: &str,
    from: Option<String>,
    to: Option<String>,
    output: Option<&Path>,
    thresholds: &Thresholds,
) -> Result<()> {
    let format: Format = format.parse()?;
    let rec = crate::record::open(path)?;
    let report = crate::explain::explain(&rec, from.as_deref(), to.as_deref(), thresholds, 0)?;
    // The reader's warnings were said when the recording was opened.
    for u in report.unreadable.iter().skip(rec.warnings.len()) {
        eprintln!("perftop: warning: {}", crate::safe::line(u));
    }
    emit(&render(&report, format), output)
}

/// Writes a report to stdout or to `output`. Root may run this into a directory others can
/// write: a link planted at the path is refused (`O_NOFOLLOW`), and so is anything but a
/// regular file with one link that we (or root) own; it is truncated only after those checks.
pub fn emit(text: &str, output: Option<&Path>) -> Result<()> {
    let Some(path) = output else {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .context("writing to stdout")?;
        return Ok(());
    };
    let what = || format!("writing {}", path.display());
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .mode(0o644)
        .custom_flags(
            (rustix::fs::OFlags::NOFOLLOW
                | rustix::fs::OFlags::NONBLOCK
                | rustix::fs::OFlags::NOCTTY)
                .bits() as i32,
        )
        .open(path)
        .with_context(|| format!("{} (a symbolic link there is refused)", what()))?;
    let st = rustix::fs::fstat(&f).with_context(what)?;
    let me = rustix::process::geteuid().as_raw();
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        bail!("{}: not a regular file", what());
    }
    if st.st_nlink != 1 {
        bail!("{}: it has {} hard links; refused", what(), st.st_nlink);
    }
    if st.st_uid != me && st.st_uid != 0 {
        bail!("{}: owned by uid {}, not by us; refused", what(), st.st_uid);
    }
    f.set_len(0).with_context(what)?;
    f.write_all(text.as_bytes()).with_context(what)?;
    f.flush().with_context(what)
}
