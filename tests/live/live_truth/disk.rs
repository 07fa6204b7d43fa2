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
    support::ticker::rounds(T, 3, |_| disk_round(T, &disk));
    drop(_writer);
}

/// `/proc/diskstats` of `disk` for the ticker: reads and writes completed, sectors written.
fn diskstats_of(disk: &str) -> Option<std::collections::BTreeMap<String, u64>> {
    let text = live::read_trim("/proc/diskstats")?;
    let w: Vec<&str> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.get(2) == Some(&disk))?;
    let n = |k: usize| w.get(k).and_then(|x| x.parse::<u64>().ok());
    Some(
        [
            ("r_ios".to_string(), n(3)?),
            ("w_ios".to_string(), n(7)?),
            ("w_sectors".to_string(), n(9)?),
        ]
        .into(),
    )
}

/// One round: perftop's write and read counts in every frame against the kernel's
/// `/proc/diskstats` read every 100 ms around its window (always judged); against iostat
/// where the ticker saw the rate steady (this disk also serves whatever else the VM writes:
/// stress-ng's `--io` syncs, other builds).
fn disk_round(test: &'static str, disk: &str) -> Table {
    let psi = live::psi_totals();
    const D: u32 = 2;
    const N: usize = 2;
    let owned = disk.to_string();
    let tick = support::ticker::Ticker::start(100, move || diskstats_of(&owned));
    let (frames, stats) = record_beside_iostat(D, N);
    let ticks = tick.stop();
    let mut t = Table::new(test);
    assert_eq!(frames.len(), N, "perftop intervals");
    assert_eq!(stats.len(), N, "iostat reports");
    let gap = ticks.longest_gap_ms();
    if gap > 600 {
        t.noisy(&format!("{gap} ms between two reads of /proc/diskstats"));
    }
    let steady = |key: &str, per_s_tol: f64| {
        ticks
            .spread(key, 500)
            .is_some_and(|(lo, hi)| hi - lo <= 2.0 * per_s_tol)
    };
    let mut unsteady = Vec::new();
    for (i, (fr, st)) in frames.iter().zip(&stats).enumerate() {
        let ours = find(&fr["disks"], "disk_device", disk).expect("disk in perftop");
        let theirs = find(&st["disk"], "disk_device", disk).expect("disk in iostat");
        let m = |k: &str| format!("[{i}] {disk} {k}");
        let g = |k: &str| theirs[k].as_f64().unwrap_or(f64::NAN);
        if let (Some(end), Some(secs)) = (f(fr, &["host", "wall_ms"]), f(fr, &["interval_s"])) {
            let (from, to) = ((end - secs * 1000.0) as i64, end as i64);
            for (key, metric, scale) in [
                ("w_ios", "w/s", 1.0),
                ("r_ios", "r/s", 1.0),
                ("w_sectors", "wkB/s", 2.0),
            ] {
                if let Some((lo, hi)) = ticks.bracket(key, from, to, support::ticker::lags(i)) {
                    t.bracket(
                        &m(&format!("{metric} counted vs the kernel's reads around it")),
                        f(ours, &[metric]).map(|r| r * secs * scale),
                        lo,
                        hi,
                        1.0,
                    );
                }
            }
        }
        // Same counters, same formulas (tests/it/iostat.rs checks those to the digit on
        // fixtures); only the windows differ, by the few ms between two processes' reads on a
        // quiet machine and by much more on a busy one: compared where the rate was steady,
        // 5% of the rate, plus one request per interval.
        let w_tol = 0.05 * g("w/s") + 1.0 / f64::from(D);
        if steady("w_ios", w_tol) {
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
        } else {
            unsteady.push(format!("[{i}] writes"));
        }
        // Reads are not the load: they come from whatever else runs (a build beside the test
        // once read 84/s against iostat's 71.5/s in windows a few ms apart), in bursts, so
        // they get 15/s of room on top of 10%.
        if steady("r_ios", 0.10 * g("r/s") + 15.0) {
            t.rel(&m("r/s"), f(ours, &["r/s"]), g("r/s"), 0.10, 15.0);
        } else {
            unsteady.push(format!("[{i}] reads"));
        }
        let w = f(ours, &["w/s"]).unwrap_or(0.0);
        if w > 100.0 {
            t.holds(
                &m("dd load visible (w/s > 100)"),
                format!("{w:.2}"),
                "> 100".into(),
                true,
            );
        } else {
            t.noisy(&format!(
                "[{i}] dd reached {w:.0} writes/s: starved by other work"
            ));
        }
    }
    if !unsteady.is_empty() {
        t.note(
            "unsteady, not compared with iostat",
            &unsteady.join(", "),
            "kernel bracket only",
        );
    }
    live::check_psi(&mut t, &psi, &frames);
    t
}
