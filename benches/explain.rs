//! `perftop explain` and `perftop diff` of a day at 1 s: wall time and peak RSS of the real
//! binary (under `/usr/bin/time`) on a day-long 2-CPU recording (86,400 samples) with an
//! incident every hour (five minutes of memory and I/O stall time, swapping), as the issue's
//! budget asks: <= 3 s and <= 200 MB each.
//!
//! `cargo bench --bench explain`. Prints a plain table; no criterion statistics needed.
//! `EXPLAIN_DAY=/tmp/day.ptrec cargo bench --bench explain` keeps the day's recording there
//! (and reuses it on the next run), so `perf record` can profile `perftop explain` on it.
//! `EXPLAIN_WEEK=/tmp/week/perftop.ptrec` also writes (once) and times a week as the service
//! keeps it: seven day-long segments, budget 20 s.

// The synthetic-host generator is a test fixture (tests/support), not part of perftop.
#[path = "../tests/support/synth/mod.rs"]
mod synth;

use perftop::findings::Thresholds;
use perftop::record::digest::Digester;
use perftop::record::writer::header_for;
use perftop::record::Writer;
use perftop::root::Root;
use perftop::sample::{Pressure, PsiLine, PsiResource, Sample};
use perftop::source::Reader;
use std::process::{Command, Stdio};
use std::time::Duration;
use synth::{write_host, SynthSpec};

const T0: i64 = 1_763_733_930_000;
const DAY: usize = 86_400;
/// Distinct host samples; the day cycles through them.
const DISTINCT: u64 = 600;

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

/// The recording: `days` day-long segments (`path`, `path.1`, ... as the service rotates
/// them) of synthetic samples with PSI and swap counters that grow steadily, and fast during
/// the first five minutes of every hour, each interval judged and its digest written as
/// `perftop record` does. Returns the bytes written and those of the digests.
fn write_days(path: &std::path::Path, days: usize) -> (usize, usize) {
    let spec = SynthSpec {
        cpus: 2,
        nodes: 1,
        disks: 2,
        queues: 2,
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let mut reader = Reader::new(Root::new(dir.path()));
    let base: Vec<Sample> = (0..DISTINCT)
        .map(|t| {
            write_host(dir.path(), &spec, t).expect("synth");
            reader.sample()
        })
        .collect();
    let h = header_for(&base[0], Duration::from_secs(1), 0);
    let mut judge = Digester::new(Thresholds::default());
    let (mut bytes, mut digest_bytes) = (0, 0);
    let mut judging = Duration::ZERO;
    let (mut stall, mut swap) = (0u64, 0u64);
    for d in 0..days {
        let mut w = Writer::new(Vec::with_capacity(64 << 20), &h).expect("header");
        for i in d * DAY..(d + 1) * DAY {
            let mut s = base[i % base.len()].clone();
            s.time.wall_ms = T0 + i as i64 * 1000;
            let incident = i % 3600 < 300;
            stall += if incident { 400_000 } else { 1_000 };
            swap += if incident { 5_000 } else { 0 };
            s.pressure = Some(Pressure {
                cpu: psi(stall / 8, 0),
                memory: psi(stall, stall / 3),
                io: psi(stall, stall / 2),
                irq: None,
            });
            s.memory.vmstat.pswpout = Some(swap);
            s.memory.vmstat.pswpin = Some(swap / 5);
            // Dirty pages well under the background limit: quiet between the incidents (the
            // synthetic host's own figure holds `dirty.background` all day, an info finding,
            // and explain decodes every interval in which a finding holds).
            s.memory.vmstat.nr_dirty = Some(100_000);
            s.memory.vmstat.nr_writeback = Some(0);
            let t = std::time::Instant::now();
            let due = judge.next(&s, w.samples());
            judging += t.elapsed();
            if let Some((kind, p)) = due {
                digest_bytes += 29 + p.len();
                w.record(kind, p, s.time.wall_ms, i as u64).expect("digest");
            }
            w.sample(&s, i as u64).expect("sample");
        }
        let out = w.into_inner();
        bytes += out.len();
        let name = match d {
            0 => path.to_path_buf(),
            d => std::path::PathBuf::from(format!("{}.{d}", path.display())),
        };
        std::fs::write(name, &out).expect("write day");
    }
    println!(
        "judging the intervals for the digests: {:.1} µs a sample",
        judging.as_secs_f64() * 1e6 / (days * DAY) as f64
    );
    (bytes, digest_bytes)
}

/// Runs perftop with `args` under `/usr/bin/time`: (wall seconds, CPU seconds, peak RSS in MB).
fn timed(args: &[&str]) -> Option<(f64, f64, f64)> {
    // `EXPLAIN_BIN=PATH`: time another build (main's, for a before/after in the same window).
    let bin = std::env::var("EXPLAIN_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_perftop").into());
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%e %U %S %M", &bin])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "perftop {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err.lines().last()?;
    let mut it = last.split_whitespace();
    let secs: f64 = it.next()?.parse().ok()?;
    let user: f64 = it.next()?.parse().ok()?;
    let sys: f64 = it.next()?.parse().ok()?;
    let kb: f64 = it.next()?.parse().ok()?;
    Some((secs, user + sys, kb / 1024.0))
}

/// Prints the table's rows for `runs`.
fn table(runs: &[(&str, Vec<&str>)]) {
    // Wall time moves with the VM's other load; CPU (user + system) is the process's own.
    println!(
        "| command | wall | CPU | peak RSS |  (load average {})",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    println!("|---|---|---|---|");
    for (what, args) in runs {
        match timed(args) {
            Some((s, cpu, mb)) => println!("| {what} | {s:.2} s | {cpu:.2} s | {mb:.0} MB |"),
            None => println!("| {what} | failed (no /usr/bin/time?) | | |"),
        }
    }
}

/// The recording at `$var` (reused when it exists: the week takes minutes to write), else a
/// fresh one in `dir`.
fn recording(var: &str, dir: &std::path::Path, days: usize) -> std::path::PathBuf {
    let path = std::env::var_os(var).map_or_else(
        || dir.join(format!("{days}d.ptrec")),
        std::path::PathBuf::from,
    );
    if std::env::var_os(var).is_some() && path.exists() {
        println!(
            "{days}-day 2-CPU recording ({days} segment(s)): {} samples, reused from {}",
            days * DAY,
            path.display()
        );
        return path;
    }
    let (bytes, digests) = write_days(&path, days);
    println!(
        "{days}-day 2-CPU recording ({days} segment(s)): {} samples, {:.1} MB, of which digests {digests} B ({:.2} B a sample)",
        days * DAY,
        bytes as f64 / 1e6,
        digests as f64 / (days * DAY) as f64
    );
    path
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    // `EXPLAIN_DAY=PATH`: keep the day there (and reuse it when it exists), for profiling.
    let day = recording("EXPLAIN_DAY", dir.path(), 1);
    let p = day.to_str().expect("utf8 path");
    table(&[
        ("explain (text)", vec!["explain", p]),
        (
            "explain --format json",
            vec!["explain", p, "--format", "json"],
        ),
        (
            "explain --format html",
            vec!["explain", p, "--format", "html"],
        ),
        ("diff A A (two walks)", vec!["diff", p, p]),
        // The last half hour: "normal here" from an even sample of the whole day.
        (
            "explain --from \"30m ago\" (normal over the day)",
            vec!["explain", p, "--from", "30m ago"],
        ),
    ]);
    // `EXPLAIN_WEEK=PATH`: a week as the service's seven day-long segments (PATH, PATH.1, ...
    // PATH.6), kept there and reused; the budget for a week is 20 s.
    if std::env::var_os("EXPLAIN_WEEK").is_some() {
        let week = recording("EXPLAIN_WEEK", dir.path(), 7);
        let p = week.to_str().expect("utf8 path");
        table(&[
            ("explain of the week (text)", vec!["explain", p]),
            (
                "explain of the week's last day (normal over the week)",
                vec!["explain", p, "--from", "24h ago"],
            ),
        ]);
    }
}
