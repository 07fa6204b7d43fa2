//! The walk over a recording: which sample an interval starts from, where the disk baselines
//! start over, and the intervals in order as `Assessed` — for `dump` (every interval in a time
//! range, decoded on worker threads) and for replay (one interval at a time, anywhere).
//!
//! The rule, in one place: sample `i` is derived against sample `i - 1` unless a recorder
//! stop/start lies between them (then it is a since-boot sample) or `i - 1` cannot be decoded
//! (then it has no interval and a warning says why). Disk baselines are learned in order from
//! the start of the run (the recording's first sample, or the first after a gap), so an interval
//! gets the same findings whether dump, replay or the live view judged it.

use super::format_rfc3339;
use super::reader::{Decoder, Recording};
use crate::assess::{Assessed, Assessor};
use crate::derive::{derive, Derived};
use crate::findings::{self, Thresholds};
use crate::sample::Sample;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::sync::{mpsc, Mutex};

/// The sample interval `i` starts from: `i - 1`, unless a recorder gap lies between them.
pub fn prev_of(rec: &Recording, i: usize) -> Option<usize> {
    (i > 0 && !rec.gap_before(i)).then(|| i - 1)
}

/// The first sample of the run holding sample `i`: where its disk baselines start.
pub fn run_start(rec: &Recording, i: usize) -> usize {
    rec.events
        .iter()
        .rev()
        .find(|e| e.before <= i && e.breaks_interval())
        .map_or(0, |e| e.before)
}

/// One step of the walk, in recording order.
enum Item {
    /// The interval ending at sample `i` (wall clock `w`), derived but not yet judged.
    Interval(usize, i64, Box<Derived>),
    /// A gap before the next sample: the baselines start over.
    Reset,
    /// Sample `i` could not be decoded.
    Warn(usize, String),
}

/// Decodes samples `lo..hi` (and `lo - 1` for the first interval, unless `lo` is `first`) and
/// passes their intervals, gaps and warnings to `sink` in order. The same results whichever way
/// the range is cut into chunks: an interval needs only its own two samples.
fn chunk(
    rec: &Recording,
    first: usize,
    lo: usize,
    hi: usize,
    sink: &mut dyn FnMut(Item) -> Result<()>,
) -> Result<()> {
    let mut dec = Decoder::default();
    let mut prev: Option<Sample> = None;
    if lo == first {
        // A run of the walk starts here: what was learned before does not carry into it.
        sink(Item::Reset)?;
    }
    if lo > first {
        if let Some(p) = prev_of(rec, lo) {
            // Its warning, if it does not decode, comes from the chunk that owns it.
            prev = rec.decode(p, &mut dec).ok();
        }
    }
    for i in lo..hi {
        let w = rec.samples[i].wall_ms;
        if prev_of(rec, i).is_none() {
            prev = None;
            sink(Item::Reset)?;
        }
        match rec.decode(i, &mut dec) {
            Ok(cur) => {
                if let Some(p) = &prev {
                    sink(Item::Interval(i, w, Box::new(derive(Some(p), &cur))))?;
                }
                prev = Some(cur);
            }
            Err(e) => {
                sink(Item::Warn(
                    i,
                    format!("sample {i} ({}): {e:#}; skipped", format_rfc3339(w)),
                ))?;
                prev = None;
            }
        }
    }
    Ok(())
}

/// The samples of the window `from..=to`: `(start, end)`, where sample `start` only opens its
/// first interval and `end` is the first sample after it. Every interval of the window ends at
/// a sample `i` in `start + 1 .. end` with a previous sample and `wall_ms >= from`.
pub fn window(rec: &Recording, from: Option<i64>, to: Option<i64>) -> (usize, usize) {
    let start = match from {
        Some(t) => rec.samples.partition_point(|s| s.wall_ms < t),
        None => 0,
    }
    .saturating_sub(1);
    // The first sample after `to` ends the range (a scan, not a binary search: a wall clock
    // stepped back must not pull later samples in).
    let end = match to {
        Some(t) => rec.samples[start.min(rec.len())..]
            .iter()
            .position(|s| s.wall_ms > t)
            .map_or(rec.len(), |p| start + p),
        None => rec.len(),
    };
    (start, end)
}

/// Calls `f(n, wall_ms, assessed)` for every recorded interval in `from..=to`, in order, and
/// `warn` for samples in the range that do not decode. Samples are decoded and derived on
/// `threads` threads (0: one per CPU, at most 8; 1: all on the calling thread); the findings
/// are judged on the calling thread, in order, because the disk baselines carry from one
/// interval to the next. The walk starts at the beginning of the run holding `from`, so the
/// baselines are the ones replay shows there; the intervals before `from` are judged and not
/// delivered. At most two chunks per worker are in flight, so memory stays bounded on any
/// length of recording.
pub fn intervals(
    rec: &Recording,
    from: Option<i64>,
    to: Option<i64>,
    thresholds: &Thresholds,
    threads: usize,
    warn: &mut dyn FnMut(String),
    f: &mut dyn FnMut(u64, i64, &Assessed) -> Result<()>,
) -> Result<u64> {
    let (start, end) = window(rec, from, to);
    let walk_from = run_start(rec, start).min(start);
    let mut assessor = Assessor::new(thresholds.clone());
    let mut n = 0u64;
    let mut deliver = |it: Item| -> Result<()> {
        match it {
            Item::Interval(i, w, d) => {
                let a = assessor.judge(*d);
                // Sample `start` only opens the range; a clock stepped back is no reason to
                // show an interval from before it.
                if i > start && from.is_none_or(|t| w >= t) {
                    n += 1;
                    f(n, w, &a)?;
                }
                Ok(())
            }
            Item::Reset => {
                assessor.reset();
                Ok(())
            }
            Item::Warn(i, s) => {
                if i >= start {
                    warn(s);
                }
                Ok(())
            }
        }
    };
    let size = chunk_size(rec);
    let jobs: Vec<(usize, usize, usize)> = (walk_from..end)
        .step_by(size)
        .map(|lo| (walk_from, lo, (lo + size).min(end)))
        .collect();
    run(rec, &jobs, threads, &mut deliver)?;
    Ok(n)
}

/// Samples a job decodes: `Derived` grows with the host; keep a chunk to a few MB of it.
fn chunk_size(rec: &Recording) -> usize {
    let cpus = rec.header().map_or(1, |h| h.cpus.max(1));
    (16_384 / cpus).clamp(8, 512)
}

/// Calls `f(i, wall_ms, assessed)` for the intervals ending at samples `a + 1 .. b` of each
/// range `(a, b)` (in order, not overlapping), and `warn` for the samples there that do not
/// decode. Each range is a run of its own: its first sample only opens it, and the findings'
/// baselines are learned from it on (explain's digests say which ranges need decoding).
pub fn ranges(
    rec: &Recording,
    ranges: &[(usize, usize)],
    thresholds: &Thresholds,
    threads: usize,
    warn: &mut dyn FnMut(String),
    f: &mut dyn FnMut(usize, i64, &Assessed) -> Result<()>,
) -> Result<()> {
    let mut assessor = Assessor::new(thresholds.clone());
    let mut deliver = |it: Item| -> Result<()> {
        match it {
            Item::Interval(i, w, d) => f(i, w, &assessor.judge(*d)),
            Item::Reset => {
                assessor.reset();
                Ok(())
            }
            Item::Warn(_, s) => {
                warn(s);
                Ok(())
            }
        }
    };
    // Smaller jobs than a full walk's: the ranges are of every size (explain's: a few long
    // stretches among hundreds of two-sample ones), and a long one cut in 512 samples kept one
    // worker busy while the other waited for it to be delivered in order (a day's explain ran
    // at 1.1 CPUs of 2). A job's first sample is decoded twice (it opens the job's first
    // interval): ~2% more decoding at 64.
    let size = (chunk_size(rec) / 8).max(8);
    let jobs: Vec<(usize, usize, usize)> = ranges
        .iter()
        .map(|&(a, b)| (a, b.min(rec.len())))
        .flat_map(|(a, b)| {
            (a..b)
                .step_by(size)
                .map(move |lo| (a, lo, (lo + size).min(b)))
        })
        .collect();
    run(rec, &jobs, threads, &mut deliver)
}

/// Decodes the jobs `(first, lo, hi)` (see [`chunk`]) on `threads` threads and passes their
/// items to `deliver` in job order. At most two jobs per worker are in flight, so memory stays
/// bounded on any length of recording.
fn run(
    rec: &Recording,
    jobs: &[(usize, usize, usize)],
    threads: usize,
    deliver: &mut dyn FnMut(Item) -> Result<()>,
) -> Result<()> {
    let nchunks = jobs.len();
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
        t => t,
    }
    .min(decode_threads(rec));
    if threads <= 1 || nchunks <= 1 {
        for &(first, lo, hi) in jobs {
            chunk(rec, first, lo, hi, deliver)?;
        }
        return Ok(());
    }
    if cfg!(panic = "abort") {
        abort_note::install();
    }
    let (job_tx, job_rx) = mpsc::channel::<usize>();
    let job_rx = Mutex::new(job_rx);
    let (res_tx, res_rx) = mpsc::channel::<(usize, Result<Vec<Item>>)>();
    std::thread::scope(|scope| -> Result<()> {
        // Dropped on every way out of the scope, so idle workers stop waiting for jobs.
        let job_tx = job_tx;
        for _ in 0..threads {
            let (job_rx, res_tx) = (&job_rx, res_tx.clone());
            scope.spawn(move || loop {
                let job = match job_rx.lock() {
                    Ok(rx) => rx.recv(),
                    Err(_) => return,
                };
                let Ok(k) = job else { return };
                let Some(&(first, lo, hi)) = jobs.get(k) else {
                    return;
                };
                let _noted = abort_note::decoding(lo, hi);
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let mut items = Vec::with_capacity(hi - lo);
                    chunk(rec, first, lo, hi, &mut |it| {
                        items.push(it);
                        Ok(())
                    })
                    .map(|()| items)
                }));
                let res = run.unwrap_or_else(|_| {
                    Err(anyhow::anyhow!("decoding samples {lo}..{hi} panicked"))
                });
                if res_tx.send((k, res)).is_err() {
                    return;
                }
            });
        }
        drop(res_tx);
        let mut queued = 0;
        while queued < nchunks.min(2 * threads) {
            job_tx.send(queued).context("dump worker threads stopped")?;
            queued += 1;
        }
        let mut done: BTreeMap<usize, Vec<Item>> = BTreeMap::new();
        let mut next = 0;
        while next < nchunks {
            let (k, items) = res_rx.recv().context("dump worker threads stopped")?;
            done.insert(k, items?);
            while let Some(items) = done.remove(&next) {
                next += 1;
                if queued < nchunks {
                    job_tx.send(queued).context("dump worker threads stopped")?;
                    queued += 1;
                }
                for it in items {
                    deliver(it)?;
                }
            }
        }
        // Dropping job_tx lets the workers finish.
        Ok(())
    })
}

/// A build with `panic = "abort"` (the `static` profile, to keep the binary small) has no
/// unwinding for `catch_unwind` to catch: there a decoding worker's panic ends the process, and
/// this hook says which samples could not be decoded, as the unwinding build's error does,
/// after the previous hook (the terminal's restore, the panic message) has run.
mod abort_note {
    use std::cell::Cell;

    thread_local! {
        static DECODING: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
    }

    pub fn install() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let prev = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                prev(info);
                if let Some((lo, hi)) = DECODING.with(Cell::get) {
                    eprintln!("perftop: decoding samples {lo}..{hi} panicked");
                }
            }));
        });
    }

    /// While this lives, the thread is decoding samples `lo..hi`.
    pub struct Decoding;

    pub fn decoding(lo: usize, hi: usize) -> Decoding {
        DECODING.with(|d| d.set(Some((lo, hi))));
        Decoding
    }

    impl Drop for Decoding {
        fn drop(&mut self) {
            DECODING.with(|d| d.set(None));
        }
    }
}

/// What all decoding threads together may hold of sample records and their JSON: each thread's
/// decoder keeps up to [`PER_THREAD`] times a sample's limit (`inflate::sample_limit`: the JSON,
/// its column and skeleton and the previous sample's), so a recording whose header claims a
/// huge host (4,096 CPUs made 8 threads decode 33 GB of zstd bombs at once) gets fewer threads.
const DECODE_BUDGET: usize = 1 << 30;
const PER_THREAD: usize = 4;

/// The most threads a walk of `rec` may decode on: [`DECODE_BUDGET`] over what each may hold.
fn decode_threads(rec: &Recording) -> usize {
    let limit = rec.segments.iter().map(|s| s.limit).max().unwrap_or(0);
    (DECODE_BUDGET / limit.saturating_mul(PER_THREAD).max(1)).max(1)
}

/// Replay's random access to the same walk: the baselines before any sample, learned in order
/// from its run's start and kept at checkpoints, so a jump re-walks at most `EVERY` samples
/// once the way there has been walked.
#[derive(Debug, Default)]
pub struct Baselines {
    /// Baselines learned from the intervals ending before sample `k` (every `EVERY`th `k`).
    marks: BTreeMap<usize, findings::Baselines>,
    /// The last sample asked for, so stepping and playback walk one interval at a time.
    recent: Option<(usize, findings::Baselines)>,
}

/// Checkpoint spacing: a day at 1 s keeps 1,350 small maps.
const EVERY: usize = 64;

impl Baselines {
    /// Forgets what was learned (the thresholds changed).
    pub fn clear(&mut self) {
        self.marks.clear();
        self.recent = None;
    }

    /// The baselines learned from the intervals ending before sample `i`.
    fn before(
        &mut self,
        rec: &Recording,
        dec: &mut Decoder,
        i: usize,
        t: &Thresholds,
    ) -> findings::Baselines {
        let mark = self
            .marks
            .range(..=i)
            .next_back()
            .map(|(k, b)| (*k, b.clone()));
        let from_recent = self
            .recent
            .as_ref()
            .filter(|(k, _)| *k <= i && mark.as_ref().is_none_or(|(m, _)| m <= k))
            .cloned();
        let (k, mut b) = from_recent
            .or(mark)
            .unwrap_or_else(|| (0, findings::Baselines::new()));
        let mut last: Option<(usize, Sample)> = None;
        for j in k..i {
            if prev_of(rec, j).is_none() {
                b = findings::Baselines::new();
            }
            let cur = rec.decode(j, dec).ok();
            if let (Some(p), Some(c)) = (prev_of(rec, j), &cur) {
                let prev = match last.take() {
                    Some((pi, s)) if pi == p => Some(s),
                    _ => rec.decode(p, dec).ok(),
                };
                if let Some(prev) = prev {
                    b.update(&derive(Some(&prev), c), t);
                }
            }
            last = cur.map(|c| (j, c));
            if (j + 1) % EVERY == 0 {
                self.marks.insert(j + 1, b.clone());
            }
        }
        self.recent = Some((i, b.clone()));
        b
    }

    /// The interval ending at sample `i`, judged as `dump` judges it.
    pub fn assess_at(
        &mut self,
        rec: &Recording,
        dec: &mut Decoder,
        i: usize,
        t: &Thresholds,
    ) -> Result<Assessed> {
        let mut a = Assessor::new(t.clone());
        a.set_baselines(self.before(rec, dec, i, t));
        let prev = match prev_of(rec, i) {
            Some(p) => rec.decode(p, dec).ok(),
            None => {
                a.reset();
                None
            }
        };
        let cur = rec.decode(i, dec).with_context(|| format!("sample {i}"))?;
        Ok(a.peek(derive(prev.as_ref(), &cur)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::format::{encode_frame, Header, RecordType, FILE_MAGIC};

    /// A recording holding only a header claiming `cpus` CPUs on one node.
    fn claiming(cpus: usize) -> Recording {
        let h = Header {
            format_version: 2,
            cpus,
            nodes: 1,
            ..Header::default()
        };
        let mut b = FILE_MAGIC.to_vec();
        let json = serde_json::to_vec(&h).expect("json");
        encode_frame(&mut b, RecordType::Header, 0, 0, &json);
        Recording::from_bytes("t", b).expect("open")
    }

    #[test]
    fn decoding_threads_hold_at_most_a_gib_of_samples() {
        // 2 CPUs: 4 MiB + 2 x 12 KiB + 8 KiB = 4,227,072 B a sample, 4 of them a thread:
        // 2^30 / 16,908,288 = 63.5.
        assert_eq!(decode_threads(&claiming(2)), 63);
        // 4,096 CPUs: 4 MiB + 48 MiB + 8 KiB = 54,534,144 B; 2^30 / 218,136,576 = 4.9.
        assert_eq!(decode_threads(&claiming(4096)), 4);
        // A million CPUs: the 128 MiB cap; 2^30 / 512 MiB.
        assert_eq!(decode_threads(&claiming(1 << 20)), 2);
    }
}
