//! The dashboard's interactive parts on a test terminal (TestBackend + insta): the findings list
//! (`f`), a zoomed pane scrolled on a many-CPU host, live and in replay, and the per-pane `/`
//! filter. Tweak dialogs are in `tweak_tui`.

use crate::support;

use perftop::ui::app::App;
use perftop::ui::replay_app;
use ratatui::crossterm::event::KeyCode;
use std::path::Path;
use std::time::Duration;
use support::screen::{app_for, key, keys, screen, synth_app};

/// The line of the screen that starts with `prefix`.
fn line_starting<'a>(screen: &'a str, prefix: &str) -> Option<&'a str> {
    screen.lines().find(|l| l.starts_with(prefix))
}

/// `rows A–B of N` on the zoomed pane's title, as numbers.
fn position(screen: &str) -> Option<(usize, usize, usize)> {
    let title = screen.lines().find(|l| l.contains(" rows "))?;
    let tail = &title[title.find(" rows ")? + 6..];
    let (range, total) = tail.split_once(" of ")?;
    let (a, b) = range.split_once('–')?;
    Some((a.parse().ok()?, b.parse().ok()?, total.trim().parse().ok()?))
}

/// CPU rows on screen between two titles: lines that start with a CPU number followed by a
/// percentage (not the pane's title, `1 CPU power`).
fn cpu_rows(screen: &str, from_title: &str, to_title: &str) -> Vec<u32> {
    let start = screen.find(from_title).unwrap_or(0);
    let end = screen[start..]
        .find(to_title)
        .map_or(screen.len(), |e| start + e);
    screen[start..end]
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let cpu = w.next()?.parse().ok()?;
            w.next()?.parse::<f64>().ok()?;
            Some(cpu)
        })
        .collect()
}

fn synth64(dir: &Path) -> App {
    let spec = support::synth::SynthSpec {
        cpus: 64,
        nodes: 2,
        disks: 8,
        queues: 8,
    };
    synth_app(dir, &spec)
}

#[test]
fn findings_list_shows_every_finding_whole() {
    let mut app = app_for("intel-pstate");
    // Two samples: both rules hold for the interval, neither has held 3 samples to be raised.
    key(&mut app, KeyCode::Char('f'));
    assert!(app.prefs.findings_open);
    let s = screen(&app, 80, 24);
    insta::assert_snapshot!("findings_list_80x24", s);
    assert!(s.contains("holding this interval, not raised yet"), "{s}");
    // The thresholds the rule compared, with their values (issue 41 item 5).
    assert!(s.contains("thresholds: dirty_background_factor 1.0"), "{s}");
    assert!(s.contains("INFO dirty.background  pane 4 Dirty"), "{s}");
    assert!(
        s.contains("dirty 2.3G past background 1.9G: flushing (vm.dirty_background_ratio 10)"),
        "the whole message with its numbers\n{s}"
    );
    assert!(s.contains("tweak: vm.dirty_background_ratio (a: tweak menu)"));
    assert!(
        s.contains("INFO cpu.powersave_busy  pane 1 CPU power"),
        "{s}"
    );
    assert!(s.contains("tweak: governor"), "{s}");
    // Keys that belong to the dashboard do nothing while the list is open; Esc closes it.
    key(&mut app, KeyCode::Char('T'));
    assert!(
        app.time.view.is_none(),
        "T did not step back under the list"
    );
    key(&mut app, KeyCode::Esc);
    assert!(!app.prefs.findings_open);
    assert!(!screen(&app, 80, 24).contains("findings · Esc closes"));
    // f toggles.
    key(&mut app, KeyCode::Char('f'));
    key(&mut app, KeyCode::Char('f'));
    assert!(!app.prefs.findings_open);
}

#[test]
fn findings_list_names_raised_findings_and_scrolls() {
    let mut app = perftop::ui::app::App::new(Duration::from_secs(1), Duration::from_secs(60));
    app.set_thresholds(perftop::findings::Thresholds {
        raise_after: 1,
        ..Default::default()
    });
    for t in ["t0", "t1"] {
        app.push_sample(
            perftop::source::Reader::new(perftop::root::Root::new(
                support::fixture("intel-pstate").join(t),
            ))
            .sample(),
        );
    }
    assert_eq!(app.judge.active.len(), 2);
    key(&mut app, KeyCode::Char('f'));
    let s = screen(&app, 80, 24);
    assert!(s.contains("on the strip (2)"), "{s}");
    assert!(s.contains("held 1 sample since"), "{s}");
    assert!(!s.contains("not raised yet"), "{s}");
    // 12 rows leave 8 inside the box for 11 lines (a heading, then per finding its id, the
    // message, the thresholds, the tweak and how long it held): the list scrolls and says
    // where it is.
    let small = screen(&app, 80, 12);
    assert!(small.contains("rows 1–8 of 11"), "{small}");
    assert_eq!(small.matches("held 1 sample since").count(), 1, "{small}");
    key(&mut app, KeyCode::PageDown);
    let next = screen(&app, 80, 12);
    assert!(next.contains("rows 4–11 of 11"), "{next}");
    assert_eq!(next.matches("held 1 sample since").count(), 2, "{next}");
    key(&mut app, KeyCode::Home);
    assert!(screen(&app, 80, 12).contains("rows 1–8 of 11"));
}

#[test]
fn zoomed_cpu_pane_scrolls_on_a_64_cpu_host() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = synth64(dir.path());
    key(&mut app, KeyCode::Enter);
    let top = screen(&app, 80, 24);
    insta::assert_snapshot!("zoom_64cpu_top", top);
    let (a, b, total) = position(&top).expect("position on the title");
    assert_eq!(a, 1);
    assert!(total > 128, "64 CPUs and 64 policies: {total}");
    assert_eq!(
        cpu_rows(&top, "1 CPU power", "findings"),
        (0..(b as u32 - 2)).collect::<Vec<_>>()
    );
    // A page down keeps one row of the previous page; the CPU table's header stays on top.
    key(&mut app, KeyCode::PageDown);
    let page = screen(&app, 80, 24);
    insta::assert_snapshot!("zoom_64cpu_page_down", page);
    let (a2, b2, _) = position(&page).expect("position");
    assert_eq!(a2, b, "{page}");
    assert!(b2 > b);
    let body: Vec<&str> = page.lines().skip(3).collect();
    assert!(
        body[0].starts_with("CPU      C0%"),
        "header kept on top:\n{page}"
    );
    let rows = cpu_rows(&page, "1 CPU power", "findings");
    // Body line b-1 (the last of the first page) is CPU b-3: the facts line and the header
    // come first.
    assert_eq!(rows.first().copied(), Some(b as u32 - 3), "{page}");
    // Down, Up, End, Home.
    key(&mut app, KeyCode::Down);
    assert_eq!(position(&screen(&app, 80, 24)).map(|p| p.0), Some(a2 + 1));
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Up);
    assert_eq!(position(&screen(&app, 80, 24)).map(|p| p.0), Some(a2 - 1));
    key(&mut app, KeyCode::End);
    let end = screen(&app, 80, 24);
    let (_, last, total) = position(&end).expect("position");
    assert_eq!(last, total, "{end}");
    key(&mut app, KeyCode::Up);
    assert_eq!(
        position(&screen(&app, 80, 24)).map(|p| p.1),
        Some(total - 1),
        "Up from the end moves at once"
    );
    key(&mut app, KeyCode::Home);
    assert_eq!(position(&screen(&app, 80, 24)).map(|p| p.0), Some(1));
    // A taller terminal clamps the offset; a new zoom starts at the top.
    key(&mut app, KeyCode::End);
    screen(&app, 80, 24);
    let tall = screen(&app, 80, 60);
    let (_, last, total) = position(&tall).expect("position at 80x60");
    assert_eq!(last, total);
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Enter);
    assert_eq!(position(&screen(&app, 80, 24)).map(|p| p.0), Some(1));
    // Home and End move in time when nothing is zoomed.
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Home);
    assert!(app.time.view.is_some(), "Home went to the oldest sample");
}

#[test]
fn zoom_scrolls_in_replay_too() {
    let mut app =
        replay_app(&support::screen::replay_options(&support::golden())).expect("golden recording");
    key(&mut app, KeyCode::Char('t'));
    key(&mut app, KeyCode::Enter);
    // 80x10: the header, timeline, strip, footer and title leave 5 rows for 7 lines (facts,
    // 2 CPUs, 2 policies, 2 table headers).
    let first = screen(&app, 80, 10);
    let (a, b, total) = position(&first).unwrap_or_else(|| panic!("position\n{first}"));
    assert_eq!(a, 1, "{first}");
    assert!(total > b, "{first}");
    key(&mut app, KeyCode::End);
    let end = screen(&app, 80, 10);
    assert_eq!(
        position(&end).map(|p| (p.1, p.2)),
        Some((total, total)),
        "{end}"
    );
    assert!(
        end.contains("REPLAY"),
        "End scrolled instead of leaving the sample\n{end}"
    );
    assert!(end.contains(" 2/"), "still on sample 2\n{end}");
}

#[test]
fn the_filter_belongs_to_the_focused_pane() {
    let mut app = app_for("intel-pstate");
    let before = screen(&app, 80, 24);
    // CPU pane (focused, 4 CPUs): /cpu1 keeps CPU 1 (its table shows it as `1`).
    key(&mut app, KeyCode::Char('/'));
    keys(&mut app, "cpu1");
    // As it is typed, the pane filters and says so on its title.
    assert!(screen(&app, 80, 24).contains("1 CPU power     /cpu1 busy"));
    key(&mut app, KeyCode::Enter);
    assert!(app.prompt.filter.is_none());
    let s = screen(&app, 80, 24);
    insta::assert_snapshot!("filter_cpu1_80x24", s);
    assert!(
        line_starting(&s, "1 CPU power     /cpu1 busy 38.0%").is_some(),
        "{s}"
    );
    assert_eq!(cpu_rows(&s, "1 CPU power", "2 NUMA"), vec![1], "{s}");
    // The other panes keep their rows: the node, the disk, the softirq CPU.
    for kept in [
        "0    0-3        62G",
        "nvme0n1    20000",
        "1       5.0   0.0    3.0k",
    ] {
        assert!(before.contains(kept) && s.contains(kept), "{kept}\n{s}");
    }
    // Disks: a filter of its own leaves the CPU filter alone.
    key(&mut app, KeyCode::Char('5'));
    key(&mut app, KeyCode::Char('/'));
    keys(&mut app, "loop");
    key(&mut app, KeyCode::Enter);
    let s = screen(&app, 80, 24);
    assert!(s.contains("no row matches filter \"loop\""), "{s}");
    assert!(s.contains("5 Disks         /loop"), "{s}");
    assert_eq!(cpu_rows(&s, "1 CPU power", "2 NUMA"), vec![1], "{s}");
    assert!(s.contains("0    0-3        62G"), "NUMA untouched\n{s}");
    // Esc clears the focused pane's filter only.
    key(&mut app, KeyCode::Esc);
    let s = screen(&app, 80, 24);
    assert!(
        s.contains("nvme0n1    20000") && !s.contains("/loop"),
        "{s}"
    );
    assert!(s.contains("/cpu1"), "{s}");
    // Zoomed, the CPU pane lists every CPU matching cpu1 (here only CPU 1 of 4).
    key(&mut app, KeyCode::Char('1'));
    key(&mut app, KeyCode::Enter);
    let z = screen(&app, 80, 24);
    assert_eq!(cpu_rows(&z, "1 CPU power", "policy"), vec![1], "{z}");
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.prefs.filters.get(perftop::pane::Pane::Cpu), "");
}

#[test]
fn cpu1_on_the_16_cpu_host_keeps_cpu1_and_cpu10_to_15() {
    let mut app = app_for("real/h100vm-16cpu-load");
    let before = screen(&app, 120, 60);
    key(&mut app, KeyCode::Char('/'));
    keys(&mut app, "cpu1");
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Enter);
    let z = screen(&app, 120, 60);
    let mut rows = cpu_rows(&z, "1 CPU power", "policy");
    rows.sort_unstable();
    assert_eq!(rows, vec![1, 10, 11, 12, 13, 14, 15], "{z}");
    // Softirq keeps every CPU row it had (and gains the rows the filtered CPU pane gave up).
    key(&mut app, KeyCode::Esc);
    let s = screen(&app, 120, 60);
    let softirq = |sc: &str| cpu_rows(sc, "6 Softirq/NIC", "findings").len();
    assert!(softirq(&before) >= 1);
    assert!(softirq(&s) >= softirq(&before), "{s}");
}

/// Live: an OOM kill in a new interval is logged with its time, counted on the Pressure pane's
/// headline, and stays counted while later intervals have none.
#[test]
fn live_oom_kills_are_counted_since_start() {
    let mut app = App::new(Duration::from_secs(1), Duration::from_secs(60));
    let mut samples = support::synth_samples(0..5);
    for (i, s) in samples.iter_mut().enumerate() {
        s.memory.vmstat.oom_kill = Some(if i < 2 { 7 } else { 9 });
    }
    for s in samples {
        app.push_sample(s);
    }
    assert_eq!(app.time.oom.events, vec![(support::T0 + 2_000, 2)]);
    let s = screen(&app, 80, 24);
    let line = line_starting(&s, "7 Pressure").unwrap_or_default();
    assert!(line.contains("OOM 2"), "{s}");
}
