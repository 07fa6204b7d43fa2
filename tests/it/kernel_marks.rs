//! Kernel log events in a recording (issue 39): each sample whose `/dev/kmsg` read had a hung
//! task, an I/O error, a soft lockup or a link change gets a marker record before it, so a
//! replay marks it on the timeline (`k`) and names it on landing without decoding every sample;
//! `cut` keeps each marker once and `explain` lists it.

use crate::support;

use perftop::record::{EventKind, KernelMark, Recording};
use perftop::sample::{KernelEvent, KernelEvents, Sample};
use perftop::ui::replay_app;
use perftop::ui::theme::{ColorDepth, GlyphSet, Theme};
use ratatui::crossterm::event::KeyCode;
use std::path::{Path, PathBuf};
use support::screen::{draw, key as press, replay_options as opts, text};
use support::{synth_samples, T0};

fn event(kind: &str, comm: Option<&str>, pid: Option<u32>, device: Option<&str>) -> KernelEvent {
    KernelEvent {
        kind: kind.into(),
        time: 1234.5,
        message: format!("{kind} record"),
        pid,
        comm: comm.map(str::to_string),
        device: device.map(str::to_string),
    }
}

/// 100 samples a second apart: sample 70 read a hung `dd` (and an OOM kill, which the
/// `oom_kill` counter marks, not this), sample 85 two I/O errors on vda, sample 90 an OOM kill
/// only.
fn recording(dir: &Path) -> (PathBuf, Vec<Sample>) {
    let mut samples = synth_samples(0..100);
    for (i, s) in samples.iter_mut().enumerate() {
        let events = match i {
            70 => vec![
                event("hung_task", Some("dd"), Some(4242), None),
                event("oom_kill", Some("stress-ng-vm"), Some(77), None),
            ],
            85 => vec![
                event("io_error", None, None, Some("vda")),
                event("io_error", None, None, Some("vda")),
            ],
            90 => vec![event("oom_kill", Some("stress-ng-vm"), Some(78), None)],
            _ => Vec::new(),
        };
        s.kernel = Some(KernelEvents {
            events,
            ..KernelEvents::default()
        });
    }
    let path = dir.join("kernel.ptrec");
    std::fs::write(&path, support::encode_recording(&samples)).expect("write");
    (path, samples)
}

fn marks(rec: &Recording) -> Vec<(usize, String)> {
    rec.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Kernel(k) => Some((e.before, k.summary())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_recording_marks_kernel_events_before_their_sample() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, samples) = recording(dir.path());
    let rec = Recording::open(&path).expect("open");
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert_eq!(
        marks(&rec),
        [
            (70, "kernel log: 1 hung task (dd 4242)".to_string()),
            (85, "kernel log: 2 I/O errors (vda)".to_string()),
        ]
    );
    assert_eq!(KernelMark::of(&samples[90]), None, "an OOM kill alone");
    // The sample still holds every event, the OOM kill included.
    let mut dec = perftop::record::Decoder::default();
    let s70 = rec.decode(70, &mut dec).expect("decode");
    assert_eq!(s70.kernel.map(|k| k.events.len()), Some(2));

    // A cut over samples 60..=95 keeps both markers once, before the same samples.
    let (from, to) = (samples[60].time.wall_ms, samples[95].time.wall_ms);
    let (_, out) =
        perftop::record::cut::cut(&rec, from, to, Vec::new(), &mut |w| panic!("{w}")).expect("cut");
    let cut_path = dir.path().join("cut.ptrec");
    std::fs::write(&cut_path, out).expect("write");
    let c = Recording::open(&cut_path).expect("open cut");
    let wall = |r: &Recording, (i, s): &(usize, String)| (r.samples[*i].wall_ms, s.clone());
    assert_eq!(
        marks(&c).iter().map(|m| wall(&c, m)).collect::<Vec<_>>(),
        marks(&rec)
            .iter()
            .map(|m| wall(&rec, m))
            .collect::<Vec<_>>()
    );
}

#[test]
fn replay_marks_kernel_events_and_names_them_on_landing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, _) = recording(dir.path());
    let mut app = replay_app(&opts(&path)).expect("replays");
    let theme = Theme::load("dark", ColorDepth::Mono, GlyphSet::Ascii).expect("theme");
    let s = text(&draw(&app, &theme, 100, 40));
    let timeline = s
        .lines()
        .find(|l| l.contains('|'))
        .expect("the timeline line");
    // The bar between the first and the last time: `k` twice, the rest played or ahead.
    let bar: String = timeline
        .chars()
        .filter(|c| matches!(c, '=' | '-' | '|' | 'k'))
        .collect();
    assert_eq!(bar.matches('k').count(), 2, "{timeline}");
    // Step from sample 65 onto 70: the footer names what the kernel said.
    press(&mut app, KeyCode::Char('b'));
    for c in "14:06:35".chars() {
        press(&mut app, KeyCode::Char(c));
    }
    press(&mut app, KeyCode::Enter);
    let at = |app: &perftop::ui::app::App| app.time.view_index().expect("in view");
    assert_eq!(at(&app), 65);
    for _ in 0..5 {
        press(&mut app, KeyCode::Char('t'));
    }
    assert_eq!(at(&app), 70);
    let status = app.status.text.clone().unwrap_or_default();
    assert!(
        status.contains("kernel log: 1 hung task (dd 4242)"),
        "{status}"
    );
}

#[test]
fn explain_lists_the_kernel_log_events() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, _) = recording(dir.path());
    let rec = Recording::open(&path).expect("open");
    let report = perftop::explain::explain(
        &rec,
        None,
        None,
        &perftop::findings::Thresholds::default(),
        1,
    )
    .expect("report");
    let kernel: Vec<(i64, String)> = report
        .events
        .iter()
        .filter(|e| e.kind == "kernel_log")
        .map(|e| (e.time_ms, e.text.clone()))
        .collect();
    assert_eq!(
        kernel,
        [
            (T0 + 70_000, "kernel log: 1 hung task (dd 4242)".to_string()),
            (T0 + 85_000, "kernel log: 2 I/O errors (vda)".to_string()),
        ]
    );
}
