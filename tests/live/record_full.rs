//! `R` in the dashboard when the disk fills: the recording stops with a clear message, the
//! dashboard keeps going, and the file reads back to its last complete record.
//!
//! A file size limit (RLIMIT_FSIZE) stands in for a full disk: writes past it fail with EFBIG
//! just as they fail with ENOSPC on a full filesystem, without needing root or a tmpfs. It is
//! its own test binary because the limit applies to the whole process.

use crate::support;

use perftop::record::Recording;
use perftop::ui::app::App;
use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

#[test]
fn r_recording_stops_cleanly_when_the_file_cannot_grow() {
    let _machine = support::machine();
    let samples = support::synth_samples(0..150);
    let out = tempfile::tempdir().expect("tempdir");
    let mut app = App::new(Duration::from_secs(1), Duration::from_secs(600));
    app.session.record_dir = out.path().to_path_buf();
    app.push_sample(samples[0].clone());
    app.apply(perftop::ui::keymap::Action::Record);
    let path = app
        .session
        .recording
        .active()
        .expect("recording")
        .path
        .clone();

    // Writes past the limit raise SIGXFSZ, which would end the test; with a handler installed
    // they fail with EFBIG instead.
    signal_hook::flag::register(
        signal_hook::consts::SIGXFSZ,
        Arc::new(AtomicBool::new(false)),
    )
    .expect("SIGXFSZ handler");
    let old = getrlimit(Resource::Fsize);
    let limit = std::fs::metadata(&path).expect("file").len() + 12_000;
    setrlimit(
        Resource::Fsize,
        Rlimit {
            current: Some(limit),
            maximum: old.maximum,
        },
    )
    .expect("setrlimit");
    let mut pushed = 1;
    for s in &samples[1..] {
        app.push_sample(s.clone());
        pushed += 1;
        if !app.session.recording.is_on() {
            break;
        }
    }
    setrlimit(Resource::Fsize, old).expect("restore rlimit");

    assert!(
        !app.session.recording.is_on(),
        "recording never hit the limit"
    );
    assert!(
        matches!(&app.session.recording, perftop::record::live::LiveRecorder::Stopped { why } if why == "file size limit reached"),
        "one stopped state says why"
    );
    let status = app.status.text.clone().unwrap_or_default();
    assert!(
        status.starts_with("recording stopped: file size limit reached: ")
            && status.contains(&path.display().to_string()),
        "{status}"
    );
    // The dashboard carries on with the next sample.
    let before = app.time.history.len();
    app.push_sample(samples[pushed].clone());
    assert_eq!(app.time.history.len(), before + 1);
    assert!(app.time.derived.is_some());
    // Every sample fully written reads back; at most the torn one is lost.
    let rec = Recording::open(&path).expect("readable after the failed write");
    assert!(
        rec.len() >= 2 && rec.len() < pushed,
        "{} of {pushed}",
        rec.len()
    );
    let mut dec = perftop::record::Decoder::default();
    for (i, want) in samples.iter().enumerate().take(rec.len()) {
        let s = rec.decode(i, &mut dec).expect("decode");
        assert_eq!(s.time.wall_ms, want.time.wall_ms);
    }
}
