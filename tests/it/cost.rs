//! Regression checks on perftop's own cost, as counts (never wall-clock times, which a shared
//! CI machine cannot hold): the bytes the dashboard sends to the terminal for a steady frame,
//! and the bytes the recorder writes a sample. Each fails when its count grows by more than
//! 25 % over the figure committed here (docs/performance.md, "The whole program's cost"), so a
//! change that makes the steady frame or the recording fatter has to say so by moving the
//! figure.

use crate::support;

use perftop::ui::render;
use perftop::ui::term::FrameWriter;
use perftop::ui::theme::{ColorDepth, GlyphSet, Theme};
use perftop::ui::wire::Wire;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use std::sync::atomic::Ordering;
use support::screen::synth_app;
use support::synth::write_host;

/// Bytes of the steady frame below at 80x24, 256 colours, measured on this commit.
const STEADY_FRAME_BYTES: u64 = 43;
/// Bytes a sample of `support::small_host` recorded for 120 s (header and gap markers
/// included), measured on this commit.
const RECORDED_BYTES_A_SAMPLE: u64 = 105;
/// The same with 10 steady processes and a short-lived busy one born and one gone every
/// second (`synth::procs::write_churn`), measured on this commit.
const RECORDED_BYTES_A_CHURNING_SAMPLE: u64 = 163;

/// The most a count may be over its committed figure: 25 %.
fn within(what: &str, got: u64, committed: u64) {
    let limit = committed + committed / 4;
    assert!(
        got <= limit,
        "{what}: {got} bytes, over the committed {committed} by more than 25 % (limit {limit}); \
         if the growth is meant, measure again and move the figure in tests/it/cost.rs and \
         docs/performance.md"
    );
}

#[test]
fn a_steady_frame_sends_few_bytes() {
    // A synthetic 2-CPU host whose counters grow at constant rates: from the third sample on,
    // every rate on screen is the same as before, so a frame should send only what moved (the
    // clock, the sparklines' newest column), not the screen.
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = support::small_host();
    let mut app = synth_app(dir.path(), &spec);
    let theme = Theme::load("dark", ColorDepth::Ansi256, GlyphSet::Unicode).expect("theme");
    let writer = FrameWriter::new(Vec::new());
    let (bytes, frames) = writer.counters();
    let area = Rect::new(0, 0, 80, 24);
    let mut term = Terminal::with_options(
        Wire::new(writer, ColorDepth::Ansi256),
        TerminalOptions {
            viewport: Viewport::Fixed(area),
        },
    )
    .expect("terminal");
    let mut steady = Vec::new();
    for tick in 2..8 {
        write_host(dir.path(), &spec, tick).expect("synth host");
        app.push_sample(
            perftop::source::Reader::new(perftop::root::Root::new(dir.path())).sample(),
        );
        let before = bytes.load(Ordering::Relaxed);
        term.draw(|f| render::draw(f, &app, &theme)).expect("draw");
        steady.push(bytes.load(Ordering::Relaxed) - before);
    }
    assert_eq!(frames.load(Ordering::Relaxed), 6, "one write a frame");
    // The first frame paints the whole screen; the last ones are the steady state.
    let first = steady[0];
    let last = *steady.iter().skip(3).max().expect("frames");
    eprintln!("first frame {first} bytes, steady frames {steady:?}");
    assert!(
        last * 2 < first,
        "a steady frame ({last} B) should send far less than the first ({first} B)"
    );
    within("a steady 80x24 frame", last, STEADY_FRAME_BYTES);
}

#[test]
fn the_recorder_writes_few_bytes_a_sample() {
    let n = 120u64;
    let samples = support::synth_samples(0..n);
    let bytes = support::encode_recording(&samples).len() as u64;
    let per = bytes / n;
    let v2 = support::encode_recording_as(&samples, 2).len() as u64 / n;
    eprintln!("{bytes} bytes for {n} samples: {per} a sample (format 2: {v2})");
    within("a recorded sample", per, RECORDED_BYTES_A_SAMPLE);
}

/// What costs on a real host: the process table gains and loses a pid every sample (a build's
/// compilers), so the kept rows change every second.
#[test]
fn the_recorder_writes_few_bytes_a_sample_while_processes_come_and_go() {
    use support::synth::procs::{write_churn, write_procs};
    let n = 120u64;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut reader = perftop::source::Reader::new(perftop::root::Root::new(dir.path()));
    let samples: Vec<_> = (0..n)
        .map(|t| {
            write_host(dir.path(), &support::small_host(), t).expect("synth host");
            write_procs(dir.path(), 10, t).expect("steady processes");
            write_churn(dir.path(), t).expect("short-lived processes");
            let mut s = reader.sample();
            s.time.wall_ms = support::T0 + t as i64 * 1000;
            s
        })
        .collect();
    // The churn reaches the recording: the kept rows are not the same two samples running.
    let pids = |s: &perftop::sample::Sample| -> Vec<u32> {
        s.processes
            .as_ref()
            .map(|p| p.tasks.iter().map(|t| t.pid).collect())
            .unwrap_or_default()
    };
    assert!(
        pids(&samples[10]).contains(&20_010),
        "{:?}",
        pids(&samples[10])
    );
    assert!(
        !pids(&samples[14]).contains(&20_010),
        "{:?}",
        pids(&samples[14])
    );
    let bytes = support::encode_recording(&samples).len() as u64;
    let per = bytes / n;
    // Format 2 (keyframe skeletons against nothing) on the same samples, for the record.
    let v2 = support::encode_recording_as(&samples, 2).len() as u64 / n;
    eprintln!("{bytes} bytes for {n} samples: {per} a sample (format 2: {v2})");
    assert!(per < v2, "format 3 {per} B a sample, format 2 {v2}");
    within(
        "a recorded sample with processes coming and going",
        per,
        RECORDED_BYTES_A_CHURNING_SAMPLE,
    );
}
