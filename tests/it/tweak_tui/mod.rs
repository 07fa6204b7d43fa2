//! TUI tweaks: `g` opens a confirm dialog (TestBackend), only `y` applies; Enter/Esc cancel;
//! `u` undoes; `a` lists knobs. The previews and the knob menu (`a`) are in `knob_menu`.

mod knob_menu;

use crate::support;

use perftop::root::Root;
use perftop::source::Reader;
use perftop::tweak::Ctx;
use perftop::ui::app::App;
use ratatui::crossterm::event::KeyCode;
use std::time::Duration;

/// The screen at 120x40 (monochrome).
fn screen(app: &App) -> String {
    support::screen::screen(app, 120, 40)
}

/// A key may apply or undo a tweak in this process (see `support::writing`).
fn key(app: &mut App, c: KeyCode) {
    let _writes = support::writing();
    support::screen::key(app, c);
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
    let (_dir, mut app, root) = tweak_app();
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
    assert_eq!(
        governors(&root),
        vec!["performance"; 4],
        "{:?}",
        app.status.text
    );
    // g again: back to what was there before (from the journal), again only on y.
    key(&mut app, KeyCode::Char('g'));
    assert!(screen(&app).contains("set governor → powersave?"));
    key(&mut app, KeyCode::Esc);
    assert_eq!(governors(&root), vec!["performance"; 4]);
    // u: undo with a confirm that says what comes back.
    key(&mut app, KeyCode::Char('u'));
    let s = screen(&app);
    assert!(
        s.contains("undo #1: restore governor powersave (was set to performance)?"),
        "{s}"
    );
    assert!(s.contains("performance → powersave"), "{s}");
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(governors(&root), before, "{:?}", app.status.text);
    // a: the knob menu; other keys leave it open, Esc closes.
    key(&mut app, KeyCode::Char('a'));
    let s = screen(&app);
    assert!(
        s.contains("vm.dirty_ratio") && s.contains("1–90 %") && s.contains("disabled:"),
        "{s}"
    );
    key(&mut app, KeyCode::Char('x'));
    assert!(app.tweaks.dialog.is_some());
    key(&mut app, KeyCode::Esc);
    assert!(app.tweaks.dialog.is_none());
}

#[test]
fn non_root_tui_says_why() {
    let root = Root::new(support::fixture("intel-pstate/t0"));
    let mut app = App::new(Duration::from_secs(1), Duration::from_secs(60));
    app.tweaks.ctx = Some(Ctx {
        root,
        state_dir: std::env::temp_dir().join("perftop-never-used"),
        privileged: false,
        read_only: false,
    });
    key(&mut app, KeyCode::Char('g'));
    assert!(app.tweaks.dialog.is_none());
    let s = app.status.text.clone().unwrap_or_default();
    assert!(s.contains("needs root") && s.contains("sudo tee"), "{s}");
    // The menu opens (to say why each knob is off); the latency hold is refused before any
    // preview (this root has no /dev/cpu_dma_latency), and the menu stays.
    key(&mut app, KeyCode::Char('a'));
    key(&mut app, KeyCode::Char('l'));
    let s = app.status.text.clone().unwrap_or_default();
    assert!(
        s.starts_with("PM-QoS hold:") && s.contains("not present"),
        "{s}"
    );
    assert!(matches!(
        app.tweaks.dialog,
        Some(perftop::ui::tweak_dialog::Dialog::Menu(_))
    ));
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
    support::copy_tree(&support::fixture("acpi-shared/t0"), &root_dir);
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
        app.status.text
    );
}

/// A dashboard on a temp copy of intel-pstate/t0 with its own state dir.
pub(crate) fn tweak_app() -> (tempfile::TempDir, App, Root) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root_dir = dir.path().join("root");
    support::copy_tree(&support::fixture("intel-pstate/t0"), &root_dir);
    let root = Root::new(&root_dir);
    let mut app = App::new(Duration::from_secs(1), Duration::from_secs(60));
    app.push_sample(Reader::new(root.clone()).sample());
    app.tweaks.ctx = Some(Ctx {
        root: root.clone(),
        state_dir: dir.path().join("state"),
        privileged: true,
        read_only: false,
    });
    (dir, app, root)
}

fn status(app: &App) -> String {
    app.status.text.clone().unwrap_or_default()
}

#[test]
fn dashboard_keys_take_the_same_lock_and_name_the_holder() {
    let (dir, mut app, root) = tweak_app();
    let before = governors(&root);
    let held = perftop::tweak::journal::Journal::new(&dir.path().join("state"))
        .lock()
        .expect("lock");
    key(&mut app, KeyCode::Char('g'));
    key(&mut app, KeyCode::Char('y'));
    let s = status(&app);
    assert!(
        s.contains("not applied") && s.contains(&format!("pid {}", std::process::id())),
        "{s}"
    );
    assert_eq!(governors(&root), before);
    drop(held);
    key(&mut app, KeyCode::Char('g'));
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(governors(&root), vec!["performance"; 4], "{}", status(&app));
}

#[test]
fn dashboard_undo_stops_on_a_damaged_journal_and_on_another_root() {
    let (dir, mut app, root) = tweak_app();
    let before = governors(&root);
    key(&mut app, KeyCode::Char('g'));
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(governors(&root), vec!["performance"; 4]);
    // The newest change's record cut in half (its status mark gone too).
    let journal = dir.path().join("state/journal.jsonl");
    let good = std::fs::read(&journal).expect("journal");
    let first = good.iter().position(|&b| b == b'\n').expect("line");
    std::fs::write(&journal, &good[..first / 2]).expect("cut");
    key(&mut app, KeyCode::Char('u'));
    let s = status(&app);
    assert!(app.tweaks.dialog.is_none(), "no undo offered");
    assert!(s.contains("line 1") && s.contains("torn"), "{s}");
    assert_eq!(governors(&root), vec!["performance"; 4]);
    // Journal back; the dashboard now runs under another root: u refuses, naming both.
    std::fs::write(&journal, &good).expect("restore");
    let other = dir.path().join("other");
    support::copy_tree(root.base(), &other);
    if let Some(ctx) = app.tweaks.ctx.as_mut() {
        ctx.root = Root::new(&other);
    }
    key(&mut app, KeyCode::Char('u'));
    let s = status(&app);
    assert!(s.contains("another") || s.contains("under the root"), "{s}");
    assert!(s.contains(&*other.to_string_lossy()), "{s}");
    assert_eq!(governors(&Root::new(&other)), vec!["performance"; 4]);
    if let Some(ctx) = app.tweaks.ctx.as_mut() {
        ctx.root = root.clone();
    }
    key(&mut app, KeyCode::Char('u'));
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(governors(&root), before, "{}", status(&app));
}

#[test]
fn dashboard_apply_with_an_unwritable_audit_log_is_applied_with_a_warning() {
    let (dir, mut app, root) = tweak_app();
    let before = governors(&root);
    std::fs::create_dir_all(dir.path().join("state/audit.jsonl")).expect("audit dir");
    key(&mut app, KeyCode::Char('g'));
    key(&mut app, KeyCode::Char('y'));
    let s = status(&app);
    assert!(
        s.contains("governor = performance") && s.contains("warning") && s.contains("audit"),
        "{s}"
    );
    assert_eq!(governors(&root), vec!["performance"; 4]);
    key(&mut app, KeyCode::Char('u'));
    key(&mut app, KeyCode::Char('y'));
    let s = status(&app);
    assert!(s.contains("undone") && s.contains("warning"), "{s}");
    assert_eq!(governors(&root), before);
}
