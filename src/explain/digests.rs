//! Which intervals explain decodes when the recording holds the recorder's digests
//! (`record::digest`): a first pass over the digests alone (no sample is decoded) finds where
//! findings held; only those intervals, the intervals before them that a cause's correlation
//! or the disk baselines need, and an evenly spread sample of the window (for "normal here"
//! and diff's medians) are decoded. Decoding is ~300 µs an interval; a day of digests is read
//! in a few milliseconds.
//!
//! Where the digests do not speak (an older recording, a segment without them, a damaged part,
//! other thresholds than the recorder's) every interval is decoded, as without digests.

use super::causes::{BEFORE, MECHANISMS};
use super::episodes::GAP;
use super::families::{family_of, FAMILIES};
use crate::findings::Thresholds;
use crate::record::digest::{fingerprint, Held};
use crate::record::reader::Recording;
use crate::record::walk;

/// At most this many intervals spread evenly over the window are decoded for the baselines
/// and the medians (each is a keyframe and the sample after it: two records, no chain).
pub const SAMPLED: usize = 720;

/// Intervals decoded before each decoded stretch, so the disk and IRQ baselines the findings
/// compare with are learned again before the intervals that matter.
pub const WARM: usize = 60;

/// The even sample's interval lies up to this many intervals after its keyframe.
const OFFSETS: usize = 16;

/// A well-spread sequence (Knuth's multiplicative hash): the sample's offset in chain `c`.
fn spread(c: usize) -> usize {
    (c as u32).wrapping_mul(2_654_435_761).rotate_right(16) as usize
}

/// When the plan would decode more than this share of the window, decoding all of it costs
/// little more and gives the full walk's exact baselines.
const MOST: f64 = 0.6;

/// What to decode of a window.
#[derive(Debug, Clone, Default)]
pub struct Plan<'r> {
    /// Per interval of the window, in order: the sample it ends at.
    pub ends: Vec<usize>,
    /// Per interval: decoded (else the digests say no finding held in it).
    pub decode: Vec<bool>,
    /// Per interval: one of the evenly spread sample.
    pub sampled: Vec<bool>,
    /// The sample ranges to decode, for `walk::ranges` (the first begins with the warm-up
    /// before the window, whose intervals are judged and not delivered).
    pub ranges: Vec<(usize, usize)>,
    /// Every interval of the window is decoded (the plan would have decoded most of it).
    pub whole: bool,
    /// Per interval: the findings its digest says held (`None`: unknown).
    pub held: Vec<Option<&'r Held>>,
}

/// An episode as the digests show it: family, first and last interval, the rules that held.
pub struct Span {
    pub family: usize,
    pub first: usize,
    pub last: usize,
    pub ids: Vec<String>,
    /// It ran into intervals whose digests are unknown: its length and rules are not known.
    unknown_end: bool,
}

/// The findings each interval of `ends` held, as its digest says (`None`: unknown).
fn judged<'r>(rec: &'r Recording, ends: &[usize], fp: u32) -> Vec<Option<&'r Held>> {
    let marks = &rec.digests;
    let mut p = 0;
    ends.iter()
        .map(|&i| {
            while marks.get(p + 1).is_some_and(|m| m.before <= i) {
                p += 1;
            }
            let m = marks.get(p).filter(|m| m.before <= i)?;
            if rec.samples.get(i).map(|s| s.segment) != Some(m.segment) {
                return None;
            }
            match &m.judged {
                Some((f, held)) if *f == fp => Some(held),
                _ => None,
            }
        })
        .collect()
}

/// The intervals of the window `(lo, hi)`: per interval, the sample it ends at.
pub fn ends_of(rec: &Recording, (lo, hi): (i64, i64)) -> Vec<usize> {
    let (start, end) = walk::window(rec, Some(lo), Some(hi));
    (start + 1..end)
        .filter(|&i| walk::prev_of(rec, i).is_some() && rec.samples[i].wall_ms >= lo)
        .collect()
}

/// The even sample of the intervals `ends`: one interval in each chosen chain (keyframe), at
/// most [`SAMPLED`]; per interval, whether it is one.
pub fn even(rec: &Recording, ends: &[usize]) -> Vec<bool> {
    let n = ends.len();
    let keys: Vec<usize> = (0..n)
        .filter(|&r| rec.samples[ends[r] - 1].is_key)
        .collect();
    let stride = keys.len().div_ceil(SAMPLED).max(1);
    let mut sampled = vec![false; n];
    for (c, &r) in keys.iter().step_by(stride).enumerate() {
        // Not always the interval after the keyframe: a host's load that repeats every
        // minute (cron) would be seen at one phase only. An offset of up to OFFSETS - 1 steps
        // costs decoding that many records' text (not parsing them).
        let key = ends[r] - 1;
        let r = r + spread(c) % OFFSETS;
        let Some(&i) = ends.get(r) else { continue };
        // Both its samples in the keyframe's chain, and no gap between them.
        if rec.samples[i - 1].key == key && walk::prev_of(rec, i) == Some(i - 1) {
            sampled[r] = true;
        }
    }
    sampled
}

/// The episodes the digests show, with the same gap rule as `episodes::Builder`.
pub fn spans(held: &[Option<&Held>]) -> Vec<Span> {
    let mut open: Vec<Option<(Span, usize)>> = (0..FAMILIES.len()).map(|_| None).collect();
    let mut done = Vec::new();
    for (row, h) in held.iter().enumerate() {
        let mut fams = 0u32;
        if h.is_none() {
            for (span, _) in open.iter_mut().flatten() {
                span.unknown_end = true;
            }
        }
        for (id, _) in h.map(|h| h.as_slice()).unwrap_or_default() {
            let fam = family_of(id);
            fams |= 1 << fam;
            let (span, miss) = open[fam].get_or_insert_with(|| {
                (
                    Span {
                        family: fam,
                        first: row,
                        last: row,
                        ids: Vec::new(),
                        unknown_end: false,
                    },
                    0,
                )
            });
            span.last = row;
            *miss = 0;
            if !span.ids.contains(id) {
                span.ids.push(id.clone());
            }
        }
        for (fam, slot) in open.iter_mut().enumerate() {
            if fams & (1 << fam) != 0 {
                continue;
            }
            if let Some((_, miss)) = slot {
                *miss += 1;
                if *miss > GAP {
                    done.extend(slot.take().map(|(s, _)| s));
                }
            }
        }
    }
    done.extend(open.into_iter().flatten().map(|(s, _)| s));
    done
}

/// How many intervals before span `a` are decoded: as many as `causes::links` correlates over
/// when `a` may have caused another episode, else [`WARM`]. A span that runs into unknown
/// digests may be longer, hold other rules and cause an episode there: the longest look-back.
fn before(a: &Span, all: &[Span]) -> usize {
    let cause = MECHANISMS.iter().any(|m| {
        FAMILIES[a.family].name == m.cause
            && (a.unknown_end
                || m.needs.is_none_or(|id| a.ids.iter().any(|i| i == id))
                    && all.iter().any(|b| {
                        FAMILIES[b.family].name == m.effect
                            && a.first <= b.first
                            && b.first <= a.last + GAP
                    }))
    });
    let len = if a.unknown_end {
        BEFORE
    } else {
        a.last - a.first + 1
    };
    if cause {
        len.clamp(GAP + 2, BEFORE).max(WARM)
    } else {
        WARM
    }
}

/// The plan for the window `(lo, hi)` of `rec` judged with `t`; `None` when the digests cover
/// none of it or the plan would decode most of it from the run's start anyway (then the full
/// walk is as cheap and exact). `lean` (diff): the intervals in which findings held are not
/// decoded either, their digests are all a diff needs of them.
pub fn plan<'r>(
    rec: &'r Recording,
    (lo, hi): (i64, i64),
    t: &Thresholds,
    lean: bool,
) -> Option<Plan<'r>> {
    if rec.digests.is_empty() {
        return None;
    }
    let ends = ends_of(rec, (lo, hi));
    let n = ends.len();
    let held = judged(rec, &ends, fingerprint(t));
    if n == 0 || held.iter().all(Option::is_none) {
        return None;
    }
    let mut decode: Vec<bool> = held
        .iter()
        .map(|h| h.is_none_or(|h| !lean && !h.is_empty()))
        .collect();
    // The first and last intervals: the host's name and the settings at the window's ends.
    decode[0] = true;
    decode[n - 1] = true;
    let all = if lean { Vec::new() } else { spans(&held) };
    // Where an episode's look-back starts: it is at least WARM long, so it is the episode's
    // warm-up and needs none of its own (the digests say no finding held in it: judged without
    // baselines it finds no more than the recorder did).
    let mut led = vec![false; n];
    for s in &all {
        let from = s.first.saturating_sub(before(s, &all));
        led[from] = true;
        decode[from..=(s.last + GAP).min(n - 1)].fill(true);
    }
    // Every other decoded stretch starts after a warm-up (an unknown part, the last interval);
    // the window's first is warmed up before the window (`ranges` below). An unknown part may
    // hold a cause from its first interval on: before it, a cause's look-back.
    let mut r = n;
    while r > 1 {
        r -= 1;
        if decode[r] && !decode[r - 1] && !led[r] {
            let warm = if held[r].is_none() && !lean {
                BEFORE.max(WARM)
            } else {
                WARM
            };
            decode[r.saturating_sub(warm)..r].fill(true);
            r = r.saturating_sub(warm);
        }
    }
    let mut sampled = even(rec, &ends);
    for (d, s) in decode.iter_mut().zip(&sampled) {
        *d |= *s;
    }
    let whole = decode.iter().filter(|d| **d).count() as f64 > MOST * n as f64;
    // The window's first interval is judged after a warm-up before it (not across a gap).
    let opener = ends[0] - 1;
    let warm_from = opener
        .saturating_sub(WARM)
        .max(walk::run_start(rec, opener));
    if whole {
        if warm_from == walk::run_start(rec, opener) {
            // The full walk starts no earlier and learns the same baselines: it is exact.
            return None;
        }
        // Decoding from the run's start would read everything before the window (a minute's
        // window late in a day's run decoded the day up to it): the window and its warm-up.
        decode.fill(true);
        sampled.fill(true);
    }
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for (_, &i) in ends.iter().enumerate().filter(|(r, _)| decode[*r]) {
        match ranges.last_mut() {
            // The next interval of a stretch, or one sample on (the sample between is decoded
            // as this interval's opener anyway).
            Some((_, e)) if *e + 1 >= i => *e = i + 1,
            _ => ranges.push((i - 1, i + 1)),
        }
    }
    if let Some(first) = ranges.first_mut() {
        first.0 = warm_from;
    }
    Some(Plan {
        ends,
        decode,
        sampled,
        ranges,
        whole,
        held,
    })
}
