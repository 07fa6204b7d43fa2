//! Quiet systems give no findings: synthetic quiet pairs, an idle VM fixture, the first
//! (since-boot) report; every rule id is known.

use super::*;

#[test]
fn quiet_pairs_give_no_findings() {
    for secs in [1.0, 10.0] {
        let d = Pair::quiet(secs).derive();
        assert!(!d.since_boot);
        assert_eq!(d.findings, vec![], "quiet pair over {secs}s");
    }
}

#[test]
fn idle_vm_fixture_gives_no_findings() {
    let t0 = read_root(&fixture("vm-idle/t0"));
    let t1 = read_root(&fixture("vm-idle/t1"));
    assert!(t0.problems.is_empty() && t1.problems.is_empty());
    let d = derive(Some(&t0), &t1);
    assert!(d.interval_s.is_some_and(|s| s > 1.0));
    assert_eq!(d.findings, vec![]);
    let mut tracker = FindingTracker::new(Thresholds::default());
    for _ in 0..5 {
        assert_eq!(tracker.update(&d), vec![]);
    }
}

/// The machine the tests run on, over one second. Only meaningful on an idle machine (a
/// parallel `cargo test` is not idle), so it is opt-in: `cargo test --test it findings:: -- --ignored`.
#[test]
#[ignore = "needs an idle machine (a parallel cargo test is not): cargo test --test it findings:: -- --ignored"]
fn this_idle_machine_gives_no_findings() {
    let mut reader = Reader::new(Root::new("/"));
    let a = reader.sample();
    std::thread::sleep(std::time::Duration::from_secs(1));
    let b = reader.sample();
    assert_eq!(derive(Some(&a), &b).findings, vec![]);
}

#[test]
fn since_boot_gives_no_findings() {
    let mut p = Pair::quiet(10.0);
    p.b.memory.meminfo.page_tables = Some(MEM_TOTAL_KB / 4);
    p.b.memory.vmstat.nr_dirty = Some(397_500); // 1_590_000 kB
    assert!(!p.ids().is_empty());
    let d = derive(None, &p.b);
    assert!(d.since_boot);
    assert_eq!(d.findings, vec![]);
}

#[test]
fn every_rule_id_is_known_and_findings_carry_pane_and_severity() {
    let mut p = Pair::quiet(10.0);
    p.b.memory.meminfo.page_tables = Some(MEM_TOTAL_KB / 10);
    p.b.memory.vmstat.nr_dirty = Some(225_000); // 900_000 kB
    p.nic_drops(50.0);
    let found = p.derive().findings;
    // pagetables.large, dirty.background and net.drops: a check over nothing would pass.
    assert!(found.len() >= 3, "{found:?}");
    for f in found {
        assert!(RULE_IDS.contains(&f.id.as_str()), "{}", f.id);
        assert!(["info", "warn", "crit"].contains(&f.severity.as_str()));
        assert!(
            ["cpu", "numa", "hugepages", "dirty", "disks", "softirq"].contains(&f.pane.as_str())
        );
    }
}
