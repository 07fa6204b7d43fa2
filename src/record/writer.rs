//! Writing recordings: the frame encoder ([`Writer`], over any `io::Write` so tests can simulate a
//! full disk) and the segmented file recorder ([`Recorder`]) with size/age retention.

use super::format::{
    encode_frame, zstd_level, Action, Gap, Header, KernelMark, RecordType, DEFAULT_KEYFRAME_EVERY,
    FILE_MAGIC, FORMAT_VERSION, FRAME_HEADER, ZSTD_DELTA_MIN_MATCH, ZSTD_LEVEL,
};
use super::step;
use crate::sample::{Sample, SAMPLE_VERSION};
use std::io::{self, Write};
use std::time::{Duration, SystemTime};
use zstd::zstd_safe::CParameter;

/// The keyframe deltas are compressed against (format 1).
struct Key {
    offset: u64,
    comp: zstd::bulk::Compressor<'static>,
}

/// Encodes samples, gaps and actions as frames. Every frame goes out in one `write_all` and a
/// flush, so a killed process leaves at most one torn frame at the tail. After a failed write
/// the writer refuses further writes (the tail may be torn; a new segment is the way on).
pub struct Writer<W: Write> {
    out: W,
    pos: u64,
    keyframe_every: u32,
    since_key: u32,
    key: Option<Key>,
    /// Format 2 writes steps, format 1 deltas against the keyframe.
    steps: Option<step::Encoder>,
    plain: zstd::bulk::Compressor<'static>,
    /// Reused across samples: the sample's JSON (format 1 and plain keyframes only), the frame
    /// payload, the whole frame.
    json: Vec<u8>,
    payload: Vec<u8>,
    buf: Vec<u8>,
    failed: bool,
    samples: u64,
    /// Whether the payload just built starts a chain (a keyframe).
    payload_is_key: bool,
}

/// Monotonic clock in ns (CLOCK_MONOTONIC).
pub fn mono_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    u64::try_from(ts.tv_sec)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::try_from(ts.tv_nsec).unwrap_or(0))
}

/// Wall clock in ms since the Unix epoch.
pub fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A header describing the host a sample came from.
pub fn header_for(s: &Sample, interval: Duration, segment: u32) -> Header {
    Header {
        format_version: FORMAT_VERSION,
        perftop_version: env!("CARGO_PKG_VERSION").to_string(),
        sample_version: SAMPLE_VERSION,
        hostname: s.host.hostname.clone(),
        kernel: s.host.kernel_version.clone().or(s.host.kernel.clone()),
        cpus: s.cpu.cpus.len(),
        nodes: s.nodes.len(),
        disks: s.disks.iter().map(|d| d.name.clone()).collect(),
        nics: s.net.devices.iter().map(|d| d.name.clone()).collect(),
        cpu_model: s.host.cpu_model.clone(),
        interval_ms: u64::try_from(interval.as_millis()).unwrap_or(u64::MAX),
        keyframe_every: DEFAULT_KEYFRAME_EVERY,
        segment,
        created_wall_ms: wall_ms(),
    }
}

impl<W: Write> Writer<W> {
    /// Writes the file magic and the header frame.
    pub fn new(out: W, header: &Header) -> io::Result<Writer<W>> {
        let mut w = Writer {
            out,
            pos: 0,
            keyframe_every: header.keyframe_every.max(1),
            since_key: 0,
            key: None,
            steps: match header.format_version {
                ..=1 => None,
                v => Some(step::Encoder::new(v)?),
            },
            plain: plain_compressor()?,
            json: Vec::new(),
            payload: Vec::with_capacity(4096),
            buf: Vec::with_capacity(4096),
            failed: false,
            samples: 0,
            payload_is_key: false,
        };
        let json = serde_json::to_vec(header).map_err(io::Error::other)?;
        w.buf.clear();
        w.buf.extend_from_slice(&FILE_MAGIC);
        encode_frame(
            &mut w.buf,
            RecordType::Header,
            header.created_wall_ms,
            mono_ns(),
            &json,
        );
        w.emit()?;
        Ok(w)
    }

    fn emit(&mut self) -> io::Result<()> {
        if self.failed {
            return Err(io::Error::other(
                "recording stopped after an earlier write error",
            ));
        }
        let r = self
            .out
            .write_all(&self.buf)
            .and_then(|()| self.out.flush());
        match r {
            Ok(()) => {
                self.pos += self.buf.len() as u64;
                Ok(())
            }
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    /// Appends one sample: a keyframe every `keyframe_every` samples, a step (format 2) or a
    /// delta (format 1) otherwise. Returns the bytes written.
    pub fn sample(&mut self, s: &Sample, mono_ns: u64) -> io::Result<usize> {
        let marked = match KernelMark::of(s) {
            Some(m) => {
                let json = serde_json::to_vec(&m).map_err(io::Error::other)?;
                self.buf.clear();
                encode_frame(
                    &mut self.buf,
                    RecordType::Kernel,
                    s.time.wall_ms,
                    mono_ns,
                    &json,
                );
                self.emit()?;
                self.buf.len()
            }
            None => 0,
        };
        let due = self.since_key >= self.keyframe_every;
        let kind = match &mut self.steps {
            // Split straight from the sample: its JSON is written only for a plain keyframe.
            Some(enc) => match enc.payload(s, due, &mut self.payload)? {
                Some(is_key) => {
                    self.payload_is_key = is_key;
                    RecordType::Step
                }
                None => {
                    // Not JSON the transform reads: a plain keyframe, and a new chain after it.
                    enc.reset();
                    self.json_of(s)?;
                    self.plain_keyframe()?;
                    RecordType::Keyframe
                }
            },
            None => {
                self.json_of(s)?;
                self.delta_payload(due)?
            }
        };
        let offset = self.pos;
        self.buf.clear();
        encode_frame(&mut self.buf, kind, s.time.wall_ms, mono_ns, &self.payload);
        self.emit()?;
        if kind == RecordType::Keyframe && self.steps.is_none() {
            self.key = Some(Key {
                offset,
                comp: delta_compressor(&self.json)?,
            });
        }
        if let (RecordType::Step, Some(enc)) = (kind, &mut self.steps) {
            // The next step is written against this sample, named by its record's checksum.
            let crc = self
                .buf
                .get(FRAME_HEADER - 4..FRAME_HEADER)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u32::from_le_bytes);
            enc.written(crc);
        }
        self.since_key = if self.payload_is_key {
            1
        } else {
            self.since_key + 1
        };
        self.samples += 1;
        Ok(marked + self.buf.len())
    }

    /// Writes `s`'s JSON into `self.json`.
    fn json_of(&mut self, s: &Sample) -> io::Result<()> {
        self.json.clear();
        serde_json::to_writer(&mut self.json, s).map_err(io::Error::other)
    }

    /// Format 1: a delta against the keyframe, or a keyframe when one is due.
    fn delta_payload(&mut self, due: bool) -> io::Result<RecordType> {
        let Some(key) = self.key.as_mut().filter(|_| !due) else {
            self.plain_keyframe()?;
            return Ok(RecordType::Keyframe);
        };
        let p = &mut self.payload;
        p.clear();
        let raw_len = u32::try_from(self.json.len()).map_err(io::Error::other)?;
        p.extend_from_slice(&raw_len.to_le_bytes());
        p.extend_from_slice(&key.offset.to_le_bytes());
        compress_into(&mut key.comp, &self.json, p)?;
        self.payload_is_key = false;
        Ok(RecordType::Delta)
    }

    /// `raw_len u32` + zstd(JSON).
    fn plain_keyframe(&mut self) -> io::Result<()> {
        let level = zstd_level(self.json.len());
        let p = &mut self.payload;
        p.clear();
        let raw_len = u32::try_from(self.json.len()).map_err(io::Error::other)?;
        p.extend_from_slice(&raw_len.to_le_bytes());
        self.plain
            .set_parameter(CParameter::CompressionLevel(level))?;
        compress_into(&mut self.plain, &self.json, p)?;
        self.payload_is_key = true;
        Ok(())
    }

    /// Appends a record that is not a sample (a digest), as given.
    pub fn record(
        &mut self,
        kind: RecordType,
        payload: &[u8],
        wall_ms: i64,
        mono_ns: u64,
    ) -> io::Result<()> {
        self.buf.clear();
        encode_frame(&mut self.buf, kind, wall_ms, mono_ns, payload);
        self.emit()
    }

    /// Appends a gap/restart marker.
    pub fn gap(&mut self, g: &Gap, wall_ms: i64, mono_ns: u64) -> io::Result<()> {
        let json = serde_json::to_vec(g).map_err(io::Error::other)?;
        self.buf.clear();
        encode_frame(&mut self.buf, RecordType::Gap, wall_ms, mono_ns, &json);
        self.emit()
    }

    /// Appends an action record (a tweak applied or undone).
    pub fn action(&mut self, a: &Action, wall_ms: i64, mono_ns: u64) -> io::Result<()> {
        let json = serde_json::to_vec(a).map_err(io::Error::other)?;
        self.buf.clear();
        encode_frame(&mut self.buf, RecordType::Action, wall_ms, mono_ns, &json);
        self.emit()
    }

    /// Bytes written so far (file magic included).
    pub fn bytes(&self) -> u64 {
        self.pos
    }

    /// Samples written so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    pub fn get_ref(&self) -> &W {
        &self.out
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// The keyframe compressor. The frame content size is left out: the payload's `raw_len` holds it.
fn plain_compressor() -> io::Result<zstd::bulk::Compressor<'static>> {
    let mut c = zstd::bulk::Compressor::new(ZSTD_LEVEL)?;
    c.include_contentsize(false)?;
    Ok(c)
}

/// The compressor for the deltas after the keyframe whose JSON is `key` (a raw-content
/// dictionary, copied into the compressor).
fn delta_compressor(key: &[u8]) -> io::Result<zstd::bulk::Compressor<'static>> {
    let mut c = zstd::bulk::Compressor::with_dictionary(zstd_level(key.len()), key)?;
    c.include_contentsize(false)?;
    c.set_parameter(CParameter::MinMatch(ZSTD_DELTA_MIN_MATCH))?;
    Ok(c)
}

/// Appends the compressed `src` to `out` without an intermediate buffer.
pub(super) fn compress_into(
    c: &mut zstd::bulk::Compressor<'static>,
    src: &[u8],
    out: &mut Vec<u8>,
) -> io::Result<()> {
    out.reserve(zstd::zstd_safe::compress_bound(src.len()));
    let mut cur = io::Cursor::new(out);
    cur.set_position(cur.get_ref().len() as u64);
    c.compress_to_buffer(src, &mut cur)?;
    Ok(())
}

pub use super::recorder::{
    is_disk_full, list_segments, refuse_non_regular, segment_path, Recorder, Retention,
};
