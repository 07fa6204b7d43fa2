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
pub struct Plan {
    /// Per interval of the window, in order: the sample it ends at.
    pub ends: Vec<usize>,
    /// Per interval: decoded (else the digests say no finding held in it).
    pub decode: Vec<bool>,
    /// Per interval: one of the evenly spread sample.
    pub sampled: Vec<bool>,
    /// The sample ranges to decode, for `walk::ranges`.
    pub ranges: Vec<(usize, usize)>,
}

/// An episode as the digests show it: family, first and last interval, the rules that held.
struct Span {
    family: usize,
    first: usize,
    last: usize,
    ids: Vec<String>,
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

/// The episodes the digests show, with the same gap rule as `episodes::Builder`.
fn spans(held: &[Option<&Held>]) -> Vec<Span> {
    let mut open: Vec<Option<(Span, usize)>> = (0..FAMILIES.len()).map(|_| None).collect();
    let mut done = Vec::new();
    for (row, h) in held.iter().enumerate() {
        let mut fams = 0u32;
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
/// when `a` may have caused another episode, else [`WARM`].
fn before(a: &Span, all: &[Span]) -> usize {
    let cause = MECHANISMS.iter().any(|m| {
        FAMILIES[a.family].name == m.cause
            && m.needs.is_none_or(|id| a.ids.iter().any(|i| i == id))
            && all.iter().any(|b| {
                FAMILIES[b.family].name == m.effect && a.first <= b.first && b.first <= a.last + GAP
            })
    });
    if cause {
        (a.last - a.first + 1).clamp(GAP + 2, BEFORE).max(WARM)
    } else {
        WARM
    }
}

/// The plan for the window `(lo, hi)` of `rec` judged with `t`; `None` when the digests cover
/// none of it or the plan would decode most of it anyway (then the full walk is as cheap and
/// exact).
pub fn plan(rec: &Recording, (lo, hi): (i64, i64), t: &Thresholds) -> Option<Plan> {
    if rec.digests.is_empty() {
        return None;
    }
    let (start, end) = walk::window(rec, Some(lo), Some(hi));
    let ends: Vec<usize> = (start + 1..end)
        .filter(|&i| walk::prev_of(rec, i).is_some() && rec.samples[i].wall_ms >= lo)
        .collect();
    let n = ends.len();
    let held = judged(rec, &ends, fingerprint(t));
    if n == 0 || held.iter().all(Option::is_none) {
        return None;
    }
    let mut decode: Vec<bool> = held
        .iter()
        .map(|h| h.is_none_or(|h| !h.is_empty()))
        .collect();
    // The first and last intervals: the host's name and the settings at the window's ends.
    decode[0] = true;
    decode[n - 1] = true;
    let all = spans(&held);
    for s in &all {
        let from = s.first.saturating_sub(before(s, &all));
        decode[from..=(s.last + GAP).min(n - 1)].fill(true);
    }
    // Every decoded stretch starts after a warm-up (an unknown part, a lone first interval).
    let mut r = n;
    while r > 0 {
        r -= 1;
        if decode[r] && (r == 0 || !decode[r - 1]) {
            decode[r.saturating_sub(WARM)..r].fill(true);
            r = r.saturating_sub(WARM);
        }
    }
    // The even sample: one interval in each chosen chain (keyframe), at most [`SAMPLED`].
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
            decode[r] = true;
        }
    }
    if decode.iter().filter(|d| **d).count() as f64 > MOST * n as f64 {
        return None;
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
    Some(Plan {
        ends,
        decode,
        sampled,
        ranges,
    })
}
