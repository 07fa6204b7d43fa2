//! The in-memory history behind pause and step-back: samples kept zstd-compressed (a 2-CPU
//! sample is ~12 KB as JSON and ~3 KB compressed; a 512-CPU one ~1 MB raw), within a count and
//! a byte budget, oldest dropped first.

use crate::sample::Sample;
use std::collections::VecDeque;

/// Memory the ring may hold, whatever `--keep` asks for: a monitor must not become the load.
pub const DEFAULT_BUDGET_BYTES: usize = 32 * 1024 * 1024;

pub struct SampleRing {
    frames: VecDeque<Vec<u8>>,
    /// Each kept sample's wall clock (ms since the epoch), for jumping to a time.
    walls: VecDeque<i64>,
    bytes: usize,
    max_len: usize,
    budget: usize,
    /// The newest sample decoded, so live mode never decompresses.
    newest: Option<Sample>,
    /// Samples dropped from the front so far (the first kept one has no predecessor).
    pub dropped: u64,
    /// Reused compression context and JSON buffer: one sample costs no allocations of its own.
    compressor: Option<zstd::bulk::Compressor<'static>>,
    json: Vec<u8>,
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
            compressor: zstd::bulk::Compressor::new(1).ok(),
            json: Vec::new(),
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
        let frame = match (
            serde_json::to_writer(&mut self.json, &s),
            self.compressor.as_mut(),
        ) {
            (Ok(()), Some(c)) => c.compress(&self.json).unwrap_or_default(),
            _ => Vec::new(),
        };
        self.bytes += frame.len();
        self.frames.push_back(frame);
        self.walls.push_back(s.time.wall_ms);
        self.newest = Some(s);
        let mut dropped = 0;
        while self.frames.len() > 2
            && (self.frames.len() > self.max_len || self.bytes > self.budget)
        {
            if let Some(f) = self.frames.pop_front() {
                self.bytes -= f.len();
            }
            self.walls.pop_front();
            dropped += 1;
        }
        self.dropped += dropped as u64;
        dropped
    }

    /// Sample `i` (0 = oldest kept).
    pub fn get(&self, i: usize) -> Option<Sample> {
        if i + 1 == self.frames.len() && self.newest.is_some() {
            return self.newest.clone();
        }
        let frame = self.frames.get(i)?;
        // Samples are small; a generous bound guards against a corrupt length.
        let json = zstd::bulk::decompress(frame, 512 * 1024 * 1024).ok()?;
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
        let one = r.bytes() / 3;
        let mut small = SampleRing::new(100, one * 4);
        for i in 0..10 {
            small.push(sample(i as f64));
        }
        assert!(
            small.len() <= 5 && small.len() >= 2,
            "budget bounds the ring"
        );
        assert!(small.bytes() <= one * 5);
    }
}
