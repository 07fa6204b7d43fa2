//! Reading recordings: the seek index and markers one scan of every segment builds (`scan`),
//! and samples decoded on demand, each record read again from its file when it is decoded
//! (`source`) and checked against the checksum the scan saw, and decoded no larger than a
//! sample of the recorded host can be (`inflate`).

use super::format::{decode_head, frame_crc, Action, Gap, Header, KernelMark, FRAME_HEADER};
use super::inflate::Inflater;
use super::source::Source;
use super::step;
use super::writer::list_segments;
use crate::sample::Sample;
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};

/// Where one sample lives.
#[derive(Debug, Clone)]
pub struct SampleRef {
    pub wall_ms: i64,
    pub mono_ns: u64,
    /// Index into `Recording::segments`.
    pub segment: usize,
    /// The payload's byte range in its segment.
    pub(super) start: u64,
    pub(super) end: u64,
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
    /// The kernel log's events that arrived with sample `before`.
    Kernel(KernelMark),
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

/// A digest (`record::digest`): from sample `before` on, up to the next mark of its segment or
/// the segment's end, the intervals held these findings as judged under this fingerprint;
/// `None`: unknown (a record was lost or damaged), decode the samples.
#[derive(Debug, Clone, PartialEq)]
pub struct DigestMark {
    pub segment: usize,
    pub before: usize,
    pub judged: Option<(u32, super::digest::Held)>,
}

#[derive(Debug, Clone)]
pub struct Segment {
    pub path: PathBuf,
    pub header: Option<Header>,
    /// The most a sample of this segment may decode to (`inflate::sample_limit` of its header).
    pub(super) limit: usize,
    pub(super) src: Source,
}

/// A scanned recording (all its segments).
#[derive(Debug, Clone, Default)]
pub struct Recording {
    pub path: PathBuf,
    pub segments: Vec<Segment>,
    pub samples: Vec<SampleRef>,
    pub events: Vec<Event>,
    /// The digests, in order.
    pub digests: Vec<DigestMark>,
    /// What was skipped, in plain words (damaged records, torn tail, unknown record types).
    pub warnings: Vec<String>,
}

/// Decompression state reused across samples: the current keyframe and its dictionary
/// (format 1 deltas), the last sample of a chain of steps (format 2), so that reading in order
/// decodes each step once.
#[derive(Default)]
pub struct Decoder {
    key: Option<usize>,
    /// Format 1: decodes deltas, with keyframe `key`'s JSON as dictionary.
    delta: Option<Inflater>,
    /// Plain keyframes.
    plain: Option<Inflater>,
    /// The record being decoded, and the JSON decoded.
    record: Vec<u8>,
    json: Vec<u8>,
    pub(super) steps: step::Decoder,
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
            let scanned = Source::open(&p)
                .map_err(anyhow::Error::from)
                .and_then(|src| rec.add_segment(&p, src))
                .with_context(|| format!("reading {}", p.display()));
            // One unreadable segment (a directory, a dangling link, a FIFO) costs only itself.
            if let Err(e) = scanned {
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
        rec.add_segment(Path::new(name), Source::Bytes(std::sync::Arc::new(data)))?;
        Ok(rec)
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

    /// The most sample `i` may decode to.
    pub(super) fn limit(&self, i: usize) -> usize {
        self.samples
            .get(i)
            .and_then(|r| self.segments.get(r.segment))
            .map_or(super::inflate::MAX_SAMPLE_JSON, |s| s.limit)
    }

    /// The payload of sample `i`'s record, read from its segment into `buf`: the bytes the
    /// scan checked (the checksum is checked again, as the file may have changed since).
    pub(super) fn read_record<'b>(&self, i: usize, buf: &'b mut Vec<u8>) -> Result<&'b [u8]> {
        let r = self
            .samples
            .get(i)
            .ok_or_else(|| anyhow!("no sample {i}"))?;
        let seg = self
            .segments
            .get(r.segment)
            .ok_or_else(|| anyhow!("sample {i}: no segment {}", r.segment))?;
        let at = r.start - FRAME_HEADER as u64;
        let len = usize::try_from(r.end - r.start)?;
        buf.clear();
        buf.resize(FRAME_HEADER + len, 0);
        seg.src
            .read_at(at, buf)
            .with_context(|| format!("reading the record at byte {at}"))?;
        match decode_head(buf) {
            Some(h)
                if h.len as usize == len
                    && frame_crc(&buf[..FRAME_HEADER], &buf[FRAME_HEADER..]) == h.crc =>
            {
                Ok(&buf[FRAME_HEADER..])
            }
            _ => bail!("the record at byte {at} changed since the recording was opened"),
        }
    }

    /// A plain keyframe's JSON, into `out`.
    pub(super) fn keyframe_json(
        &self,
        i: usize,
        inf: &mut Inflater,
        record: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let p = self.read_record(i, record)?;
        let raw_len = raw_len(p)?;
        inf.dictionary(&[])?;
        inf.inflate("the keyframe", &p[4..], raw_len, self.limit(i), out)
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
        let plain = match &mut dec.plain {
            Some(p) => p,
            None => dec.plain.insert(Inflater::new()?),
        };
        if r.is_key {
            self.keyframe_json(i, plain, &mut dec.record, &mut dec.json)?;
            return f(&dec.json);
        }
        let delta = match &mut dec.delta {
            Some(d) => d,
            None => dec.delta.insert(Inflater::new()?),
        };
        if dec.key != Some(r.key) {
            dec.key = None;
            self.keyframe_json(r.key, plain, &mut dec.record, &mut dec.json)?;
            delta.dictionary(&dec.json)?;
            dec.key = Some(r.key);
        }
        let p = self.read_record(i, &mut dec.record)?;
        let raw_len = raw_len(p)?;
        let z = p.get(12..).unwrap_or_default();
        delta.inflate(
            "the sample record",
            z,
            raw_len,
            self.limit(i),
            &mut dec.json,
        )?;
        f(&dec.json)
    }
}

/// The `raw_len u32` a keyframe or delta payload starts with.
fn raw_len(p: &[u8]) -> Result<u64> {
    p.get(..4)
        .and_then(|b| b.try_into().ok())
        .map(|b| u64::from(u32::from_le_bytes(b)))
        .ok_or_else(|| anyhow!("short sample record"))
}
