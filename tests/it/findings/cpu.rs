//! The CPU rule (powersave while busy) and threshold overrides.

use super::*;

#[test]
fn cpu_powersave_busy() {
    let mut p = Pair::quiet(10.0);
    p.cpu(0, 50.0, 0.0);
    let f = p.fires("cpu.powersave_busy");
    assert_eq!(
        (f.severity.as_str(), f.pane.as_str(), f.tweak.as_deref()),
        ("info", "cpu", Some("governor"))
    );
    assert_eq!(
        f.message,
        "1 of 4 CPUs >= 50% busy under governor powersave: ramping adds latency"
    );
    p.cpu(0, 49.0, 0.0);
    p.silent("cpu.powersave_busy");
    p.cpu(0, 90.0, 0.0);
    p.b.cpu.freq.policies[0].governor = Some("performance".into());
    p.silent("cpu.powersave_busy");
}

#[test]
fn thresholds_override_rules() {
    let mut p = Pair::quiet(1.0);
    p.b.memory.meminfo.page_tables = Some(MEM_TOTAL_KB / 50); // 2%
    let d = p.derive();
    assert!(d.findings.is_empty());
    let t = Thresholds::from_json_str(r#"{"pagetables_pct": 1.5}"#).expect("valid");
    let ids: Vec<String> = evaluate(&d, &t, None).into_iter().map(|f| f.id).collect();
    assert_eq!(ids, ["pagetables.large"]);
}
