//! The replay timeline's times (issue 41 item 11): the time in view says `at`, and under the bar
//! the recording's first time starts at the bar's first column, its last ends at the bar's last,
//! with round times between that fit; snapshots at 80x24 and 200x50.

use crate::support;

use perftop::record::writer::header_for;
use perftop::record::Writer;
use perftop::ui::app::App;
use perftop::ui::replay_app;
use perftop::ui::theme::{ColorDepth, GlyphSet, Theme};
use ratatui::crossterm::event::KeyCode;
use std::path::Path;
use std::time::Duration;
use support::screen::{draw, key as press, replay_options as opts, text};
use support::{synth_samples, T0};

fn screen(app: &App, w: u16, h: u16) -> String {
    let theme = Theme::load("dark", ColorDepth::Mono, GlyphSet::Ascii).expect("theme");
    text(&draw(app, &theme, w, h))
}

/// 301 samples a second apart from T0 (14:05:30 UTC): 14:05:30 .. 14:10:30.
fn five_minutes(dir: &Path) -> App {
    let mut samples = synth_samples(0..301);
    for (i, s) in samples.iter_mut().enumerate() {
        s.time.wall_ms = T0 + i as i64 * 1000;
    }
    let h = header_for(&samples[0], Duration::from_secs(1), 0);
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    for s in &samples {
        w.sample(s, 0).expect("sample");
    }
    let path = dir.join("five.ptrec");
    std::fs::write(&path, w.into_inner()).expect("write");
    replay_app(&opts(&path)).expect("replays")
}

#[test]
fn the_timeline_labels_its_times() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = five_minutes(dir.path());
    for _ in 0..100 {
        press(&mut app, KeyCode::Char('t'));
    }
    for (w, h, ticks) in [
        // 49 columns for 300 s: a minute is 9.8 columns, less than a label and its gap (10),
        // so 2-minute steps; 14:06:00 (column 5) and 14:10:00 (44) would touch the ends.
        (80, 24, vec!["14:05:30", "14:08:00", "14:10:30"]),
        // 169 columns: 15 s is 8.5 columns, 30 s 16.9.
        (
            200,
            50,
            vec![
                "14:05:30", "14:06:00", "14:06:30", "14:07:00", "14:07:30", "14:08:00", "14:08:30",
                "14:09:00", "14:09:30", "14:10:00", "14:10:30",
            ],
        ),
    ] {
        let s = screen(&app, w, h);
        let lines: Vec<&str> = s.lines().collect();
        // The time in view, labelled; the bar; the sample number.
        assert!(lines[2].starts_with("at 14:07:10 ="), "{w}x{h}\n{s}");
        assert!(lines[2].ends_with("  101/301 j+-1m00s"), "{w}x{h}\n{s}");
        let bar_from = "at 14:07:10 ".len();
        let bar_to = lines[2].len() - "  101/301 j+-1m00s".len();
        // Under it, the span and round times between, each at its column.
        let ruler = lines[3];
        assert!(ruler[..bar_from].trim().is_empty(), "{w}x{h}\n{s}");
        assert_eq!(&ruler[bar_from..bar_from + 8], "14:05:30", "{w}x{h}\n{s}");
        assert!(ruler.ends_with("14:10:30"), "{w}x{h}\n{s}");
        assert_eq!(
            ruler.len(),
            bar_to,
            "the last time ends under the bar's end\n{s}"
        );
        let labels: Vec<&str> = ruler.split_whitespace().collect();
        assert_eq!(labels, ticks, "{w}x{h}\n{s}");
        // 14:08:00 is 150 s of 300 along the bar: its column.
        let col = ruler.find("14:08:00").expect("14:08:00");
        let want = bar_from + (150.0 / 300.0 * (bar_to - bar_from - 1) as f64).round() as usize;
        assert_eq!(col, want, "{w}x{h}\n{s}");
        insta::assert_snapshot!(format!("ruler_{w}x{h}"), s);
    }
    // A compact screen keeps one row: the ends beside the bar.
    let s = screen(&app, 79, 23);
    let lines: Vec<&str> = s.lines().collect();
    assert!(
        lines[1].starts_with("at 14:07:10 14:05:30 =") && lines[1].contains(" 14:10:30  101/301"),
        "{s}"
    );
    assert!(lines[2].starts_with("1 CPU"), "{s}");
}
