//! Live truth: perftop against the kernel's own values and the reference tools (mpstat, iostat,
//! vmstat, sar, free, numastat) over the same window, on this host, under load.
//!
//! Fixtures are written by the same hands as the code; these checks are not. Each test starts
//! `perftop record -d D -n N+1` and the reference tool with the same interval at the same
//! moment, drives a load, then compares per interval with a tolerance explained next to it.
//! Every row goes to stderr and to `target/live-truth.md`. Tests that change kernel state
//! (sysctls, huge pages, a frozen filesystem) restore it from a guard's `Drop`, and all tests
//! take one lock so their loads never overlap. Not root or a tool missing: a visible SKIP.
//!
//! Run: `cargo test --test live_truth -- --test-threads=1` (as root; `.ci/run` installs the
//! tools). One module per subject; the harness is `tests/support/live.rs`.

#[path = "../support/live.rs"]
mod live;
#[path = "../support/mod.rs"]
mod support;

mod cgroups;
mod cpu;
mod dirty;
mod disk;
mod filesystems;
mod frozen;
mod hugepages;
mod irq;
mod memory;
mod net;
mod pressure;
mod processes;
mod storage;
mod stuck;
mod tcp;
mod watermarks;

use serde_json::Value;

/// `iostat -x -d -k -o JSON -y D N`, started now: N reports of D seconds each, as perftop
/// records over the same window (`sysstat` reads its output).
fn iostat_json(d: u32, n: usize) -> std::process::Child {
    live::spawn(
        "iostat",
        &[
            "-x",
            "-d",
            "-k",
            "-o",
            "JSON",
            "-y",
            &d.to_string(),
            &n.to_string(),
        ],
    )
}

fn sysstat(text: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(text).expect("sysstat JSON");
    v["sysstat"]["hosts"][0]["statistics"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn online_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A scratch directory on a real disk (not tmpfs): /var/tmp, else the target directory.
fn scratch_dir() -> Option<(tempfile::TempDir, String)> {
    for base in [std::path::PathBuf::from("/var/tmp"), live::target_dir()] {
        let Ok(dir) = tempfile::Builder::new()
            .prefix("perftop-live-")
            .tempdir_in(&base)
        else {
            continue;
        };
        if let Some(disk) = live::disk_of(dir.path()) {
            return Some((dir, disk));
        }
    }
    None
}
