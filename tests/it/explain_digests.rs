//! `explain` through the recorder's digests (`record::digest`, `explain::digests`): the same
//! episodes as decoding every interval, from a fraction of the decoding; damaged or missing
//! digests fall back to decoding; the recorder writes them for a few bytes.

use crate::support;

use perftop::explain::{self, Report};
use perftop::findings::Thresholds;
use perftop::record::digest::Digester;
use perftop::record::format::{decode_head, RecordType, FRAME_HEADER};
use perftop::record::writer::header_for;
use perftop::record::{Gap, Recorder, Recording, Retention, Writer};
use perftop::sample::{Pressure, PsiLine, PsiResource, Sample};
use std::sync::OnceLock;
use support::T0;

/// 30 minutes at 1 s; an incident (memory pressure, swapping, I/O stall) from minute 15 for
/// two minutes, and a shorter one (I/O only) from minute 23 for 40 s.
const N: u64 = 1_800;
const DISTINCT: u64 = 120;

fn psi(some: u64, full: u64) -> Option<PsiResource> {
    let line = |us| PsiLine {
        total_us: us,
        ..PsiLine::default()
    };
    Some(PsiResource {
        some: Some(line(some)),
        full: Some(line(full)),
    })
}

/// The samples: a synthetic host's (cycled, as `benches/explain.rs` does) with PSI and swap
/// counters that grow steadily and fast in the incidents.
fn samples() -> &'static [Sample] {
    static S: OnceLock<Vec<Sample>> = OnceLock::new();
    S.get_or_init(|| build(|t| 2_000 + 1_000 * (t % 2)))
}

/// [`samples`] with `quiet_io(t)` µs of I/O stall (half of it "full") in quiet second `t`.
fn build(quiet_io: impl Fn(u64) -> u64) -> Vec<Sample> {
    {
        let base = support::synth_samples(0..DISTINCT);
        let (mut mem, mut io, mut swap) = (0u64, 0u64, 0u64);
        (0..N)
            .map(|t| {
                let mut s = base[(t % DISTINCT) as usize].clone();
                s.time.wall_ms = T0 + t as i64 * 1000;
                let memory = (900..1_020).contains(&t);
                let disk = memory || (1_380..1_420).contains(&t);
                mem += if memory {
                    400_000
                } else {
                    1_000 + 500 * (t % 3)
                };
                io += if disk { 600_000 } else { quiet_io(t) };
                swap += if memory { 5_000 } else { 0 };
                s.pressure = Some(Pressure {
                    cpu: psi(mem / 8, 0),
                    memory: psi(mem, mem / 3),
                    io: psi(io, io / 2),
                    irq: None,
                });
                s.memory.vmstat.pswpout = Some(swap);
                s.memory.vmstat.pswpin = Some(swap / 5);
                // Dirty pages well under the background limit: a quiet host between the
                // incidents (the synthetic host's own figure holds `dirty.background`, an
                // info finding, all the time, and an interval where a finding holds is
                // decoded).
                s.memory.vmstat.nr_dirty = Some(100_000);
                s.memory.vmstat.nr_writeback = Some(0);
                s
            })
            .collect()
    }
}

/// The samples written as `perftop record` writes them: each interval judged with `t`, a
/// digest before the sample whenever the findings change.
fn encode(samples: &[Sample], t: &Thresholds) -> Vec<u8> {
    let h = header_for(&samples[0], std::time::Duration::from_secs(1), 0);
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    let start = Gap {
        reason: "start".into(),
        detail: None,
    };
    w.gap(&start, T0, 0).expect("gap");
    let mut judge = Digester::new(t.clone());
    for (i, s) in samples.iter().enumerate() {
        let mono = i as u64 * 1_000_000_000;
        if let Some((kind, p)) = judge.next(s, w.samples()) {
            w.record(kind, p, s.time.wall_ms, mono).expect("digest");
        }
        w.sample(s, mono).expect("sample");
    }
    w.into_inner()
}

/// The digest frames of a segment: (offset, frame length).
fn digest_frames(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 8;
    while at + FRAME_HEADER <= b.len() {
        let h = decode_head(&b[at..]).expect("frame head");
        let len = FRAME_HEADER + h.len as usize;
        if h.kind == RecordType::Digest as u8 {
            out.push((at, len));
        }
        at += len;
    }
    assert_eq!(at, b.len(), "whole frames");
    out
}

fn open(bytes: Vec<u8>) -> Recording {
    Recording::from_bytes("day.ptrec", bytes).expect("open")
}

/// What must be the same whichever way the window was read: per episode its family, rules,
/// start, end, peak, severity, culprits and causes.
fn episodes(r: &Report) -> Vec<String> {
    r.episodes
        .iter()
        .map(|e| {
            format!(
                "{:?} {:?} {}..{} open {}/{} peak {:?} {:?} culprits {:?} caused_by {:?}",
                e.family,
                e.ids,
                e.start_ms,
                e.end_ms,
                e.open_start,
                e.open_end,
                e.peak,
                e.severity,
                e.culprits,
                e.links
                    .iter()
                    .map(|l| (l.cause, &l.evidence))
                    .collect::<Vec<_>>()
            )
        })
        .collect()
}

fn explain(rec: &Recording, digests: bool) -> Report {
    explain::explain_with(rec, None, None, &Thresholds::default(), 2, digests).expect("explain")
}

#[test]
fn digests_give_the_full_walks_episodes_from_a_fifth_of_the_decoding() {
    let t = Thresholds::default();
    let rec = open(encode(samples(), &t));
    assert!(!rec.digests.is_empty(), "the recording holds digests");
    let full = explain(&rec, false);
    let quick = explain(&rec, true);
    let n = N - 1;
    assert_eq!((full.intervals, quick.intervals), (n, n));
    assert_eq!(full.read.decoded, n);
    assert!(quick.read.digests, "read through the digests");
    // The incidents (160 intervals), the 120 before the first (its causes' correlation), a
    // minute's warm-up before each and the last, the even sample (one interval after each of
    // the 30 keyframes): ~450 of 1,799.
    assert!(
        quick.read.decoded < n / 3,
        "decoded {} of {n} intervals",
        quick.read.decoded
    );
    let fams: Vec<&str> = full
        .episodes
        .iter()
        .map(|e| explain::families::FAMILIES[e.family].name)
        .collect();
    assert!(
        fams.contains(&"memory") && fams.contains(&"io"),
        "the incidents are episodes: {fams:?}"
    );
    assert_eq!(episodes(&quick), episodes(&full));
    assert!(
        quick.episodes.iter().any(|e| !e.links.is_empty()),
        "the swap -> I/O link is found from the decoded intervals"
    );
    // "Normal here" from an even sample of the quiet intervals: close to all of them.
    for (q, f) in quick.episodes.iter().zip(&full.episodes) {
        let (Some((_, qn)), Some((_, fnn))) = (&q.normal, &f.normal) else {
            assert_eq!(q.normal.is_some(), f.normal.is_some());
            continue;
        };
        assert!(qn.sampled && !fnn.sampled);
        assert!(qn.quiet >= 20, "{} quiet intervals sampled", qn.quiet);
        // The quiet stall time steps by 0.05% (it repeats every 2 and 3 s): the sampled
        // quantiles may land one step off, no more.
        for (a, b) in [(qn.median, fnn.median), (qn.p95, fnn.p95)] {
            assert!(
                (a - b).abs() <= (0.1 * b.abs()).max(0.051),
                "sampled {a} vs all {b}"
            );
        }
    }
    let text = explain::render::text::render(&quick, 80);
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("quiet intervals sampled over the window"),
        "{text}"
    );
}

#[test]
fn damaged_or_missing_digests_are_decoded_instead() {
    let t = Thresholds::default();
    let good = encode(samples(), &t);
    let full = episodes(&explain(&open(good.clone()), false));
    let frames = digest_frames(&good);
    assert!(frames.len() >= 4, "{} digests", frames.len());
    let (decoded, _) = {
        let r = explain(&open(good.clone()), true);
        (r.read.decoded, r)
    };
    // A digest in the middle damaged (its checksum fails), cut out cleanly (the next one's
    // chain breaks), or all of them cut out (an older recorder's file).
    let (at, len) = frames[frames.len() / 2];
    let mut damaged = good.clone();
    damaged[at + FRAME_HEADER] ^= 0xff;
    let mut missing = good.clone();
    missing.drain(at..at + len);
    let mut none = good.clone();
    for &(at, len) in frames.iter().rev() {
        none.drain(at..at + len);
    }
    assert_eq!(digest_frames(&none), vec![]);
    for (what, bytes) in [("damaged", damaged), ("missing", missing), ("none", none)] {
        let rec = open(bytes);
        let r = explain(&rec, true);
        assert_eq!(episodes(&r), full, "{what}");
        assert!(
            r.read.decoded > decoded,
            "{what}: decoded {} (intact: {decoded})",
            r.read.decoded
        );
    }
    // Digests judged with other thresholds are not used.
    let other = Thresholds {
        memory_psi_some_pct: 50.0,
        ..Thresholds::default()
    };
    let r = explain(&open(encode(samples(), &other)), true);
    assert!(!r.read.digests, "another judge's digests are ignored");
    assert_eq!(episodes(&r), full);
}

/// `perftop record`'s recorder writes a digest (one when a segment starts, then only when the
/// findings change), and they cost a quiet host next to nothing: the bytes a sample stay
/// within `tests/it/cost.rs`'s committed figure (105 B, +25 %).
#[test]
fn the_recorder_writes_digests_for_a_few_bytes() {
    let n = 120u64;
    let samples = support::synth_samples(0..n);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("rec.ptrec");
    let mut rec = Recorder::create(
        &path,
        &samples[0],
        std::time::Duration::from_secs(1),
        Retention::default(),
    )
    .expect("recorder");
    for s in &samples {
        rec.sample(s).expect("sample");
    }
    rec.finish("stop").expect("finish");
    let bytes = std::fs::read(&path).expect("read");
    let frames = digest_frames(&bytes);
    let digest_bytes: usize = frames.iter().map(|f| f.1).sum();
    let per = bytes.len() as u64 / n;
    eprintln!(
        "{} bytes for {n} samples ({per} a sample), {} digests of {digest_bytes} bytes",
        bytes.len(),
        frames.len()
    );
    let r = Recording::open(&path).expect("open");
    assert_eq!(r.digests.first().map(|d| d.before), Some(0));
    assert!(r.digests.iter().all(|d| d.judged.is_some()));
    // A quiet host: a digest at the start, and one per change of findings at most.
    assert!(
        (digest_bytes as u64) <= 3 * n,
        "{digest_bytes} bytes of digests"
    );
    assert!(per <= 105 + 105 / 4, "{per} bytes a sample");
}

/// "Normal here" for an episode in a window of a longer recording comes from the recording (an
/// even sample of its last 7 days and the window), not from the window alone: here the disk
/// stalled 1% of the time ("full") in the first 20 minutes and 0.1% after, so the I/O episode
/// at minute 23 is judged against 1% (the quiet intervals sampled before minute 20 are about
/// twice those after), where the window (minutes 22 to 25) alone says 0.1%.
#[test]
fn normal_here_is_the_recordings_not_only_the_windows() {
    let t = Thresholds::default();
    let all = build(|t| if t < 1_200 { 20_000 } else { 2_000 });
    let at = |s: u64| perftop::record::format_rfc3339(T0 + s as i64 * 1000);
    let io = |r: &Report| {
        let e = r
            .episodes
            .iter()
            .find(|e| explain::families::FAMILIES[e.family].name == "io")
            .expect("the I/O episode");
        let (metric, n) = e.normal.expect("a normal");
        assert_eq!(metric, "io.psi_full_pct");
        n
    };
    for digests in [true, false] {
        let rec = open(encode(&all, &t));
        let r = explain::explain_with(&rec, Some(&at(1_320)), Some(&at(1_500)), &t, 2, digests)
            .expect("explain");
        let n = io(&r);
        assert_eq!(n.over, Some((T0, T0 + (N as i64 - 1) * 1000)), "{digests}");
        assert!(n.sampled);
        assert!(
            (n.median - 1.0).abs() < 0.01,
            "median {} ({digests})",
            n.median
        );
        assert!(n.quiet >= 20, "{} quiet intervals sampled", n.quiet);
        let text = explain::render::text::render(&r, 80);
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains(&format!(
                "quiet intervals sampled from {} to {})",
                &at(0)[..16].replacen('T', " ", 1),
                &at(N - 1)[..16].replacen('T', " ", 1)
            )),
            "{text}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&explain::render::json::render(&r)).expect("json");
        let over = json["episodes"]
            .as_array()
            .and_then(|e| {
                e.iter()
                    .find(|e| e["baseline"]["metric"] == "io.psi_full_pct")
            })
            .map(|e| e["baseline"]["over"].clone());
        assert_eq!(
            over,
            Some(serde_json::json!({"from": at(0), "to": at(N - 1)}))
        );
    }
    // The same window in a recording that starts at minute 20: its own quiet intervals.
    let rec = open(encode(&all[1_200..], &t));
    let r = explain::explain_with(&rec, Some(&at(1_320)), Some(&at(1_500)), &t, 2, true)
        .expect("explain");
    let n = io(&r);
    assert!(
        n.over.is_some(),
        "the recording is still longer than the window"
    );
    assert!((n.median - 0.1).abs() < 0.01, "median {}", n.median);
}

/// `perftop cut` keeps the digests, re-numbered for the cut, so explain of a cut reads as
/// little as of the original and finds the same episodes as decoding all of it; a cut across a
/// damaged digest keeps none (that part's findings are unknown), and is decoded whole.
#[test]
fn a_cut_keeps_the_digests_where_they_are_known() {
    let t = Thresholds::default();
    let good = encode(samples(), &t);
    let (from, to) = (T0 + 600_000, T0 + 1_500_000);
    let cut = |bytes: Vec<u8>| {
        let (_, out) =
            perftop::record::cut::cut(&open(bytes), from, to, Vec::new(), &mut |w| panic!("{w}"))
                .expect("cut");
        open(out)
    };
    let rec = cut(good.clone());
    assert!(rec.digests.len() >= 4, "{:?}", rec.digests);
    assert!(rec.digests.iter().all(|d| d.judged.is_some()));
    let (quick, full) = (explain(&rec, true), explain(&rec, false));
    assert_eq!(episodes(&quick), episodes(&full));
    assert!(!full.episodes.is_empty());
    assert!(
        quick.read.digests && quick.read.decoded < full.read.decoded / 2,
        "decoded {} of {}",
        quick.read.decoded,
        full.read.decoded
    );
    let frames = digest_frames(&good);
    let (at, _) = frames[frames.len() / 2];
    let mut damaged = good;
    damaged[at + FRAME_HEADER] ^= 0xff;
    let rec = cut(damaged);
    assert_eq!(rec.digests, vec![]);
    assert!(!explain(&rec, true).read.digests);
}

/// A short window late in a run is decoded with a minute's warm-up before it, not from the
/// run's start: a minute's window at the end of a day decoded the whole day before it when the
/// plan gave up (it decodes most of a short window) and walked from the run's start.
#[test]
fn a_short_window_late_in_a_run_is_not_decoded_from_the_runs_start() {
    let t = Thresholds::default();
    let rec = open(encode(samples(), &t));
    // 60 s around the second incident (I/O only, seconds 1,380 to 1,420).
    let (lo, hi) = (T0 + 1_370_000, T0 + 1_430_000);
    let plan = explain::digests::plan(&rec, (lo, hi), &t, false)
        .expect("a plan, not the walk from the start");
    assert!(
        plan.whole,
        "a short window with an episode is decoded whole"
    );
    let opener = plan.ends[0] - 1;
    assert_eq!(plan.ranges.len(), 1, "{:?}", plan.ranges);
    assert_eq!(plan.ranges[0].0, opener - explain::digests::WARM);
    let at = |ms: i64| perftop::record::format_rfc3339(ms);
    let (from, to) = (at(lo), at(hi));
    let window = |digests| {
        explain::explain_with(&rec, Some(&from), Some(&to), &t, 2, digests).expect("explain")
    };
    let (quick, full) = (window(true), window(false));
    assert_eq!(episodes(&quick), episodes(&full));
    assert_eq!(quick.read.decoded, full.read.decoded);
    assert!(!quick.episodes.is_empty());
}

/// `diff` reads a side through its digests: the findings (intervals each held) and episodes
/// (per family: how many, how long) come from the digests, and only the even sample (the
/// medians), the window's ends and what the digests do not know are decoded. The same as
/// decoding every interval, from a fraction of the decoding.
#[test]
fn diff_takes_findings_and_episodes_from_the_digests() {
    let t = Thresholds::default();
    let good = encode(samples(), &t);
    let frames = digest_frames(&good);
    let (at, _) = frames[frames.len() / 2];
    let mut damaged = good.clone();
    damaged[at + FRAME_HEADER] ^= 0xff;
    for (what, bytes) in [("intact", good), ("damaged", damaged)] {
        let rec = open(bytes);
        let side =
            |digests| explain::diff::side_with(&rec, None, None, &t, 2, digests).expect("side");
        let (quick, full) = (side(true), side(false));
        assert_eq!(quick.findings, full.findings, "{what}");
        assert_eq!(quick.episodes, full.episodes, "{what}");
        assert!(
            full.findings.contains_key("memory.swapping"),
            "{:?}",
            full.findings
        );
        assert_eq!(full.episodes.get("io").map(|e| e.count), Some(2));
        assert_eq!((quick.intervals, full.read.decoded), (N - 1, N - 1));
        assert!(quick.read.digests);
        if what == "intact" {
            assert!(quick.read.decoded < 100, "decoded {}", quick.read.decoded);
        } else {
            assert!(quick.read.decoded < N - 1, "decoded {}", quick.read.decoded);
        }
    }
}
