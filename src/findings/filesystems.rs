//! `fs.full`: a writable filesystem nearly out of space or inodes, the classic cause of a
//! "disk" incident that no latency figure shows (writers get ENOSPC, logs stop, databases halt).

use super::{worst, Hit, Severity, Thresholds};
use crate::derive::{Derived, FsMetrics};
use crate::units::kb;

const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * MIB;

/// A mount point short enough for a strip line: its tail, which names it best.
fn short(mount: &str) -> String {
    const MAX: usize = 36;
    let n = mount.chars().count();
    if n <= MAX {
        return mount.to_string();
    }
    let tail: String = mount.chars().skip(n - (MAX - 1)).collect();
    format!("…{tail}")
}

fn bytes(b: u64) -> String {
    kb(Some(b / 1024))
}

/// Whether `fs.full` judges this filesystem at all. Read-only: nothing can fill it (a squashfs
/// image, a ro bind). Tiny: a firmware partition or a 5 MB /run/lock is full by design or
/// never written in an incident.
pub fn fs_watched(f: &FsMetrics, t: &Thresholds) -> bool {
    !f.read_only && f.size_bytes as f64 >= t.fs_min_size_mib * MIB
}

/// The free-space leg: under `fs_full_avail_gib` available where that floor is at most a
/// tenth of the filesystem (1 GiB free of a 2 GiB /boot is half empty).
pub fn fs_low_avail(f: &FsMetrics, t: &Thresholds) -> bool {
    (f.avail_bytes as f64) < t.fs_full_avail_gib * GIB
        && f.size_bytes as f64 >= t.fs_full_avail_min_size_gib * GIB
}

/// The worst of one filesystem's legs: (severity, how full in %, message).
fn judge(f: &FsMetrics, t: &Thresholds) -> Option<(Severity, f64, String)> {
    if !fs_watched(f, t) {
        return None;
    }
    let mount = short(&f.mount);
    let mut legs: Vec<(Severity, f64, String)> = Vec::new();
    if let Some(pct) = f.used_pct {
        let low_avail = fs_low_avail(f, t);
        let sev = if pct >= t.fs_full_pct_crit || f.avail_bytes == 0 {
            Some(Severity::Crit)
        } else if pct >= t.fs_full_pct || low_avail {
            Some(Severity::Warn)
        } else {
            None
        };
        if let Some(sev) = sev {
            let msg = format!(
                "{mount}: {pct:.1}% used, {} free of {}",
                bytes(f.avail_bytes),
                bytes(f.size_bytes)
            );
            legs.push((sev, pct, msg));
        }
    }
    if let Some(pct) = f.inodes_used_pct.filter(|p| *p >= t.fs_full_pct) {
        let sev = if pct >= t.fs_full_pct_crit {
            Severity::Crit
        } else {
            Severity::Warn
        };
        legs.push((sev, pct, format!("{mount}: {pct:.1}% of inodes used")));
    }
    legs.into_iter()
        .max_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)))
}

pub(super) fn full(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let hits = d.filesystems.iter().filter_map(|f| judge(f, t)).collect();
    worst(None, hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_mounts_keep_their_tail() {
        assert_eq!(short("/var"), "/var");
        let long = format!("/srv/{}", "x".repeat(60));
        assert_eq!(short(&long).chars().count(), 36);
        assert!(short(&long).starts_with('…'));
    }
}
