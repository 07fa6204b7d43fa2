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
        let total = probe.u64_in(&dir, "nr_hugepages");
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
            // A setting (`vm.nr_overcommit_hugepages`); the pool's counts above are not.
            overcommit: probe.setting_u64(&format!("{dir}/nr_overcommit_hugepages")),
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
    let mut nodes = Vec::new();
    // Nodes only come and go with memory hotplug: listed once per refresh.
    for id in probe.static_entries(NODE_DIR, "node") {
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
        let rel = format!("{dir}/meminfo");
        probe.with_text(&rel, false, |probe, text| {
            table(probe, &rel, text, |k, v| {
                node.meminfo.set(k, v);
            });
        });
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
        for (size_kb, hdir) in size_dirs(probe, &format!("{dir}/hugepages")) {
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
