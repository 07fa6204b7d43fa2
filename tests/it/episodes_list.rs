//! The episodes list (`E`, issue 40 item 3): in a replay, the recording's episodes as `perftop
//! explain` finds them, one line each; Down and Enter go to the picked one's first sample. Live,
//! the episodes since the dashboard started, folded in as each interval is judged. The timeline
//! draws warn and crit episodes as spans in their colour.

use crate::support;

use perftop::sample::Sample;
use perftop::ui::app::App;
use perftop::ui::episodes::{self, State};
use perftop::ui::replay_app;
use perftop::ui::theme::{ColorDepth, GlyphSet, Theme};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::style::Modifier;
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

#[test]
fn live_episodes_reach_back_past_the_history_kept() {
    // A 20 s history: the ring has dropped the first 80 samples by the end, but the list is
    // since start. The finding the synthetic host holds all along began in the first interval.
    let mut app = App::new(Duration::from_secs(1), Duration::from_secs(20));
    for s in samples() {
        app.push_sample(s);
    }
    assert!(app.time.history.len() < 40, "the ring keeps about 20 s");
    press(&mut app, KeyCode::Char('E'));
    let list = app.episodes.list().to_vec();
    assert_eq!(list.len(), 3, "{list:#?}");
    assert_eq!(list[0].start_ms, T0, "since start: {list:#?}");
    assert_eq!(list[0].first_ms, T0 + 1_000, "{list:#?}");
    assert!(list[0].open_end, "{list:#?}");
    let kills: Vec<(i64, i64)> = list[1..].iter().map(|b| (b.start_ms, b.end_ms)).collect();
    assert_eq!(
        kills,
        [(T0 + 69_000, T0 + 70_000), (T0 + 84_000, T0 + 85_000)],
        "{list:#?}"
    );
}

/// The columns of the timeline row (`at 14:...`) drawn in the mono theme's crit style (bold and
/// reversed) with a bar glyph: the crit episodes' spans (the cursor is reversed alone).
fn crit_bar_columns(buf: &Buffer) -> Vec<u16> {
    let w = buf.area.width;
    let row = (0..buf.area.height)
        .find(|&y| {
            let line: String = (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect();
            line.starts_with("at 14:")
        })
        .expect("a timeline row");
    (0..w)
        .filter(|&x| {
            let c = &buf[(x, row)];
            matches!(c.symbol(), "=" | "-")
                && c.modifier.contains(Modifier::BOLD | Modifier::REVERSED)
        })
        .collect()
}

#[test]
fn the_timeline_draws_the_recordings_crit_episodes_as_spans() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("oom.ptrec");
    std::fs::write(&path, support::encode_recording(&samples())).expect("write");
    let mut app = replay_app(&opts(&path)).expect("replays");
    let theme = Theme::load("dark", ColorDepth::Mono, GlyphSet::Ascii).expect("theme");
    // Before the recording's episodes are read, the bar has no span.
    assert_eq!(
        crit_bar_columns(&draw(&app, &theme, 100, 30)),
        Vec::<u16>::new()
    );
    app.episodes.state = State::Ready(episodes::read(&path, &app.judge.thresholds).expect("read"));
    let buf = draw(&app, &theme, 100, 30);
    let cols = crit_bar_columns(&buf);
    // The bar runs from the column after `at 14:05:30 ` to before `  1/100 j±1m00s`: samples
    // 0..=99 over its width; each kill's interval (69-70 s, 84-85 s) is two columns there.
    let s = text(&buf);
    let line = s.lines().find(|l| l.starts_with("at 14:")).expect("row");
    let start = "at 14:05:30 ".len() as f64;
    let width = (line.find("  1/100").expect("sample number") as f64) - start;
    let col = |secs: f64| (start + (secs / 99.0 * (width - 1.0)).round()) as u16;
    // The kill's own mark `!` (at the interval's end) wins over its span.
    assert_eq!(cols, [col(69.0), col(84.0)], "{line}");
    let marks: Vec<usize> = line.match_indices('!').map(|(i, _)| i).collect();
    assert_eq!(marks, [col(70.0) as usize, col(85.0) as usize], "{line}");
}
