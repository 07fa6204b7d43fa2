//! Readers: one module per kernel file family, all reading through one `Root`, producing a `Sample`.
//!
//! The sampling path only reads. A file that is absent is "unknown" and silent (no cpufreq in a
//! VM is normal); a file that exists but cannot be read or parsed is recorded in
//! `Sample::problems` so `snapshot` can say what it could not read.
//!
//! What a reader caches between samples, and how stale it can get:
//! - files that do not change while the system runs (names, topology, hardware limits, kernel
//!   release, a directory's numbered entries, which `sys/block` names are whole disks, an IRQ's
//!   NUMA node) are read once and again every `STATIC_REFRESH_SAMPLES` samples;
//! - what changes only when a CPU goes on- or offline (`affected_cpus`, the `cpuN` and policy
//!   listings, a CPU's idle states) is dropped as soon as `online` or `present`, read every
//!   sample, changes;
//! - everything a tweak or the kernel changes at run time (governor, EPP, frequency limits,
//!   sysctls, THP, huge page pools, IRQ affinity, scheduler, counters, gauges) is read every
//!   sample.

pub mod cpu;
pub mod disk;
pub mod host;
pub mod memory;
pub mod net;
pub mod parse;

use crate::cpulist::CpuList;
use crate::root::{ReadBuf, ReadError, Root};
use crate::sample::{Problem, Sample, SAMPLE_VERSION};
use std::borrow::Cow;
use std::collections::HashMap;

/// Files that do not change while the system runs (names, topology, hardware limits) are read
/// once and re-read after this many samples, in case a driver was loaded or a CPU hot-added.
const STATIC_REFRESH_SAMPLES: u32 = 300;

/// Below this many items per-CPU files are read on one thread (starting threads costs more).
const PARALLEL_MIN_ITEMS: usize = 256;
/// At most this many reader threads on a big host.
const MAX_READ_THREADS: usize = 8;

/// Cached static files and directory listings of one reader thread, and its read buffers.
#[derive(Default)]
pub struct Shard {
    statics: HashMap<String, Option<String>>,
    static_dirs: HashMap<String, Vec<u32>>,
    buf: ReadBuf,
}

/// Typed caches of the main reader thread (see the module comment for their lifetimes).
#[derive(Default)]
pub(crate) struct Cache {
    /// Per CPU id: topology and idle state names.
    pub(crate) cpus: HashMap<u32, cpu::CpuStatic>,
    /// Per cpufreq policy directory: names, hardware limits, `affected_cpus`.
    pub(crate) policies: HashMap<String, cpu::PolicyStatic>,
    /// `online` and `present` as last read; a change drops what depends on the CPU set.
    pub(crate) hotplug: Option<(Option<CpuList>, Option<CpuList>)>,
    /// `Root::is_dir` answers for paths that exist for the system's lifetime (`sys/block/X`).
    pub(crate) is_dir: HashMap<String, bool>,
    /// `Root::list_dir` of directories whose entries are fixed (huge page sizes).
    list_dir: HashMap<String, Vec<String>>,
    /// Threads `par_map` may use. `available_parallelism` reads five cgroup files each call.
    threads: Option<usize>,
}

/// Reads samples from one root, caching what does not change between samples.
pub struct Reader {
    probe: Probe,
    samples_read: u32,
    pub(crate) ksoftirqd_pids: Option<Vec<(u32, u32)>>,
    pub(crate) cpuinfo: Option<(Option<String>, bool)>,
}

impl Reader {
    pub fn new(root: Root) -> Reader {
        Reader {
            probe: Probe::new(root),
            samples_read: 0,
            ksoftirqd_pids: None,
            cpuinfo: None,
        }
    }

    pub fn root(&self) -> &Root {
        &self.probe.root
    }

    /// Reads one complete sample. Never fails: what could not be read is unknown and listed.
    pub fn sample(&mut self) -> Sample {
        let probe = &mut self.probe;
        if self.samples_read % STATIC_REFRESH_SAMPLES == 0 {
            probe.statics.clear();
            probe.static_dirs.clear();
            probe.shards.clear();
            probe.cache = Cache::default();
            self.ksoftirqd_pids = None;
        }
        self.samples_read = self.samples_read.wrapping_add(1);
        probe.problems.clear();
        let time = host::read_time(probe);
        let host = host::read_host(probe, &mut self.cpuinfo);
        let nodes = memory::read_nodes(probe);
        let mut cpu = cpu::read_cpu(probe, &nodes);
        cpu.ksoftirqd = cpu::read_ksoftirqd(probe, &mut self.ksoftirqd_pids);
        let memory = memory::read_memory(probe);
        let disks = disk::read_disks(probe);
        let net = net::read_net(probe, cpu.online.as_ref());
        Sample {
            version: SAMPLE_VERSION,
            time,
            host,
            cpu,
            memory,
            nodes,
            disks,
            net,
            problems: std::mem::take(&mut probe.problems),
        }
    }
}

/// `dir/name` as a problem's path (`name` empty: `dir` is the file).
fn join(dir: &str, name: &str) -> String {
    if name.is_empty() {
        dir.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// First line of a file's text, trimmed; `None` when empty.
fn first_line(text: &str) -> Option<&str> {
    let line = text.lines().next().unwrap_or("").trim();
    (!line.is_empty()).then_some(line)
}

fn parse_u64(line: &str) -> Result<u64, String> {
    line.parse()
        .map_err(|_| format!("not a number: {:?}", parse::clip(line)))
}

fn parse_i64(line: &str) -> Result<i64, String> {
    line.parse()
        .map_err(|_| format!("not a number: {:?}", parse::clip(line)))
}

/// `0`/`1` (or `N`/`Y`).
fn parse_flag(line: &str) -> Result<bool, String> {
    match line {
        "0" | "N" | "n" => Ok(false),
        "1" | "Y" | "y" => Ok(true),
        other => Err(format!("not a 0/1 flag: {:?}", parse::clip(other))),
    }
}

/// One sample's view of the root: reads files and remembers what went wrong. A `Reader` keeps
/// its probe (caches and buffers) from one sample to the next.
pub struct Probe {
    pub root: Root,
    pub problems: Vec<Problem>,
    statics: HashMap<String, Option<String>>,
    static_dirs: HashMap<String, Vec<u32>>,
    /// Per-thread caches for `par_map`, kept across samples (chunking is deterministic).
    shards: Vec<Shard>,
    pub(crate) cache: Cache,
    /// Buffer for small files (one value each).
    buf: ReadBuf,
    /// Buffer for whole tables (`with_text`), kept apart so a table can be parsed while small
    /// files are read.
    big: ReadBuf,
}

impl Probe {
    pub fn new(root: Root) -> Probe {
        Probe {
            root,
            problems: Vec::new(),
            statics: HashMap::new(),
            static_dirs: HashMap::new(),
            shards: Vec::new(),
            cache: Cache::default(),
            buf: ReadBuf::default(),
            big: ReadBuf::default(),
        }
    }

    /// `f` over `items`, on several threads when there are many (a 4096-CPU host has ~100k
    /// per-CPU files per sample; on one thread the syscalls alone take longer than a frame).
    /// Results keep the order of `items`; problems and cache entries are merged back.
    pub fn par_map<I: Send, T: Send>(
        &mut self,
        items: Vec<I>,
        f: impl Fn(&mut Probe, I) -> T + Sync,
    ) -> Vec<T> {
        if items.len() < PARALLEL_MIN_ITEMS {
            return items.into_iter().map(|i| f(self, i)).collect();
        }
        let threads = *self.cache.threads.get_or_insert_with(|| {
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(MAX_READ_THREADS)
        });
        if threads < 2 {
            return items.into_iter().map(|i| f(self, i)).collect();
        }
        let chunk = items.len().div_ceil(threads);
        let mut rest = items.into_iter();
        let mut parts: Vec<Vec<I>> = Vec::with_capacity(threads);
        loop {
            let part: Vec<I> = rest.by_ref().take(chunk).collect();
            if part.is_empty() {
                break;
            }
            parts.push(part);
        }
        self.shards
            .resize_with(self.shards.len().max(parts.len()), Shard::default);
        let shards: Vec<Shard> = self.shards[..parts.len()]
            .iter_mut()
            .map(std::mem::take)
            .collect();
        let f = &f;
        let root = &self.root;
        let results = std::thread::scope(|scope| {
            let handles: Vec<_> = parts
                .into_iter()
                .zip(shards)
                .map(|(part, shard)| {
                    scope.spawn(move || {
                        let mut p = Probe {
                            root: root.clone(),
                            problems: Vec::new(),
                            statics: shard.statics,
                            static_dirs: shard.static_dirs,
                            shards: Vec::new(),
                            cache: Cache::default(),
                            buf: shard.buf,
                            big: ReadBuf::default(),
                        };
                        let out: Vec<T> = part.into_iter().map(|i| f(&mut p, i)).collect();
                        let shard = Shard {
                            statics: p.statics,
                            static_dirs: p.static_dirs,
                            buf: p.buf,
                        };
                        (out, p.problems, shard)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
        });
        let mut all = Vec::new();
        for (i, r) in results.into_iter().enumerate() {
            match r {
                Ok((out, problems, shard)) => {
                    all.extend(out);
                    self.problems.extend(problems);
                    self.shards[i] = shard;
                }
                // A reader thread only panics on a bug; surface it like any other panic.
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        all
    }

    pub fn note(&mut self, rel: &str, what: impl Into<String>) {
        self.problems.push(Problem {
            path: rel.to_string(),
            what: what.into(),
        });
    }

    /// Reads `dir/name` into `buf`: true when there is something to look at. Absent is silent
    /// unless `required`; unreadable is noted; oversized is noted and its first
    /// `MAX_FILE_BYTES` are still there.
    fn fill(
        root: &Root,
        problems: &mut Vec<Problem>,
        buf: &mut ReadBuf,
        dir: &str,
        name: &str,
        required: bool,
    ) -> bool {
        let (ok, what) = match root.read_into(dir, name, buf) {
            Ok(false) => return true,
            Ok(true) => (true, ReadError::TooLarge.to_string()),
            Err(ReadError::Missing) if !required => return false,
            Err(e) => (false, e.to_string()),
        };
        problems.push(Problem {
            path: join(dir, name),
            what,
        });
        ok
    }

    /// Whole file; `None` if absent (silently) or unreadable (noted). Oversized files are noted
    /// and their first `MAX_FILE_BYTES` are still returned.
    pub fn text(&mut self, rel: &str) -> Option<String> {
        Self::fill(
            &self.root,
            &mut self.problems,
            &mut self.buf,
            rel,
            "",
            false,
        )
        .then(|| self.buf.text().into_owned())
    }

    /// Like `text`, but a missing file is a problem too (files every Linux has).
    pub fn required(&mut self, rel: &str) -> Option<String> {
        Self::fill(&self.root, &mut self.problems, &mut self.buf, rel, "", true)
            .then(|| self.buf.text().into_owned())
    }

    /// `f` over a whole file's text without copying it into a `String` (tables that are
    /// megabytes on a big host). `None` as `text` (or `required`) would give.
    pub fn with_text<R>(
        &mut self,
        rel: &str,
        required: bool,
        f: impl FnOnce(&mut Probe, &str) -> R,
    ) -> Option<R> {
        let mut buf = std::mem::take(&mut self.big);
        let ok = Self::fill(&self.root, &mut self.problems, &mut buf, rel, "", required);
        let out = ok.then(|| f(self, &buf.text()));
        self.big = buf;
        out
    }

    /// First line of `dir/name`, parsed by `parse`; a parse error is noted and unknown.
    fn parsed_in<T>(
        &mut self,
        dir: &str,
        name: &str,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<T> {
        if !Self::fill(
            &self.root,
            &mut self.problems,
            &mut self.buf,
            dir,
            name,
            false,
        ) {
            return None;
        }
        let text = self.buf.text();
        let result = parse(first_line(&text)?);
        match result {
            Ok(v) => Some(v),
            Err(what) => {
                self.note(&join(dir, name), what);
                None
            }
        }
    }

    /// Whole file `dir/name`, borrowed from the read buffer; nothing is noted (for files that
    /// can vanish between listing and reading, like `/proc/PID/stat`).
    pub fn quiet_text(&mut self, dir: &str, name: &str) -> Option<Cow<'_, str>> {
        match self.root.read_into(dir, name, &mut self.buf) {
            Ok(false) => Some(self.buf.text()),
            _ => None,
        }
    }

    /// First line, trimmed, non-empty.
    pub fn line(&mut self, rel: &str) -> Option<String> {
        self.line_in(rel, "")
    }

    /// `line` of `dir/name`, without building the path as a `String` first.
    pub fn line_in(&mut self, dir: &str, name: &str) -> Option<String> {
        self.parsed_in(dir, name, |l| Ok(l.to_string()))
    }

    /// A number file; garbled content is noted and unknown.
    pub fn u64(&mut self, rel: &str) -> Option<u64> {
        self.parsed_in(rel, "", parse_u64)
    }

    pub fn u64_in(&mut self, dir: &str, name: &str) -> Option<u64> {
        self.parsed_in(dir, name, parse_u64)
    }

    pub fn i64(&mut self, rel: &str) -> Option<i64> {
        self.parsed_in(rel, "", parse_i64)
    }

    /// `0`/`1` (or `N`/`Y`) as a boolean.
    pub fn flag(&mut self, rel: &str) -> Option<bool> {
        self.parsed_in(rel, "", parse_flag)
    }

    /// First line of a file that does not change while the system runs; read once per refresh.
    pub fn static_line(&mut self, rel: &str) -> Option<String> {
        if let Some(v) = self.statics.get(rel) {
            return v.clone();
        }
        let v = self.line(rel);
        self.statics.insert(rel.to_string(), v.clone());
        v
    }

    pub fn static_u64(&mut self, rel: &str) -> Option<u64> {
        self.static_line(rel)?.parse().ok()
    }

    /// A static number file whose garbled content is noted every sample (as `i64` would).
    pub fn static_i64(&mut self, rel: &str) -> Option<i64> {
        let line = self.static_line(rel)?;
        match parse_i64(&line) {
            Ok(v) => Some(v),
            Err(what) => {
                self.note(rel, what);
                None
            }
        }
    }

    /// `Root::numbered_entries` of a directory whose entries do not change while the system
    /// runs (a CPU's cpuidle `stateK`); listed once per refresh, like `static_line`. Listing
    /// 4096 cpuidle directories every sample costs ~45 ms.
    pub fn static_entries(&mut self, rel: &str, prefix: &str) -> Vec<u32> {
        let key = format!("{rel}/{prefix}");
        if let Some(v) = self.static_dirs.get(&key) {
            return v.clone();
        }
        let v = self.root.numbered_entries(rel, prefix);
        self.static_dirs.insert(key, v.clone());
        v
    }

    /// Forgets a `static_entries` listing (its directory changed).
    pub fn forget_entries(&mut self, rel: &str, prefix: &str) {
        self.static_dirs.remove(&format!("{rel}/{prefix}"));
    }

    /// `Root::list_dir` of a directory whose entries do not change while the system runs;
    /// listed once per refresh.
    pub fn static_list_dir(&mut self, rel: &str) -> &[String] {
        if !self.cache.list_dir.contains_key(rel) {
            let names = self.root.list_dir(rel);
            self.cache.list_dir.insert(rel.to_string(), names);
        }
        self.cache.list_dir.get(rel).map_or(&[], Vec::as_slice)
    }

    /// `Root::is_dir` of a path that, once it exists, exists until the system changes
    /// hardware (`sys/block/<disk>`): asked once per refresh.
    pub fn static_is_dir(&mut self, rel: &str) -> bool {
        if let Some(&v) = self.cache.is_dir.get(rel) {
            return v;
        }
        let v = self.root.is_dir(rel);
        self.cache.is_dir.insert(rel.to_string(), v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn par_map_keeps_order_and_problems() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("n"), "x\n").expect("write");
        let mut p = Probe::new(Root::new(dir.path()));
        let items: Vec<u32> = (0..1000).collect();
        let out = p.par_map(items, |p, i| {
            if i == 500 {
                let _ = p.u64("n");
            }
            i * 2
        });
        assert_eq!(out, (0..1000).map(|i| i * 2).collect::<Vec<_>>());
        assert_eq!(p.problems.len(), 1);
        assert_eq!(p.problems[0].path, "n");
    }

    #[test]
    fn values_tables_and_problems() {
        let dir = tempfile::tempdir().expect("tempdir");
        let w = |rel: &str, text: &str| std::fs::write(dir.path().join(rel), text).expect("write");
        w("n", " 42 \nrest\n");
        w("neg", "-3\n");
        w("bad", "4x2\n");
        w("flag", "Y\n");
        w("empty", "");
        let big = "x".repeat(100_000) + "\n";
        w("big", &big);
        let mut p = Probe::new(Root::new(dir.path()));
        // A big table first, so the small-file reads after it reuse grown buffers.
        assert_eq!(p.with_text("big", true, |_, t| t.len()), Some(big.len()));
        assert_eq!(p.u64("n"), Some(42));
        assert_eq!(p.u64_in("", "n"), Some(42));
        assert_eq!(p.i64("neg"), Some(-3));
        assert_eq!(p.flag("flag"), Some(true));
        assert_eq!(p.line("empty"), None);
        assert_eq!(p.text("n").as_deref(), Some(" 42 \nrest\n"));
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(p.u64("bad"), None);
        assert_eq!(p.u64("missing"), None);
        assert_eq!(p.with_text("missing", false, |_, t| t.len()), None);
        assert_eq!(p.required("missing"), None);
        let got: Vec<(&str, &str)> = p
            .problems
            .iter()
            .map(|x| (x.path.as_str(), x.what.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![("bad", "not a number: \"4x2\""), ("missing", "missing")]
        );
    }
}
