//! Reading recordings: one scan over every segment checks each frame's checksum, builds the
//! seek index (every sample's time, segment, payload range and keyframe) and collects gap and
//! action markers. Damaged bytes are skipped with a warning: the scan looks for the next `SYNC`
//! whose frame checksums, so one bad record never hides the rest. Samples are decoded on demand.

use super::format::{
    decode_head, frame_crc, Action, Gap, Header, RecordType, FILE_MAGIC, FORMAT_VERSION,
    FRAME_HEADER, MAX_PAYLOAD, SYNC,
};
use super::step;
use super::writer::list_segments;
use crate::sample::Sample;
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};

/// Largest segment read (they are read whole); only a damaged or foreign file is near it.
const MAX_SEGMENT_BYTES: u64 = 16 << 30;

/// Where one sample lives.
#[derive(Debug, Clone)]
pub struct SampleRef {
    pub wall_ms: i64,
    pub mono_ns: u64,
    /// Index into `Recording::segments`.
    pub segment: usize,
    pub(super) start: usize,
    pub(super) end: usize,
    /// Index (into `Recording::samples`) of the keyframe this sample decodes against; itself for
    /// a keyframe.
    pub key: usize,
    pub is_key: bool,
    /// A step (format 2): decoded from the sample before it, back to its keyframe.
    pub(super) step: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    Gap(Gap),
    Action(Action),
}

/// A marker on the timeline, placed before sample `before`.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub wall_ms: i64,
    pub before: usize,
    pub kind: EventKind,
}

impl Event {
    /// True for markers across which rates must not be computed (a recorder start or stop).
    pub fn breaks_interval(&self) -> bool {
        matches!(&self.kind, EventKind::Gap(g) if g.reason != "rotate")
    }
}

#[derive(Debug, Clone)]
pub struct Segment {
    pub path: PathBuf,
    pub header: Option<Header>,
    pub(super) data: Vec<u8>,
}

/// A scanned recording (all its segments).
#[derive(Debug, Clone, Default)]
pub struct Recording {
    pub path: PathBuf,
    pub segments: Vec<Segment>,
    pub samples: Vec<SampleRef>,
    pub events: Vec<Event>,
    /// What was skipped, in plain words (damaged records, torn tail, unknown record types).
    pub warnings: Vec<String>,
}

/// Decompression state reused across samples: the current keyframe and its dictionary
/// (format 1 deltas), the last sample of a chain of steps (format 2), so that reading in order
/// decodes each step once.
#[derive(Default)]
pub struct Decoder {
    key: Option<usize>,
    dict: Option<zstd::bulk::Decompressor<'static>>,
    pub(super) steps: step::Decoder,
}

fn find_sync(b: &[u8], from: usize) -> Option<usize> {
    b.get(from..)?
        .windows(4)
        .position(|w| w == SYNC)
        .map(|p| p + from)
}

impl Recording {
    /// Opens the recording at `path` and its later segments (`path.1`, `path.2`, ...).
    pub fn open(path: &Path) -> Result<Recording> {
        let segs = list_segments(path);
        if segs.is_empty() {
            // Give the OS's own words (no such file, permission denied).
            std::fs::metadata(path).with_context(|| format!("opening {}", path.display()))?;
            bail!("{}: no recording segments found", path.display());
        }
        let mut rec = Recording {
            path: path.to_path_buf(),
            ..Recording::default()
        };
        let only = segs.len() == 1;
        for (_, p) in segs {
            let read = crate::root::read_regular_file(&p, MAX_SEGMENT_BYTES)
                .with_context(|| format!("reading {}", p.display()));
            // One unreadable segment (a directory, a dangling link, a FIFO) costs only itself.
            if let Err(e) = read.and_then(|data| rec.add_segment(&p, data)) {
                if only {
                    return Err(e);
                }
                rec.warnings.push(format!("{e:#}; segment skipped"));
            }
        }
        Ok(rec)
    }

    /// Scans one segment's bytes (for tests and fuzzing: no file needed).
    pub fn from_bytes(name: &str, data: Vec<u8>) -> Result<Recording> {
        let mut rec = Recording {
            path: PathBuf::from(name),
            ..Recording::default()
        };
        rec.add_segment(Path::new(name), data)?;
        Ok(rec)
    }

    fn add_segment(&mut self, path: &Path, data: Vec<u8>) -> Result<()> {
        let name = path.display().to_string();
        if data.is_empty() {
            bail!("{name} is empty: not a perftop recording (or its recorder died before writing a header)");
        }
        if data.len() < FILE_MAGIC.len() || data[..FILE_MAGIC.len()] != FILE_MAGIC {
            bail!("{name} is not a perftop recording (it does not start with the PERFTOP magic)");
        }
        let seg = self.segments.len();
        let mut header = None;
        let first_sample = self.samples.len();
        // Keyframes by their offset from the start of the file they were written in: a delta
        // names its keyframe that way. `base` moves when another recording's magic follows
        // (`cat F G`), and a keyframe copied twice leaves both copies' offsets usable.
        let mut keys: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
        // The chain of steps being read: its samples by record checksum (which names them, and
        // stays the same when bytes are inserted or a record is copied), and its last sample,
        // which the next step must name. Cleared at each keyframe: at most one chain.
        let mut chain: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
        let mut tail: Option<usize> = None;
        // Steps skipped since the last keyframe because the chain was broken: (first byte, count).
        let mut broken: Option<(u64, usize)> = None;
        let note_broken = |w: &mut Vec<String>, broken: &mut Option<(u64, usize)>| {
            if let Some((at, n)) = broken.take() {
                w.push(format!(
                    "{name}: {n} sample(s) from byte {at} follow a missing or damaged sample; skipped up to the next keyframe"
                ));
            }
        };
        let mut base = 0usize;
        let mut pos = FILE_MAGIC.len();
        let mut unknown_noted = Vec::new();
        let mut bad: Option<(usize, &'static str)> = None;
        let warn_bad = |w: &mut Vec<String>,
                        bad: &mut Option<(usize, &'static str)>,
                        to: Option<usize>| {
            if let Some((at, why)) = bad.take() {
                w.push(match to {
                    Some(to) => format!(
                        "{name}: {why} at byte {at}; skipped {} bytes to the next good record",
                        to - at
                    ),
                    None => format!(
                        "{name}: {why} at byte {at}; the last {} bytes are unreadable (torn or damaged tail)",
                        data.len() - at
                    ),
                });
            }
        };
        while pos < data.len() {
            // A frame is usable when its head decodes, its length fits and its CRC matches;
            // otherwise note why once and resync at the next record marker.
            let checked = match decode_head(&data[pos..]) {
                None if data.len() - pos < FRAME_HEADER
                    && data[pos..].iter().zip(SYNC).all(|(a, b)| *a == b) =>
                {
                    Err("incomplete record")
                }
                None => Err("no record marker"),
                Some(head) => {
                    let len = head.len as usize;
                    let end = pos + FRAME_HEADER + len;
                    if len > MAX_PAYLOAD {
                        Err("bad record length")
                    } else if end > data.len() {
                        Err("incomplete record")
                    } else if frame_crc(
                        &data[pos..pos + FRAME_HEADER],
                        &data[pos + FRAME_HEADER..end],
                    ) != head.crc
                    {
                        Err("checksum mismatch")
                    } else {
                        Ok((head, len, end))
                    }
                }
            };
            let (head, len, end) = match checked {
                Ok(v) => v,
                Err(_) if data[pos..].starts_with(&FILE_MAGIC) => {
                    // Another recording appended whole (`cat F G`): its offsets start here.
                    warn_bad(&mut self.warnings, &mut bad, Some(pos));
                    base = pos;
                    keys.clear();
                    chain.clear();
                    tail = None;
                    pos += FILE_MAGIC.len();
                    continue;
                }
                Err(why) => {
                    bad.get_or_insert((pos, why));
                    match find_sync(&data, pos + 1) {
                        Some(p) => {
                            pos = p;
                            continue;
                        }
                        None => break,
                    }
                }
            };
            warn_bad(&mut self.warnings, &mut bad, Some(pos));
            let payload = &data[pos + FRAME_HEADER..end];
            let frame_at = pos as u64;
            pos = end;
            match RecordType::from_u8(head.kind) {
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
                    header = Some(h);
                }
                Some(t @ (RecordType::Keyframe | RecordType::Step))
                    if t == RecordType::Keyframe
                        || step::Payload::parse(payload).is_some_and(|p| p.prev.is_none()) =>
                {
                    let rel = frame_at - base as u64;
                    // The same keyframe twice (a copied record): one sample, both offsets.
                    if let Some(prev) = self.samples[first_sample..].last().filter(|p| {
                        p.is_key
                            && p.mono_ns == head.mono_ns
                            && p.wall_ms == head.wall_ms
                            && data[p.start..p.end] == *payload
                    }) {
                        let k = prev.key;
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
                        start: end - len,
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
                                start: end - len,
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
                                start: end - len,
                                end,
                                key: k,
                                is_key: false,
                                step: false,
                            });
                        }
                        _ => self.warnings.push(format!(
                            "{name}: sample at byte {frame_at} depends on a keyframe that is missing or damaged; skipped"
                        )),
                    }
                }
                Some(t @ (RecordType::Gap | RecordType::Action)) => {
                    let kind = if t == RecordType::Gap {
                        serde_json::from_slice(payload).map(EventKind::Gap)
                    } else {
                        serde_json::from_slice(payload).map(EventKind::Action)
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
        self.segments.push(Segment {
            path: path.to_path_buf(),
            header,
            data,
        });
        Ok(())
    }

    /// The first header found (host, kernel, topology).
    pub fn header(&self) -> Option<&Header> {
        self.segments.iter().find_map(|s| s.header.as_ref())
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Index of the last sample at or before `wall_ms` (0 when all are after it).
    pub fn seek(&self, wall_ms: i64) -> usize {
        self.samples
            .partition_point(|s| s.wall_ms <= wall_ms)
            .saturating_sub(1)
    }

    /// True when an interval-breaking marker lies between sample `i - 1` and sample `i`.
    pub fn gap_before(&self, i: usize) -> bool {
        let lo = self.events.partition_point(|e| e.before < i);
        self.events[lo..]
            .iter()
            .take_while(|e| e.before == i)
            .any(Event::breaks_interval)
    }

    /// A plain keyframe's JSON.
    pub(super) fn keyframe_json(&self, i: usize) -> Result<Vec<u8>> {
        let (p, raw_len) = self.payload(i)?;
        Ok(zstd::bulk::decompress(&p[4..], raw_len as usize)?)
    }

    /// The payload of sample `i`'s record.
    pub(super) fn record(&self, i: usize) -> Option<&[u8]> {
        let r = self.samples.get(i)?;
        self.segments.get(r.segment)?.data.get(r.start..r.end)
    }

    fn payload(&self, i: usize) -> Result<(&[u8], u32)> {
        let r = self
            .samples
            .get(i)
            .ok_or_else(|| anyhow!("no sample {i}"))?;
        let p = &self.segments[r.segment].data[r.start..r.end];
        let raw_len = p
            .get(..4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
            .ok_or_else(|| anyhow!("short sample record"))?;
        Ok((p, raw_len))
    }

    /// Decodes sample `i`: a keyframe; a delta (format 1) with its keyframe; a step (format 2)
    /// with the steps before it back to its keyframe (at most 60 records), or from the last
    /// sample decoded when it is earlier in the same chain.
    pub fn decode(&self, i: usize, dec: &mut Decoder) -> Result<Sample> {
        self.with_json(i, dec, |json| {
            serde_json::from_slice(json).context("sample record does not hold a perftop sample")
        })
    }

    /// The JSON of sample `i`, byte for byte as its writer serialized it.
    pub fn decode_json(&self, i: usize, dec: &mut Decoder) -> Result<Vec<u8>> {
        self.with_json(i, dec, |json| Ok(json.to_vec()))
    }

    fn with_json<T>(
        &self,
        i: usize,
        dec: &mut Decoder,
        f: impl FnOnce(&[u8]) -> Result<T>,
    ) -> Result<T> {
        let r = self
            .samples
            .get(i)
            .ok_or_else(|| anyhow!("no sample {i}"))?;
        if r.step {
            // A keyframe step, or a step decoded from its chain's keyframe.
            return f(dec.steps.step_to(self, i)?);
        }
        if r.is_key {
            return f(&self.keyframe_json(i)?);
        }
        let (p, raw_len) = self.payload(i)?;
        if dec.key != Some(r.key) {
            let (kp, klen) = self.payload(r.key)?;
            let kjson = zstd::bulk::decompress(&kp[4..], klen as usize)?;
            dec.dict = Some(zstd::bulk::Decompressor::with_dictionary(&kjson)?);
            dec.key = Some(r.key);
        }
        let d = dec
            .dict
            .as_mut()
            .ok_or_else(|| anyhow!("no keyframe dictionary"))?;
        f(&d.decompress(p.get(12..).unwrap_or_default(), raw_len as usize)?)
    }
}
