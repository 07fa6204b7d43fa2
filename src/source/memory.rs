//! Memory readers: `/proc/meminfo`, `/proc/vmstat`, the `vm.dirty_*` sysctls, huge page pools,
//! THP modes and per-node meminfo/numastat/distance/hugepages.

use super::parse::{bracketed_choice, kv_lines};
use super::Probe;
use crate::cpulist::CpuList;
use crate::sample::{
    DirtySysctls, HugePageSize, Meminfo, MemorySample, NodeHugePages, NodeSample, NumaStat, Thp,
    VmStat, VmSysctls,
};

const NODE_DIR: &str = "sys/devices/system/node";
const HUGE_DIR: &str = "sys/kernel/mm/hugepages";
const THP_DIR: &str = "sys/kernel/mm/transparent_hugepage";

pub fn read_memory(probe: &mut Probe) -> MemorySample {
    let mut meminfo = Meminfo::default();
    probe.with_text("proc/meminfo", true, |probe, text| {
        table(probe, "proc/meminfo", text, |k, v| {
            meminfo.set(k, v);
        });
    });
    let mut vmstat = VmStat::default();
    let mut split = ZoneSplit::default();
    let mut refault = None;
    probe.with_text("proc/vmstat", true, |probe, text| {
        table(probe, "proc/vmstat", text, |k, v| {
            if !vmstat.set(k, v) {
                split.add(k, v);
            }
            if matches!(k, "workingset_refault_anon" | "workingset_refault_file") {
                let sum = refault.get_or_insert(0u64);
                *sum = sum.wrapping_add(v);
            }
        });
    });
    split.fill(&mut vmstat);
    if vmstat.workingset_refault.is_none() {
        vmstat.workingset_refault = refault;
    }
    // Sysctls change only when someone writes them: the settings tier (re-read within 10
    // samples, every sample at intervals of 2 s or more, and on the sample after a perftop
    // tweak). The dirty gauge's thresholds are the kernel's own (`nr_dirty_threshold` in
    // vmstat, every sample); these say why they are what they are.
    let vm = VmSysctls {
        swappiness: probe.setting_u64("proc/sys/vm/swappiness"),
        min_free_kbytes: probe.setting_u64("proc/sys/vm/min_free_kbytes"),
        watermark_scale_factor: probe.setting_u64("proc/sys/vm/watermark_scale_factor"),
        overcommit_memory: probe.setting_u64("proc/sys/vm/overcommit_memory"),
        overcommit_ratio: probe.setting_u64("proc/sys/vm/overcommit_ratio"),
        zone_reclaim_mode: probe.setting_u64("proc/sys/vm/zone_reclaim_mode"),
    };
    let dirty = DirtySysctls {
        ratio: probe.setting_u64("proc/sys/vm/dirty_ratio"),
        bytes: probe.setting_u64("proc/sys/vm/dirty_bytes"),
        background_ratio: probe.setting_u64("proc/sys/vm/dirty_background_ratio"),
        background_bytes: probe.setting_u64("proc/sys/vm/dirty_background_bytes"),
        expire_centisecs: probe.setting_u64("proc/sys/vm/dirty_expire_centisecs"),
        writeback_centisecs: probe.setting_u64("proc/sys/vm/dirty_writeback_centisecs"),
    };
    let mut hugepage_sizes = Vec::new();
    for (size_kb, dir) in size_dirs(probe, HUGE_DIR) {
        // A setting (`vm.nr_overcommit_hugepages`); the pool's counts are not.
        let overcommit = probe.setting_u64(&format!("{dir}/nr_overcommit_hugepages"));
        if let Some(pool) = default_pool(&meminfo, size_kb, overcommit) {
            hugepage_sizes.push(pool);
            continue;
        }
        // An empty pool that cannot grow by itself (no overcommit, so no surplus pages) fills
        // only when someone writes its size: a setting until then (shown within the tier's
        // 10 s, at once after a perftop write). A pool with pages is read every sample.
        let total = match overcommit {
            Some(0) => match probe.setting_u64(&format!("{dir}/nr_hugepages")) {
                Some(0) => Some(0),
                _ => probe.u64_in(&dir, "nr_hugepages"),
            },
            _ => probe.u64_in(&dir, "nr_hugepages"),
        };
        // The kernel's count of huge pages includes the free, reserved and surplus ones
        // (each a subset of it): an empty pool has none to read.
        let pool = |probe: &mut Probe, f: &str| match total {
            Some(0) => Some(0),
            _ => probe.u64_in(&dir, f),
        };
        hugepage_sizes.push(HugePageSize {
            size_kb,
            total,
            free: pool(probe, "free_hugepages"),
            rsvd: pool(probe, "resv_hugepages"),
            surp: pool(probe, "surplus_hugepages"),
            overcommit,
        });
    }
    let (enabled, enabled_choices) = choice(probe, &format!("{THP_DIR}/enabled"));
    let (defrag, defrag_choices) = choice(probe, &format!("{THP_DIR}/defrag"));
    MemorySample {
        page_kb: None,
        page_kb_from: None,
        meminfo,
        vmstat,
        dirty,
        hugepage_sizes,
        thp: Thp {
            enabled,
            defrag,
            enabled_choices,
            defrag_choices,
        },
        vm,
        kthreads: Vec::new(),
        zones: Vec::new(),
    }
}

pub fn read_nodes(probe: &mut Probe) -> Vec<NodeSample> {
    // Nodes only come and go with memory hotplug: listed once per refresh.
    let ids = probe.static_entries(NODE_DIR, "node");
    // A lone node's huge page pools are the host's (`fill_lone_node_pools`).
    let lone = ids.len() == 1;
    let mut nodes = Vec::with_capacity(ids.len());
    for (i, id) in ids.into_iter().enumerate() {
        let dir = format!("{NODE_DIR}/node{id}");
        let rel = format!("{dir}/cpulist");
        let cpus = match probe.static_line(&rel) {
            Some(l) => CpuList::parse(&l).or_else(|| {
                // Garbled is unknown, not "no CPUs" (that would claim a memory-only node).
                probe.note(&rel, "not a cpu list");
                None
            }),
            // A memory-only node has an empty cpulist file, which reads as no line.
            None => probe.root.exists(&rel).then(CpuList::default),
        };
        let mut node = NodeSample {
            id,
            cpus,
            ..NodeSample::default()
        };
        // Gauges only (free, file, anon pages...): when samples come faster than a second,
        // each node's are read about once a second, in turns, and carried between as last
        // read (the sample says so: `meminfo_every`). ~17 µs of kernel time a read here.
        let every = probe.tier.detail_every;
        let kept = probe.cache.node_meminfo.get(&id).filter(|_| {
            every > 1 && !probe.tier.tweaked && !super::turns::due(i, probe.tier.sample_no, every)
        });
        match kept {
            Some(m) => node.meminfo = m.clone(),
            None => {
                let rel = format!("{dir}/meminfo");
                let read = probe.with_text(&rel, false, |probe, text| {
                    table(probe, &rel, text, |k, v| {
                        node.meminfo.set(k, v);
                    });
                });
                // Unreadable: read again next sample (and noted), never carried.
                match read.filter(|_| every > 1) {
                    Some(()) => probe.cache.node_meminfo.insert(id, node.meminfo.clone()),
                    None => probe.cache.node_meminfo.remove(&id),
                };
            }
        }
        node.meminfo_every = (every > 1).then_some(every);
        let rel = format!("{dir}/numastat");
        probe.with_text(&rel, false, |probe, text| {
            let mut stat = NumaStat::default();
            table(probe, &rel, text, |k, v| {
                stat.set(k, v);
            });
            node.numastat = stat;
        });
        node.distance = probe
            .static_line(&format!("{dir}/distance"))
            .map(|l| {
                l.split_whitespace()
                    .filter_map(|t| t.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        let sizes = if lone {
            Vec::new()
        } else {
            size_dirs(probe, &format!("{dir}/hugepages"))
        };
        for (size_kb, hdir) in sizes {
            let total = probe.u64_in(&hdir, "nr_hugepages");
            // Free and surplus pages are counted in the node's total: none when it is 0.
            let pool = |probe: &mut Probe, f: &str| match total {
                Some(0) => Some(0),
                _ => probe.u64_in(&hdir, f),
            };
            node.hugepages.push(NodeHugePages {
                size_kb,
                total,
                free: pool(probe, "free_hugepages"),
                surplus: pool(probe, "surplus_hugepages"),
            });
        }
        nodes.push(node);
    }
    nodes
}

/// The default huge page size's pool as `/proc/meminfo` states it: `HugePages_Total`, `_Free`,
/// `_Rsvd` and `_Surp` are the default hstate's `nr_huge_pages`, `free_huge_pages`,
/// `resv_huge_pages` and `surplus_huge_pages` (`hugetlb_report_meminfo`), the counters its
/// `nr_hugepages`, `free_hugepages`, `resv_hugepages` and `surplus_hugepages` files print: 1
/// to 4 files a sample not read. `None` for another size, or when meminfo lacks any of them.
fn default_pool(meminfo: &Meminfo, size_kb: u64, overcommit: Option<u64>) -> Option<HugePageSize> {
    if meminfo.hugepagesize != Some(size_kb) {
        return None;
    }
    Some(HugePageSize {
        size_kb,
        total: Some(meminfo.huge_pages_total?),
        free: Some(meminfo.huge_pages_free?),
        rsvd: Some(meminfo.huge_pages_rsvd?),
        surp: Some(meminfo.huge_pages_surp?),
        overcommit,
    })
}

/// On a host with one NUMA node the node's huge page pools are the host's: the kernel counts a
/// pool per node and in all (`nr_huge_pages_node[nid]` beside `nr_huge_pages`, and so for the
/// free and surplus pages), moved together under one lock, so with one node they are equal.
/// `read_nodes` leaves a lone node's pools unread (2 files a sample per size on such a host);
/// they are the host's pools, filled in here once `read_memory` has them.
pub fn fill_lone_node_pools(nodes: &mut [NodeSample], memory: &MemorySample) {
    let [node] = nodes else {
        return;
    };
    if !node.hugepages.is_empty() {
        return;
    }
    node.hugepages = memory
        .hugepage_sizes
        .iter()
        .map(|h| NodeHugePages {
            size_kb: h.size_kb,
            total: h.total,
            free: h.free,
            surplus: h.surp,
        })
        .collect();
}

/// Counters the kernel split per memory zone (`allocstall_normal`, `pgscan_kswapd_dma32`...):
/// allocstall since 4.x, pgscan/pgsteal between 3.x and 4.7. Summed over zones into the one
/// counter, which is used only when the kernel does not print the unsplit name itself.
#[derive(Default)]
struct ZoneSplit {
    sums: [Option<u64>; SPLIT.len()],
}

const SPLIT: [&str; 5] = [
    "allocstall",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
];
/// Zone names; `pgscan_direct_throttle` is another counter, not a zone.
const ZONES: [&str; 6] = ["dma", "dma32", "normal", "movable", "high", "device"];

impl ZoneSplit {
    fn add(&mut self, key: &str, value: u64) {
        for (i, base) in SPLIT.iter().enumerate() {
            let zone = key.strip_prefix(base).and_then(|r| r.strip_prefix('_'));
            if zone.is_some_and(|z| ZONES.contains(&z)) {
                let sum = self.sums[i].get_or_insert(0);
                *sum = sum.wrapping_add(value);
                return;
            }
        }
    }

    fn fill(&self, vm: &mut VmStat) {
        let fields = [
            &mut vm.allocstall,
            &mut vm.pgscan_kswapd,
            &mut vm.pgscan_direct,
            &mut vm.pgsteal_kswapd,
            &mut vm.pgsteal_direct,
        ];
        for (field, sum) in fields.into_iter().zip(self.sums) {
            if field.is_none() {
                *field = sum;
            }
        }
    }
}

/// Feeds `key value` lines to `set`; notes how many lines were garbled.
fn table(probe: &mut Probe, rel: &str, text: &str, set: impl FnMut(&str, u64)) {
    let bad = kv_lines(text, set);
    if bad > 0 {
        probe.note(rel, format!("{bad} garbled line(s) skipped"));
    }
}

/// `hugepages-2048kB` style directories as (size in kB, path), ascending by size. The sizes
/// a kernel supports are fixed at boot: listed once per refresh.
fn size_dirs(probe: &mut Probe, base: &str) -> Vec<(u64, String)> {
    let mut out: Vec<(u64, String)> = probe
        .static_list_dir(base)
        .iter()
        .filter_map(|name| {
            let kb = name
                .strip_prefix("hugepages-")?
                .strip_suffix("kB")?
                .parse()
                .ok()?;
            Some((kb, format!("{base}/{name}")))
        })
        .collect();
    out.sort();
    out
}

fn choice(probe: &mut Probe, rel: &str) -> (Option<String>, Vec<String>) {
    // A setting (THP's mode), read in the settings tier like the sysctls.
    let Some(text) = probe.setting_line(rel) else {
        return (None, Vec::new());
    };
    let (sel, all) = bracketed_choice(&text);
    if sel.is_none() {
        probe.note(rel, "no [selected] choice");
    }
    (sel, all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meminfo(lines: &str) -> Meminfo {
        let mut m = Meminfo::default();
        for l in lines.lines() {
            let mut it = l.split_whitespace();
            if let (Some(k), Some(v)) = (it.next(), it.next()) {
                m.set(k.trim_end_matches(':'), v.parse().expect("number"));
            }
        }
        m
    }

    /// The default size's pool is meminfo's four lines, exactly; another size, or a meminfo
    /// without one of them, is read from its files (`None` here).
    #[test]
    fn the_default_pool_is_meminfos() {
        let m = meminfo(
            "HugePages_Total: 8\nHugePages_Free: 6\nHugePages_Rsvd: 1\nHugePages_Surp: 0\nHugepagesize: 2048 kB",
        );
        let p = default_pool(&m, 2048, Some(3)).expect("default size");
        assert_eq!(
            (p.total, p.free, p.rsvd, p.surp, p.overcommit),
            (Some(8), Some(6), Some(1), Some(0), Some(3))
        );
        assert!(default_pool(&m, 1_048_576, None).is_none());
        let cut = meminfo("HugePages_Total: 8\nHugePages_Free: 6\nHugepagesize: 2048 kB");
        assert!(default_pool(&cut, 2048, None).is_none());
    }

    /// A lone node gets the host's pools; with two nodes each keeps its own (read from its
    /// files), and a lone node read some already keeps them.
    #[test]
    fn a_lone_nodes_pools_are_the_hosts() {
        let memory = MemorySample {
            hugepage_sizes: vec![HugePageSize {
                size_kb: 2048,
                total: Some(8),
                free: Some(6),
                rsvd: Some(1),
                surp: Some(2),
                overcommit: None,
            }],
            ..MemorySample::default()
        };
        let mut one = vec![NodeSample::default()];
        fill_lone_node_pools(&mut one, &memory);
        let h = &one[0].hugepages[0];
        assert_eq!(
            (h.size_kb, h.total, h.free, h.surplus),
            (2048, Some(8), Some(6), Some(2))
        );
        let mut two = vec![NodeSample::default(), NodeSample::default()];
        fill_lone_node_pools(&mut two, &memory);
        assert!(two.iter().all(|n| n.hugepages.is_empty()));
    }
}
