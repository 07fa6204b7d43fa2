//! The one door to the observed host's files: every `proc/` and `sys/` read goes through a `Root`.
//!
//! `--root DIR` makes perftop read `DIR/proc/...` and `DIR/sys/...`, so fixtures, synthetic hosts
//! and a container with the host's `/proc` mounted elsewhere all look the same to the readers.
//! Reads are capped (a 4096-CPU `/proc/interrupts` is ~25 MB; anything far beyond that is not a
//! kernel file) and never panic: a missing file is `Missing`, a directory is `NotAFile`.
//!
//! Reads never block: files are opened with `O_NONBLOCK` and anything `fstat` does not call a
//! regular file (a FIFO, a socket, a device node planted in a fixture or a container's mount) is
//! `NotAFile` before a byte is read. procfs and sysfs files are regular files to `fstat`.
//!
//! A root can carry a `Trace` that records what the readers touched, so `perftop capture`
//! copies exactly that and nothing else.

use std::borrow::Cow;
use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

pub mod cost;
mod count;
mod fill;
mod kept;
mod regular;
pub mod trace;
use count::Count;
pub use count::Opened;
use fill::{fill, reads_end, Fresh, Stop, Until, EISDIR, ESPIPE};
pub use kept::Every;
use kept::Kept;
use regular::open_nonblocking;
pub use regular::{read_regular_file, read_regular_text};
pub use trace::Trace;

/// Largest file perftop will read. Bigger files are read up to this size and flagged.
pub const MAX_FILE_BYTES: u64 = 96 * 1024 * 1024;

/// Size of the first read; most kernel files (sysfs attributes) are a few bytes.
const FIRST_READ: usize = 8192;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    Missing,
    /// A directory.
    NotAFile,
    /// A FIFO, socket or device node: never read (it could block or never end).
    Special,
    /// The file was cut at this many bytes (`MAX_FILE_BYTES` or a reader's lower limit for
    /// the file); the truncated text is still returned by `read_lossy`.
    TooLarge(u64),
    /// EACCES/EPERM: the file is there but this user may not read it (another user's
    /// `/proc/PID/io` without root).
    Denied,
    Io(String),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Missing => write!(f, "missing"),
            ReadError::NotAFile | ReadError::Special => write!(f, "not a regular file"),
            ReadError::TooLarge(cap) if *cap >= 1 << 20 => {
                write!(f, "larger than {} MiB: only that much read", cap >> 20)
            }
            ReadError::TooLarge(cap) => {
                write!(f, "larger than {} KiB: only that much read", cap >> 10)
            }
            ReadError::Denied => write!(f, "permission denied"),
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Reusable buffers for reading many files: the path being opened and the bytes read.
///
/// A reader keeps one per thread, so reading a file allocates nothing once the buffers have
/// grown: a 4096-CPU host has ~100k small files per sample, and zeroing a fresh 8 KiB buffer
/// and building a `PathBuf` for each cost more CPU than the syscalls themselves. The data
/// buffer keeps its largest size (a big host's 23 MB `/proc/interrupts` is then read without
/// page-faulting a new allocation every sample).
#[derive(Debug, Default)]
pub struct ReadBuf {
    path: OsString,
    data: Vec<u8>,
    len: usize,
}

impl ReadBuf {
    /// What the last successful read returned.
    pub fn bytes(&self) -> &[u8] {
        &self.data[..self.len]
    }

    /// The same as text, invalid UTF-8 replaced; borrowed (no copy) when it is valid.
    pub fn text(&self) -> Cow<'_, str> {
        // `from_utf8` checks ASCII a word at a time; `from_utf8_lossy` walks chunks and takes
        // 3x longer on a 23 MB /proc/interrupts. Kernel files are nearly always valid.
        match std::str::from_utf8(self.bytes()) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => String::from_utf8_lossy(self.bytes()),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Root {
    base: PathBuf,
    /// What the readers touched, when tracing (shared by the clones handed to reader threads).
    /// Off, it costs one `Option` check per access.
    trace: Option<Arc<Mutex<Trace>>>,
    /// Files opened, found missing and directories listed through this root and its clones.
    count: Arc<Count>,
    /// Descriptors kept open between samples (the live root only; see `kept`).
    kept: Option<Arc<Kept>>,
    /// What each file's reads cost, when timing (the benchmark's `files` mode; see `cost`).
    costs: Option<Arc<Mutex<cost::Costs>>>,
}

/// Raises the soft limit on open files to 4096 (or the hard limit, if lower), before any root
/// is made: the live root keeps up to a quarter of it open (see `kept`), and a distribution's
/// default soft limit of 1024 exists for `select()`, which perftop does not use.
pub fn raise_open_files_limit() {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let now = getrlimit(Resource::Nofile);
    let want = now.maximum.unwrap_or(u64::MAX).min(4096);
    if now.current.is_some_and(|c| c < want) {
        let raised = Rlimit {
            current: Some(want),
            maximum: now.maximum,
        };
        // Refused (a container's seccomp): keep the lower limit, and fewer kept files.
        let _ = setrlimit(Resource::Nofile, raised);
    }
}

/// Writes perftop made to kernel files (tweaks, undo, rollback) in this process.
static WRITES: AtomicU64 = AtomicU64::new(0);

/// Counts one write to a kernel file: readers that read a tweakable file in turns read it
/// on their next sample instead (so a tweak shows on the next frame on any host).
pub fn note_write() {
    WRITES.fetch_add(1, Ordering::Relaxed);
}

/// Writes noted so far (see `note_write`).
pub fn writes() -> u64 {
    WRITES.load(Ordering::Relaxed)
}

impl Default for Root {
    fn default() -> Self {
        Root::new("/")
    }
}

impl Root {
    pub fn new(base: impl Into<PathBuf>) -> Root {
        let base = base.into();
        let live = base == Path::new("/");
        Root {
            base,
            trace: None,
            count: Arc::default(),
            kept: live.then(|| Arc::new(Kept::new())),
            costs: None,
        }
    }

    /// The same root keeping at most `cap` descriptors open between reads (0: none). The live
    /// root keeps them already; tests turn it on for a tree whose files they rewrite in place.
    pub fn keeping_files(mut self, cap: usize) -> Root {
        self.kept = (cap > 0).then(|| Arc::new(Kept::with_cap(cap)));
        self
    }

    /// Descriptors kept open now.
    pub fn kept_files(&self) -> usize {
        self.kept.as_ref().map_or(0, |k| k.len())
    }

    /// A sample starts: kept descriptors unread for a while are closed (see `kept`).
    pub fn next_sample(&self) {
        if let Some(k) = &self.kept {
            k.next_sample();
        }
    }

    /// The same root, recording every access into `trace` (see `Trace`).
    pub fn traced(&self, trace: Arc<Mutex<Trace>>) -> Root {
        Root {
            base: self.base.clone(),
            trace: Some(trace),
            count: self.count.clone(),
            kept: self.kept.clone(),
            costs: self.costs.clone(),
        }
    }

    /// The same root, adding the reading thread's CPU time for every file read into `costs`.
    pub fn timed(&self, costs: Arc<Mutex<cost::Costs>>) -> Root {
        Root {
            costs: Some(costs),
            ..self.clone()
        }
    }

    /// Files opened and directories listed so far through this root and its clones.
    pub fn opened(&self) -> Opened {
        Opened {
            files: self.count.opened.load(Ordering::Relaxed),
            reread: self.count.reread.load(Ordering::Relaxed),
            missing: self.count.missing.load(Ordering::Relaxed),
            lookups: self.count.listed.load(Ordering::Relaxed),
        }
    }

    fn listed(&self) {
        self.count.listed.fetch_add(1, Ordering::Relaxed);
    }

    /// Records one access when tracing. A poisoned lock means a reader thread panicked, which
    /// is resumed by `par_map` anyway: the trace just keeps what it had.
    fn note(&self, f: impl FnOnce(&mut Trace)) {
        if let Some(t) = &self.trace {
            if let Ok(mut t) = t.lock() {
                f(&mut t);
            }
        }
    }

    pub fn base(&self) -> &Path {
        &self.base
    }

    /// True when this root is the running system (so clocks and our own process are meaningful).
    pub fn is_live(&self) -> bool {
        self.base == Path::new("/")
    }

    /// Absolute path of `rel` (a path like `proc/stat`, no leading slash) under the root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.base.join(rel.trim_start_matches('/'))
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.listed();
        let yes = self.path(rel).exists();
        if yes {
            self.note(|t| t.existing(rel));
        }
        yes
    }

    /// True while process `pid` is there (a zombie too). On the running system a
    /// `kill(pid, 0)`: no file and no path walk, ~0.3 µs where reading its `stat` costs ~12 µs
    /// after a sample's sleep; elsewhere its `proc/PID` directory.
    pub fn pid_exists(&self, pid: u32) -> bool {
        if !self.is_live() {
            return self.exists(&format!("proc/{pid}"));
        }
        let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        // EPERM: there, another user's (perftop without root).
        !matches!(
            rustix::process::test_kill_process(pid),
            Err(rustix::io::Errno::SRCH)
        )
    }

    pub fn is_dir(&self, rel: &str) -> bool {
        self.listed();
        let yes = self.path(rel).is_dir();
        if yes {
            self.note(|t| t.dir(rel));
        }
        yes
    }

    /// Reads the file `dir/name` (`name` may be empty: then `dir` is the file) into `buf`,
    /// replacing what it held. `Ok(true)` means the file was cut at `MAX_FILE_BYTES`; what was
    /// read is still in `buf`.
    pub fn read_into(&self, dir: &str, name: &str, buf: &mut ReadBuf) -> Result<bool, ReadError> {
        self.read_into_max(dir, name, buf, MAX_FILE_BYTES)
    }

    /// `read_into` with a lower cap than `MAX_FILE_BYTES`: what a reader will parse of the
    /// file, so a huge or garbage table costs a bounded amount of memory and time.
    pub fn read_into_max(
        &self,
        dir: &str,
        name: &str,
        buf: &mut ReadBuf,
        max: u64,
    ) -> Result<bool, ReadError> {
        self.read_into_every(dir, name, buf, max, Every::Sample)
    }

    /// `read_into_max` of a file its reader reads `every` so often: on the live root a file
    /// read on a schedule (a setting) keeps its descriptor between reads (see `kept`).
    pub fn read_into_every(
        &self,
        dir: &str,
        name: &str,
        buf: &mut ReadBuf,
        max: u64,
        every: Every,
    ) -> Result<bool, ReadError> {
        self.timed_read(dir, name, buf, max, every, None)
    }

    /// `read_into_max` that stops as soon as `until` says the bytes read so far hold all the
    /// caller needs (asked after each read; records come whole from a procfs table): the front
    /// of a table whose walk costs the kernel more the further it goes (`/proc/net/tcp` lists
    /// the listeners first, then walks every bucket of the established hash).
    pub fn read_into_until(
        &self,
        dir: &str,
        name: &str,
        buf: &mut ReadBuf,
        max: u64,
        until: &dyn Fn(&[u8]) -> bool,
    ) -> Result<bool, ReadError> {
        self.timed_read(dir, name, buf, max, Every::Sample, Some(until))
    }

    fn timed_read(
        &self,
        dir: &str,
        name: &str,
        buf: &mut ReadBuf,
        max: u64,
        every: Every,
        until: Until,
    ) -> Result<bool, ReadError> {
        let Some(costs) = &self.costs else {
            return self.read_whole(dir, name, buf, max, every, until);
        };
        let t = cost::thread_cpu();
        let read = self.read_whole(dir, name, buf, max, every, until);
        let spent = cost::thread_cpu().saturating_sub(t);
        if let Ok(mut c) = costs.lock() {
            c.add(buf.path.as_bytes(), spent);
        }
        read
    }

    fn read_whole(
        &self,
        dir: &str,
        name: &str,
        buf: &mut ReadBuf,
        max: u64,
        every: Every,
        until: Until,
    ) -> Result<bool, ReadError> {
        let max = max.min(MAX_FILE_BYTES);
        buf.len = 0;
        // Built in the reused buffer rather than with `Path::join`, which allocates.
        let path = &mut buf.path;
        path.clear();
        path.push(self.base.as_os_str());
        let dir = dir.trim_start_matches('/');
        if !path.is_empty() && !path.as_bytes().ends_with(b"/") {
            path.push("/");
        }
        path.push(dir);
        if !name.is_empty() {
            path.push("/");
            path.push(name);
        }
        let data = &mut buf.data;
        if data.len() < FIRST_READ {
            data.resize(FIRST_READ, 0);
        }
        let cap = max as usize + 1;
        let ends = reads_end(dir, name);
        if let Some(kept) = &self.kept {
            if let Some(file) = kept.take(&buf.path) {
                match fill(&file, data, cap, Fresh::Kept, ends, until) {
                    Ok(len) if len > 0 => {
                        self.count.opened.fetch_add(1, Ordering::Relaxed);
                        self.count.reread.fetch_add(1, Ordering::Relaxed);
                        self.note(|t| t.file(dir, name));
                        kept.keep(&buf.path, file, every);
                        buf.len = len.min(max as usize);
                        return Ok(len as u64 > max);
                    }
                    // Gone (ESRCH, ENODEV), refused now, or empty: ask the path what is there.
                    Ok(_) => kept.drop_file(&buf.path, false),
                    Err(Stop::Io(e)) => {
                        kept.drop_file(&buf.path, e.raw_os_error() == Some(ESPIPE));
                    }
                    Err(Stop::Not(_)) => kept.drop_file(&buf.path, true),
                }
            }
        }
        let opened = open_nonblocking(Path::new(&buf.path));
        self.count.opened.fetch_add(1, Ordering::Relaxed);
        // Unreadable files are traced too: a capture lists them as skipped.
        if self.trace.is_some()
            && !matches!(&opened, Err(e) if e.kind() == std::io::ErrorKind::NotFound)
        {
            self.note(|t| t.file(dir, name));
        }
        let file = match opened {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.count.missing.fetch_add(1, Ordering::Relaxed);
                return Err(ReadError::Missing);
            }
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                return Err(ReadError::Denied)
            }
            Err(e) => return Err(ReadError::Io(e.to_string())),
        };
        let len = match fill(&file, data, cap, Fresh::Opened, ends, until) {
            Ok(len) => len,
            Err(Stop::Not(e)) => return Err(e),
            // EISDIR comes from read(), not open(), on Linux.
            Err(Stop::Io(e)) if e.raw_os_error() == Some(EISDIR) => {
                return Err(ReadError::NotAFile)
            }
            // procfs checks ptrace access at read time (`/proc/PID/io`).
            Err(Stop::Io(e)) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                return Err(ReadError::Denied)
            }
            Err(Stop::Io(e)) => return Err(ReadError::Io(e.to_string())),
        };
        let too_large = len as u64 > max;
        buf.len = len.min(max as usize);
        if let Some(kept) = &self.kept {
            // Only a whole, non-empty file: an empty one (nothing to tell it from a
            // vanished process's) is opened by path every time.
            // Only the kernel's own files: a regular file (`etc/tuned/active_profile`) can
            // be replaced by a rename, and its old descriptor would read the old file.
            let kernel = dir.starts_with("proc/") || dir.starts_with("sys/");
            if len > 0 && !too_large && kernel && kept.keepable(&buf.path) {
                kept.keep(&buf.path, file, every);
            }
        }
        Ok(too_large)
    }

    /// Reads a file as text (invalid UTF-8 replaced). Oversized files come back truncated
    /// together with `TooLarge` so callers can still use what was read.
    pub fn read_lossy(&self, rel: &str) -> (Option<String>, Option<ReadError>) {
        let mut buf = ReadBuf::default();
        match self.read_into(rel, "", &mut buf) {
            Ok(too_large) => {
                let mut data = buf.data;
                data.truncate(buf.len);
                let text = match String::from_utf8(data) {
                    Ok(s) => s,
                    Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
                };
                (
                    Some(text),
                    too_large.then_some(ReadError::TooLarge(MAX_FILE_BYTES)),
                )
            }
            Err(e) => (None, Some(e)),
        }
    }

    /// Whole file or an error; an oversized file is an error here.
    pub fn read(&self, rel: &str) -> Result<String, ReadError> {
        match self.read_lossy(rel) {
            (Some(s), None) => Ok(s),
            (_, Some(e)) => Err(e),
            (None, None) => Err(ReadError::Missing),
        }
    }

    /// The file's first line, trimmed; `None` when missing, unreadable or empty.
    pub fn read_line(&self, rel: &str) -> Option<String> {
        let s = self.read(rel).ok()?;
        let line = s.lines().next()?.trim();
        (!line.is_empty()).then(|| line.to_string())
    }

    pub fn read_u64(&self, rel: &str) -> Option<u64> {
        self.read_line(rel)?.parse().ok()
    }

    pub fn read_i64(&self, rel: &str) -> Option<i64> {
        self.read_line(rel)?.parse().ok()
    }

    /// Names in a directory, sorted; empty when the directory is missing.
    pub fn list_dir(&self, rel: &str) -> Vec<String> {
        self.listed();
        let Ok(rd) = fs::read_dir(self.path(rel)) else {
            return Vec::new();
        };
        if self.trace.is_some() {
            return self.list_dir_traced(rel, rd);
        }
        let mut names: Vec<String> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        names
    }

    /// The subdirectories of a directory (by the entry's type, symlinks not followed), sorted;
    /// empty when it is missing. One `getdents` walk, no `stat` per entry: a cgroup directory
    /// holds dozens of control files beside its few child groups.
    pub fn subdirs(&self, rel: &str) -> Vec<String> {
        self.listed();
        let Ok(rd) = fs::read_dir(self.path(rel)) else {
            return Vec::new();
        };
        let mut dirs: Vec<String> = rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        dirs.sort();
        self.note(|t| t.listed(rel, &dirs));
        dirs
    }

    /// `list_dir` that also records the directory and its subdirectories: readers count
    /// entries they never read from (a NIC's `tx-N` queues), so a capture recreates them.
    fn list_dir_traced(&self, rel: &str, rd: fs::ReadDir) -> Vec<String> {
        let mut names = Vec::new();
        let mut subdirs = Vec::new();
        for e in rd.filter_map(|e| e.ok()) {
            let Ok(name) = e.file_name().into_string() else {
                continue;
            };
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                subdirs.push(name.clone());
            }
            names.push(name);
        }
        names.sort();
        self.note(|t| t.listed(rel, &subdirs));
        names
    }

    /// Entries `<prefix><number>` of a directory, as numbers, ascending (e.g. `cpu12`, `node3`).
    pub fn numbered_entries(&self, rel: &str, prefix: &str) -> Vec<u32> {
        let mut ids: Vec<u32> = self
            .list_dir(rel)
            .iter()
            .filter_map(|n| n.strip_prefix(prefix)?.parse().ok())
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Target file name of a symlink (e.g. the driver behind `sys/class/net/eth0/device/driver`).
    pub fn link_name(&self, rel: &str) -> Option<String> {
        self.listed();
        let target = fs::read_link(self.path(rel)).ok()?;
        self.note(|t| t.link(rel));
        Some(target.file_name()?.to_string_lossy().into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_directory_and_values() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = Root::new(dir.path());
        fs::create_dir_all(dir.path().join("proc/x")).expect("mkdir");
        fs::write(dir.path().join("proc/n"), "42\n").expect("write");
        fs::write(dir.path().join("proc/bad"), "4x2\n").expect("write");
        fs::write(dir.path().join("proc/empty"), "").expect("write");
        assert_eq!(root.read("proc/nope"), Err(ReadError::Missing));
        assert_eq!(root.read("proc/x"), Err(ReadError::NotAFile));
        assert_eq!(root.read_u64("proc/n"), Some(42));
        assert_eq!(root.read_u64("proc/bad"), None);
        assert_eq!(root.read_line("proc/empty"), None);
        assert!(root.list_dir("nothing/here").is_empty());
    }
}
