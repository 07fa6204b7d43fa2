//! Descriptors kept open between samples on the live host, so a file read every sample is
//! opened once and then read again with `pread` at offset 0.
//!
//! Why: on this project's 2-vCPU VM an `open`+`read`+`close` of a sysfs attribute costs ~6 µs
//! and a `pread` on a kept descriptor ~0.8 µs (procfs: ~6 vs ~2.5 µs); the path walk, the
//! `struct file` and the kernel's per-open set-up are most of a small file's cost. procfs and
//! sysfs produce a file's text anew on every read from offset 0 (seq_file restarts its
//! iterator, kernfs calls `show` again, a sysctl formats its value), so a kept descriptor reads
//! the current value, as `lseek(fd, 0)` readers such as netdata rely on.
//!
//! What can go stale is handled by the kernel's own answers: a kept `/proc/PID/*` refers to
//! that process, not to the number, so after it exits a read fails (ESRCH) even when the PID
//! was reused; a removed sysfs or cgroup file fails with ENODEV. Any failed or empty read on a
//! kept descriptor drops it and the file is opened again by path, which then says what is
//! there now (ENOENT, the new process). A file the kernel will not `pread` is not kept again.
//!
//! Bounded: at most `cap` descriptors (512, or a quarter of `RLIMIT_NOFILE`); a file is kept
//! only from its second read in two samples, so what is read in turns (idle processes, a big
//! host's per-CPU detail) does not crowd out what is read every sample; a descriptor unused
//! for `IDLE_SAMPLES` samples is closed. Each kept procfs/sysfs file holds a page of kernel
//! memory (its seq_file buffer): 2 MiB at the cap. Only the live root keeps descriptors: a
//! fixture tree's files are replaced between reads by tests, and a replaced file's old
//! descriptor would read the old text.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Samples a kept descriptor may go unread before it is closed: fewer than the processes'
/// `IDLE_EVERY` turns, so a process read in two samples running (its first two passes, a
/// burst of work) and then idle gives its descriptors back, instead of holding slots that
/// the files read every sample need. (At 20 with turns of 16, 1,000 idle processes held all
/// 512 slots after the first two passes and `/proc/meminfo`, `vmstat`... were opened by path
/// every sample.)
const IDLE_SAMPLES: u64 = 4;
/// Most descriptors kept.
const MAX_KEPT: usize = 512;

#[derive(Debug)]
struct Entry {
    /// `None` while a reader holds it, or for a file the kernel would not `pread`.
    file: Option<File>,
    used: u64,
    /// The kernel refused `pread` (a non-seekable file): always opened by path.
    unkeepable: bool,
}

#[derive(Debug)]
pub struct Kept {
    files: Mutex<HashMap<OsString, Entry>>,
    cap: usize,
    /// Descriptors held in `files`.
    held: AtomicUsize,
    sample: AtomicU64,
    /// The sample in which `files` was last swept for room.
    swept: AtomicU64,
}

impl Kept {
    pub fn new() -> Kept {
        // A quarter of the soft limit leaves the rest to recordings, sockets and terminals.
        let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(u64::MAX);
        let cap = usize::try_from(soft / 4).unwrap_or(MAX_KEPT).min(MAX_KEPT);
        Kept::with_cap(cap)
    }

    pub fn with_cap(cap: usize) -> Kept {
        Kept {
            files: Mutex::new(HashMap::new()),
            cap,
            held: AtomicUsize::new(0),
            sample: AtomicU64::new(0),
            swept: AtomicU64::new(u64::MAX),
        }
    }

    /// The kept descriptor of `path`, taken out until `keep` puts it back.
    pub fn take(&self, path: &OsStr) -> Option<File> {
        let mut files = self.files.lock().ok()?;
        let e = files.get_mut(path)?;
        // `used` of a path without a descriptor is when it was last read: `keep` asks it.
        let f = e.file.take()?;
        e.used = self.sample.load(Ordering::Relaxed);
        self.held.fetch_sub(1, Ordering::Relaxed);
        Some(f)
    }

    /// Whether `path` may be kept (not a file the kernel refused to `pread`).
    pub fn keepable(&self, path: &OsStr) -> bool {
        self.files
            .lock()
            .map(|f| f.get(path).is_none_or(|e| !e.unkeepable))
            .unwrap_or(false)
    }

    /// Keeps `file`, just read whole, for the next read of `path` when `path` was read in
    /// this sample or the one before too: a file read every sample is kept, one read in turns
    /// (an idle process every 16 samples) is not, so it does not crowd out the rest. Beyond the
    /// cap it is closed.
    pub fn keep(&self, path: &OsStr, file: File) {
        let Ok(mut files) = self.files.lock() else {
            return;
        };
        let now = self.sample.load(Ordering::Relaxed);
        if let Some(e) = files.get_mut(path) {
            if e.unkeepable {
                return;
            }
            let recent = e.file.is_some() || e.used + 1 >= now;
            e.used = now;
            let room = e.file.is_some() || self.held.load(Ordering::Relaxed) < self.cap;
            if recent && room && e.file.replace(file).is_none() {
                self.held.fetch_add(1, Ordering::Relaxed);
            }
            return;
        }
        if files.len() >= self.cap * 4 {
            // Paths seen once long ago (exited processes): forget them, at most once a sample.
            if self.swept.swap(now, Ordering::Relaxed) == now {
                return;
            }
            files.retain(|_, e| e.file.is_some() || e.unkeepable || e.used + 1 >= now);
            if files.len() >= self.cap * 4 {
                return;
            }
        }
        drop(file);
        let entry = Entry {
            file: None,
            used: now,
            unkeepable: false,
        };
        files.insert(path.to_os_string(), entry);
    }

    /// `path` could not be read through its kept descriptor: it is opened by path from now
    /// on when the kernel refused `pread` (`unkeepable`), else on the next read only.
    pub fn drop_file(&self, path: &OsStr, unkeepable: bool) {
        if let Ok(mut files) = self.files.lock() {
            // The caller took the descriptor out (`take`): nothing is held for `path` now.
            if unkeepable {
                let now = self.sample.load(Ordering::Relaxed);
                let e = Entry {
                    file: None,
                    used: now,
                    unkeepable: true,
                };
                files.insert(path.to_os_string(), e);
            } else {
                files.remove(path);
            }
        }
    }

    /// A new sample starts: descriptors unread for `IDLE_SAMPLES` samples are closed.
    pub fn next_sample(&self) {
        let now = self.sample.fetch_add(1, Ordering::Relaxed) + 1;
        if now % IDLE_SAMPLES == 0 {
            if let Ok(mut files) = self.files.lock() {
                files.retain(|_, e| e.used + IDLE_SAMPLES >= now);
                let held = files.values().filter(|e| e.file.is_some()).count();
                self.held.store(held, Ordering::Relaxed);
            }
        }
    }

    /// Descriptors held now.
    pub fn len(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use crate::root::{ReadError, Root};
    use std::io::Write;

    /// A file rewritten in place (same inode, as the kernel's files are) reads its new text
    /// through the kept descriptor; a file that shrinks to nothing is read again by path.
    #[test]
    fn a_kept_file_reads_what_it_holds_now() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("proc_x");
        std::fs::write(&f, "1 2 3\n").expect("write");
        let root = Root::new(dir.path()).keeping_files(4);
        assert_eq!(root.read("proc_x").as_deref(), Ok("1 2 3\n"));
        assert_eq!(root.kept_files(), 0, "kept from its second read on");
        assert_eq!(root.read("proc_x").as_deref(), Ok("1 2 3\n"));
        assert_eq!(root.kept_files(), 1);
        let mut w = std::fs::OpenOptions::new()
            .write(true)
            .open(&f)
            .expect("open");
        w.write_all(b"4 5 6\n").expect("rewrite");
        let before = root.opened();
        assert_eq!(root.read("proc_x").as_deref(), Ok("4 5 6\n"));
        assert_eq!(root.opened().since(before).reread, 1);
        w.set_len(0).expect("truncate");
        assert_eq!(root.read_line("proc_x"), None);
        assert_eq!(root.kept_files(), 0);
        std::fs::remove_file(&f).expect("rm");
        assert_eq!(root.read("proc_x"), Err(ReadError::Missing));
    }

    /// At most `cap` descriptors; a file read once in two samples (in turns) is not kept.
    #[test]
    fn the_cap_holds_and_files_read_in_turns_are_not_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        for n in 0..4 {
            std::fs::write(dir.path().join(format!("f{n}")), "1\n").expect("write");
        }
        let root = Root::new(dir.path()).keeping_files(2);
        for _ in 0..2 {
            for n in 0..4 {
                assert_eq!(root.read_u64(&format!("f{n}")), Some(1));
            }
        }
        assert_eq!(root.kept_files(), 2);
        let turns = Root::new(dir.path()).keeping_files(2);
        for _ in 0..4 {
            assert_eq!(turns.read_u64("f0"), Some(1));
            turns.next_sample();
            turns.next_sample();
        }
        assert_eq!(turns.kept_files(), 0, "read every other sample");
    }

    /// A kept `/proc/PID/stat` of a process that exited is not read as that process: the
    /// kernel answers ESRCH and the path then says it is gone.
    #[test]
    fn a_kept_process_file_does_not_outlive_its_process() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep(1) is on every Linux");
        let root = Root::new("/");
        let rel = format!("proc/{}/stat", child.id());
        for _ in 0..2 {
            let text = root.read(&rel).expect("stat of a running child");
            assert!(text.contains("(sleep)"), "{text}");
        }
        let before = root.opened();
        assert!(root.read(&rel).is_ok());
        assert_eq!(
            root.opened().since(before).reread,
            1,
            "read through the kept descriptor"
        );
        child.kill().expect("kill");
        child.wait().expect("reap");
        assert_eq!(root.read(&rel), Err(ReadError::Missing));
    }
}
