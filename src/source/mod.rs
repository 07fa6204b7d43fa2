//! Readers: one module per kernel file family, all reading through one `Root`, producing a `Sample`.
//!
//! The sampling path only reads. A file that is absent is "unknown" and silent (no cpufreq in a
//! VM is normal); a file that exists but cannot be read or parsed is recorded in
//! `Sample::problems` so `snapshot` can say what it could not read.
//!
//! What a reader caches between samples, and how stale it can get:
//! - files that do not change while the system runs (names, topology, hardware limits, kernel
//!   release, `cpu/possible`, a directory's numbered entries, which `sys/block` names are whole
//!   disks, an IRQ's NUMA node) are read once and again every `STATIC_REFRESH_SAMPLES` samples;
//! - what changes only when a CPU goes on- or offline (`affected_cpus`, the `cpuN` and policy
//!   listings, a CPU's idle states) is dropped as soon as `online` or `present`, read every
//!   sample, changes; what is cached about cpufreq policies also when the
//!   `intel_pstate`/`amd_pstate` status changes;
//! - settings that only an administrator (or firmware) changes and that no perftop tweak
//!   writes (an idle state's `disable`, cpufreq `scaling_min_freq`/`scaling_max_freq`, boost,
//!   `no_turbo`, the `intel_pstate`/`amd_pstate` status, the cpuidle driver and governor, a
//!   disk's scheduler, `nr_requests` and `rotational`, a NIC's queue list, RPS masks and
//!   driver, an IRQ's effective affinity) are read again at least every
//!   `SETTINGS_REFRESH_SAMPLES` samples (10 s at the default interval), staggered, and every
//!   sample when samples are `SETTINGS_EVERY_SAMPLE_GAP` or more apart. An IRQ's effective
//!   affinity is also read again as soon as its `smp_affinity_list` changes;
//! - everything a tweak or the kernel changes at run time (governor, EPP, current frequency,
//!   sysctls, THP, huge page pools, IRQ affinity, counters, gauges) is read every sample.

pub mod cpu;
pub mod disk;
pub mod host;
pub mod memory;
pub mod net;
pub mod parse;

use crate::cpulist::CpuList;
use crate::pagesize::{self, PageKbFrom};
use crate::root::{ReadBuf, ReadError, Root, MAX_FILE_BYTES};
use crate::sample::{Problem, Sample, SAMPLE_VERSION};
use std::borrow::Cow;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Files that do not change while the system runs (names, topology, hardware limits) are read
/// once and re-read after this many samples, in case a driver was loaded or a CPU hot-added.
const STATIC_REFRESH_SAMPLES: u32 = 300;

/// Settings no tweak writes are read again at least this often (in samples); see the module
/// comment. On a 4096-CPU host the idle states' `disable` files alone are 16k files per sample.
const SETTINGS_REFRESH_SAMPLES: u64 = 10;
/// Samples at least this far apart read settings every time: the saving does not matter at
/// such intervals, and ten of them would be minutes.
const SETTINGS_EVERY_SAMPLE_GAP: Duration = Duration::from_secs(2);

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
    /// Settings tier: first lines and directory listings, by path.
    settings: HashMap<String, Option<Cached<String>>>,
    setting_lists: HashMap<String, Option<Cached<Vec<String>>>>,
    /// Per IRQ: its last `smp_affinity_list` line and its effective affinity.
    pub(crate) irqs: HashMap<u32, net::IrqCache>,
    /// The `intel_pstate`/`amd_pstate` status as last read (`None`: not read yet).
    pub(crate) pstate_status: Option<Option<String>>,
    /// `cpu/possible` as read (fixed at boot).
    pub(crate) possible: Option<Option<String>>,
    /// Settings tier: symlink targets (a NIC's driver).
    setting_links: HashMap<String, (Option<String>, u64)>,
    /// Threads `par_map` may use. `available_parallelism` reads five cgroup files each call.
    threads: Option<usize>,
}

/// A setting as last read (see `SETTINGS_REFRESH_SAMPLES`): its value, or why it is garbled
/// (noted again every sample, as if it had been read), and the sample number at which it is
/// read again.
#[derive(Debug, Clone)]
pub(crate) struct Cached<T> {
    value: Result<Option<T>, String>,
    due: u64,
}

impl<T> Cached<T> {
    /// Makes the next `Probe::setting_in` read the file again.
    pub(crate) fn expire(&mut self) {
        self.due = 0;
    }

    /// Reads the file again in the next sample too (and then every `SETTINGS_REFRESH_SAMPLES`).
    pub(crate) fn due_next(&mut self, sample_no: u64) {
        self.due = sample_no + 1;
    }
}

/// A stable spread for `key` in `0..SETTINGS_REFRESH_SAMPLES` (FNV-1a), so that settings first
/// read in the same sample are not all read again in the same later sample.
pub(crate) fn spread_of(key: &str) -> u64 {
    let h = key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    h % SETTINGS_REFRESH_SAMPLES
}

/// Reads samples from one root, caching what does not change between samples.
pub struct Reader {
    probe: Probe,
    samples_read: u32,
    last_sample: Option<Instant>,
    pub(crate) ksoftirqd_pids: Option<Vec<(u32, u32)>>,
    pub(crate) cpuinfo: Option<(Option<String>, bool)>,
    /// The page size, learnt from the first sample and fixed for the session (see `pagesize`).
    page: Option<(u64, PageKbFrom)>,
}

impl Reader {
    pub fn new(root: Root) -> Reader {
        Reader {
            probe: Probe::new(root),
            samples_read: 0,
            last_sample: None,
            ksoftirqd_pids: None,
            cpuinfo: None,
            page: None,
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
        probe.sample_no += 1;
        let now = Instant::now();
        probe.settings_every_sample = self
            .last_sample
            .replace(now)
            .is_none_or(|t| now.duration_since(t) >= SETTINGS_EVERY_SAMPLE_GAP);
        probe.problems.clear();
        let time = host::read_time(probe);
        let host = host::read_host(probe, &mut self.cpuinfo);
        let nodes = memory::read_nodes(probe);
        probe.cpus_seen = 0;
        let mut cpu = cpu::read_cpu(probe, &nodes);
        probe.cpus_seen = cpu.cpus.len();
        cpu.ksoftirqd = cpu::read_ksoftirqd(probe, &mut self.ksoftirqd_pids);
        let mut memory = memory::read_memory(probe);
        let (page_kb, from) = *self.page.get_or_insert_with(|| {
            if probe.root.is_live() {
                (pagesize::host_page_kb(), PageKbFrom::Host)
            } else {
                pagesize::of(&memory.meminfo, &memory.vmstat, None)
            }
        });
        if from == PageKbFrom::Default {
            probe.note(
                "proc/meminfo",
                format!(
                    "page size: no meminfo/vmstat counter pair agrees on one; assuming {page_kb} kB"
                ),
            );
        }
        memory.page_kb = Some(page_kb);
        memory.page_kb_from = Some(from);
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

/// Most perftop reads of a one-value file (a sysfs attribute is at most a page); the rest of
/// a bigger one is not read.
const VALUE_MAX_BYTES: u64 = 64 << 10;

/// IRQ lines budgeted for in `/proc/interrupts` (a 4096-CPU host with NIC and NVMe queues on
/// every CPU has ~10k).
pub(crate) const MAX_IRQ_LINES: u64 = 65_536;

/// How much of a table perftop reads, from what a real one of this host could hold: tables of
/// per-device lines get a fixed budget, per-CPU tables one relative to the CPUs seen (from
/// `/proc/stat` and sysfs, read first). Beyond that a file is damaged or hostile, and a 200 MB
/// `diskstats` would cost gigabytes and seconds per sample; the cut is listed as a problem.
fn table_cap(rel: &str, cpus_seen: usize) -> u64 {
    // Twice what this sample saw (room for a CPU list cut by damage); nothing seen: a big host.
    let cpus = match cpus_seen {
        0 => 4096,
        n => 2 * n as u64 + 2,
    };
    let cap = match rel {
        // ~50k devices or partitions at ~150 bytes a line.
        "proc/diskstats" => 8 << 20,
        // ~200k interfaces (container hosts) at ~150 bytes a line.
        "proc/net/dev" => 32 << 20,
        // One line per IRQ: a 10-column count per CPU, then chip and names.
        "proc/interrupts" => (11 * cpus + 160) * MAX_IRQ_LINES,
        // ~10 softirq rows of a count per CPU; one line per CPU.
        "proc/softirqs" | "proc/net/softnet_stat" => cpus * 1024 + (64 << 10),
        // A few hundred short `key value` lines.
        "proc/meminfo" | "proc/vmstat" => 1 << 20,
        r if r.ends_with("/meminfo") || r.ends_with("/numastat") => 1 << 20,
        _ => MAX_FILE_BYTES,
    };
    cap.min(MAX_FILE_BYTES)
}

/// What `Probe::fill` reads of a file, and what damage costs: a single value is unknown when
/// damaged; a table is cut at its budget and still parsed.
#[derive(Debug, Clone, Copy)]
enum Budget {
    Value,
    Table(u64),
}

/// Why a file's bytes cannot be a kernel text file: empty, or not text at all.
fn damage(bytes: &[u8]) -> Option<&'static str> {
    if bytes.is_empty() {
        Some("empty")
    } else if bytes.contains(&0) {
        Some("not text (NUL bytes)")
    } else if std::str::from_utf8(bytes).is_err() {
        Some("not text (invalid UTF-8)")
    } else {
        None
    }
}

/// First line of a file's text, trimmed; `None` when empty.
fn first_line(text: &str) -> Option<&str> {
    let line = text.lines().next().unwrap_or("").trim();
    (!line.is_empty()).then_some(line)
}

pub(crate) fn parse_u64(line: &str) -> Result<u64, String> {
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
    /// Counts samples (from 1); settings are due by it.
    pub(crate) sample_no: u64,
    /// Settings are read every sample (samples far apart; see `SETTINGS_EVERY_SAMPLE_GAP`).
    settings_every_sample: bool,
    /// CPUs the sample has seen so far (0 before `/proc/stat`): per-CPU tables are read up to
    /// a size relative to it (see `table_cap`).
    pub(crate) cpus_seen: usize,
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
            sample_no: 0,
            settings_every_sample: true,
            cpus_seen: 0,
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
        self.par_map_from(items, PARALLEL_MIN_ITEMS, f)
    }

    /// `par_map`, parallel from `min_items` items (fewer but bigger items than files).
    pub fn par_map_from<I: Send, T: Send>(
        &mut self,
        items: Vec<I>,
        min_items: usize,
        f: impl Fn(&mut Probe, I) -> T + Sync,
    ) -> Vec<T> {
        if items.len() < min_items.max(2) {
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
        let (sample_no, settings_every_sample) = (self.sample_no, self.settings_every_sample);
        let cpus_seen = self.cpus_seen;
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
                            sample_no,
                            settings_every_sample,
                            cpus_seen,
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
    /// `MAX_FILE_BYTES` are still there. A file that exists but is empty or not text (NUL
    /// bytes, invalid UTF-8: no kernel file holds them) is noted; a `table` that is not text
    /// is still parsed (its tolerant parser skips the garbled lines), a single value is unknown.
    fn fill(
        root: &Root,
        problems: &mut Vec<Problem>,
        buf: &mut ReadBuf,
        dir: &str,
        name: &str,
        required: bool,
        budget: Budget,
    ) -> bool {
        let (table, max) = match budget {
            Budget::Value => (false, VALUE_MAX_BYTES),
            Budget::Table(max) => (true, max),
        };
        let (ok, what) = match root.read_into_max(dir, name, buf, max) {
            Ok(false) => match damage(buf.bytes()) {
                None => return true,
                Some(what) => (table && !buf.bytes().is_empty(), what.to_string()),
            },
            Ok(true) => (true, ReadError::TooLarge(max).to_string()),
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
        self.whole(rel, false)
    }

    /// Like `text`, but a missing file is a problem too (files every Linux has).
    pub fn required(&mut self, rel: &str) -> Option<String> {
        self.whole(rel, true)
    }

    fn whole(&mut self, rel: &str, required: bool) -> Option<String> {
        let budget = Budget::Table(MAX_FILE_BYTES);
        Self::fill(
            &self.root,
            &mut self.problems,
            &mut self.buf,
            rel,
            "",
            required,
            budget,
        )
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
        let max = table_cap(rel, self.cpus_seen);
        let ok = Self::fill(
            &self.root,
            &mut self.problems,
            &mut buf,
            rel,
            "",
            required,
            Budget::Table(max),
        );
        let out = ok.then(|| f(self, &buf.text()));
        self.big = buf;
        out
    }

    /// First line of `dir/name`, parsed by `parse`; a parse error is noted and unknown. A
    /// blank first line is unknown, and noted when `blank_noted` (a number file).
    fn parsed_in<T>(
        &mut self,
        dir: &str,
        name: &str,
        blank_noted: bool,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<T> {
        if !Self::fill(
            &self.root,
            &mut self.problems,
            &mut self.buf,
            dir,
            name,
            false,
            Budget::Value,
        ) {
            return None;
        }
        let text = self.buf.text();
        let Some(line) = first_line(&text) else {
            if blank_noted {
                self.note(&join(dir, name), "empty");
            }
            return None;
        };
        let result = parse(line);
        match result {
            Ok(v) => Some(v),
            Err(what) => {
                self.note(&join(dir, name), what);
                None
            }
        }
    }

    /// Whole file `dir/name`, borrowed from the read buffer; nothing is noted (for files that
    /// can vanish between listing and reading, like `/proc/PID/stat`) unless it is not a
    /// regular file, empty or not text, which no vanishing process explains (reading a
    /// process that is gone fails with ESRCH).
    pub fn quiet_text(&mut self, dir: &str, name: &str) -> Option<Cow<'_, str>> {
        match self.root.read_into(dir, name, &mut self.buf) {
            Ok(false) => match damage(self.buf.bytes()) {
                None => Some(self.buf.text()),
                Some(what) => {
                    self.note(&join(dir, name), what);
                    None
                }
            },
            Err(e @ (ReadError::NotAFile | ReadError::Special)) => {
                self.note(&join(dir, name), e.to_string());
                None
            }
            _ => None,
        }
    }

    /// First line, trimmed, non-empty.
    pub fn line(&mut self, rel: &str) -> Option<String> {
        self.line_in(rel, "")
    }

    /// `line` of `dir/name`, without building the path as a `String` first.
    pub fn line_in(&mut self, dir: &str, name: &str) -> Option<String> {
        self.parsed_in(dir, name, false, |l| Ok(l.to_string()))
    }

    /// A number file; garbled content is noted and unknown.
    pub fn u64(&mut self, rel: &str) -> Option<u64> {
        self.parsed_in(rel, "", true, parse_u64)
    }

    pub fn u64_in(&mut self, dir: &str, name: &str) -> Option<u64> {
        self.parsed_in(dir, name, true, parse_u64)
    }

    pub fn i64(&mut self, rel: &str) -> Option<i64> {
        self.parsed_in(rel, "", true, parse_i64)
    }

    /// `0`/`1` (or `N`/`Y`) as a boolean.
    pub fn flag(&mut self, rel: &str) -> Option<bool> {
        self.parsed_in(rel, "", true, parse_flag)
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

    /// A static number file whose garbled content is noted every sample (as `u64` would).
    pub fn static_u64(&mut self, rel: &str) -> Option<u64> {
        let line = self.static_line(rel)?;
        self.noted(rel, parse_u64(&line))
    }

    /// A static number file whose garbled content is noted every sample (as `i64` would).
    pub fn static_i64(&mut self, rel: &str) -> Option<i64> {
        let line = self.static_line(rel)?;
        self.noted(rel, parse_i64(&line))
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

    /// A setting's first line through `parse`, kept in `slot` and read again only when due
    /// (see `SETTINGS_REFRESH_SAMPLES`); `spread` staggers the first refresh. Unreadable is
    /// noted when read; garbled is noted every sample.
    pub(crate) fn setting_in<T: Clone>(
        &mut self,
        slot: &mut Option<Cached<T>>,
        dir: &str,
        name: &str,
        spread: u64,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<T> {
        let read = match slot {
            Some(c) => self.settings_every_sample || self.sample_no >= c.due,
            None => true,
        };
        if read {
            let value = if Self::fill(
                &self.root,
                &mut self.problems,
                &mut self.buf,
                dir,
                name,
                false,
                Budget::Value,
            ) {
                match first_line(&self.buf.text()) {
                    Some(line) => parse(line).map(Some),
                    None => Ok(None),
                }
            } else {
                Ok(None)
            };
            // First read: due again somewhere in the next N samples; later: N samples on.
            let wait = match slot {
                None => 1 + spread % SETTINGS_REFRESH_SAMPLES,
                Some(_) => SETTINGS_REFRESH_SAMPLES,
            };
            *slot = Some(Cached {
                value,
                due: self.sample_no + wait,
            });
        }
        match slot.as_ref().map(|c| &c.value) {
            Some(Ok(v)) => v.clone(),
            Some(Err(what)) => {
                let what = what.clone();
                self.note(&join(dir, name), what);
                None
            }
            None => None,
        }
    }

    /// First line of a settings-tier file (see `setting_in`), by path.
    pub fn setting_line(&mut self, rel: &str) -> Option<String> {
        let mut slot = match self.cache.settings.get_mut(rel) {
            Some(slot) => slot.take(),
            None => {
                self.cache.settings.insert(rel.to_string(), None);
                None
            }
        };
        let v = self.setting_in(&mut slot, rel, "", spread_of(rel), |l| Ok(l.to_string()));
        if let Some(s) = self.cache.settings.get_mut(rel) {
            *s = slot;
        }
        v
    }

    /// `u64` of a settings-tier file; garbled is noted every sample.
    pub fn setting_u64(&mut self, rel: &str) -> Option<u64> {
        let line = self.setting_line(rel)?;
        self.noted(rel, parse_u64(&line))
    }

    /// `flag` of a settings-tier file; garbled is noted every sample.
    pub fn setting_flag(&mut self, rel: &str) -> Option<bool> {
        let line = self.setting_line(rel)?;
        self.noted(rel, parse_flag(&line))
    }

    fn noted<T>(&mut self, rel: &str, r: Result<T, String>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(what) => {
                self.note(rel, what);
                None
            }
        }
    }

    /// `Root::list_dir` of a settings-tier directory (a NIC's `queues/`).
    pub fn setting_list_dir(&mut self, rel: &str) -> Vec<String> {
        let due = match self.cache.setting_lists.get(rel) {
            Some(Some(c)) => self.settings_every_sample || self.sample_no >= c.due,
            _ => true,
        };
        if due {
            let first = !self.cache.setting_lists.contains_key(rel);
            let wait = if first {
                1 + spread_of(rel)
            } else {
                SETTINGS_REFRESH_SAMPLES
            };
            let names = self.root.list_dir(rel);
            let cached = Cached {
                value: Ok(Some(names.clone())),
                due: self.sample_no + wait,
            };
            self.cache
                .setting_lists
                .insert(rel.to_string(), Some(cached));
            return names;
        }
        match self.cache.setting_lists.get(rel) {
            Some(Some(Cached {
                value: Ok(Some(names)),
                ..
            })) => names.clone(),
            _ => Vec::new(),
        }
    }

    /// `Root::link_name` of a settings-tier symlink (a NIC's `device/driver`).
    pub fn setting_link_name(&mut self, rel: &str) -> Option<String> {
        let due = match self.cache.setting_links.get(rel) {
            Some((_, due)) => self.settings_every_sample || self.sample_no >= *due,
            None => true,
        };
        if due {
            let wait = if self.cache.setting_links.contains_key(rel) {
                SETTINGS_REFRESH_SAMPLES
            } else {
                1 + spread_of(rel)
            };
            let name = self.root.link_name(rel);
            self.cache
                .setting_links
                .insert(rel.to_string(), (name.clone(), self.sample_no + wait));
            return name;
        }
        self.cache
            .setting_links
            .get(rel)
            .and_then(|(name, _)| name.clone())
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
    use std::fs;
    use std::path::Path;

    /// Copies a fixture tree (files, directories, symlinks) so a test can change it.
    fn copy_tree(from: &Path, to: &Path) {
        fs::create_dir_all(to).expect("mkdir");
        for e in fs::read_dir(from).expect("read_dir") {
            let e = e.expect("entry");
            let (src, dst) = (e.path(), to.join(e.file_name()));
            let t = e.file_type().expect("file type");
            if t.is_symlink() {
                let target = fs::read_link(&src).expect("readlink");
                std::os::unix::fs::symlink(target, &dst).expect("symlink");
            } else if t.is_dir() {
                copy_tree(&src, &dst);
            } else {
                fs::copy(&src, &dst).expect("copy");
            }
        }
    }

    /// What each cache tier promises: tweaked values on the next sample, hotplug at once,
    /// administrator settings within `SETTINGS_REFRESH_SAMPLES`, an IRQ's effective affinity
    /// as soon as its affinity moves.
    #[test]
    fn caches_are_invalidated_as_documented() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/intel-pstate/t1");
        copy_tree(&fixture, dir.path());
        let w = |rel: &str, text: &str| fs::write(dir.path().join(rel), text).expect("write");
        let cpu = "sys/devices/system/cpu";
        let mut r = Reader::new(Root::new(dir.path()));
        let policy = |s: &Sample, id: &str| {
            s.cpu
                .freq
                .policies
                .iter()
                .find(|p| p.id == id)
                .cloned()
                .expect("policy")
        };
        let irq = |s: &Sample, n: u32| {
            s.net
                .interrupts
                .as_ref()
                .and_then(|i| i.irqs.iter().find(|l| l.irq == n).cloned())
                .expect("irq")
        };
        let a = r.sample();
        assert_eq!(policy(&a, "policy0").governor.as_deref(), Some("powersave"));
        assert_eq!(
            policy(&a, "policy3").affected_cpus.map(|l| l.len()),
            Some(1)
        );
        assert_eq!(a.disks[0].scheduler.as_deref(), Some("none"));
        assert_eq!(a.cpu.cpus[0].idle_states[1].disabled, Some(false));
        assert_eq!(irq(&a, 124).effective_affinity.map(|l| l.len()), Some(1));

        // A governor or EPP tweak and an IRQ move show on the very next sample.
        w(
            &format!("{cpu}/cpufreq/policy0/scaling_governor"),
            "performance\n",
        );
        w(
            &format!("{cpu}/cpufreq/policy0/energy_performance_preference"),
            "power\n",
        );
        w("proc/irq/124/smp_affinity_list", "2\n");
        w("proc/irq/124/effective_affinity_list", "2\n");
        // Administrator settings.
        w(
            "sys/block/nvme0n1/queue/scheduler",
            "none [mq-deadline] kyber bfq\n",
        );
        w(&format!("{cpu}/cpu0/cpuidle/state1/disable"), "1\n");
        w(
            &format!("{cpu}/cpufreq/policy1/scaling_max_freq"),
            "1200000\n",
        );
        // CPU 3 goes offline: its policy has no affected CPU left.
        w(&format!("{cpu}/online"), "0-2\n");
        w(&format!("{cpu}/cpufreq/policy3/affected_cpus"), "\n");
        let b = r.sample();
        assert_eq!(
            policy(&b, "policy0").governor.as_deref(),
            Some("performance")
        );
        assert_eq!(policy(&b, "policy0").epp.as_deref(), Some("power"));
        assert_eq!(
            irq(&b, 124).affinity.map(|l| l.ids().to_vec()),
            Some(vec![2])
        );
        assert_eq!(
            irq(&b, 124).effective_affinity.map(|l| l.ids().to_vec()),
            Some(vec![2])
        );
        assert_eq!(policy(&b, "policy3").affected_cpus, None);
        assert!(!b.cpu.cpus[3].online);

        let mut late = 1;
        let mut s = b;
        while s.disks[0].scheduler.as_deref() != Some("mq-deadline")
            || s.cpu.cpus[0].idle_states[1].disabled != Some(true)
            || policy(&s, "policy1").max_khz != Some(1_200_000)
        {
            assert!(
                late < SETTINGS_REFRESH_SAMPLES,
                "settings not seen after {late} samples"
            );
            s = r.sample();
            late += 1;
        }
        assert!(s.problems.is_empty(), "{:?}", s.problems);
    }

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
        assert_eq!(p.text("n").as_deref(), Some(" 42 \nrest\n"));
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        // Exists but empty: unknown and listed.
        assert_eq!(p.line("empty"), None);
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
            vec![
                ("empty", "empty"),
                ("bad", "not a number: \"4x2\""),
                ("missing", "missing")
            ]
        );
    }
}
