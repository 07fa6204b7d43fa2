//! `numa-2node-memless`: a memory-only node, 1G + 2M huge pages, writers throttled.

use super::*;

#[test]
fn numa_memoryless_node_and_miss_ratio() {
    let Fx { t1, d, .. } = load_clean("numa-2node-memless");
    approx(d.interval_s, 2.0);
    assert_eq!(d.nodes.len(), 2);
    // node1's cpulist file is empty: a memory-only node, known to have no CPUs.
    assert_eq!(t1.nodes[1].cpus.as_ref().map(|l| l.is_empty()), Some(true));
    let n0 = node(&d, 0);
    let n1 = node(&d, 1);
    assert_eq!(n0.cpus, vec![0, 1, 2, 3]);
    assert!(n1.cpus.is_empty());
    assert!(d.cpus.iter().all(|c| c.node == Some(0)));
    assert_eq!(n0.distance, vec![10, 20]);
    assert_eq!(n1.distance, vec![20, 10]);
    // node0: hit +10000, miss +0, foreign +2500 over 2 s.
    approx(n0.numa_hit_per_s, 5000.0);
    approx(n0.numa_foreign_per_s, 1250.0);
    approx(n0.miss_ratio, 0.0);
    // node1: hit +7500, miss +2500 -> 2500 / (7500 + 2500) = 0.25; other_node +10000 -> 5000/s.
    approx(n1.numa_hit_per_s, 3750.0);
    approx(n1.numa_miss_per_s, 1250.0);
    approx(n1.miss_ratio, 0.25);
    approx(n1.other_per_s, 5000.0);
    approx(n1.local_per_s, 0.0);
    assert_eq!(n1.mem_total_kb, Some(32_000_000));
    assert_eq!(n1.mem_used_kb, Some(26_000_000)); // MemUsed line
    assert_eq!(n0.dirty_kb, Some(1_120_000));
    // per-node pools, ascending by size
    let sizes = |n: &NodeMetrics| -> Vec<(u64, Option<u64>, Option<u64>)> {
        n.hugepages
            .iter()
            .map(|h| (h.size_kb, h.total, h.free))
            .collect()
    };
    assert_eq!(
        sizes(n0),
        vec![(2048, Some(512), Some(100)), (1_048_576, Some(2), Some(0))]
    );
    assert_eq!(
        sizes(n1),
        vec![(2048, Some(0), Some(0)), (1_048_576, Some(2), Some(2))]
    );
}

#[test]
fn numa_hugepages_thp_and_throttled_dirty() {
    let Fx { d, .. } = load_clean("numa-2node-memless");
    let h = &d.hugepages;
    let sizes: Vec<u64> = h.sizes.iter().map(|s| s.size_kb).collect();
    assert_eq!(sizes, vec![2048, 1_048_576]);
    // 2M: 512 pages = 1_048_576 kB pinned; free 100 - rsvd 50 = 50 unused = 102_400 kB.
    let s2m = &h.sizes[0];
    assert_eq!(
        (s2m.total, s2m.free, s2m.rsvd),
        (Some(512), Some(100), Some(50))
    );
    assert_eq!(s2m.pool_kb, Some(1_048_576));
    assert_eq!(s2m.unused_kb, Some(102_400));
    // 1G: 4 pages = 4_194_304 kB; free 2 - rsvd 1 = 1 unused = 1_048_576 kB.
    let s1g = &h.sizes[1];
    assert_eq!(s1g.pool_kb, Some(4_194_304));
    assert_eq!(s1g.unused_kb, Some(1_048_576));
    assert_eq!(h.hugetlb_kb, Some(5_242_880)); // 4 GiB + 1 GiB
    assert_eq!(h.anon_huge_kb, Some(4_194_304));
    approx(h.page_tables_pct, 250_000.0 / 64_000_000.0 * 100.0);
    assert_eq!(h.thp_enabled.as_deref(), Some("always"));
    assert_eq!(h.thp_defrag.as_deref(), Some("madvise"));
    // thp_fault_alloc +300, fallback +100 over 2 s; ratio 100/400.
    approx(h.thp_fault_alloc_per_s, 150.0);
    approx(h.thp_fault_fallback_per_s, 50.0);
    approx(h.thp_fallback_ratio, 0.25);
    approx(h.compact_stall_per_s, 5.0); // +10
    approx(h.compact_fail_per_s, 2.0); // +4
    approx(h.thp_collapse_alloc_per_s, 1.0); // +2

    // Thresholds are vmstat pages * page size, 4 kB as the kB/pages pairs say (Mapped
    // 1_280_000 kB / nr_mapped 320_000, Shmem 2000 / nr_shmem 500, PageTables 250_000 /
    // nr_page_table_pages 62_500, AnonPages 4_000_000 / nr_anon_pages 1_000_000):
    // background 200_000 -> 800_000 kB, hard 400_000 -> 1_600_000 kB, freerun 300_000 ->
    // 1_200_000 kB. nr_dirty 280_000 + nr_writeback 40_000 = 320_000 > 300_000: throttled.
    let dm = &d.dirty;
    assert_eq!(dm.page_kb, 4);
    assert_eq!(dm.state.as_deref(), Some("throttled"));
    assert_eq!(dm.background_threshold_kb, Some(800_000));
    assert_eq!(dm.freerun_kb, Some(1_200_000));
    assert_eq!(dm.threshold_kb, Some(1_600_000));
    assert_eq!(dm.dirty_kb, Some(1_120_000));
    assert_eq!(dm.writeback_kb, Some(160_000));
    approx(dm.dirtied_kb_per_s, 200_000.0); // +100_000 pages / 2 s * 4
    approx(dm.written_kb_per_s, 180_000.0); // +90_000 pages / 2 s * 4
                                            // 4 CPUs, no cpufreq and no cpuidle directory: states empty, frequency unknown.
    assert!(d
        .cpus
        .iter()
        .all(|c| c.states.is_empty() && c.mhz.is_none()));
    approx(cpu(&d, 1).c0_pct, 100.0);
    approx(cpu(&d, 3).c0_pct, 0.0);
}
