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
//! Run: `cargo test --test live live_truth:: -- --test-threads=1` (as root; `.ci/run` installs the
//! tools). One module per subject; the harness is `tests/support/live.rs`.

use crate::support;
use crate::support::live;

mod blocked;
mod cgroups;
mod cgroups_v1;
mod cpu;
mod culprits;
mod dirty;
mod disk;
mod explain_incident;
mod filesystems;
mod frozen;
mod hugepages;
mod irq;
mod memory;
mod net;
mod oom;
mod pressure;
mod processes;
mod spare_loop;
mod storage;
mod stuck;
mod tcp;
mod watermarks;

use serde_json::Value;

/// N intervals of D seconds recorded by perftop (`dump --format json` frames) and reported
/// by `iostat -x -d -k -o JSON -y D N`, both started at the same moment.
fn record_beside_iostat(d: u32, n: usize) -> (Vec<Value>, Vec<Value>) {
    let rec = live::Recording::start(d.into(), n as u32 + 1);
    let (ds, ns) = (d.to_string(), n.to_string());
    let io = live::spawn("iostat", &["-x", "-d", "-k", "-o", "JSON", "-y", &ds, &ns]);
    let frames = rec.finish();
    (frames, sysstat(&live::output(io)))
}

/// `perftop tweak ARGS --yes --state-dir STATE`: its exit status and output.
fn perftop_tweak(state: &std::path::Path, args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perftop"))
        .arg("tweak")
        .args(args)
        .arg("--yes")
        .arg("--state-dir")
        .arg(state)
        .output()
        .expect("perftop tweak");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
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
    for base in [std::path::PathBuf::from("/var/tmp"), support::target_dir()] {
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
