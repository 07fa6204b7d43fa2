//! Memory rules: NUMA misses, THP fallbacks and compaction stalls, unused huge pages, page tables.

use super::*;

#[test]
fn numa_misses() {
    let mut p = Pair::quiet(10.0);
    p.numa(1, 9_000.0, 1_000.0);
    let f = p.fires("numa.misses");
    assert_eq!((f.severity.as_str(), f.pane.as_str()), ("warn", "numa"));
    assert_eq!(
        f.message,
        "node1 NUMA miss 10% (1.0k of 10k pages/s): allocations spill off-node"
    );
    p.numa(1, 9_001.0, 999.0);
    p.silent("numa.misses");
    // Lopsided but idle.
    p.numa(1, 500.0, 400.0);
    p.silent("numa.misses");
    p.numa(1, 6_000.0, 4_000.0);
    assert_eq!(p.fires("numa.misses").severity, "crit");
    // One node cannot miss.
    p.a.nodes.truncate(1);
    p.b.nodes.truncate(1);
    p.numa(0, 6_000.0, 4_000.0);
    p.silent("numa.misses");
}

#[test]
fn thp_fallback_share() {
    let mut p = Pair::quiet(10.0);
    p.vm(|v| &mut v.thp_fault_alloc, 50.0);
    p.vm(|v| &mut v.thp_fault_fallback, 50.0);
    let f = p.fires("thp.fallback");
    assert_eq!(
        (f.pane.as_str(), f.tweak.as_deref()),
        ("hugepages", Some("thp.enabled"))
    );
    assert_eq!(
        f.message,
        "THP fallback 50% of 100 faults/s: small pages instead (thp enabled madvise)"
    );
    p.vm(|v| &mut v.thp_fault_alloc, 51.0);
    p.vm(|v| &mut v.thp_fault_fallback, 49.0);
    p.silent("thp.fallback");
    // All fallbacks, but too few faults to matter.
    p.vm(|v| &mut v.thp_fault_alloc, 0.0);
    p.vm(|v| &mut v.thp_fault_fallback, 9.9);
    p.silent("thp.fallback");
}

#[test]
fn thp_compaction_stalls() {
    let mut p = Pair::quiet(10.0);
    p.vm(|v| &mut v.compact_stall, 5.0);
    let f = p.fires("thp.fallback");
    assert_eq!(f.tweak.as_deref(), Some("thp.defrag"));
    assert_eq!(
        f.message,
        "compaction stalls 5/s: faults wait (thp defrag madvise)"
    );
    p.vm(|v| &mut v.thp_fault_fallback, 80.0);
    p.vm(|v| &mut v.thp_fault_alloc, 20.0);
    assert_eq!(
        p.fires("thp.fallback").message,
        "compaction stalls 5/s, THP fallback 80%: faults wait (thp defrag madvise)"
    );
    let mut p = Pair::quiet(10.0);
    p.vm(|v| &mut v.compact_stall, 4.9);
    p.silent("thp.fallback");
}

#[test]
fn hugepages_unused() {
    let mut p = Pair::quiet(1.0);
    let pool = |total: u64, free: u64, rsvd: u64| HugePageSize {
        size_kb: 2048,
        total: Some(total),
        free: Some(free),
        rsvd: Some(rsvd),
        surp: Some(0),
        overcommit: Some(0),
    };
    p.b.memory.hugepage_sizes = vec![pool(1000, 750, 0)];
    let f = p.fires("hugepages.unused");
    assert_eq!(
        (f.pane.as_str(), f.tweak.as_deref()),
        ("hugepages", Some("vm.nr_hugepages"))
    );
    assert_eq!(
        f.message,
        "2.0M huge pages: 1.5G of 2.0G pool unused, 9% of RAM pinned for nothing"
    );
    p.b.memory.hugepage_sizes = vec![pool(1000, 749, 0)];
    p.silent("hugepages.unused");
    // Free but reserved by a mapping: in use.
    p.b.memory.hugepage_sizes = vec![pool(1000, 900, 200)];
    p.silent("hugepages.unused");
    // All free but a small pool (under 1% of RAM).
    p.b.memory.hugepage_sizes = vec![pool(80, 80, 0)];
    p.silent("hugepages.unused");
}

#[test]
fn pagetables_large() {
    let mut p = Pair::quiet(1.0);
    let pct = |x: f64| (MEM_TOTAL_KB as f64 * x / 100.0) as u64;
    p.b.memory.meminfo.page_tables = Some(pct(5.0) + 1);
    let f = p.fires("pagetables.large");
    assert_eq!(
        (f.severity.as_str(), f.tweak.as_deref()),
        ("warn", Some("vm.nr_hugepages"))
    );
    assert_eq!(
        f.message,
        "PageTables 819M = 5.0% of RAM 16G: huge pages would shrink them"
    );
    p.b.memory.meminfo.page_tables = Some(pct(5.0) - 1);
    p.silent("pagetables.large");
    // The seeds' Oracle box: 5 GB of page tables on 20 GB.
    p.b.memory.meminfo.page_tables = Some(5_007_924);
    p.b.memory.meminfo.mem_total = Some(20_549_012);
    assert_eq!(p.fires("pagetables.large").severity, "crit");
}
