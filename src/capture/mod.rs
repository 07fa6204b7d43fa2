//! `perftop capture -o DIR`: copies exactly the `proc/` and `sys/` files perftop reads into a
//! fixture root, twice, one interval apart (`DIR/t0`, `DIR/t1`), with `DIR/capture.json`.
//!
//! What to copy is learnt from perftop itself: one sample is read through a traced `Root`
//! (see `root::Trace`). Each pass then reads `proc/uptime` first and every traced file right
//! after it into memory, with nothing written in between, so the counters of one pass are as
//! close in time as the kernel lets them be (perftop's own time base is that `proc/uptime`).
//! Both trees are written after both passes. The mode that runs them: `mode::capture`.

use crate::root::{ReadError, Root, Trace};
use crate::source::Reader;
use serde::Serialize;
use std::collections::{BTreeSet, HashSet};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

mod out;
mod source;
pub use out::{copy_mode, prepare_output, write_pass, OutDir};
pub use source::{Beneath, Source, OUTSIDE};

/// The time base of a pass; read first so it is closest to the counters that follow.
const UPTIME: &str = "proc/uptime";

/// What to copy, from one traced sample.
#[derive(Debug, Default)]
pub struct Plan {
    /// Files in read order, `proc/uptime` first.
    pub files: Vec<String>,
    /// Directories to create even when nothing is copied into them (a node's empty
    /// `hugepages/`, a NIC's `tx-N` queues that perftop counts but never reads).
    pub dirs: BTreeSet<String>,
    /// Symlinks perftop reads the target of; recreated with the same target.
    pub links: Vec<String>,
    /// How many of `files` are `proc/uptime` and the system-wide counter tables (first).
    pub tables: usize,
}

impl Plan {
    /// Reads one sample from `root` with tracing on and turns the trace into a plan.
    pub fn learn(root: &Root) -> Plan {
        let trace = Arc::new(Mutex::new(Trace::default()));
        let mut reader = Reader::new(root.traced(trace.clone()));
        let _ = reader.sample();
        drop(reader);
        let trace = match trace.lock() {
            Ok(t) => t.clone(),
            // Only a reader thread's panic poisons it, and that panic was resumed already.
            Err(p) => p.into_inner().clone(),
        };
        Plan::from_trace(root, trace)
    }

    pub fn from_trace(root: &Root, t: Trace) -> Plan {
        let mut plan = Plan {
            files: Vec::with_capacity(t.files.len() + 1),
            dirs: t.dirs,
            links: t.links.into_iter().collect(),
            tables: 1,
        };
        plan.files.push(UPTIME.to_string());
        let mut seen: HashSet<String> = HashSet::from([UPTIME.to_string()]);
        for f in t.files {
            if seen.insert(f.clone()) {
                plan.files.push(f);
            }
        }
        // An existence check that said yes must say yes on the capture too: a file is copied
        // (an empty `cpulist` of a memory-only node), a directory created.
        for rel in t.existing {
            if root.path(&rel).is_dir() {
                plan.dirs.insert(rel);
            } else if seen.insert(rel.clone()) {
                plan.files.push(rel);
            }
        }
        // Stable: within a tier the readers' order is kept.
        plan.files[1..].sort_by_key(|f| read_tier(f));
        plan.tables = 1 + plan.files[1..]
            .iter()
            .take_while(|f| read_tier(f) == 0)
            .count();
        plan
    }
}

/// When a file is read in a pass: the system-wide counter tables right after `proc/uptime`,
/// so the numbers that make rates are the closest to the time base; sysfs and settings next;
/// the per-process files (every `/proc/PID/comm`, read to find the ksoftirqd threads) last.
fn read_tier(rel: &str) -> u8 {
    let Some(rest) = rel.strip_prefix("proc/") else {
        return 1;
    };
    let first = rest.split('/').next().unwrap_or("");
    if first.bytes().all(|b| b.is_ascii_digit()) {
        2
    } else if rest == "cpuinfo" || first == "sys" || first == "irq" {
        // cpuinfo is static and slow to read (it can cost an IPI per CPU on x86).
        1
    } else {
        0
    }
}

/// A file that could not be copied, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub path: String,
    pub why: String,
}

/// One pass over the plan, held in memory until written.
#[derive(Debug)]
pub struct Pass {
    pub wall_ms: i64,
    /// From the start of the first read (`proc/uptime`) to the end of the last.
    pub spread: Duration,
    /// From the start of the first read to the end of the last counter table.
    pub tables_spread: Duration,
    /// All files' bytes, back to back; `files` says which range is whose, and the source's
    /// mode (permission bits).
    arena: Vec<u8>,
    files: Vec<(usize, Range<usize>, u32)>,
    /// Paths that turned out to be directories.
    dirs: Vec<usize>,
    links: Vec<(String, PathBuf)>,
    pub skipped: Vec<Skipped>,
}

impl Pass {
    pub fn bytes(&self) -> usize {
        self.arena.len()
    }

    pub fn files(&self) -> usize {
        self.files.len()
    }
}

/// Reads every planned file as raw bytes, as fast as one thread can: paths are built in a
/// reused buffer and bytes appended to one arena, so the loop is syscalls and copies only.
pub fn read_pass(src: &mut Source, plan: &Plan, arena_hint: usize) -> Pass {
    let mut arena = Vec::with_capacity(arena_hint);
    let mut files = Vec::with_capacity(plan.files.len());
    let mut unknown_modes = Vec::new();
    let mut dirs = Vec::new();
    let mut skipped = Vec::new();
    let wall_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let start = Instant::now();
    let mut tables_spread = Duration::ZERO;
    for (i, rel) in plan.files.iter().enumerate() {
        if i == plan.tables {
            tables_spread = start.elapsed();
        }
        let at = arena.len();
        match src.read(rel, &mut arena) {
            Ok((too_large, mode)) => {
                if mode.is_none() {
                    unknown_modes.push(files.len());
                }
                files.push((i, at..arena.len(), mode.unwrap_or(0)));
                if too_large {
                    skipped.push(Skipped {
                        path: rel.clone(),
                        why: ReadError::TooLarge(crate::root::MAX_FILE_BYTES).to_string(),
                    });
                }
            }
            Err(ReadError::NotAFile) => dirs.push(i),
            Err(ReadError::Missing) => skipped.push(Skipped {
                path: rel.clone(),
                why: "vanished".into(),
            }),
            Err(e) => skipped.push(Skipped {
                path: rel.clone(),
                why: e.to_string(),
            }),
        }
    }
    let spread = start.elapsed();
    if plan.tables >= plan.files.len() {
        tables_spread = spread;
    }
    // The live root's modes, asked after the timed reads (one stat each would widen them).
    for k in unknown_modes {
        let (i, _, mode) = &mut files[k];
        *mode = src.mode(&plan.files[*i]);
    }
    // Link targets are settings (a NIC's driver), not counters: read after the timed reads.
    let mut links = Vec::with_capacity(plan.links.len());
    for rel in &plan.links {
        match src.read_link(rel) {
            Ok(target) => links.push((rel.clone(), target)),
            Err(e) => skipped.push(Skipped {
                path: rel.clone(),
                why: e.to_string(),
            }),
        }
    }
    Pass {
        wall_ms,
        spread,
        tables_spread,
        arena,
        files,
        dirs,
        links,
        skipped,
    }
}

/// `DIR/capture.json`: where and when the capture was taken.
#[derive(Debug, Serialize)]
pub struct Manifest {
    pub perftop_version: String,
    /// The root captured from (`/` for the running system).
    pub root: String,
    pub hostname: Option<String>,
    pub kernel_release: Option<String>,
    /// Bytes, from the running kernel; null when capturing another root (a fixture), whose
    /// page size this kernel does not know.
    pub page_size: Option<usize>,
    pub interval_s: f64,
    pub passes: Vec<PassSummary>,
}

#[derive(Debug, Serialize)]
pub struct PassSummary {
    pub dir: String,
    pub wall_ms: i64,
    pub wall: String,
    /// From the first read (`proc/uptime`) to the end of the last file read, in ms.
    pub read_spread_ms: f64,
    /// From the first read to the end of the last system-wide counter table (`proc/stat`,
    /// `proc/diskstats`, `proc/softirqs`, ...), in ms: how far apart the numbers behind the
    /// rates were read.
    pub tables_spread_ms: f64,
    pub tables: usize,
    pub files: usize,
    pub bytes: usize,
    pub dirs: usize,
    pub links: usize,
    pub skipped: Vec<Skipped>,
}

pub fn summary(dir: &str, plan: &Plan, pass: &Pass) -> PassSummary {
    PassSummary {
        dir: dir.to_string(),
        wall_ms: pass.wall_ms,
        wall: crate::record::format_rfc3339(pass.wall_ms),
        read_spread_ms: pass.spread.as_secs_f64() * 1000.0,
        tables_spread_ms: pass.tables_spread.as_secs_f64() * 1000.0,
        tables: plan.tables,
        files: pass.files(),
        bytes: pass.bytes(),
        dirs: plan.dirs.len() + pass.dirs.len(),
        links: pass.links.len(),
        skipped: pass.skipped.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn copies_files_empty_dirs_and_links() {
        let src = tempfile::tempdir().expect("tempdir");
        let s = src.path();
        fs::create_dir_all(s.join("proc")).expect("mkdir");
        fs::create_dir_all(s.join("sys/n/hugepages")).expect("mkdir");
        fs::create_dir_all(s.join("sys/q/tx-0")).expect("mkdir");
        fs::write(s.join("proc/uptime"), "5.00 9.00\n").expect("write");
        fs::write(s.join("sys/n/cpulist"), "").expect("write");
        std::os::unix::fs::symlink("../../x/virtio_net", s.join("sys/drv")).expect("ln");
        let mut t = Trace::default();
        t.listed("sys/n/hugepages", &[]);
        t.listed("sys/q", &["tx-0".to_string()]);
        t.link("sys/drv");
        t.existing("sys/n/cpulist");
        t.file("sys", "gone");
        let root = Root::new(s);
        let plan = Plan::from_trace(&root, t);
        assert_eq!(plan.files, ["proc/uptime", "sys/gone", "sys/n/cpulist"]);
        assert_eq!(
            [
                "proc/stat",
                "proc/net/dev",
                "proc/sys/vm/dirty_ratio",
                "sys/block/vda/inflight",
                "proc/cpuinfo",
                "proc/14/stat"
            ]
            .map(read_tier),
            [0, 0, 1, 1, 1, 2]
        );
        // Owner-only in the source: owner-only in the copy.
        fs::set_permissions(s.join("sys/n/cpulist"), fs::Permissions::from_mode(0o400))
            .expect("chmod");
        let pass = read_pass(&mut Source::new(&root).expect("root"), &plan, 0);
        assert_eq!((pass.files(), pass.bytes()), (2, 10));
        assert_eq!(pass.skipped.len(), 1);
        let dir = tempfile::tempdir().expect("tempdir");
        let out = prepare_output(dir.path()).expect("empty");
        write_pass(&out, "t0", &plan, &pass).expect("written");
        let base = dir.path().join("t0");
        let mode = |rel: &str| {
            fs::metadata(base.join(rel))
                .expect("stat")
                .permissions()
                .mode()
        };
        assert_eq!(mode("sys/n/cpulist") & 0o7777, 0o400);
        assert_eq!(mode("proc/uptime") & 0o7777, 0o644);
        let copy = Root::new(&base);
        assert_eq!(copy.read("proc/uptime").as_deref(), Ok("5.00 9.00\n"));
        assert!(copy.exists("sys/n/cpulist"));
        assert!(copy.is_dir("sys/n/hugepages"));
        assert_eq!(copy.list_dir("sys/q"), ["tx-0"]);
        assert_eq!(copy.link_name("sys/drv").as_deref(), Some("virtio_net"));
    }
}
