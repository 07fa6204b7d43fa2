//! The popups at every size (issue 41 item 8): the `?` help and the tweak menu (`a`) at 60x20,
//! 80x24 and 200x50. The help scrolls where it does not fit and says so; no line of it is
//! lost; the menu's reasons hang under their own column and an unknown value reads `-`.

use crate::support;
use crate::tweak_tui::tweak_app;
use perftop::ui::app::App;
use ratatui::crossterm::event::KeyCode;
use support::screen::{app_for, key, screen};

const SIZES: [(u16, u16); 3] = [(60, 20), (80, 24), (200, 50)];

/// The help box's rows between its borders, borders and margins off.
fn box_rows(s: &str) -> Vec<String> {
    s.lines()
        .filter_map(|l| {
            let inner = l.split_once('│')?.1;
            Some(inner.rsplit_once('│').map_or(inner, |(a, _)| a).to_string())
        })
        .collect()
}

#[test]
fn help_scrolls_at_60x20_and_loses_no_line() {
    let mut app = app_for("intel-pstate");
    key(&mut app, KeyCode::Char('?'));
    for (w, h) in SIZES {
        insta::assert_snapshot!(format!("help_{w}x{h}"), screen(&app, w, h));
    }
    // 80x24 and 200x50 show it whole, the last rows and the footnote included.
    for (w, h) in [(80, 24), (200, 50)] {
        let s = screen(&app, w, h);
        assert!(s.contains(" R ") && s.contains("g a u") && s.contains("~ = estimate"));
        assert!(!s.contains("more below"), "{w}x{h}\n{s}");
    }
    let top = screen(&app, 60, 20);
    assert!(top.contains("more below") && top.contains("j k"), "{top}");
    assert!(!top.contains("g a u"), "{top}");
    // Down a row, then to the end: the rows that did not fit come into view.
    key(&mut app, KeyCode::Char('j'));
    let one = box_rows(&screen(&app, 60, 20));
    assert_eq!(one[0], box_rows(&top)[1], "j scrolls one row");
    assert!(screen(&app, 60, 20).contains("more above and below"));
    key(&mut app, KeyCode::End);
    let end = screen(&app, 60, 20);
    insta::assert_snapshot!("help_60x20_end", end);
    assert!(end.contains("g a u") && end.contains(" R "), "{end}");
    assert!(
        end.contains("~ = estimate") && end.contains("more above"),
        "{end}"
    );
    // Every line of the box is whole: the box is 58 columns inside, no `~` cut.
    for r in box_rows(&end) {
        assert!(
            r.chars().count() <= 58 && !r.trim_end().ends_with('~'),
            "{r}"
        );
    }
    key(&mut app, KeyCode::Char('k'));
    assert!(screen(&app, 60, 20).contains("more above and below"));
    key(&mut app, KeyCode::Home);
    assert_eq!(screen(&app, 60, 20), top);
    // Closed and opened again: from the top.
    key(&mut app, KeyCode::End);
    key(&mut app, KeyCode::Char('?'));
    key(&mut app, KeyCode::Char('?'));
    assert_eq!(screen(&app, 60, 20), top);
}

/// The menu's lines, borders off.
fn menu(app: &App, w: u16, h: u16) -> Vec<String> {
    box_rows(&screen(app, w, h))
}

#[test]
fn tweak_menu_hangs_reasons_under_their_column() {
    let (_dir, mut app, _root) = tweak_app();
    key(&mut app, KeyCode::Char('a'));
    for (w, h) in SIZES {
        insta::assert_snapshot!(format!("tweak_menu_{w}x{h}"), screen(&app, w, h));
        let rows = menu(&app, w, h);
        // The text column: where `1–90 %` starts on vm.dirty_ratio's row.
        let ratio = rows
            .iter()
            .find(|r| r.contains("vm.dirty_ratio "))
            .unwrap_or_else(|| panic!("{w}x{h}: no vm.dirty_ratio row"));
        let col = ratio.find("1–90").expect("range");
        let col = ratio[..col].chars().count();
        // Every continuation (a row not starting with a knob's mark) starts at that column.
        for r in rows
            .iter()
            .filter(|r| r.starts_with("   ") && !r.trim().is_empty())
        {
            let lead = r.chars().take_while(|c| *c == ' ').count();
            if r.contains("rows ") || r.contains("warning") {
                continue;
            }
            assert_eq!(lead, col, "{w}x{h}: continuation not under the text:\n{r}");
        }
        // Unknown values are `-`, as on the rest of the screen.
        let hp = rows
            .iter()
            .find(|r| r.contains("vm.nr_hugepages"))
            .or_else(|| rows.iter().find(|r| r.contains("thp.enabled")))
            .expect("a row");
        assert!(!hp.contains(" ? "), "{w}x{h}: {hp}");
    }
    let wide = screen(&app, 200, 50);
    let hp = wide
        .lines()
        .find(|r| r.contains("vm.nr_hugepages"))
        .expect("vm.nr_hugepages at 200x50");
    let after: Vec<&str> = hp.split_whitespace().collect();
    let at = after
        .iter()
        .position(|w| *w == "vm.nr_hugepages")
        .expect("name");
    assert_eq!(after[at + 1], "-", "{hp}");
}
