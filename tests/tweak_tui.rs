//! TUI tweaks: `g` opens a confirm dialog (TestBackend), only `y` applies; Enter/Esc cancel;
//! `u` undoes; `a` lists knobs.

use perftop::root::Root;
use perftop::source::Reader;
use perftop::tweak::Ctx;
use perftop::ui::app::App;
use perftop::ui::render;
use perftop::ui::theme::{ColorDepth, GlyphSet, Theme};
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use std::path::Path;
use std::time::Duration;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let p = e.path();
        let dst = to.join(e.file_name());
        let ft = e.file_type().expect("file type");
        if ft.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&p).expect("link"), &dst)
                .expect("symlink");
        } else if ft.is_dir() {
            copy_dir(&p, &dst);
        } else {
            std::fs::copy(&p, &dst).expect("copy");
        }
    }
}

fn screen(app: &App) -> String {
    let th = Theme::load("dark", ColorDepth::Mono, GlyphSet::Unicode).expect("theme");
    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    term.draw(|f| render::draw(f, app, &th)).expect("draw");
    let buf = term.backend().buffer().clone();
    buf.content
        .chunks(120)
        .map(|r| r.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

fn key(app: &mut App, c: KeyCode) {
    app.key(KeyEvent::new(c, KeyModifiers::NONE));
}

fn governors(root: &Root) -> Vec<String> {
    (0..4)
        .map(|i| {
            root.read_line(&format!(
                "sys/devices/system/cpu/cpufreq/policy{i}/scaling_governor"
            ))
            .unwrap_or_default()
        })
        .collect()
}

#[test]
fn governor_toggle_confirm_applies_only_on_y() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root_dir = dir.path().join("root");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/intel-pstate/t0"),
        &root_dir,
    );
    let root = Root::new(&root_dir);
    let mut app = App::new(Duration::from_secs(1), Duration::from_secs(60));
    app.push_sample(Reader::new(root.clone()).sample());
    app.tweaks.ctx = Some(Ctx {
        root: root.clone(),
        state_dir: dir.path().join("state"),
        privileged: true,
        read_only: false,
    });
    let before = governors(&root);
    for cancel in [KeyCode::Enter, KeyCode::Esc, KeyCode::Char('n')] {
        key(&mut app, KeyCode::Char('g'));
        let s = screen(&app);
        assert!(s.contains("set governor → performance?"), "{s}");
        assert!(s.contains("powersave → performance"), "{s}");
        assert!(s.contains("y applies"), "{s}");
        key(&mut app, cancel);
        assert!(app.tweaks.dialog.is_none());
        assert_eq!(governors(&root), before, "{cancel:?} must not apply");
        assert!(!screen(&app).contains("y applies"));
    }
    key(&mut app, KeyCode::Char('g'));
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(governors(&root), vec!["performance"; 4], "{:?}", app.status);
    // g again: back to what was there before (from the journal), again only on y.
    key(&mut app, KeyCode::Char('g'));
    assert!(screen(&app).contains("set governor → powersave?"));
    key(&mut app, KeyCode::Esc);
    assert_eq!(governors(&root), vec!["performance"; 4]);
    // u: undo with a confirm.
    key(&mut app, KeyCode::Char('u'));
    assert!(screen(&app).contains("undo #1 governor"));
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(governors(&root), before, "{:?}", app.status);
    // a: the knob menu, any key closes.
    key(&mut app, KeyCode::Char('a'));
    let s = screen(&app);
    assert!(
        s.contains("vm.dirty_ratio") && s.contains("disabled:"),
        "{s}"
    );
    key(&mut app, KeyCode::Char('x'));
    assert!(app.tweaks.dialog.is_none());
}

#[test]
fn non_root_tui_says_why() {
    let root =
        Root::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/intel-pstate/t0"));
    let mut app = App::new(Duration::from_secs(1), Duration::from_secs(60));
    app.tweaks.ctx = Some(Ctx {
        root,
        state_dir: std::env::temp_dir().join("perftop-never-used"),
        privileged: false,
        read_only: false,
    });
    key(&mut app, KeyCode::Char('g'));
    assert!(app.tweaks.dialog.is_none());
    let s = app.status.clone().unwrap_or_default();
    assert!(s.contains("needs root") && s.contains("sudo tee"), "{s}");
}

#[test]
fn help_with_tweak_keys_fits_80x24() {
    let rows = perftop::ui::keymap::help_rows(false);
    assert!(rows.len() + 4 <= 24, "{} help rows", rows.len());
    assert!(rows.iter().any(|(k, _)| k == "g a u"));
}

#[test]
fn governor_chooser_when_the_previous_one_is_unknown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root_dir = dir.path().join("root");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/acpi-shared/t0"),
        &root_dir,
    );
    let gov = "sys/devices/system/cpu/cpufreq/policy0/scaling_governor";
    std::fs::write(root_dir.join(gov), "performance\n").expect("write");
    let root = Root::new(&root_dir);
    let mut app = App::new(Duration::from_secs(1), Duration::from_secs(60));
    app.push_sample(Reader::new(root.clone()).sample());
    app.tweaks.ctx = Some(Ctx {
        root: root.clone(),
        state_dir: dir.path().join("state"),
        privileged: true,
        read_only: false,
    });
    key(&mut app, KeyCode::Char('g'));
    let s = screen(&app);
    assert!(
        s.contains("back to which?") && s.contains("2 ondemand"),
        "{s}"
    );
    key(&mut app, KeyCode::Char('2'));
    assert!(screen(&app).contains("set governor → ondemand?"));
    assert_eq!(root.read_line(gov).as_deref(), Some("performance"));
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(
        root.read_line(gov).as_deref(),
        Some("ondemand"),
        "{:?}",
        app.status
    );
}
