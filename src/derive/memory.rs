//! Memory metrics: per-node memory and NUMA rates, HugePages/THP, and the dirty/writeback gauge
//! against the kernel's background, freerun and hard thresholds.

use super::pressure::ReclaimMetrics;
use super::{ratio, Interval};
use crate::pagesize::{self, PageKbFrom};
use crate::sample::{Sample, VmStat};
use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize)]
pub struct NodeMetrics {
    pub node: u32,
    pub cpus: Vec<u32>,
    pub mem_total_kb: Option<u64>,
    pub mem_free_kb: Option<u64>,
    pub mem_used_kb: Option<u64>,
    pub file_kb: Option<u64>,
    pub anon_kb: Option<u64>,
    pub dirty_kb: Option<u64>,
    pub writeback_kb: Option<u64>,
    pub slab_kb: Option<u64>,
    /// numastat counts are pages; these are pages per second.
    pub numa_hit_per_s: Option<f64>,
    pub numa_miss_per_s: Option<f64>,
    pub numa_foreign_per_s: Option<f64>,
    pub local_per_s: Option<f64>,
    pub other_per_s: Option<f64>,
    /// numa_miss / (numa_hit + numa_miss) over the interval, 0..1.
    pub miss_ratio: Option<f64>,
    pub distance: Vec<u32>,
    pub hugepages: Vec<NodeHugePageMetrics>,
    /// The memory columns (not the numastat rates) are read every this many samples when
    /// samples come faster than a second (`NodeSample::meminfo_every`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meminfo_every: Option<u32>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct NodeHugePageMetrics {
    pub size_kb: u64,
    pub total: Option<u64>,
    pub free: Option<u64>,
    pub surplus: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct HugePageSizeMetrics {
    pub size_kb: u64,
    pub total: Option<u64>,
    pub free: Option<u64>,
    pub rsvd: Option<u64>,
    pub surp: Option<u64>,
    /// Memory pinned by the pool, kB.
    pub pool_kb: Option<u64>,
    /// Pages neither in use nor reserved: memory held for nothing, kB.
    pub unused_kb: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct HugePageMetrics {
    pub sizes: Vec<HugePageSizeMetrics>,
    pub mem_total_kb: Option<u64>,
    pub hugetlb_kb: Option<u64>,
    pub anon_huge_kb: Option<u64>,
    pub shmem_huge_kb: Option<u64>,
    pub file_huge_kb: Option<u64>,
    pub page_tables_kb: Option<u64>,
    pub page_tables_pct: Option<f64>,
    pub thp_enabled: Option<String>,
    pub thp_defrag: Option<String>,
    pub thp_fault_alloc_per_s: Option<f64>,
    pub thp_fault_fallback_per_s: Option<f64>,
    /// fallback / (alloc + fallback) over the interval, 0..1.
    pub thp_fallback_ratio: Option<f64>,
    pub thp_collapse_alloc_per_s: Option<f64>,
    pub thp_collapse_alloc_failed_per_s: Option<f64>,
    pub compact_stall_per_s: Option<f64>,
    pub compact_fail_per_s: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct DirtyMetrics {
    pub dirty_kb: Option<u64>,
    pub writeback_kb: Option<u64>,
    pub writeback_tmp_kb: Option<u64>,
    pub background_threshold_kb: Option<u64>,
    /// (threshold + background) / 2: above it, writers start being throttled.
    pub freerun_kb: Option<u64>,
    pub threshold_kb: Option<u64>,
    /// `below_background`, `background` or `throttled`.
    pub state: Option<String>,
    pub dirty_ratio: Option<u64>,
    pub dirty_bytes: Option<u64>,
    pub dirty_background_ratio: Option<u64>,
    pub dirty_background_bytes: Option<u64>,
    pub dirty_expire_centisecs: Option<u64>,
    pub dirty_writeback_centisecs: Option<u64>,
    /// `bytes` when vm.dirty_bytes is set (it overrides the ratio), else `ratio`.
    pub limit_from: Option<String>,
    pub background_limit_from: Option<String>,
    pub dirtied_kb_per_s: Option<f64>,
    pub written_kb_per_s: Option<f64>,
    pub page_kb: u64,
}

/// The sample's page size in kB and how it was learnt (see `crate::pagesize`).
pub fn page_kb(s: &Sample) -> (u64, PageKbFrom) {
    let m = &s.memory;
    pagesize::of(&m.meminfo, &m.vmstat, m.page_kb.zip(m.page_kb_from))
}

/// The machine's memory from `/proc/meminfo`, and how much of it the NUMA nodes describe.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MemoryMetrics {
    pub mem_total_kb: Option<u64>,
    pub mem_free_kb: Option<u64>,
    pub mem_available_kb: Option<u64>,
    /// Why `mem_available_kb` is unknown: a kernel before 3.14 prints no `MemAvailable`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mem_available_unknown: Option<String>,
    pub buffers_kb: Option<u64>,
    pub cached_kb: Option<u64>,
    pub swap_total_kb: Option<u64>,
    pub swap_free_kb: Option<u64>,
    pub committed_as_kb: Option<u64>,
    pub commit_limit_kb: Option<u64>,
    /// The nodes' MemTotal summed; unknown when a node's meminfo could not be read. It can
    /// be far below MemTotal (memory hot-plugged in a VM, a node file covering 12 of 128 GB).
    pub nodes_total_kb: Option<u64>,
    /// nodes_total_kb / mem_total_kb, in %: under 95 the node table is not the machine.
    pub nodes_cover_pct: Option<f64>,
    pub page_kb: u64,
    /// `host`, `inferred` or `default`.
    pub page_kb_from: PageKbFrom,
    /// Swap, reclaim, OOM kills and the reclaim policy over the interval.
    #[serde(flatten)]
    pub reclaim: ReclaimMetrics,
    /// Per node: free memory against the zones' watermarks summed (`/proc/zoneinfo`); empty
    /// when zoneinfo was not read (older recordings, a root without it).
    pub watermarks: Vec<NodeWatermarks>,
    /// The processes the OOM killer killed in this sample, from the kernel log (`/dev/kmsg`;
    /// absent when none, unknown with `host.kernel_events_unknown`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub oom_victims: Vec<crate::sample::OomVictim>,
}

/// A node's free memory and its zones' watermarks (zones with managed pages), in kB. kswapd
/// wakes when a zone falls below low and sleeps at high; below min, allocations reclaim
/// themselves (direct reclaim) and only atomic ones may dip further.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NodeWatermarks {
    pub node: u32,
    /// The node's MemFree (node meminfo), read every sample.
    pub free_kb: Option<u64>,
    pub min_kb: Option<u64>,
    pub low_kb: Option<u64>,
    pub high_kb: Option<u64>,
    pub managed_kb: Option<u64>,
    /// The zones summed, as `Normal`, `DMA32`, ...
    pub zones: Vec<String>,
}

/// Nodes holding less than this share of MemTotal are flagged as not describing the machine.
pub const NODES_COVER_MIN_PCT: f64 = 95.0;

pub fn derive_memory(iv: Interval, prev: Option<&Sample>, cur: &Sample) -> MemoryMetrics {
    let mi = &cur.memory.meminfo;
    let (page_kb, page_kb_from) = page_kb(cur);
    let nodes_total_kb = if cur.nodes.is_empty() {
        None
    } else {
        cur.nodes.iter().try_fold(0u64, |sum, n| {
            Some(sum.saturating_add(n.meminfo.mem_total?))
        })
    };
    MemoryMetrics {
        mem_total_kb: mi.mem_total,
        mem_free_kb: mi.mem_free,
        mem_available_kb: mi.mem_available,
        mem_available_unknown: (mi.mem_available.is_none() && mi.mem_total.is_some())
            .then(|| "no MemAvailable in /proc/meminfo (Linux 3.14 added it)".into()),
        buffers_kb: mi.buffers,
        cached_kb: mi.cached,
        swap_total_kb: mi.swap_total,
        swap_free_kb: mi.swap_free,
        committed_as_kb: mi.committed_as,
        commit_limit_kb: mi.commit_limit,
        nodes_total_kb,
        nodes_cover_pct: nodes_total_kb
            .zip(mi.mem_total)
            .and_then(|(n, t)| ratio(n as f64 * 100.0, t as f64)),
        page_kb,
        page_kb_from,
        reclaim: super::pressure::derive_reclaim(iv, prev, cur, page_kb),
        watermarks: watermarks(cur, page_kb),
        oom_victims: Vec::new(),
    }
}

fn watermarks(cur: &Sample, page_kb: u64) -> Vec<NodeWatermarks> {
    let mut out: Vec<NodeWatermarks> = Vec::new();
    for z in cur
        .memory
        .zones
        .iter()
        .filter(|z| z.managed.unwrap_or(0) > 0)
    {
        let at = match out.iter().position(|w| w.node == z.node) {
            Some(i) => i,
            None => {
                let free_kb = cur
                    .nodes
                    .iter()
                    .find(|n| n.id == z.node)
                    .and_then(|n| n.meminfo.mem_free);
                out.push(NodeWatermarks {
                    node: z.node,
                    free_kb,
                    min_kb: Some(0),
                    low_kb: Some(0),
                    high_kb: Some(0),
                    managed_kb: Some(0),
                    zones: Vec::new(),
                });
                out.len() - 1
            }
        };
        let w = &mut out[at];
        // One unknown zone makes the node's sum unknown, never short.
        let add = |sum: Option<u64>, v: Option<u64>| Some(sum? + v? * page_kb);
        w.min_kb = add(w.min_kb, z.min);
        w.low_kb = add(w.low_kb, z.low);
        w.high_kb = add(w.high_kb, z.high);
        w.managed_kb = add(w.managed_kb, z.managed);
        w.zones.push(z.name.clone());
    }
    out.sort_by_key(|w| w.node);
    out
}

pub fn derive_nodes(iv: Interval, prev: Option<&Sample>, cur: &Sample) -> Vec<NodeMetrics> {
    let before: std::collections::HashMap<u32, &crate::sample::NodeSample> = prev
        .map(|p| p.nodes.iter().map(|x| (x.id, x)).collect())
        .unwrap_or_default();
    cur.nodes
        .iter()
        .map(|n| {
            let p = before.get(&n.id).copied();
            let d = |f: fn(&crate::sample::NumaStat) -> Option<u64>| {
                iv.d64(p.and_then(|p| f(&p.numastat)), f(&n.numastat)?)
            };
            let hit = d(|s| s.numa_hit);
            let miss = d(|s| s.numa_miss);
            let m = &n.meminfo;
            NodeMetrics {
                node: n.id,
                cpus: n
                    .cpus
                    .as_ref()
                    .map(|l| l.ids().to_vec())
                    .unwrap_or_default(),
                mem_total_kb: m.mem_total,
                mem_free_kb: m.mem_free,
                mem_used_kb: m
                    .mem_used
                    .or_else(|| Some(m.mem_total?.saturating_sub(m.mem_free?))),
                file_kb: m.file_pages,
                anon_kb: m.anon_pages,
                dirty_kb: m.dirty,
                writeback_kb: m.writeback,
                slab_kb: m.slab,
                numa_hit_per_s: iv.rate(hit),
                numa_miss_per_s: iv.rate(miss),
                numa_foreign_per_s: iv.rate(d(|s| s.numa_foreign)),
                local_per_s: iv.rate(d(|s| s.local_node)),
                other_per_s: iv.rate(d(|s| s.other_node)),
                miss_ratio: hit
                    .zip(miss)
                    .and_then(|(h, m)| ratio(m as f64, h as f64 + m as f64)),
                distance: n.distance.clone(),
                hugepages: n
                    .hugepages
                    .iter()
                    .map(|h| NodeHugePageMetrics {
                        size_kb: h.size_kb,
                        total: h.total,
                        free: h.free,
                        surplus: h.surplus,
                    })
                    .collect(),
                meminfo_every: n.meminfo_every,
            }
        })
        .collect()
}

fn vm_rate(
    iv: Interval,
    prev: Option<&Sample>,
    cur: &Sample,
    f: fn(&VmStat) -> Option<u64>,
) -> Option<u64> {
    iv.d64(
        prev.and_then(|p| f(&p.memory.vmstat)),
        f(&cur.memory.vmstat)?,
    )
}

pub fn derive_hugepages(iv: Interval, prev: Option<&Sample>, cur: &Sample) -> HugePageMetrics {
    let mi = &cur.memory.meminfo;
    let mut sizes: Vec<HugePageSizeMetrics> = cur
        .memory
        .hugepage_sizes
        .iter()
        .map(|h| size_metrics(h.size_kb, h.total, h.free, h.rsvd, h.surp))
        .collect();
    // Kernels without sysfs hugepages still report the default pool in meminfo.
    if sizes.is_empty() {
        if let Some(size_kb) = mi.hugepagesize {
            sizes.push(size_metrics(
                size_kb,
                mi.huge_pages_total,
                mi.huge_pages_free,
                mi.huge_pages_rsvd,
                mi.huge_pages_surp,
            ));
        }
    }
    let d = |f: fn(&VmStat) -> Option<u64>| vm_rate(iv, prev, cur, f);
    let alloc = d(|v| v.thp_fault_alloc);
    let fallback = d(|v| v.thp_fault_fallback);
    HugePageMetrics {
        sizes,
        mem_total_kb: mi.mem_total,
        hugetlb_kb: mi.hugetlb,
        anon_huge_kb: mi.anon_huge_pages,
        shmem_huge_kb: mi.shmem_huge_pages,
        file_huge_kb: mi.file_huge_pages,
        page_tables_kb: mi.page_tables,
        page_tables_pct: mi
            .page_tables
            .zip(mi.mem_total)
            .and_then(|(p, t)| ratio(p as f64 * 100.0, t as f64)),
        thp_enabled: cur.memory.thp.enabled.clone(),
        thp_defrag: cur.memory.thp.defrag.clone(),
        thp_fault_alloc_per_s: iv.rate(alloc),
        thp_fault_fallback_per_s: iv.rate(fallback),
        thp_fallback_ratio: alloc
            .zip(fallback)
            .and_then(|(a, f)| ratio(f as f64, a as f64 + f as f64)),
        thp_collapse_alloc_per_s: iv.rate(d(|v| v.thp_collapse_alloc)),
        thp_collapse_alloc_failed_per_s: iv.rate(d(|v| v.thp_collapse_alloc_failed)),
        compact_stall_per_s: iv.rate(d(|v| v.compact_stall)),
        compact_fail_per_s: iv.rate(d(|v| v.compact_fail)),
    }
}

fn size_metrics(
    size_kb: u64,
    total: Option<u64>,
    free: Option<u64>,
    rsvd: Option<u64>,
    surp: Option<u64>,
) -> HugePageSizeMetrics {
    HugePageSizeMetrics {
        size_kb,
        total,
        free,
        rsvd,
        surp,
        pool_kb: total.map(|t| t.saturating_mul(size_kb)),
        unused_kb: free
            .zip(rsvd)
            .map(|(f, r)| f.saturating_sub(r).saturating_mul(size_kb)),
    }
}

pub fn derive_dirty(iv: Interval, prev: Option<&Sample>, cur: &Sample) -> DirtyMetrics {
    let (page, _) = page_kb(cur);
    let vm = &cur.memory.vmstat;
    let mi = &cur.memory.meminfo;
    let sys = &cur.memory.dirty;
    let kb = |pages: Option<u64>| pages.map(|p| p.saturating_mul(page));
    let bg = vm.nr_dirty_background_threshold;
    let hard = vm.nr_dirty_threshold;
    let freerun = bg
        .zip(hard)
        .map(|(b, h)| b / 2 + h / 2 + (b % 2 + h % 2) / 2);
    // The kernel's own rule (balance_dirty_pages): background writeback starts when dirty
    // pages pass the background threshold; writers are throttled once dirty + writeback pass
    // the freerun ceiling.
    let state = match (vm.nr_dirty, vm.nr_writeback, bg, freerun) {
        (Some(d), Some(w), Some(bg), Some(fr)) => Some(if d.saturating_add(w) > fr {
            "throttled"
        } else if d > bg {
            "background"
        } else {
            "below_background"
        }),
        _ => None,
    };
    let from = |bytes: Option<u64>, ratio: Option<u64>| match (bytes, ratio) {
        (Some(b), _) if b > 0 => Some("bytes".to_string()),
        (_, Some(_)) => Some("ratio".to_string()),
        _ => None,
    };
    let d = |f: fn(&VmStat) -> Option<u64>| vm_rate(iv, prev, cur, f);
    // Gauge, state and thresholds all from the one read of /proc/vmstat: meminfo's Dirty is
    // the same counter read at another instant, and under write load a bar from one file
    // against markers from the other can disagree with the state printed beside it.
    DirtyMetrics {
        dirty_kb: kb(vm.nr_dirty).or(mi.dirty),
        writeback_kb: kb(vm.nr_writeback).or(mi.writeback),
        writeback_tmp_kb: kb(vm.nr_writeback_temp).or(mi.writeback_tmp),
        background_threshold_kb: kb(bg),
        freerun_kb: kb(freerun),
        threshold_kb: kb(hard),
        state: state.map(str::to_string),
        dirty_ratio: sys.ratio,
        dirty_bytes: sys.bytes,
        dirty_background_ratio: sys.background_ratio,
        dirty_background_bytes: sys.background_bytes,
        dirty_expire_centisecs: sys.expire_centisecs,
        dirty_writeback_centisecs: sys.writeback_centisecs,
        limit_from: from(sys.bytes, sys.ratio),
        background_limit_from: from(sys.background_bytes, sys.background_ratio),
        dirtied_kb_per_s: iv.rate(d(|v| v.nr_dirtied)).map(|r| r * page as f64),
        written_kb_per_s: iv.rate(d(|v| v.nr_written)).map(|r| r * page as f64),
        page_kb: page,
    }
}
