//! `--textfile DIR`: `DIR/perftop.prom` for node_exporter's textfile collector, replaced whole
//! every interval. Written to `DIR/.perftop.prom.PID.tmp`, synced, then renamed over the old
//! file in the same directory, so a reader sees the old page or the new one, never part of
//! one; the collector reads only `*.prom`, so a temp file a crash leaves is never read, and the
//! next start removes it.

use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

const NAME: &str = "perftop.prom";

pub struct Textfile {
    path: PathBuf,
    tmp: PathBuf,
}

impl Textfile {
    /// Checks `dir` is a writable directory and removes temp files earlier runs left.
    pub fn open(dir: &Path) -> Result<Textfile> {
        if !dir.is_dir() {
            bail!("--textfile {}: not a directory", dir.display());
        }
        let entries = std::fs::read_dir(dir)
            .with_context(|| format!("--textfile {}: cannot list it", dir.display()))?;
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(".perftop.prom.") && name.ends_with(".tmp") {
                let _ = std::fs::remove_file(e.path());
            }
        }
        let t = Textfile {
            path: dir.join(NAME),
            tmp: dir.join(format!(".{NAME}.{}.tmp", std::process::id())),
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
        let mut f = std::fs::File::create(&self.tmp)
            .with_context(|| format!("writing {}", self.tmp.display()))?;
        f.write_all(text.as_bytes())
            .and_then(|()| f.sync_all())
            .with_context(|| format!("writing {}", self.tmp.display()))?;
        std::fs::rename(&self.tmp, &self.path).with_context(|| {
            let _ = std::fs::remove_file(&self.tmp);
            format!("replacing {}", self.path.display())
        })
    }

    /// On a clean stop the page goes too: a stale page would say the host is as it was.
    pub fn clean(&self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_file(&self.tmp);
    }
}
