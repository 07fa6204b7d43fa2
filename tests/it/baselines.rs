//! One interval, one set of findings: `perftop dump` and replay judge a recording's intervals
//! alike, including `disk.saturated` against a disk's own learned await (the baseline the live
//! strip learns), whichever way replay got to the interval and wherever `--from` starts dump;
//! the live view judges the same samples the same way.

use crate::support;
use crate::support::T0;
use perftop::assess::assess;
use perftop::findings::Thresholds;
use perftop::record::dump::{dump, DumpOptions, Format};
use perftop::record::writer::header_for;
use perftop::record::{Gap, Recording, Writer};
use perftop::sample::{DiskSample, Sample};
use perftop::ui::app::App;
use perftop::ui::keymap::Action;
use perftop::ui::{replay_app, ReplayOptions};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The interval (ending at this sample) where sda's await jumps to 10x its usual.
const JUMP: usize = 9;
const SAMPLES: usize = 12;

/// A rotational disk doing 100 reads/s at 1 ms with almost no queue, except in interval
/// `JUMP`: 10 ms with 5 queued — below the 20 ms a rotational disk needs without a baseline,
/// above three times its usual 1 ms.
fn samples() -> Vec<Sample> {
    let mut d = DiskSample {
        name: "sda".into(),
        major: 8,
        minor: 0,
        fields: 17,
        read_ios: 1_000,
        read_ticks: 5_000,
        time_in_queue: 10_000,
        io_ticks: 8_000,
        whole_disk: true,
        rotational: Some(true),
        ..DiskSample::default()
    };
    (0..SAMPLES)
        .map(|i| {
            if i > 0 {
                let (wait, tiq) = if i == JUMP { (10, 5_000) } else { (1, 100) };
                d.read_ios += 100;
                d.read_ticks += 100 * wait;
                d.time_in_queue += tiq;
                d.io_ticks += 500;
            }
            let mut s = Sample::default();
            s.host.hostname = Some("disky".into());
            s.time.uptime_s = Some(1000.0 + i as f64);
            s.time.wall_ms = T0 + i as i64 * 1000;
            s.disks = vec![d.clone()];
            s
        })
        .collect()
}

fn recording(dir: &Path) -> (PathBuf, Vec<Sample>) {
    let s = samples();
    let h = header_for(&s[0], Duration::from_secs(1), 0);
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    let start = Gap {
        reason: "start".into(),
        detail: None,
    };
    w.gap(&start, T0, 0).expect("gap");
    for x in &s {
        w.sample(x, 0).expect("sample");
    }
    let path = dir.join("disky.ptrec");
    std::fs::write(&path, w.into_inner()).expect("write");
    (path, s)
}

/// `dump --format json [--from FROM]`: each line's time and findings.
fn dumped(path: &Path, from: Option<String>) -> Vec<(String, Value)> {
    let rec = Recording::open(path).expect("open");
    let opts = DumpOptions {
        format: Format::Json,
        from,
        to: None,
        pane: None,
        width: 80,
        thresholds: Thresholds::default(),
        threads: 1,
    };
    let mut out = Vec::new();
    dump(&rec, &opts, &mut out, &mut |w| panic!("warning {w}")).expect("dump");
    String::from_utf8(out)
        .expect("utf8")
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("json line");
            let time = v["time"].as_str().expect("time").to_string();
            (time, v["findings"].clone())
        })
        .collect()
}

fn opts(path: &Path, at: Option<String>) -> ReplayOptions {
    ReplayOptions {
        at,
        ..support::screen::replay_options(path)
    }
}

fn shown(app: &App) -> Value {
    let d = app.time.derived.as_ref().expect("an interval on screen");
    serde_json::to_value(&d.findings).expect("findings as JSON")
}

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("findings array")
        .iter()
        .map(|f| f["id"].as_str().expect("id").to_string())
        .collect()
}

#[test]
fn dump_and_replay_give_an_interval_the_same_findings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, s) = recording(dir.path());
    let lines = dumped(&path, None);
    assert_eq!(lines.len(), SAMPLES - 1, "one line per interval");

    // The baseline path: only a learned baseline makes interval JUMP a finding.
    let alone = assess(Some(&s[JUMP - 1]), &s[JUMP], &Thresholds::default());
    assert!(
        alone.findings.iter().all(|f| f.id != "disk.saturated"),
        "without a baseline 10 ms is normal for a rotational disk: {:?}",
        alone.findings
    );
    let at_jump = &lines[JUMP - 1].1;
    assert!(
        ids(at_jump).contains(&"disk.saturated".to_string()),
        "dump judges against the learned baseline: {at_jump}"
    );
    for (i, (_, f)) in lines.iter().enumerate() {
        if i + 1 != JUMP {
            assert_eq!(ids(f), Vec::<String>::new(), "interval {}", i + 1);
        }
    }

    // Replay stepping forward from the start shows what dump printed, interval by interval.
    let mut app = replay_app(&opts(&path, None)).expect("replay");
    for (i, (_, f)) in lines.iter().enumerate() {
        app.apply(Action::StepForward);
        assert_eq!(app.time.view_index(), Some(i + 1));
        assert_eq!(&shown(&app), f, "interval {} stepping", i + 1);
    }
    // Stepping back and jumping straight there (`--at`) show the same.
    app.apply(Action::Oldest);
    for _ in 0..JUMP {
        app.apply(Action::StepForward);
    }
    assert_eq!(&shown(&app), at_jump, "after going back and forth");
    for back in [JUMP + 2, JUMP + 1] {
        let mut app = replay_app(&opts(&path, None)).expect("replay");
        for _ in 0..back {
            app.apply(Action::StepForward);
        }
        for _ in JUMP..back {
            app.apply(Action::StepBack);
        }
        assert_eq!(&shown(&app), at_jump, "stepping back from {back}");
    }
    let at = format!("@{}", (T0 + JUMP as i64 * 1000) / 1000);
    let app = replay_app(&opts(&path, Some(at.clone()))).expect("replay --at");
    assert_eq!(app.time.view_index(), Some(JUMP));
    assert_eq!(&shown(&app), at_jump, "replay --at");

    // The live view judges each new sample the same way, and stepping back to it as well.
    let mut live = App::new(Duration::from_secs(1), Duration::from_secs(600));
    live.push_sample(s[0].clone());
    for (i, (_, f)) in lines.iter().enumerate() {
        live.push_sample(s[i + 1].clone());
        assert_eq!(&shown(&live), f, "live interval {}", i + 1);
    }
    for _ in JUMP..SAMPLES - 1 {
        live.apply(Action::StepBack);
    }
    assert_eq!(live.time.view_index(), Some(JUMP));
    assert_eq!(&shown(&live), at_jump, "live, stepped back");

    // dump --from the interval itself still judges it against the baseline learned before.
    let from = dumped(&path, Some(at));
    assert_eq!(from.first(), Some(&lines[JUMP - 1]), "dump --from");
}
