//! Stuck I/O: a loop device over a frozen ext4 holds requests in flight and completes none.

use super::live::{self, f, find, Recording, Table};
use super::*;
use serde_json::Value;
use std::time::Duration;

/// Writes in flight on a disk that completes nothing, while perftop records 3 intervals;
/// hands the frames, the disk's name and the kernel's before/after facts to `check`.
fn with_stuck_disk(test: &str, check: impl FnOnce(&mut Table, &[Value], &str)) {
    if !live::ready(test, &["dd", "mkfs.ext4", "fsfreeze", "losetup"]) {
        return;
    }
    let mut disk = match super::frozen::FrozenDisk::new(16, false) {
        Ok(d) => d,
        Err(e) => {
            support::skip(test, &format!("cannot build a stalling disk: {e}"));
            return;
        }
    };
    disk.freeze().expect("fsfreeze");
    let name = disk.name();
    disk.stuck_writers(3);
    let inflight = || disk.inflight();
    if !live::wait_until(Duration::from_secs(5), || inflight() >= 3) {
        support::skip(
            test,
            "writes to a loop device over a frozen ext4 did not stay in flight",
        );
        return;
    }
    let writes_done = || -> Option<u64> {
        let text = live::read_trim("/proc/diskstats")?;
        let line = text
            .lines()
            .find(|l| l.split_whitespace().nth(2) == Some(name.as_str()))?;
        line.split_whitespace().nth(7)?.parse().ok()
    };
    let before = writes_done();
    let frames = Recording::start(1.0, 4).finish();
    let after = writes_done();
    let mut t = Table::new(if test.starts_with("stuck_io_shows_in_flight") {
        "stuck_io_shows_in_flight"
    } else {
        "stuck_io_is_flagged_stalled"
    });
    t.holds(
        &format!("kernel: {name} writes completed during the window"),
        format!("{before:?} -> {after:?}"),
        "unchanged".into(),
        before.is_some() && before == after,
    );
    t.holds(
        &format!("kernel: {name} inflight"),
        inflight().to_string(),
        ">= 3".into(),
        inflight() >= 3,
    );
    check(&mut t, &frames, &name);
    drop(disk);
    t.finish();
}

#[test]
fn stuck_io_shows_in_flight() {
    let _machine = support::machine();
    with_stuck_disk("stuck_io_shows_in_flight", |t, frames, name| {
        for (i, fr) in frames.iter().enumerate() {
            let d = find(&fr["disks"], "disk_device", name);
            // Nothing completes, so every rate is exactly 0 and the in-flight gauge is the
            // kernel's own count.
            t.close(
                &format!("[{i}] {name} inflight"),
                d.and_then(|d| f(d, &["inflight"])),
                3.0,
                0.0,
            );
            t.close(
                &format!("[{i}] {name} w/s"),
                d.and_then(|d| f(d, &["w/s"])),
                0.0,
                0.0,
            );
            t.note(
                &format!("[{i}] {name} %util / aqu-sz (io_ticks grows, time_in_queue only at completion)"),
                &format!(
                    "{:.2} / {:.2}",
                    d.and_then(|d| f(d, &["util"])).unwrap_or(f64::NAN),
                    d.and_then(|d| f(d, &["aqu-sz"])).unwrap_or(f64::NAN)
                ),
                "-",
            );
        }
    });
}

#[test]
fn stuck_io_is_flagged_stalled() {
    let _machine = support::machine();
    with_stuck_disk("stuck_io_is_flagged_stalled", |t, frames, name| {
        for (i, fr) in frames.iter().enumerate() {
            let d = find(&fr["disks"], "disk_device", name);
            let stalled = d.and_then(|d| d["stalled"].as_bool());
            t.holds(
                &format!("[{i}] {name} stalled"),
                format!("{stalled:?}"),
                "Some(true)".into(),
                stalled == Some(true),
            );
            t.close(
                &format!("[{i}] {name} inflight"),
                d.and_then(|d| f(d, &["inflight"])),
                3.0,
                0.0,
            );
        }
        // Findings are raised after 3 samples: the last interval must carry it.
        let ids: Vec<String> = frames
            .last()
            .and_then(|fr| fr["findings"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|x| x["id"].as_str().map(str::to_string))
            .collect();
        t.holds(
            "finding disk.stalled",
            format!("{ids:?}"),
            "contains disk.stalled".into(),
            ids.iter().any(|x| x == "disk.stalled"),
        );
    });
}
