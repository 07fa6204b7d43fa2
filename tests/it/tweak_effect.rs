//! The tweak dialog says what a knob is and what a change does (issue 41 item 12): each dirty
//! knob its own description (vm.dirty_background_ratio was described with vm.dirty_ratio's
//! text), and the preview the threshold in bytes before → after, as the kernel works it out.

use crate::support;
use crate::tweak_tui::tweak_app;
use perftop::tweak::knob;
use ratatui::crossterm::event::KeyCode;
use support::screen::{key, keys, screen};

#[test]
fn every_knob_has_its_own_description() {
    let (_dir, app, _root) = tweak_app();
    let ctx = app.tweaks.ctx.as_ref().expect("tweaks on");
    let all = knob::registry(ctx);
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            assert_ne!(
                a.description, b.description,
                "{} and {} share a description",
                a.name, b.name
            );
        }
    }
    let d = |n: &str| {
        all.iter()
            .find(|k| k.name == n)
            .map(|k| k.description)
            .expect("knob")
    };
    assert!(d("vm.dirty_background_ratio").contains("background writeback starts"));
    assert!(d("vm.dirty_ratio").contains("writers are throttled"));
}

#[test]
fn a_dirty_ratio_preview_says_where_the_threshold_moves() {
    let (_dir, mut app, _root) = tweak_app();
    key(&mut app, KeyCode::Char('a'));
    // governor, epp, vm.dirty_ratio, vm.dirty_background_ratio.
    for _ in 0..3 {
        key(&mut app, KeyCode::Down);
    }
    key(&mut app, KeyCode::Enter);
    let typing = screen(&app, 120, 40);
    assert!(
        typing.contains("vm.dirty_background_ratio: now 10")
            && typing.contains("background writeback starts"),
        "{typing}"
    );
    keys(&mut app, "15");
    key(&mut app, KeyCode::Enter);
    let s = screen(&app, 120, 40);
    // nr_dirty_threshold 1,000,000 pages of 4 KiB at 20% → 20,000,000 kB dirtyable; 15% of
    // it is 3,000,000 kB (2.9G); the kernel's background threshold now is 500,000 pages (1.9G).
    assert!(
        s.contains("effect: background writeback starts at 1.9G → 2.9G"),
        "{s}"
    );
    assert!(s.contains("10 → 15"), "the file's values stay:\n{s}");
    key(&mut app, KeyCode::Esc);
}
