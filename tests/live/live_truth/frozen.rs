//! A loop device that completes nothing while its guard holds (a frozen ext4 under it): the
//! stuck-I/O and dirty-throttling checks write to it.

use super::live::sh;
use std::path::{Path, PathBuf};
use std::process::Child;

/// A loop device whose I/O never completes while the guard holds: its backing file lives on
/// an ext4 filesystem (itself on a loop device over a sparse file in /var/tmp) that is frozen
/// with `fsfreeze`, so the loop worker's writes to the backing file wait in the frozen
/// filesystem. No dm-delay or null_blk needed. Drop thaws first (blocked writers finish), then
/// reaps the writers, unmounts and detaches everything, on every path.
pub struct FrozenDisk {
    pub dir: tempfile::TempDir,
    outer: Option<String>,
    mnt: PathBuf,
    mounted: bool,
    /// `/dev/loopN` of the device that stalls.
    pub inner: Option<String>,
    /// Where ext4 on the stalling device is mounted, when asked for.
    pub inner_mnt: Option<PathBuf>,
    frozen: bool,
    pub writers: Vec<Child>,
}

impl FrozenDisk {
    /// `inner_mb` of stalling device; with `with_fs`, an ext4 on it, mounted.
    pub fn new(inner_mb: u64, with_fs: bool) -> Result<FrozenDisk, String> {
        let dir = tempfile::Builder::new()
            .prefix("perftop-live-frozen-")
            .tempdir_in("/var/tmp")
            .map_err(|e| format!("tempdir in /var/tmp: {e}"))?;
        let mnt = dir.path().join("outer");
        let mut g = FrozenDisk {
            outer: None,
            mnt,
            mounted: false,
            inner: None,
            inner_mnt: None,
            frozen: false,
            writers: Vec::new(),
            dir,
        };
        let p = |x: &Path| x.to_string_lossy().into_owned();
        let outer_img = p(&g.dir.path().join("outer.img"));
        let outer_mb = inner_mb + 64;
        sh(&["truncate", "-s", &format!("{outer_mb}M"), &outer_img])?;
        sh(&["mkfs.ext4", "-q", "-F", &outer_img])?;
        g.outer = Some(sh(&["losetup", "-f", "--show", &outer_img])?);
        std::fs::create_dir(&g.mnt).map_err(|e| e.to_string())?;
        sh(&["mount", g.outer.as_deref().unwrap_or("?"), &p(&g.mnt)])?;
        g.mounted = true;
        let inner_img = p(&g.mnt.join("inner.img"));
        sh(&["truncate", "-s", &format!("{inner_mb}M"), &inner_img])?;
        let inner = sh(&["losetup", "-f", "--show", &inner_img])?;
        g.inner = Some(inner.clone());
        if with_fs {
            sh(&["mkfs.ext4", "-q", "-F", &inner])?;
            let m = g.dir.path().join("inner");
            std::fs::create_dir(&m).map_err(|e| e.to_string())?;
            sh(&["mount", &inner, &p(&m)])?;
            g.inner_mnt = Some(m);
        }
        Ok(g)
    }

    /// The stalling device's name (`loopN`).
    pub fn name(&self) -> String {
        self.inner
            .as_deref()
            .unwrap_or("")
            .trim_start_matches("/dev/")
            .to_string()
    }

    /// Starts `n` direct 4 kB writes to the stalling device, each to its own block: they stay
    /// in flight while the filesystem over it is frozen.
    pub fn stuck_writers(&mut self, n: usize) {
        let of = format!("of={}", self.inner.as_deref().unwrap_or_default());
        for i in 0..n {
            let seek = format!("seek={i}");
            self.writers.push(
                std::process::Command::new("dd")
                    .args(["if=/dev/zero", &of, "bs=4k", "count=1", &seek])
                    .args(["oflag=direct", "status=none"])
                    .spawn()
                    .expect("start dd"),
            );
        }
    }

    /// Requests in flight on the stalling device, as the kernel counts them
    /// (`/sys/block/NAME/inflight`, reads + writes; 0 when unreadable).
    pub fn inflight(&self) -> u64 {
        super::live::read_trim(format!("/sys/block/{}/inflight", self.name()))
            .map(|s| {
                s.split_whitespace()
                    .filter_map(|x| x.parse::<u64>().ok())
                    .sum()
            })
            .unwrap_or(0)
    }

    pub fn freeze(&mut self) -> Result<(), String> {
        sh(&["fsfreeze", "-f", &self.mnt.to_string_lossy()])?;
        self.frozen = true;
        Ok(())
    }

    fn thaw(&mut self) {
        if self.frozen {
            let _ = sh(&["fsfreeze", "-u", &self.mnt.to_string_lossy()]);
            self.frozen = false;
        }
    }
}

impl Drop for FrozenDisk {
    fn drop(&mut self) {
        for w in &mut self.writers {
            let _ = w.kill();
        }
        self.thaw();
        for w in &mut self.writers {
            let _ = w.wait();
        }
        if let Some(m) = self.inner_mnt.take() {
            let _ = sh(&["umount", &m.to_string_lossy()]);
        }
        if let Some(dev) = self.inner.take() {
            let _ = sh(&["losetup", "-d", &dev]);
        }
        if self.mounted {
            let _ = sh(&["umount", &self.mnt.to_string_lossy()]);
        }
        if let Some(dev) = self.outer.take() {
            let _ = sh(&["losetup", "-d", &dev]);
        }
    }
}
