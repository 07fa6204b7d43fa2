//! The history of a remote host's dashboard (`perftop ssh`): the stream's own frames, kept as
//! they came (the recording format, already compressed by the remote), not the samples encoded
//! again. The newest sample is kept decoded, as the local ring keeps it; an older one is decoded
//! from its chain's keyframe when the view steps back to it.
//!
//! Why: re-encoding every sample for the ring (JSON, then zstd) was the largest single cost of
//! the fleet screen, 19% of perftop's CPU with 16 hosts, for bytes that had just arrived in a
//! compact, checksummed form.

use crate::record::stream::{Chain, Streamed};
use crate::record::{Decoder, Recording};
use crate::sample::Sample;
use std::collections::VecDeque;

/// One kept chain and the index (since the ring started) of its first sample.
struct Kept {
    chain: Chain,
    first: u64,
}

/// The last chain decoded from: stepping back within one chain reads it once.
struct Open {
    first: u64,
    rec: Recording,
    dec: Decoder,
}

pub struct StreamRing {
    chains: VecDeque<Kept>,
    /// Indices (since the ring started) of the first sample shown and one past the newest:
    /// samples before `start` are kept only while later ones of their chain decode from them.
    start: u64,
    end: u64,
    /// Each shown sample's wall clock (ms since the epoch), from `start`.
    walls: VecDeque<i64>,
    bytes: usize,
    max_len: usize,
    budget: usize,
    newest: Option<Sample>,
    /// Samples dropped from the front so far (the first kept one has no predecessor).
    pub dropped: u64,
    open: Option<Open>,
}

impl StreamRing {
    pub fn new(max_len: usize, budget: usize) -> StreamRing {
        StreamRing {
            chains: VecDeque::new(),
            start: 0,
            end: 0,
            walls: VecDeque::new(),
            bytes: 0,
            max_len: max_len.max(2),
            budget,
            newest: None,
            dropped: 0,
            open: None,
        }
    }

    /// Most samples kept (the byte budget may keep fewer).
    pub fn capacity(&self) -> usize {
        self.max_len
    }

    pub fn len(&self) -> usize {
        self.walls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.walls.is_empty()
    }

    /// Frame bytes held: what the stream sent for the samples kept (the headers aside).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Adds a sample with its frame; returns how many old ones were dropped to make room.
    pub fn push(&mut self, s: Streamed) -> usize {
        let Streamed {
            sample,
            frame,
            key,
            header,
        } = s;
        let starts = key
            || self
                .chains
                .back()
                .is_none_or(|c| !c.chain.has_header(&header));
        if starts {
            self.chains.push_back(Kept {
                chain: Chain::new(header),
                first: self.end,
            });
        }
        if let Some(c) = self.chains.back_mut() {
            c.chain.push(&frame);
        }
        self.bytes += frame.len();
        super::bounded::push(&mut self.walls, sample.time.wall_ms, self.max_len);
        self.end += 1;
        self.newest = Some(sample);
        let mut dropped = 0;
        // Over the byte budget, the oldest chain goes whole (hiding samples of the only chain
        // would free nothing).
        while self.walls.len() > 2
            && (self.walls.len() > self.max_len
                || (self.bytes > self.budget && self.chains.len() > 1))
        {
            self.start += 1;
            self.walls.pop_front();
            dropped += 1;
            // A chain goes once none of its samples is shown (its steps need its keyframe).
            while self.chains.len() > 1
                && self
                    .chains
                    .get(1)
                    .is_some_and(|next| next.first <= self.start)
            {
                if let Some(old) = self.chains.pop_front() {
                    self.bytes -= old.chain.frame_bytes();
                }
            }
        }
        self.dropped += dropped as u64;
        dropped
    }

    /// Sample `i` (0 = oldest shown), decoded from its chain unless it is the newest.
    pub fn get(&mut self, i: usize) -> Result<Sample, String> {
        let at = self.start + i as u64;
        if at >= self.end {
            return Err(format!("sample {i} is gone"));
        }
        if at + 1 == self.end {
            if let Some(s) = &self.newest {
                return Ok(s.clone());
            }
        }
        let k = self
            .chains
            .partition_point(|c| c.first <= at)
            .checked_sub(1)
            .ok_or_else(|| format!("sample {i} is gone"))?;
        let kept = &self.chains[k];
        let pos = usize::try_from(at - kept.first).map_err(|e| e.to_string())?;
        let fresh = self
            .open
            .as_ref()
            .is_some_and(|o| o.first == kept.first && o.rec.len() > pos);
        if !fresh {
            let rec = kept
                .chain
                .recording()
                .map_err(|e| format!("sample {i}: {e:#}"))?;
            self.open = Some(Open {
                first: kept.first,
                rec,
                dec: Decoder::default(),
            });
        }
        let o = self
            .open
            .as_mut()
            .ok_or_else(|| format!("sample {i} is gone"))?;
        o.rec
            .decode(pos, &mut o.dec)
            .map_err(|e| format!("sample {i}: {e:#}"))
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

    /// Moves the decoded newest sample out (its frame stays in the ring).
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
    use crate::record::stream::{Got, StreamDecoder};
    use crate::record::writer::{header_for, Writer};
    use crate::ui::history::History;
    use std::time::Duration;

    /// A sample whose counters move, so steps carry real differences.
    fn sample(i: u64) -> Sample {
        let mut s = Sample::default();
        s.time.wall_ms = 1_000_000 + i as i64 * 1000;
        s.time.uptime_s = Some(100.0 + i as f64);
        s.host.hostname = Some("remote-1".into());
        s.cpu.ctxt = Some(7 + i * i);
        s.cpu.cpus.push(crate::sample::CpuEntry {
            id: 0,
            online: true,
            times: Some(crate::sample::CpuTimes {
                user: 10 * i,
                idle: 1000 + 90 * i,
                ..Default::default()
            }),
            ..Default::default()
        });
        s
    }

    /// `n` samples as `perftop stream` writes them (a keyframe every 60), decoded as
    /// `perftop ssh` decodes them.
    fn streamed(n: u64) -> (Vec<Sample>, Vec<Streamed>) {
        let first = sample(0);
        let mut w = Writer::new(Vec::new(), &header_for(&first, Duration::from_secs(1), 0))
            .expect("header");
        let sent: Vec<Sample> = (0..n).map(sample).collect();
        for (i, s) in sent.iter().enumerate() {
            w.sample(s, i as u64 * 1_000_000_000).expect("sample");
        }
        let got = StreamDecoder::new()
            .push(&w.into_inner())
            .expect("stream decodes");
        let frames = got
            .into_iter()
            .filter_map(|g| match g {
                Got::Sample(s) => Some(*s),
                Got::Header(_) => None,
            })
            .collect();
        (sent, frames)
    }

    /// The remote host's dashboard holds exactly the bytes its stream sent for each sample
    /// (nothing encoded again), and stepping back decodes them to the samples that were sent,
    /// across keyframes (every 60th sample starts a chain).
    #[test]
    fn a_remote_dashboard_keeps_the_stream_frames_not_a_new_encoding() {
        let (sent, frames) = streamed(130);
        let frame_bytes: usize = frames.iter().map(|f| f.frame.len()).sum();
        assert_eq!(frames.iter().filter(|f| f.key).count(), 3);
        let opts = crate::ui::Options {
            root: crate::root::Root::new("/"),
            interval: Duration::from_secs(1),
            keep: Duration::from_secs(600),
            look: Default::default(),
            read_only: true,
            state_dir: None,
            record_dir: std::env::temp_dir(),
        };
        let mut app = crate::ui::remote_app(&opts);
        for f in frames {
            app.push_streamed(Box::new(f));
        }
        let h = &mut app.time.history;
        assert_eq!(h.len(), 130);
        assert_eq!(
            h.bytes(),
            frame_bytes,
            "the history holds the stream's frames, byte for byte"
        );
        for i in [129, 0, 59, 60, 61, 100, 119, 120, 5] {
            assert_eq!(h.sample(i).as_ref(), Ok(&sent[i]), "sample {i}");
        }
        assert_eq!(h.wall_ms(60), Some(sent[60].time.wall_ms));
        assert!(matches!(h, History::Stream(_)));
    }

    /// Past its length the ring shows only the newest samples, and keeps an older chain only
    /// while a shown sample decodes from its keyframe.
    #[test]
    fn trimmed_ring_keeps_the_chains_its_samples_need() {
        let (sent, frames) = streamed(130);
        let sizes: Vec<usize> = frames.iter().map(|f| f.frame.len()).collect();
        let mut r = StreamRing::new(50, usize::MAX);
        let mut dropped = 0;
        for f in frames {
            dropped += r.push(f);
        }
        assert_eq!((r.len(), dropped, r.dropped), (50, 80, 80));
        // Samples 80..130 are shown; 60..80 stay for their chain's keyframe (sample 60).
        assert_eq!(r.bytes(), sizes[60..].iter().sum::<usize>());
        assert_eq!(r.get(0).as_ref(), Ok(&sent[80]));
        assert_eq!(r.get(39).as_ref(), Ok(&sent[119]));
        assert_eq!(r.get(40).as_ref(), Ok(&sent[120]));
        assert_eq!(r.get(49).as_ref(), Ok(&sent[129]));
        assert!(r.get(50).is_err());
        assert_eq!(r.seek(sent[90].time.wall_ms), 10);
        // A byte budget of two chains' worth drops the oldest whole chain.
        let (_, frames) = streamed(130);
        let mut r = StreamRing::new(1000, sizes[60..].iter().sum());
        for f in frames {
            r.push(f);
        }
        assert_eq!((r.len(), r.bytes()), (70, sizes[60..].iter().sum()));
    }
}
