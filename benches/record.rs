//! Recording size and speed: bytes/sample and encode CPU/sample on synthetic 2-, 64- and
//! 512-CPU hosts (one tick = one second), then a day-long 2-CPU recording (86,400 samples):
//! open (checksummed scan + seek index), seek to random times (decode keyframe + delta), a
//! full decode of every sample, and `perftop dump` of the whole day in each format (output
//! discarded; decoding on every CPU, and on one thread for comparison). Prints plain tables; no
//! criterion statistics needed.
//!
//! `cargo bench --bench record` (add `-- quick` to skip the day-long part; `-- live PATH` prints
//! the bytes/sample of an existing recording, e.g. one made by `perftop record`; `-- json PATH`
//! its samples' JSON, one a line; `-- tree DIR N`
//! the headless recorder's CPU per sample on a host tree; `-- stages PATH` the CPU of each of its
//! stages after the read, on a recording's samples; `-- export PATH` the same for `perftop
//! export`: assessing an interval and rendering its page)

// The synthetic-host generator is a test fixture (tests/support), not part of perftop.
#[path = "../tests/support/synth/mod.rs"]
mod synth;

use perftop::findings::Thresholds;
use perftop::record::dump::{dump, DumpOptions, Format};
use perftop::record::format::{decode_head, FILE_MAGIC, FORMAT_VERSION, FRAME_HEADER};
use perftop::record::writer::header_for;
use perftop::record::{Decoder, Recording, Writer};
use perftop::root::Root;
use perftop::sample::Sample;
use perftop::source::Reader;
use std::time::{Duration, Instant};
use synth::{write_host, SynthSpec};

const T0: i64 = 1_763_733_930_000;

fn spec(cpus: u32) -> SynthSpec {
    SynthSpec {
        cpus,
        nodes: (cpus / 64).max(1),
        disks: (cpus / 4).clamp(2, 64),
        queues: (cpus / 8).max(2),
    }
}

fn synth_samples(cpus: u32, n: u64) -> Vec<Sample> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut reader = Reader::new(Root::new(dir.path()));
    (0..n)
        .map(|t| {
            write_host(dir.path(), &spec(cpus), t).expect("synth");
            let mut s = reader.sample();
            s.time.wall_ms = T0 + t as i64 * 1000;
            s
        })
        .collect()
}

/// (bytes, encode seconds, first keyframe bytes, mean delta/step bytes) for `samples` written
/// in order, in the current format.
fn encode(samples: &[Sample]) -> (Vec<u8>, Duration, usize, usize) {
    encode_as(samples, FORMAT_VERSION)
}

/// The same in format `version` (1: deltas against the keyframe, 2: steps).
fn encode_as(samples: &[Sample], version: u32) -> (Vec<u8>, Duration, usize, usize) {
    let mut h = header_for(&samples[0], Duration::from_secs(1), 0);
    h.format_version = version;
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    let t = Instant::now();
    let (mut key, mut delta, mut nd) = (0, 0, 0);
    for (i, s) in samples.iter().enumerate() {
        let n = w.sample(s, i as u64).expect("sample");
        if i % 60 == 0 {
            key = n;
        } else {
            delta += n;
            nd += 1;
        }
    }
    let el = t.elapsed();
    (w.into_inner(), el, key, delta / nd.max(1))
}

/// Steady-state bytes/sample of a recording: everything after the first segment's header frame
/// (and the file magic) over the samples, with the keyframe and delta sizes.
fn live(path: &str) {
    let rec = Recording::open(std::path::Path::new(path)).expect("open recording");
    let total: u64 = rec
        .segments
        .iter()
        .filter_map(|s| std::fs::metadata(&s.path).ok())
        .map(|m| m.len())
        .sum();
    // Each segment's magic and header frame (its length is in the frame head).
    let header: u64 = rec
        .segments
        .iter()
        .filter_map(|s| std::fs::read(&s.path).ok())
        .filter_map(|b| decode_head(b.get(FILE_MAGIC.len()..)?))
        .map(|h| (FILE_MAGIC.len() + FRAME_HEADER) as u64 + u64::from(h.len))
        .sum();
    let n = rec.len().max(1) as u64;
    let keys = rec.samples.iter().filter(|s| s.is_key).count();
    println!(
        "{path}: {} samples ({keys} keyframes), {total} bytes, {} bytes/sample without the header ({} with it)",
        rec.len(),
        (total - header) / n,
        total / n
    );
    // What each part costs: the samples encoded again without it (same writer, same keyframe
    // spacing), as bytes/sample.
    let mut dec = Decoder::default();
    let samples: Vec<Sample> = (0..rec.len())
        .filter_map(|i| rec.decode(i, &mut dec).ok())
        .collect();
    if samples.is_empty() {
        return;
    }
    let json = samples
        .iter()
        .map(|s| serde_json::to_vec(s).map_or(0, |j| j.len()))
        .sum::<usize>()
        / samples.len();
    println!("sample JSON: {json} B (mean)");
    for (version, what) in [
        (1, "format 1 (deltas against the keyframe)"),
        (2, "format 2 (steps)"),
        (
            3,
            "format 3 (steps, keyframe skeletons against the built-in one)",
        ),
    ] {
        let per = |v: &[Sample]| encode_as(v, version).0.len() / v.len();
        let all = per(&samples);
        // Encode CPU: the median of 5 runs (other builds share this machine).
        let mut cpu: Vec<f64> = (0..5)
            .map(|_| encode_as(&samples, version).1.as_secs_f64() * 1000.0 / samples.len() as f64)
            .collect();
        cpu.sort_by(f64::total_cmp);
        let (_, _, key, delta) = encode_as(&samples, version);
        let without = |f: fn(&mut Sample)| {
            let mut v = samples.clone();
            v.iter_mut().for_each(f);
            all.saturating_sub(per(&v))
        };
        println!(
            "re-encoded in {what}: {all} bytes/sample (keyframe {key} B, others {delta} B mean), encode {:.3} ms/sample; of which processes {}, cgroups {}, filesystems and temperatures {}, TCP {}, interrupts {}, softirqs and softnet {}, NICs {}, per-CPU {}, disks {}",
            cpu[2],
            without(|s| s.processes = None),
            without(|s| s.cgroups = None),
            without(|s| {
                s.filesystems = None;
                s.temperatures = None;
            }),
            without(|s| s.net.tcp = None),
            without(|s| s.net.interrupts = None),
            without(|s| {
                s.net.softirqs = None;
                s.net.softnet.clear();
            }),
            without(|s| s.net.devices.clear()),
            without(|s| s.cpu.cpus.clear()),
            without(|s| s.disks.clear()),
        );
    }
}

/// `tree DIR [N]`: what the headless recorder spends per sample on a host tree (one written by
/// `cargo bench --bench sample -- write DIR CPUS`): N samples read and written to a recording
/// as `perftop record --root DIR` does (after a first, cold one), the process's CPU time of the
/// read and of the encode and write, per sample.
fn tree(dir: &str, n: usize) {
    let cpu = || {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    };
    let out = tempfile::tempdir().expect("tempdir");
    let mut reader = Reader::new(Root::new(dir));
    let first = reader.sample();
    let retention = perftop::record::writer::Retention::default();
    let mut rec = perftop::record::writer::Recorder::create(
        &out.path().join("tree.ptrec"),
        &first,
        Duration::from_secs(1),
        retention,
    )
    .expect("recording");
    rec.sample_owned(first).expect("first sample");
    let (mut read, mut write) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..n {
        let t0 = cpu();
        let s = reader.sample();
        let t1 = cpu();
        rec.sample_owned(s).expect("sample");
        read += t1 - t0;
        write += cpu() - t1;
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0 / n.max(1) as f64;
    println!(
        "{dir}: {n} samples recorded: {:.2} ms CPU/sample ({:.2} reading, {:.2} encoding and writing)",
        ms(read + write),
        ms(read),
        ms(write)
    );
}

/// Every sample of the recording at `path` that decodes (`None`, said, when fewer than 2).
fn recording_samples(path: &str) -> Option<Vec<Sample>> {
    let rec = Recording::open(std::path::Path::new(path)).expect("open recording");
    let mut dec = Decoder::default();
    let samples: Vec<Sample> = (0..rec.len())
        .filter_map(|i| rec.decode(i, &mut dec).ok())
        .collect();
    if samples.len() < 2 {
        println!("{path}: fewer than 2 samples");
        return None;
    }
    Some(samples)
}

/// The process CPU time `f` takes, in µs per item of `n`: the median of 7 runs.
fn median_us(n: usize, f: &mut dyn FnMut()) -> f64 {
    let cpu = || {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    };
    let mut v: Vec<f64> = (0..7)
        .map(|_| {
            let t = cpu();
            f();
            (cpu() - t).as_secs_f64() * 1e6 / n as f64
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[3]
}

/// `stages PATH`: what each stage of the headless recorder costs a sample, on the samples of a
/// real recording (one made by `perftop record` on the host to study): the sample's JSON, the
/// step transform of it, the same split straight from the sample, the whole writer (that split
/// and zstd), `derive` alone and the
/// digest's judge (derive and findings), as CPU time per sample, the median of 7 passes over
/// every sample. The read of the host is not here: `tree` measures it.
fn stages(path: &str) {
    use perftop::record::digest::Digester;
    use perftop::record::numdiff::{self, Fields};
    let Some(samples) = recording_samples(path) else {
        return;
    };
    let n = samples.len();
    let median = |f: &mut dyn FnMut()| median_us(n, f);
    let jsons: Vec<Vec<u8>> = samples
        .iter()
        .map(|s| serde_json::to_vec(s).expect("json"))
        .collect();
    let mut buf = Vec::new();
    let json = median(&mut || {
        for s in &samples {
            buf.clear();
            serde_json::to_writer(&mut buf, s).expect("json");
        }
    });
    let (mut skel, mut col) = (Vec::new(), Vec::new());
    let (mut prev, mut next) = (Fields::default(), Fields::default());
    let transform = median(&mut || {
        prev = Fields::default();
        for j in &jsons {
            numdiff::encode(j, &prev, &mut skel, &mut col, &mut next).expect("encode");
            std::mem::swap(&mut prev, &mut next);
        }
    });
    let direct = median(&mut || {
        prev = Fields::default();
        for s in &samples {
            numdiff::direct::encode(s, &prev, &mut skel, &mut col, &mut next).expect("direct");
            std::mem::swap(&mut prev, &mut next);
        }
    });
    let h = header_for(&samples[0], Duration::from_secs(1), 0);
    let mut written = 0;
    let writer = median(&mut || {
        let mut w = Writer::new(Vec::with_capacity(1 << 20), &h).expect("header");
        for (i, s) in samples.iter().enumerate() {
            w.sample(s, i as u64).expect("sample");
        }
        written = w.get_ref().len();
    });
    let derive = median(&mut || {
        for w in samples.windows(2) {
            std::hint::black_box(perftop::derive::derive(Some(&w[0]), &w[1]));
        }
    }) * n as f64
        / (n - 1) as f64;
    let judge = median(&mut || {
        let mut d = Digester::new(Thresholds::default());
        for (i, s) in samples.iter().enumerate() {
            std::hint::black_box(d.next(s, i as u64));
        }
    });
    let mean_json = jsons.iter().map(Vec::len).sum::<usize>() / n;
    println!("{path}: {n} samples, JSON {mean_json} B a sample; CPU a sample, median of 7 passes:");
    println!("| stage | µs |\n|---|---:|");
    println!("| JSON (serde) | {json:.0} |");
    println!("| step transform (numdiff) of the JSON | {transform:.0} |");
    println!("| the same split straight from the sample (the writer's) | {direct:.0} |");
    println!(
        "| writer: split, zstd ({} B a sample written) | {writer:.0} |",
        written / n
    );
    println!("| derive | {derive:.0} |");
    println!("| digest's judge: derive, findings, the previous sample kept | {judge:.0} |");
}

/// `export PATH`: the exporter's work an interval after the read, on a recording's samples
/// (warm caches: a lower bound on what `perftop export` spends at 1 s).
fn export_stages(path: &str) {
    use perftop::assess::Assessor;
    use perftop::export::Renderer;
    let Some(samples) = recording_samples(path) else {
        return;
    };
    let n = samples.len() - 1;
    let median = |f: &mut dyn FnMut()| median_us(n, f);
    let t = Thresholds::default();
    let mut a = Assessor::new(t.clone());
    let assessed: Vec<_> = samples
        .windows(2)
        .map(|w| a.next(Some(&w[0]), &w[1]))
        .collect();
    let assess = median(&mut || {
        let mut a = Assessor::new(t.clone());
        for w in samples.windows(2) {
            std::hint::black_box(a.next(Some(&w[0]), &w[1]));
        }
    });
    let mut bytes = 0;
    let mut r = Renderer::default();
    let page = median(&mut || {
        for d in &assessed {
            let p = r.render(d, a.baselines(), &t, 0);
            bytes = p.text.len();
            std::hint::black_box(p);
        }
    });
    println!("{path}: {n} intervals, page {bytes} B; CPU an interval, median of 7 passes:");
    println!("| stage | µs |\n|---|---:|");
    println!("| assess: derive, findings | {assess:.0} |");
    println!("| page: the interval's tree, the walk, the text | {page:.0} |");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "tree") {
        let dir = args.get(i + 1).map_or("/", String::as_str);
        let n = args.get(i + 2).and_then(|a| a.parse().ok()).unwrap_or(12);
        return tree(dir, n);
    }
    if let Some(i) = args.iter().position(|a| a == "stages") {
        let p = args.get(i + 1).map_or("", String::as_str);
        return stages(p);
    }
    if let Some(i) = args.iter().position(|a| a == "export") {
        let p = args.get(i + 1).map_or("", String::as_str);
        return export_stages(p);
    }
    if let Some(i) = args.iter().position(|a| a == "json") {
        // `json PATH`: every sample's JSON, one a line (what the steps carry, to study).
        let p = args.get(i + 1).map_or("", String::as_str);
        let rec = Recording::open(std::path::Path::new(p)).expect("open recording");
        let mut dec = Decoder::default();
        for k in 0..rec.len() {
            if let Ok(s) = rec.decode(k, &mut dec) {
                println!("{}", serde_json::to_string(&s).expect("json"));
            }
        }
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "live") {
        // cargo passes `--bench` along; paths are the other arguments.
        for p in args[i + 1..].iter().filter(|a| !a.starts_with("--")) {
            live(p);
        }
        return;
    }
    let quick = std::env::args().any(|a| a == "quick");
    println!("| host | sample JSON | keyframe | delta (mean) | steady state bytes/sample | encode CPU/sample |");
    println!("|---|---|---|---|---|---|");
    let mut two = Vec::new();
    for cpus in [2u32, 64, 512] {
        let n = if cpus >= 512 { 121 } else { 181 };
        let s = synth_samples(cpus, n);
        let json = serde_json::to_vec(&s[0]).expect("json").len();
        let (bytes, el, key, delta) = encode(&s[1..]);
        let per = bytes.len() as f64 / (n - 1) as f64;
        println!(
            "| synthetic {cpus} CPUs | {json} B | {key} B | {delta} B | {per:.0} B | {:.3} ms |",
            el.as_secs_f64() * 1000.0 / (n - 1) as f64
        );
        if cpus == 2 {
            two = s;
        }
    }
    if quick {
        return;
    }
    // A day at 1 s: cycle the 2-CPU samples with real timestamps.
    let day = 86_400usize;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("day.rec");
    let h = header_for(&two[0], Duration::from_secs(1), 0);
    let mut w = Writer::new(Vec::with_capacity(64 << 20), &h).expect("header");
    let t = Instant::now();
    for i in 0..day {
        let mut s = two[i % two.len()].clone();
        s.time.wall_ms = T0 + i as i64 * 1000;
        w.sample(&s, i as u64).expect("sample");
    }
    let enc = t.elapsed();
    let bytes = w.into_inner();
    std::fs::write(&path, &bytes).expect("write day");
    println!();
    println!(
        "day-long 2-CPU recording: {day} samples, {:.1} MB ({:.0} B/sample), encoded in {:.2} s ({:.3} ms/sample)",
        bytes.len() as f64 / 1e6,
        bytes.len() as f64 / day as f64,
        enc.as_secs_f64(),
        enc.as_secs_f64() * 1000.0 / day as f64
    );
    let t = Instant::now();
    let rec = Recording::open(&path).expect("open");
    let open = t.elapsed();
    assert_eq!(rec.len(), day);
    let mut worst = Duration::ZERO;
    let mut total = Duration::ZERO;
    let seeks = 200;
    for k in 0..seeks {
        let at = T0 + ((k * 7919 % day) as i64) * 1000 + 500;
        let t = Instant::now();
        let mut d = Decoder::default();
        let i = rec.seek(at);
        let s = rec.decode(i, &mut d).expect("decode");
        let el = t.elapsed();
        assert_eq!(s.time.wall_ms, at - 500);
        worst = worst.max(el);
        total += el;
    }
    let t = Instant::now();
    let mut d = Decoder::default();
    for i in 0..rec.len() {
        rec.decode(i, &mut d).expect("decode");
    }
    let full = t.elapsed();
    println!("| day-long recording (86,400 samples) | time |");
    println!("|---|---|");
    println!(
        "| open: checksummed scan + seek index | {:.1} ms |",
        open.as_secs_f64() * 1000.0
    );
    println!(
        "| seek to a random time + decode (mean / worst of {seeks}) | {:.2} / {:.2} ms |",
        total.as_secs_f64() * 1000.0 / seeks as f64,
        worst.as_secs_f64() * 1000.0
    );
    println!(
        "| cold seek: open + seek + decode | {:.1} ms |",
        (open + worst).as_secs_f64() * 1000.0
    );
    println!(
        "| full decode of every sample | {:.2} s |",
        full.as_secs_f64()
    );
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    for (name, format) in [
        ("json", Format::Json),
        ("csv", Format::Csv),
        ("openmetrics", Format::OpenMetrics),
        ("text", Format::Text),
    ] {
        let mut times = Vec::new();
        for t in [0, 1] {
            let opts = DumpOptions {
                format,
                from: None,
                to: None,
                pane: None,
                width: 100,
                thresholds: Thresholds::default(),
                threads: t,
            };
            let mut out = std::io::BufWriter::new(std::io::sink());
            let start = Instant::now();
            let n = dump(&rec, &opts, &mut out, &mut |w| panic!("{w}")).expect("dump");
            assert_eq!(n, day as u64 - 1);
            times.push(start.elapsed().as_secs_f64());
        }
        println!(
            "| dump --format {name} (decode on {threads} CPUs / on 1) | {:.1} / {:.1} s |",
            times[0], times[1]
        );
    }
}
