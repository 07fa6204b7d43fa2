//! The storage stack live: perftop's `disks[]` queue settings against the kernel's sysfs files
//! for the VM's disk and a loop device; the `disk.DEV.*` knobs set, read back and undone on
//! that loop device (and a value the kernel rounds rolled back); and, where the kernel has
//! device-mapper, a striped map over two loop devices whose `slaves` and per-path r/s must
//! match `dmsetup deps` and `iostat -x` over the same window. Every loop device, map and queue
//! setting is put back by a guard's `Drop`, on every path.

use super::live::{self, f, find, sh, LoadThread, Recording, Table};
use super::*;
use serde_json::Value;
use std::process::Command;

/// Loop devices over sparse files in /var/tmp (and a dm map over them): their queue settings
/// as found are written back, the map removed and the devices detached on drop.
struct Loops {
    dir: tempfile::TempDir,
    devs: Vec<String>,
    map: Option<String>,
    saved: Vec<(String, String)>,
}

impl Loops {
    /// `n` loop devices of `mb` MiB, or a visible SKIP of test `test` saying why not.
    fn or_skip(test: &str, n: usize, mb: u64) -> Option<Loops> {
        Loops::new(n, mb)
            .map_err(|e| support::skip(test, &format!("cannot attach loop devices: {e}")))
            .ok()
    }

    fn new(n: usize, mb: u64) -> Result<Loops, String> {
        let dir = tempfile::Builder::new()
            .prefix("perftop-live-storage-")
            .tempdir_in("/var/tmp")
            .map_err(|e| format!("tempdir in /var/tmp: {e}"))?;
        let mut g = Loops {
            dir,
            devs: Vec::new(),
            map: None,
            saved: Vec::new(),
        };
        for i in 0..n {
            g.attach(i, mb, None)?;
        }
        Ok(g)
    }

    /// Attaches image `i` of `mb` MiB to `dev` (`loopN`), or to the first free loop device.
    fn attach(&mut self, i: usize, mb: u64, dev: Option<&str>) -> Result<(), String> {
        let img = self.dir.path().join(format!("{i}.img"));
        let img = img.to_string_lossy().into_owned();
        sh(&["truncate", "-s", &format!("{mb}M"), &img])?;
        let name = match dev {
            Some(d) => {
                sh(&["losetup", &format!("/dev/{d}"), &img])?;
                d.to_string()
            }
            None => {
                let dev = sh(&["losetup", "-f", "--show", &img])?;
                dev.trim_start_matches("/dev/").to_string()
            }
        };
        for f in ["scheduler", "read_ahead_kb", "nr_requests"] {
            let path = format!("/sys/block/{name}/queue/{f}");
            if let Some(v) = live::read_trim(&path) {
                let v = perftop::tweak::norm(&v);
                self.saved.push((path, v));
            }
        }
        self.devs.push(name);
        Ok(())
    }
}

/// `name`'s `/proc/diskstats` counters, or `None` when it is not listed.
fn diskstats(name: &str) -> Option<Vec<u64>> {
    let text = live::read_trim("/proc/diskstats")?;
    text.lines().find_map(|l| {
        let mut it = l.split_whitespace();
        (it.nth(2)? == name).then(|| it.filter_map(|v| v.parse().ok()).collect())
    })
}

/// A loop device the kernel made ahead of use that has done no I/O since boot (every
/// `/proc/diskstats` counter zero) and has nothing attached.
fn never_used_loop() -> Option<String> {
    let text = live::read_trim("/proc/diskstats")?;
    text.lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|d| d.starts_with("loop"))
        .find(|d| {
            diskstats(d).is_some_and(|c| c.iter().all(|&n| n == 0))
                && !std::path::Path::new(&format!("/sys/block/{d}/loop/backing_file")).exists()
        })
        .map(str::to_string)
}

impl Drop for Loops {
    fn drop(&mut self) {
        if let Some(m) = self.map.take() {
            let _ = sh(&["dmsetup", "remove", "--noudevsync", &m]);
        }
        // The scheduler first: nr_requests may only go back once the scheduler takes it.
        for (path, v) in &self.saved {
            let _ = std::fs::write(path, format!("{v}\n"));
        }
        for (path, v) in &self.saved {
            let _ = std::fs::write(path, format!("{v}\n"));
        }
        for d in &self.devs {
            let _ = sh(&["losetup", "-d", &format!("/dev/{d}")]);
        }
    }
}

fn sysfs(dev: &str, file: &str) -> Option<String> {
    live::read_trim(format!("/sys/block/{dev}/{file}")).map(|v| perftop::tweak::norm(&v))
}

fn json_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        x => x.to_string(),
    }
}

#[test]
fn storage_stack_matches_sysfs() {
    const T: &str = "storage_stack_matches_sysfs";
    let _machine = support::machine();
    if !live::ready(T, &["losetup", "truncate"]) {
        return;
    }
    let Some(loops) = Loops::or_skip(T, 1, 64) else {
        return;
    };
    let lo = loops.devs[0].clone();
    let frames = Recording::start(1.0, 2).finish();
    let mut t = Table::new(T);
    assert_eq!(frames.len(), 1, "perftop intervals");
    let mut disks = vec![lo];
    if std::path::Path::new("/sys/block/vda").exists() {
        disks.push("vda".into());
    }
    for d in &disks {
        let ours = find(&frames[0]["disks"], "disk_device", d).expect("disk in perftop");
        for (key, file) in [
            ("scheduler", "queue/scheduler"),
            ("nr_requests", "queue/nr_requests"),
            ("read_ahead_kb", "queue/read_ahead_kb"),
            ("max_sectors_kb", "queue/max_sectors_kb"),
            ("rq_affinity", "queue/rq_affinity"),
            ("queue_depth", "device/queue_depth"),
            ("device_state", "device/state"),
        ] {
            let theirs = sysfs(d, file).unwrap_or_else(|| "null".into());
            let got = json_text(&ours[key]);
            t.holds(
                &format!("{d} {key}"),
                got.clone(),
                theirs.clone(),
                got == theirs,
            );
        }
        let queues = std::fs::read_dir(format!("/sys/block/{d}/mq")).map_or(0, |r| r.count());
        let got = f(ours, &["hw_queues"]);
        t.holds(
            &format!("{d} hw_queues"),
            format!("{got:?}"),
            queues.to_string(),
            got == Some(queues as f64),
        );
        if sysfs(d, "device/queue_depth").is_none() {
            let why = json_text(&ours["queue_depth_unknown"]);
            t.holds(
                &format!("{d} queue_depth unknown"),
                why.clone(),
                "not SCSI (no device/queue_depth)".into(),
                why == "not SCSI (no device/queue_depth)",
            );
        }
    }
    t.finish();
}

#[test]
fn storage_tweaks_round_trip_on_a_loop_device() {
    const T: &str = "storage_tweaks_round_trip_on_a_loop_device";
    let _machine = support::machine();
    if !live::ready(T, &["losetup", "truncate"]) {
        return;
    }
    let Some(loops) = Loops::or_skip(T, 1, 64) else {
        return;
    };
    let lo = loops.devs[0].clone();
    let state = loops.dir.path().join("state");
    let mut t = Table::new(T);
    for (what, value) in [
        ("scheduler", "mq-deadline"),
        ("read_ahead_kb", "4096"),
        ("nr_requests", "64"),
    ] {
        let file = format!("queue/{what}");
        let before = sysfs(&lo, &file).unwrap_or_default();
        let knob = format!("disk.{lo}.{what}");
        let (ok, text) = perftop_tweak(&state, &["set", &knob, value]);
        let now = sysfs(&lo, &file).unwrap_or_default();
        t.holds(
            &format!("{knob} set"),
            format!("{ok} {now}"),
            format!("true {value}"),
            ok && now == value,
        );
        if !ok {
            eprintln!("{text}");
        }
        let (ok, text) = perftop_tweak(&state, &["undo"]);
        let after = sysfs(&lo, &file).unwrap_or_default();
        t.holds(
            &format!("{knob} undo"),
            format!("{ok} {after}"),
            format!("true {before}"),
            ok && after == before,
        );
        if !ok {
            eprintln!("{text}");
        }
    }
    // The kernel keeps read-ahead in pages: 130 KiB reads back 128, so perftop rolls back.
    let file = "queue/read_ahead_kb";
    let before = sysfs(&lo, file).unwrap_or_default();
    let (ok, text) = perftop_tweak(&state, &["set", &format!("disk.{lo}.read_ahead_kb"), "130"]);
    let after = sysfs(&lo, file).unwrap_or_default();
    t.holds(
        "read_ahead_kb 130: read back 128, rolled back",
        format!("{ok} {after} {}", text.contains("read back \"128\"")),
        format!("false {before} true"),
        !ok && after == before && text.contains("read back \"128\""),
    );
    t.finish();
}

/// A striped dm map over two loop devices under steady direct reads: perftop's `slaves` must
/// be `dmsetup deps`'s, and each path's r/s iostat's (both stripes carry half the reads).
#[test]
fn dm_map_slaves_and_per_path_rates_match_iostat() {
    const T: &str = "dm_map_slaves_and_per_path_rates_match_iostat";
    let _machine = support::machine();
    if !live::ready(T, &["losetup", "truncate", "dmsetup", "iostat", "dd"]) {
        return;
    }
    if let Err(e) = sh(&["dmsetup", "version"]) {
        let first = e.lines().next().unwrap_or_default();
        support::skip(T, &format!("no device-mapper in this kernel ({first})"));
        return;
    }
    let Some(mut loops) = Loops::or_skip(T, 2, 64) else {
        return;
    };
    let name = format!("perftop-live-{}", std::process::id());
    // 64 MiB each = 131072 sectors; striped over both with 64 KiB (128-sector) chunks.
    let table = format!(
        "0 262144 striped 2 128 /dev/{} 0 /dev/{} 0",
        loops.devs[0], loops.devs[1]
    );
    // No udev sync (a VM or container may have no udev to answer); the kernel's devtmpfs
    // makes /dev/dm-N by itself, and sysfs names the map.
    if let Err(e) = sh(&[
        "dmsetup",
        "create",
        "--noudevsync",
        &name,
        "--table",
        &table,
    ]) {
        support::skip(T, &format!("dmsetup create failed: {e}"));
        return;
    }
    loops.map = Some(name.clone());
    let dm = std::fs::read_dir("/sys/block")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|d| sysfs(d, "dm/name").as_deref() == Some(name.as_str()))
        .expect("the map's dm-N in /sys/block");
    let src = format!("if=/dev/{dm}");
    let _reader = LoadThread::start(move || {
        let _ = Command::new("dd")
            .args([&src, "of=/dev/null", "bs=64k", "count=1024"])
            .args(["iflag=direct", "status=none"])
            .status();
    });
    live::sleep_ms(300);
    const D: u32 = 2;
    const N: usize = 2;
    let (frames, stats) = record_beside_iostat(D, N);
    drop(_reader);
    let mut t = Table::new(T);
    assert_eq!((frames.len(), stats.len()), (N, N), "intervals");
    let mut want = loops.devs.clone();
    want.sort();
    for (i, (fr, st)) in frames.iter().zip(&stats).enumerate() {
        let map = find(&fr["disks"], "disk_device", &dm).expect("map in perftop");
        let slaves: Vec<String> = map["slaves"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        t.holds(
            &format!("[{i}] {dm} slaves"),
            slaves.join(","),
            want.join(","),
            slaves == want,
        );
        for d in &loops.devs {
            let ours = find(&fr["disks"], "disk_device", d).expect("path in perftop");
            let theirs = find(&st["disk"], "disk_device", d).expect("path in iostat");
            let g = theirs["r/s"].as_f64().unwrap_or(f64::NAN);
            // The same counters over windows a few ms apart: 5%, plus one request per interval.
            t.rel(
                &format!("[{i}] {d} r/s"),
                f(ours, &["r/s"]),
                g,
                0.05,
                1.0 / f64::from(D),
            );
        }
    }
    t.finish();
}

/// Writes a queue setting back when dropped (declared before the disk it belongs to, so the
/// disk is thawed first: changing `nr_requests` waits for the queue to drain).
struct Restore(Option<(String, String)>);

impl Drop for Restore {
    fn drop(&mut self) {
        if let Some((path, v)) = self.0.take() {
            let _ = std::fs::write(path, format!("{v}\n"));
        }
    }
}

/// A loop device held at `nr_requests` 4 (the kernel's minimum) with 8 direct writers stuck
/// behind a frozen filesystem: 4 requests in flight, the other writers waiting for a tag in
/// the host. `disk.queue_full` must name it, with the kernel's in-flight count.
#[test]
fn queue_full_on_a_loop_device_held_at_nr_requests() {
    const T: &str = "queue_full_on_a_loop_device_held_at_nr_requests";
    let _machine = support::machine();
    if !live::ready(T, &["dd", "mkfs.ext4", "fsfreeze", "losetup"]) {
        return;
    }
    let mut restore = Restore(None);
    let mut disk = match super::frozen::FrozenDisk::new(16, false) {
        Ok(d) => d,
        Err(e) => {
            support::skip(T, &format!("cannot build a stalling disk: {e}"));
            return;
        }
    };
    let name = disk.name();
    let path = format!("/sys/block/{name}/queue/nr_requests");
    let Some(old) = live::read_trim(&path) else {
        support::skip(T, &format!("{path} unreadable"));
        return;
    };
    if std::fs::write(&path, "4\n").is_err() || live::read_trim(&path).as_deref() != Some("4") {
        support::skip(T, &format!("{path} does not take 4"));
        return;
    }
    restore.0 = Some((path, old));
    disk.freeze().expect("fsfreeze");
    disk.stuck_writers(8);
    let inflight = || disk.inflight();
    if !live::wait_until(std::time::Duration::from_secs(5), || inflight() >= 4) {
        support::skip(
            T,
            "writes to a loop device over a frozen ext4 did not stay in flight",
        );
        return;
    }
    let frames = Recording::start(1.0, 4).finish();
    let mut t = Table::new(T);
    let now = inflight();
    t.holds(
        &format!("kernel: {name} inflight (8 writers, nr_requests 4)"),
        now.to_string(),
        "4".into(),
        now == 4,
    );
    for (i, fr) in frames.iter().enumerate() {
        let d = find(&fr["disks"], "disk_device", &name);
        t.close(
            &format!("[{i}] {name} inflight"),
            d.and_then(|d| f(d, &["inflight"])),
            4.0,
            0.0,
        );
        t.close(
            &format!("[{i}] {name} nr_requests"),
            d.and_then(|d| f(d, &["nr_requests"])),
            4.0,
            0.0,
        );
    }
    // Findings are raised after 3 samples: the last interval must carry it.
    let msg = frames
        .last()
        .and_then(|fr| fr["findings"].as_array())
        .and_then(|a| a.iter().find(|x| x["id"] == "disk.queue_full"))
        .and_then(|x| x["message"].as_str().map(String::from))
        .unwrap_or_default();
    let want = format!("{name}: 4 in flight");
    t.holds(
        "disk.queue_full raised",
        msg.clone(),
        format!("{want}... 100% of nr_requests 4"),
        msg.starts_with(&want) && msg.contains("100% of nr_requests 4"),
    );
    drop(disk);
    drop(restore);
    t.finish();
}

/// A device that has never done I/O has its settings held until its first I/O (see
/// `DiskSample::never_used`): a spare loop device, attached without a partition scan (no I/O), has
/// its `read_ahead_kb` changed by hand while perftop records; the first interval that shows
/// its first read must show the new value, as sysfs has it.
#[test]
fn a_never_used_loop_devices_settings_are_read_on_its_first_io() {
    const T: &str = "a_never_used_loop_devices_settings_are_read_on_its_first_io";
    let _machine = support::machine();
    if !live::ready(T, &["losetup", "truncate", "dd", "python3"]) {
        return;
    }
    // A spare device without I/O since boot, else one added for the test (removed after
    // `_loops` detaches it: dropped last).
    let (lo, _added) = match never_used_loop() {
        Some(lo) => (lo, None),
        None => match super::spare_loop::add() {
            Ok((lo, added)) => (lo, Some(added)),
            Err(e) => {
                support::skip(
                    T,
                    &format!("no spare loop device without I/O since boot, and adding one: {e}"),
                );
                return;
            }
        },
    };
    let Some(_loops) = Loops::new(0, 16)
        .and_then(|mut g| g.attach(0, 16, Some(&lo)).map(|()| g))
        .map_err(|e| support::skip(T, &format!("cannot attach {lo}: {e}")))
        .ok()
    else {
        return;
    };
    let file = "queue/read_ahead_kb";
    let before = sysfs(&lo, file).unwrap_or_default();
    let set = if before == "1024" { "512" } else { "1024" };
    let rec = Recording::start(0.5, 12);
    // perftop's first samples read the spare device's settings, then hold them.
    live::sleep_ms(1500);
    let wrote = std::fs::write(format!("/sys/block/{lo}/{file}"), format!("{set}\n"));
    // Soon after: the settings tier (every 20 samples at 0.5 s) would read it again in
    // these 200 ms about one time in ten; the first I/O reads it every time.
    live::sleep_ms(200);
    // Attaching did no I/O (no udev probe here); if something read it meanwhile, the first
    // I/O below is not the first.
    let untouched = diskstats(&lo).is_some_and(|c| c.iter().all(|&n| n == 0));
    let dd = Command::new("dd")
        .args([&format!("if=/dev/{lo}"), "of=/dev/null", "bs=4k", "count=1"])
        .args(["iflag=direct", "status=none"])
        .status();
    let frames = rec.finish();
    let now = sysfs(&lo, file).unwrap_or_default();
    if !untouched {
        support::skip(
            T,
            &format!("{lo} did I/O before the test's first read (a udev probe?)"),
        );
        return;
    }
    let mut t = Table::new(T);
    t.holds(
        "hand write and dd",
        format!(
            "{} {}",
            wrote.is_ok(),
            dd.as_ref().is_ok_and(|s| s.success())
        ),
        "true true".into(),
        wrote.is_ok() && dd.is_ok_and(|s| s.success()),
    );
    let ra = |fr: &Value| {
        json_text(&find(&fr["disks"], "disk_device", &lo).unwrap_or(&Value::Null)["read_ahead_kb"])
    };
    let reads = |fr: &Value| find(&fr["disks"], "disk_device", &lo).and_then(|d| f(d, &["r/s"]));
    let unused = |fr: &Value| {
        json_text(&find(&fr["disks"], "disk_device", &lo).unwrap_or(&Value::Null)["never_used"])
    };
    let first_io = frames
        .iter()
        .position(|fr| reads(fr).is_some_and(|r| r > 0.0));
    for (i, fr) in frames
        .iter()
        .enumerate()
        .take(first_io.unwrap_or(frames.len()))
    {
        t.note(
            &format!("[{i}] {lo} read_ahead_kb before its first I/O"),
            &ra(fr),
            "held: as first read",
        );
        // /proc/diskstats had every counter at zero until dd (checked above).
        let flag = unused(fr);
        t.holds(
            &format!("[{i}] {lo} never_used before its first I/O"),
            flag.clone(),
            "true".into(),
            flag == "true",
        );
    }
    if let Some(i) = first_io {
        let flag = unused(&frames[i]);
        t.holds(
            &format!("[{i}] {lo} never_used on its first I/O's interval"),
            flag.clone(),
            "false".into(),
            flag == "false",
        );
    }
    let at = first_io.map(|i| (i, ra(&frames[i])));
    t.holds(
        &format!("{lo} read_ahead_kb on its first I/O's interval vs sysfs"),
        format!("{at:?}"),
        now.clone(),
        at.as_ref().is_some_and(|(_, v)| v == &now) && now == set,
    );
    t.finish();
}
