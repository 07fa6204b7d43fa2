//! The committed v1 recording stays readable.

use super::*;

/// The committed v1 recording must stay readable by every later perftop. Regenerate only when
/// the format version changes, as a new file: `PERFTOP_WRITE_GOLDEN=1 cargo test --test it record::`.
#[test]
fn golden_v1_recording_replays() {
    let path = support::golden();
    if std::env::var_os("PERFTOP_WRITE_GOLDEN").is_some() {
        let s = make_samples(6);
        let h = header_for(&s[0], Duration::from_secs(1), 0);
        let mut w = Writer::new(Vec::new(), &h).expect("header");
        let start = Gap {
            reason: "start".into(),
            detail: None,
        };
        w.gap(&start, T0, 0).expect("gap");
        for (i, x) in s.iter().enumerate() {
            if i == 3 {
                let a = Action {
                    kind: "applied".into(),
                    name: "governor".into(),
                    from: Some("powersave".into()),
                    to: Some("performance".into()),
                };
                w.action(&a, T0 + 2500, 0).expect("action");
            }
            w.sample(x, 0).expect("sample");
        }
        let bytes = w.into_inner();
        std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
        std::fs::write(&path, bytes).expect("write golden");
    }
    let rec = Recording::open(&path).expect("golden recording");
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert_eq!(rec.len(), 6);
    let h = rec.header().expect("header");
    assert_eq!(h.format_version, 1);
    assert_eq!(h.cpus, 2);
    assert!(rec
        .events
        .iter()
        .any(|e| matches!(&e.kind, EventKind::Action(a) if a.name == "governor")));
    let all = decode_all(&rec);
    assert_eq!(all[5].time.wall_ms, T0 + 5000);
    let json = dump_str(&rec, Format::Json, Some("host"));
    let lines: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 5);
    for l in &lines {
        assert_eq!(l["interval_s"], 1.0);
        let busy = l["host"]["busy_pct"].as_f64().expect("busy");
        assert!(busy > 10.0 && busy < 100.0, "{busy}");
    }
}

/// The committed format-2 recording (written by the writer before format 3, 2026-11-27: a
/// step chain of 8 samples, its first a keyframe) must stay readable, and its samples must
/// survive being written again in the current format. Regenerate only with a format-2 writer:
/// `PERFTOP_WRITE_GOLDEN_V2=1 cargo test --test it record::golden`.
#[test]
fn golden_v2_recording_replays_and_rewrites() {
    let path = support::golden().with_file_name("recording-v2.ptrec");
    if std::env::var_os("PERFTOP_WRITE_GOLDEN_V2").is_some() {
        let s = make_samples(8);
        let mut h = header_for(&s[0], Duration::from_secs(1), 0);
        h.format_version = 2;
        let mut w = Writer::new(Vec::new(), &h).expect("header");
        for x in &s {
            w.sample(x, 0).expect("sample");
        }
        std::fs::write(&path, w.into_inner()).expect("write golden");
    }
    let rec = Recording::open(&path).expect("golden v2 recording");
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert_eq!(rec.len(), 8);
    assert_eq!(rec.header().map(|h| h.format_version), Some(2));
    let all = decode_all(&rec);
    assert_eq!(all[7].time.wall_ms, T0 + 7000);
    let json = dump_str(&rec, Format::Json, Some("host"));
    assert_eq!(json.lines().count(), 7);
    // Written again by this perftop (its own format), read back: the same samples.
    let h = header_for(&all[0], Duration::from_secs(1), 0);
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    for x in &all {
        w.sample(x, 0).expect("sample");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let again = dir.path().join("again.ptrec");
    std::fs::write(&again, w.into_inner()).expect("write");
    let rec2 = Recording::open(&again).expect("rewritten");
    assert_eq!(decode_all(&rec2), all);
}
