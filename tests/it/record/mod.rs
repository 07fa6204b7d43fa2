//! Recordings: round trip, crash safety (kill -9, torn tails, flipped bytes, full disk),
//! segments and retention, the golden v1 file, and every dump format.
//!
//! A module of the `it` test binary (`cargo test --test it record::`): the sample and encoding
//! helpers are here, the tests one module per subject.

use crate::support;

mod dump;
mod file;
mod golden;
mod keyframes;
mod limits;
mod openmetrics;
mod process;
mod steps;

use perftop::findings::Thresholds;
use perftop::record::dump::{dump, DumpOptions, Format};
use perftop::record::format::FRAME_HEADER;
use perftop::record::writer::{header_for, is_disk_full, list_segments};
use perftop::record::{Action, Decoder, EventKind, Gap, Recorder, Recording, Retention, Writer};
use perftop::root::Root;
use perftop::sample::Sample;
use perftop::source::Reader;
use perftop::view::JSON_KEYS as PANES;
use std::io::{self, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use support::synth::write_host;
use support::{small_host, T0};

/// `k` samples of a small synthetic host, one second apart, each read by a fresh reader.
fn make_samples(k: u64) -> Vec<Sample> {
    let dir = tempfile::tempdir().expect("tempdir");
    (0..k)
        .map(|t| {
            write_host(dir.path(), &small_host(), t).expect("synth");
            let mut s = Reader::new(Root::new(dir.path())).sample();
            s.time.wall_ms = T0 + i64::try_from(t).expect("tick") * 1000;
            s
        })
        .collect()
}

/// 130 samples (three keyframes), made once.
fn samples() -> &'static [Sample] {
    static S: OnceLock<Vec<Sample>> = OnceLock::new();
    S.get_or_init(|| make_samples(130))
}

fn encode(samples: &[Sample]) -> Vec<u8> {
    support::encode_recording(samples)
}

fn decode_all(rec: &Recording) -> Vec<Sample> {
    let mut d = Decoder::default();
    (0..rec.len())
        .map(|i| rec.decode(i, &mut d).expect("decode"))
        .collect()
}

fn dump_str(rec: &Recording, format: Format, pane: Option<&str>) -> String {
    let opts = DumpOptions {
        format,
        from: None,
        to: None,
        pane: pane.map(String::from),
        width: 80,
        thresholds: Thresholds::default(),
        threads: 0,
    };
    let mut out = Vec::new();
    dump(rec, &opts, &mut out, &mut |w| panic!("warning {w}")).expect("dump");
    String::from_utf8(out).expect("utf8")
}

/// A recording long enough for several decode chunks, with recorder restarts (gap markers) at
/// and next to chunk boundaries.
fn long_recording() -> Recording {
    let s = samples();
    let h = header_for(&s[0], Duration::from_secs(1), 0);
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    let gap = Gap {
        reason: "start".into(),
        detail: None,
    };
    for i in 0..1100usize {
        if [0, 512, 700, 1023].contains(&i) {
            w.gap(&gap, T0 + i as i64 * 1000 - 1, 0).expect("gap");
        }
        let mut x = s[i % s.len()].clone();
        x.time.wall_ms = T0 + i as i64 * 1000;
        w.sample(&x, i as u64).expect("sample");
    }
    Recording::from_bytes("long", w.into_inner()).expect("open")
}
