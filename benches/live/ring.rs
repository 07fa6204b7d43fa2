//! `ring [ROOT] [N] [SLEEP_MS]`: the dashboard's in-memory history alone (`SampleRing::push`:
//! the sample's JSON, then zstd against the first complete sample's) over samples of ROOT
//! (default the live `/`; a tree `write` made works too), N (default 60) of them SLEEP_MS
//! (default 1000) apart, as the dashboard pushes them: caches as cold as a sample a second
//! leaves them. Prints the pushing thread's CPU a sample (median and quartiles), a sample's
//! JSON and what the ring keeps of it.

use super::thread_cpu_time;
use perftop::root::Root;
use perftop::source::Reader;
use perftop::ui::ring::SampleRing;
use std::time::Duration;

pub fn ring(args: &[String]) {
    let root = args.first().map_or("/", String::as_str);
    // At least one push, so that every figure below is a measured one.
    let n: usize = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(60)
        .max(1);
    let sleep = Duration::from_millis(args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1000));
    let mut reader = Reader::new(Root::new(root));
    let mut ring = SampleRing::new(n + 2, usize::MAX);
    // The first look, then the first complete sample, which becomes the dictionary: a
    // dashboard pays for both once, at its start.
    ring.push(reader.sample());
    std::thread::sleep(sleep);
    ring.push(reader.sample());
    let kept0 = ring.bytes();
    let mut per: Vec<Duration> = Vec::with_capacity(n);
    for _ in 0..n {
        std::thread::sleep(sleep);
        let s = reader.sample();
        let t = thread_cpu_time();
        ring.push(s);
        per.push(thread_cpu_time().saturating_sub(t));
    }
    // Measured after the loop, so that encoding it here does not warm the pushes' caches.
    let json = ring
        .newest()
        .and_then(|s| serde_json::to_vec(s).ok())
        .map_or(0, |v| v.len());
    per.sort();
    let us = |q: usize| {
        per.get(q * (n - 1) / 4)
            .map_or(0.0, |d| d.as_secs_f64() * 1e6)
    };
    println!(
        "ring: {n} samples of {root}, {} ms apart: {:.0} µs CPU a push (median; quartiles {:.0}-{:.0}), \
         {json} B of JSON a sample, {} B kept a sample",
        sleep.as_millis(),
        us(2),
        us(1),
        us(3),
        (ring.bytes() - kept0) / n
    );
}
