//! One sample (read + derive) on synthetic hosts of 2 to 4096 CPUs.
//!
//! Each size is written once (ticks 0 and 1) into a temp dir. The timed step is what a live
//! perftop does every interval: `Reader::sample` on the tick-1 tree with a warm reader (static
//! files cached, as after the first frame) and `derive` against the tick-0 sample. After the
//! criterion runs, a plain table shows ms per sample and ms per 1000 CPUs, warm and cold (a new
//! reader: statics and the ksoftirqd scan included), so linearity is visible at a glance.
//!
//! `cargo bench --bench sample`

use criterion::{BenchmarkId, Criterion};
use perftop::derive::derive;
use perftop::root::Root;
use perftop::sample::Sample;
use perftop::source::Reader;
use perftop::synth::{write_host, SynthSpec};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// 4096 CPUs / 64 nodes / 1024 disks / 512 queues, scaled down proportionally.
fn spec(cpus: u32) -> SynthSpec {
    SynthSpec {
        cpus,
        nodes: (cpus / 64).max(1),
        disks: (cpus / 4).max(1),
        queues: (cpus / 8).max(1),
    }
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
    let dir = tempfile::tempdir().expect("tempdir");
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

/// This thread's CPU time (user + system): unlike wall time, not inflated by other work on a
/// shared machine.
fn cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Median wall time, fastest wall time and median CPU time of `n` runs of `f`.
fn timed(n: usize, mut f: impl FnMut()) -> (Duration, Duration, Duration) {
    let (mut wall, mut cpu): (Vec<Duration>, Vec<Duration>) = (0..n)
        .map(|_| {
            let (s, c) = (Instant::now(), cpu_time());
            f();
            (s.elapsed(), cpu_time().saturating_sub(c))
        })
        .unzip();
    wall.sort_unstable();
    cpu.sort_unstable();
    (wall[n / 2], wall[0], cpu[n / 2])
}

fn main() {
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
    println!("read + derive per sample, ms: warm reader (wall median, best, CPU time median,");
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
