//! Whole-screen snapshots of the dashboard (ratatui TestBackend + insta) on fixture roots:
//! 80x24 and 200x50, colour and monochrome, every zoomed pane, keys driven through the keymap,
//! and a synthetic 512-CPU host that must fit.

use crate::support;

use perftop::root::Root;
use perftop::source::Reader;
use perftop::ui::app::{App, Effect};
use perftop::ui::theme::{ColorDepth, GlyphSet, Theme};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use std::time::Duration;
use support::fixture;
use support::screen::{app_for, draw, key, text, titles};

fn theme(depth: ColorDepth) -> Theme {
    Theme::load("dark", depth, GlyphSet::Unicode).expect("built-in theme")
}

/// Text with style runs marked as `{fg/bg/modifiers}` where the style changes.
fn styled(buf: &Buffer) -> String {
    let w = buf.area.width as usize;
    let mut out = String::new();
    for row in buf.content.chunks(w) {
        let mut last = None;
        for c in row {
            let style = (c.fg, c.bg, c.modifier);
            if last != Some(style) {
                out.push_str(&format!("{{{:?}/{:?}/{:?}}}", c.fg, c.bg, c.modifier));
                last = Some(style);
            }
            out.push_str(c.symbol());
        }
        out.push('\n');
    }
    out
}

#[test]
fn standard_80x24_shows_every_pane_headline() {
    for name in [
        "vm-2cpu",
        "intel-pstate",
        "acpi-shared",
        "numa-2node-memless",
    ] {
        let app = app_for(name);
        let screen = text(&draw(&app, &theme(ColorDepth::Mono), 80, 24));
        for t in titles() {
            assert!(screen.contains(t.as_str()), "{name}: {t} missing\n{screen}");
        }
        assert!(
            screen.contains("findings"),
            "{name}: findings strip missing"
        );
        assert!(screen.contains("q quit"), "{name}: footer missing");
        insta::assert_snapshot!(format!("{name}_80x24"), screen);
    }
}

#[test]
fn full_200x50() {
    for name in ["intel-pstate", "numa-2node-memless"] {
        let app = app_for(name);
        insta::assert_snapshot!(
            format!("{name}_200x50"),
            text(&draw(&app, &theme(ColorDepth::Mono), 200, 50))
        );
    }
}

#[test]
fn colour_and_monochrome_styles() {
    let app = app_for("intel-pstate");
    insta::assert_snapshot!(
        "intel-pstate_80x24_truecolor",
        styled(&draw(&app, &theme(ColorDepth::TrueColor), 80, 24))
    );
    let mono = styled(&draw(&app, &theme(ColorDepth::Mono), 80, 24));
    // NO_COLOR: not a single colour set, emphasis by modifiers only.
    assert!(
        !mono.contains("Rgb") && !mono.contains("Indexed"),
        "mono used colour"
    );
    for c in ["Red", "Green", "Yellow", "Cyan", "Blue", "Magenta"] {
        assert!(!mono.contains(c), "mono used {c}");
    }
    assert!(
        mono.contains("REVERSED"),
        "the focused pane stays visible without colour"
    );
    insta::assert_snapshot!("intel-pstate_80x24_mono", mono);
}

#[test]
fn every_pane_zoomed() {
    let mut app = app_for("intel-pstate");
    for (i, t) in titles().iter().enumerate() {
        key(&mut app, KeyCode::Char(char::from(b'1' + i as u8)));
        key(&mut app, KeyCode::Enter);
        let screen = text(&draw(&app, &theme(ColorDepth::Mono), 80, 24));
        assert!(screen.contains(t), "zoom of {t}\n{screen}");
        let others = titles()
            .iter()
            .filter(|o| *o != t && screen.contains(*o))
            .count();
        assert_eq!(others, 0, "zoomed view shows only {t}\n{screen}");
        insta::assert_snapshot!(format!("intel-pstate_zoom_{}", i + 1), screen);
        key(&mut app, KeyCode::Esc);
    }
}

#[test]
fn keys_help_pause_filter_and_tiny_terminal() {
    let mut app = app_for("vm-2cpu");
    let th = theme(ColorDepth::Mono);
    key(&mut app, KeyCode::Char('?'));
    let help = text(&draw(&app, &th, 80, 24));
    assert!(help.contains("perftop keys"));
    // The help screen is built from the keymap table: every description is on it.
    for (_, desc) in perftop::ui::keymap::help_rows(false).iter().take(10) {
        assert!(
            help.contains(&desc[..desc.len().min(20)]),
            "{desc} not in help"
        );
    }
    assert_eq!(
        key(&mut app, KeyCode::Char(' ')),
        Effect::None,
        "help only takes global keys"
    );
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Char(' '));
    assert!(text(&draw(&app, &th, 80, 24)).contains("PAUSED"));
    key(&mut app, KeyCode::Char('/'));
    for c in "vda".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    assert!(text(&draw(&app, &th, 80, 24)).contains("filter: vda_"));
    key(&mut app, KeyCode::Enter);
    let tiny = text(&draw(&app, &th, 20, 5));
    assert!(tiny.contains("too small"), "{tiny}");
    assert_eq!(
        key(&mut app, KeyCode::Char('q')),
        Effect::Quit,
        "q quits from any screen"
    );
    // Every size from 1x1 up renders without panicking.
    for (w, h) in [
        (1, 1),
        (39, 9),
        (40, 10),
        (79, 23),
        (80, 24),
        (120, 35),
        (300, 100),
    ] {
        draw(&app, &th, w, h);
    }
}

#[test]
fn big_synthetic_host_fits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = support::synth::SynthSpec {
        cpus: 512,
        nodes: 8,
        disks: 64,
        queues: 64,
    };
    let mut app = App::new(Duration::from_secs(1), Duration::from_secs(60));
    for tick in 0..2 {
        support::synth::write_host(dir.path(), &spec, tick).expect("synth host");
        app.push_sample(Reader::new(Root::new(dir.path())).sample());
    }
    let th = theme(ColorDepth::Mono);
    for (w, h) in [(80, 24), (200, 50)] {
        let buf = draw(&app, &th, w, h);
        let screen = text(&buf);
        for t in titles() {
            assert!(
                screen.contains(t.as_str()),
                "{w}x{h}: {t} missing\n{screen}"
            );
        }
        assert!(screen.lines().all(|l| l.chars().count() <= w as usize));
    }
    key(&mut app, KeyCode::Enter);
    let zoomed = text(&draw(&app, &th, 80, 24));
    assert!(zoomed.contains("1 CPU power"));
}

/// The style of the first cell run holding `needle` on the screen.
fn style_of(buf: &Buffer, needle: &str) -> Option<ratatui::style::Color> {
    let w = buf.area.width as usize;
    for row in buf.content.chunks(w) {
        let line: String = row.iter().map(|c| c.symbol()).collect();
        if let Some(at) = line.find(needle) {
            let col = line[..at].chars().count();
            return Some(row[col].fg);
        }
    }
    None
}

/// Colours follow the findings' thresholds: the intel-pstate disk queue (aqu-sz 5.51) is warn
/// at the default disk_aqu_sz (4), plain when the config raises it to 8, crit when the config
/// puts the crit level at 5.
#[test]
fn colours_follow_the_configured_thresholds() {
    use perftop::findings::Thresholds;
    let th = theme(ColorDepth::Ansi16);
    let mut app = app_for("intel-pstate");
    app.set_thresholds(Thresholds::default());
    let warn = style_of(&draw(&app, &th, 80, 24), "5.51");
    app.set_thresholds(Thresholds {
        disk_aqu_sz: 8.0,
        ..Thresholds::default()
    });
    let plain = style_of(&draw(&app, &th, 80, 24), "5.51");
    app.set_thresholds(Thresholds {
        disk_aqu_sz_crit: 5.0,
        ..Thresholds::default()
    });
    let crit = style_of(&draw(&app, &th, 80, 24), "5.51");
    assert!(warn.is_some() && plain.is_some() && crit.is_some());
    assert_eq!(warn, Some(th.warn.fg.unwrap_or_default()), "default: warn");
    assert_eq!(plain, Some(th.text.fg.unwrap_or_default()), "raised: plain");
    assert_eq!(crit, Some(th.crit.fg.unwrap_or_default()), "crit at 5");
}

/// ASCII glyphs (LC_ALL=C, `--glyphs ascii`): with the help box, the tweak menu and a tweak
/// preview open, every cell on screen is ASCII; boxes are drawn with `+-|`, units and arrows
/// spelled out. The same screens in unicode do hold box drawing and arrows, so the check bites.
#[test]
fn ascii_glyphs_put_only_ascii_on_screen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    support::copy_tree(&fixture("intel-pstate").join("t1"), &root);
    let mut app = app_for("intel-pstate");
    app.tweaks.ctx = Some(perftop::tweak::Ctx {
        root: Root::new(&root),
        state_dir: dir.path().join("state"),
        privileged: true,
        read_only: false,
    });
    let ascii = Theme::load("dark", ColorDepth::Ansi16, GlyphSet::Ascii).expect("theme");
    let unicode = theme(ColorDepth::Ansi16);
    let non_ascii = |s: &str| s.chars().filter(|c| !c.is_ascii()).collect::<String>();
    for (keys, want_ascii, want_unicode) in [
        (&[KeyCode::Char('?')][..], "+-----", "└─────"),
        (
            &[KeyCode::Esc, KeyCode::Char('a')],
            "1 MiB - 31.0 GiB",
            "1 MiB – 31.0 GiB",
        ),
        (
            &[KeyCode::Esc, KeyCode::Char('g')],
            "set governor -> performance?",
            "set governor → performance?",
        ),
    ] {
        for k in keys {
            key(&mut app, *k);
        }
        let a = text(&draw(&app, &ascii, 80, 24));
        assert_eq!(non_ascii(&a), "", "after {keys:?}:\n{a}");
        assert!(
            a.contains(want_ascii),
            "after {keys:?}: no {want_ascii:?}\n{a}"
        );
        assert!(a.contains("|"), "box sides in ASCII\n{a}");
        let u = text(&draw(&app, &unicode, 80, 24));
        assert!(
            u.contains(want_unicode),
            "after {keys:?}: no {want_unicode:?}\n{u}"
        );
    }
    key(&mut app, KeyCode::Esc);
    assert_eq!(
        app.status.text.as_deref(),
        Some("cancelled: nothing changed")
    );
}

/// A footer message longer than the row is wrapped onto a second row (at 80 columns it was cut
/// to `...ptrec: No suc`), the key hints make room, and it goes after `status::SHOW_FOR` on
/// the clock the event loop passes in.
#[test]
fn long_footer_message_wraps_and_goes_after_its_time() {
    use perftop::ui::status::SHOW_FOR;
    let mut app = app_for("intel-pstate");
    let th = theme(ColorDepth::Mono);
    let msg = "cannot record: creating /nonexistent/dir/perftop-pstate4-20251121T140531.ptrec: \
               No such file or directory (os error 2)";
    app.status.text = Some(msg.into());
    let s = text(&draw(&app, &th, 80, 24));
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 24, "{s}");
    assert_eq!(format!("{} {}", lines[22], lines[23]), msg, "{s}");
    assert!(
        !s.contains("q quit"),
        "hints make room for the message\n{s}"
    );
    for t in titles() {
        assert!(
            s.contains(t.as_str()),
            "{t} missing under a 2-row footer\n{s}"
        );
    }
    let t0 = std::time::Instant::now();
    assert!(!app.expire_status(t0));
    assert!(!app.expire_status(t0 + SHOW_FOR / 2));
    assert!(app.expire_status(t0 + SHOW_FOR));
    let s = text(&draw(&app, &th, 80, 24));
    assert!(s.contains("q quit") && !s.contains("No such file"), "{s}");
    // A short one shares the row with the hints that fit.
    app.status.text = Some("sort: by name".into());
    let s = text(&draw(&app, &th, 80, 24));
    let last = s.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("q quit") && last.ends_with("sort: by name"),
        "{s}"
    );
}
