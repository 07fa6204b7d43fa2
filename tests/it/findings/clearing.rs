//! A finding on its way off the strip (issue 41 item 1): while it clears, the strip never shows a
//! number the pane beside it contradicts. The tracker is fed PSI cpu `some` 60, 60, 60 (raised),
//! 47 (still held: above 90% of the 50% trigger), then 9, 9, 9 (clearing, gone on the third); at
//! each sample the strip's percent is compared with the Pressure pane's headline for the same
//! sample.

use super::pressure::psi;
use super::*;
use perftop::findings::strip_rows;
use perftop::view::{pressure, Ctx};

fn cpu_some_at(pct: f64, step: i64) -> Assessed {
    let mut p = Pair::quiet(1.0);
    psi(&mut p, |x| &mut x.cpu, pct, 0.0);
    p.b.time.wall_ms += step * 1000;
    p.derive()
}

/// The percent the Pressure pane's headline shows after ` cpu `.
fn pane_cpu_some(a: &Assessed) -> String {
    let t = Thresholds::default();
    let v = pressure::view(&a.derived, &Ctx::new(&t, false));
    let i = v
        .headline
        .iter()
        .position(|c| c.text == " cpu ")
        .expect("the headline names cpu");
    v.headline[i + 1].text.to_string()
}

/// Every `NN%` in a line.
fn percents(line: &str) -> Vec<String> {
    line.split(|c: char| !(c.is_ascii_digit() || c == '%' || c == '.'))
        .filter(|w| w.ends_with('%') && w.len() > 1)
        .map(str::to_string)
        .collect()
}

#[test]
fn a_clearing_finding_never_shows_a_number_the_pane_contradicts() {
    let mut tr = FindingTracker::new(Thresholds::default());
    let steps = [60.0, 60.0, 60.0, 47.0, 9.0, 9.0, 9.0];
    let mut seen = Vec::new();
    for (i, pct) in steps.into_iter().enumerate() {
        let a = cpu_some_at(pct, i as i64);
        let active = tr.update(&a);
        let rows = strip_lines(&active, 200, 3);
        let pane = pane_cpu_some(&a);
        assert_eq!(
            pane,
            format!("{pct:.0}%"),
            "the pane shows the sample's share"
        );
        for r in &rows {
            for n in percents(r) {
                assert_eq!(n, pane, "step {i}: strip {r:?} beside pane {pane}");
            }
        }
        seen.push((rows.len(), rows.first().cloned()));
    }
    // Raised on the third sample with the sample's own number; held at 47%.
    assert_eq!(seen[1].0, 0);
    assert_eq!(
        seen[2].1.as_deref(),
        Some("WARN runnable tasks waited for a CPU 60% of the time (PSI cpu some)")
    );
    assert_eq!(
        seen[3].1.as_deref(),
        Some("WARN runnable tasks waited for a CPU 47% of the time (PSI cpu some)")
    );
    // At 9%: marked clearing (drawn dimmed), for clear_after - 1 samples, then gone.
    assert_eq!(
        seen[4].1.as_deref(),
        Some("WARN clearing: cpu.pressure below its threshold now, off in 2 samples")
    );
    let a = tr_at_clearing();
    assert!(a.iter().all(|r| r.clearing), "drawn dimmed: {a:?}");
    assert_eq!(
        seen[5].1.as_deref(),
        Some("WARN clearing: cpu.pressure below its threshold now, off in 1 sample")
    );
    assert_eq!(seen[6].0, 0, "cleared on the third sample below 45%");
}

/// The strip rows one sample into clearing.
fn tr_at_clearing() -> Vec<perftop::findings::StripRow> {
    let mut tr = FindingTracker::new(Thresholds::default());
    let mut active = Vec::new();
    for (i, pct) in [60.0, 60.0, 60.0, 9.0].into_iter().enumerate() {
        active = tr.update(&cpu_some_at(pct, i as i64));
    }
    strip_rows(&active, 200, 3)
}

#[test]
fn a_holding_finding_comes_before_a_clearing_one_on_one_line() {
    // Pagetables (crit at 15%) raised and clearing; cpu pressure raised and holding: the one
    // 80-column line is about the finding that holds now.
    let mut tr = FindingTracker::new(Thresholds::default());
    let mut at = |pt: f64, cpu: f64, step: i64| {
        let mut p = Pair::quiet(1.0);
        psi(&mut p, |x| &mut x.cpu, cpu, 0.0);
        p.b.memory.meminfo.page_tables = Some((MEM_TOTAL_KB as f64 * pt / 100.0) as u64);
        p.b.time.wall_ms += step * 1000;
        tr.update(&p.derive())
    };
    for i in 0..3 {
        at(20.0, 60.0, i);
    }
    let active = at(1.0, 60.0, 3);
    let rows = strip_rows(&active, 80, 1);
    assert_eq!(rows.len(), 1);
    assert!(!rows[0].clearing, "{rows:?}");
    assert!(
        rows[0]
            .text
            .starts_with("WARN runnable tasks waited for a CPU 60%"),
        "{rows:?}"
    );
    assert!(rows[0].text.ends_with(" +1 more"), "{rows:?}");
}
