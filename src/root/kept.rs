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
//! Bounded: at most `cap` descriptors (512, or a quarter of `RLIMIT_NOFILE`); a file read
//! every sample or in irregular turns (a big host's per-CPU detail) is kept only from its
//! second read in two samples, so it does not crowd out what is read every sample; a
//! descriptor unused for `IDLE_SAMPLES` samples is closed. Each kept procfs/sysfs file holds a page of kernel
//! memory (its seq_file buffer): 2 MiB at the cap. Only the live root keeps descriptors: a
//! fixture tree's files are replaced between reads by tests, and a replaced file's old
//! descriptor would read the old text. Only `/proc` and `/sys` files are kept: a regular
//! file (`/etc/tuned/active_profile`) can be replaced by a rename, and its old descriptor
//! would read the old file for ever.
//!
//! Files read on a schedule (the settings tier: every `Tier::refresh` samples; an
//! idle process's `stat` on its turn, every `IDLE_EVERY`) are kept from their first read, in
//! at most half the slots (`Every::Samples`), and closed when unread for longer than their
//! period. On the 2-vCPU VM ~170 settings (queue settings, IRQ affinities, NIC links,
//! sysctls) were opened by path, 13-17 a sample at 5-40 µs each (a long sysfs path walk with
//! cold caches) where a `pread` costs ~3 µs; the ~4 idle processes read a sample were each an
//! `open` with a path walk under `/proc/PID` and a `close` around their read.

use foldhash::{HashMap, HashMapExt};
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

/// How often a file is read, as its reader says: what decides when it is kept and closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Every {
    /// Every sample, or in turns: kept from its second read in two samples running.
    Sample,
    /// Once in this many samples (a setting): kept from its first read, in at most half the
    /// slots, and closed when unread for longer than its period.
    Samples(u64),
}

impl Every {
    /// Samples it may go unread before its descriptor is closed.
    fn idle(self) -> u64 {
        match self {
            Every::Sample => IDLE_SAMPLES,
            // A period's slack: the settings tier reads a setting again on the sample it is
            // due, one sample later when a refresh was moved (`due_next`).
            Every::Samples(n) => n.max(IDLE_SAMPLES) + 2,
        }
    }

    fn scheduled(self) -> bool {
        matches!(self, Every::Samples(_))
    }
}

#[derive(Debug)]
struct Entry {
    /// `None` while a reader holds it, or for a file the kernel would not `pread`.
    file: Option<File>,
    used: u64,
    /// The kernel refused `pread` (a non-seekable file): always opened by path.
    unkeepable: bool,
    every: Every,
}

#[derive(Debug)]
pub struct Kept {
    files: Mutex<HashMap<OsString, Entry>>,
    cap: usize,
    /// Descriptors held in `files`.
    held: AtomicUsize,
    /// Of `held`, those of files read on a schedule (`Every::Samples`): at most `cap / 2`.
    scheduled: AtomicUsize,
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
            scheduled: AtomicUsize::new(0),
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
        if e.every.scheduled() {
            self.scheduled.fetch_sub(1, Ordering::Relaxed);
        }
        Some(f)
    }

    /// Whether `path` may be kept (not a file the kernel refused to `pread`).
    pub fn keepable(&self, path: &OsStr) -> bool {
        self.files
            .lock()
            .map(|f| f.get(path).is_none_or(|e| !e.unkeepable))
            .unwrap_or(false)
    }

    /// Room for one more descriptor of a file read `every`.
    fn room(&self, every: Every) -> bool {
        self.held.load(Ordering::Relaxed) < self.cap
            && (!every.scheduled() || self.scheduled.load(Ordering::Relaxed) < self.cap / 2)
    }

    /// Keeps `file`, just read whole, for the next read of `path`. A file read every sample
    /// is kept when `path` was read in this sample or the one before too; one read in
    /// irregular turns is not, so it does not crowd out the rest. A file
    /// read on a schedule (`Every::Samples`) is kept from its first read, within its half of
    /// the slots. Beyond the cap it is closed.
    pub fn keep(&self, path: &OsStr, file: File, every: Every) {
        let Ok(mut files) = self.files.lock() else {
            return;
        };
        let now = self.sample.load(Ordering::Relaxed);
        if let Some(e) = files.get_mut(path) {
            if e.unkeepable {
                return;
            }
            let recent = e.file.is_some() || e.used + 1 >= now || every.scheduled();
            e.used = now;
            let held = e.file.is_some();
            if held {
                // Re-counted under the `every` of this read: a path read both ways (by
                // the settings tier and by an every-sample reader) moves between the halves.
                self.forget_held(e.every);
            }
            e.every = every;
            if held || (recent && self.room(every)) {
                e.file = Some(file);
                self.count_held(every);
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
        let file = (every.scheduled() && self.room(every)).then_some(file);
        if file.is_some() {
            self.count_held(every);
        }
        let entry = Entry {
            file,
            used: now,
            unkeepable: false,
            every,
        };
        files.insert(path.to_os_string(), entry);
    }

    fn count_held(&self, every: Every) {
        self.held.fetch_add(1, Ordering::Relaxed);
        if every.scheduled() {
            self.scheduled.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn forget_held(&self, every: Every) {
        self.held.fetch_sub(1, Ordering::Relaxed);
        if every.scheduled() {
            self.scheduled.fetch_sub(1, Ordering::Relaxed);
        }
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
                    every: Every::Sample,
                };
                files.insert(path.to_os_string(), e);
            } else {
                files.remove(path);
            }
        }
    }

    /// A new sample starts: descriptors unread for `IDLE_SAMPLES` samples (a scheduled
    /// file's: for longer than its period) are closed.
    pub fn next_sample(&self) {
        let now = self.sample.fetch_add(1, Ordering::Relaxed) + 1;
        if now % IDLE_SAMPLES == 0 {
            if let Ok(mut files) = self.files.lock() {
                files.retain(|_, e| e.used + e.every.idle() >= now);
                let held = files.values().filter(|e| e.file.is_some());
                let scheduled = held.clone().filter(|e| e.every.scheduled()).count();
                self.held.store(held.count(), Ordering::Relaxed);
                self.scheduled.store(scheduled, Ordering::Relaxed);
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
    use crate::root::{Every, ReadBuf, ReadError, Root};
    use std::io::Write;

    /// A tree of `n` one-line files `sys/f0`.. (only `proc/` and `sys/` files are kept).
    fn kernel_files(n: usize) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("sys")).expect("mkdir");
        for i in 0..n {
            std::fs::write(dir.path().join(format!("sys/f{i}")), "1\n").expect("write");
        }
        dir
    }

    /// Reads `rel` as the settings tier does (once in `every` samples).
    fn read_every(root: &Root, rel: &str, every: u64) -> Option<String> {
        let mut buf = ReadBuf::default();
        root.read_into_every(rel, "", &mut buf, 1 << 10, Every::Samples(every))
            .ok()?;
        Some(buf.text().into_owned())
    }

    /// A setting read once in 10 samples is kept from its first read and read through its
    /// descriptor on its next turn; unread for longer than its period it is closed. Settings
    /// take at most half the slots, so files read every sample always find room.
    #[test]
    fn settings_are_kept_between_their_turns_in_half_the_slots() {
        let dir = kernel_files(6);
        let root = Root::new(dir.path()).keeping_files(4);
        for n in 0..3 {
            assert_eq!(
                read_every(&root, &format!("sys/f{n}"), 10).as_deref(),
                Some("1\n")
            );
        }
        assert_eq!(root.kept_files(), 2, "half of the 4 slots");
        for _ in 0..10 {
            root.next_sample();
        }
        let before = root.opened();
        assert_eq!(read_every(&root, "sys/f0", 10).as_deref(), Some("1\n"));
        assert_eq!(
            root.opened().since(before).reread,
            1,
            "on its turn, no open"
        );
        // Files read every sample take the other half, and no more.
        for _ in 0..2 {
            for n in 3..6 {
                assert_eq!(root.read_u64(&format!("sys/f{n}")), Some(1));
            }
            root.next_sample();
        }
        assert_eq!(root.kept_files(), 4);
        // Ten samples on: f1 (read at sample 0) is past its period and slack, f3-f5 (read
        // every sample until 11) past the every-sample 4; f0, read at 10, is still kept.
        for _ in 0..10 {
            root.next_sample();
        }
        assert_eq!(root.kept_files(), 1);
        // A regular file outside proc/ and sys/ is never kept, read every sample or not.
        std::fs::write(dir.path().join("profile"), "x\n").expect("write");
        let before = root.kept_files();
        for _ in 0..3 {
            assert_eq!(root.read_line("profile").as_deref(), Some("x"));
            assert_eq!(read_every(&root, "profile", 10).as_deref(), Some("x\n"));
        }
        assert_eq!(root.kept_files(), before);
    }

    /// An idle process's `stat`, read on its turn every `IDLE_EVERY` passes, stays kept from
    /// one turn to the next: each later turn is a `pread`, not an `open` (its period is longer
    /// than the every-sample `IDLE_SAMPLES`).
    #[test]
    fn a_file_read_on_each_idle_turn_stays_kept() {
        let every = u64::from(crate::source::processes::IDLE_EVERY);
        let dir = kernel_files(1);
        let root = Root::new(dir.path()).keeping_files(8);
        assert_eq!(read_every(&root, "sys/f0", every).as_deref(), Some("1\n"));
        for turn in 1..=3 {
            for _ in 0..every {
                root.next_sample();
            }
            let before = root.opened();
            assert_eq!(read_every(&root, "sys/f0", every).as_deref(), Some("1\n"));
            let d = root.opened().since(before);
            assert_eq!(
                (d.files, d.reread),
                (1, 1),
                "turn {turn}: through the kept descriptor"
            );
        }
    }

    /// A file rewritten in place (same inode, as the kernel's files are) reads its new text
    /// through the kept descriptor; a file that shrinks to nothing is read again by path.
    #[test]
    fn a_kept_file_reads_what_it_holds_now() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("proc")).expect("mkdir");
        let f = dir.path().join("proc/x");
        std::fs::write(&f, "1 2 3\n").expect("write");
        let root = Root::new(dir.path()).keeping_files(4);
        assert_eq!(root.read("proc/x").as_deref(), Ok("1 2 3\n"));
        assert_eq!(root.kept_files(), 0, "kept from its second read on");
        assert_eq!(root.read("proc/x").as_deref(), Ok("1 2 3\n"));
        assert_eq!(root.kept_files(), 1);
        let mut w = std::fs::OpenOptions::new()
            .write(true)
            .open(&f)
            .expect("open");
        w.write_all(b"4 5 6\n").expect("rewrite");
        let before = root.opened();
        assert_eq!(root.read("proc/x").as_deref(), Ok("4 5 6\n"));
        assert_eq!(root.opened().since(before).reread, 1);
        w.set_len(0).expect("truncate");
        assert_eq!(root.read_line("proc/x"), None);
        assert_eq!(root.kept_files(), 0);
        std::fs::remove_file(&f).expect("rm");
        assert_eq!(root.read("proc/x"), Err(ReadError::Missing));
    }

    /// At most `cap` descriptors; a file read once in two samples (in turns) is not kept.
    #[test]
    fn the_cap_holds_and_files_read_in_turns_are_not_kept() {
        let dir = kernel_files(4);
        let root = Root::new(dir.path()).keeping_files(2);
        for _ in 0..2 {
            for n in 0..4 {
                assert_eq!(root.read_u64(&format!("sys/f{n}")), Some(1));
            }
        }
        assert_eq!(root.kept_files(), 2);
        let turns = Root::new(dir.path()).keeping_files(2);
        for _ in 0..4 {
            assert_eq!(turns.read_u64("sys/f0"), Some(1));
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
