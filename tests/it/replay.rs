//! Replay and time travel: `perftop replay` over recordings (the golden file, one with a
//! recorder gap and a tweak action, one of a hand-checked fixture), the moves it shares with the
//! live pause ring (t/T, Home/End, b, j/J), playback and speed, tweaks disabled, `R` recording
//! the live stream with tweak actions, and screen snapshots of the timeline.

use crate::support;

use perftop::record::writer::header_for;
use perftop::record::{Action, EventKind, Gap, Recording, Writer};
use perftop::root::Root;
use perftop::sample::Sample;
use perftop::source::Reader;
use perftop::ui::app::{App, Effect};
use perftop::ui::replay_app;
use perftop::ui::theme::{ColorDepth, GlyphSet, Theme};
use perftop::ui::timeline::Playback;
use ratatui::crossterm::event::KeyCode;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::screen::{draw, key as press, replay_options as opts, text};
use support::{golden, synth_samples, T0};

/// 2025-11-21T14:05:30Z.
/// The screen as monochrome ASCII text.
fn screen(app: &App, w: u16, h: u16) -> String {
    let theme = Theme::load("dark", ColorDepth::Mono, GlyphSet::Ascii).expect("theme");
    text(&draw(app, &theme, w, h))
}

fn typed(app: &mut App, text: &str) {
    press(app, KeyCode::Char('b'));
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
    press(app, KeyCode::Enter);
}

/// 300 samples: ticks 0..150, the recorder stopped for 10 s, then ticks 160..310; a governor
/// change just before the sample at tick 200 (index 190).
fn gappy_recording(dir: &Path) -> (PathBuf, Vec<Sample>) {
    let samples = synth_samples((0..150).chain(160..310));
    let h = header_for(&samples[0], Duration::from_secs(1), 0);
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    let gap = |reason: &str| Gap {
        reason: reason.into(),
        detail: None,
    };
    w.gap(&gap("start"), T0, 0).expect("gap");
    for (i, s) in samples.iter().enumerate() {
        if i == 150 {
            w.gap(&gap("stop"), T0 + 149_500, 0).expect("gap");
            w.gap(&gap("start"), T0 + 159_500, 0).expect("gap");
        }
        if i == 190 {
            let a = Action {
                kind: "applied".into(),
                name: "governor".into(),
                from: Some("powersave".into()),
                to: Some("performance".into()),
            };
            w.action(&a, T0 + 199_500, 0).expect("action");
        }
        w.sample(s, 0).expect("sample");
    }
    let path = dir.join("gappy.ptrec");
    std::fs::write(&path, w.into_inner()).expect("write");
    (path, samples)
}

fn at(app: &App) -> usize {
    app.time.view_index().expect("a sample in view")
}

/// At `-d 0.5` each step shows its own time, to the tenth (whole seconds read the same time
/// for two steps).
#[test]
fn half_second_steps_show_tenths_on_the_timeline() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut samples = synth_samples(0..6);
    for (i, s) in samples.iter_mut().enumerate() {
        s.time.wall_ms = T0 + i as i64 * 500;
    }
    let h = header_for(&samples[0], Duration::from_millis(500), 0);
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    for s in &samples {
        w.sample(s, 0).expect("sample");
    }
    let path = dir.path().join("half.ptrec");
    std::fs::write(&path, w.into_inner()).expect("write");
    let mut app = replay_app(&opts(&path)).expect("replays");
    let rows: Vec<(String, String)> = (0..3)
        .map(|_| {
            let s = screen(&app, 100, 30);
            press(&mut app, KeyCode::Char('t'));
            let row = |n| s.lines().nth(n).unwrap_or_default().to_string();
            (row(2), row(3))
        })
        .collect();
    // T0 is 14:05:30.0; the steps are 0.5 s apart; the ends, under the bar, are the first and
    // last samples.
    for (i, want) in ["at 14:05:30.0 ", "at 14:05:30.5 ", "at 14:05:31.0 "]
        .iter()
        .enumerate()
    {
        let (bar, ruler) = &rows[i];
        assert!(bar.starts_with(want), "step {i}: {bar}");
        assert!(
            ruler.trim_start().starts_with("14:05:30.0 ") && ruler.ends_with(" 14:05:32.5"),
            "{ruler}"
        );
    }
}

#[test]
fn golden_recording_replays_in_the_dashboard() {
    let mut app = replay_app(&opts(&golden())).expect("golden replays");
    assert!(app.is_replay());
    assert_eq!(at(&app), 0);
    let d = app.time.derived.as_ref().expect("derived");
    assert!(d.since_boot, "the first sample has no predecessor");
    assert_eq!(app.time.mode_label(), "REPLAY PAUSED");
    for _ in 0..3 {
        press(&mut app, KeyCode::Char('t'));
    }
    assert_eq!(at(&app), 3);
    let d = app.time.derived.as_ref().expect("derived");
    assert!(!d.since_boot);
    assert_eq!(d.interval_s, Some(1.0));
    // Stepping onto the sample after the action says what was done.
    let status = app.status.text.clone().unwrap_or_default();
    assert!(
        status.contains("applied governor powersave -> performance"),
        "{status}"
    );
    let s = screen(&app, 80, 24);
    let lines: Vec<&str> = s.lines().collect();
    assert!(lines[0].contains("REPLAY PAUSED"), "{s}");
    assert!(lines[1].contains("tweaks off"), "{s}");
    // The timeline: cursor at 14:05:33 of 14:05:30..14:05:35, the action mark before it; the
    // span's ends under the bar's ends.
    assert!(lines[2].starts_with("at 14:05:33 ="), "{s}");
    assert!(lines[3].starts_with("            14:05:30 "), "{s}");
    assert!(lines[3].ends_with(" 14:05:35"), "{s}");
    assert!(
        lines[2].contains("*=="),
        "action mark left of the cursor: {s}"
    );
    assert!(lines[2].contains("|---"), "{s}");
    // ASCII glyphs: the jump step reads `j+-`, and nothing on screen is outside ASCII.
    assert!(lines[2].ends_with("=  4/6 j+-1m00s") || lines[2].ends_with("-  4/6 j+-1m00s"));
    assert!(s.is_ascii(), "{s}");
    insta::assert_snapshot!("replay_golden_80x24", s);
    insta::assert_snapshot!("replay_golden_200x50", screen(&app, 200, 50));
}

/// A recording of the vm-2cpu fixture's two hand-checked samples: replay shows the values
/// tests/it/fixture_roots/vm_2cpu.rs computed by hand (CPU busy 49.0% over a 2.0 s interval).
#[test]
fn replay_shows_the_hand_checked_fixture_values() {
    let base = support::fixture("vm-2cpu");
    let samples: Vec<Sample> = ["t0", "t1"]
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut s = Reader::new(Root::new(base.join(t))).sample();
            s.time.wall_ms = T0 + i as i64 * 2000;
            s
        })
        .collect();
    let mut w = Writer::new(
        Vec::new(),
        &header_for(&samples[0], Duration::from_secs(2), 0),
    )
    .expect("header");
    for s in &samples {
        w.sample(s, 0).expect("sample");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("vm.ptrec");
    std::fs::write(&path, w.into_inner()).expect("write");
    let mut o = opts(&path);
    o.at = Some("14:05:32".into());
    let app = replay_app(&o).expect("replay");
    assert_eq!(at(&app), 1, "--at lands on the second sample");
    let d = app.time.derived.as_ref().expect("derived");
    assert_eq!(d.interval_s, Some(2.0));
    let busy = d.host.busy_pct.expect("busy");
    assert!((busy - 49.0).abs() < 1e-9, "{busy}");
    assert_eq!(
        app.time.interval,
        Duration::from_secs(2),
        "interval from the recording"
    );
    let s = screen(&app, 80, 24);
    assert!(s.contains("busy 49.0%"), "{s}");
    assert!(s.contains(" 2.00s"), "{s}");
}

#[test]
fn steps_jumps_and_gaps() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, samples) = gappy_recording(dir.path());
    let mut app = replay_app(&opts(&path)).expect("replay");
    assert_eq!(app.time.history.len(), 300);

    // End / Home.
    press(&mut app, KeyCode::End);
    assert_eq!(at(&app), 299);
    press(&mut app, KeyCode::Home);
    assert_eq!(at(&app), 0);

    // j: the first sample at or after now + 1m; J back again.
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(at(&app), 60);
    assert!(app
        .status
        .text
        .as_deref()
        .unwrap_or("")
        .contains("14:06:30"));
    press(&mut app, KeyCode::Char('J'));
    assert_eq!(at(&app), 0);

    // A jump across the recorder gap lands at T0+200 s (index 190) and names what it passed.
    typed(&mut app, "+140s");
    assert_eq!(at(&app), 140);
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(at(&app), 190);
    let status = app.status.text.clone().unwrap_or_default();
    assert!(status.contains("gap: recorder stop"), "{status}");
    assert!(status.contains("applied governor"), "{status}");

    // No rates across the gap: the first sample after it is since-boot, the next is not.
    typed(&mut app, "14:08:10"); // T0 + 160 s, the first sample after the gap
    assert_eq!(at(&app), 150);
    assert!(app.time.derived.as_ref().expect("d").since_boot);
    press(&mut app, KeyCode::Char('t'));
    assert_eq!(at(&app), 151);
    let d = app.time.derived.as_ref().expect("d");
    assert!(!d.since_boot);
    assert_eq!(d.interval_s, Some(1.0));
    // The replayed values are what derive gives for the same two samples.
    let direct = perftop::derive::derive(Some(&samples[150]), &samples[151]);
    assert_eq!(d.host.busy_pct, direct.host.busy_pct);
    assert_eq!(
        serde_json::to_value(&d.disks).expect("json"),
        serde_json::to_value(&direct.disks).expect("json")
    );
    press(&mut app, KeyCode::Char('T'));
    press(&mut app, KeyCode::Char('T'));
    assert_eq!(at(&app), 149);
    assert!(!app.time.derived.as_ref().expect("d").since_boot);

    // Times: a bad one and one outside the recording leave the view where it was.
    typed(&mut app, "yesterday");
    assert_eq!(at(&app), 149);
    assert!(app
        .status
        .text
        .as_deref()
        .unwrap_or("")
        .contains("is not a time"));
    typed(&mut app, "13:00");
    assert_eq!(at(&app), 149);
    assert!(app.status.text.as_deref().unwrap_or("").contains("outside"));
    typed(&mut app, "2m ago"); // last is T0+309 s
    assert_eq!(at(&app), 179, "T0+189 s is tick 189, index 179");
    // Esc abandons a half-typed time.
    press(&mut app, KeyCode::Char('b'));
    press(&mut app, KeyCode::Char('1'));
    press(&mut app, KeyCode::Esc);
    assert!(app.prompt.goto.is_none());
    assert_eq!(at(&app), 179);

    // The timeline shows the gap (x) and the action (*), cursor between them.
    press(&mut app, KeyCode::Home);
    let s = screen(&app, 80, 24);
    let bar = s.lines().nth(2).expect("timeline row");
    let cursor = bar.find("|-").expect("cursor");
    let gap = bar.find('x').expect("gap mark");
    let action = bar.find('*').expect("action mark");
    assert!(cursor < gap && gap < action, "{bar}");
}

#[test]
fn playback_speed_and_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, _) = gappy_recording(dir.path());
    let mut app = replay_app(&opts(&path)).expect("replay");
    assert_eq!(
        app.time.next_tick(),
        None,
        "nothing to wait for while stopped"
    );
    press(&mut app, KeyCode::Char(' '));
    assert!(app.time.playing.is_some());
    assert_eq!(app.time.mode_label(), "REPLAY 1x");
    assert_eq!(app.time.next_tick(), Some(Duration::from_secs(1)));
    // Pretend 5 s passed at 1x: five samples on.
    app.time.playing = Some(Playback {
        anchor: Instant::now() - Duration::from_secs(5),
        anchor_wall_ms: T0,
    });
    assert_eq!(app.on_tick(), Effect::Redraw);
    assert_eq!(at(&app), 5);
    // ] twice: 4x. A second at 4x is four samples.
    press(&mut app, KeyCode::Char(']'));
    press(&mut app, KeyCode::Char(']'));
    assert_eq!(app.time.speed, 4.0);
    assert_eq!(app.time.next_tick(), Some(Duration::from_millis(250)));
    let anchor = app.time.playing.expect("still playing").anchor_wall_ms;
    assert_eq!(
        anchor,
        T0 + 5000,
        "speed change re-anchors at the sample in view"
    );
    app.time.playing = Some(Playback {
        anchor: Instant::now() - Duration::from_secs(1),
        anchor_wall_ms: anchor,
    });
    app.on_tick();
    assert_eq!(at(&app), 9);
    press(&mut app, KeyCode::Char('['));
    assert_eq!(app.time.speed, 2.0);
    // Stepping stops playback; space at the end says so instead of playing.
    press(&mut app, KeyCode::Char('t'));
    assert!(app.time.playing.is_none());
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Char(' '));
    assert!(app.time.playing.is_none());
    assert!(app
        .status
        .text
        .as_deref()
        .unwrap_or("")
        .contains("end of the recording"));
    // Playing into the end stops there.
    press(&mut app, KeyCode::Char('T'));
    press(&mut app, KeyCode::Char(' '));
    app.time.playing = Some(Playback {
        anchor: Instant::now() - Duration::from_secs(100),
        anchor_wall_ms: T0,
    });
    app.on_tick();
    assert_eq!(at(&app), 299);
    assert!(app.time.playing.is_none());
    assert_eq!(app.status.text.as_deref(), Some("end of recording"));
    // Sparklines: the samples derived so far, back-filled after the jump to the end.
    assert!(
        app.time.trends.len() > 10,
        "{} trend points",
        app.time.trends.len()
    );
}

#[test]
fn tweaks_recording_and_interval_are_off_in_replay() {
    let mut app = replay_app(&opts(&golden())).expect("replay");
    for c in ['g', 'a', 'u', 'R', '+', '-'] {
        // Nothing happens but a redraw for the status line that says why (replay_keys).
        assert_eq!(press(&mut app, KeyCode::Char(c)), Effect::Redraw, "{c}");
    }
    assert!(app.tweaks.dialog.is_none());
    assert!(!app.session.recording.is_on());
    assert!(app.tweaks.ctx.is_none());
    let help: Vec<String> = perftop::ui::keymap::help_rows(true)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert!(help.contains(&"[ ]".to_string()), "{help:?}");
}

#[test]
fn bad_recordings_are_clear_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("nope.ptrec");
    let e = replay_app(&opts(&missing)).err().expect("missing file");
    assert!(format!("{e:#}").contains("nope.ptrec"), "{e:#}");
    let foreign = dir.path().join("foreign");
    std::fs::write(&foreign, "hello").expect("write");
    let e = replay_app(&opts(&foreign)).err().expect("foreign file");
    assert!(
        format!("{e:#}").contains("not a perftop recording"),
        "{e:#}"
    );
    // Header only (a recorder that died before its first sample): nothing to show.
    let s = synth_samples(0..1);
    let mut w =
        Writer::new(Vec::new(), &header_for(&s[0], Duration::from_secs(1), 0)).expect("header");
    w.gap(
        &Gap {
            reason: "start".into(),
            detail: None,
        },
        T0,
        0,
    )
    .expect("gap");
    let headonly = dir.path().join("head.ptrec");
    std::fs::write(&headonly, w.into_inner()).expect("write");
    let e = replay_app(&opts(&headonly)).err().expect("no samples");
    assert!(format!("{e:#}").contains("no complete sample"), "{e:#}");
    // --at outside the recording.
    let mut o = opts(&golden());
    o.at = Some("09:00".into());
    let e = replay_app(&o).err().expect("outside");
    assert!(format!("{e:#}").contains("outside the recording"), "{e:#}");
    // A damaged middle: replay opens and says what it skipped.
    let (gappy, _) = gappy_recording(dir.path());
    let mut damaged = std::fs::read(gappy).expect("read");
    let mid = damaged.len() / 2;
    for b in &mut damaged[mid..mid + 8] {
        *b ^= 0x5a;
    }
    let path = dir.path().join("damaged.ptrec");
    std::fs::write(&path, damaged).expect("write");
    let app = replay_app(&opts(&path)).expect("damaged replays");
    let n = app.time.history.len();
    assert!((240..300).contains(&n), "{n} samples survive");
    assert!(
        app.status.text.as_deref().unwrap_or("").contains("skipped"),
        "{:?}",
        app.status.text
    );
}

/// The live ring answers to the same moves: J jumps back a minute, b to a time, End to live.
#[test]
fn live_pause_ring_uses_the_same_navigation() {
    let mut app = App::new(Duration::from_secs(1), Duration::from_secs(600));
    for s in synth_samples(0..100) {
        app.push_sample(s);
    }
    assert_eq!(app.time.mode_label(), "LIVE");
    press(&mut app, KeyCode::Char('J'));
    assert_eq!(at(&app), 39);
    assert!(app.time.paused);
    assert_eq!(app.time.mode_label(), "HISTORY -1m00s");
    let s = screen(&app, 80, 24);
    assert!(
        s.lines().nth(2).is_some_and(|l| l.contains("40/100")),
        "timeline row while in history:\n{s}"
    );
    typed(&mut app, "14:05:40");
    assert_eq!(at(&app), 10);
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(at(&app), 70);
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(
        app.time.view, None,
        "jumping past the newest sample lands on it"
    );
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(
        app.status.text.as_deref(),
        Some("already at the newest sample")
    );
    press(&mut app, KeyCode::End);
    assert!(!app.time.paused);
    assert_eq!(app.time.mode_label(), "LIVE");
    assert!(
        !screen(&app, 80, 24).contains("100/100"),
        "no timeline when live"
    );
    // Speed keys belong to replay.
    assert_eq!(press(&mut app, KeyCode::Char(']')), Effect::None);
}

/// `R` records what the dashboard samples, tweak actions included; `R` again stops with a
/// `stop` marker. The file replays.
#[test]
fn r_records_the_live_stream_and_tweak_actions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = App::new(Duration::from_secs(1), Duration::from_secs(600));
    app.session.record_dir = dir.path().to_path_buf();
    let samples = synth_samples(0..6);
    app.push_sample(samples[0].clone());
    assert_eq!(press(&mut app, KeyCode::Char('R')), Effect::Redraw);
    let status = app.status.text.clone().unwrap_or_default();
    assert!(status.starts_with("recording to "), "{status}");
    let path = app
        .session
        .recording
        .active()
        .expect("recording")
        .path
        .clone();
    assert!(path.starts_with(dir.path()));
    assert!(path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("perftop-synth") && n.ends_with("T140530.ptrec")));
    let s = screen(&app, 80, 24);
    assert!(s.lines().next().is_some_and(|l| l.contains(" REC ")), "{s}");
    for s in &samples[1..4] {
        app.push_sample(s.clone());
    }
    app.note_action(&Action {
        kind: "applied".into(),
        name: "governor".into(),
        from: Some("powersave".into()),
        to: Some("performance".into()),
    });
    for s in &samples[4..] {
        app.push_sample(s.clone());
    }
    press(&mut app, KeyCode::Char('R'));
    assert!(!app.session.recording.is_on());
    let status = app.status.text.clone().unwrap_or_default();
    assert!(
        status.contains("recording stopped") && status.contains("6 samples"),
        "{status}"
    );
    let rec = Recording::open(&path).expect("the recording");
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert_eq!(rec.len(), 6);
    let reasons: Vec<String> = rec
        .events
        .iter()
        .map(|e| match &e.kind {
            EventKind::Gap(g) => format!("gap {} @{}", g.reason, e.before),
            EventKind::Action(a) => format!("{} {} @{}", a.kind, a.name, e.before),
            EventKind::Kernel(k) => format!("{} @{}", k.summary(), e.before),
        })
        .collect();
    assert_eq!(
        reasons,
        ["gap start @0", "applied governor @4", "gap stop @6"]
    );
    let mut replay = replay_app(&opts(&path)).expect("replays");
    press(&mut replay, KeyCode::End);
    let d = replay.time.derived.as_ref().expect("derived");
    let direct = perftop::derive::derive(Some(&samples[4]), &samples[5]);
    assert_eq!(d.host.busy_pct, direct.host.busy_pct);
}

/// A sample that cannot be shown (it does not decode) says so instead of waiting forever on
/// "reading the first sample...".
#[test]
fn an_undecodable_sample_is_said_not_awaited() {
    let mut app = replay_app(&opts(&golden())).expect("replay");
    app.time.derived = None;
    app.status.text = Some("cannot show sample 0: checksum mismatch".into());
    let s = screen(&app, 80, 24);
    assert!(
        s.contains("perftop: cannot show sample 0: checksum mismatch"),
        "{s}"
    );
    assert!(!s.contains("reading the first sample"), "{s}");
}

/// A recording made before perftop read PSI (the golden v1 file) replays with the Pressure
/// pane: the reclaim rates come from the vmstat counters it always held (the synthetic host
/// scans 5,000 pages/s by kswapd, steals 4,500/s, faults 10/s major), PSI is unknown with the
/// reason, never 0%.
#[test]
fn golden_recording_gains_the_pressure_pane() {
    let mut app = replay_app(&opts(&golden())).expect("golden replays");
    for _ in 0..3 {
        press(&mut app, KeyCode::Char('t'));
    }
    let d = app.time.derived.as_ref().expect("derived");
    let r = &d.memory.reclaim;
    assert_eq!(r.pgscan_kswapd_per_s, Some(5000.0));
    assert_eq!(r.pgsteal_kswapd_per_s, Some(4500.0));
    assert_eq!(r.major_faults_per_s, Some(10.0));
    assert_eq!(r.oom_kills, Some(0));
    assert!(d.pressure.cpu.is_none() && d.pressure.memory.is_none());
    assert_eq!(
        d.pressure.unknown.as_deref(),
        Some(perftop::derive::pressure::PSI_NOT_RECORDED)
    );
    press(&mut app, KeyCode::Char('7'));
    press(&mut app, KeyCode::Enter);
    let s = screen(&app, 80, 24);
    assert!(s.contains("7 Pressure      PSI -"), "{s}");
    assert!(s.contains("not in this recording"), "{s}");
    assert!(s.contains("kswapd scan 5.0k/s steal 4.5k/s"), "{s}");
    assert!(s.contains("OOM kills 0 since start"), "{s}");
    assert!(s.contains("watermarks: - (/proc/zoneinfo not read)"), "{s}");
}

/// OOM kills found in a recording when it opens: the Pressure pane counts them up to the
/// sample on screen with the time of the last, and the timeline marks each with `!`. The kills
/// sit past the first keyframe (sample 60), where the scan decodes sample by sample.
#[test]
fn oom_kills_in_a_recording_are_counted_and_marked() {
    let mut samples = synth_samples(0..100);
    for (i, s) in samples.iter_mut().enumerate() {
        // One kill between samples 69 and 70, two more between 84 and 85.
        let kills = match i {
            0..=69 => 0,
            70..=84 => 1,
            _ => 3,
        };
        s.memory.vmstat.oom_kill = Some(kills);
    }
    let h = header_for(&samples[0], Duration::from_secs(1), 0);
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    for s in &samples {
        w.sample(s, 0).expect("sample");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("oom.ptrec");
    std::fs::write(&path, w.into_inner()).expect("write");
    let mut app = replay_app(&opts(&path)).expect("replays");
    assert_eq!(
        app.time.oom.events,
        vec![(T0 + 70_000, 1), (T0 + 85_000, 2)],
        "the intervals ending at samples 70 and 85"
    );
    typed(&mut app, "14:06:50");
    assert_eq!(at(&app), 80);
    // A jump across a `!` says what it passed; stepping onto one names it.
    let status = app.status.text.clone().unwrap_or_default();
    assert!(status.contains("OOM killer: 1 killed"), "{status}");
    for _ in 0..5 {
        press(&mut app, KeyCode::Char('t'));
    }
    assert_eq!(at(&app), 85);
    let status = app.status.text.clone().unwrap_or_default();
    assert!(status.contains("OOM killer: 2 killed"), "{status}");
    typed(&mut app, "14:06:50");
    let s = screen(&app, 100, 40);
    assert!(
        s.contains("OOM kills 1 since start, last 14:06:40 UTC"),
        "{s}"
    );
    let timeline = s.lines().nth(2).unwrap_or_default();
    assert_eq!(timeline.matches('!').count(), 2, "{timeline}");
    typed(&mut app, "14:07:05");
    let s = screen(&app, 100, 40);
    assert!(s.contains("OOM 3"), "{s}");
    assert!(
        s.contains("OOM kills 3 since start, last 14:06:55 UTC"),
        "{s}"
    );
}
