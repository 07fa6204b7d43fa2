//! Command lines of the processes a sample keeps, read off the sampling thread.
//!
//! Why a thread: the kernel builds `/proc/PID/cmdline` from the process's own memory, under its
//! mm lock (`access_remote_vm`), and a process stuck in a page fault or an mmap on a dead NFS
//! server holds that lock for as long as it is stuck: a read can block for minutes, and no
//! sample may wait on it. So on the live host a sample asks a worker for the command lines it
//! has not seen yet and takes what has arrived, never waiting: a new process shows its command
//! line from the sample after it is first kept. Blocked (D) processes and kernel threads are
//! never asked (the first are the likely lock holders, the second have none). A worker stuck on
//! one process is said in the sample's problems, and no more are asked of it.
//!
//! A reused pid is a new process: lines are keyed by pid and start time, and the worker reads
//! `stat` after `cmdline` and drops a line whose process started at another time.
//!
//! A `--root` tree (fixtures) is read in the sample itself: its files cannot block, and tests
//! then see the line in the first sample it is kept in.

use crate::root::{ReadBuf, Root};
use foldhash::HashMap;
use std::collections::HashSet;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Longest command line kept (bytes): enough to tell two JVMs apart, bounded in recordings.
pub const MAX_LEN: usize = 256;
/// Requests waiting for the worker at most.
const QUEUE: usize = 64;
/// A request unanswered this long means the worker is stuck in the kernel.
const STUCK_AFTER: Duration = Duration::from_secs(5);
/// The worker's stack (Rust's default is 2 MiB).
const WORKER_STACK: usize = 128 * 1024;
/// The first sample waits at most this long for its command lines.
const FIRST_WAIT: Duration = Duration::from_millis(200);

/// `cmdline`'s bytes as one line: arguments parted by NUL become spaces, control characters
/// are escaped, and the line is cut at `MAX_LEN` bytes on a character boundary. `None` when
/// empty (a kernel thread, a zombie, a process that cleared its arguments).
pub fn parse(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len().min(MAX_LEN));
    // Each character's piece is built in place (a `String` per character was ~260
    // allocations a sample when a fixture root's command lines are read every sample).
    let mut piece = [0u8; 4];
    for c in text.trim_end_matches('\0').chars() {
        let (len, escaped) = match c {
            '\0' => (1, None),
            c if c.is_control() => {
                let e = c.escape_default();
                (e.len(), Some(e))
            }
            c => (c.len_utf8(), None),
        };
        if out.len() + len > MAX_LEN {
            break;
        }
        match (c, escaped) {
            ('\0', _) => out.push(' '),
            (_, Some(e)) => out.extend(e),
            (c, None) => out.push_str(c.encode_utf8(&mut piece)),
        }
    }
    let line = out.trim();
    (!line.is_empty()).then(|| line.to_string())
}

/// Who a line belongs to: pid and start time (clock ticks after boot).
type Key = (u32, u64);

#[derive(Default)]
struct Shared {
    /// Finished reads (`None`: nothing to show).
    done: HashMap<Key, Option<String>>,
    /// What the worker is reading now, and since when.
    busy: Option<(Key, Instant)>,
}

/// The sampler's end: asks for lines and takes those that have arrived.
#[derive(Default)]
pub struct Cmdlines {
    shared: Arc<Mutex<Shared>>,
    ask: Option<SyncSender<Key>>,
    asked: HashSet<Key>,
    /// The worker could not be started (said once per sample).
    failed: Option<String>,
    /// The first pass has waited for its lines (`settle_first`).
    settled: bool,
    /// Requests waiting at most (0: `QUEUE`); the full list asks for every process's.
    queue: usize,
}

impl std::fmt::Debug for Cmdlines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cmdlines")
            .field("asked", &self.asked.len())
            .field("failed", &self.failed)
            .finish()
    }
}

fn lock(m: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Cmdlines {
    /// A reader whose worker takes up to `queue` waiting requests (the full process list asks
    /// for thousands at once, each answered once per process).
    pub fn with_queue(queue: usize) -> Cmdlines {
        Cmdlines {
            queue,
            ..Cmdlines::default()
        }
    }

    /// The command line of `key` if known now; on the live host asks the worker for it
    /// otherwise (the answer comes in a later sample). `root` is read in place when it is not
    /// the live host.
    pub fn get(&mut self, root: &Root, key: Key, state: char) -> Option<String> {
        if !root.is_live() {
            let mut buf = ReadBuf::default();
            return read(root, key, &mut buf).flatten();
        }
        if let Some(line) = lock(&self.shared).done.get(&key) {
            return line.clone();
        }
        if state == 'D' || state == 'Z' || self.asked.contains(&key) {
            return None;
        }
        if self.ask.is_none() && self.failed.is_none() {
            self.start(root);
        }
        let sent = match &self.ask {
            Some(tx) => tx.try_send(key),
            None => return None,
        };
        match sent {
            Ok(()) => {
                self.asked.insert(key);
            }
            // Full: asked again next sample. Disconnected: the worker ended (it panicked).
            Err(TrySendError::Full(_)) => {}
            Err(TrySendError::Disconnected(_)) => {
                self.ask = None;
                self.failed = Some("the command line reader stopped".into());
            }
        }
        None
    }

    /// Waits up to `FIRST_WAIT` for the lines asked so far, once: so a `snapshot` or a first
    /// report names the commands (later samples never wait). False when it did not wait
    /// (done before, or nothing asked).
    pub fn settle_first(&mut self) -> bool {
        if std::mem::replace(&mut self.settled, true) || self.ask.is_none() {
            return false;
        }
        let until = Instant::now() + FIRST_WAIT;
        while Instant::now() < until {
            let s = lock(&self.shared);
            if s.busy.is_none() && self.asked.iter().all(|k| s.done.contains_key(k)) {
                break;
            }
            drop(s);
            std::thread::sleep(Duration::from_millis(2));
        }
        true
    }

    /// Forgets the lines of processes not in `alive` (they exited or were not kept).
    pub fn retain(&mut self, alive: impl Fn(&Key) -> bool) {
        lock(&self.shared).done.retain(|k, _| alive(k));
        self.asked.retain(|k| alive(k));
    }

    /// Why command lines are not coming, if they are not: the worker could not start, or is
    /// stuck in the kernel reading one process's memory.
    pub fn trouble(&self) -> Option<String> {
        if let Some(why) = &self.failed {
            return Some(why.clone());
        }
        let (key, since) = lock(&self.shared).busy?;
        let waited = since.elapsed();
        (waited >= STUCK_AFTER).then(|| {
            format!(
                "reading pid {}'s command line has not returned for {} s (its memory is locked: \
                 likely stuck in a fault); no more are read",
                key.0,
                waited.as_secs()
            )
        })
    }

    fn start(&mut self, root: &Root) {
        let queue = if self.queue == 0 { QUEUE } else { self.queue };
        let (tx, rx) = sync_channel::<Key>(queue);
        let shared = self.shared.clone();
        let root = root.clone();
        // A small stack: the worker reads into a heap buffer and parses one line, and every
        // byte of stack counts in the host's Committed_AS that perftop itself reports.
        let spawned = std::thread::Builder::new()
            .name("perftop-cmdline".into())
            .stack_size(WORKER_STACK)
            .spawn(move || worker(&root, &rx, &shared));
        match spawned {
            Ok(_) => self.ask = Some(tx),
            Err(e) => self.failed = Some(format!("no command line reader thread: {e}")),
        }
    }
}

/// Answers requests until the sampler's end is dropped.
fn worker(root: &Root, rx: &Receiver<Key>, shared: &Mutex<Shared>) {
    let mut buf = ReadBuf::default();
    while let Ok(key) = rx.recv() {
        lock(shared).busy = Some((key, Instant::now()));
        let line = read(root, key, &mut buf);
        let mut s = lock(shared);
        s.busy = None;
        if let Some(line) = line {
            s.done.insert(key, line);
        }
    }
}

/// `Some(line)` when `key`'s process was read (the line may be empty: `None`), `None` when it
/// is gone or its pid now belongs to another process.
fn read(root: &Root, key: Key, buf: &mut ReadBuf) -> Option<Option<String>> {
    let dir = format!("proc/{}", key.0);
    root.read_into_max(&dir, "cmdline", buf, MAX_LEN as u64 * 4)
        .ok()?;
    let line = parse(buf.bytes());
    // Read after the line: a process that exited and whose pid was reused in between shows
    // another start time, and its line is not this one's.
    root.read_into(&dir, "stat", buf).ok()?;
    let stat = super::parse_stat(&buf.text())?;
    (stat.start == key.1).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::{parse, read};
    use crate::root::{ReadBuf, Root};

    /// A pid whose process started at another time than the one asked about (reused) gives
    /// no line; the same process gives its own; a vanished one nothing.
    #[test]
    fn a_reused_pid_is_not_the_process_asked_about() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("proc/42");
        std::fs::create_dir_all(&p).expect("mkdir");
        std::fs::write(p.join("cmdline"), b"postgres\0-D\0/data\0").expect("cmdline");
        let mut stat = String::from("42 (postgres) S 1 42 42 0 -1 4194560");
        stat.push_str(&" 0".repeat(8));
        stat.push_str(" 20 0 1 0 5000 1000 100");
        std::fs::write(p.join("stat"), &stat).expect("stat");
        let root = Root::new(dir.path());
        let mut buf = ReadBuf::default();
        assert_eq!(
            read(&root, (42, 5000), &mut buf),
            Some(Some("postgres -D /data".into()))
        );
        assert_eq!(read(&root, (42, 4000), &mut buf), None, "pid reused");
        assert_eq!(read(&root, (43, 5000), &mut buf), None, "gone");
    }

    #[test]
    fn arguments_control_characters_and_length() {
        assert_eq!(parse(b"").as_deref(), None);
        assert_eq!(parse(b"\0\0").as_deref(), None);
        assert_eq!(
            parse(b"java\0-Xmx4g\0-jar\0app.jar\0").as_deref(),
            Some("java -Xmx4g -jar app.jar")
        );
        assert_eq!(
            parse(b"a\nb\x1b[2J\0c").as_deref(),
            Some("a\\nb\\u{1b}[2J c")
        );
        let long = "x".repeat(1000);
        assert_eq!(
            parse(long.as_bytes()).map(|l| l.len()),
            Some(super::MAX_LEN)
        );
        // A cut never splits a character.
        let wide = "é".repeat(200);
        let cut = parse(wide.as_bytes()).expect("line");
        assert!(cut.len() <= super::MAX_LEN && cut.chars().all(|c| c == 'é'));
        assert_eq!(parse(b"\xff\xfeok").as_deref(), Some("\u{fffd}\u{fffd}ok"));
    }
}
