//! Memory findings of one interval: NUMA misses, THP fallbacks, unused huge page pools and
//! large page tables (the pressure rules are in `pressure`).

use super::{raise, worst, Hit, Severity, Thresholds};
use crate::derive::Derived;
use crate::units::{compact, kb};

pub(super) fn numa_misses(d: &Derived, t: &Thresholds) -> Option<Hit> {
    if d.nodes.len() < 2 {
        return None;
    }
    let hits = d
        .nodes
        .iter()
        .filter_map(|n| {
            let ratio = n.miss_ratio?;
            let total = n.numa_hit_per_s? + n.numa_miss_per_s?;
            if total < t.numa_min_pages_per_s || ratio < t.numa_miss_ratio {
                return None;
            }
            let sev = if ratio >= t.numa_miss_ratio_crit {
                Severity::Crit
            } else {
                Severity::Warn
            };
            let msg = format!(
                "node{} NUMA miss {:.0}% ({} of {} pages/s): allocations spill off-node",
                n.node,
                ratio * 100.0,
                compact(n.numa_miss_per_s),
                compact(Some(total))
            );
            Some((sev, ratio, msg))
        })
        .collect();
    worst(None, hits)
}

pub(super) fn thp_fallback(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let h = &d.hugepages;
    let faults = h
        .thp_fault_alloc_per_s
        .zip(h.thp_fault_fallback_per_s)
        .map(|(a, f)| a + f);
    let fallback = h.thp_fallback_ratio.filter(|r| {
        *r >= t.thp_fallback_ratio && faults.is_some_and(|f| f >= t.thp_min_faults_per_s)
    });
    let stalls = h
        .compact_stall_per_s
        .filter(|s| *s >= t.thp_compact_stall_per_s);
    let setting = |name: &str, v: &Option<String>| {
        v.as_ref()
            .map(|v| format!(" (thp {name} {v})"))
            .unwrap_or_default()
    };
    let (tweak, msg) = match (fallback, stalls) {
        (None, None) => return None,
        (Some(r), None) => (
            "thp.enabled",
            format!(
                "THP fallback {:.0}% of {} faults/s: small pages instead{}",
                r * 100.0,
                compact(faults),
                setting("enabled", &h.thp_enabled)
            ),
        ),
        (r, Some(s)) => (
            "thp.defrag",
            format!(
                "compaction stalls {}/s{}: faults wait{}",
                compact(Some(s)),
                r.map(|r| format!(", THP fallback {:.0}%", r * 100.0))
                    .unwrap_or_default(),
                setting("defrag", &h.thp_defrag)
            ),
        ),
    };
    Some(raise(Severity::Warn, Some(tweak), msg))
}

pub(super) fn hugepages_unused(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let h = &d.hugepages;
    let ram = h.mem_total_kb? as f64;
    let hits = h
        .sizes
        .iter()
        .filter_map(|s| {
            let (pool, unused) = (s.pool_kb.filter(|p| *p > 0)?, s.unused_kb?);
            let (share, pct_ram) = (unused as f64 / pool as f64, unused as f64 / ram * 100.0);
            if share < t.hugepages_unused_share || pct_ram < t.hugepages_unused_min_pct_ram {
                return None;
            }
            let msg = format!(
                "{} huge pages: {} of {} pool unused, {pct_ram:.0}% of RAM pinned for nothing",
                kb(Some(s.size_kb)),
                kb(Some(unused)),
                kb(Some(pool))
            );
            Some((Severity::Warn, unused as f64, msg))
        })
        .collect();
    worst(Some("vm.nr_hugepages"), hits)
}

pub(super) fn pagetables_large(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let h = &d.hugepages;
    let pct = h.page_tables_pct.filter(|p| *p >= t.pagetables_pct)?;
    let sev = if pct >= t.pagetables_pct_crit {
        Severity::Crit
    } else {
        Severity::Warn
    };
    let msg = format!(
        "PageTables {} = {pct:.1}% of RAM {}: huge pages would shrink them",
        kb(h.page_tables_kb),
        kb(h.mem_total_kb)
    );
    Some(raise(sev, Some("vm.nr_hugepages"), msg))
}
