//! Storage tweaks on the same tree: every knob sets, reads back and undoes; choices and bounds
//! come from the kernel's files; one refusing disk rolls the others back.

use super::{tree, QUIET};
use crate::support;
use perftop::root::Root;
use perftop::tweak::apply::{self, FsWriter, Which, Writer};
use perftop::tweak::{plan, Ctx};
use std::fs;
use std::path::Path;

struct Host {
    _dir: tempfile::TempDir,
    ctx: Ctx,
    /// Held while the test may write through perftop (see `support::writing`).
    _writes: support::Writing,
}

fn host() -> Host {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = tree(dir.path(), "t0", &QUIET);
    let ctx = Ctx {
        root: Root::new(&root),
        state_dir: dir.path().join("state"),
        privileged: true,
        read_only: false,
    };
    Host {
        _dir: dir,
        ctx,
        _writes: support::writing(),
    }
}

fn val(ctx: &Ctx, rel: &str) -> Option<String> {
    perftop::tweak::read_value(&ctx.root, rel)
}

/// Set → read back → undo, for one knob: the files it must change and their values after.
fn round_trip(knob: &str, value: &str, files: &[(&str, &str)]) {
    round_trip_on(&host(), knob, value, files);
}

fn round_trip_on(h: &Host, knob: &str, value: &str, files: &[(&str, &str)]) {
    let before: Vec<Option<String>> = files.iter().map(|(f, _)| val(&h.ctx, f)).collect();
    let p = plan::plan(&h.ctx, knob, value).unwrap_or_else(|e| panic!("{knob}: {e}"));
    assert_eq!(p.knob, knob);
    let r = apply::apply(&h.ctx, &p, &mut FsWriter).expect("apply");
    assert!(r.ok(), "{knob}: {}", r.text());
    for (f, v) in files {
        assert_eq!(val(&h.ctx, f).as_deref(), Some(*v), "{knob}: {f}");
    }
    let u = apply::undo(&h.ctx, &mut FsWriter, Which::Last, None).expect("undo");
    assert!(u.ok(), "{knob}: {}", u.text());
    let after: Vec<Option<String>> = files.iter().map(|(f, _)| val(&h.ctx, f)).collect();
    assert_eq!(after, before, "{knob}: undo restores every file");
}

#[test]
fn every_storage_knob_sets_reads_back_and_undoes() {
    round_trip(
        "disk.sdi.scheduler",
        "kyber",
        &[("sys/block/sdi/queue/scheduler", "kyber")],
    );
    // A map by its name: the map and both paths.
    round_trip(
        "disk.mpatha.read_ahead_kb",
        "4096",
        &[
            ("sys/block/dm-0/queue/read_ahead_kb", "4096"),
            ("sys/block/sdi/queue/read_ahead_kb", "4096"),
            ("sys/block/sdj/queue/read_ahead_kb", "4096"),
        ],
    );
    // Under scheduler none the kernel keeps nr_requests at most the hardware tags (128 here),
    // so the tree's 256 could never be in effect there; undo refuses to write back a value the
    // knob does not accept (`tweak::undo`), so the round trip starts from one it does.
    {
        let h = host();
        let nr = h.ctx.root.path("sys/block/vda/queue/nr_requests");
        fs::write(nr, "128\n").expect("write");
        round_trip_on(
            &h,
            "disk.vda.nr_requests",
            "64",
            &[("sys/block/vda/queue/nr_requests", "64")],
        );
    }
    // The SCSI depth of a map: its SCSI paths (the map has none of its own).
    round_trip(
        "scsi.dm-0.queue_depth",
        "64",
        &[
            ("sys/block/sdi/device/queue_depth", "64"),
            ("sys/block/sdj/device/queue_depth", "64"),
        ],
    );
}

#[test]
fn choices_and_bounds_come_from_the_files() {
    let h = host();
    // The map's scheduler list is `[none]`: the common choice of map and paths is none alone.
    let e = plan::plan(&h.ctx, "disk.mpatha.scheduler", "kyber").expect_err("not on dm-0");
    assert!(e.reason.contains("allowed: none"), "{e}");
    assert!(plan::plan(&h.ctx, "disk.sdi.scheduler", "deadline").is_err());
    // can_queue 64 bounds the SCSI depth.
    assert!(plan::plan(&h.ctx, "scsi.sdi.queue_depth", "64").is_ok());
    let e = plan::plan(&h.ctx, "scsi.sdi.queue_depth", "65").expect_err("over can_queue");
    assert!(e.reason.contains("1 – 64"), "{e}");
    // Without a readable can_queue the depth may only go down.
    fs::remove_file(h.ctx.root.path("sys/class/scsi_host/host0/can_queue")).expect("rm");
    assert!(plan::plan(&h.ctx, "scsi.sdi.queue_depth", "33").is_err());
    assert!(plan::plan(&h.ctx, "scsi.sdi.queue_depth", "16").is_ok());
    // vda has no scheduler: no more requests than its 128 hardware tags.
    assert!(plan::plan(&h.ctx, "disk.vda.nr_requests", "128").is_ok());
    let e = plan::plan(&h.ctx, "disk.vda.nr_requests", "129").expect_err("over nr_tags");
    assert!(e.reason.contains("4 – 128"), "{e}");
    assert!(plan::plan(&h.ctx, "disk.sdi.nr_requests", "2048").is_ok());
    assert!(plan::plan(&h.ctx, "disk.sdi.nr_requests", "3").is_err());
    assert!(plan::plan(&h.ctx, "disk.sdi.nr_requests", "2049").is_err());
    assert!(plan::plan(&h.ctx, "disk.sdi.read_ahead_kb", "65537").is_err());
    // vda is virtio: disabled with the reason.
    let e = plan::plan(&h.ctx, "scsi.vda.queue_depth", "8").expect_err("virtio");
    assert!(e.reason.contains("vda is not a SCSI disk"), "{e}");
    let e = plan::plan(&h.ctx, "disk.sdx.scheduler", "none").expect_err("no sdx");
    assert!(e.reason.contains("no disk \"sdx\""), "{e}");
    // Not root: disabled, with the command the user could run.
    let ctx = Ctx {
        privileged: false,
        ..h.ctx.clone()
    };
    let e = plan::plan(&ctx, "disk.sdi.read_ahead_kb", "256").expect_err("not root");
    assert!(
        e.command
            .as_deref()
            .is_some_and(|c| c.contains("sdi/queue/read_ahead_kb")),
        "{e}"
    );
}

/// Fails writes under one disk with EINVAL, as the kernel does for a value a queue refuses.
struct Refuses(&'static str);

impl Writer for Refuses {
    fn write(&mut self, path: &Path, value: &str) -> std::io::Result<()> {
        if path.to_string_lossy().contains(self.0) {
            return Err(std::io::Error::from_raw_os_error(22));
        }
        FsWriter.write(path, value)
    }
}

#[test]
fn one_refusing_disk_rolls_back_the_others() {
    let h = host();
    let files = [
        "sys/block/dm-0/queue/nr_requests",
        "sys/block/sdi/queue/nr_requests",
        "sys/block/sdj/queue/nr_requests",
    ];
    let before: Vec<Option<String>> = files.iter().map(|f| val(&h.ctx, f)).collect();
    assert_eq!(
        before,
        [
            Some("128".to_string()),
            Some("64".into()),
            Some("64".into())
        ]
    );
    let p = plan::plan(&h.ctx, "disk.dm-0.nr_requests", "100").expect("plan");
    let labels: Vec<&str> = p.writes().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["dm-0", "sdi", "sdj"]);
    let r = apply::apply(&h.ctx, &p, &mut Refuses("/sdj/")).expect("apply");
    assert!(!r.ok());
    assert!(r.text().contains("FAILED  sdj"), "{}", r.text());
    // Restored in reverse order: sdi, then dm-0.
    let restored: Vec<&str> = r.rolled_back.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(restored, ["sdi", "dm-0"]);
    let after: Vec<Option<String>> = files.iter().map(|f| val(&h.ctx, f)).collect();
    assert_eq!(after, before);
    assert!(apply::undo(&h.ctx, &mut FsWriter, Which::Last, None).is_err());
}
