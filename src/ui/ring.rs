//! The in-memory history behind pause and step-back: samples kept zstd-compressed within a count
//! and a byte budget, oldest dropped first. Each sample's JSON is compressed against the first
//! complete sample's (a zstd raw-content dictionary): a host's samples share their keys and most
//! of their values, so a 2-vCPU VM's 22.8 KB sample is ~0.8 KB instead of ~6.2 KB, and the
//! compressor, finding long matches, does a third of the work.

use crate::sample::Sample;
use std::collections::VecDeque;

/// Memory the ring may hold, whatever `--keep` asks for: a monitor must not become the load.
pub const DEFAULT_BUDGET_BYTES: usize = 32 * 1024 * 1024;

/// zstd's fastest regular level: the ring is written every second and read only on a step back.
const LEVEL: i32 = 1;

pub struct SampleRing {
    frames: VecDeque<Vec<u8>>,
    /// Each kept sample's wall clock (ms since the epoch), for jumping to a time.
    walls: VecDeque<i64>,
    /// The frames' bytes and the dictionary's: what the budget bounds.
    bytes: usize,
    max_len: usize,
    budget: usize,
    /// The newest sample decoded, so live mode never decompresses.
    newest: Option<Sample>,
    /// Samples dropped from the front so far (the first kept one has no predecessor).
    pub dropped: u64,
    /// The JSON of the first complete sample (not a first look, whose per-CPU detail is still
    /// being read): every later frame is compressed against it. Set once and never replaced, so
    /// every frame after it decodes with the same one.
    dict: Option<Vec<u8>>,
    /// Frames at the front compressed before `dict` was set (the first look, or a host whose
    /// first sample could not be encoded): decoded without it.
    plain: usize,
    /// Reused compression context (holding the dictionary once set), JSON buffer and output
    /// buffer: a sample costs one allocation of its own, its frame at its exact size (zstd's
    /// bulk `compress` keeps the worst-case capacity, ~4x what a frame needs here).
    compressor: Option<zstd::bulk::Compressor<'static>>,
    json: Vec<u8>,
    out: Vec<u8>,
}

impl SampleRing {
    pub fn new(max_len: usize, budget: usize) -> SampleRing {
        SampleRing {
            frames: VecDeque::new(),
            walls: VecDeque::new(),
            bytes: 0,
            max_len: max_len.max(2),
            budget,
            newest: None,
            dropped: 0,
            dict: None,
            plain: 0,
            compressor: zstd::bulk::Compressor::new(LEVEL).ok(),
            json: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Most samples kept (the byte budget may keep fewer).
    pub fn capacity(&self) -> usize {
        self.max_len
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Adds a sample; returns how many old ones were dropped to make room.
    pub fn push(&mut self, s: Sample) -> usize {
        // Encoding cannot fail for our own types; if it ever did, the sample is still shown
        // live (newest) and simply not kept for stepping back.
        self.json.clear();
        let encoded = serde_json::to_writer(&mut self.json, &s).is_ok();
        if encoded && self.dict.is_none() && !s.cpu.detail_pending {
            self.set_dict();
        }
        let frame = match (encoded, self.compressor.as_mut()) {
            (true, Some(c)) => {
                self.out.clear();
                self.out
                    .reserve(zstd::zstd_safe::compress_bound(self.json.len()));
                match c.compress_to_buffer(&self.json, &mut self.out) {
                    Ok(_) => self.out.as_slice().to_vec(),
                    Err(_) => Vec::new(),
                }
            }
            _ => Vec::new(),
        };
        if self.dict.is_none() {
            self.plain += 1;
        }
        self.bytes += frame.len();
        super::bounded::push(&mut self.frames, frame, self.max_len);
        super::bounded::push(&mut self.walls, s.time.wall_ms, self.max_len);
        self.newest = Some(s);
        let mut dropped = 0;
        while self.frames.len() > 2
            && (self.frames.len() > self.max_len || self.bytes > self.budget)
        {
            if let Some(f) = self.frames.pop_front() {
                self.bytes -= f.len();
            }
            self.walls.pop_front();
            self.plain = self.plain.saturating_sub(1);
            dropped += 1;
        }
        self.dropped += dropped as u64;
        dropped
    }

    /// Makes the JSON in `self.json` the dictionary of every later frame. A compressor that
    /// cannot take it is replaced by one without: frames are then compressed alone, as before.
    fn set_dict(&mut self) {
        let dict = self.json.clone();
        self.compressor = zstd::bulk::Compressor::with_dictionary(LEVEL, &dict)
            .ok()
            .or_else(|| zstd::bulk::Compressor::new(LEVEL).ok());
        self.bytes += dict.len();
        self.dict = Some(dict);
    }

    /// Sample `i` (0 = oldest kept).
    pub fn get(&self, i: usize) -> Option<Sample> {
        if i + 1 == self.frames.len() && self.newest.is_some() {
            return self.newest.clone();
        }
        let frame = self.frames.get(i)?;
        let mut d = match (&self.dict, i < self.plain) {
            (Some(dict), false) => zstd::bulk::Decompressor::with_dictionary(dict).ok()?,
            _ => zstd::bulk::Decompressor::new().ok()?,
        };
        // Samples are small; a generous bound guards against a corrupt length.
        let json = d.decompress(frame, 512 * 1024 * 1024).ok()?;
        serde_json::from_slice(&json).ok()
    }

    /// Wall clock of sample `i` (ms since the epoch).
    pub fn wall_ms(&self, i: usize) -> Option<i64> {
        self.walls.get(i).copied()
    }

    /// Index of the last sample at or before `wall_ms` (0 when all are after it).
    pub fn seek(&self, wall_ms: i64) -> usize {
        self.walls
            .partition_point(|&w| w <= wall_ms)
            .saturating_sub(1)
    }

    /// Moves the decoded newest sample out (its compressed copy stays in the ring).
    pub fn take_newest(&mut self) -> Option<Sample> {
        self.newest.take()
    }

    pub fn newest(&self) -> Option<&Sample> {
        self.newest.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: f64) -> Sample {
        let mut s = Sample::default();
        s.time.uptime_s = Some(t);
        s.host.hostname = Some("h".repeat(1000));
        s
    }

    #[test]
    fn round_trip_count_and_budget() {
        let mut r = SampleRing::new(3, usize::MAX);
        for i in 0..5 {
            r.push(sample(i as f64));
        }
        assert_eq!(r.len(), 3);
        assert_eq!(r.dropped, 2);
        assert_eq!(r.get(0).and_then(|s| s.time.uptime_s), Some(2.0));
        assert_eq!(r.get(2).and_then(|s| s.time.uptime_s), Some(4.0));
        assert!(r.get(3).is_none());
        // The budget, with samples that do not compress against each other (every frame about
        // the same size): the dictionary and four frames hold at most five samples.
        let noisy = |t: u64| {
            let mut s = sample(t as f64);
            let mut x = t.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            s.host.hostname = Some(
                (0..400)
                    .map(|_| {
                        x = x
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(1_442_695_040_888_963_407);
                        char::from(b'a' + (x >> 59) as u8)
                    })
                    .collect(),
            );
            s
        };
        let mut all = SampleRing::new(100, usize::MAX);
        for t in 0..10 {
            all.push(noisy(t));
        }
        let dict = all.dict.as_ref().map_or(0, Vec::len);
        let one = (all.bytes() - dict) / 10;
        let mut small = SampleRing::new(100, dict + one * 4);
        for t in 0..10 {
            small.push(noisy(t));
        }
        assert!(
            small.len() <= 5 && small.len() >= 2,
            "budget bounds the ring: {} kept",
            small.len()
        );
        assert!(small.bytes() <= dict + one * 5);
    }

    /// A host-like sample: a few hundred named counters that move a little every second.
    fn host(t: u64) -> Sample {
        let mut s = Sample::default();
        s.time.uptime_s = Some(t as f64);
        s.time.wall_ms = 1_700_000_000_000 + t as i64 * 1000;
        for i in 0..300u64 {
            s.cpu.cpus.push(crate::sample::CpuEntry {
                id: i as u32,
                online: true,
                times: Some(crate::sample::CpuTimes {
                    user: 1_000_000 + i * 7919 + t * (i % 13),
                    idle: 9_000_000 + i * 104_729 + t * 97,
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
        s
    }

    #[test]
    fn frames_are_compressed_against_the_first_complete_sample() {
        let mut r = SampleRing::new(1000, usize::MAX);
        let mut plain = zstd::bulk::Compressor::new(LEVEL).expect("compressor");
        let mut alone = 0;
        let n = 30;
        // A first look (per-CPU detail pending) is never the dictionary: it is kept alone.
        let mut first = host(0);
        first.cpu.detail_pending = true;
        r.push(first);
        assert!(r.dict.is_none());
        for t in 1..=n {
            let s = host(t);
            let json = serde_json::to_vec(&s).expect("json");
            alone += plain.compress(&json).expect("compress").len();
            r.push(s);
        }
        let dict = r.dict.as_ref().map_or(0, Vec::len);
        let with: usize = r.frames.iter().skip(2).map(Vec::len).sum();
        let alone_after: usize = alone * (n as usize - 1) / n as usize;
        eprintln!("{n} frames: {with} B against the dictionary ({dict} B), {alone_after} B alone");
        // Measured: 107,646 B alone, 65,139 B against the dictionary (every CPU's counters move
        // every second here; a real VM's samples shrink 6,161 -> 817 B, docs/performance.md).
        assert!(
            with * 3 < alone_after * 2,
            "frames against the dictionary {with} B, alone {alone_after} B"
        );
        assert_eq!(
            r.bytes(),
            dict + r.frames.iter().map(Vec::len).sum::<usize>()
        );
        // What the budget counts is what is held: no frame keeps zstd's worst-case capacity.
        assert!(r.frames.iter().all(|f| f.capacity() == f.len()));
        // Every frame decodes: the first look without the dictionary, the rest with it.
        for i in 0..r.len() - 1 {
            let got = r.get(i).expect("decodes");
            assert_eq!(got.time.uptime_s, Some(i as f64));
            assert_eq!(got.cpu.detail_pending, i == 0);
            assert_eq!(got.cpu.cpus.len(), 300);
        }
        // Once the first look is dropped, index 0 is a frame compressed with the dictionary.
        let mut small = SampleRing::new(3, usize::MAX);
        let mut f = host(0);
        f.cpu.detail_pending = true;
        small.push(f);
        for t in 1..6 {
            small.push(host(t));
        }
        assert_eq!(small.plain, 0);
        assert_eq!(small.get(0).and_then(|s| s.time.uptime_s), Some(3.0));
    }
}
