//! Digests: which findings held in each recorded interval, as the recorder judged them, written
//! beside the samples only when that set changes, so `explain` finds a day's episodes without
//! decoding a day of samples (decoding is ~300 µs a sample; a digest is a few bytes an hour on
//! a quiet host).
//!
//! A digest record ([`RecordType::Digest`]) comes just before the sample whose interval it
//! judges and holds for that interval and every later one of its segment up to the next digest.
//! Payload, all integers LEB128 unless said: `version u8` (1), `fingerprint u32 LE` (of the
//! thresholds and the perftop version that judged: another judge's digests are not used),
//! `seq` (the sample it precedes, counted from 0 in its segment), `prev` (the previous digest's
//! `seq` + 1 in this segment, 0 for none: a lost digest shows as a break in this chain),
//! `count`, then per finding `severity u8` (0 info, 1 warn, 2 crit), `id length u8`, `id`.

use super::format::RecordType;
use super::step::{put_leb128, read_leb128};
use crate::assess::Assessor;
use crate::findings::{Severity, Thresholds};
use crate::sample::Sample;

/// The findings that held in one interval: rule id and severity, in the order `assess` gave.
pub type Held = Vec<(String, Severity)>;

/// One digest record, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Digest {
    pub fingerprint: u32,
    pub seq: u64,
    pub prev: Option<u64>,
    pub held: Held,
}

const VERSION: u8 = 1;

/// Who judged: the thresholds and this perftop's version (its rules). Digests written under
/// another fingerprint are ignored and the samples decoded instead.
pub fn fingerprint(t: &Thresholds) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(&[0]);
    // Serializing plain numbers and strings cannot fail; an empty string would only make
    // every threshold set share one fingerprint, which the version still separates.
    h.update(serde_json::to_string(t).unwrap_or_default().as_bytes());
    h.finalize()
}

fn severity_byte(s: Severity) -> u8 {
    match s {
        Severity::Info => 0,
        Severity::Warn => 1,
        Severity::Crit => 2,
    }
}

impl Digest {
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.clear();
        out.push(VERSION);
        out.extend_from_slice(&self.fingerprint.to_le_bytes());
        put_leb128(out, self.seq);
        put_leb128(out, self.prev.map_or(0, |p| p.saturating_add(1)));
        put_leb128(out, self.held.len() as u64);
        for (id, sev) in &self.held {
            // Rule ids are short ASCII names; a longer one is cut rather than overflowing.
            let id = &id.as_bytes()[..id.len().min(255)];
            out.push(severity_byte(*sev));
            out.push(id.len() as u8);
            out.extend_from_slice(id);
        }
    }

    /// `None` for a payload this perftop cannot read (another version, cut short).
    pub fn parse(p: &[u8]) -> Option<Digest> {
        if *p.first()? != VERSION {
            return None;
        }
        let fingerprint = u32::from_le_bytes(p.get(1..5)?.try_into().ok()?);
        let mut at = 5;
        let seq = read_leb128(p, &mut at)?;
        let prev = read_leb128(p, &mut at)?.checked_sub(1);
        let count = read_leb128(p, &mut at)?;
        // Each finding takes at least 2 bytes: a count past that is damage, not an allocation.
        if count > (p.len() / 2) as u64 {
            return None;
        }
        let mut held = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let sev = match *p.get(at)? {
                0 => Severity::Info,
                1 => Severity::Warn,
                2 => Severity::Crit,
                _ => return None,
            };
            let len = usize::from(*p.get(at + 1)?);
            let id = std::str::from_utf8(p.get(at + 2..at + 2 + len)?).ok()?;
            held.push((id.to_string(), sev));
            at += 2 + len;
        }
        (at == p.len()).then_some(Digest {
            fingerprint,
            seq,
            prev,
            held,
        })
    }
}

/// The recorder's judge: the same `Assessor` the other modes use, over the recorder's own
/// previous sample (no second read of the host), writing a digest when the set changes.
pub struct Digester {
    assessor: Assessor,
    fingerprint: u32,
    prev: Option<Sample>,
    last: Option<Held>,
    /// The `seq` of the last digest written in this segment.
    last_seq: Option<u64>,
    payload: Vec<u8>,
}

impl Digester {
    pub fn new(t: Thresholds) -> Digester {
        Digester {
            fingerprint: fingerprint(&t),
            assessor: Assessor::new(t),
            prev: None,
            last: None,
            last_seq: None,
            payload: Vec::new(),
        }
    }

    /// Judges the interval ending at `cur`, which will be sample `seq` of its segment (0: a new
    /// segment, which always starts with a digest). Returns the digest record's payload when
    /// one is due (the set changed, or a segment starts). The first sample of a recording has
    /// no interval: its digest is empty. `cur` is copied as the next interval's start; the
    /// recorder hands its sample over instead ([`Digester::judge`], then [`Digester::keep`]).
    pub fn next(&mut self, cur: &Sample, seq: u64) -> Option<(RecordType, &[u8])> {
        let due = self.judge(cur, seq).is_some();
        self.keep_copy(cur);
        due.then_some((RecordType::Digest, self.payload.as_slice()))
    }

    /// [`Digester::next`] without keeping `cur`: call [`Digester::keep`] with it afterwards.
    pub fn judge(&mut self, cur: &Sample, seq: u64) -> Option<(RecordType, &[u8])> {
        let held: Held = match &self.prev {
            Some(p) => self
                .assessor
                .next(Some(p), cur)
                .findings
                .into_iter()
                .map(|f| (f.id, f.severity))
                .collect(),
            None => Vec::new(),
        };
        if seq == 0 {
            self.last_seq = None;
        }
        if seq != 0 && self.last.as_ref() == Some(&held) {
            return None;
        }
        let d = Digest {
            fingerprint: self.fingerprint,
            seq,
            prev: self.last_seq,
            held,
        };
        d.encode(&mut self.payload);
        self.last = Some(d.held);
        self.last_seq = Some(seq);
        Some((RecordType::Digest, &self.payload))
    }

    /// The sample just judged, as the next interval's start: the recorder's own, handed over
    /// rather than copied (a copy of every process and cgroup, each interval).
    pub fn keep(&mut self, cur: Sample) {
        self.prev = Some(cur);
    }

    /// [`Digester::keep`] for a caller that keeps its sample: a copy, into the previous one's
    /// allocations.
    pub fn keep_copy(&mut self, cur: &Sample) {
        match &mut self.prev {
            Some(p) => p.clone_from(cur),
            None => self.prev = Some(cur.clone()),
        }
    }

    /// The recorder stopped and starts again (a gap): the next interval is not judged.
    pub fn restart(&mut self) {
        self.prev = None;
        self.assessor.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_reads_back_as_written_and_damage_reads_as_none() {
        let d = Digest {
            fingerprint: 0xdead_beef,
            seq: 300,
            prev: Some(0),
            held: vec![
                ("memory.swapping".into(), Severity::Crit),
                ("io.pressure".into(), Severity::Warn),
            ],
        };
        let mut b = Vec::new();
        d.encode(&mut b);
        // 1 + 4 + 2 (300) + 1 + 1 + (2 + 15) + (2 + 11)
        assert_eq!(b.len(), 39);
        assert_eq!(Digest::parse(&b), Some(d));
        assert_eq!(Digest::parse(&b[..b.len() - 1]), None);
        let mut bad = b.clone();
        bad[9] = 7; // the first severity
        assert_eq!(Digest::parse(&bad), None);
        let mut huge = b[..7].to_vec();
        put_leb128(&mut huge, 1);
        put_leb128(&mut huge, u64::MAX >> 1);
        assert_eq!(Digest::parse(&huge), None);
    }
}
