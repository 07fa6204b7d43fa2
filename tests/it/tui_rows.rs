//! No wasted rows (issue 41 item 6): at every size from 60x20 to 200x50, on the fixture hosts,
//! the real 16-CPU capture and synthetic 16- and 64-CPU hosts, no table header stands without a
//! row under it, and no row of a column stays blank while a pane in it hides rows (`+N` on its
//! title, `N idle ... hidden`); snapshots at 80x24, 100x30 and 200x50, where Processes moves
//! under the left column's panes when they leave it room.

use crate::support;

use perftop::ui::app::App;
use perftop::ui::layout;
use perftop::ui::panes::{self, View};
use perftop::view::model::{Block, Column};
use std::path::Path;
use support::screen::{app_for, mono, screen, synth_app, titles};

/// The first two column titles of every table a pane can show in `width` columns, as its header
/// line starts (`CPU      C0%`, `CPU   %soft`): how a header is told from a row.
fn header_starts(app: &App, width: usize) -> Vec<String> {
    let theme = mono();
    let d = app.time.derived.as_ref().expect("two samples");
    let v = View {
        d,
        opts: app.pane_opts(),
        theme: &theme,
        width,
        detail: false,
        budget: None,
    };
    let mut out = Vec::new();
    for p in perftop::pane::PANES {
        for b in panes::model(p, &v).body {
            if let Block::Table(t) = b {
                let cols: Vec<Column> = t
                    .columns
                    .iter()
                    .filter(|c| width >= 120 || !c.extra)
                    .take(2)
                    .cloned()
                    .collect();
                let line = panes::header_line(&cols, width, &theme);
                let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
                out.push(text.trim_end().to_string());
            }
        }
    }
    out
}

/// Each column of the body (between the header rows and the findings strip), as its lines.
fn body_columns(s: &str, w: usize) -> Vec<Vec<String>> {
    let lines: Vec<&str> = s.lines().collect();
    let top = lines
        .iter()
        .position(|l| l.starts_with("1 CPU power"))
        .expect("the CPU pane's title");
    let bottom = lines
        .iter()
        .rposition(|l| l.starts_with("findings") || l.starts_with("at sample"))
        .expect("the findings strip");
    let widths = layout::column_widths(w, layout::columns(w).len());
    let mut x = 0;
    let mut cols = Vec::new();
    for cw in widths {
        cols.push(
            lines[top..bottom]
                .iter()
                .map(|l| {
                    let c: String = l.chars().skip(x).take(cw).collect();
                    c.trim_end().to_string()
                })
                .collect(),
        );
        x += cw + 1;
    }
    cols
}

fn is_title(l: &str) -> bool {
    titles().iter().any(|t| l.starts_with(t.as_str()))
}

/// A pane title ending in `+N`, or an `N idle ... hidden` note.
fn hides(l: &str) -> bool {
    let tagged = is_title(l)
        && l.rsplit(' ').next().is_some_and(|t| {
            t.len() > 1 && t.starts_with('+') && t[1..].chars().all(|c| c.is_ascii_digit())
        });
    tagged || l.contains("hidden (h shows)")
}

/// What the rules see wrong on one screen: a header with no row under it, a blank row in a
/// column while a pane there hides rows.
/// `starts`: `header_starts` for each column's width.
fn wasted(app: &App, w: u16, h: u16, starts: &[Vec<String>]) -> Vec<String> {
    let s = screen(app, w, h);
    let mut bad = Vec::new();
    for (c, lines) in body_columns(&s, w.into()).iter().enumerate() {
        let starts = &starts[c];
        let header = |l: &str| starts.iter().any(|h| !h.is_empty() && l.starts_with(h));
        for (i, l) in lines.iter().enumerate() {
            if !header(l) {
                continue;
            }
            let next = lines.get(i + 1).map_or("", |n| n.as_str());
            if next.trim().is_empty()
                || is_title(next)
                || header(next)
                || next.contains("hidden (h shows)")
            {
                bad.push(format!("{w}x{h} column {c}: header {l:?} without a row"));
            }
        }
        let blank = lines.iter().filter(|l| l.trim().is_empty()).count();
        if let Some(hiding) = lines.iter().find(|l| hides(l)).filter(|_| blank > 0) {
            bad.push(format!(
                "{w}x{h} column {c}: {blank} blank rows while {hiding:?}"
            ));
        }
    }
    if !bad.is_empty() {
        bad.push(s);
    }
    bad
}

/// The hosts the sweep draws: each fixture, the real capture, synthetic 16 and 64 CPUs.
fn hosts(dir: &Path) -> Vec<(String, App)> {
    let mut out: Vec<(String, App)> = [
        "vm-2cpu",
        "intel-pstate",
        "acpi-shared",
        "numa-2node-memless",
        "real/h100vm-16cpu-load",
    ]
    .iter()
    .map(|n| (n.to_string(), app_for(n)))
    .collect();
    for (cpus, nodes) in [(16, 1), (64, 2)] {
        let spec = support::synth::SynthSpec {
            cpus,
            nodes,
            disks: 4,
            queues: 8,
        };
        let d = dir.join(format!("synth{cpus}"));
        std::fs::create_dir_all(&d).expect("synth dir");
        out.push((format!("synth {cpus} CPUs"), synth_app(&d, &spec)));
    }
    out
}

#[test]
fn no_header_without_a_row_and_no_blank_row_while_hiding() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut bad = Vec::new();
    for (name, app) in hosts(dir.path()) {
        // Every 20 columns (one and two columns) and every 3 rows: a few seconds unoptimised.
        for w in (60..=200).step_by(20) {
            let widths = layout::column_widths(w.into(), layout::columns(w.into()).len());
            let starts: Vec<Vec<String>> =
                widths.iter().map(|cw| header_starts(&app, *cw)).collect();
            for h in (20..=50).step_by(3) {
                let found = wasted(&app, w, h, &starts);
                if !found.is_empty() {
                    bad.push(format!("{name}: {}", found.join("\n")));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} screens waste rows; the first:\n{}",
        bad.len(),
        bad.first().map_or("", |b| b.as_str())
    );
}

#[test]
fn rows_at_80x24_100x30_200x50() {
    for name in ["vm-2cpu", "real/h100vm-16cpu-load"] {
        let app = app_for(name);
        for (w, h) in [(80, 24), (100, 30), (200, 50)] {
            let widths = layout::column_widths(w.into(), layout::columns(w.into()).len());
            let starts: Vec<Vec<String>> =
                widths.iter().map(|cw| header_starts(&app, *cw)).collect();
            let bad = wasted(&app, w, h, &starts);
            assert!(bad.is_empty(), "{name}: {}", bad.join("\n"));
            let s = screen(&app, w, h);
            if w == 200 {
                // The left column's panes leave rows: Processes stands under them rather than
                // at the foot of the right column, which hides rows.
                assert!(
                    s.lines().any(|l| l.starts_with("8 Processes")),
                    "{name}: Processes in the left column\n{s}"
                );
            }
            let label = name.rsplit('/').next().unwrap_or(name);
            insta::assert_snapshot!(format!("rows_{label}_{w}x{h}"), s);
        }
    }
}
