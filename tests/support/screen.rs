//! The dashboard on a test terminal: an app that has read fixture or synthetic samples, drawn
//! into ratatui's `TestBackend`, read back as text, driven by key codes.

use perftop::root::Root;
use perftop::source::Reader;
use perftop::ui::app::{App, Effect};
use perftop::ui::render;
use perftop::ui::theme::{ColorDepth, GlyphSet, Theme};
use perftop::ui::{Look, ReplayOptions};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use std::path::Path;
use std::time::Duration;

/// An app that has seen a fixture's t0 and t1 samples (so rates are real, not since-boot).
pub fn app_for(name: &str) -> App {
    let mut app = App::new(Duration::from_secs(1), Duration::from_secs(600));
    app.session.privilege = "root".into();
    for t in ["t0", "t1"] {
        let mut reader = Reader::new(Root::new(super::fixture(name).join(t)));
        app.push_sample(reader.sample());
    }
    app
}

/// An app that has seen two ticks of a synthetic host written into `dir`.
pub fn synth_app(dir: &Path, spec: &super::synth::SynthSpec) -> App {
    let mut app = App::new(Duration::from_secs(1), Duration::from_secs(60));
    app.session.privilege = "root".into();
    for tick in 0..2 {
        super::synth::write_host(dir, spec, tick).expect("synth host");
        app.push_sample(Reader::new(Root::new(dir)).sample());
    }
    app
}

pub fn mono() -> Theme {
    Theme::load("dark", ColorDepth::Mono, GlyphSet::Unicode).expect("built-in theme")
}

pub fn draw(app: &App, theme: &Theme, w: u16, h: u16) -> Buffer {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    term.draw(|f| render::draw(f, app, theme)).expect("draw");
    term.backend().buffer().clone()
}

pub fn text(buf: &Buffer) -> String {
    let w = buf.area.width as usize;
    buf.content
        .chunks(w)
        .map(|row| {
            let line: String = row.iter().map(|c| c.symbol()).collect();
            line.trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The pane titles as the screen shows them (`1 CPU power`), from the one pane list.
pub fn titles() -> Vec<String> {
    perftop::view::PANES
        .iter()
        .map(|p| format!("{} {}", p.key(), p.title()))
        .collect()
}

/// How the tests open a recording in the dashboard: from its start, at 1x, the dark theme,
/// `b` jumps 60 s.
pub fn replay_options(path: &Path) -> ReplayOptions {
    ReplayOptions {
        path: path.to_path_buf(),
        at: None,
        speed: 1.0,
        look: Look {
            theme: "dark".into(),
            jump: Duration::from_secs(60),
            ..Look::default()
        },
    }
}

/// The screen as monochrome text.
pub fn screen(app: &App, w: u16, h: u16) -> String {
    text(&draw(app, &mono(), w, h))
}

pub fn key(app: &mut App, code: KeyCode) -> Effect {
    app.key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub fn keys(app: &mut App, typed: &str) {
    for c in typed.chars() {
        key(app, KeyCode::Char(c));
    }
}
