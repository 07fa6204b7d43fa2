//! Format 2's step records: their payload layout, the writer's side (a sample against the
//! previous one, or a keyframe against nothing) and the reader's (a chain decoded from its
//! keyframe, resuming where the last decode left off).
//!
//! A chain is a keyframe and the steps after it, up to the next keyframe. Each step is written
//! against the sample before it (`numdiff` splits the JSON; zstd compresses the column and the
//! skeleton with the previous sample's as dictionary) and names that sample by its record's
//! CRC-32, which inserted bytes and copied records leave as it is, so the reader can tell a step
//! that follows the chain's last sample from a copy or one whose predecessor was lost.

use super::format::{
    zstd_level, KEYFRAME_SKELETON, STEP_AFTER, STEP_KEY_DICT, STEP_SAME_SKELETON,
    ZSTD_SKELETON_LEVEL, ZSTD_STEP_MIN_MATCH,
};
use super::inflate::{too_large, Inflater};
use super::numdiff::{self, Fields};
use super::reader::Recording;
use anyhow::{anyhow, bail, Result};
use serde::Serialize;
use std::io;
use zstd::zstd_safe::CParameter;

/// A step's payload: the previous sample's record checksum (none: a keyframe), the raw column
/// and skeleton lengths (none: the previous skeleton), and the compressed column and skeleton.
pub(super) struct Payload<'a> {
    pub prev: Option<u32>,
    col_len: u64,
    skel_len: Option<u64>,
    /// A keyframe whose skeleton is compressed against [`KEYFRAME_SKELETON`] (format 3).
    key_dict: bool,
    zcol: &'a [u8],
    zskel: &'a [u8],
}

impl Payload<'_> {
    pub fn parse(p: &[u8]) -> Option<Payload<'_>> {
        let flags = *p.first()?;
        if flags & !(STEP_AFTER | STEP_SAME_SKELETON | STEP_KEY_DICT) != 0 {
            return None;
        }
        // Only a keyframe (after nothing, with its own skeleton) uses the built-in dictionary.
        let key_dict = flags & STEP_KEY_DICT != 0;
        if key_dict && flags & (STEP_AFTER | STEP_SAME_SKELETON) != 0 {
            return None;
        }
        let mut at = 1;
        let prev = if flags & STEP_AFTER != 0 {
            at += 4;
            Some(u32::from_le_bytes(p.get(1..5)?.try_into().ok()?))
        } else {
            None
        };
        let col_len = read_leb128(p, &mut at)?;
        let skel_len = match flags & STEP_SAME_SKELETON {
            0 => Some(read_leb128(p, &mut at)?),
            _ => None,
        };
        let zcol_len = usize::try_from(read_leb128(p, &mut at)?).ok()?;
        let rest = p.get(at..)?;
        Some(Payload {
            prev,
            col_len,
            skel_len,
            key_dict,
            zcol: rest.get(..zcol_len)?,
            zskel: rest.get(zcol_len..)?,
        })
    }

    /// The most the step claims to decode to: its column or its skeleton (the sample's JSON is
    /// held to the same limit).
    pub fn claim(&self) -> u64 {
        self.col_len.max(self.skel_len.unwrap_or(0))
    }
}

/// Reads an unsigned LEB128 number at `*at`, moving past it.
pub(super) fn read_leb128(p: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *p.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f).checked_shl(shift)?;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Appends `v` as unsigned LEB128 (7 bits a byte, low first; the high bit says more follow).
pub(super) fn put_leb128(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// A sample's skeleton, column and fields: what the next step is written or read against.
#[derive(Default)]
struct Parts {
    skel: Vec<u8>,
    col: Vec<u8>,
    fields: Fields,
}

impl Parts {
    /// Splits `json` against `prev` (nothing, for a keyframe): the reader's side, after a plain
    /// keyframe.
    fn encode(&mut self, json: &[u8], prev: &Fields) -> Result<(), String> {
        numdiff::encode(json, prev, &mut self.skel, &mut self.col, &mut self.fields)
    }
}

/// The writer's side: the previous sample (with its record's checksum) and the next one.
pub(super) struct Encoder {
    prev: Option<(u32, Parts)>,
    /// Format 3: keyframes' skeletons against [`KEYFRAME_SKELETON`].
    key_dict: bool,
    next: Parts,
    z: zstd::bulk::Compressor<'static>,
}

impl Encoder {
    /// An encoder writing format `version` (2 or later).
    pub fn new(version: u32) -> io::Result<Encoder> {
        let mut z = zstd::bulk::Compressor::new(zstd_level(0))?;
        z.include_contentsize(false)?;
        Ok(Encoder {
            prev: None,
            key_dict: version >= 3,
            next: Parts::default(),
            z,
        })
    }

    /// Writes the payload of `value` (a sample) into `out`: a step against the previous sample,
    /// or a keyframe (a step against nothing) when `key` asks for one, there is no previous
    /// sample, or the transform cannot take this sample against it. Returns whether it is a
    /// keyframe, or `None` when the transform cannot take the sample at all (the caller writes a
    /// plain keyframe and calls [`Encoder::reset`]). The sample is split straight from the value
    /// ([`numdiff::direct`]), as [`numdiff::encode`] splits its JSON, without writing the JSON.
    pub fn payload<T: Serialize + ?Sized>(
        &mut self,
        value: &T,
        key: bool,
        out: &mut Vec<u8>,
    ) -> io::Result<Option<bool>> {
        let split = |p: &mut Parts, prev: &Fields| {
            numdiff::direct::encode(value, prev, &mut p.skel, &mut p.col, &mut p.fields)
                .map(|e| e.json_len)
        };
        let mut prev = self.prev.as_ref().filter(|_| !key);
        let mut json_len = 0;
        if let Some((_, p)) = prev {
            match split(&mut self.next, &p.fields) {
                Ok(n) => json_len = n,
                Err(_) => prev = None,
            }
        }
        if prev.is_none() {
            match split(&mut self.next, &Fields::default()) {
                Ok(n) => json_len = n,
                Err(_) => return Ok(None),
            }
        }
        let level = zstd_level(json_len);
        let next = &self.next;
        let same = prev.is_some_and(|(_, p)| p.skel == next.skel);
        out.clear();
        let mut flags = 0;
        if prev.is_some() {
            flags |= STEP_AFTER;
        }
        if same {
            flags |= STEP_SAME_SKELETON;
        }
        let key_dict = prev.is_none() && self.key_dict;
        if key_dict {
            flags |= STEP_KEY_DICT;
        }
        out.push(flags);
        if let Some((crc, _)) = prev {
            out.extend_from_slice(&crc.to_le_bytes());
        }
        put_leb128(out, next.col.len() as u64);
        if !same {
            put_leb128(out, next.skel.len() as u64);
        }
        let (pskel, pcol): (&[u8], &[u8]) = match prev {
            Some((_, p)) => (&p.skel, &p.col),
            None if key_dict => (KEYFRAME_SKELETON, &[]),
            None => (&[], &[]),
        };
        let mut zcol = Vec::with_capacity(next.col.len() / 4 + 64);
        compress(&mut self.z, level, pcol, &next.col, &mut zcol)?;
        put_leb128(out, zcol.len() as u64);
        out.extend_from_slice(&zcol);
        if !same {
            compress(&mut self.z, ZSTD_SKELETON_LEVEL, pskel, &next.skel, out)?;
        }
        Ok(Some(prev.is_none()))
    }

    /// The payload just built was written in a record with checksum `crc`: the next step is
    /// written against it.
    pub fn written(&mut self, crc: u32) {
        let next = std::mem::take(&mut self.next);
        if let Some((_, old)) = self.prev.replace((crc, next)) {
            // Its buffers serve the next sample.
            self.next = old;
        }
    }

    /// A plain keyframe was written: the next sample starts a new chain.
    pub fn reset(&mut self) {
        self.prev = None;
    }
}

/// Appends zstd(`src`) with `dict` as a raw-content dictionary (none when empty).
fn compress(
    z: &mut zstd::bulk::Compressor<'static>,
    level: i32,
    dict: &[u8],
    src: &[u8],
    out: &mut Vec<u8>,
) -> io::Result<()> {
    z.set_dictionary(level, dict)?;
    z.set_parameter(CParameter::MinMatch(ZSTD_STEP_MIN_MATCH))?;
    super::writer::compress_into(z, src, out)
}

/// The last sample decoded in a chain.
struct Last {
    idx: usize,
    key: usize,
    json: Vec<u8>,
    /// What the next step is decoded against; for a keyframe, computed when a step needs it.
    parts: Option<Parts>,
}

/// The reader's side: the last sample decoded in a chain, so that reading in order decodes each
/// step once.
#[derive(Default)]
pub(super) struct Decoder {
    last: Option<Last>,
    z: Option<Inflater>,
    /// The record being decoded.
    record: Vec<u8>,
}

impl Decoder {
    /// The JSON of step `i` of `rec`, decoded forward from the last sample decoded when that is
    /// earlier in the same chain, else from the chain's keyframe (at most 60 records).
    pub fn step_to(&mut self, rec: &Recording, i: usize) -> Result<&[u8]> {
        let res = self.walk(rec, i);
        if res.is_err() {
            self.last = None;
        }
        res?;
        Ok(self.last.as_ref().map_or(&[], |l| &l.json[..]))
    }

    fn walk(&mut self, rec: &Recording, i: usize) -> Result<()> {
        let key = rec
            .samples
            .get(i)
            .ok_or_else(|| anyhow!("no sample {i}"))?
            .key;
        let resume = self
            .last
            .as_ref()
            .is_some_and(|c| c.key == key && c.idx <= i && c.idx >= key);
        // The next record to decode.
        let mut j = key;
        let z = match &mut self.z {
            Some(z) => z,
            None => self.z.insert(Inflater::new()?),
        };
        match &self.last {
            Some(l) if resume => j = l.idx + 1,
            _ => {
                let k = &rec.samples[key];
                if !k.is_key {
                    bail!("sample {i}: its chain does not start at a keyframe");
                }
                let mut json = Vec::new();
                if !k.step {
                    j = key + 1;
                    rec.keyframe_json(key, z, &mut self.record, &mut json)?;
                }
                self.last = Some(Last {
                    idx: key,
                    key,
                    json,
                    parts: None,
                });
            }
        }
        let last = self.last.as_mut().ok_or_else(|| anyhow!("no chain"))?;
        while j <= i {
            let r = &rec.samples[j];
            if !r.step || r.key != key {
                bail!("sample {j} is not the next step of its chain");
            }
            let sp = Payload::parse(rec.read_record(j, &mut self.record)?)
                .ok_or_else(|| anyhow!("sample {j}: short step record"))?;
            let limit = rec.limit(j);
            if sp.claim() > limit as u64 {
                return Err(too_large(
                    &format!("sample {j}'s step record"),
                    sp.claim(),
                    limit,
                ));
            }
            if sp.prev.is_none() != (j == key) || (j == key && sp.skel_len.is_none()) {
                bail!("sample {j}: step record does not fit its chain");
            }
            let prev = match last.parts.take() {
                _ if j == key => Parts::default(),
                Some(p) => p,
                None => {
                    // After a plain keyframe: split its JSON.
                    let mut p = Parts::default();
                    p.encode(&last.json, &Fields::default())
                        .map_err(|e| anyhow!("sample {}: {e}", last.idx))?;
                    p
                }
            };
            z.dictionary(&prev.col)?;
            let mut col = Vec::new();
            z.inflate(
                &format!("sample {j}'s column"),
                sp.zcol,
                sp.col_len,
                limit,
                &mut col,
            )?;
            let skel = match sp.skel_len {
                None => prev.skel,
                Some(n) => {
                    z.dictionary(if sp.key_dict {
                        KEYFRAME_SKELETON
                    } else {
                        &prev.skel
                    })?;
                    let mut skel = Vec::new();
                    z.inflate(
                        &format!("sample {j}'s skeleton"),
                        sp.zskel,
                        n,
                        limit,
                        &mut skel,
                    )?;
                    skel
                }
            };
            let mut fields = Fields::default();
            numdiff::decode(
                &skel,
                &col,
                &prev.fields,
                &mut last.json,
                &mut fields,
                limit,
            )
            .map_err(|e| anyhow!("sample {j}: {e}"))?;
            last.parts = Some(Parts { skel, col, fields });
            last.idx = j;
            j += 1;
        }
        Ok(())
    }
}
