//! Recordings: raw samples on disk, replayed and dumped later through the same `derive`.
//!
//! # File format (version 3; versions 1 and 2 are still read)
//!
//! A recording is one or more *segment* files: `PATH`, then `PATH.1`, `PATH.2`, ... A recorder
//! started on an existing recording opens the next segment instead of appending to a file whose
//! tail may be torn; with `--max-size`/`--retain` it also rolls over to a new segment when the
//! current one reaches a quarter of the size limit, and deletes the oldest segments.
//!
//! Each segment is `FILE_MAGIC` (`PERFTOP\x1a`, 8 bytes) followed by frames. All integers are
//! little-endian:
//!
//! ```text
//! SYNC  b5 'P' 'T' 'R'   4 bytes   finds the next frame after damage
//! len   u32                        payload length (at most 64 MiB)
//! type  u8                         1 header, 2 keyframe, 3 delta, 4 gap, 5 action, 6 step,
//!                                  7 kernel log marker, 8 digest
//! wall  i64                        ms since the Unix epoch
//! mono  u64                        CLOCK_MONOTONIC ns
//! crc   u32                        CRC-32 of len..mono and the payload
//! payload
//! ```
//!
//! * **header** (first frame of each segment): JSON — format version, perftop version, sample
//!   version, host, kernel, topology (CPUs, nodes, disks, NICs, CPU model), interval, segment.
//!   Its format version says which records carry the samples: 1, keyframes and deltas; 2, steps;
//!   3, steps whose keyframes may use the built-in skeleton (a format-2 reader would misread
//!   them, so it refuses the file by its version).
//! * **step** (format 2): a sample split by `numdiff` into its *skeleton* (the JSON with every
//!   number replaced by `#`) and its *column* (the numbers, comma-separated, each integer written
//!   as its difference from the same field of the previous sample). Payload: `flags u8` (1: after
//!   a previous sample, 2: same skeleton as it), the previous sample's record CRC `u32` (when
//!   after one), LEB128 lengths of the column, the skeleton (unless the same) and the compressed
//!   column, then zstd(column) and zstd(skeleton) (unless the same), each with the previous
//!   sample's as a raw-content dictionary. Every 60th sample is a *keyframe*: a step after
//!   nothing (integers as they are; from format 3 its skeleton compressed against the built-in
//!   `format::KEYFRAME_SKELETON`, flag 4, its column against nothing). A keyframe and the steps after it form a
//!   *chain*: decoding a step decodes the chain from its keyframe (at most 60 records; reading
//!   in order decodes each once), and a damaged or missing record loses the rest of its chain
//!   (at most 59 samples; the reader says how many) and reading resumes at the next keyframe. A
//!   step names its predecessor by CRC, not offset, so inserted bytes, a copied record or two
//!   files concatenated shift nothing: a step that names an earlier sample than the chain's last
//!   (a copy) is skipped, and one that names an unknown record breaks the chain.
//! * **keyframe** (format 1, or format 2 for a sample `numdiff` cannot take):
//!   `raw_len u32` + zstd(sample JSON).
//! * **delta** (format 1): `raw_len u32` + `keyframe offset u64` + zstd(sample JSON) compressed
//!   with the keyframe's JSON as a raw-content dictionary. A delta depends only on its keyframe,
//!   so a damaged delta loses one sample and a damaged keyframe at most 60; but every counter
//!   that moved since the keyframe costs bytes in every delta (~2x the size of steps).
//! * **gap**: JSON `{"reason": "start"|"stop"|"disk-full"|..., "detail": ...}`; rates are not
//!   computed across a start/stop.
//! * **action**: JSON `{"kind": "applied"|"undone", "name", "from", "to"}` (tweaks).
//! * **digest**: which findings held in the interval ending at the next sample, written by the
//!   recorder when that set changes (`digest`; explain reads them to decode less).
//!
//! Promises: every frame is written with one `write` and flushed, so `kill -9` leaves at most one
//! torn frame, which readers drop; a frame whose checksum fails is skipped with a warning and
//! reading resumes at the next good frame (format 2: at the next keyframe when the frame was a
//! step); readers skip record types they do not know, and read every format version up to their
//! own (newer files, such as format 2 given to a format-1 perftop, get a clear error). The seek
//! index (every sample's time and keyframe) is rebuilt by one checksummed scan when a file is
//! opened, through a bounded window (`source`): files are never read whole. The sizes a record
//! states are claims: a sample is held to what its host (the header) can produce (`inflate`).

mod csv;
pub mod cut;
pub mod digest;
pub mod dump;
pub mod format;
mod inflate;
pub mod live;
pub mod numdiff;
mod numfields;
pub(crate) mod openmetrics;
pub mod reader;
mod recorder;
mod scan;
pub mod service;
mod source;
mod step;
pub mod stream;
pub mod walk;
pub mod writer;

pub use format::{Action, Gap, Header, KernelMark};
pub use reader::{Decoder, Event, EventKind, Recording};
pub use writer::{Recorder, Retention, Writer};

use anyhow::{bail, Context, Result};
use std::time::Duration;

/// `90`, `90s`, `500ms`, `10m`, `2h`, `1d`.
pub fn parse_duration(s: &str) -> Result<Duration> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .with_context(|| format!("'{s}' is not a duration (examples: 30s, 10m, 2h, 1d)"))?;
    let mult = match unit.trim() {
        "" | "s" | "sec" | "secs" => 1.0,
        "ms" => 0.001,
        "m" | "min" | "mins" => 60.0,
        "h" | "hour" | "hours" => 3600.0,
        "d" | "day" | "days" => 86400.0,
        u => bail!("'{s}': unknown duration unit '{u}' (use ms, s, m, h or d)"),
    };
    let secs = v * mult;
    if !secs.is_finite() || !(0.0..=1e10).contains(&secs) {
        bail!("'{s}' is out of range");
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `1048576`, `500k`, `10M`, `1G` (powers of 1024; a trailing `B`/`iB` is allowed).
pub fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .with_context(|| format!("'{s}' is not a size (examples: 500k, 10M, 1G)"))?;
    let unit = unit.trim().trim_end_matches("iB").trim_end_matches('B');
    let mult: f64 = match unit.to_ascii_lowercase().as_str() {
        "" => 1.0,
        "k" => 1024.0,
        "m" => 1024.0 * 1024.0,
        "g" => 1024.0 * 1024.0 * 1024.0,
        "t" => 1024.0f64.powi(4),
        u => bail!("'{s}': unknown size unit '{u}' (use k, M, G or T)"),
    };
    let b = v * mult;
    if !b.is_finite() || b < 0.0 {
        bail!("'{s}' is out of range");
    }
    Ok(b as u64)
}

/// Days since 1970-01-01 → (year, month, day) (Howard Hinnant's civil_from_days).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `2026-11-21T17:09:14.123Z` (UTC, ms).
pub fn format_rfc3339(wall_ms: i64) -> String {
    let (days, ms) = (
        wall_ms.div_euclid(86_400_000),
        wall_ms.rem_euclid(86_400_000),
    );
    let (y, mo, d) = civil_from_days(days);
    let s = ms / 1000;
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        s / 3600,
        s / 60 % 60,
        s % 60,
        ms % 1000
    )
}

/// `17:09:14` (UTC).
pub fn format_clock(wall_ms: i64) -> String {
    let s = wall_ms.rem_euclid(86_400_000) / 1000;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// `17:09:14.5` (UTC, to the tenth): for samples less than a second apart, which whole
/// seconds would show as the same time.
pub fn format_clock_tenths(wall_ms: i64) -> String {
    let ms = wall_ms.rem_euclid(86_400_000);
    format!("{}.{}", format_clock(ms), ms % 1000 / 100)
}

fn parse_hms(t: &str) -> Option<i64> {
    let parts: Vec<&str> = t.split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let h: i64 = parts[0].parse().ok()?;
    let m: i64 = parts[1].parse().ok()?;
    let s: f64 = parts.get(2).map_or(Some(0.0), |s| s.parse().ok())?;
    if !(0..24).contains(&h) || !(0..60).contains(&m) || !(0.0..61.0).contains(&s) {
        return None;
    }
    Some((h * 3600 + m * 60) * 1000 + (s * 1000.0) as i64)
}

/// A point in a recording spanning `first..=last` (ms since the epoch, UTC). Accepts
/// `HH:MM[:SS]` (UTC, on the day the recording touches where that time is inside it or
/// nearest to it), `YYYY-MM-DD[ T]HH:MM[:SS][Z]`, `10m ago` (before the end), `+5m` (after the start)
/// and `@UNIX_SECONDS`.
pub fn parse_time(s: &str, first: i64, last: i64) -> Result<i64> {
    let t = s.trim();
    let bad = || {
        format!("'{s}' is not a time (examples: 14:05, 14:05:30, 2026-11-21 14:05, 10m ago, +5m, @1763733930)")
    };
    if let Some(d) = t.strip_suffix("ago") {
        let d = parse_duration(d.trim()).with_context(bad)?;
        return Ok(last - i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 2));
    }
    if let Some(d) = t.strip_prefix('+') {
        let d = parse_duration(d).with_context(bad)?;
        return Ok(first + i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 2));
    }
    if let Some(u) = t.strip_prefix('@') {
        let v: f64 = u.parse().with_context(bad)?;
        return Ok((v * 1000.0) as i64);
    }
    let t = t.trim_end_matches('Z');
    if let Some(ms) = parse_hms(t) {
        // That time on a day the recording touches (one that runs past midnight touches two):
        // the one inside it or nearest to it. A time outside every such day's recording is
        // then refused by the window check, naming the span — never moved to a day the
        // recording does not reach.
        let day = |ms_of: i64| ms_of.div_euclid(86_400_000) * 86_400_000;
        let (d0, d1) = (day(first), day(last.max(first)));
        let away = |at: i64| (first - at).max(at - last).max(0);
        let at = (0..=(d1 - d0) / 86_400_000)
            .map(|k| d0 + k * 86_400_000 + ms)
            .min_by_key(|&at| away(at))
            .unwrap_or(d0 + ms);
        return Ok(at);
    }
    if let Some((date, clock)) = t.split_once(['T', ' ']) {
        let dp: Vec<&str> = date.split('-').collect();
        if dp.len() == 3 {
            if let (Ok(y), Ok(m), Ok(d), Some(ms)) = (
                dp[0].parse::<i64>(),
                dp[1].parse::<u32>(),
                dp[2].parse::<u32>(),
                parse_hms(clock.trim()),
            ) {
                if (1..=12).contains(&m) && (1..=31).contains(&d) {
                    return Ok(days_from_civil(y, m, d) * 86_400_000 + ms);
                }
            }
        }
    }
    bail!(bad())
}

/// Opens a recording and prints its warnings (damaged or torn records) on stderr.
pub fn open(path: &std::path::Path) -> anyhow::Result<reader::Recording> {
    let rec = reader::Recording::open(path)?;
    for w in &rec.warnings {
        eprintln!("perftop: warning: {}", crate::safe::line(w));
    }
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_sizes_times() {
        assert_eq!(parse_duration("10m").ok(), Some(Duration::from_secs(600)));
        assert_eq!(
            parse_duration("1.5s").ok(),
            Some(Duration::from_millis(1500))
        );
        assert!(parse_duration("10x").is_err());
        assert_eq!(parse_size("10M").ok(), Some(10 << 20));
        assert_eq!(parse_size("500kB").ok(), Some(500 << 10));
        assert_eq!(parse_size("123").ok(), Some(123));
        let t0 = 1_763_733_930_000; // 2025-11-21T14:05:30Z
        assert_eq!(format_rfc3339(t0), "2025-11-21T14:05:30.000Z");
        assert_eq!(parse_time("14:05:30", t0, t0 + 3_600_000).ok(), Some(t0));
        assert_eq!(parse_time("2025-11-21 14:05:30", t0, t0).ok(), Some(t0));
        assert_eq!(parse_time("10m ago", t0, t0 + 600_000).ok(), Some(t0));
        assert_eq!(parse_time("+1m", t0, t0).ok(), Some(t0 + 60_000));
        assert_eq!(parse_time("@1763733930", 0, 0).ok(), Some(t0));
        assert!(parse_time("yesterday", t0, t0).is_err());
        // Past midnight: 00:10 means the next day when the recording reaches it.
        let late = t0 - 14 * 3_600_000 + 23 * 3_600_000; // 23:05:30
        let day = t0 - (14 * 3600 + 5 * 60 + 30) * 1000;
        assert_eq!(
            parse_time("00:10", late, late + 3_600_000).ok(),
            Some(day + 86_400_000 + 600_000)
        );
    }

    /// `10:00` on a recording made 11:20..11:50 is 10:00 that day (before it: the window check
    /// refuses it naming the span), not 10:00 the next day.
    #[test]
    fn a_clock_time_before_the_recording_stays_on_its_day() {
        let day = 1_763_683_200_000; // 2025-11-21 00:00 UTC
        let (first, last) = (day + (11 * 60 + 20) * 60_000, day + (11 * 60 + 50) * 60_000);
        assert_eq!(
            parse_time("10:00", first, last).ok(),
            Some(day + 10 * 3_600_000)
        );
        assert_eq!(
            parse_time("12:00", first, last).ok(),
            Some(day + 12 * 3_600_000)
        );
        assert_eq!(
            parse_time("11:30", first, last).ok(),
            Some(day + 41_400_000)
        );
    }
}
