//! The `?` help at 60x20 in a real terminal (issue 41 item 8): it does not fit, says so and
//! which keys scroll it, and scrolling brings every row into view down to its last line
//! (`R`, `g a u` and the footnote were cut off, with no way to reach them).
//!
//! Needs `tmux` (skips itself with a message when it is missing).

use crate::support;
use support::tmux::{has_footer, tmux_available, Session};

#[test]
fn help_scrolls_to_its_last_line_at_60x20() {
    let name = "help_scrolls_to_its_last_line_at_60x20";
    if !tmux_available() {
        support::skip(name, "tmux is not installed (apt-get install -y tmux)");
        return;
    }
    let s = Session::start("help60");
    s.resize(60, 20);
    s.wait("the first frame at 60x20", |sc| {
        has_footer(sc) && sc.lines().count() <= 20
    });
    s.keys(&["?"]);
    let top = s.wait("the help with a scroll marker", |sc| {
        sc.contains("perftop keys") && sc.contains("more below")
    });
    assert!(top.contains("j k"), "which keys scroll:\n{top}");
    assert!(
        !top.contains("g a u"),
        "60x20 cannot hold every row:\n{top}"
    );
    // j: one row down; PgDn: a page; End: the last line.
    s.keys(&["j"]);
    s.wait("one row down", |sc| sc.contains("more above and below"));
    s.keys(&["NPage"]);
    s.keys(&["End"]);
    let end = s.wait("the last help line", |sc| {
        sc.contains("~ = estimate") && sc.contains("g a u")
    });
    assert!(end.contains(" R ") && end.contains("more above"), "{end}");
    // Up and Home go back; Esc closes, and `?` opens it at the top again.
    s.keys(&["Up"]);
    s.wait("one row up", |sc| sc.contains("more above and below"));
    s.keys(&["Home"]);
    s.wait("the top again", |sc| {
        sc.contains("more below") && !sc.contains("more above")
    });
    s.keys(&["Escape"]);
    s.wait("the help closed", |sc| !sc.contains("perftop keys"));
    s.keys(&["q"]);
    s.assert_exited_and_restored("q", &["0"]);
}
