//! Pins of the text outputs: `batch` reports (80 and 200 columns) and `dump` in every format
//! over the fixture roots, held as firmly as the TUI snapshots hold the screen. A change to any
//! of them shows up here as a snapshot diff to accept on purpose.

// A fixed wall clock (T0), so the outputs do not carry the time the test ran.
use crate::support::{read, T0};
use perftop::assess::assess;
use perftop::findings::Thresholds;
use perftop::record::dump::{dump, DumpOptions, Format};
use perftop::record::writer::header_for;
use perftop::record::{Gap, Recording, Writer};
use perftop::sample::Sample;
use std::time::Duration;

/// Every fixture root with two captures one interval apart: the hand-made ones and a real host.
fn fixtures() -> impl Iterator<Item = &'static str> {
    crate::support::FIXTURES
        .into_iter()
        .chain(["real/h100vm-16cpu-load"])
}

/// t0 and t1 of a fixture, stamped T0 and T0 + the fixture's own uptime difference.
fn pair(name: &str) -> (Sample, Sample) {
    let (mut a, mut b) = (read(name, "t0"), read(name, "t1"));
    let secs = b.time.uptime_s.unwrap_or(0.0) - a.time.uptime_s.unwrap_or(0.0);
    a.time.wall_ms = T0;
    b.time.wall_ms = T0 + (secs * 1000.0).round() as i64;
    (a, b)
}

fn snap_name(name: &str) -> String {
    name.replace('/', "_")
}

#[test]
fn batch_reports_at_80_and_200_columns() {
    for name in fixtures() {
        let (a, b) = pair(name);
        let d = assess(Some(&a), &b, &Thresholds::default());
        for width in [80, 200] {
            let text = perftop::text::report(&d, 2, width);
            insta::assert_snapshot!(format!("batch_{}_{width}", snap_name(name)), text);
        }
    }
}

fn recording(a: &Sample, b: &Sample) -> Recording {
    let h = header_for(a, Duration::from_secs(1), 0);
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    let start = Gap {
        reason: "start".into(),
        detail: None,
    };
    w.gap(&start, a.time.wall_ms, 0).expect("gap");
    let mono = |s: &Sample| (s.time.uptime_s.unwrap_or(0.0) * 1e9) as u64;
    w.sample(a, mono(a)).expect("sample");
    w.sample(b, mono(b)).expect("sample");
    Recording::from_bytes("fixture.ptrec", w.into_inner()).expect("reads back")
}

#[test]
fn dump_in_every_format() {
    for name in fixtures() {
        let (a, b) = pair(name);
        let rec = recording(&a, &b);
        for (format, label) in [
            (Format::Text, "text"),
            (Format::Csv, "csv"),
            (Format::Json, "json"),
            (Format::OpenMetrics, "openmetrics"),
        ] {
            let opts = DumpOptions {
                format,
                from: None,
                to: None,
                pane: None,
                width: 80,
                thresholds: Thresholds::default(),
                threads: 1,
            };
            let mut out = Vec::new();
            let mut warnings = Vec::new();
            dump(&rec, &opts, &mut out, &mut |w| warnings.push(w)).expect("dump");
            assert_eq!(warnings, Vec::<String>::new(), "{name} {label}");
            let text = String::from_utf8(out).expect("UTF-8 output");
            insta::assert_snapshot!(format!("dump_{}_{label}", snap_name(name)), text);
        }
    }
}
