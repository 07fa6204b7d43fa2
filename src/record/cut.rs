//! `perftop cut`: a window of a recording as a standalone one-file recording, to attach to a
//! ticket.
//!
//! Samples are decoded with the reader and written again with the writer, so the cut starts on
//! a fresh keyframe and knows nothing of how frames are encoded. What is kept:
//!
//! * every sample whose time is in `from..=to`, from every segment the window crosses;
//! * the sample just before `from` when no recorder gap lies between it and the first sample in
//!   the window: an interval needs its previous sample, so the cut's first interval derives the
//!   same values as in the original (`dump --from` opens its range with the same sample);
//! * gap and action markers between those samples, at their times (one between the opener and
//!   the first sample falls in the cut's first interval), and a marker before the first or after
//!   the last kept sample when its own time is in the window;
//! * the header facts (host, kernel, topology, interval) of the segment holding the first sample;
//! * the recorder's digests (which findings held), re-numbered for the cut, where every kept
//!   sample has a known one: explain of the cut then decodes as little as of the original;
//!   where some part's digests are unknown (damaged, an older recorder), none are kept and
//!   explain decodes every interval of the cut.
//!
//! A leading `start` marker names the original; an undecodable sample becomes an `error` gap,
//! so no interval spans the hole (the original has none there either). Findings that learn from
//! history (`disk.saturated`, `irq.storm` baselines) learn again from the cut's first sample.

use super::digest::{Digest, Held};
use super::format::{Gap, Header, RecordType, FORMAT_VERSION};
use super::reader::{Decoder, Event, Recording};
use super::writer::{header_for, list_segments, refuse_non_regular, Writer};
use super::{format_rfc3339, parse_time};
use crate::sample::SAMPLE_VERSION;
use anyhow::{bail, Context, Result};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// What a cut wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CutStats {
    /// Samples written, the opener included.
    pub samples: u64,
    /// True when the sample before the window was kept to open its first interval.
    pub opener: bool,
    /// Gap and action markers copied (the leading `start` marker not counted).
    pub markers: u64,
    /// Samples that did not decode (each replaced by an `error` gap).
    pub skipped: u64,
    pub first_ms: i64,
    pub last_ms: i64,
    pub bytes: u64,
}

/// The window `from..=to` of `rec` as time strings (`dump --from/--to` forms; absent: the
/// recording's first / last sample), resolved to ms.
pub fn window(rec: &Recording, from: Option<&str>, to: Option<&str>) -> Result<(i64, i64)> {
    let (Some(a), Some(b)) = (rec.samples.first(), rec.samples.last()) else {
        bail!("{} holds no complete sample", rec.path.display());
    };
    let (first, last) = (a.wall_ms, b.wall_ms);
    let from_ms = from.map(|s| parse_time(s, first, last)).transpose()?;
    let to_ms = to.map(|s| parse_time(s, first, last)).transpose()?;
    let (from_ms, to_ms) = (from_ms.unwrap_or(first), to_ms.unwrap_or(last));
    if from_ms > to_ms {
        // Also where only --from was given and lies past the end: --to defaults to the end.
        bail!(
            "--from {} is after --to {} (the recording spans {} .. {})",
            format_rfc3339(from_ms),
            format_rfc3339(to_ms),
            format_rfc3339(first),
            format_rfc3339(last)
        );
    }
    let n = rec.len();
    let first_in = rec.samples.partition_point(|s| s.wall_ms < from_ms);
    if rec.samples[first_in.min(n)..]
        .first()
        .is_none_or(|s| s.wall_ms > to_ms)
    {
        bail!(
            "the window {} .. {} holds no sample of {} (it spans {} .. {})",
            format_rfc3339(from_ms),
            format_rfc3339(to_ms),
            rec.path.display(),
            format_rfc3339(first),
            format_rfc3339(last)
        );
    }
    Ok((from_ms, to_ms))
}

/// Writes the samples and markers of `from_ms..=to_ms` to `out` as a one-segment recording.
/// `warn` hears about samples that could not be decoded.
pub fn cut<W: Write>(
    rec: &Recording,
    from_ms: i64,
    to_ms: i64,
    out: W,
    warn: &mut dyn FnMut(String),
) -> Result<(CutStats, W)> {
    let n = rec.len();
    let first_in = rec.samples.partition_point(|s| s.wall_ms < from_ms);
    // A scan, as `dump --to` does: a wall clock stepped back must not pull later samples in.
    let end = rec.samples[first_in.min(n)..]
        .iter()
        .position(|s| s.wall_ms > to_ms)
        .map_or(n, |p| first_in + p);
    if first_in >= end {
        bail!(
            "the window {} .. {} holds no sample of {}",
            format_rfc3339(from_ms),
            format_rfc3339(to_ms),
            rec.path.display()
        );
    }
    // The opener: the previous sample, unless a recorder stop/start separates them (then the
    // first interval is a since-boot one in the original too, and the opener adds nothing).
    let lo = if first_in > 0 && !rec.gap_before(first_in) {
        first_in - 1
    } else {
        first_in
    };
    let mut dec = Decoder::default();
    let header = cut_header(rec, lo, &mut dec)?;
    let mut w = Writer::new(out, &header).context("writing the header")?;
    let opener = &rec.samples[lo];
    w.gap(
        &Gap {
            reason: "start".into(),
            detail: Some(format!(
                "cut from {} ({} .. {})",
                rec.path.display(),
                format_rfc3339(from_ms),
                format_rfc3339(to_ms)
            )),
        },
        opener.wall_ms,
        opener.mono_ns,
    )?;
    let mut stats = CutStats {
        opener: lo < first_in,
        first_ms: rec.samples[first_in].wall_ms,
        last_ms: rec.samples[end - 1].wall_ms,
        ..CutStats::default()
    };
    // Markers lying between two kept samples are inside the cut; one just before the first or
    // just after the last kept sample only when its own time is in the window.
    let keep = |e: &Event| {
        (e.before > lo && e.before < end)
            || ((e.before == lo || e.before == end) && (from_ms..=to_ms).contains(&e.wall_ms))
    };
    let mut events = rec.events.iter().filter(|e| keep(e)).peekable();
    let judged = digests(rec, lo, end);
    let mut last: Option<(&(u32, Held), u64)> = None;
    let mut payload = Vec::new();
    // Samples of the window itself (not the opener) that decoded.
    let mut in_window = 0u64;
    for i in lo..=end {
        while let Some(e) = events.next_if(|e| e.before <= i) {
            // The reader keeps no marker's monotonic time; the nearest sample's stands in.
            let mono = rec.samples[i.min(n - 1)].mono_ns;
            write_event(&mut w, e, mono)?;
            stats.markers += 1;
        }
        if i == end {
            break;
        }
        let r = &rec.samples[i];
        match rec.decode(i, &mut dec) {
            Ok(s) => {
                if let Some(j) = judged.as_ref().map(|j| j[i - lo]) {
                    // The cut's first sample starts the chain; then one where the set changes.
                    if last.is_none_or(|(l, _)| l != j) {
                        let seq = w.samples();
                        Digest {
                            fingerprint: j.0,
                            seq,
                            prev: last.map(|(_, s)| s),
                            held: j.1.clone(),
                        }
                        .encode(&mut payload);
                        w.record(RecordType::Digest, &payload, r.wall_ms, r.mono_ns)?;
                        last = Some((j, seq));
                    }
                }
                w.sample(&s, r.mono_ns)?;
                stats.samples += 1;
                in_window += u64::from(i >= first_in);
            }
            Err(e) => {
                let what = format!(
                    "sample at {} does not decode ({e:#})",
                    format_rfc3339(r.wall_ms)
                );
                warn(format!("{what}; left out of the cut"));
                w.gap(
                    &Gap {
                        reason: "error".into(),
                        detail: Some(format!("{what} in the original; left out")),
                    },
                    r.wall_ms,
                    r.mono_ns,
                )?;
                stats.skipped += 1;
            }
        }
    }
    if in_window == 0 {
        // A cut of nothing but error gaps would look like a success and help nobody.
        bail!(
            "none of the {} sample(s) in the window {} .. {} decodes (see the warnings); nothing cut",
            end - first_in,
            format_rfc3339(from_ms),
            format_rfc3339(to_ms)
        );
    }
    stats.bytes = w.bytes();
    Ok((stats, w.into_inner()))
}

/// Per sample `lo..end`, the findings its digest says held (with the judge's fingerprint), or
/// `None` when any of them has none known.
fn digests(rec: &Recording, lo: usize, end: usize) -> Option<Vec<&(u32, Held)>> {
    let marks = &rec.digests;
    let mut p = marks.partition_point(|m| m.before <= lo).checked_sub(1)?;
    (lo..end)
        .map(|i| {
            while marks.get(p + 1).is_some_and(|m| m.before <= i) {
                p += 1;
            }
            let m = marks.get(p)?;
            (m.segment == rec.samples[i].segment)
                .then_some(m.judged.as_ref())
                .flatten()
        })
        .collect()
}

fn write_event<W: Write>(w: &mut Writer<W>, e: &Event, mono_ns: u64) -> std::io::Result<()> {
    match &e.kind {
        super::EventKind::Gap(g) => w.gap(g, e.wall_ms, mono_ns),
        super::EventKind::Action(a) => w.action(a, e.wall_ms, mono_ns),
        // The sample it marks writes it again (`Writer::sample`).
        super::EventKind::Kernel(_) => Ok(()),
    }
}

/// The header of the segment holding sample `lo` (else any header), restamped as written by this
/// perftop: the samples are re-encoded with this build's sample and format versions.
fn cut_header(rec: &Recording, lo: usize, dec: &mut Decoder) -> Result<Header> {
    let seg = rec.samples[lo].segment;
    let mut h = match rec.segments[seg].header.clone().or(rec.header().cloned()) {
        Some(h) => h,
        None => {
            // No readable header anywhere: rebuild the host facts from the first sample.
            let s = (lo..rec.len())
                .find_map(|i| rec.decode(i, dec).ok())
                .context("no sample in the window decodes")?;
            header_for(&s, Duration::ZERO, 0)
        }
    };
    h.format_version = FORMAT_VERSION;
    h.perftop_version = env!("CARGO_PKG_VERSION").to_string();
    h.sample_version = SAMPLE_VERSION;
    h.segment = 0;
    Ok(h)
}

/// `perftop cut REC --from T --to T -o OUT [--force]`.
pub struct CutArgs {
    pub input: PathBuf,
    pub from: Option<String>,
    pub to: Option<String>,
    pub output: PathBuf,
    pub force: bool,
}

/// Cuts to a temporary file beside `OUT`, syncs it and renames it into place, so `OUT` is
/// either the whole cut or untouched. An existing `OUT` (or `OUT.1`, ... which would be read as
/// its later segments) is refused unless `force`; then the stale segments are deleted.
pub fn cut_cmd(args: &CutArgs) -> Result<CutStats> {
    let rec = super::open(&args.input)?;
    let (from_ms, to_ms) = window(&rec, args.from.as_deref(), args.to.as_deref())?;
    let out = &args.output;
    refuse_non_regular(out, "cut")?;
    let existing = list_segments(out);
    for (_, p) in &existing {
        refuse_non_regular(p, "cut")?;
    }
    let sources: Vec<PathBuf> = rec
        .segments
        .iter()
        .filter_map(|s| s.path.canonicalize().ok())
        .collect();
    for (_, p) in &existing {
        if p.canonicalize().is_ok_and(|c| sources.contains(&c)) {
            bail!(
                "{} is part of the recording being cut; choose another -o",
                p.display()
            );
        }
    }
    if !existing.is_empty() && !args.force {
        let names: Vec<String> = existing
            .iter()
            .map(|(_, p)| p.display().to_string())
            .collect();
        bail!(
            "{} already exists; pass --force to replace it",
            names.join(", ")
        );
    }
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = out
        .file_name()
        .context("-o needs a file name")?
        .to_string_lossy()
        .into_owned();
    let tmp = dir.join(format!(".{name}.cut-{}.tmp", std::process::id()));
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .with_context(|| format!("creating a file beside {}", out.display()))?;
    let written = cut(&rec, from_ms, to_ms, file, &mut |w| {
        eprintln!("perftop: warning: {}", crate::safe::line(&w))
    })
    .and_then(|(stats, f)| {
        f.sync_all().context("syncing the cut")?;
        Ok(stats)
    });
    let stats = match written {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e.context(format!("writing {}", out.display())));
        }
    };
    if let Err(e) = std::fs::rename(&tmp, out) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("moving the cut into place as {}", out.display()));
    }
    // The stale later segments of what --force replaced would otherwise read as part of the cut.
    for (n, p) in existing {
        if n > 0 {
            std::fs::remove_file(&p).with_context(|| format!("removing {}", p.display()))?;
        }
    }
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(stats)
}
