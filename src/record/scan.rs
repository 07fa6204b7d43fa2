//! The scan that opens a segment: one pass through a bounded window (`source::Window`) checks
//! each frame's checksum, builds the seek index (every sample's time, segment, payload range
//! and keyframe) and collects gap and action markers. Damaged bytes are skipped with a
//! warning: the scan looks for the next `SYNC` whose frame checksums (skipping the holes of a
//! sparse file), so one bad record never hides the rest. A sample record that claims more than
//! a sample of the recorded host can be (`inflate::sample_limit`) is left out here, undecoded.

use super::digest::Digest;
use super::format::{
    decode_head, frame_crc, Header, RecordType, FILE_MAGIC, FORMAT_VERSION, FRAME_HEADER,
    MAX_PAYLOAD, SYNC,
};
use super::inflate::{sample_limit, too_large};
use super::reader::{DigestMark, Event, EventKind, Recording, SampleRef, Segment};
use super::source::{Source, Window};
use super::step;
use anyhow::{bail, Result};
use std::collections::HashMap;
use std::path::Path;

/// The decoded size a sample record claims (the larger of a step's column and skeleton), when
/// its payload says.
fn claimed(kind: RecordType, payload: &[u8]) -> Option<u64> {
    match kind {
        RecordType::Keyframe | RecordType::Delta => payload
            .get(..4)
            .and_then(|b| b.try_into().ok())
            .map(|b| u64::from(u32::from_le_bytes(b))),
        RecordType::Step => step::Payload::parse(payload).map(|p| p.claim()),
        _ => None,
    }
}

impl Recording {
    pub(super) fn add_segment(&mut self, path: &Path, src: Source) -> Result<()> {
        let name = path.display().to_string();
        let size = src.len();
        if size == 0 {
            bail!("{name} is empty: not a perftop recording (or its recorder died before writing a header)");
        }
        let mut win = Window::new(&src);
        if win.get(0, FILE_MAGIC.len())? != FILE_MAGIC {
            bail!("{name} is not a perftop recording (it does not start with the PERFTOP magic)");
        }
        let seg = self.segments.len();
        let mut header: Option<Header> = None;
        // The largest sample any header of this segment allows.
        let mut seg_limit: Option<usize> = None;
        let first_sample = self.samples.len();
        // Keyframes by their offset from the start of the file they were written in: a delta
        // names its keyframe that way. `base` moves when another recording's magic follows
        // (`cat F G`), and a keyframe copied twice leaves both copies' offsets usable.
        let mut keys: HashMap<u64, usize> = HashMap::new();
        // The chain of steps being read: its samples by record checksum (which names them, and
        // stays the same when bytes are inserted or a record is copied), and its last sample,
        // which the next step must name. Cleared at each keyframe: at most one chain.
        let mut chain: HashMap<u32, usize> = HashMap::new();
        let mut tail: Option<usize> = None;
        // Steps skipped since the last keyframe because the chain was broken: (first byte, count).
        let mut broken: Option<(u64, usize)> = None;
        // Digests are trusted while their chain is whole and nothing in the segment was lost.
        let mut digests = DigestChain::default();
        let note_broken = |w: &mut Vec<String>, broken: &mut Option<(u64, usize)>| {
            if let Some((at, n)) = broken.take() {
                w.push(format!(
                    "{name}: {n} sample(s) from byte {at} follow a missing or damaged sample; skipped up to the next keyframe"
                ));
            }
        };
        let mut base = 0u64;
        let mut pos = FILE_MAGIC.len() as u64;
        let mut unknown_noted = Vec::new();
        let mut bad: Option<(u64, &'static str)> = None;
        let warn_bad = |w: &mut Vec<String>,
                        bad: &mut Option<(u64, &'static str)>,
                        to: Option<u64>| {
            if let Some((at, why)) = bad.take() {
                w.push(match to {
                        Some(to) => format!(
                            "{name}: {why} at byte {at}; skipped {} bytes to the next good record",
                            to - at
                        ),
                        None => format!(
                            "{name}: {why} at byte {at}; the last {} bytes are unreadable (torn or damaged tail)",
                            size - at
                        ),
                    });
            }
        };
        while pos < size {
            // A frame is usable when its head decodes, its length fits and its CRC matches;
            // otherwise note why once and resync at the next record marker.
            let head_bytes = win.get(pos, FRAME_HEADER)?;
            let checked = match decode_head(head_bytes) {
                None if head_bytes.len() < FRAME_HEADER
                    && head_bytes.iter().zip(SYNC).all(|(a, b)| *a == b) =>
                {
                    Err("incomplete record")
                }
                None => Err("no record marker"),
                Some(head) => {
                    let len = head.len as usize;
                    let end = pos + (FRAME_HEADER + len) as u64;
                    if len > MAX_PAYLOAD {
                        Err("bad record length")
                    } else if end > size {
                        Err("incomplete record")
                    } else {
                        let frame = win.get(pos, FRAME_HEADER + len)?;
                        if frame_crc(&frame[..FRAME_HEADER], &frame[FRAME_HEADER..]) != head.crc {
                            Err("checksum mismatch")
                        } else {
                            Ok((head, len, end))
                        }
                    }
                }
            };
            let (head, len, end) = match checked {
                Ok(v) => v,
                Err(_) if win.get(pos, FILE_MAGIC.len())? == FILE_MAGIC => {
                    // Another recording appended whole (`cat F G`): its offsets start here.
                    digests.lost(&mut self.digests, seg, self.samples.len());
                    warn_bad(&mut self.warnings, &mut bad, Some(pos));
                    base = pos;
                    keys.clear();
                    chain.clear();
                    tail = None;
                    pos += FILE_MAGIC.len() as u64;
                    continue;
                }
                Err(why) => {
                    bad.get_or_insert((pos, why));
                    digests.lost(&mut self.digests, seg, self.samples.len());
                    match win.find_sync(pos + 1)? {
                        Some(p) => {
                            pos = p;
                            continue;
                        }
                        None => break,
                    }
                }
            };
            warn_bad(&mut self.warnings, &mut bad, Some(pos));
            let frame_at = pos;
            let start = end - len as u64;
            let payload = &win.get(pos, FRAME_HEADER + len)?[FRAME_HEADER..];
            pos = end;
            let kind = RecordType::from_u8(head.kind);
            // A sample record claiming more than a sample of this host can be is not indexed:
            // decoding it would cost what it claims (up to 4 GiB a record).
            let limit = sample_limit(header.as_ref().or(self.header()));
            if let Some(claim) = kind
                .and_then(|k| claimed(k, payload))
                .filter(|c| *c > limit as u64)
            {
                self.warnings.push(format!(
                    "{name}: sample at byte {frame_at}: {}; skipped",
                    too_large("its record", claim, limit)
                ));
                digests.lost(&mut self.digests, seg, self.samples.len());
                if kind == Some(RecordType::Step) {
                    // The steps after it cannot be decoded without it.
                    tail = None;
                    chain.clear();
                }
                continue;
            }
            match kind {
                Some(RecordType::Header) => {
                    // A header that checksums but does not parse loses the host facts, not
                    // the samples after it.
                    let h: Header = match serde_json::from_slice(payload) {
                        Ok(h) => h,
                        Err(e) => {
                            self.warnings.push(format!(
                                "{name}: unreadable header at byte {frame_at} ({e}); samples kept"
                            ));
                            continue;
                        }
                    };
                    if h.format_version > FORMAT_VERSION {
                        bail!(
                            "{name} was written by a newer perftop ({}, format {}); this one reads formats up to {FORMAT_VERSION}",
                            h.perftop_version,
                            h.format_version
                        );
                    }
                    seg_limit = seg_limit.max(Some(sample_limit(Some(&h))));
                    header = Some(h);
                }
                Some(t @ (RecordType::Keyframe | RecordType::Step))
                    if t == RecordType::Keyframe
                        || step::Payload::parse(payload).is_some_and(|p| p.prev.is_none()) =>
                {
                    let rel = frame_at - base;
                    // The same keyframe twice (a copied record): one sample, both offsets.
                    let copy = match self.samples[first_sample..].last() {
                        Some(p)
                            if p.is_key
                                && p.mono_ns == head.mono_ns
                                && p.wall_ms == head.wall_ms
                                && p.end - p.start == len as u64 =>
                        {
                            let mut prev = vec![0; len];
                            src.read_at(p.start, &mut prev).is_ok() && prev == payload
                        }
                        _ => false,
                    };
                    if copy {
                        let k = self.samples.len() - 1;
                        let k = self.samples[k].key;
                        keys.insert(rel, k);
                        chain.insert(head.crc, k);
                        self.warnings.push(format!(
                            "{name}: duplicate keyframe at byte {frame_at}; skipped"
                        ));
                        continue;
                    }
                    let idx = self.samples.len();
                    self.samples.push(SampleRef {
                        wall_ms: head.wall_ms,
                        mono_ns: head.mono_ns,
                        segment: seg,
                        start,
                        end,
                        key: idx,
                        is_key: true,
                        step: t == RecordType::Step,
                    });
                    keys.insert(rel, idx);
                    note_broken(&mut self.warnings, &mut broken);
                    chain.clear();
                    chain.insert(head.crc, idx);
                    tail = Some(idx);
                }
                // (A keyframe, or a step with no previous sample, was matched above.)
                Some(RecordType::Step | RecordType::Keyframe) => {
                    let prev_crc = step::Payload::parse(payload).and_then(|p| p.prev);
                    // A step follows exactly the chain's last sample: one that names an older
                    // sample is a copied record, one that names nothing follows a lost one.
                    let prev = prev_crc.and_then(|want| chain.get(&want).copied());
                    match (prev, tail) {
                        (Some(p), Some(t)) if p == t => {
                            let idx = self.samples.len();
                            let key = self.samples[t].key;
                            self.samples.push(SampleRef {
                                wall_ms: head.wall_ms,
                                mono_ns: head.mono_ns,
                                segment: seg,
                                start,
                                end,
                                key,
                                is_key: false,
                                step: true,
                            });
                            chain.insert(head.crc, idx);
                            tail = Some(idx);
                        }
                        (Some(_), Some(_)) => self.warnings.push(format!(
                            "{name}: sample at byte {frame_at} repeats an earlier one (a copied record); skipped"
                        )),
                        _ => {
                            tail = None;
                            digests.lost(&mut self.digests, seg, self.samples.len());
                            match &mut broken {
                                Some((_, n)) => *n += 1,
                                None => broken = Some((frame_at, 1)),
                            }
                        }
                    }
                }
                Some(RecordType::Delta) => {
                    let key_off = payload
                        .get(4..12)
                        .and_then(|b| b.try_into().ok())
                        .map(u64::from_le_bytes);
                    match key_off.and_then(|want| keys.get(&want).copied()) {
                        Some(k) => {
                            self.samples.push(SampleRef {
                                wall_ms: head.wall_ms,
                                mono_ns: head.mono_ns,
                                segment: seg,
                                start,
                                end,
                                key: k,
                                is_key: false,
                                step: false,
                            });
                        }
                        _ => {
                            digests.lost(&mut self.digests, seg, self.samples.len());
                            self.warnings.push(format!(
                                "{name}: sample at byte {frame_at} depends on a keyframe that is missing or damaged; skipped"
                            ));
                        }
                    }
                }
                Some(t @ (RecordType::Gap | RecordType::Action | RecordType::Kernel)) => {
                    let kind = match t {
                        RecordType::Gap => serde_json::from_slice(payload).map(EventKind::Gap),
                        RecordType::Action => {
                            serde_json::from_slice(payload).map(EventKind::Action)
                        }
                        _ => serde_json::from_slice(payload).map(EventKind::Kernel),
                    };
                    match kind {
                        Ok(kind) => self.events.push(Event {
                            wall_ms: head.wall_ms,
                            before: self.samples.len(),
                            kind,
                        }),
                        Err(e) => self
                            .warnings
                            .push(format!("{name}: unreadable marker at byte {frame_at}: {e}")),
                    }
                }
                Some(RecordType::Digest) => digests.add(
                    &mut self.digests,
                    seg,
                    self.samples.len(),
                    (self.samples.len() - first_sample) as u64,
                    payload,
                ),
                None => {
                    if !unknown_noted.contains(&head.kind) {
                        unknown_noted.push(head.kind);
                        self.warnings.push(format!(
                            "{name}: record type {} is not known to this perftop; skipped",
                            head.kind
                        ));
                    }
                }
            }
        }
        warn_bad(&mut self.warnings, &mut bad, None);
        note_broken(&mut self.warnings, &mut broken);
        if header.is_none() {
            self.warnings
                .push(format!("{name}: header record missing or damaged"));
        }
        let limit = seg_limit.unwrap_or_else(|| sample_limit(self.header()));
        drop(win);
        self.segments.push(Segment {
            path: path.to_path_buf(),
            header,
            limit,
            src,
        });
        Ok(())
    }
}

/// Where a segment's digest chain stands during its scan.
#[derive(Default)]
struct DigestChain {
    /// Something was lost: no digest of this segment is trusted from here on.
    broken: bool,
    /// The last digest's `seq`.
    last: Option<u64>,
}

impl DigestChain {
    /// A digest record before sample `before`, the `seq`-th sample read in segment `seg`.
    fn add(&mut self, marks: &mut Vec<DigestMark>, seg: usize, before: usize, seq: u64, p: &[u8]) {
        if self.broken {
            return;
        }
        match Digest::parse(p) {
            // Its own seq says no sample of the segment was lost before it, and its prev that
            // no digest was.
            Some(d) if d.seq == seq && d.prev == self.last => {
                self.last = Some(d.seq);
                marks.push(DigestMark {
                    segment: seg,
                    before,
                    judged: Some((d.fingerprint, d.held)),
                });
            }
            _ => {
                // A digest was lost since the last one: what that one said may have stopped
                // holding anywhere after it.
                if let Some(m) = marks.last_mut().filter(|m| m.segment == seg) {
                    m.judged = None;
                }
                self.lost(marks, seg, before);
            }
        }
    }

    /// A record was lost or damaged before sample `before`.
    fn lost(&mut self, marks: &mut Vec<DigestMark>, seg: usize, before: usize) {
        if !self.broken {
            self.broken = true;
            marks.push(DigestMark {
                segment: seg,
                before,
                judged: None,
            });
        }
    }
}
