//! Recording size and speed: bytes/sample and encode CPU/sample on synthetic 2-, 64- and
//! 512-CPU hosts (one tick = one second), then a day-long 2-CPU recording (86,400 samples):
//! open (checksummed scan + seek index), seek to random times (decode keyframe + delta), and a
//! full decode of every sample. Prints a plain table; no criterion statistics needed.
//!
//! `cargo bench --bench record` (add `-- quick` to skip the day-long part)

use perftop::record::writer::header_for;
use perftop::record::{Decoder, Recording, Writer};
use perftop::root::Root;
use perftop::sample::Sample;
use perftop::source::Reader;
use perftop::synth::{write_host, SynthSpec};
use std::time::{Duration, Instant};

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

/// (bytes, encode seconds) for `samples` written in order.
fn encode(samples: &[Sample]) -> (Vec<u8>, Duration, usize, usize) {
    let h = header_for(&samples[0], Duration::from_secs(1), 0);
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

fn main() {
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
}
