//! The episodes list (`E`, issue 40 item 3): in a replay, the recording's episodes as `perftop
//! explain` finds them, one line each; Down and Enter go to the picked one's first sample. Live,
//! the same list over the history the dashboard keeps.

use crate::support;

use perftop::sample::Sample;
use perftop::ui::app::App;
use perftop::ui::episodes::{self, State};
use perftop::ui::replay_app;
use perftop::ui::theme::{ColorDepth, GlyphSet, Theme};
use ratatui::crossterm::event::KeyCode;
use std::time::Duration;
use support::screen::{draw, key as press, replay_options as opts, text};
use support::{synth_samples, T0};

/// 100 samples a second apart: one OOM kill in the interval ending at sample 70, two more in
/// the one ending at 85 (two episodes: more than `explain`'s gap of 2 intervals apart).
fn samples() -> Vec<Sample> {
    let mut samples = synth_samples(0..100);
    for (i, s) in samples.iter_mut().enumerate() {
        s.memory.vmstat.oom_kill = Some(match i {
            0..=69 => 0,
            70..=84 => 1,
            _ => 3,
        });
    }
    samples
}

fn screen(app: &App) -> String {
    let theme = Theme::load("dark", ColorDepth::Mono, GlyphSet::Ascii).expect("theme");
    text(&draw(app, &theme, 100, 30))
}

#[test]
fn replay_lists_the_recordings_episodes_and_goes_to_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("oom.ptrec");
    std::fs::write(&path, support::encode_recording(&samples())).expect("write");
    let mut app = replay_app(&opts(&path)).expect("replays");
    // What `perftop replay` reads on its thread.
    let read = episodes::read(&path, &app.judge.thresholds).expect("episodes");
    // The synthetic host holds one finding all along (an episode over the whole recording,
    // first in time), and the two kills.
    let spans: Vec<(i64, i64)> = read
        .iter()
        .filter(|b| b.summary.contains("OOM killer"))
        .map(|b| (b.first_ms, b.end_ms))
        .collect();
    assert_eq!(
        spans,
        [(T0 + 70_000, T0 + 70_000), (T0 + 85_000, T0 + 85_000)],
        "{read:#?}"
    );
    assert_eq!(read.len(), 3, "{read:#?}");
    assert_eq!(read[0].first_ms, T0 + 1_000, "{read:#?}");
    app.episodes.state = State::Ready(read);
    press(&mut app, KeyCode::Char('E'));
    let s = screen(&app);
    let rows: Vec<&str> = s.lines().filter(|l| l.contains("OOM killer")).collect();
    assert_eq!(rows.len(), 2, "{s}");
    assert!(rows[0].contains("14:06:39-14:06:40"), "{s}");
    assert!(rows[1].contains("14:06:54-14:06:55"), "{s}");
    assert!(s.contains("episodes, the recording"), "{s}");
    // Down twice picks the second kill; Enter goes to its first sample and closes the list.
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.time.view_index(), Some(85));
    assert!(!app.prefs.episodes_open);
    let status = app.status.text.clone().unwrap_or_default();
    assert!(status.contains("OOM killer: 2 killed"), "{status}");
}

#[test]
fn live_lists_the_episodes_since_start() {
    let mut app = App::new(Duration::from_secs(1), Duration::from_secs(600));
    for s in samples() {
        app.push_sample(s);
    }
    press(&mut app, KeyCode::Char('E'));
    let list = app.episodes.list().to_vec();
    let kills: Vec<i64> = list
        .iter()
        .filter(|b| b.summary.contains("OOM killer"))
        .map(|b| b.first_ms)
        .collect();
    assert_eq!(kills, [T0 + 70_000, T0 + 85_000], "{list:#?}");
    assert_eq!(list.len(), 3, "{list:#?}");
    assert!(screen(&app).contains("episodes, since start"));
    // The newest is picked; Enter goes back to it (the view pauses there).
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.time.view_index(), Some(85));
    // Esc closes an open list before anything else.
    press(&mut app, KeyCode::Char('E'));
    assert!(app.prefs.episodes_open);
    press(&mut app, KeyCode::Esc);
    assert!(!app.prefs.episodes_open);
}
