//! The storage stack on a node_exporter-style tree: a multipath map `dm-0` (`mpatha`,
//! `dm/uuid` `mpath-...`) over the SCSI paths `sdi` and `sdj` (`device` links to their
//! `H:C:T:L` directories, `queue_depth` 32, host `can_queue` 64), and the virtio disk `vda`
//! (no SCSI depth). Every expected number is worked out by hand from the files written here:
//! the interval is 2.00 s (`proc/uptime` 1000.00 → 1002.00).

use crate::support;

mod tweaks;
mod unused;

use perftop::assess::assess;
use perftop::derive::DiskMetrics;
use perftop::findings::{Finding, Thresholds};
use perftop::root::Root;
use perftop::sample::Sample;
use perftop::source::Reader;
use std::fs;
use std::path::{Path, PathBuf};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(p, text).expect("write");
}

/// One pass of the tree: per path (sdi, sdj) reads completed since boot, requests in flight
/// and SCSI state.
#[derive(Clone)]
struct Pass {
    sdi: (u64, u64, &'static str),
    sdj: (u64, u64, &'static str),
}

/// A diskstats line: `reads` reads of 8 sectors, 1 ms each; `tiq` ms in queue.
fn line(major: u32, minor: u32, name: &str, reads: u64, inflight: u64, tiq: u64) -> String {
    format!(
        "{major} {minor} {name} {reads} 0 {} {reads} 0 0 0 0 {inflight} {tiq} {tiq} 0 0 0 0 0 0\n",
        reads * 8
    )
}

fn queue(root: &Path, dev: &str, sched: &str, nr: u64, ra: u64, queues: u32) {
    let q = format!("sys/block/{dev}/queue");
    write(root, &format!("{q}/scheduler"), &format!("{sched}\n"));
    write(root, &format!("{q}/nr_requests"), &format!("{nr}\n"));
    write(root, &format!("{q}/read_ahead_kb"), &format!("{ra}\n"));
    write(root, &format!("{q}/max_sectors_kb"), "1280\n");
    write(root, &format!("{q}/rq_affinity"), "1\n");
    write(root, &format!("{q}/rotational"), "0\n");
    for n in 0..queues {
        write(root, &format!("sys/block/{dev}/mq/{n}/nr_tags"), "128\n");
    }
}

/// A SCSI path: its queue, its `device` link to `sys/devices/.../0:0:0:LUN` with
/// `queue_depth`, `state` and `scsi_device/`.
fn scsi(root: &Path, dev: &str, lun: u32, state: &str, inflight: u64) {
    queue(root, dev, "[mq-deadline] kyber bfq none", 64, 128, 2);
    let hctl = format!("sys/devices/pci0000:00/host0/target0:0:0/0:0:0:{lun}");
    write(root, &format!("{hctl}/queue_depth"), "32\n");
    write(root, &format!("{hctl}/state"), &format!("{state}\n"));
    fs::create_dir_all(root.join(format!("{hctl}/scsi_device/0:0:0:{lun}"))).expect("scsi");
    let link = root.join(format!("sys/block/{dev}/device"));
    if !link.exists() {
        std::os::unix::fs::symlink(
            format!("../../devices/pci0000:00/host0/target0:0:0/0:0:0:{lun}"),
            link,
        )
        .expect("symlink");
    }
    write(
        root,
        &format!("sys/block/{dev}/inflight"),
        &format!("{inflight} 0\n"),
    );
}

/// The vm-2cpu fixture's `when` tree with the multipath map and its paths added.
fn tree(dir: &Path, when: &str, p: &Pass) -> PathBuf {
    let root = dir.join(when);
    support::copy_tree(&support::fixture("vm-2cpu").join(when), &root);
    let (ri, fi, si) = p.sdi;
    let (rj, fj, sj) = p.sdj;
    let mut stats = String::new();
    stats.push_str(&line(8, 128, "sdi", ri, fi, ri));
    stats.push_str(&line(8, 144, "sdj", rj, fj, rj));
    stats.push_str(&line(252, 0, "vda", 1000, 0, 1000));
    stats.push_str(&line(253, 0, "dm-0", ri + rj, 0, ri + rj));
    write(&root, "proc/diskstats", &stats);
    scsi(&root, "sdi", 8, si, fi);
    scsi(&root, "sdj", 9, sj, fj);
    write(&root, "sys/class/scsi_host/host0/can_queue", "64\n");
    queue(&root, "vda", "[none] mq-deadline", 256, 4096, 1);
    queue(&root, "dm-0", "[none]", 128, 256, 1);
    write(&root, "sys/block/dm-0/dm/name", "mpatha\n");
    write(
        &root,
        "sys/block/dm-0/dm/uuid",
        "mpath-3600a098038303053453f463045727a30\n",
    );
    for s in ["sdi", "sdj"] {
        fs::create_dir_all(root.join(format!("sys/block/dm-0/slaves/{s}"))).expect("slave");
    }
    root
}

const QUIET: Pass = Pass {
    sdi: (10_000, 0, "running"),
    sdj: (10_000, 0, "running"),
};

fn samples(p0: &Pass, p1: &Pass) -> (Sample, Sample) {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = Reader::new(Root::new(tree(dir.path(), "t0", p0))).sample();
    let b = Reader::new(Root::new(tree(dir.path(), "t1", p1))).sample();
    (a, b)
}

fn findings(p1: &Pass) -> (Vec<Finding>, Vec<DiskMetrics>) {
    let (a, b) = samples(&QUIET, p1);
    assert!(b.problems.is_empty(), "{:?}", b.problems);
    let x = assess(Some(&a), &b, &Thresholds::default());
    (x.findings, x.derived.disks)
}

fn one<'a>(f: &'a [Finding], id: &str) -> Option<&'a Finding> {
    f.iter().find(|f| f.id == id)
}

#[test]
fn stack_reads_right_and_json_names_slaves() {
    let (a, b) = samples(&QUIET, &QUIET);
    assert!(a.problems.is_empty(), "{:?}", a.problems);
    let disk = |s: &Sample, n: &str| s.disks.iter().find(|d| d.name == n).cloned().expect(n);
    let sdi = disk(&b, "sdi").stack.expect("sdi stack");
    assert_eq!(
        (
            sdi.read_ahead_kb,
            sdi.max_sectors_kb,
            sdi.rq_affinity,
            sdi.hw_queues
        ),
        (Some(128), Some(1280), Some(1), Some(2))
    );
    assert_eq!(
        (sdi.queue_depth, sdi.state.as_deref()),
        (Some(32), Some("running"))
    );
    let dm = disk(&b, "dm-0").stack.expect("dm stack");
    assert_eq!(dm.slaves, ["sdi", "sdj"]);
    assert!(dm.multipath);
    let vda = disk(&b, "vda").stack.expect("vda stack");
    assert_eq!((vda.queue_depth, vda.state.as_deref()), (None, None));

    let x = assess(Some(&a), &b, &Thresholds::default());
    let json = serde_json::to_value(&x.derived.disks).expect("json");
    let by = |n: &str| {
        json.as_array()
            .and_then(|v| v.iter().find(|d| d["disk_device"] == n))
            .cloned()
            .expect(n)
    };
    assert_eq!(by("dm-0")["slaves"], serde_json::json!(["sdi", "sdj"]));
    assert_eq!(by("dm-0")["multipath"], true);
    assert_eq!(by("dm-0")["dm_name"], "mpatha");
    assert_eq!(by("sdi")["queue_depth"], 32);
    assert_eq!(by("sdi")["nr_requests"], 64);
    assert_eq!(by("sdi")["hw_queues"], 2);
    assert_eq!(by("sdi")["device_state"], "running");
    assert!(by("sdi").get("slaves").is_none(), "a path has no slaves");
    // Unknown is null with the reason, never 0.
    assert_eq!(by("vda")["queue_depth"], serde_json::Value::Null);
    assert_eq!(
        by("vda")["queue_depth_unknown"],
        "not SCSI (no device/queue_depth)"
    );
    // Per-path r/s over 2.00 s: nothing moved.
    assert_eq!(by("sdi")["r/s"], 0.0);
}

#[test]
fn queue_full_trigger_and_just_under() {
    // sdi: 29 in flight of queue_depth 32 = 90.6% (>= 90); sdj idle.
    let hot = Pass {
        sdi: (10_100, 29, "running"),
        ..QUIET
    };
    let (f, _) = findings(&hot);
    let q = one(&f, "disk.queue_full").expect("queue_full");
    assert!(q.message.starts_with("sdi: 29 in flight"), "{}", q.message);
    assert!(q.message.contains("91% of queue_depth 32"), "{}", q.message);
    assert_eq!(q.tweak.as_deref(), Some("scsi.sdi.queue_depth"));
    // 28 of 32 = 87.5%: under. aqu-sz 100 ms / 2 s = 0.05 is far under too.
    let under = Pass {
        sdi: (10_100, 28, "running"),
        ..QUIET
    };
    assert!(one(&findings(&under).0, "disk.queue_full").is_none());
}

#[test]
fn path_idle_trigger_and_just_under() {
    // 1900 + 100 reads in 2 s: sdi 950/s of 1000/s = 95% (>= 90%).
    let skewed = Pass {
        sdi: (11_900, 0, "running"),
        sdj: (10_100, 0, "running"),
    };
    let (f, disks) = findings(&skewed);
    let r = |n: &str| {
        disks
            .iter()
            .find(|d| d.disk_device == n)
            .and_then(|d| d.r_s)
    };
    assert_eq!(
        (r("sdi"), r("sdj"), r("dm-0")),
        (Some(950.0), Some(50.0), Some(1000.0))
    );
    let i = one(&f, "mpath.path_idle").expect("path_idle");
    assert!(
        i.message
            .starts_with("mpatha (dm-0): sdi carries 95% of 1000 IO/s over 2 running paths"),
        "{}",
        i.message
    );
    assert_eq!(i.severity, "info");
    // 1780 + 220: 890/s of 1000/s = 89%.
    let spread = Pass {
        sdi: (11_780, 0, "running"),
        sdj: (10_220, 0, "running"),
    };
    assert!(one(&findings(&spread).0, "mpath.path_idle").is_none());
    // One path down: fewer than 2 running paths, nothing to judge.
    let down = Pass {
        sdi: (11_900, 0, "running"),
        sdj: (10_100, 0, "offline"),
    };
    assert!(one(&findings(&down).0, "mpath.path_idle").is_none());
    // 18 reads in 2 s = 9 IO/s: under `mpath_min_ios_per_s` 10, not judged.
    let idle = Pass {
        sdi: (10_018, 0, "running"),
        sdj: (10_000, 0, "running"),
    };
    assert!(one(&findings(&idle).0, "mpath.path_idle").is_none());
}

#[test]
fn path_down_warn_crit_and_none() {
    let one_down = Pass {
        sdj: (10_000, 0, "offline"),
        ..QUIET
    };
    let (f, _) = findings(&one_down);
    let d = one(&f, "mpath.path_down").expect("path_down");
    assert_eq!(d.message, "mpatha (dm-0): path sdj offline: 1 of 2 running");
    assert_eq!(d.severity, "warn");
    let both = Pass {
        sdi: (10_000, 0, "transport-offline"),
        sdj: (10_000, 0, "offline"),
    };
    let (f, _) = findings(&both);
    let d = one(&f, "mpath.path_down").expect("path_down");
    assert_eq!(d.severity, "crit");
    assert!(d.message.ends_with("no running path left"), "{}", d.message);
    assert!(one(&findings(&QUIET).0, "mpath.path_down").is_none());
}

/// Garbled, empty and missing stack files are unknown (garbled ones listed as problems),
/// never a panic nor a 0; a map whose `dm/uuid` is gone is no multipath map.
#[test]
fn garbled_and_missing_stack_files_are_unknown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = tree(dir.path(), "t0", &QUIET);
    write(&root, "sys/block/sdi/queue/read_ahead_kb", "lots\n");
    write(&root, "sys/block/vda/queue/max_sectors_kb", "-1\n");
    write(
        &root,
        "sys/devices/pci0000:00/host0/target0:0:0/0:0:0:8/queue_depth",
        "",
    );
    fs::remove_file(root.join("sys/block/dm-0/dm/uuid")).expect("rm uuid");
    fs::remove_dir_all(root.join("sys/block/dm-0/slaves")).expect("rm slaves");
    let s = Reader::new(Root::new(&root)).sample();
    let stack = |n: &str| {
        s.disks
            .iter()
            .find(|d| d.name == n)
            .and_then(|d| d.stack.clone())
            .expect(n)
    };
    let noted = |rel: &str| s.problems.iter().any(|p| p.path == rel);
    assert_eq!(stack("sdi").read_ahead_kb, None);
    assert!(
        noted("sys/block/sdi/queue/read_ahead_kb"),
        "{:?}",
        s.problems
    );
    assert_eq!(stack("vda").max_sectors_kb, None);
    assert!(
        noted("sys/block/vda/queue/max_sectors_kb"),
        "{:?}",
        s.problems
    );
    assert_eq!(stack("sdi").queue_depth, None, "empty is unknown");
    assert_eq!(stack("sdi").state.as_deref(), Some("running"));
    let dm = stack("dm-0");
    assert!(!dm.multipath && dm.slaves.is_empty());
    let x = assess(Some(&s), &s, &Thresholds::default());
    let sdi = x
        .derived
        .disks
        .iter()
        .find(|d| d.disk_device == "sdi")
        .expect("sdi");
    assert_eq!(
        sdi.stack.queue_depth_unknown.as_deref(),
        Some("SCSI device/queue_depth unreadable")
    );
    assert!(x.findings.iter().all(|f| !f.id.starts_with("mpath.")));
}

/// A path's state is read every sample (it flips when the path fails); the map's other
/// settings within the settings tier.
#[test]
fn path_state_is_seen_on_the_next_sample() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = tree(dir.path(), "t0", &QUIET);
    let mut r = Reader::new(Root::new(&root));
    let state = |s: &Sample| {
        s.disks
            .iter()
            .find(|d| d.name == "sdj")
            .and_then(|d| d.stack.clone()?.state)
    };
    assert_eq!(state(&r.sample()).as_deref(), Some("running"));
    // Flipped on every sample: a settings-tier read (again after up to 10 samples) would
    // miss all but one of these.
    for now in ["offline", "running", "blocked", "running"] {
        write(
            &root,
            "sys/devices/pci0000:00/host0/target0:0:0/0:0:0:9/state",
            &format!("{now}\n"),
        );
        assert_eq!(state(&r.sample()).as_deref(), Some(now));
    }
}

/// A disk's settings are kept between samples and read again together: a change to any of
/// them shows within the settings tier's 10 samples, all of the disk's in the same sample, and
/// one found garbled is noted on every sample that shows it unknown (not only the one that
/// read it).
#[test]
fn a_disks_settings_are_read_again_together_within_the_tier() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = tree(dir.path(), "t0", &QUIET);
    let mut r = Reader::new(Root::new(&root));
    let vda = |s: &Sample| {
        s.disks
            .iter()
            .find(|d| d.name == "vda")
            .cloned()
            .expect("vda")
    };
    let first = vda(&r.sample());
    let ra = |d: &perftop::sample::DiskSample| d.stack.as_ref().and_then(|s| s.read_ahead_kb);
    assert_eq!(
        (first.nr_requests, ra(&first), first.rotational),
        (Some(256), Some(4096), Some(false))
    );
    write(&root, "sys/block/vda/queue/nr_requests", "32\n");
    write(&root, "sys/block/vda/queue/read_ahead_kb", "128\n");
    write(&root, "sys/block/vda/queue/rotational", "spinning\n");
    let mut changed_at = None;
    for n in 1..=10 {
        let s = r.sample();
        let d = vda(&s);
        let now = (
            d.nr_requests == Some(32),
            ra(&d) == Some(128),
            d.rotational.is_none(),
        );
        let noted = s
            .problems
            .iter()
            .any(|p| p.path == "sys/block/vda/queue/rotational");
        match changed_at {
            None if now == (true, true, true) => changed_at = Some(n),
            None => assert_eq!(now, (false, false, false), "sample {n}: read apart"),
            Some(_) => assert_eq!(now, (true, true, true), "sample {n}"),
        }
        assert_eq!(noted, changed_at.is_some(), "sample {n}: {:?}", s.problems);
    }
    assert!(changed_at.is_some(), "not read again within 10 samples");
}

/// The cells of the zoomed Disks pane's table that lists `what` (`queues`, `paths`).
fn table(p: &perftop::view::model::PaneView, what: &str) -> Vec<Vec<String>> {
    p.body
        .iter()
        .find_map(|b| match b {
            perftop::view::model::Block::Table(t) if t.what == what => Some(
                t.rows
                    .iter()
                    .map(|r| r.cells.iter().map(|c| c.text.to_string()).collect())
                    .collect(),
            ),
            _ => None,
        })
        .unwrap_or_default()
}

/// When the queues table must be cut, the deepest queue among the devices doing I/O is kept:
/// eight loop devices (before `vda` in kernel order) that each did one read in the interval
/// do not push out `vda` with an average queue of 1.0 (2,000 ms in queue over 2.00 s); and
/// when nothing does I/O, the disks are kept before the loop devices.
#[test]
fn a_busy_disks_queue_row_is_kept_over_barely_used_loop_devices() {
    let dir = tempfile::tempdir().expect("tempdir");
    let [a, b] = [("t0", 0u64), ("t1", 1)].map(|(when, tick)| {
        let root = tree(dir.path(), when, &QUIET);
        let mut stats = fs::read_to_string(root.join("proc/diskstats")).expect("diskstats");
        stats = stats.replace(
            &line(252, 0, "vda", 1000, 0, 1000),
            &line(252, 0, "vda", 1000 + 400 * tick, 0, 1000 + 2000 * tick),
        );
        for n in 0..8 {
            let dev = format!("loop{n}");
            stats.push_str(&line(7, n, &dev, 10 + tick, 0, 10 + tick));
            queue(&root, &dev, "[none]", 128, 128, 1);
        }
        write(&root, "proc/diskstats", &stats);
        Reader::new(Root::new(&root)).sample()
    });
    let t = Thresholds::default();
    // The eight queue rows kept, busiest first, over the interval from `a` to `b`.
    let kept = |a: &Sample, b: &Sample| -> Vec<String> {
        let x = assess(Some(a), b, &t);
        let ctx = perftop::view::Ctx::new(&t, true);
        let p = perftop::view::pane(perftop::view::Pane::Disks, &x.derived, &ctx);
        let mut rows = p
            .body
            .iter()
            .find_map(|b| match b {
                perftop::view::model::Block::Table(t) if t.what == "queues" => Some(t.rows.clone()),
                _ => None,
            })
            .expect("queues table");
        assert_eq!(rows.len(), 12, "8 loops, sdi, sdj, vda, dm-0");
        rows.sort_by(perftop::view::model::busiest);
        rows.iter().take(8).map(|r| r.name.clone()).collect()
    };
    let x = assess(Some(&a), &b, &t);
    let vda = x.derived.disks.iter().find(|m| m.disk_device == "vda");
    assert_eq!(vda.and_then(|m| m.aqu_sz), Some(1.0));
    let busy = kept(&a, &b);
    assert_eq!(busy.first().map(String::as_str), Some("vda"), "{busy:?}");
    // An interval where nothing does I/O: the disks first, then loop devices.
    let idle = kept(&b, &b);
    assert_eq!(idle[..4], ["sdi", "sdj", "vda", "mpatha"], "{idle:?}");
}

/// Zoomed, the map is drawn with its paths: each path's state, r/s and share of the map's I/O
/// (the skewed pass: 950 and 50 reads/s), and each disk's queue settings with `-` where unknown.
#[test]
fn zoomed_disks_pane_draws_the_map_with_its_paths() {
    let skewed = Pass {
        sdi: (11_900, 0, "running"),
        sdj: (10_100, 0, "offline"),
    };
    let (a, b) = samples(&QUIET, &skewed);
    let t = Thresholds::default();
    let x = assess(Some(&a), &b, &t);
    let ctx = perftop::view::Ctx::new(&t, true);
    let p = perftop::view::pane(perftop::view::Pane::Disks, &x.derived, &ctx);
    let paths = table(&p, "paths");
    assert_eq!(
        paths,
        [
            ["mpatha mpath", "sdi", "running", "950.0", "0.0", "95"],
            ["", "sdj", "offline", "50.0", "0.0", "5"],
        ]
    );
    let queues = table(&p, "queues");
    let row = |n: &str| queues.iter().find(|r| r[0] == n).cloned().expect(n);
    assert_eq!(
        row("sdi"),
        [
            "sdi",
            "mq-deadline",
            "64",
            "2",
            "128",
            "1280",
            "1",
            "32",
            "running"
        ]
    );
    assert_eq!(
        row("vda"),
        ["vda", "none", "256", "1", "4096", "1280", "1", "-", "-"]
    );
    let notes: Vec<&String> = p
        .body
        .iter()
        .filter_map(|b| match b {
            perftop::view::model::Block::Note(n) => Some(n),
            _ => None,
        })
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str() == "qdepth - (vda dm-0): not SCSI (no device/queue_depth)"),
        "{notes:?}"
    );
}
