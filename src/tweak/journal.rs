//! Write-ahead journal of old values, and how undo picks the change to restore from it.
//!
//! `STATE_DIR/journal.jsonl`: one JSON record per line ending in a CRC32 of the rest (`encode`),
//! mode 0600, fsync'd (file and directory) after every append. A change is journalled as `pending` with its full plan (old values) and
//! its root (canonical path) before the first write, then marked `applied`, `rolled-back` or
//! `undone`. Changes are begun under the lock (`lock`), which allocates their ids.
//!
//! The file is read as bytes, line by line: a line that is not UTF-8 or not a record is
//! *damaged*, on its own. Undo restores the newest change still in effect only when nothing after
//! that change's record is damaged — a damaged line there may be a newer change, and undoing the
//! older one in its place would break the promise "always undo the right thing". The one line
//! skipped (with a warning) is a torn final line (no newline: the file ends mid-record) that is
//! recognisably a status mark: losing a mark at most makes undo rewrite values it already
//! restored. A change missing from the end of the journal is noticed through the lock file's
//! `last_id`. `perftop tweak journal` lists every line; `perftop tweak undo --id N` undoes a
//! chosen change deliberately.

use super::lock::{self, Lock};
use super::plan::Plan;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Pending,
    Applied,
    RolledBack,
    Undone,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Applied => "applied",
            Status::RolledBack => "rolled-back",
            Status::Undone => "undone",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub id: u64,
    pub time: f64,
    pub status: Status,
    /// Canonical path of the root the change was made under (on `pending` records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
}

pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Creates the state directory (mode 0700) when missing.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    if !dir.is_dir() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("creating state directory {}", dir.display()))?;
    }
    Ok(())
}

/// Appends one line with mode 0600 and fsyncs the file and its directory. A file that ends
/// mid-line (torn) gets a newline first, so the new record stays readable. A failed write (a
/// full filesystem) is cut back off, so it leaves no torn line behind.
pub fn append_line(path: &Path, line: &str) -> Result<()> {
    let f = OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    let len = f
        .metadata()
        .with_context(|| format!("reading {}", path.display()))?
        .len();
    let mut bytes = Vec::with_capacity(line.len() + 2);
    if len > 0 {
        let mut last = [0u8; 1];
        use std::os::unix::fs::FileExt;
        if f.read_at(&mut last, len - 1).ok() == Some(1) && last[0] != b'\n' {
            bytes.push(b'\n');
        }
    }
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    if let Err(e) = (&f).write_all(&bytes).and_then(|()| f.sync_all()) {
        let _ = f.set_len(len);
        let _ = f.sync_all();
        return Err(e).with_context(|| format!("writing {}", path.display()));
    }
    if let Some(dir) = path.parent() {
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// The line for `r`: its JSON with a CRC32 of everything before it as the last field,
/// `…,"crc":"1a2b3c4d"}`, so a flipped byte that still parses (a value, the root) is caught.
pub fn encode(r: &Record) -> Result<String> {
    let body = serde_json::to_string(r).context("encoding journal record")?;
    let open = body.strip_suffix('}').context("encoding journal record")?;
    Ok(format!(
        "{open},\"crc\":\"{:08x}\"}}",
        crc32fast::hash(body.as_bytes())
    ))
}

/// Parses one line: with a `crc` field it must match; lines without one (older perftop) are
/// taken as they are.
fn decode(line: &str) -> std::result::Result<Record, String> {
    let tail = line
        .len()
        .checked_sub(18)
        .and_then(|at| Some((at, line.get(at..)?)));
    let body = match tail {
        Some((at, t)) if t.starts_with(",\"crc\":\"") && t.ends_with("\"}") => {
            let body = format!("{}}}", &line[..at]);
            let want = u32::from_str_radix(&t[8..16], 16).map_err(|e| format!("crc: {e}"))?;
            if crc32fast::hash(body.as_bytes()) != want {
                return Err("checksum mismatch: the record was altered".into());
            }
            body
        }
        // A `crc` field not at the end: the line was cut inside it or altered.
        _ if line.contains(",\"crc\":") => {
            return Err("its checksum is cut off or altered".into());
        }
        _ => line.to_string(),
    };
    serde_json::from_str(&body).map_err(|e| e.to_string())
}

/// A line that is not a readable record, with what could still be read from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Damaged {
    /// 1-based line number.
    pub line: usize,
    /// The final line, without its newline: the file ends mid-record.
    pub torn: bool,
    pub why: String,
    pub id: Option<u64>,
    pub status: Option<String>,
    pub knob: Option<String>,
}

/// The quoted string after `"key":"` in `text`, when it is complete.
fn field_str(text: &str, key: &str) -> Option<String> {
    let pat = format!("\"{key}\":\"");
    let start = text.find(&pat)? + pat.len();
    let end = text[start..].find('"')?;
    Some(text[start..start + end].to_string())
}

impl Damaged {
    fn new(line: usize, torn: bool, bytes: &[u8], why: String) -> Damaged {
        let text = String::from_utf8_lossy(bytes);
        // The id is a record's first field; anywhere else `"id"` could be something else.
        let id = text.strip_prefix("{\"id\":").and_then(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            // A number cut by the end of the file may be missing digits.
            let complete = rest.len() > digits.len();
            digits.parse().ok().filter(|_| complete)
        });
        Damaged {
            line,
            torn,
            why,
            id,
            status: field_str(&text, "status"),
            knob: field_str(&text, "knob"),
        }
    }

    /// A status mark (applied, rolled-back, undone) of a known change, not a change record.
    pub fn is_mark(&self) -> bool {
        self.id.is_some()
            && self.knob.is_none()
            && matches!(
                self.status.as_deref(),
                Some("applied" | "rolled-back" | "undone")
            )
    }

    /// `line 7 (torn: the file ends mid-record): change #3, pending, knob vm.dirty_ratio: EOF…`
    pub fn describe(&self) -> String {
        let mut what = Vec::new();
        if let Some(id) = self.id {
            what.push(format!("change #{id}"));
        }
        if let Some(s) = &self.status {
            what.push(s.clone());
        }
        if let Some(k) = &self.knob {
            what.push(format!("knob {k}"));
        }
        let what = if what.is_empty() {
            "nothing readable".to_string()
        } else {
            what.join(", ")
        };
        let what: String = what.chars().filter(|c| !c.is_control()).collect();
        format!(
            "line {}{}: {what} ({})",
            self.line,
            if self.torn {
                " (torn: the file ends mid-record)"
            } else {
                ""
            },
            self.why
        )
    }
}

/// One line of the journal.
#[derive(Debug, Clone)]
pub enum Line {
    Record(Record),
    Damaged(Damaged),
}

/// The journal as read: every non-empty line, numbered.
#[derive(Debug, Clone, Default)]
pub struct Contents {
    pub lines: Vec<(usize, Line)>,
}

/// A change that undo can restore.
#[derive(Debug, Clone)]
pub struct Open {
    pub id: u64,
    /// Line of its `pending` record.
    pub line: usize,
    pub status: Status,
    pub root: Option<String>,
    pub plan: Plan,
}

/// The change undo picked, and warnings to show beside it.
#[derive(Debug, Clone)]
pub struct Pick {
    pub change: Option<Open>,
    pub warnings: Vec<String>,
}

impl Contents {
    /// Splits `bytes` into lines; each unreadable line is damaged on its own.
    pub fn parse(bytes: &[u8]) -> Contents {
        let mut lines = Vec::new();
        let pieces: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        let n = pieces.len();
        for (i, piece) in pieces.into_iter().enumerate() {
            if piece.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let torn = i + 1 == n; // the last piece has no newline after it
            let line = match std::str::from_utf8(piece) {
                Err(e) => Line::Damaged(Damaged::new(
                    i + 1,
                    torn,
                    piece,
                    format!("not UTF-8 at byte {}", e.valid_up_to() + 1),
                )),
                Ok(s) => match decode(s) {
                    Ok(r) if r.status == Status::Pending && r.plan.is_none() => {
                        Line::Damaged(Damaged::new(
                            i + 1,
                            torn,
                            piece,
                            "a pending record without its plan".into(),
                        ))
                    }
                    Ok(r) => Line::Record(r),
                    Err(e) => Line::Damaged(Damaged::new(i + 1, torn, piece, e)),
                },
            };
            lines.push((i + 1, line));
        }
        Contents { lines }
    }

    pub fn damaged(&self) -> impl Iterator<Item = &Damaged> {
        self.lines.iter().filter_map(|(_, l)| match l {
            Line::Damaged(d) => Some(d),
            Line::Record(_) => None,
        })
    }

    fn records(&self) -> impl Iterator<Item = (usize, &Record)> {
        self.lines.iter().filter_map(|(n, l)| match l {
            Line::Record(r) => Some((*n, r)),
            Line::Damaged(_) => None,
        })
    }

    /// Highest id seen, readable or read from a damaged line.
    pub fn max_id(&self) -> u64 {
        let readable = self.records().map(|(_, r)| r.id);
        let damaged = self.damaged().filter_map(|d| d.id);
        readable.chain(damaged).max().unwrap_or(0)
    }

    /// Every change with a readable `pending` record, with its latest readable status.
    pub fn changes(&self) -> Vec<Open> {
        let mut out = Vec::new();
        for (line, r) in self.records() {
            let Some(plan) = &r.plan else { continue };
            let status = self
                .records()
                .filter(|(n, s)| *n > line && s.id == r.id && s.plan.is_none())
                .last()
                .map(|(_, s)| s.status)
                .unwrap_or(r.status);
            out.push(Open {
                id: r.id,
                line,
                status,
                root: r.root.clone(),
                plan: plan.clone(),
            });
        }
        out
    }

    /// The change `undo` restores: the newest still in effect, if nothing after its record is
    /// damaged and no change begun later is missing (`last_begun`, from the lock file).
    pub fn pick_last(&self, last_begun: u64) -> std::result::Result<Pick, String> {
        let open = self
            .changes()
            .into_iter()
            .filter(|c| matches!(c.status, Status::Pending | Status::Applied))
            .max_by_key(|c| c.line);
        let after = open.as_ref().map_or(0, |c| c.line);
        let instead = match &open {
            Some(c) => format!("change #{} ({} → {})", c.id, c.plan.knob, c.plan.value),
            None => "anything".into(),
        };
        if last_begun > self.max_id() {
            return Err(format!(
                "change #{last_begun} is missing from the journal (the lock file records that it \
                 was begun; the journal ends at #{}): it was cut off. perftop will not undo \
                 {instead} in its place. Check the values by hand; `perftop tweak journal` lists \
                 the journal and `perftop tweak undo --id N` undoes a chosen change",
                self.max_id()
            ));
        }
        let mut warnings = Vec::new();
        let mut blocking = Vec::new();
        for d in self.damaged().filter(|d| d.line > after) {
            if d.torn && d.is_mark() {
                warnings.push(format!(
                    "skipped the torn last line of the journal, a status mark: {}",
                    d.describe()
                ));
            } else {
                blocking.push(d.describe());
            }
        }
        if !blocking.is_empty() {
            return Err(format!(
                "the journal has unreadable records after the last change it can read; one may \
                 be a newer change, so perftop will not undo {instead} in its place:\n  {}\n\
                 `perftop tweak journal` lists every line; `perftop tweak undo --id N` undoes a \
                 chosen change",
                blocking.join("\n  ")
            ));
        }
        Ok(Pick {
            change: open,
            warnings,
        })
    }

    /// Change `id`, chosen by a person: refused when unreadable or no longer in effect.
    pub fn pick_id(&self, id: u64) -> std::result::Result<Pick, String> {
        let changes = self.changes();
        let Some(c) = changes.iter().filter(|c| c.id == id).max_by_key(|c| c.line) else {
            return Err(match self.damaged().find(|d| d.id == Some(id)) {
                Some(d) => format!("change #{id} cannot be read: {}", d.describe()),
                None => format!("the journal has no change #{id}"),
            });
        };
        if !matches!(c.status, Status::Pending | Status::Applied) {
            return Err(format!(
                "change #{id} ({} → {}) is {}: nothing to undo",
                c.plan.knob,
                c.plan.value,
                c.status.word()
            ));
        }
        let mut warnings: Vec<String> = self
            .damaged()
            .filter(|d| d.line > c.line)
            .map(|d| format!("unreadable, ignored as you chose #{id}: {}", d.describe()))
            .collect();
        for n in changes
            .iter()
            .filter(|n| n.line > c.line && matches!(n.status, Status::Pending | Status::Applied))
        {
            warnings.push(format!(
                "a newer change is still in effect: #{} ({} → {})",
                n.id, n.plan.knob, n.plan.value
            ));
        }
        Ok(Pick {
            change: Some(c.clone()),
            warnings,
        })
    }
}

pub struct Journal {
    dir: PathBuf,
}

impl Journal {
    pub fn new(dir: &Path) -> Journal {
        Journal {
            dir: dir.to_path_buf(),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join("journal.jsonl")
    }

    /// Takes the tweak lock (`lock::take`).
    pub fn lock(&self) -> Result<Lock> {
        lock::take(&self.dir)
    }

    /// The journal's lines; no file is an empty journal.
    pub fn read(&self) -> Result<Contents> {
        match fs::read(self.path()) {
            Ok(b) => Ok(Contents::parse(&b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Contents::default()),
            Err(e) => Err(e).with_context(|| format!("reading {}", self.path().display())),
        }
    }

    fn append(&self, r: &Record) -> Result<()> {
        ensure_dir(&self.dir)?;
        append_line(&self.path(), &encode(r)?)
    }

    /// Journals the old values and root (fsync'd) before the first write, under the lock that
    /// allocates the id. Returns the id and a warning when the lock file could not record it.
    pub fn begin(&self, lock: &mut Lock, plan: &Plan, root: &str) -> Result<(u64, Vec<String>)> {
        let id = self.read()?.max_id().max(lock.last_id()) + 1;
        self.append(&Record {
            id,
            time: now(),
            status: Status::Pending,
            root: Some(root.to_string()),
            plan: Some(plan.clone()),
        })?;
        let mut warnings = Vec::new();
        if let Err(e) = lock.set_last_id(id) {
            warnings.push(format!(
                "{e:#}: a journal cut after this change would go unnoticed"
            ));
        }
        Ok((id, warnings))
    }

    pub fn mark(&self, id: u64, status: Status) -> Result<()> {
        self.append(&Record {
            id,
            time: now(),
            status,
            root: None,
            plan: None,
        })
    }

    /// The change undo would restore, ignoring damage (a hint for the governor toggle).
    pub fn last_open(&self) -> Option<(u64, Plan)> {
        let c = self.read().ok()?.pick_last(0).ok()?.change?;
        Some((c.id, c.plan))
    }
}
