//! The tweak previews at 80 columns and the knob menu (`a`): ranges and reasons whole, a typed
//! or listed value through preview and `y`, the latency hold, a disk's scheduler.

use super::{key, status, tweak_app};
use crate::support;
use perftop::root::Root;
use perftop::ui::app::App;
use ratatui::crossterm::event::KeyCode;

/// The screen at `w`x`h` (monochrome).
fn screen_at(app: &App, w: u16, h: u16) -> String {
    support::screen::screen(app, w, h)
}

/// The dialog box's text with its borders and line breaks gone, so that a path or a value
/// wrapped over several lines reads whole again.
fn box_text(screen: &str) -> String {
    screen
        .lines()
        .filter_map(|l| {
            let inner = l.split_once('│')?.1;
            Some(
                inner
                    .rsplit_once('│')
                    .map_or(inner, |(a, _)| a)
                    .trim()
                    .to_string(),
            )
        })
        .collect::<Vec<_>>()
        .concat()
        .replace(' ', "")
}

#[test]
fn preview_shows_every_file_whole_at_80_columns() {
    let (_dir, mut app, root) = tweak_app();
    key(&mut app, KeyCode::Char('g'));
    let s = screen_at(&app, 80, 24);
    insta::assert_snapshot!("governor_preview_80x24", s);
    let whole = box_text(&s);
    let cpufreq = "/sys/devices/system/cpu/cpufreq";
    for i in 0..4 {
        let gov = format!("policy{i}/scaling_governor");
        let was = root
            .read_line(&format!("sys/devices/system/cpu/cpufreq/{gov}"))
            .unwrap_or_default();
        let epp = format!("policy{i}/energy_performance_preference");
        let epp_now = root
            .read_line(&format!("sys/devices/system/cpu/cpufreq/{epp}"))
            .unwrap_or_default();
        if was != "performance" {
            assert!(
                whole.contains(&format!("{cpufreq}/{gov}{was}→performance")),
                "policy{i} governor not whole in\n{s}"
            );
        }
        // The EPP side effect: its file and value, before y.
        assert!(
            whole.contains(&format!("{cpufreq}/{epp}{epp_now}(journalled;")),
            "policy{i} EPP not whole in\n{s}"
        );
    }
    assert!(s.lines().all(|l| l.chars().count() <= 80));
    // At 200 columns the box takes the width: a whole EPP path and its value on one line.
    let wide = screen_at(&app, 200, 50);
    // ...and the screen is not covered where it need not be: the box is as tall as its lines.
    assert!(
        wide.contains("y applies") && !wide.contains("rows 1–"),
        "{wide}"
    );
    let line = wide
        .lines()
        .find(|l| {
            l.contains("/sys/devices/system/cpu/cpufreq/policy3/energy_performance_preference")
        })
        .unwrap_or_else(|| panic!("EPP path on one line at 200 columns\n{wide}"));
    assert!(line.chars().count() > 96, "{line}");
    assert!(
        !s.contains("rows 1–"),
        "80x24 needs no scrolling for 4 policies\n{s}"
    );
    key(&mut app, KeyCode::Esc);
}

#[test]
fn knob_menu_shows_ranges_in_words_and_reasons_whole() {
    let (_dir, mut app, _root) = tweak_app();
    key(&mut app, KeyCode::Char('a'));
    let s = screen_at(&app, 80, 24);
    insta::assert_snapshot!("knob_menu_80x24", s);
    assert!(!s.contains("..="), "{s}");
    let whole = box_text(&s);
    // Half of the fixture's MemTotal, in binary units.
    let total_kb: u64 = std::fs::read_to_string(support::fixture("intel-pstate/t0/proc/meminfo"))
        .expect("meminfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("MemTotal:")?
                .trim()
                .strip_suffix(" kB")?
                .parse()
                .ok()
        })
        .expect("MemTotal");
    let half = perftop::tweak::range::bytes(total_kb * 1024 / 2).replace(' ', "");
    assert_eq!(half, "31.0GiB", "62 GB fixture");
    for words in [
        "1–90%",
        "1–50%",
        &format!("1MiB–{half}"),
        "performance,powersave",
    ] {
        assert!(whole.contains(words), "{words} in\n{s}");
    }
    // One policy runs performance: EPP is disabled, and the whole reason is there.
    assert!(
        whole.contains(
            "disabled:thedriverrefusesEPPchangesunderthe\
             performancegovernor(EBUSY);changethegovernorfirst"
        ),
        "{s}"
    );
    // The list scrolls to keep the selection in view: the last entry is the latency hold.
    key(&mut app, KeyCode::End);
    let end = screen_at(&app, 80, 24);
    assert!(end.contains("> pmqos.cpu_dma_latency"), "{end}");
    key(&mut app, KeyCode::Esc);
    assert!(app.tweaks.dialog.is_none());
}

#[test]
fn knob_menu_sets_a_typed_value_through_preview_and_y() {
    let (dir, mut app, root) = tweak_app();
    let ratio = "proc/sys/vm/dirty_ratio";
    assert_eq!(root.read_line(ratio).as_deref(), Some("20"));
    key(&mut app, KeyCode::Char('a'));
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    let s = screen_at(&app, 80, 24);
    assert!(
        s.contains("vm.dirty_ratio: now 20") && s.contains("allowed: 1–90 %"),
        "{s}"
    );
    // Out of range: said in words, the prompt stays.
    support::screen::keys(&mut app, "95");
    key(&mut app, KeyCode::Enter);
    let s = screen_at(&app, 80, 24);
    assert!(
        s.contains("\"95\" is outside the bounds of vm.dirty_ratio (1–90 %)"),
        "{s}"
    );
    key(&mut app, KeyCode::Backspace);
    key(&mut app, KeyCode::Backspace);
    support::screen::keys(&mut app, "15");
    key(&mut app, KeyCode::Enter);
    let s = screen_at(&app, 80, 24);
    assert!(
        s.contains("set vm.dirty_ratio → 15?") && s.contains("20 → 15"),
        "{s}"
    );
    assert_eq!(
        root.read_line(ratio).as_deref(),
        Some("20"),
        "nothing before y"
    );
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(
        root.read_line(ratio).as_deref(),
        Some("15"),
        "{}",
        status(&app)
    );
    // Journalled like every change: u restores it.
    let journal = std::fs::read_to_string(dir.path().join("state/journal.jsonl")).expect("journal");
    assert!(journal.contains("vm.dirty_ratio"), "{journal}");
    key(&mut app, KeyCode::Char('u'));
    assert!(screen_at(&app, 80, 24).contains("undo #1: restore vm.dirty_ratio 20 (was set to 15)?"));
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(
        root.read_line(ratio).as_deref(),
        Some("20"),
        "{}",
        status(&app)
    );
    // Bytes take a size: 256M is 268435456 in the preview.
    key(&mut app, KeyCode::Char('a'));
    for _ in 0..4 {
        key(&mut app, KeyCode::Down);
    }
    key(&mut app, KeyCode::Enter);
    support::screen::keys(&mut app, "256M");
    key(&mut app, KeyCode::Enter);
    let s = screen_at(&app, 80, 24);
    assert!(s.contains("set vm.dirty_bytes → 268435456?"), "{s}");
    key(&mut app, KeyCode::Esc);
    assert_eq!(
        root.read_line("proc/sys/vm/dirty_bytes").as_deref(),
        Some("0")
    );
}

#[test]
fn knob_menu_picks_a_listed_value() {
    let (_dir, mut app, root) = tweak_app();
    let thp = "sys/kernel/mm/transparent_hugepage/enabled";
    key(&mut app, KeyCode::Char('a'));
    for _ in 0..6 {
        key(&mut app, KeyCode::Down);
    }
    key(&mut app, KeyCode::Enter);
    let s = screen_at(&app, 80, 24);
    assert!(
        s.contains("> always  (now)") && s.contains("  madvise"),
        "{s}"
    );
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    assert!(screen_at(&app, 80, 24).contains("set thp.enabled → madvise?"));
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        perftop::tweak::read_value(&root, thp).as_deref(),
        Some("always"),
        "Enter cancels"
    );
    key(&mut app, KeyCode::Char('a'));
    for _ in 0..6 {
        key(&mut app, KeyCode::Down);
    }
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(
        perftop::tweak::read_value(&root, thp).as_deref(),
        Some("madvise"),
        "{}",
        status(&app)
    );
}

#[test]
fn latency_hold_previews_then_holds_only_on_y() {
    let (dir, mut app, root) = tweak_app();
    let dev = root.base().join("dev");
    std::fs::create_dir_all(&dev).expect("dev dir");
    let file = dev.join("cpu_dma_latency");
    std::fs::write(&file, b"").expect("dev file");
    let audit = dir.path().join("state/audit.jsonl");
    let audited = |what: &str| {
        std::fs::read_to_string(&audit)
            .unwrap_or_default()
            .matches(&format!("\"action\":\"{what}\""))
            .count()
    };
    key(&mut app, KeyCode::Char('a'));
    key(&mut app, KeyCode::Char('l'));
    let s = screen_at(&app, 80, 24);
    // The audit log's path is in the temp dir: named in the snapshot by what it is.
    let shown = s.replace(&dir.path().display().to_string(), "$TMP");
    insta::assert_snapshot!("latency_hold_preview_80x24", shown);
    for said in [
        "what:",
        "states kept out of: C1",
        "cost:",
        "release:",
        "y applies",
    ] {
        assert!(s.contains(said), "{said} in\n{s}");
    }
    assert_eq!(
        std::fs::read(&file).expect("read").len(),
        0,
        "held before y"
    );
    assert!(app.tweaks.hold.is_none());
    key(&mut app, KeyCode::Esc);
    assert!(app.tweaks.hold.is_none() && !screen_at(&app, 80, 24).contains("HOLD"));
    assert_eq!(audited("hold-start"), 0);
    key(&mut app, KeyCode::Char('a'));
    key(&mut app, KeyCode::Char('l'));
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(
        std::fs::read(&file).expect("read"),
        0i32.to_ne_bytes(),
        "{}",
        status(&app)
    );
    let s = screen_at(&app, 80, 24);
    assert!(
        s.lines()
            .next()
            .is_some_and(|l| l.contains("HOLD cpu_dma_latency 0us")),
        "{s}"
    );
    assert_eq!(audited("hold-start"), 1);
    // The menu says it is held (its last entry); l releases it.
    key(&mut app, KeyCode::Char('a'));
    key(&mut app, KeyCode::End);
    let s = screen_at(&app, 80, 24);
    assert!(
        s.contains("pmqos.cpu_dma_latency        0 µs    held until released"),
        "{s}"
    );
    key(&mut app, KeyCode::Char('l'));
    assert!(app.tweaks.hold.is_none(), "{}", status(&app));
    assert!(!screen_at(&app, 80, 24).contains("HOLD"));
    assert_eq!(audited("hold-release"), 1);
}

/// The knob menu lists each disk's storage knobs (after the fixed ones, before the latency
/// hold): `disk.nvme0n1.scheduler` with the choices of its `queue/scheduler`, set through the
/// same preview and `y`, and undone with `u`.
#[test]
fn knob_menu_sets_a_disk_scheduler() {
    let (_dir, mut app, root) = tweak_app();
    let rel = "sys/block/nvme0n1/queue/scheduler";
    let sched = |r: &Root| perftop::tweak::read_value(r, rel);
    assert_eq!(sched(&root).as_deref(), Some("none"));
    key(&mut app, KeyCode::Char('a'));
    key(&mut app, KeyCode::End);
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Enter);
    let s = screen_at(&app, 80, 24);
    assert!(s.contains("disk.nvme0n1.scheduler: now none"), "{s}");
    for c in ["mq-deadline", "kyber", "bfq"] {
        assert!(s.contains(c), "{c} in\n{s}");
    }
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    let s = screen_at(&app, 80, 24);
    assert!(s.contains("none → mq-deadline"), "{s}");
    assert_eq!(sched(&root).as_deref(), Some("none"), "nothing before y");
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(
        sched(&root).as_deref(),
        Some("mq-deadline"),
        "{:?}",
        app.status.text
    );
    key(&mut app, KeyCode::Char('u'));
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(
        sched(&root).as_deref(),
        Some("none"),
        "{:?}",
        app.status.text
    );
}
