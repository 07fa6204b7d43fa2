//! One sample (read + derive) on synthetic hosts of 2 to 4096 CPUs.
//!
//! Each size is written once (ticks 0 and 1) into a temp dir. The timed step is what a live
//! perftop does every interval: `Reader::sample` on the tick-1 tree with a warm reader (static
//! files cached, as after the first frame) and `derive` against the tick-0 sample. After the
//! criterion runs, a plain table shows ms per sample and ms per 1000 CPUs, warm and cold (a new
//! reader: statics and the ksoftirqd scan included), so linearity is visible at a glance.
//!
//! `cargo bench --bench sample`
//!
//! Plain modes skip criterion (for before/after comparisons and for profilers):
//! - `cargo bench --bench sample -- live [N] [SLEEP_MS]`: N samples (default 200) of the live
//!   `/proc` and `/sys` with one warm reader, SLEEP_MS (default 100) apart, and the process CPU
//!   time (user + system, all threads) per `Reader::sample()`: what the recorder pays per tick
//!   before encoding.
//! - `cargo bench --bench sample -- host CPUS [RUNS]`: one synthetic host of CPUS CPUs (scaled
//!   like the table), RUNS (default 21) warm read + derive steps: wall median/best, process CPU
//!   median.
//! - `cargo bench --bench sample -- tree ROOT [RUNS]`: like `host`, over a tree already written
//!   (by `write`), so runs compare on the same files and a profiler sees only reading.
//! - `cargo bench --bench sample -- derive ROOT [RUNS]`: `derive` alone between two reads of a
//!   tree, RUNS (default 21) times: process CPU median and best.
//! - `cargo bench --bench sample -- write DIR CPUS [TICK]`: writes the synthetic host of CPUS
//!   CPUs (scaled like the table) at TICK (default 0) into DIR, for `tree`.
//! - `cargo bench --bench sample -- procs [N] [RUNS]`: the process reader's CPU per sample
//!   over a synthetic `/proc` of N processes (a table of 1k, 5k, 20k without N), less the same
//!   reader over none.
//! - `cargo bench --bench sample -- files [N] [SLEEP_MS] [ROWS]`: like `live`, with every
//!   read timed by the reading thread's CPU clock: the dearest files of a live sample.
//! - `cargo bench --bench sample -- floor [N] [SLEEP_MS]`: the files a live sample reads every
//!   time, read alone (one `pread` each on kept descriptors, nothing parsed), N rounds
//!   SLEEP_MS apart: the kernel's share of a sample, and how much of it is cold caches.
//! - `cargo bench --bench sample -- frame [W H] [N] [SLEEP_MS]`: the dashboard's drawing of one
//!   frame of this host (two live samples read), CPU a frame; SLEEP_MS before each, cold.
//! - `cargo bench --bench sample -- ring [ROOT] [N] [SLEEP_MS]`: the dashboard's in-memory
//!   history alone (`SampleRing::push`) over N samples of ROOT (default `/`) SLEEP_MS apart:
//!   CPU a push, a sample's JSON and what the ring keeps of it.
//! - `cargo bench --bench sample -- cold [N] [SLEEP_MS]`: one syscall's CPU right after a
//!   sleep against the same call repeated at once.
//! - `cargo bench --bench sample -- twin [N] [SLEEP_MS]`: two readers of the live host, one
//!   right after the other every SLEEP_MS: a sample's CPU with cold caches and with warm ones.
//! - `cargo bench --bench sample -- json ROOT [N]`: the N-th sample (default 3) of one warm
//!   reader over ROOT as JSON, wall clock removed: diff it before and after a reader change
//!   to see that caching did not change what is read.

// The synthetic-host generator is a test fixture (tests/support), not part of perftop.
#[path = "../tests/support/synth/mod.rs"]
mod synth;

#[path = "live/mod.rs"]
mod live;

use live::process_cpu_time;

use criterion::{BenchmarkId, Criterion};
use perftop::derive::derive;
use perftop::root::Root;
use perftop::sample::Sample;
use perftop::source::Reader;
use std::hint::black_box;
use std::time::{Duration, Instant};
use synth::{write_host, SynthSpec};

/// 4096 CPUs / 64 nodes / 1024 disks / 512 queues, scaled down proportionally.
fn spec(cpus: u32) -> SynthSpec {
    SynthSpec {
        cpus,
        nodes: (cpus / 64).max(1),
        disks: (cpus / 4).max(1),
        queues: (cpus / 8).max(1),
    }
}

/// A temp dir for a synthetic tree, in memory (`/dev/shm`) where there is one: procfs and
/// sysfs never touch a disk, and a 1 GB tree on a disk-backed `/tmp` measures the page cache
/// and the disk, not the reader.
fn scratch() -> tempfile::TempDir {
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::tempdir_in(shm) {
            return d;
        }
    }
    tempfile::tempdir().expect("tempdir")
}

struct Host {
    spec: SynthSpec,
    _dir: tempfile::TempDir,
    root1: Root,
    prev: Sample,
    reader: Reader,
}

fn host(cpus: u32) -> Host {
    let spec = spec(cpus);
    let dir = scratch();
    let (d0, d1) = (dir.path().join("t0"), dir.path().join("t1"));
    let t = Instant::now();
    write_host(&d0, &spec, 0).expect("write tick 0");
    write_host(&d1, &spec, 1).expect("write tick 1");
    eprintln!("synth {cpus} CPUs: 2 trees written in {:.2?}", t.elapsed());
    let prev = Reader::new(Root::new(&d0)).sample();
    assert!(prev.problems.is_empty(), "{:?}", prev.problems);
    let root1 = Root::new(&d1);
    let mut reader = Reader::new(root1.clone());
    let first = reader.sample(); // warms the static cache
    assert!(first.problems.is_empty(), "{:?}", first.problems);
    Host {
        spec,
        _dir: dir,
        root1,
        prev,
        reader,
    }
}

fn one(reader: &mut Reader, prev: &Sample) -> usize {
    let cur = reader.sample();
    let d = derive(Some(prev), &cur);
    d.cpus.len() + d.disks.len()
}

/// `host CPUS [RUNS]`: one synthetic host, warm read + derive.
fn one_host(args: &[String]) {
    let cpus: u32 = args.first().and_then(|a| a.parse().ok()).unwrap_or(4096);
    let runs: usize = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(21)
        .max(1);
    let mut h = host(cpus);
    let label = format!("{cpus} CPUs");
    warm_runs(&label, runs, &mut h.reader, &h.prev);
}

/// `tree ROOT [RUNS]`: warm read + derive over an existing tree (against its own first sample).
fn tree(args: &[String]) {
    let (mut reader, dir, runs) = tree_args(args);
    let prev = reader.sample();
    warm_runs(dir, runs, &mut reader, &prev);
}

/// `ROOT [RUNS]`: a reader of ROOT (default `/`), ROOT, and RUNS (default 21).
fn tree_args(args: &[String]) -> (Reader, &str, usize) {
    let dir = args.first().map_or("/", String::as_str);
    let runs: usize = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(21)
        .max(1);
    (Reader::new(Root::new(dir)), dir, runs)
}

/// `derive ROOT [RUNS]`: `derive` alone (its result dropped) between two reads of a tree: the
/// UI thread's share of a sample, apart from the read's noise. Process CPU median and best.
fn derive_only(args: &[String]) {
    let (mut reader, dir, runs) = tree_args(args);
    let prev = reader.sample();
    let cur = reader.sample();
    let mut cpu: Vec<Duration> = (0..runs)
        .map(|_| {
            let c = process_cpu_time();
            black_box(derive(Some(&prev), &cur));
            process_cpu_time().saturating_sub(c)
        })
        .collect();
    cpu.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{dir}, {runs} derives: process CPU median {:.2} ms, best {:.2}",
        ms(cpu[runs / 2]),
        ms(cpu[0])
    );
}

/// `write DIR CPUS [TICK]`: one synthetic host tree, for `tree` and profilers.
fn write(args: &[String]) {
    let dir = args.first().map_or("synth-host", String::as_str);
    let cpus: u32 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(4096);
    let tick: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(0);
    write_host(std::path::Path::new(dir), &spec(cpus), tick).expect("write the synthetic host");
    eprintln!("synth {cpus} CPUs, tick {tick}: written to {dir}");
}

/// Wall median/best/worst and process CPU median of `runs` warm read + derive steps.
fn warm_runs(label: &str, runs: usize, reader: &mut Reader, prev: &Sample) {
    let mut wall = Vec::with_capacity(runs);
    let mut cpu = Vec::with_capacity(runs);
    let before = reader.root().opened();
    for _ in 0..runs {
        let (w, c) = (Instant::now(), process_cpu_time());
        black_box(one(reader, prev));
        wall.push(w.elapsed());
        cpu.push(process_cpu_time().saturating_sub(c));
    }
    let opened = reader.root().opened().since(before);
    wall.sort_unstable();
    cpu.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let per = |n: u64| n as f64 / runs as f64;
    println!(
        "{label}, {runs} warm read+derive: wall median {:.1} ms, best {:.1}, worst {:.1}; process CPU median {:.1} ms; per sample {:.0} files opened ({:.0} missing), {:.0} other lookups",
        ms(wall[runs / 2]),
        ms(wall[0]),
        ms(wall[runs - 1]),
        ms(cpu[runs / 2]),
        per(opened.files),
        per(opened.missing),
        per(opened.lookups),
    );
}

/// `procs N [RUNS]`: the process reader's cost. Two synthetic trees, one with N processes
/// (`proc/PID/{stat,io,cgroup}`, see `synth::procs`) and one with none, each read warm
/// (ticks 0 and 1 written, then RUNS samples of tick 1): the CPU difference per 1,000
/// processes is what processes add to a sample. A table of 1k, 5k and 20k when N is absent.
fn procs(args: &[String]) {
    let runs: usize = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(11)
        .max(1);
    let sizes: Vec<u64> = match args.first().and_then(|a| a.parse().ok()) {
        Some(n) => vec![n],
        None => vec![1000, 5000, 20_000],
    };
    let cost = |n: u64| -> (Duration, u32) {
        let dir = scratch();
        synth::procs::write_procs(dir.path(), n, 0).expect("write procs");
        let mut reader = Reader::new(Root::new(dir.path()));
        black_box(reader.sample());
        synth::procs::write_procs(dir.path(), n, 1).expect("write procs");
        let mut cpu: Vec<Duration> = (0..runs)
            .map(|_| {
                let c = process_cpu_time();
                let s = black_box(reader.sample());
                let used = process_cpu_time().saturating_sub(c);
                black_box(s.processes.map(|p| p.io_read));
                used
            })
            .collect();
        cpu.sort_unstable();
        let io = reader.sample().processes.map_or(0, |p| p.io_read);
        (cpu[runs / 2], io)
    };
    let (base, _) = cost(0);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "| processes | io files read | CPU/sample | of which processes | per 1,000 processes |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for n in sizes {
        let (c, io) = cost(n);
        let extra = ms(c.saturating_sub(base));
        println!(
            "| {n} | {io} | {:.2} ms | {:.2} ms | {:.2} ms |",
            ms(c),
            extra,
            extra * 1000.0 / n as f64
        );
    }
}

/// `json ROOT [N]`: the N-th sample of one reader, for before/after diffs.
fn warm_json(args: &[String]) {
    let root = Root::new(args.first().map_or("/", String::as_str));
    let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(3).max(1);
    let mut reader = Reader::new(root);
    let mut s = reader.sample();
    for _ in 1..n {
        s = reader.sample();
    }
    s.time.wall_ms = 0;
    s.time.boottime_ns = None;
    println!(
        "{}",
        serde_json::to_string_pretty(&s).expect("a sample serializes")
    );
}

/// Median wall time, fastest wall time and median CPU time of `n` runs of `f`.
fn timed(n: usize, mut f: impl FnMut()) -> (Duration, Duration, Duration) {
    let (mut wall, mut cpu): (Vec<Duration>, Vec<Duration>) = (0..n)
        .map(|_| {
            let (s, c) = (Instant::now(), process_cpu_time());
            f();
            (s.elapsed(), process_cpu_time().saturating_sub(c))
        })
        .unzip();
    wall.sort_unstable();
    cpu.sort_unstable();
    (wall[n / 2], wall[0], cpu[n / 2])
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    match args.first().map(String::as_str) {
        Some("live") => return live::live(&args[1..]),
        Some("host") => return one_host(&args[1..]),
        Some("json") => return warm_json(&args[1..]),
        Some("tree") => return tree(&args[1..]),
        Some("derive") => return derive_only(&args[1..]),
        Some("write") => return write(&args[1..]),
        Some("procs") => return procs(&args[1..]),
        Some("files") => return live::files(&args[1..]),
        Some("floor") => return live::floor(&args[1..]),
        Some("cold") => return live::cold(&args[1..]),
        Some("twin") => return live::twin(&args[1..]),
        Some("frame") => return live::frame::frame(&args[1..]),
        Some("ring") => return live::ring::ring(&args[1..]),
        _ => {}
    }
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .configure_from_args();
    let sizes = [2u32, 64, 512, 4096];
    let mut hosts: Vec<Host> = sizes.iter().map(|&n| host(n)).collect();
    {
        let mut g = c.benchmark_group("sample");
        for h in &mut hosts {
            let big = h.spec.cpus >= 1024;
            g.sample_size(if big { 10 } else { 30 });
            g.measurement_time(Duration::from_secs(if big { 8 } else { 4 }));
            g.bench_function(BenchmarkId::from_parameter(h.spec.cpus), |b| {
                b.iter(|| black_box(one(&mut h.reader, &h.prev)))
            });
        }
        g.finish();
    }
    c.final_summary();

    // `cargo test --benches` runs this binary without --bench: the table is for real runs.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    println!();
    println!(
        "read + derive per sample, ms: warm reader (wall median, best, process CPU time median,"
    );
    println!("median wall per 1000 CPUs) and a new reader each time (wall median)");
    println!(
        "{:>6} {:>6} {:>6} {:>6} {:>9} {:>9} {:>9} {:>10} {:>9}",
        "CPUs", "nodes", "disks", "queues", "warm", "best", "cpu", "per 1kCPU", "cold"
    );
    for h in &mut hosts {
        let runs = if h.spec.cpus >= 1024 { 11 } else { 31 };
        let (warm, best, cpu) = timed(runs, || {
            black_box(one(&mut h.reader, &h.prev));
        });
        let (cold, _, _) = timed(runs.min(5), || {
            let mut r = Reader::new(h.root1.clone());
            black_box(one(&mut r, &h.prev));
        });
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "{:>6} {:>6} {:>6} {:>6} {:>9.2} {:>9.2} {:>9.2} {:>10.2} {:>9.2}",
            h.spec.cpus,
            h.spec.nodes,
            h.spec.disks,
            h.spec.queues,
            ms(warm),
            ms(best),
            ms(cpu),
            ms(warm) * 1000.0 / f64::from(h.spec.cpus),
            ms(cold)
        );
    }
}
