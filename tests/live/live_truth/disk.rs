//! Disk against iostat -x under O_DIRECT writes.

use super::live::{self, f, find, LoadThread, Table};
use super::*;
use std::process::Command;

#[test]
fn disk_matches_iostat() {
    const T: &str = "disk_matches_iostat";
    let _machine = support::machine();
    if !live::ready(T, &["iostat", "dd"]) {
        return;
    }
    let Some((dir, disk)) = scratch_dir() else {
        support::skip(
            T,
            "no scratch directory on a block device (/var/tmp, target)",
        );
        return;
    };
    // Steady O_DIRECT writes, 64 KiB each, rewriting the same 32 MiB: a constant rate the
    // page cache cannot absorb. The file goes with the TempDir.
    let file = dir.path().join("direct.bin");
    let of = format!("of={}", file.display());
    let _writer = LoadThread::start(move || {
        let _ = Command::new("dd")
            .args(["if=/dev/zero", &of, "bs=64k", "count=512"])
            .args(["oflag=direct", "conv=notrunc", "status=none"])
            .status();
    });
    live::sleep_ms(300);
    let psi = live::psi_totals();
    const D: u32 = 2;
    const N: usize = 2;
    let (frames, stats) = record_beside_iostat(D, N);
    drop(_writer);
    let mut t = Table::new(T);
    assert_eq!(frames.len(), N, "perftop intervals");
    assert_eq!(stats.len(), N, "iostat reports");
    for (i, (fr, st)) in frames.iter().zip(&stats).enumerate() {
        let ours = find(&fr["disks"], "disk_device", &disk).expect("disk in perftop");
        let theirs = find(&st["disk"], "disk_device", &disk).expect("disk in iostat");
        let m = |k: &str| format!("[{i}] {disk} {k}");
        let g = |k: &str| theirs[k].as_f64().unwrap_or(f64::NAN);
        // Same counters, same formulas (tests/it/iostat.rs checks those to the digit on
        // fixtures); only the windows differ by the few ms between two processes' reads.
        // dd's rate is steady, but this disk also serves whatever else the VM writes (another
        // build, journal commits) in bursts: 5% of the rate, plus one request per interval.
        t.rel(
            &m("w/s"),
            f(ours, &["w/s"]),
            g("w/s"),
            0.05,
            1.0 / f64::from(D),
        );
        t.rel(&m("wkB/s"), f(ours, &["wkB/s"]), g("wkB/s"), 0.05, 64.0);
        // Ratios of two deltas over nearly the same window move less than either delta.
        t.rel(
            &m("w_await"),
            f(ours, &["w_await"]),
            g("w_await"),
            0.10,
            0.05,
        );
        t.rel(
            &m("wareq-sz"),
            f(ours, &["wareq-sz"]),
            g("wareq-sz"),
            0.05,
            1.0,
        );
        t.rel(&m("aqu-sz"), f(ours, &["aqu-sz"]), g("aqu-sz"), 0.10, 0.05);
        // io_ticks is in ms: 5 points of a 2 s interval is 100 ms of boundary skew.
        t.close(&m("%util"), f(ours, &["util"]), g("util"), 5.0);
        // Reads are not the load: they come from whatever else runs (a build beside the test
        // once read 84/s against iostat's 71.5/s in windows a few ms apart), in bursts, so
        // they get 15/s of room on top of 10%.
        t.rel(&m("r/s"), f(ours, &["r/s"]), g("r/s"), 0.10, 15.0);
        let w = f(ours, &["w/s"]).unwrap_or(0.0);
        t.holds(
            &m("dd load visible (w/s > 100)"),
            format!("{w:.2}"),
            "> 100".into(),
            w > 100.0,
        );
    }
    live::check_psi(&mut t, &psi, &frames);
    t.finish();
}
