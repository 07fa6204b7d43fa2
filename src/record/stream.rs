//! The recording format as a live byte stream (`perftop stream` writes it, `perftop ssh` reads
//! it): the file magic, a header frame, then one record per sample, read as the bytes come.
//!
//! Only the current chain is kept (the header, the last keyframe and the steps after it, at
//! most `keyframe_every` records), scanned and decoded by the same reader as a file: the
//! decoder resumes at the last sample decoded, so each step is decoded once. Anything that is
//! not the format (a login banner, a shell's error, a damaged frame) ends the stream with an
//! error that quotes it: the channel is reliable, so damage means the other end is not perftop.

use super::format::{decode_head, frame_crc, Header, RecordType, FILE_MAGIC, FRAME_HEADER};
use super::reader::{Decoder, Recording};
use super::step::Payload;
use crate::sample::Sample;
use anyhow::{anyhow, bail, Context, Result};
use std::sync::Arc;

/// The most a chain may hold before a keyframe must come: 4x the writer's chain, and a size a
/// host's samples never reach. Past it the stream is refused, not buffered without end.
const MAX_CHAIN_RECORDS: usize = 240;
const MAX_CHAIN_BYTES: usize = 64 << 20;
/// A frame's payload as the stream accepts it (the file format allows 64 MiB).
const MAX_FRAME: usize = 32 << 20;

/// What a stream gave.
#[derive(Debug)]
pub enum Got {
    Header(Box<Header>),
    Sample(Box<Streamed>),
}

/// A sample as the stream brought it: decoded, and the frame it came in, which the remote
/// host's history keeps as it is (already compressed, in the recording format) rather than
/// encoding the sample again (`Chain` decodes it when the view steps back).
#[derive(Debug)]
pub struct Streamed {
    pub sample: Sample,
    /// The whole frame (head and payload), as received.
    pub frame: Vec<u8>,
    /// The frame starts a chain (a keyframe): the steps after it decode from it.
    pub key: bool,
    /// The file magic and the header frame the chain decodes under, shared by every sample of
    /// one connection.
    pub header: Arc<Vec<u8>>,
}

/// A chain of the stream kept as its bytes (the header, a keyframe, the steps after it) and
/// read back with the recording reader, so decoding it later is decoding a recording.
#[derive(Debug, Clone)]
pub struct Chain {
    header: Arc<Vec<u8>>,
    frames: Vec<u8>,
    records: usize,
}

impl Chain {
    pub fn new(header: Arc<Vec<u8>>) -> Chain {
        Chain {
            header,
            frames: Vec::new(),
            records: 0,
        }
    }

    /// Whether `header` is the one this chain decodes under (a new connection sends its own).
    pub fn has_header(&self, header: &Arc<Vec<u8>>) -> bool {
        Arc::ptr_eq(&self.header, header)
    }

    pub fn push(&mut self, frame: &[u8]) {
        self.frames.extend_from_slice(frame);
        self.records += 1;
    }

    /// Samples held.
    pub fn len(&self) -> usize {
        self.records
    }

    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// The samples' frame bytes (the header is shared and counted once per connection).
    pub fn frame_bytes(&self) -> usize {
        self.frames.len()
    }

    /// The chain as a recording, to decode its samples with `Recording::decode`.
    pub fn recording(&self) -> Result<Recording> {
        let mut bytes = Vec::with_capacity(self.header.len() + self.frames.len());
        bytes.extend_from_slice(&self.header);
        bytes.extend_from_slice(&self.frames);
        let rec = Recording::from_bytes("the stream's history", bytes)?;
        if rec.samples.len() != self.records {
            bail!(
                "the kept chain does not read back ({} of {} samples; {})",
                rec.samples.len(),
                self.records,
                rec.warnings.join("; ")
            );
        }
        Ok(rec)
    }
}

/// Decodes a stream pushed to it in pieces of any size.
#[derive(Default)]
pub struct StreamDecoder {
    /// Bytes received and not yet a whole frame.
    pending: Vec<u8>,
    magic: bool,
    /// The file magic, the header frame, then the current chain's records.
    chain: Vec<u8>,
    header_len: usize,
    /// `chain`'s magic and header frame, handed out with each sample.
    header: Arc<Vec<u8>>,
    records: usize,
    dec: Decoder,
    /// Bytes taken in (for the cost figures).
    pub bytes: u64,
}

impl StreamDecoder {
    pub fn new() -> StreamDecoder {
        StreamDecoder::default()
    }

    /// Takes `bytes` and returns what they completed, in order.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Got>> {
        self.bytes += bytes.len() as u64;
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        if !self.magic {
            let n = self.pending.len().min(FILE_MAGIC.len());
            if self.pending[..n] != FILE_MAGIC[..n] {
                bail!(
                    "the remote did not send a perftop stream: {}",
                    quote(&self.pending)
                );
            }
            if n < FILE_MAGIC.len() {
                return Ok(out);
            }
            self.pending.drain(..FILE_MAGIC.len());
            self.magic = true;
        }
        let mut at = 0;
        while let Some(len) = self.frame_len(at)? {
            let frame = self.pending[at..at + len].to_vec();
            at += len;
            if let Some(g) = self.frame(&frame)? {
                out.push(g);
            }
        }
        self.pending.drain(..at);
        Ok(out)
    }

    /// The length of the whole frame at `at` in `pending`, once all of it is there.
    fn frame_len(&self, at: usize) -> Result<Option<usize>> {
        let b = &self.pending[at..];
        if b.len() < FRAME_HEADER {
            return Ok(None);
        }
        let h = decode_head(b).ok_or_else(|| anyhow!("stream out of step: {}", quote(b)))?;
        let len = usize::try_from(h.len)?;
        if len > MAX_FRAME {
            bail!("stream frame claims {len} bytes: not a perftop sample");
        }
        if b.len() < FRAME_HEADER + len {
            return Ok(None);
        }
        if frame_crc(&b[..FRAME_HEADER], &b[FRAME_HEADER..FRAME_HEADER + len]) != h.crc {
            bail!("stream frame damaged (checksum)");
        }
        Ok(Some(FRAME_HEADER + len))
    }

    fn frame(&mut self, frame: &[u8]) -> Result<Option<Got>> {
        let kind = decode_head(frame).map(|h| h.kind).unwrap_or_default();
        let payload = &frame[FRAME_HEADER..];
        match RecordType::from_u8(kind) {
            Some(RecordType::Header) => {
                let h: Header =
                    serde_json::from_slice(payload).context("the stream's header frame")?;
                if h.format_version < 2 {
                    bail!("stream format {} (this perftop reads 2)", h.format_version);
                }
                self.chain.clear();
                self.chain.extend_from_slice(&FILE_MAGIC);
                self.chain.extend_from_slice(frame);
                self.header_len = self.chain.len();
                self.header = Arc::new(self.chain.clone());
                self.restart();
                Ok(Some(Got::Header(Box::new(h))))
            }
            Some(RecordType::Step) | Some(RecordType::Keyframe) => {
                if self.header_len == 0 {
                    bail!("stream sample before its header");
                }
                let key = kind == RecordType::Keyframe as u8
                    || Payload::parse(payload).is_some_and(|p| p.prev.is_none());
                if key {
                    self.chain.truncate(self.header_len);
                    self.restart();
                }
                if self.records >= MAX_CHAIN_RECORDS
                    || self.chain.len() + frame.len() > MAX_CHAIN_BYTES
                {
                    bail!("stream sent {} samples with no keyframe", self.records);
                }
                self.chain.extend_from_slice(frame);
                self.records += 1;
                let rec = Recording::from_bytes("the stream", self.chain.clone())?;
                if rec.samples.len() != self.records {
                    bail!(
                        "stream chain does not read back ({} of {} samples; {})",
                        rec.samples.len(),
                        self.records,
                        rec.warnings.join("; ")
                    );
                }
                let sample = rec.decode(self.records - 1, &mut self.dec)?;
                Ok(Some(Got::Sample(Box::new(Streamed {
                    sample,
                    frame: frame.to_vec(),
                    key,
                    header: Arc::clone(&self.header),
                }))))
            }
            // Gaps, actions and types a later perftop adds: not the dashboard's.
            _ => Ok(None),
        }
    }

    /// A new chain: the decoder forgets the last one.
    fn restart(&mut self) {
        self.records = 0;
        self.dec = Decoder::default();
    }
}

/// The first bytes of what came, as text (a shell's `command not found`, a login banner).
fn quote(b: &[u8]) -> String {
    let head = &b[..b.len().min(200)];
    let text = String::from_utf8_lossy(head);
    format!("\"{}\"", crate::safe::line(text.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::writer::{header_for, Writer};
    use std::time::Duration;

    fn sample(t: i64, v: u64) -> Sample {
        let mut s = Sample::default();
        s.time.wall_ms = t;
        s.host.hostname = Some("remote-1".into());
        s.cpu.ctxt = Some(v);
        s
    }

    /// Samples written by the recording writer come back equal when the stream arrives one
    /// byte at a time and across keyframes (every 60th sample starts a new chain).
    #[test]
    fn samples_come_back_byte_by_byte_and_across_keyframes() {
        let first = sample(1000, 7);
        let mut w = Writer::new(Vec::new(), &header_for(&first, Duration::from_secs(1), 0))
            .expect("header");
        let mut sent = Vec::new();
        for i in 0..130u64 {
            let s = sample(1000 + i as i64 * 1000, 7 + i * i);
            w.sample(&s, i * 1_000_000_000).expect("sample");
            sent.push(s);
        }
        let bytes = w.into_inner();
        let mut d = StreamDecoder::new();
        let mut got = Vec::new();
        for b in &bytes {
            got.extend(d.push(std::slice::from_ref(b)).expect("push"));
        }
        assert!(
            matches!(got.first(), Some(Got::Header(h)) if h.hostname.as_deref() == Some("remote-1"))
        );
        let samples: Vec<_> = got
            .into_iter()
            .filter_map(|g| match g {
                Got::Sample(s) => Some(s.sample),
                Got::Header(_) => None,
            })
            .collect();
        assert_eq!(samples.len(), 130);
        assert_eq!(samples, sent);
        assert_eq!(d.bytes, bytes.len() as u64);
    }

    #[test]
    fn a_shell_error_is_quoted_and_damage_refused() {
        let mut d = StreamDecoder::new();
        let e = d
            .push(b"sh: 1: /root/.cache/perftop/perftop-0.1.0: not found\n")
            .expect_err("not a stream");
        assert!(format!("{e:#}").contains("not found"), "{e:#}");

        let first = sample(1000, 7);
        let mut w = Writer::new(Vec::new(), &header_for(&first, Duration::from_secs(1), 0))
            .expect("header");
        w.sample(&first, 0).expect("sample");
        let mut bytes = w.into_inner();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        let mut d = StreamDecoder::new();
        let e = d.push(&bytes).expect_err("damaged");
        assert!(format!("{e:#}").contains("checksum"), "{e:#}");
    }
}
