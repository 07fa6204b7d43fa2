//! The dashboard at the sizes an on-call engineer meets — 80x23 (80x24 under a tmux status
//! line), 80x24, 120x40, 200x50 and 79x40 — on a 16-CPU and a 64-CPU two-node synthetic host
//! with two findings raised (softnet drops, background writeback): snapshots, and the rules the
//! layout keeps at every size.

use crate::support;

use perftop::ui::app::App;
use perftop::ui::theme::GlyphSet;
use std::path::Path;
use std::time::Duration;
use support::screen::{screen, titles};

const SIZES: [(u16, u16); 5] = [(80, 23), (80, 24), (120, 40), (200, 50), (79, 40)];

/// An app that has seen `ticks` one-second samples of a synthetic host (a finding is raised
/// once its rule has held for three).
fn host(dir: &Path, cpus: u32, nodes: u32) -> App {
    let spec = support::synth::SynthSpec {
        cpus,
        nodes,
        disks: 4,
        queues: 8,
    };
    let mut app = App::new(Duration::from_secs(1), Duration::from_secs(60));
    app.session.privilege = "root".into();
    for tick in 0..4 {
        support::synth::write_host(dir, &spec, tick).expect("synth host");
        let root = perftop::root::Root::new(dir);
        app.push_sample(perftop::source::Reader::new(root).sample());
    }
    app
}

/// CPU glyphs on the heat strip lines (`n0 `, `n0-1 `, and continuation lines). The lowest level
/// is a blank; every synthetic CPU is busier than that.
fn strip_cells(screen: &str) -> usize {
    let levels: Vec<char> = GlyphSet::Unicode.levels()[1..].to_vec();
    let labelled = |l: &str| l.starts_with('n') && l[1..].starts_with(|c: char| c.is_ascii_digit());
    screen
        .lines()
        .filter(|l| labelled(l) || l.starts_with("      "))
        .map(|l| {
            // The strip ends at the first two blanks (the other column starts after them).
            let rest: String = l.chars().skip(6).collect();
            let strip = rest.split("  ").next().unwrap_or_default().to_string();
            strip.chars().filter(|c| levels.contains(c)).count()
        })
        .sum()
}

/// Whether `small` is `big` with exactly one line taken out.
fn one_line_less(big: &str, small: &str) -> bool {
    let b: Vec<&str> = big.lines().collect();
    let s: Vec<&str> = small.lines().collect();
    if b.len() != s.len() + 1 {
        return false;
    }
    (0..b.len()).any(|skip| {
        b.iter()
            .enumerate()
            .filter(|(i, _)| *i != skip)
            .map(|(_, l)| *l)
            .eq(s.iter().copied())
    })
}

#[test]
fn sizes_16_and_64_cpus_with_two_findings() {
    for (cpus, nodes) in [(16, 1), (64, 2)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let app = host(dir.path(), cpus, nodes);
        assert_eq!(app.judge.active.len(), 2, "two findings raised");
        let mut screens = Vec::new();
        for (w, h) in SIZES {
            let s = screen(&app, w, h);
            insta::assert_snapshot!(format!("{cpus}cpu_{w}x{h}"), s);
            let lines: Vec<&str> = s.lines().collect();
            assert_eq!(
                lines.len(),
                usize::from(h),
                "{cpus} CPUs {w}x{h}: every row drawn"
            );
            assert!(
                lines.iter().all(|l| l.chars().count() <= usize::from(w)),
                "{cpus} CPUs {w}x{h}: a line wider than the terminal\n{s}"
            );
            for t in titles() {
                assert!(s.contains(&t), "{cpus} CPUs {w}x{h}: {t} missing\n{s}");
            }
            // No blank row while a pane says it has rows hidden.
            let hidden = lines.iter().any(|l| {
                titles().iter().any(|t| l.contains(t.as_str()))
                    && l.rsplit(' ').next().is_some_and(|tag| tag.starts_with('+'))
            });
            let blank = lines.iter().filter(|l| l.trim().is_empty()).count();
            assert!(
                !(hidden && blank > 0),
                "{cpus} CPUs {w}x{h}: {blank} blank rows while a pane hides rows\n{s}"
            );
            // Every CPU as one glyph, whenever the CPU table cannot show every row.
            let cpu_title = lines
                .iter()
                .find(|l| l.contains("1 CPU power"))
                .copied()
                .unwrap_or_default();
            if cpu_title.contains('+') {
                assert_eq!(strip_cells(&s), cpus as usize, "{w}x{h}: heat strip\n{s}");
            }
            // The most severe finding's message, then how many more and the key that lists them.
            let strip = lines
                .iter()
                .find(|l| l.starts_with("findings"))
                .copied()
                .unwrap_or_default();
            assert!(strip.contains("CRIT softnet drops"), "{w}x{h}: {strip}");
            if !lines.iter().any(|l| l.contains("INFO dirty")) {
                assert!(strip.ends_with("+1 more (f)"), "{w}x{h}: {strip}");
            }
            screens.push(s);
        }
        assert!(
            one_line_less(&screens[1], &screens[0]),
            "{cpus} CPUs: 80x23 is 80x24 less one row\n{}\n----\n{}",
            screens[1],
            screens[0]
        );
        // Two columns from 160: CPU and Dirty titles side by side.
        assert!(
            screens[3]
                .lines()
                .any(|l| l.starts_with("1 CPU power") && l.contains("4 Dirty")),
            "200x50 stands in two columns\n{}",
            screens[3]
        );
    }
}

/// The layout measures panes without laying them out (`body_len`); the count must be what the
/// lay-out gives, for every pane, zoomed or not, with the idle switch and a filter.
#[test]
fn measured_lengths_are_laid_out_lengths() {
    use perftop::ui::panes::{self, View};
    use ratatui::crossterm::event::KeyCode;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = host(dir.path(), 64, 2);
    let theme = support::screen::mono();
    for step in 0..3 {
        match step {
            1 => {
                support::screen::key(&mut app, KeyCode::Char('h'));
            }
            2 => {
                support::screen::key(&mut app, KeyCode::Char('/'));
                support::screen::keys(&mut app, "1");
                support::screen::key(&mut app, KeyCode::Enter);
            }
            _ => {}
        }
        let d = app.time.derived.as_ref().expect("two samples");
        for detail in [false, true] {
            for width in [80, 200] {
                let v = View {
                    d,
                    opts: app.pane_opts(),
                    theme: &theme,
                    width,
                    detail,
                    budget: None,
                };
                for p in perftop::pane::PANES {
                    let m = panes::model(p, &v);
                    assert_eq!(
                        panes::body_len(p, &m, &v),
                        panes::body(p, &m, &v).len(),
                        "{p:?} step {step} detail {detail} width {width}"
                    );
                }
            }
        }
    }
}
