//! Header row 2 (issue 41 item 12): `root  perftop 0.33% 8.0M  root /srv/x` said "root" in two
//! meanings and nothing of what the numbers were. Who perftop runs as, the `--root` it reads
//! and what perftop itself costs are labelled, and fields that do not fit go whole.

use crate::support;
use perftop::ui::header_row::privilege;
use support::screen::{app_for, screen};

const FIELDS: [&str; 3] = [
    "as root",
    "--root /srv/fixture/root",
    "perftop itself: cpu 0.33% rss 8.0M",
];

#[test]
fn row_two_says_what_each_root_is_and_what_perftop_costs() {
    let mut app = app_for("intel-pstate");
    app.session.privilege = privilege(true);
    app.session.root_label = Some("/srv/fixture/root".into());
    app.session.self_cost.cpu_pct = Some(0.33);
    app.session.self_cost.rss_kb = Some(8192);
    for (w, h) in [(80, 24), (100, 30), (200, 50)] {
        let s = screen(&app, w, h);
        let row = s.lines().nth(1).expect("row 2");
        // Each field whole or absent: never a field cut mid-word.
        let mut rest = row.trim();
        let mut seen = Vec::new();
        while !rest.is_empty() {
            let (field, tail) = rest.split_once("  ").unwrap_or((rest, ""));
            seen.push(field.to_string());
            rest = tail.trim_start();
        }
        for f in &seen {
            assert!(
                !f.ends_with('~'),
                "{w}x{h}: a field cut mid-word: {f:?} in {row:?}"
            );
        }
        assert!(seen.iter().any(|f| f == FIELDS[0]), "{w}x{h}: {row:?}");
        assert!(seen.iter().any(|f| f == FIELDS[1]), "{w}x{h}: {row:?}");
        // "root" never stands alone: it is `as root` or the `--root` path.
        let words: Vec<&str> = row.split_whitespace().collect();
        for (i, word) in words.iter().enumerate() {
            if *word == "root" {
                assert_eq!(words.get(i.wrapping_sub(1)), Some(&"as"), "{row:?}");
            }
        }
    }
    let wide = screen(&app, 200, 50);
    let row = wide.lines().nth(1).expect("row 2");
    for f in FIELDS {
        assert!(row.contains(f), "200 columns hold every field: {row:?}");
    }
    // Unprivileged: says so, and why it matters.
    app.session.privilege = privilege(false);
    let s = screen(&app, 200, 50);
    assert!(
        s.lines()
            .nth(1)
            .is_some_and(|r| r.starts_with("as user: tweaks need root")),
        "{s}"
    );
}
