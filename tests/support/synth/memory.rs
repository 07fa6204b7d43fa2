//! Synthetic memory: meminfo, vmstat, dirty sysctls, huge pages, THP and the NUMA nodes.

use super::{range, Host, Out};
use anyhow::Result;
use std::fmt::Write as _;

impl Host {
    pub(super) fn write_memory(&self, out: &Out) -> Result<()> {
        let (a, n) = (self.age, u64::from(self.nodes));
        let total = |k: &str| -> u64 {
            (0..self.nodes)
                .map(|i| {
                    node_meminfo(i)
                        .iter()
                        .find(|(key, _)| *key == k)
                        .map_or(0, |&(_, v)| v)
                })
                .sum()
        };
        let mut s = String::with_capacity(2048);
        let free = total("MemFree");
        let file = total("FilePages");
        let buffers = 100_000 * n;
        let mut kv = |k: &str, v: u64| put!(s, "{:<16}{v:>8} kB\n", format!("{k}:"));
        kv("MemTotal", total("MemTotal"));
        kv("MemFree", free);
        kv("MemAvailable", free + file * 4 / 5);
        kv("Buffers", buffers);
        kv("Cached", file - buffers);
        kv("SwapCached", 0);
        for key in MEMINFO_SUMS {
            kv(key, total(key));
        }
        kv("SwapTotal", 0);
        kv("SwapFree", 0);
        kv("Committed_AS", total("AnonPages") * 3 / 2);
        for key in ["HugePages_Total", "HugePages_Free"] {
            put!(s, "{:<16}{:>8}\n", format!("{key}:"), total(key));
        }
        put!(s, "HugePages_Rsvd: {:>8}\n", 64 * n);
        put!(s, "HugePages_Surp: {:>8}\n", 0);
        put!(s, "Hugepagesize:   {:>8} kB\n", 2048);
        put!(
            s,
            "Hugetlb:        {:>8} kB\n",
            total("HugePages_Total") * 2048
        );
        out.file("proc/meminfo", &s)?;

        let mut v = String::with_capacity(2048);
        for (k, x) in vmstat(n, a, free / 4, total("AnonHugePages") / 2048) {
            put!(v, "{k} {x}\n");
        }
        out.file("proc/vmstat", &v)?;

        for (k, x) in [
            ("dirty_ratio", 20),
            ("dirty_bytes", 0),
            ("dirty_background_ratio", 10),
            ("dirty_background_bytes", 0),
            ("dirty_expire_centisecs", 3000),
            ("dirty_writeback_centisecs", 500),
        ] {
            out.line(&format!("proc/sys/vm/{k}"), x)?;
        }
        let huge = "sys/kernel/mm/hugepages";
        for (size, total, free, resv) in [(2048, 512 * n, 128 * n, 64 * n), (1048576, 0, 0, 0)] {
            let d = format!("{huge}/hugepages-{size}kB");
            out.dir(&d)?;
            for (f, x) in [
                ("nr_hugepages", total),
                ("free_hugepages", free),
                ("resv_hugepages", resv),
                ("surplus_hugepages", 0),
                ("nr_overcommit_hugepages", 0),
            ] {
                out.line(&format!("{d}/{f}"), x)?;
            }
        }
        let thp = "sys/kernel/mm/transparent_hugepage";
        out.dir(thp)?;
        out.line(&format!("{thp}/enabled"), "always [madvise] never")?;
        out.line(
            &format!("{thp}/defrag"),
            "always defer defer+madvise [madvise] never",
        )
    }

    pub(super) fn write_nodes(&self, out: &Out) -> Result<()> {
        let (a, base) = (self.age, "sys/devices/system/node");
        out.dir(base)?;
        let all_nodes = range(0, self.nodes);
        for f in ["online", "possible", "has_memory", "has_normal_memory"] {
            out.line(&format!("{base}/{f}"), &all_nodes)?;
        }
        for n in 0..self.nodes {
            let dir = format!("{base}/node{n}");
            let hp = format!("{dir}/hugepages/hugepages-2048kB");
            let gp = format!("{dir}/hugepages/hugepages-1048576kB");
            out.dir(&hp)?;
            out.dir(&gp)?;
            out.line(&format!("{dir}/cpulist"), self.node_list(n))?;
            let mut s = String::with_capacity(1536);
            for (k, v) in node_meminfo(n) {
                if k.starts_with("HugePages_") {
                    put!(s, "Node {n} {:<16}{v:>8}\n", format!("{k}:"));
                } else {
                    put!(s, "Node {n} {:<16}{v:>8} kB\n", format!("{k}:"));
                }
            }
            out.file(&format!("{dir}/meminfo"), &s)?;
            let nn = u64::from(n);
            let (hit, miss) = (90_000 + 1000 * nn, 1000 * (nn % 4 + 1));
            out.file(
                &format!("{dir}/numastat"),
                &format!(
                    "numa_hit {}\nnuma_miss {}\nnuma_foreign {}\ninterleave_hit {}\n\
                     local_node {}\nother_node {}\n",
                    hit * a,
                    miss * a,
                    miss * a,
                    10 * a,
                    hit * a,
                    miss * a
                ),
            )?;
            let mut s = String::with_capacity(3 * self.nodes as usize + 1);
            for m in 0..self.nodes {
                let sep = if m == 0 { "" } else { " " };
                let dist = if m == n {
                    10
                } else if m / 2 == n / 2 {
                    12
                } else {
                    21
                };
                put!(s, "{sep}{dist}");
            }
            out.line(&format!("{dir}/distance"), s)?;
            for (d, total, free) in [(&hp, 512, 128), (&gp, 0, 0)] {
                out.line(&format!("{d}/nr_hugepages"), total)?;
                out.line(&format!("{d}/free_hugepages"), free)?;
                out.line(&format!("{d}/surplus_hugepages"), 0)?;
            }
        }
        Ok(())
    }
}

/// Keys of `/proc/meminfo` that are the sum of the nodes' values.
const MEMINFO_SUMS: [&str; 16] = [
    "Active(file)",
    "Inactive(file)",
    "Mapped",
    "Shmem",
    "AnonPages",
    "Slab",
    "SReclaimable",
    "SUnreclaim",
    "KernelStack",
    "PageTables",
    "Dirty",
    "Writeback",
    "WritebackTmp",
    "AnonHugePages",
    "ShmemHugePages",
    "FileHugePages",
];

/// `nodeN/meminfo` in kB (HugePages_* in pages): 64 GiB per node.
#[rustfmt::skip]
fn node_meminfo(n: u32) -> [(&'static str, u64); 24] {
    let total = 64 * 1024 * 1024;
    let free = 16 * 1024 * 1024 + 1024 * u64::from(n);
    [
        ("MemTotal", total), ("MemFree", free), ("MemUsed", total - free),
        ("Active(file)", 12_000_000), ("Inactive(file)", 8_000_000),
        ("Dirty", 600_000 * 4), ("Writeback", 50_000 * 4), ("WritebackTmp", 0),
        ("FilePages", 20_000_000), ("Mapped", 1_000_000), ("AnonPages", 12_000_000),
        ("Shmem", 500_000), ("KernelStack", 60_000), ("PageTables", 150_000),
        ("Slab", 2_000_000), ("SReclaimable", 1_500_000), ("SUnreclaim", 500_000),
        ("AnonHugePages", 4_194_304), ("ShmemHugePages", 0), ("FileHugePages", 0),
        ("HugePages_Total", 512), ("HugePages_Free", 128), ("HugePages_Surp", 0),
        ("Unaccepted", 0),
    ]
}

/// `/proc/vmstat` for `n` nodes at age `a`: dirty gauges scale with the nodes, events with age.
#[rustfmt::skip]
fn vmstat(n: u64, a: u64, free_pages: u64, thp: u64) -> [(&'static str, u64); 29] {
    let hit: u64 = (0..n).map(|i| (90_000 + 1000 * i) * a).sum();
    let miss: u64 = (0..n).map(|i| 1000 * (i % 4 + 1) * a).sum();
    [
        ("nr_free_pages", free_pages), ("nr_dirty_threshold", 1_000_000 * n),
        ("nr_dirty_background_threshold", 500_000 * n), ("nr_dirty", 600_000 * n),
        ("nr_writeback", 50_000 * n), ("nr_writeback_temp", 0),
        ("nr_anon_transparent_hugepages", thp),
        ("nr_dirtied", 25_000 * n * a), ("nr_written", 24_000 * n * a),
        ("numa_hit", hit), ("numa_miss", miss), ("numa_foreign", miss),
        ("pgfault", 1_000_000 * a), ("pgmajfault", 10 * a), ("pswpin", 0), ("pswpout", 0),
        ("pgscan_kswapd", 5000 * a), ("pgscan_direct", 0),
        ("pgsteal_kswapd", 4500 * a), ("pgsteal_direct", 0), ("oom_kill", 0),
        ("compact_stall", 3 * a), ("compact_fail", a), ("compact_success", 2 * a),
        ("thp_fault_alloc", 500 * a), ("thp_fault_fallback", 25 * a),
        ("thp_collapse_alloc", 4 * a), ("thp_collapse_alloc_failed", a), ("thp_split_page", 0),
    ]
}
