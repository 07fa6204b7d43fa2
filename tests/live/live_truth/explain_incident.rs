//! `perftop explain` over a real incident recorded on this VM: buffered writes past small dirty
//! limits beside a squeezed memory cgroup that ends in an OOM kill. The report is judged
//! against the kernel's own record taken beside the recorder: `/proc/vmstat` `oom_kill`
//! before/after, and `/proc/meminfo` `Dirty` against `nr_dirty_background_threshold` read
//! every 100 ms. Foreign activity (another build's writes) is judged the same way: an episode
//! is right when the kernel's record holds it, whoever caused it.

use super::dirty::dirty_limits;
use super::live::{self, Recording, Table};
use super::oom::make_group;
use super::support;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// One 100 ms read of the kernel's dirty state: wall ms, Dirty kB, the background threshold kB.
type Read = (i64, u64, u64);

fn read_dirty(page_kb: u64) -> Option<Read> {
    let m = live::kv("/proc/meminfo");
    let v = live::kv("/proc/vmstat");
    Some((
        live::wall_ms(),
        *m.get("Dirty")?,
        v.get("nr_dirty_background_threshold")? * page_kb,
    ))
}

/// Spans (first ms, last ms) where every read had Dirty above the background threshold.
fn over_spans(reads: &[Read]) -> Vec<(i64, i64)> {
    let mut spans: Vec<(i64, i64)> = Vec::new();
    let mut open: Option<(i64, i64)> = None;
    for &(t, dirty, bg) in reads {
        if dirty > bg {
            open = Some(open.map_or((t, t), |(a, _)| (a, t)));
        } else if let Some(s) = open.take() {
            spans.push(s);
        }
    }
    spans.extend(open);
    spans
}

/// An RFC 3339 time of the report (`dump`'s format) in Unix ms, by perftop's own parser.
fn ms(rfc: &Value) -> i64 {
    rfc.as_str()
        .and_then(|s| perftop::record::parse_time(s, 0, 0).ok())
        .unwrap_or(i64::MIN)
}

#[test]
fn explain_of_a_real_incident_matches_the_kernels_record() {
    let test = "explain_of_a_real_incident_matches_the_kernels_record";
    let _machine = crate::support::machine();
    if !live::ready(test, &["dd", "tail", "sync"]) {
        return;
    }
    let name = format!("perftop-explain-{}", std::process::id());
    let (group, _) = match make_group(&name) {
        Ok(g) => g,
        Err(e) => {
            support::skip(test, &format!("cannot make a memory-limited cgroup: {e}"));
            return;
        }
    };
    let dir = tempfile::tempdir_in("/var/tmp").expect("tempdir on the disk");
    let page_kb = live::page_size() / 1024;
    let _limits = dirty_limits(64 << 20, 256 << 20);
    let oom_before = live::kv("/proc/vmstat").get("oom_kill").copied();
    // The kernel's dirty record, every 100 ms, for as long as the recorder runs.
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let reader = std::thread::spawn(move || {
        let mut reads = Vec::new();
        while !flag.load(Ordering::Relaxed) {
            reads.extend(read_dirty(page_kb));
            live::sleep_ms(100);
        }
        reads
    });
    let rec = Recording::start(1.0, 26);
    live::sleep_ms(4000);
    // Buffered writes past the 64 MiB background threshold on the host, and the same inside
    // the 32 MiB group (its page cache reclaimed under the writer: the squeeze).
    let host_file = dir.path().join("host.dat");
    let group_file = dir.path().join("group.dat");
    let host_dd = live::Load(
        Command::new("timeout")
            .args([
                "8",
                "dd",
                "if=/dev/zero",
                "bs=1M",
                "count=3000",
                "status=none",
            ])
            .arg(format!("of={}", host_file.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("dd"),
    );
    let group_dd = live::Load(
        Command::new("sh")
            .arg("-c")
            .arg(format!(
                "echo $$ > {}/cgroup.procs && exec timeout 8 dd if=/dev/zero of={} bs=1M \
                 count=3000 status=none",
                group.0.display(),
                group_file.display()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("dd in the group"),
    );
    live::sleep_ms(8500);
    drop((host_dd, group_dd));
    // The squeeze ends in a kill: `tail /dev/zero` keeps every byte it reads.
    let _ = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {}/cgroup.procs && exec tail /dev/zero",
            group.0.display()
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let recorded = rec.stop();
    stop.store(true, Ordering::Relaxed);
    let reads = reader.join().expect("reader");
    let oom_after = live::kv("/proc/vmstat").get("oom_kill").copied();
    let _ = std::fs::remove_file(&host_file);
    let _ = std::fs::remove_file(&group_file);
    let out = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(["explain", "--format", "json"])
        .arg(recorded.path())
        .output()
        .expect("perftop explain");
    assert!(
        out.status.success(),
        "explain: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("explain JSON");
    let episodes = report["episodes"].as_array().cloned().unwrap_or_default();
    let mut t = Table::new("explain_of_a_real_incident_matches_the_kernels_record");
    t.holds(
        "intervals explained",
        report["intervals"].to_string(),
        "25 (26 samples at 1 s)".into(),
        report["intervals"].as_u64() == Some(25),
    );

    // OOM: the report's kills are the kernel's counter's delta, and a memory episode holds each.
    let kills: u64 = report["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["kind"] == "oom_kill")
        .filter_map(|e| {
            let text = e["text"].as_str()?;
            text.strip_prefix("OOM killer: ")?
                .split_whitespace()
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum();
    match (oom_before, oom_after) {
        (Some(a), Some(b)) if b > a => {
            t.holds(
                "OOM kills in the report",
                kills.to_string(),
                format!("{} (/proc/vmstat oom_kill delta)", b - a),
                kills == b - a,
            );
            let kill_times: Vec<i64> = report["events"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|e| e["kind"] == "oom_kill")
                .map(|e| ms(&e["time"]))
                .collect();
            let covered = kill_times.iter().all(|k| {
                episodes.iter().any(|e| {
                    e["family"] == "memory"
                        && ms(&e["start"]) - 1000 <= *k
                        && *k <= ms(&e["end"]) + 1000
                })
            });
            t.holds(
                "a memory episode holds each kill",
                format!("{} kill(s), covered: {covered}", kill_times.len()),
                "covered".into(),
                covered && !kill_times.is_empty(),
            );
        }
        _ => t.note(
            "OOM kills",
            &kills.to_string(),
            "the kernel counted no kill (no OOM in this run)",
        ),
    }

    // Dirty: each dirty episode lies where the kernel had Dirty past its background threshold,
    // and each span of 2 s or more past it has a dirty episode.
    let spans = over_spans(&reads);
    let dirty_eps: Vec<(i64, i64)> = episodes
        .iter()
        .filter(|e| e["family"] == "dirty")
        .map(|e| (ms(&e["start"]), ms(&e["end"])))
        .collect();
    // An episode's start is its first interval's start, its end the last interval's end: the
    // sample that saw it is within the 1 s interval, and our reads are 100 ms apart.
    let near = |(a, b): (i64, i64), (c, d): (i64, i64)| a <= d + 1200 && c <= b + 1200;
    // An episode with no span near it is judged by the reads around it (its window, 1.2 s
    // either side): where two reads lie over 300 ms apart (this reader starved: a clean-clone
    // run beside three builds, load 10, had 1 of 2 episodes unsupported) or Dirty came within
    // 20% of the threshold (a crossing between two reads 100 ms apart is not ruled out), it is
    // noted, not judged; an episode with Dirty nowhere near the threshold fails (wrong units or
    // a wrong threshold would be off by 4x or 1024x).
    let around = |(a, b): (i64, i64)| -> (i64, f64) {
        let near: Vec<&Read> = reads
            .iter()
            .filter(|r| r.0 >= a - 1200 && r.0 <= b + 1200)
            .collect();
        let gap = near
            .windows(2)
            .map(|w| w[1].0 - w[0].0)
            .max()
            .unwrap_or(i64::MAX);
        let ratio = near
            .iter()
            .filter(|r| r.2 > 0)
            .map(|r| r.1 as f64 / r.2 as f64)
            .fold(0.0, f64::max);
        (gap, ratio)
    };
    let mut unsupported = Vec::new();
    for e in dirty_eps
        .iter()
        .filter(|e| !spans.iter().any(|s| near(**e, *s)))
    {
        match around(*e) {
            (gap, _) if gap > 300 => t.note(
                "dirty episode without a span near it",
                &format!("{e:?}"),
                &format!("reads {gap} ms apart there (this reader starved): not judged"),
            ),
            (_, ratio) if ratio >= 0.8 => t.note(
                "dirty episode without a span near it",
                &format!("{e:?}"),
                &format!(
                    "Dirty reached {:.0}% of the threshold there: a crossing between reads \
                     is not ruled out, not judged",
                    ratio * 100.0
                ),
            ),
            _ => unsupported.push(e),
        }
    }
    t.holds(
        "dirty episodes the kernel's record holds",
        format!(
            "{} of {}",
            dirty_eps.len() - unsupported.len(),
            dirty_eps.len()
        ),
        format!(
            "all ({} span(s) past the background threshold)",
            spans.len()
        ),
        unsupported.is_empty(),
    );
    // A span of 2 s holds at least one sample of the 1 s recorder. This VM's disk writes back
    // as fast as dd dirties (Dirty stays near 0 without a stalled disk), so a run may hold
    // none: then only the check above judges, and the table says so.
    let long: Vec<_> = spans.iter().filter(|(a, b)| b - a >= 2000).collect();
    let missed: Vec<_> = long
        .iter()
        .filter(|s| !dirty_eps.iter().any(|e| near(*e, ***s)))
        .collect();
    if long.is_empty() {
        t.note(
            "kernel spans past the background threshold for >= 2 s",
            "-",
            &format!(
                "none in this run ({} shorter span(s)): not judged",
                spans.len()
            ),
        );
    } else {
        t.holds(
            "kernel spans past the background threshold for >= 2 s with an episode",
            format!("{} of {}", long.len() - missed.len(), long.len()),
            format!("all; missed {missed:?}"),
            missed.is_empty(),
        );
    }
    drop(group);
    t.finish();
}
