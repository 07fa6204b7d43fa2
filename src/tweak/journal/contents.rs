//! The journal as read: every line numbered, readable or damaged, the chain and the seal
//! checked; and how undo picks the change to restore from it.
//!
//! A line that is not UTF-8 or not a record is *damaged*, on its own. Undo restores the newest
//! change still in effect only when nothing after that change's record is damaged, no chain
//! link after it is broken and the journal ends in its seal — else a newer change may be
//! missing, and undoing the older one in its place would break the promise "always undo the
//! right thing". The one line skipped (with a warning) is a torn final line (no newline: the
//! file ends mid-record) that is recognisably a status mark: losing a mark at most makes undo
//! rewrite values it already restored. `perftop tweak journal` lists every line; `perftop tweak
//! undo --id N` undoes a chosen change deliberately.

use super::super::plan::Plan;
use super::record::{decode, line_crc, Decoded, Record, Seal, Status, NO_PREV};

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
    /// A seal that is not the last line: an append after damage left it behind.
    OldSeal,
}

/// Where the journal stands at its end.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum End {
    /// No line at all.
    #[default]
    Empty,
    /// Ends in a seal that matches the line before it.
    Sealed(Seal),
    /// Does not end in a valid seal: why, in words.
    Unsealed(String),
}

/// Where the journal's last line (a seal, when perftop wrote it) starts and how it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tail {
    /// Byte offset of the last non-empty line, when it is a seal (an append overwrites it).
    pub seal_at: Option<usize>,
    /// CRC32 of the line a new record would follow (`prev`), and how many lines it makes.
    pub lines: u64,
}

/// The journal as read: every non-empty line, numbered.
#[derive(Debug, Clone, Default)]
pub struct Contents {
    pub lines: Vec<(usize, Line)>,
    /// Lines whose chain link (`prev`) does not name the line before them: something there
    /// was removed, inserted or changed.
    pub breaks: Vec<usize>,
    pub end: End,
    /// `prev` for the next record written where `tail.seal_at` (or the end) says.
    pub next_prev: String,
    pub tail: Tail,
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
    /// Splits `bytes` into lines; each unreadable line is damaged on its own. Checks each
    /// record's chain link and the seal at the end.
    pub fn parse(bytes: &[u8]) -> Contents {
        let mut c = Contents {
            next_prev: NO_PREV.to_string(),
            ..Contents::default()
        };
        let mut prev = NO_PREV.to_string();
        let mut count = 0u64;
        let mut at = 0usize;
        let pieces: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        let n = pieces.len();
        // (line, offset, seal, crc of the line before it, lines before it)
        let mut last_seal: Option<(usize, usize, Seal, String, u64)> = None;
        let mut last_line = 0;
        for (i, piece) in pieces.into_iter().enumerate() {
            let start = at;
            at += piece.len() + 1;
            if piece.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let torn = i + 1 == n; // the last piece has no newline after it
            let damaged = |why: String| Line::Damaged(Damaged::new(i + 1, torn, piece, why));
            let line = match std::str::from_utf8(piece) {
                Err(e) => damaged(format!("not UTF-8 at byte {}", e.valid_up_to() + 1)),
                Ok(s) => match decode(s) {
                    Ok(Decoded::Record(r)) if r.status == Status::Pending && r.plan.is_none() => {
                        damaged("a pending record without its plan".into())
                    }
                    Ok(Decoded::Record(r)) => {
                        if r.prev != prev {
                            c.breaks.push(i + 1);
                        }
                        Line::Record(r)
                    }
                    Ok(Decoded::Seal(seal)) => {
                        last_seal = Some((i + 1, start, seal, prev.clone(), count));
                        Line::OldSeal
                    }
                    Err(e) => damaged(e),
                },
            };
            c.lines.push((i + 1, line));
            prev = line_crc(piece);
            count += 1;
            last_line = i + 1;
        }
        c.next_prev = prev;
        c.tail.lines = count;
        c.end = match last_seal {
            _ if count == 0 => End::Empty,
            Some((line, offset, seal, before, lines)) if line == last_line => {
                // The seal is overwritten by the next record: that record follows the line
                // before the seal.
                c.next_prev = before.clone();
                c.tail = Tail {
                    seal_at: Some(offset),
                    lines,
                };
                c.lines.pop();
                if seal.last != before || seal.lines != lines {
                    End::Unsealed(format!(
                        "its seal names {} lines ending in a line with checksum {}, but {} lines \
                         ending in {} precede it",
                        seal.lines, seal.last, lines, before
                    ))
                } else {
                    End::Sealed(seal)
                }
            }
            _ => End::Unsealed("its last line is not the seal perftop ends it with".into()),
        };
        c
    }

    /// The newest change id begun, as the seal records it (0: no valid seal).
    pub fn sealed_last_id(&self) -> u64 {
        match &self.end {
            End::Sealed(s) => s.last_id,
            _ => 0,
        }
    }

    pub fn damaged(&self) -> impl Iterator<Item = &Damaged> {
        self.lines.iter().filter_map(|(_, l)| match l {
            Line::Damaged(d) => Some(d),
            Line::Record(_) | Line::OldSeal => None,
        })
    }

    fn records(&self) -> impl Iterator<Item = (usize, &Record)> {
        self.lines.iter().filter_map(|(n, l)| match l {
            Line::Record(r) => Some((*n, r)),
            Line::Damaged(_) | Line::OldSeal => None,
        })
    }

    /// Highest id seen, readable, read from a damaged line, or named by the seal.
    pub fn max_id(&self) -> u64 {
        let readable = self.records().map(|(_, r)| r.id);
        let damaged = self.damaged().filter_map(|d| d.id);
        readable
            .chain(damaged)
            .max()
            .unwrap_or(0)
            .max(self.sealed_last_id())
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
                 was begun; the journal's last is #{}): it was cut off. perftop will not undo \
                 {instead} in its place. Check the values by hand; `perftop tweak journal` lists \
                 the journal and `perftop tweak undo --id N` undoes a chosen change",
                self.max_id()
            ));
        }
        let mut warnings = Vec::new();
        let mut blocking = Vec::new();
        let mut torn_mark = false;
        for d in self.damaged().filter(|d| d.line > after) {
            if d.torn && d.is_mark() {
                torn_mark = true;
                warnings.push(format!(
                    "skipped the torn last line of the journal, a status mark: {}",
                    d.describe()
                ));
            } else {
                blocking.push(d.describe());
            }
        }
        for line in self.breaks.iter().filter(|&&l| l > after) {
            blocking.push(format!(
                "line {line}: its chain link does not name the line before it (a line there \
                 was removed, inserted or changed)"
            ));
        }
        // A torn mark is an append cut short: it overwrote the seal.
        if let End::Unsealed(why) = &self.end {
            if !torn_mark {
                blocking.push(format!(
                    "the end: {why}; the journal's end may have been cut off, and a newer change \
                     with it"
                ));
            }
        }
        if !blocking.is_empty() {
            return Err(format!(
                "the journal is damaged after the last change it can read; a newer change may be \
                 lost there, so perftop will not undo {instead} in its place:\n  {}\n\
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
