//! One journal line: a change record or a status mark (`Record`), or the seal that ends the
//! file (`Seal`); each encoded as JSON with a CRC32 of the rest as its last field.
//!
//! Two links make damage visible without any other file:
//! - every record carries `prev`, the CRC32 of the line before it (`00000000` on the first), so
//!   a line removed, reordered or spliced in breaks the chain where it happened;
//! - the file ends in a seal naming the CRC32 of the line before it and the newest change id
//!   begun. An append overwrites the seal with the new record and a new seal, so a journal cut
//!   anywhere (even at a record boundary, where what is left reads like a clean, shorter
//!   journal) has no valid seal at its end.

use super::super::plan::Plan;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

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
    /// CRC32 (hex) of the line before this one: the chain.
    pub prev: String,
}

/// The last line of a journal perftop wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seal {
    /// Lines before it (records, damaged lines and older seals alike).
    pub lines: u64,
    /// CRC32 (hex) of the line just before it.
    pub last: String,
    /// The newest change id ever begun in this journal.
    pub last_id: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SealLine {
    seal: Seal,
}

/// The hex CRC32 a `prev` or a seal's `last` names for a line (its bytes, no newline).
pub fn line_crc(line: &[u8]) -> String {
    format!("{:08x}", crc32fast::hash(line))
}

/// `prev` of a journal's first line.
pub const NO_PREV: &str = "00000000";

/// Appends `,"crc":"…"` (a CRC32 of the JSON before it) to `body`'s object.
fn with_crc(body: String) -> Result<String> {
    let open = body.strip_suffix('}').context("encoding journal record")?;
    Ok(format!(
        "{open},\"crc\":\"{:08x}\"}}",
        crc32fast::hash(body.as_bytes())
    ))
}

/// The line for `r`: its JSON with a CRC32 of everything before it as the last field,
/// `…,"crc":"1a2b3c4d"}`, so a flipped byte that still parses (a value, the root) is caught.
pub fn encode(r: &Record) -> Result<String> {
    with_crc(serde_json::to_string(r).context("encoding journal record")?)
}

/// The seal line.
pub fn encode_seal(s: &Seal) -> Result<String> {
    with_crc(serde_json::to_string(&SealLine { seal: s.clone() }).context("encoding seal")?)
}

/// The JSON a line's `crc` vouches for. Every line perftop writes has one: a line without it
/// was not written by this perftop (or was edited) and is not acted on.
fn checked_body(line: &str) -> std::result::Result<String, String> {
    let tail = line
        .len()
        .checked_sub(18)
        .and_then(|at| Some((at, line.get(at..)?)));
    match tail {
        Some((at, t)) if t.starts_with(",\"crc\":\"") && t.ends_with("\"}") => {
            let body = format!("{}}}", &line[..at]);
            let want = u32::from_str_radix(&t[8..16], 16).map_err(|e| format!("crc: {e}"))?;
            if crc32fast::hash(body.as_bytes()) != want {
                return Err("checksum mismatch: the record was altered".into());
            }
            Ok(body)
        }
        // A `crc` field not at the end: the line was cut inside it or altered.
        _ if line.contains(",\"crc\":") => Err("its checksum is cut off or altered".into()),
        _ => Err("no checksum: not a record perftop wrote".into()),
    }
}

/// A decoded line.
#[derive(Debug, Clone)]
pub enum Decoded {
    Record(Record),
    Seal(Seal),
}

/// Parses one line; the checksum must match.
pub fn decode(line: &str) -> std::result::Result<Decoded, String> {
    let body = checked_body(line)?;
    if body.starts_with("{\"seal\":") {
        return serde_json::from_str::<SealLine>(&body)
            .map(|s| Decoded::Seal(s.seal))
            .map_err(|e| e.to_string());
    }
    serde_json::from_str(&body)
        .map(Decoded::Record)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(prev: &str) -> Record {
        Record {
            id: 3,
            time: 1.5,
            status: Status::Applied,
            root: None,
            plan: None,
            prev: prev.into(),
        }
    }

    #[test]
    fn lines_round_trip_and_every_flipped_byte_is_caught() {
        let line = encode(&mark(NO_PREV)).expect("encode");
        assert!(
            line.starts_with("{\"id\":3,") && line.ends_with("\"}"),
            "{line}"
        );
        assert!(matches!(decode(&line), Ok(Decoded::Record(r)) if r.id == 3 && r.prev == NO_PREV));
        for at in 0..line.len() {
            let mut b = line.clone().into_bytes();
            b[at] = if b[at] == b'7' { b'8' } else { b'7' };
            let Ok(s) = String::from_utf8(b) else {
                continue;
            };
            assert!(decode(&s).is_err(), "byte {at}: {s}");
        }
        let seal = Seal {
            lines: 2,
            last: line_crc(line.as_bytes()),
            last_id: 3,
        };
        let s = encode_seal(&seal).expect("seal");
        assert!(matches!(decode(&s), Ok(Decoded::Seal(x)) if x == seal));
    }

    #[test]
    fn a_line_without_a_checksum_is_not_acted_on() {
        // What an older perftop wrote, or a hand-made line: refused, with the reason.
        let plain = r#"{"id":1,"time":1.0,"status":"applied","prev":"00000000"}"#;
        assert_eq!(
            decode(plain).err().as_deref(),
            Some("no checksum: not a record perftop wrote")
        );
    }
}
