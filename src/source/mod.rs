//! Readers: one module per kernel file family, all reading through one `Root`, producing a `Sample`.
//!
//! The sampling path only reads. A file that is absent is "unknown" and silent (no cpufreq in a
//! VM is normal); a file that exists but cannot be read or parsed is recorded in
//! `Sample::problems` so `snapshot` can say what it could not read.

pub mod cpu;
pub mod disk;
pub mod host;
pub mod memory;
pub mod net;
pub mod parse;

use crate::root::{ReadError, Root};
use crate::sample::{Problem, Sample, SAMPLE_VERSION};
use std::collections::HashMap;

/// Files that do not change while the system runs (names, topology, hardware limits) are read
/// once and re-read after this many samples, in case a driver was loaded or a CPU hot-added.
const STATIC_REFRESH_SAMPLES: u32 = 300;

/// Below this many items per-CPU files are read on one thread (starting threads costs more).
const PARALLEL_MIN_ITEMS: usize = 256;
/// At most this many reader threads on a big host.
const MAX_READ_THREADS: usize = 8;

/// Cached static files and directory listings of one reader thread.
#[derive(Default)]
pub struct Shard {
    statics: HashMap<String, Option<String>>,
    static_dirs: HashMap<String, Vec<u32>>,
}

/// Reads samples from one root, caching what does not change between samples.
pub struct Reader {
    root: Root,
    statics: HashMap<String, Option<String>>,
    static_dirs: HashMap<String, Vec<u32>>,
    shards: Vec<Shard>,
    samples_read: u32,
    pub(crate) ksoftirqd_pids: Option<Vec<(u32, u32)>>,
    pub(crate) cpuinfo: Option<(Option<String>, bool)>,
}

impl Reader {
    pub fn new(root: Root) -> Reader {
        Reader {
            root,
            statics: HashMap::new(),
            static_dirs: HashMap::new(),
            shards: Vec::new(),
            samples_read: 0,
            ksoftirqd_pids: None,
            cpuinfo: None,
        }
    }

    pub fn root(&self) -> &Root {
        &self.root
    }

    /// Reads one complete sample. Never fails: what could not be read is unknown and listed.
    pub fn sample(&mut self) -> Sample {
        if self.samples_read % STATIC_REFRESH_SAMPLES == 0 {
            self.statics.clear();
            self.static_dirs.clear();
            self.shards.clear();
            self.ksoftirqd_pids = None;
        }
        self.samples_read = self.samples_read.wrapping_add(1);
        let mut probe = Probe {
            root: self.root.clone(),
            problems: Vec::new(),
            statics: std::mem::take(&mut self.statics),
            static_dirs: std::mem::take(&mut self.static_dirs),
            shards: std::mem::take(&mut self.shards),
        };
        let time = host::read_time(&mut probe);
        let host = host::read_host(&mut probe, &mut self.cpuinfo);
        let nodes = memory::read_nodes(&mut probe);
        let mut cpu = cpu::read_cpu(&mut probe, &nodes);
        cpu.ksoftirqd = cpu::read_ksoftirqd(&mut probe, &mut self.ksoftirqd_pids);
        let memory = memory::read_memory(&mut probe);
        let disks = disk::read_disks(&mut probe);
        let net = net::read_net(&mut probe, cpu.online.as_ref());
        self.statics = probe.statics;
        self.static_dirs = probe.static_dirs;
        self.shards = probe.shards;
        Sample {
            version: SAMPLE_VERSION,
            time,
            host,
            cpu,
            memory,
            nodes,
            disks,
            net,
            problems: probe.problems,
        }
    }
}

/// One sample's view of the root: reads files and remembers what went wrong.
pub struct Probe {
    pub root: Root,
    pub problems: Vec<Problem>,
    statics: HashMap<String, Option<String>>,
    static_dirs: HashMap<String, Vec<u32>>,
    /// Per-thread caches for `par_map`, kept across samples (chunking is deterministic).
    shards: Vec<Shard>,
}

impl Probe {
    pub fn new(root: Root) -> Probe {
        Probe {
            root,
            problems: Vec::new(),
            statics: HashMap::new(),
            static_dirs: HashMap::new(),
            shards: Vec::new(),
        }
    }

    /// `f` over `items`, on several threads when there are many (a 4096-CPU host has ~100k
    /// per-CPU files per sample; on one thread the syscalls alone take longer than a frame).
    /// Results keep the order of `items`; problems and cache entries are merged back.
    pub fn par_map<I: Sync, T: Send>(
        &mut self,
        items: &[I],
        f: impl Fn(&mut Probe, &I) -> T + Sync,
    ) -> Vec<T> {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_READ_THREADS);
        if items.len() < PARALLEL_MIN_ITEMS || threads < 2 {
            return items.iter().map(|i| f(self, i)).collect();
        }
        let chunk = items.len().div_ceil(threads);
        let parts: Vec<&[I]> = items.chunks(chunk).collect();
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
                        };
                        let out: Vec<T> = part.iter().map(|i| f(&mut p, i)).collect();
                        let shard = Shard {
                            statics: p.statics,
                            static_dirs: p.static_dirs,
                        };
                        (out, p.problems, shard)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
        });
        let mut all = Vec::with_capacity(items.len());
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

    /// Whole file; `None` if absent (silently) or unreadable (noted). Oversized files are noted
    /// and their first `MAX_FILE_BYTES` are still returned.
    pub fn text(&mut self, rel: &str) -> Option<String> {
        match self.root.read_lossy(rel) {
            (text, None) => text,
            (_, Some(ReadError::Missing)) => None,
            (text, Some(err)) => {
                self.note(rel, err.to_string());
                text
            }
        }
    }

    /// Like `text`, but a missing file is a problem too (files every Linux has).
    pub fn required(&mut self, rel: &str) -> Option<String> {
        if let (None, Some(ReadError::Missing)) = self.root.read_lossy(rel) {
            self.note(rel, "missing");
            return None;
        }
        self.text(rel)
    }

    /// First line, trimmed, non-empty.
    pub fn line(&mut self, rel: &str) -> Option<String> {
        let text = self.text(rel)?;
        let line = text.lines().next().unwrap_or("").trim();
        (!line.is_empty()).then(|| line.to_string())
    }

    /// A number file; garbled content is noted and unknown.
    pub fn u64(&mut self, rel: &str) -> Option<u64> {
        let line = self.line(rel)?;
        match line.parse() {
            Ok(v) => Some(v),
            Err(_) => {
                self.note(rel, format!("not a number: {:?}", parse::clip(&line)));
                None
            }
        }
    }

    pub fn i64(&mut self, rel: &str) -> Option<i64> {
        let line = self.line(rel)?;
        match line.parse() {
            Ok(v) => Some(v),
            Err(_) => {
                self.note(rel, format!("not a number: {:?}", parse::clip(&line)));
                None
            }
        }
    }

    /// `0`/`1` (or `N`/`Y`) as a boolean.
    pub fn flag(&mut self, rel: &str) -> Option<bool> {
        match self.line(rel)?.as_str() {
            "0" | "N" | "n" => Some(false),
            "1" | "Y" | "y" => Some(true),
            other => {
                let other = parse::clip(other).to_string();
                self.note(rel, format!("not a 0/1 flag: {other:?}"));
                None
            }
        }
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
}
