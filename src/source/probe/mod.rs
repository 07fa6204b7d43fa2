//! The probe: one sample's reads of the root, with the caches a `Reader` keeps between samples
//! (statics, the settings tier, per-thread shards) and the problems met on the way.

mod budget;
mod pool;
pub(crate) mod settings;

use super::{parse, Cache};
use crate::root::{Every, ReadBuf, ReadError, Root, MAX_FILE_BYTES};
use crate::sample::Problem;
use budget::{damage, fill, table_cap, Budget};
use foldhash::{HashMap, HashMapExt};
use pool::Shard;
use settings::Tier;
use std::borrow::Cow;

pub(crate) use budget::MAX_IRQ_LINES;

/// `dir/name` as a problem's path (`name` empty: `dir` is the file).
fn join(dir: &str, name: &str) -> String {
    if name.is_empty() {
        dir.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// First line of a file's text, trimmed; `None` when empty.
pub(super) fn first_line(text: &str) -> Option<&str> {
    let line = text.lines().next().unwrap_or("").trim();
    (!line.is_empty()).then_some(line)
}

pub(crate) fn parse_u64(line: &str) -> Result<u64, String> {
    line.parse()
        .map_err(|_| format!("not a number: {:?}", parse::clip(line)))
}

pub(crate) fn parse_i64(line: &str) -> Result<i64, String> {
    line.parse()
        .map_err(|_| format!("not a number: {:?}", parse::clip(line)))
}

/// `0`/`1` (or `N`/`Y`).
pub(crate) fn parse_flag(line: &str) -> Result<bool, String> {
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
    /// Which sample this is, for the settings tier.
    pub(crate) tier: Tier,
    /// CPUs the sample has seen so far (0 before `/proc/stat`): per-CPU tables are read up to
    /// a size relative to it (see `table_cap`).
    pub(crate) cpus_seen: usize,
    /// `par_map` may use several threads: only on a cold sample (the reader's first, or one
    /// that re-reads the static files), which reads every CPU's detail at once. A warm sample
    /// reads within its file budget on one thread, so its CPU does not grow with the cores
    /// (more threads cost more CPU for little wall time: the kernel contends on the same
    /// directories).
    pub(crate) parallel: bool,
    /// The dashboard's first look (`Reader::first_look`): on a big host, per-CPU detail is
    /// left for the next sample.
    pub(crate) first_look: bool,
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
            tier: Tier::default(),
            cpus_seen: 0,
            parallel: true,
            first_look: false,
            buf: ReadBuf::default(),
            big: ReadBuf::default(),
        }
    }

    /// Drops every cache: files that do not change are read again (see `Reader::sample`).
    pub(super) fn forget_caches(&mut self) {
        self.statics.clear();
        self.static_dirs.clear();
        self.shards.clear();
        self.cache = Cache::default();
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
        self.whole(rel, false)
    }

    /// The first `max` bytes of `rel` (all of a shorter file), problems noted as `text`
    /// notes them; the cut is not one.
    pub fn head(&mut self, rel: &str, max: u64) -> Option<String> {
        self.fill_buf(rel, "", false, Budget::Head(max))
            .then(|| self.buf.text().into_owned())
    }

    /// Like `text`, but a missing file is a problem too (files every Linux has).
    pub fn required(&mut self, rel: &str) -> Option<String> {
        self.whole(rel, true)
    }

    fn whole(&mut self, rel: &str, required: bool) -> Option<String> {
        self.fill_buf(rel, "", required, Budget::Table(MAX_FILE_BYTES))
            .then(|| self.buf.text().into_owned())
    }

    /// `dir/name` read into the probe's own buffer within `budget` (`budget::fill`): false
    /// when absent or unreadable (noted as `fill` notes it).
    fn fill_buf(&mut self, dir: &str, name: &str, required: bool, budget: Budget) -> bool {
        fill(
            &self.root,
            &mut self.problems,
            &mut self.buf,
            dir,
            name,
            required,
            budget,
        )
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
        let ok = fill(
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
        if !self.fill_buf(dir, name, false, Budget::Value) {
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
        self.quiet(dir, name, false, Every::Sample)
    }

    /// `quiet_text` of a file its reader reads `every` so often (see `root::kept`).
    pub fn quiet_text_every(
        &mut self,
        dir: &str,
        name: &str,
        every: Every,
    ) -> Option<Cow<'_, str>> {
        self.quiet(dir, name, false, every)
    }

    /// Whole file `dir/name` or why it could not be read; nothing is noted (the caller
    /// says what an error means, e.g. another user's `/proc/PID/io` without root).
    pub fn try_text(&mut self, dir: &str, name: &str) -> Result<Cow<'_, str>, ReadError> {
        self.root.read_into(dir, name, &mut self.buf)?;
        Ok(self.buf.text())
    }

    /// `quiet_text` of a table that may be empty (a cgroup's `io.stat` before its first I/O):
    /// empty is an empty text, not damage.
    pub fn quiet_table(&mut self, dir: &str, name: &str) -> Option<Cow<'_, str>> {
        self.quiet(dir, name, true, Every::Sample)
    }

    /// `quiet_text`, with an empty file an empty text when `empty_ok`; `every`: how often the
    /// caller reads it (see `root::kept`).
    fn quiet(
        &mut self,
        dir: &str,
        name: &str,
        empty_ok: bool,
        every: Every,
    ) -> Option<Cow<'_, str>> {
        let read = self
            .root
            .read_into_every(dir, name, &mut self.buf, MAX_FILE_BYTES, every);
        match read {
            Ok(false) if empty_ok && self.buf.bytes().is_empty() => Some(Cow::Borrowed("")),
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

    fn noted<T>(&mut self, rel: &str, r: Result<T, String>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(what) => {
                self.note(rel, what);
                None
            }
        }
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
