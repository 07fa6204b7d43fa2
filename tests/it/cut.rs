//! `perftop cut`: a window of a recording as a standalone recording. The cut must dump the same
//! intervals as the window of the original (a live recording across two segments with the
//! recorder's stop/start gap inside), keep markers at their times and samples unchanged, and
//! refuse to overwrite or to write an empty window.

use crate::support;

use perftop::record::cut::cut;
use perftop::record::writer::header_for;
use perftop::record::{Action, Decoder, EventKind, Gap, Recording, Writer};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;
use support::T0;

fn perftop(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(args)
        .output()
        .expect("run perftop")
}

fn ok(args: &[&str]) -> String {
    let o = perftop(args);
    assert!(
        o.status.success(),
        "perftop {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(args: &[&str]) -> String {
    let o = perftop(args);
    assert!(!o.status.success(), "perftop {args:?} succeeded");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `@UNIX.mmm`, a form `--from`/`--to` take.
fn at(ms: i64) -> String {
    format!("@{}.{:03}", ms / 1000, ms % 1000)
}

/// One `dump --format json` row, without the findings that learn from history: `disk.saturated`
/// and `irq.storm` compare with baselines learned since the run's start, which the cut moves.
fn row(line: &str) -> Value {
    let mut v: Value = serde_json::from_str(line).expect("JSON line");
    if let Some(f) = v.get_mut("findings").and_then(Value::as_array_mut) {
        f.retain(|x| !matches!(x["id"].as_str(), Some("disk.saturated" | "irq.storm")));
    }
    v
}

#[test]
fn cut_of_a_live_recording_dumps_the_same_intervals_as_its_window() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = dir.path().join("r.ptrec");
    let rec_s = rec.to_string_lossy().into_owned();
    // Two runs of the recorder: two segments with a stop and a start marker between them.
    for _ in 0..2 {
        ok(&["record", "-o", &rec_s, "-d", "0.25", "-n", "16"]);
    }
    let orig = Recording::open(&rec).expect("open");
    assert_eq!((orig.segments.len(), orig.len()), (2, 32));
    let w = |i: usize| orig.samples[i].wall_ms;
    // From between samples 4 and 5 of the first segment to between 9 and 10 of the second
    // (samples 25 and 26): samples 5..=25 are in the window.
    let (from, to) = ((w(4) + w(5)) / 2, (w(25) + w(26)) / 2);
    let (from_s, to_s) = (at(from), at(to));
    let out = dir.path().join("cut.ptrec");
    let out_s = out.to_string_lossy().into_owned();
    ok(&[
        "cut", &rec_s, "--from", &from_s, "--to", &to_s, "-o", &out_s,
    ]);
    assert!(!dir.path().join("cut.ptrec.1").exists(), "one file");

    let c = Recording::open(&out).expect("open cut");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    // The window's 21 samples and sample 4, which opens the first interval.
    assert_eq!(c.len(), 22);
    let walls: Vec<(i64, u64)> = c.samples.iter().map(|s| (s.wall_ms, s.mono_ns)).collect();
    let want: Vec<(i64, u64)> = orig.samples[4..=25]
        .iter()
        .map(|s| (s.wall_ms, s.mono_ns))
        .collect();
    assert_eq!(walls, want);
    assert_eq!(c.segments.len(), 1);
    assert!(c.samples[0].is_key, "the cut starts on a keyframe");
    // The recorder's stop and start between the segments, at their times, before the first
    // sample of the second run (index 12 in the cut: sample 16 of the original).
    let between: Vec<(i64, usize, &str)> = orig
        .events
        .iter()
        .filter(|e| e.before == 16)
        .map(|e| match &e.kind {
            EventKind::Gap(g) => (e.wall_ms, 12, g.reason.as_str()),
            EventKind::Action(a) => (e.wall_ms, 12, a.kind.as_str()),
            EventKind::Kernel(_) => (e.wall_ms, 12, "kernel"),
        })
        .collect();
    assert_eq!(
        between.iter().map(|b| b.2).collect::<Vec<_>>(),
        ["stop", "start"]
    );
    let kept: Vec<(i64, usize, &str)> = c
        .events
        .iter()
        .filter(|e| e.before > 0)
        .map(|e| match &e.kind {
            EventKind::Gap(g) => (e.wall_ms, e.before, g.reason.as_str()),
            EventKind::Action(a) => (e.wall_ms, e.before, a.kind.as_str()),
            EventKind::Kernel(_) => (e.wall_ms, e.before, "kernel"),
        })
        .collect();
    assert_eq!(kept, between);
    // Header facts of the original.
    let (h, hc) = (orig.header().expect("header"), c.header().expect("header"));
    assert_eq!(
        (
            &hc.hostname,
            &hc.kernel,
            hc.cpus,
            hc.nodes,
            &hc.disks,
            &hc.nics,
            hc.interval_ms
        ),
        (
            &h.hostname,
            &h.kernel,
            h.cpus,
            h.nodes,
            &h.disks,
            &h.nics,
            h.interval_ms
        )
    );
    assert_eq!(hc.interval_ms, 250);

    let window = ok(&[
        "dump", "--format", "json", &rec_s, "--from", &from_s, "--to", &to_s,
    ]);
    let cutd = ok(&["dump", "--format", "json", &out_s]);
    let (a, b): (Vec<&str>, Vec<&str>) = (window.lines().collect(), cutd.lines().collect());
    // 21 samples in the window; the first after the restart has no interval (since boot).
    assert_eq!(a.len(), 20, "window intervals");
    assert_eq!(b.len(), a.len(), "cut intervals");
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(row(x), row(y), "interval {i} differs");
    }
    // The same holds for the text report of the first interval (what replay shows).
    let t1 = ok(&["dump", &rec_s, "--from", &from_s, "--to", &at(w(5))]);
    let t2 = ok(&["dump", &out_s, "--to", &at(w(5))]);
    assert_eq!(t1, t2);
}

/// 20 synthetic samples one second apart, an action at 2.5 s and one at 9.5 s.
fn synthetic(path: &Path) -> Recording {
    let samples = support::synth_samples(0..20);
    let h = header_for(&samples[0], Duration::from_secs(1), 0);
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    let start = Gap {
        reason: "start".into(),
        detail: None,
    };
    w.gap(&start, T0, 1).expect("gap");
    let action = |name: &str| Action {
        kind: "applied".into(),
        name: name.into(),
        from: Some("60".into()),
        to: Some("10".into()),
    };
    for (i, s) in samples.iter().enumerate() {
        let t = T0 + i as i64 * 1000;
        if i == 3 {
            w.action(&action("vm.early"), t - 500, 0).expect("action");
        }
        if i == 10 {
            w.action(&action("vm.dirty_ratio"), t - 500, 0)
                .expect("action");
        }
        w.sample(s, 1_000_000_000 * i as u64).expect("sample");
    }
    std::fs::write(path, w.into_inner()).expect("write");
    Recording::open(path).expect("open")
}

#[test]
fn cut_keeps_samples_exact_and_actions_at_their_times() {
    let dir = tempfile::tempdir().expect("tempdir");
    let orig = synthetic(&dir.path().join("s.ptrec"));
    let (from, to) = (T0 + 5000, T0 + 14_000);
    let (_, bytes) = cut(&orig, from, to, Vec::new(), &mut |w| panic!("{w}")).expect("cut");
    let c = Recording::from_bytes("cut", bytes).expect("read cut");
    assert_eq!(c.len(), 11, "samples 4 (the opener) ..= 14");
    let (mut d1, mut d2) = (Decoder::default(), Decoder::default());
    for (k, i) in (4..=14).enumerate() {
        let a = serde_json::to_value(orig.decode(i, &mut d1).expect("decode")).expect("json");
        let b = serde_json::to_value(c.decode(k, &mut d2).expect("decode")).expect("json");
        assert_eq!(a, b, "sample {i}");
    }
    // The action at 9.5 s is inside, before sample 10 (index 6 of the cut); the one at 2.5 s
    // is not. The cut's own start marker comes first and names the original.
    let names: Vec<(i64, usize, String)> = c
        .events
        .iter()
        .map(|e| match &e.kind {
            EventKind::Action(a) => (e.wall_ms, e.before, a.name.clone()),
            EventKind::Gap(g) => (e.wall_ms, e.before, g.reason.clone()),
            EventKind::Kernel(k) => (e.wall_ms, e.before, k.summary()),
        })
        .collect();
    assert_eq!(
        names,
        [
            (T0 + 4000, 0, "start".to_string()),
            (T0 + 9500, 6, "vm.dirty_ratio".to_string())
        ]
    );
    match &c.events[0].kind {
        EventKind::Gap(g) => assert!(g.detail.as_deref().is_some_and(|d| d.contains("s.ptrec"))),
        other => panic!("{other:?}"),
    }

    // A window that opens right after the action keeps it: its time is in the window.
    let (_, bytes) = cut(&orig, T0 + 9400, T0 + 12_000, Vec::new(), &mut |w| {
        panic!("{w}")
    })
    .expect("cut");
    let c = Recording::from_bytes("cut", bytes).expect("read cut");
    assert_eq!(c.len(), 4, "samples 9 (the opener) ..= 12");
    assert!(c
        .events
        .iter()
        .any(|e| matches!(&e.kind, EventKind::Action(a) if a.name == "vm.dirty_ratio")));
    // So does one opening after it but before sample 10: the action lies inside the interval
    // 9 -> 10, the cut's first.
    let (_, bytes) = cut(&orig, T0 + 9600, T0 + 12_000, Vec::new(), &mut |w| {
        panic!("{w}")
    })
    .expect("cut");
    let c = Recording::from_bytes("cut", bytes).expect("read cut");
    assert!(c
        .events
        .iter()
        .any(|e| matches!(&e.kind, EventKind::Action(a) if a.name == "vm.dirty_ratio")));
    // One opening after sample 10 does not: the action is before its opener.
    let (_, bytes) = cut(&orig, T0 + 10_500, T0 + 12_000, Vec::new(), &mut |w| {
        panic!("{w}")
    })
    .expect("cut");
    let c = Recording::from_bytes("cut", bytes).expect("read cut");
    assert!(c.events.iter().all(|e| matches!(e.kind, EventKind::Gap(_))));
}

#[test]
fn cut_refuses_overwrite_empty_windows_and_its_own_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("s.ptrec");
    synthetic(&src);
    let src_s = src.to_string_lossy().into_owned();
    let out = dir.path().join("out.ptrec");
    let out_s = out.to_string_lossy().into_owned();
    let (from, to) = (at(T0 + 5000), at(T0 + 7000));

    std::fs::write(&out, b"keep me").expect("write");
    let e = err(&["cut", &src_s, "--from", &from, "--to", &to, "-o", &out_s]);
    assert!(e.contains("already exists; pass --force"), "{e}");
    assert_eq!(std::fs::read(&out).expect("read"), b"keep me");
    // --force replaces it, and a stale OUT.1 that would read as its next segment goes.
    std::fs::write(dir.path().join("out.ptrec.1"), b"stale").expect("write");
    ok(&[
        "cut", &src_s, "--from", &from, "--to", &to, "-o", &out_s, "--force",
    ]);
    assert!(!dir.path().join("out.ptrec.1").exists());
    assert_eq!(Recording::open(&out).expect("open").len(), 4);
    // No temporary file left beside it.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");

    let fresh = dir
        .path()
        .join("fresh.ptrec")
        .to_string_lossy()
        .into_owned();
    // Between two samples: nothing to cut.
    let e = err(&[
        "cut",
        &src_s,
        "--from",
        &at(T0 + 5200),
        "--to",
        &at(T0 + 5800),
        "-o",
        &fresh,
    ]);
    assert!(e.contains("holds no sample"), "{e}");
    let e = err(&["cut", &src_s, "--from", "+1h", "-o", &fresh]);
    assert!(
        e.contains("the recording spans 2025-11-21T14:05:30.000Z .. 2025-11-21T14:05:49.000Z"),
        "{e}"
    );
    let e = err(&[
        "cut", &src_s, "--from", "13:00", "--to", "13:30", "-o", &fresh,
    ]);
    assert!(e.contains("holds no sample"), "{e}");
    let e = err(&["cut", &src_s, "--from", &to, "--to", &from, "-o", &fresh]);
    assert!(e.contains("is after --to"), "{e}");
    assert!(!Path::new(&fresh).exists());
    // Its own input, even with --force.
    let e = err(&["cut", &src_s, "-o", &src_s, "--force"]);
    assert!(e.contains("part of the recording being cut"), "{e}");
    assert_eq!(Recording::open(&src).expect("open").len(), 20);
}

/// A clock time means that time on the recording's day, and a window with no sample is an
/// error naming the recording's span, for `dump` as for `cut` (dump printed nothing and exited
/// 0; cut moved 13:00 to the next day).
#[test]
fn dump_and_cut_refuse_a_window_before_the_recording_on_its_day() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("s.ptrec");
    synthetic(&src);
    let src_s = src.to_string_lossy().into_owned();
    let fresh = dir.path().join("f.ptrec").to_string_lossy().into_owned();
    let span = "spans 2025-11-21T14:05:30.000Z .. 2025-11-21T14:05:49.000Z";
    for format in ["text", "json", "csv"] {
        let e = err(&[
            "dump", "--format", format, &src_s, "--from", "13:00", "--to", "13:01",
        ]);
        assert!(
            e.contains(
                "the window 2025-11-21T13:00:00.000Z .. 2025-11-21T13:01:00.000Z holds no sample"
            ),
            "{e}"
        );
        assert!(e.contains(span), "{e}");
    }
    let e = err(&["dump", &src_s, "--to", "14:00"]);
    assert!(e.contains(span), "{e}");
    let e = err(&[
        "cut", &src_s, "--from", "13:00", "--to", "13:30", "-o", &fresh,
    ]);
    assert!(e.contains("2025-11-21T13:00:00.000Z"), "{e}");
    assert!(e.contains(span), "{e}");
    assert!(!e.contains(".cut-"), "{e}");
    // A window with samples still dumps.
    let t = ok(&["dump", &src_s, "--from", "14:05:40", "--to", "14:05:45"]);
    assert!(!t.is_empty());
}
