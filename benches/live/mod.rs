//! The live-host modes of the sample benchmark: what `Reader::sample` costs on the running
//! system (`live`, `files`), and why (`floor`, `cold`, `twin`).

pub mod frame;
pub mod ring;

use perftop::root::Root;
use perftop::source::Reader;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// CPU time (user + system) of the whole process, reader threads included.
pub fn process_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// CPU time of the calling thread: the drawing or the ring's push, not the reader's threads.
pub fn thread_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// The `[N] [SLEEP_MS]` every live mode takes, with its defaults: rounds and the sleep between.
fn rounds_and_sleep(args: &[String], n: usize, ms: u64) -> (usize, Duration) {
    let n = args.first().and_then(|a| a.parse().ok()).unwrap_or(n);
    let ms = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(ms);
    (n, Duration::from_millis(ms))
}

/// `live [N] [SLEEP_MS]`: CPU per sample of the running system.
pub fn live(args: &[String]) {
    let (n, sleep) = rounds_and_sleep(args, 200, 100);
    perftop::root::raise_open_files_limit();
    let mut reader = Reader::new(Root::new("/"));
    // The first sample fills the static caches and scans /proc for ksoftirqd; a recorder pays
    // that once, so it is left out (and reported on its own).
    let c0 = process_cpu_time();
    let first = reader.sample();
    let first_cpu = process_cpu_time().saturating_sub(c0);
    let mut per: Vec<Duration> = Vec::with_capacity(n);
    let mut problems = first.problems.len();
    let (w0, c0) = (Instant::now(), process_cpu_time());
    let opened0 = reader.root().opened();
    let mut busy = Duration::ZERO;
    for _ in 0..n {
        std::thread::sleep(sleep);
        let (c, w) = (process_cpu_time(), Instant::now());
        let s = black_box(reader.sample());
        busy += w.elapsed();
        per.push(process_cpu_time().saturating_sub(c));
        problems = problems.max(s.problems.len());
    }
    let total = process_cpu_time().saturating_sub(c0);
    let opened = reader.root().opened().since(opened0);
    per.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "live: {n} samples, {:.0} ms apart, in {:.1} s; first sample {:.3} ms CPU",
        ms(sleep),
        w0.elapsed().as_secs_f64(),
        ms(first_cpu)
    );
    println!(
        "CPU per sample (process user+sys): mean {:.3} ms, median {:.3}, p10 {:.3}, p90 {:.3}; wall in sample() mean {:.3} ms; {problems} problem(s) listed",
        ms(total) / n as f64,
        ms(per[n / 2]),
        ms(per[n / 10]),
        ms(per[n * 9 / 10]),
        ms(busy) / n as f64,
    );
    println!(
        "per sample: {:.1} files read ({:.1} through kept descriptors, {:.1} missing), {:.1} other lookups",
        opened.files as f64 / n as f64,
        opened.reread as f64 / n as f64,
        opened.missing as f64 / n as f64,
        opened.lookups as f64 / n as f64
    );
}

/// `files [N] [SLEEP_MS] [ROWS]`: like `live`, with every `Root` read timed by the reading
/// thread's CPU clock: the ROWS (default 25) dearest files, per sample, after a first sample
/// left out. The timing adds ~0.5 µs a read.
pub fn files(args: &[String]) {
    let (n, sleep) = rounds_and_sleep(args, 100, 250);
    let rows: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(25);
    perftop::root::raise_open_files_limit();
    let costs = std::sync::Arc::new(std::sync::Mutex::new(Default::default()));
    let mut reader = Reader::new(Root::new("/").timed(costs.clone()));
    black_box(reader.sample());
    *costs.lock().expect("costs") = Default::default();
    let c0 = process_cpu_time();
    for _ in 0..n {
        std::thread::sleep(sleep);
        black_box(reader.sample());
    }
    let total = process_cpu_time().saturating_sub(c0);
    let us = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
    let costs: &perftop::root::cost::Costs = &costs.lock().expect("costs");
    let dearest = costs.dearest();
    let files: Duration = dearest.iter().map(|d| d.1).sum();
    println!(
        "files: {n} samples, {:.0} ms apart: {:.0} µs CPU per sample, {:.0} µs of it in {:.1} file reads",
        sleep.as_secs_f64() * 1e3,
        us(total),
        us(files),
        dearest.iter().map(|d| d.2).sum::<u64>() as f64 / n as f64
    );
    println!("{:>9} {:>9} {:>9}  file", "µs/sample", "µs/read", "reads");
    for (path, t, reads) in dearest.into_iter().take(rows) {
        println!(
            "{:>9.1} {:>9.1} {:>9.2}  {path}",
            us(t),
            t.as_secs_f64() * 1e6 / reads as f64,
            reads as f64 / n as f64
        );
    }
}

/// `floor [N] [SLEEP_MS]`: the kernel's share alone. Learns from 10 timed samples the files the
/// live reader reads every sample (those with no PID in their path), then reads only those,
/// one `pread` each on descriptors kept open, with nothing parsed or kept: N rounds SLEEP_MS
/// apart (default 60, 250). What the same files cost with none of perftop around them.
pub fn floor(args: &[String]) {
    use std::os::unix::fs::FileExt;
    let (n, sleep) = rounds_and_sleep(args, 60, 250);
    let n = n.max(1);
    perftop::root::raise_open_files_limit();
    let costs = std::sync::Arc::new(std::sync::Mutex::new(Default::default()));
    let mut reader = Reader::new(Root::new("/").timed(costs.clone()));
    black_box(reader.sample());
    *costs.lock().expect("costs") = Default::default();
    const LEARN: u64 = 10;
    for _ in 0..LEARN {
        black_box(reader.sample());
    }
    let costs: &perftop::root::cost::Costs = &costs.lock().expect("costs");
    let files: Vec<std::fs::File> = costs
        .dearest()
        .into_iter()
        .filter(|(path, _, reads)| *reads >= LEARN && !path.contains("PID"))
        .filter_map(|(path, ..)| std::fs::File::open(path).ok())
        .collect();
    let mut buf = vec![0u8; 1 << 20];
    let mut per: Vec<Duration> = Vec::with_capacity(n);
    for _ in 0..n {
        std::thread::sleep(sleep);
        let c = process_cpu_time();
        for f in &files {
            black_box(f.read_at(&mut buf, 0).ok());
        }
        per.push(process_cpu_time().saturating_sub(c));
    }
    per.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "floor: {} files read every sample, one pread each, {n} rounds {:.0} ms apart: median {:.3} ms, p10 {:.3}, p90 {:.3}",
        files.len(),
        ms(sleep),
        ms(per[n / 2]),
        ms(per[n / 10]),
        ms(per[n * 9 / 10]),
    );
}

/// `twin [N] [SLEEP_MS]`: two warm readers of the live host, each reading its sample N times
/// (default 40) SLEEP_MS apart (default 1000), one right after the other: the first after the
/// sleep pays the cold caches, the second does the same work (same files, same parsers, same
/// 1 s interval for its rates) with them warm. The readers swap places every round, so the
/// figures compare the position, not the reader. CPU per sample (process user+sys) for each.
pub fn twin(args: &[String]) {
    let (n, sleep) = rounds_and_sleep(args, 40, 1000);
    let n = n.max(2);
    perftop::root::raise_open_files_limit();
    let mut readers = [Reader::new(Root::new("/")), Reader::new(Root::new("/"))];
    for r in readers.iter_mut() {
        black_box(r.sample());
    }
    let (mut first, mut second) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for round in 0..n {
        std::thread::sleep(sleep);
        let (a, b) = readers.split_at_mut(1);
        let (lead, follow) = match round % 2 {
            0 => (&mut a[0], &mut b[0]),
            _ => (&mut b[0], &mut a[0]),
        };
        let c0 = process_cpu_time();
        black_box(lead.sample());
        let c1 = process_cpu_time();
        black_box(follow.sample());
        first.push(c1.saturating_sub(c0));
        second.push(process_cpu_time().saturating_sub(c1));
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let show = |what: &str, v: &mut Vec<Duration>| {
        v.sort_unstable();
        let mean = v.iter().map(|d| ms(*d)).sum::<f64>() / v.len() as f64;
        println!(
            "{what:<24} median {:.3} ms, mean {mean:.3}, p10 {:.3}, p90 {:.3}",
            ms(v[v.len() / 2]),
            ms(v[v.len() / 10]),
            ms(v[v.len() * 9 / 10])
        );
    };
    println!(
        "twin: {n} rounds {:.0} ms apart, CPU per sample (process user+sys)",
        ms(sleep)
    );
    show("first after the sleep", &mut first);
    show("second, at once", &mut second);
}

/// `cold [N] [SLEEP_MS]`: what a syscall costs right after a sleep, against the same call
/// repeated at once: `getppid` (no work at all), a `pread` of a kept sysfs attribute and of
/// `/proc/stat`, each timed by the thread's CPU clock, first after the sleep then again at once
/// and then as the median of 1,000 calls; medians over N rounds (default 20) SLEEP_MS apart
/// (default 1000). Why a sample costs more than its files' warm cost: every file it reads is
/// a different kernel path and object, each one cold after the sleep.
pub fn cold(args: &[String]) {
    use std::os::unix::fs::FileExt;
    let (n, sleep) = rounds_and_sleep(args, 20, 1000);
    let n = n.max(1);
    let thread_ns = || {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        t.tv_sec as f64 * 1e9 + t.tv_nsec as f64
    };
    let sysfs = std::fs::File::open("/sys/kernel/mm/transparent_hugepage/enabled").ok();
    let stat = std::fs::File::open("/proc/stat").ok();
    let mut buf = vec![0u8; 8192];
    let mut call = |what: usize| match what {
        0 => {
            black_box(rustix::process::getppid());
        }
        1 => {
            black_box(sysfs.as_ref().map(|f| f.read_at(&mut buf, 0)));
        }
        _ => {
            black_box(stat.as_ref().map(|f| f.read_at(&mut buf, 0)));
        }
    };
    let mut rows: Vec<[Vec<f64>; 3]> = (0..3).map(|_| Default::default()).collect();
    for _ in 0..n {
        std::thread::sleep(sleep);
        for (what, row) in rows.iter_mut().enumerate() {
            let t0 = thread_ns();
            call(what);
            let t1 = thread_ns();
            call(what);
            let t2 = thread_ns();
            row[0].push(t1 - t0);
            row[1].push(t2 - t1);
        }
        for (what, row) in rows.iter_mut().enumerate() {
            let t0 = thread_ns();
            for _ in 0..1000 {
                call(what);
            }
            row[2].push((thread_ns() - t0) / 1000.0);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2] / 1e3
    };
    println!(
        "cold: {n} rounds {:.0} ms apart, µs (thread CPU clock, medians)",
        sleep.as_secs_f64() * 1e3
    );
    println!(
        "{:<28} {:>12} {:>12} {:>12}",
        "call", "first", "second", "warm"
    );
    let names = ["getppid", "pread sysfs (THP enabled)", "pread /proc/stat"];
    for (name, row) in names.iter().zip(rows.iter_mut()) {
        let [a, b, c] = row;
        println!(
            "{name:<28} {:>12.2} {:>12.2} {:>12.2}",
            median(a),
            median(b),
            median(c)
        );
    }
}
