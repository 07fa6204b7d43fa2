//! Helpers shared by the integration tests: visible skips, copying fixture trees, and
//! synthetic hosts (`synth`).
//!
//! A test that cannot run here (not root, a reference tool missing, no such kernel file) calls
//! `skip` and returns. libtest captures `eprintln!`, so the line is written to the process's
//! stderr directly (it shows in `cargo test` output even when the test passes) and appended to
//! `target/test-skips.txt`, which `.ci/run` counts and prints at the end.
pub mod kernels;
pub mod live;
pub mod live_table;
pub mod real;
pub mod screen;
pub mod sshd;
pub mod synth;
pub mod ticker;
pub mod tmux;
pub mod trace;

use perftop::root::Root;
use perftop::sample::Sample;
use perftop::source::Reader;
use std::io::Write;
use std::path::PathBuf;

/// A fixture root under `tests/fixtures`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The hand-made fixture roots, each with two captures one interval apart (`t0`, `t1`) and
/// its values worked out by hand in `tests/it/fixture_roots/`. The damaged `bad` and the real
/// hosts' captures (`real/...`) are apart: each test adds the ones it covers.
pub const FIXTURES: [&str; 5] = [
    "vm-2cpu",
    "intel-pstate",
    "acpi-shared",
    "numa-2node-memless",
    "wrap",
];

/// One sample of a fixture root's `t0` or `t1` tree.
pub fn read(name: &str, when: &str) -> Sample {
    Reader::new(Root::new(fixture(name).join(when))).sample()
}

/// Wall-clock time (ms) of the first synthetic sample of the recording tests (2025-11-21
/// 14:05:30 UTC): recordings made from them get the same timestamps and file names every run.
pub const T0: i64 = 1_763_733_930_000;

/// A one-segment recording of `samples`, one second apart on the monotonic clock, opened by a
/// recorder-start marker at `T0`: the recording tests' and `explain`'s input.
pub fn encode_recording(samples: &[Sample]) -> Vec<u8> {
    encode_recording_as(samples, perftop::record::format::FORMAT_VERSION)
}

/// The same in format `version` (an older one, to compare).
pub fn encode_recording_as(samples: &[Sample], version: u32) -> Vec<u8> {
    use perftop::record::writer::header_for;
    use perftop::record::{Gap, Writer};
    let mut h = header_for(&samples[0], std::time::Duration::from_secs(1), 0);
    h.format_version = version;
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    let start = Gap {
        reason: "start".into(),
        detail: None,
    };
    w.gap(&start, T0, 0).expect("gap");
    for (i, s) in samples.iter().enumerate() {
        w.sample(s, i as u64 * 1_000_000_000).expect("sample");
    }
    w.into_inner()
}

/// The small synthetic host of the recording and replay tests.
pub fn small_host() -> synth::SynthSpec {
    synth::SynthSpec {
        cpus: 2,
        nodes: 1,
        disks: 2,
        queues: 2,
    }
}

/// `small_host` samples at `ticks`, read by one reader (as a live session reads them), each
/// stamped `T0 + tick` seconds.
pub fn synth_samples(ticks: impl Iterator<Item = u64>) -> Vec<Sample> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut reader = Reader::new(Root::new(dir.path()));
    ticks
        .map(|t| {
            synth::write_host(dir.path(), &small_host(), t).expect("synth");
            let mut s = reader.sample();
            s.time.wall_ms = T0 + t as i64 * 1000;
            s
        })
        .collect()
}

/// The committed v1 recording, which every later perftop must replay.
pub fn golden() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/recording-v1.ptrec")
}

/// Cargo's target directory: `target/` or `$CARGO_TARGET_DIR`.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// Where skips are counted: `target/test-skips.txt` (or `$CARGO_TARGET_DIR/test-skips.txt`).
pub fn skips_file() -> PathBuf {
    target_dir().join("test-skips.txt")
}

/// Says `SKIP <test>: <why>` where a person running the tests sees it, and counts it.
pub fn skip(test: &str, why: &str) {
    let line = format!("SKIP {test}: {why}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    let path = skips_file();
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// The tests that drive this machine (load, kernel state, a process-wide limit) or measure
/// it take this one lock, so two of them never run at once: the tests of `tests/live/`.
static MACHINE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Waits until no other test drives or measures the machine, and holds it off until dropped.
pub fn machine() -> std::sync::MutexGuard<'static, ()> {
    MACHINE.lock().unwrap_or_else(|e| e.into_inner())
}

/// True when the tests run as root (the live suite drives kernel state).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Copies a fixture tree (files, directories, symlinks as links) to `to`, for tests that
/// damage or write into a root.
pub fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let t = e.file_type().expect("file type");
        if t.is_symlink() {
            let target = std::fs::read_link(&src).expect("readlink");
            std::os::unix::fs::symlink(target, &dst).expect("symlink");
        } else if t.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
}

/// `/proc/interrupts` by the few lines a reference reader needs, written apart from perftop's
/// parser: the CPU ids of the header, and each row (an IRQ number or a short name like `CAL`)
/// with one count per CPU column. Rows with fewer counts (`ERR`, `MIS`) are left out.
pub fn interrupt_rows(text: &str) -> (Vec<u32>, std::collections::BTreeMap<String, Vec<u64>>) {
    let mut lines = text.lines();
    let cpus: Vec<u32> = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|c| c.trim_start_matches("CPU").parse().ok())
        .collect();
    let mut rows = std::collections::BTreeMap::new();
    for l in lines {
        let Some((key, rest)) = l.split_once(':') else {
            continue;
        };
        let counts: Vec<u64> = rest
            .split_whitespace()
            .take(cpus.len())
            .map_while(|w| w.parse().ok())
            .collect();
        if counts.len() == cpus.len() {
            rows.insert(key.trim().to_string(), counts);
        }
    }
    (cpus, rows)
}

/// Who is in the window that `writing` and `counting_reads` guard (see there).
struct Writes {
    writing: usize,
    counting: usize,
}

static WRITES: std::sync::Mutex<Writes> = std::sync::Mutex::new(Writes {
    writing: 0,
    counting: 0,
});
static WRITES_CHANGED: std::sync::Condvar = std::sync::Condvar::new();

fn writes_state() -> std::sync::MutexGuard<'static, Writes> {
    WRITES.lock().unwrap_or_else(|e| e.into_inner())
}

fn wait_writes(
    state: std::sync::MutexGuard<'static, Writes>,
) -> std::sync::MutexGuard<'static, Writes> {
    WRITES_CHANGED
        .wait(state)
        .unwrap_or_else(|e| e.into_inner())
}

/// Held by a test that writes kernel files through perftop in this process (a tweak applied,
/// undone or rolled back with `FsWriter`, a key that applies one): see `counting_reads`. Any
/// number of writers at once, and one test may hold several (no deadlock on a second host).
pub struct Writing(());

/// Waits until no test is counting reads, then lets this one write.
pub fn writing() -> Writing {
    let mut s = writes_state();
    while s.counting > 0 {
        s = wait_writes(s);
    }
    s.writing += 1;
    Writing(())
}

impl Drop for Writing {
    fn drop(&mut self) {
        writes_state().writing -= 1;
        WRITES_CHANGED.notify_all();
    }
}

/// Held by a test that checks which sample reads what (turns, the settings tier, settings
/// held): perftop counts its own kernel writes per process (`perftop::root::note_write`) and
/// every reader in the process reads every setting and every turn again on its next sample,
/// so a tweak applied by a test in another thread would make this test's reader read off its
/// turn. Counting tests run beside each other (each has its own reader), never beside a
/// writer.
pub struct CountingReads(());

/// Waits until no test writes through perftop, then holds writers off.
pub fn counting_reads() -> CountingReads {
    let mut s = writes_state();
    while s.writing > 0 {
        s = wait_writes(s);
    }
    s.counting += 1;
    CountingReads(())
}

impl Drop for CountingReads {
    fn drop(&mut self) {
        writes_state().counting -= 1;
        WRITES_CHANGED.notify_all();
    }
}
