//! The strip's tracker: raises on the third consecutive sample, clears with hysteresis, learns
//! disk baselines.

use super::*;

/// One interval whose PageTables are `pct`% of RAM, `step` seconds into the run.
fn pagetables_at(pct: f64, step: i64) -> Assessed {
    let mut p = Pair::quiet(1.0);
    p.b.memory.meminfo.page_tables = Some((MEM_TOTAL_KB as f64 * pct / 100.0) as u64);
    p.b.time.wall_ms = 1_700_000_000_000 + step * 1000;
    p.derive()
}

fn active_ids(v: &[ActiveFinding]) -> Vec<&str> {
    v.iter().map(|a| a.finding.id.as_str()).collect()
}

#[test]
fn tracker_raises_on_the_third_consecutive_sample() {
    let mut tr = FindingTracker::new(Thresholds::default());
    assert!(tr.update(&pagetables_at(6.0, 0)).is_empty());
    assert!(tr.update(&pagetables_at(6.0, 1)).is_empty());
    let active = tr.update(&pagetables_at(6.0, 2));
    assert_eq!(active_ids(&active), ["pagetables.large"]);
    assert_eq!(active[0].since_ms, 1_700_000_000_000);
    assert_eq!(active[0].samples, 3);
    // A broken streak starts over.
    let mut tr = FindingTracker::new(Thresholds::default());
    for (i, pct) in [6.0, 6.0, 1.0, 6.0, 6.0].into_iter().enumerate() {
        assert!(tr.update(&pagetables_at(pct, i as i64)).is_empty());
    }
    let active = tr.update(&pagetables_at(6.0, 5));
    assert_eq!(active[0].since_ms, 1_700_000_003_000);
    // Since-boot samples and samples without an interval neither count nor break a streak.
    let mut tr = FindingTracker::new(Thresholds::default());
    let mut boot = pagetables_at(6.0, 0);
    boot.derived.since_boot = true;
    let mut no_interval = pagetables_at(1.0, 0);
    no_interval.derived.interval_s = None;
    tr.update(&pagetables_at(6.0, 0));
    tr.update(&boot);
    tr.update(&no_interval);
    assert!(tr.update(&pagetables_at(6.0, 1)).is_empty());
    assert_eq!(
        active_ids(&tr.update(&pagetables_at(6.0, 2))),
        ["pagetables.large"]
    );
}

#[test]
fn tracker_clears_with_hysteresis() {
    let mut tr = FindingTracker::new(Thresholds::default());
    for i in 0..3 {
        tr.update(&pagetables_at(6.0, i));
    }
    // Below the 5% trigger but above 90% of it (4.5%): still raised, numbers follow.
    for i in 3..10 {
        let a = tr.update(&pagetables_at(4.6, i));
        assert_eq!(active_ids(&a), ["pagetables.large"], "step {i}");
        assert!(
            a[0].finding.message.contains("4.6%"),
            "{}",
            a[0].finding.message
        );
    }
    // Below 4.5%: clears on the third such sample, not before.
    assert_eq!(tr.update(&pagetables_at(4.0, 10)).len(), 1);
    assert_eq!(tr.update(&pagetables_at(4.0, 11)).len(), 1);
    assert!(tr.update(&pagetables_at(4.0, 12)).is_empty());
    // Two misses then a hold resets the clear count.
    for i in 13..16 {
        tr.update(&pagetables_at(6.0, i));
    }
    tr.update(&pagetables_at(1.0, 16));
    tr.update(&pagetables_at(1.0, 17));
    assert_eq!(tr.update(&pagetables_at(5.5, 18)).len(), 1);
    tr.update(&pagetables_at(1.0, 19));
    assert_eq!(tr.update(&pagetables_at(1.0, 20)).len(), 1);
    assert!(tr.update(&pagetables_at(1.0, 21)).is_empty());
}

#[test]
fn tracker_never_raises_on_the_relaxed_thresholds() {
    let mut tr = FindingTracker::new(Thresholds::default());
    for i in 0..10 {
        assert!(tr.update(&pagetables_at(4.9, i)).is_empty());
    }
}

#[test]
fn tracker_learns_disk_baselines_and_sorts_by_severity() {
    let mut tr = FindingTracker::new(Thresholds::default());
    for i in 0..6 {
        let mut p = Pair::quiet(1.0);
        p.disk("nvme0n1", Some(false), 1_000.0, 1.0, 1.0);
        p.b.time.wall_ms += i * 1000;
        tr.update(&p.derive());
    }
    assert_eq!(tr.baselines().get("nvme0n1").map(|b| b.samples), Some(6));
    let mut last = Vec::new();
    for i in 6..9 {
        let mut p = Pair::quiet(1.0);
        p.disk("nvme0n1", Some(false), 5_000.0, 5.0, 40.0);
        p.b.memory.meminfo.page_tables = Some(MEM_TOTAL_KB / 16);
        p.b.time.wall_ms += i * 1000;
        last = tr.update(&p.derive());
    }
    assert_eq!(active_ids(&last), ["disk.saturated", "pagetables.large"]);
    assert_eq!(last[0].finding.severity, "crit");
    assert!(last[0].finding.message.contains("vs usual 1.0ms"));
}
