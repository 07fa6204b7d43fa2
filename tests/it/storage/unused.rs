//! Devices that have never done I/O: their settings are held from the first read until their
//! first I/O, and the flag and the queues table's note say so.

use super::{line, queue, tree, write, QUIET};
use crate::support;
use perftop::assess::assess;
use perftop::findings::Thresholds;
use perftop::root::Root;
use perftop::sample::Sample;
use perftop::source::Reader;
use std::fs;

/// A device that has never done I/O (every `/proc/diskstats` counter zero, like the kernel's
/// spare loop devices) has its settings read when first seen and then held: a change by hand
/// is not read in the tier's 10 samples (nor in 40, the most the tier waits), while the used
/// disk beside it is. Its first I/O shows its settings as they are on that same sample; from
/// then on it is in the tier like any disk. A perftop write reads a held device again too.
#[test]
fn a_never_used_devices_settings_are_held_until_its_first_io() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    let root = tree(dir.path(), "t0", &QUIET);
    let stats = fs::read_to_string(root.join("proc/diskstats")).expect("diskstats");
    let with = |loop3_reads: u64| {
        let loops =
            line(7, 3, "loop3", loop3_reads, 0, loop3_reads) + &line(7, 4, "loop4", 0, 0, 0);
        write(&root, "proc/diskstats", &format!("{stats}{loops}"));
    };
    with(0);
    queue(&root, "loop3", "[none]", 128, 128, 1);
    queue(&root, "loop4", "[none]", 128, 128, 1);
    let mut r = Reader::new(Root::new(&root));
    let ra = |s: &Sample, dev: &str| {
        s.disks
            .iter()
            .find(|d| d.name == dev)
            .and_then(|d| d.stack.as_ref())
            .and_then(|st| st.read_ahead_kb)
    };
    let first = r.sample();
    assert_eq!(
        (ra(&first, "loop3"), ra(&first, "vda")),
        (Some(128), Some(4096))
    );
    for (dev, kb) in [("loop3", "512"), ("loop4", "256"), ("vda", "1024")] {
        write(
            &root,
            &format!("sys/block/{dev}/queue/read_ahead_kb"),
            &format!("{kb}\n"),
        );
    }
    let mut vda_at = None;
    for n in 1..=40 {
        let s = r.sample();
        assert_eq!(ra(&s, "loop3"), Some(128), "sample {n}: loop3 held");
        assert_eq!(ra(&s, "loop4"), Some(128), "sample {n}: loop4 held");
        if vda_at.is_none() && ra(&s, "vda") == Some(1024) {
            vda_at = Some(n);
        }
    }
    assert!(
        vda_at.is_some_and(|n| n <= 10),
        "vda read within the tier: {vda_at:?}"
    );
    // loop3's first read completes: its settings as they are now, on that sample.
    with(1);
    let s = r.sample();
    assert_eq!((ra(&s, "loop3"), ra(&s, "loop4")), (Some(512), Some(128)));
    // The flag and the queues table's note follow the counters: loop4 only, now.
    let t = Thresholds::default();
    let x = assess(Some(&first), &s, &t);
    let unused: Vec<&str> = x
        .derived
        .disks
        .iter()
        .filter(|m| m.never_used)
        .map(|m| m.disk_device.as_str())
        .collect();
    assert_eq!(unused, ["loop4"]);
    let p = perftop::view::pane(
        perftop::view::Pane::Disks,
        &x.derived,
        &perftop::view::Ctx::new(&t, true),
    );
    let note = "loop4: no I/O since boot; settings up to 300 samples old";
    assert!(
        p.body
            .iter()
            .any(|b| matches!(b, perftop::view::model::Block::Note(n) if n == note)),
        "{:?}",
        p.body
    );
    // In the tier now: a change by hand shows within 10 samples.
    write(&root, "sys/block/loop3/queue/read_ahead_kb", "64\n");
    let seen = (1..=10).find(|_| ra(&r.sample(), "loop3") == Some(64));
    assert!(seen.is_some(), "loop3 in the tier once used");
    // A perftop write: the held loop4 is read on the next sample.
    perftop::root::note_write();
    assert_eq!(ra(&r.sample(), "loop4"), Some(256));
}
