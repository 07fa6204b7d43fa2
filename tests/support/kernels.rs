//! Kernels in the field, made from a real capture (`real/h100-16cpu-psi`, Linux 6.18, PSI on,
//! 20-field diskstats, 15-column softnet_stat) by taking away the files each kernel lacks and
//! writing the ones it prints differently in its older format. Built into a temporary
//! directory by each test, so the rules below are the whole fixture (no 6 MB copy per kernel).
//!
//! What each kernel prints, from the kernel's own history (Documentation/ and the commits
//! named): `/proc/pressure` came in 4.20 (RHEL 8's 4.18 carries it backported but off unless
//! booted with `psi=1`: absent here), its `irq` file in 6.1 with CONFIG_IRQ_TIME_ACCOUNTING
//! (Ubuntu's 6.8 has it); `/proc/diskstats` has 14 fields before 4.18, 18 with the discard
//! fields of 4.18, 20 with the flush fields of 5.5; `softnet_stat` has 10 columns in 3.10,
//! 11 from 3.11 (flow_limit_count), 13 from 5.10 (backlog length, CPU index);
//! `MemAvailable` came in 3.14, `KReclaimable` in 4.20, `Percpu` in 4.16, `Hugetlb` in 4.17,
//! `ShmemHugePages`/`ShmemPmdMapped` in 4.8, `FileHugePages`/`FilePmdMapped` in 5.4,
//! `SecPageTables` in 6.0, `Zswap`/`Zswapped` in 5.19. In `/proc/vmstat`, 3.10 counts
//! `pgscan_*`/`pgsteal_*` per zone (`pgscan_kswapd_normal`; one node-wide counter since 4.8)
//! and has no `workingset_*` (3.15), no `oom_kill` (4.13); `workingset_refault` is one
//! counter until 5.9 split it into `_anon` and `_file`.
//!
//! Counters the capture holds at 0 are given known growth here (t1 = t0 + the figure below),
//! so a test checks the value perftop derives from each kernel's format, not only that it
//! renders: `SCANNED` pages scanned by kswapd, `REFAULTS` refaults, and on 6.8 `IRQ_STALL_US`
//! of IRQ pressure.
//!
//! The capture holds no cgroups: each kernel gets the tree its distribution mounts, in its
//! format (`cgroups`: v1 on RHEL 7, RHEL 8 and Ubuntu 20.04, v2 on 22.04 and 24.04, v2 only on
//! a 6.12 Kubernetes node), with `proc/self/mountinfo` naming it.

pub mod cgroups;

use std::path::Path;

/// Pages kswapd scanned between t0 and t1 (split over zones on 3.10).
pub const SCANNED: u64 = 10_000;
/// Working-set refaults between t0 and t1 (one counter before 5.9, anon + file after).
pub const REFAULTS: u64 = 5_000;
/// IRQ stall time between t0 and t1, µs (`/proc/pressure/irq`, 6.1+).
pub const IRQ_STALL_US: u64 = 1_000_000;

/// How a kernel prints what perftop reads.
#[derive(Debug, Clone, Copy)]
pub struct Kernel {
    /// The fixture's name in test output.
    pub name: &'static str,
    /// `proc/sys/kernel/osrelease`.
    pub release: &'static str,
    /// Which PSI files there are: none, cpu/memory/io, or those and irq.
    pub psi: Psi,
    /// Numbers after the device name in `/proc/diskstats`.
    pub diskstats_fields: usize,
    /// Columns of `/proc/net/softnet_stat`.
    pub softnet_cols: usize,
    /// `/proc/meminfo` keys the kernel does not print.
    pub meminfo_absent: &'static [&'static str],
    pub vmstat: VmFormat,
    /// The cgroup hierarchies mounted and their format.
    pub cgroups: cgroups::Layout,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Psi {
    None,
    NoIrq,
    WithIrq,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum VmFormat {
    /// 3.10: reclaim counted per zone, no working-set or OOM counters.
    PerZone,
    /// 4.8 to 5.8: one node-wide reclaim counter, one `workingset_refault`.
    OneRefault,
    /// 5.9 and later: `workingset_refault_anon` and `_file`.
    SplitRefault,
}

const SINCE_5_19: &[&str] = &["Zswap", "Zswapped", "SecPageTables"];

/// RHEL 7, RHEL 8, Ubuntu 20.04, 22.04 and 24.04, oldest first, and a 6.12 host without
/// cgroup v1 (RHEL 10 removed it; 6.11 made the v1 memory controller optional).
pub const KERNELS: [Kernel; 6] = [
    Kernel {
        name: "rhel7-3.10",
        release: "3.10.0-1160.el7.x86_64",
        psi: Psi::None,
        diskstats_fields: 11,
        softnet_cols: 10,
        // Upstream 3.10's meminfo: RHEL 7 backported MemAvailable in 7.0, other 3.10 kernels
        // (and 3.10 to 3.13 everywhere) lack it; the oldest format is the one to survive.
        meminfo_absent: &[
            "MemAvailable",
            "ShmemHugePages",
            "ShmemPmdMapped",
            "Percpu",
            "Hugetlb",
            "KReclaimable",
            "FileHugePages",
            "FilePmdMapped",
            "Zswap",
            "Zswapped",
            "SecPageTables",
        ],
        vmstat: VmFormat::PerZone,
        cgroups: cgroups::Layout::Legacy {
            oom_kill: false,
            res_counter: true,
        },
    },
    Kernel {
        name: "rhel8-4.18",
        release: "4.18.0-553.el8_10.x86_64",
        psi: Psi::None,
        diskstats_fields: 15,
        softnet_cols: 11,
        meminfo_absent: &[
            "Percpu",
            "Hugetlb",
            "KReclaimable",
            "FileHugePages",
            "FilePmdMapped",
            "Zswap",
            "Zswapped",
            "SecPageTables",
        ],
        vmstat: VmFormat::OneRefault,
        cgroups: cgroups::Layout::Legacy {
            oom_kill: true,
            res_counter: false,
        },
    },
    Kernel {
        name: "ubuntu2004-5.4",
        release: "5.4.0-200-generic",
        psi: Psi::NoIrq,
        diskstats_fields: 15,
        softnet_cols: 11,
        meminfo_absent: SINCE_5_19,
        vmstat: VmFormat::OneRefault,
        cgroups: cgroups::Layout::Hybrid,
    },
    Kernel {
        name: "ubuntu2204-5.15",
        release: "5.15.0-125-generic",
        psi: Psi::NoIrq,
        diskstats_fields: 17,
        softnet_cols: 13,
        meminfo_absent: SINCE_5_19,
        vmstat: VmFormat::SplitRefault,
        cgroups: cgroups::Layout::Unified { irq: false },
    },
    Kernel {
        name: "ubuntu2404-6.8",
        release: "6.8.0-48-generic",
        psi: Psi::WithIrq,
        diskstats_fields: 17,
        softnet_cols: 13,
        meminfo_absent: &[],
        vmstat: VmFormat::SplitRefault,
        cgroups: cgroups::Layout::Unified { irq: true },
    },
    Kernel {
        name: "v2only-6.12",
        release: "6.12.0-55.9.1.el10_0.x86_64",
        psi: Psi::WithIrq,
        diskstats_fields: 17,
        softnet_cols: 13,
        meminfo_absent: &[],
        vmstat: VmFormat::SplitRefault,
        cgroups: cgroups::Layout::V2Only,
    },
];

/// `t0/` and `t1/` of `k` under a new temporary directory.
pub fn build(k: &Kernel) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (i, when) in ["t0", "t1"].into_iter().enumerate() {
        let to = dir.path().join(when);
        super::copy_tree(&super::fixture("real/h100-16cpu-psi").join(when), &to);
        rewrite(k, &to, i as u64);
    }
    dir
}

fn edit(path: &Path, f: impl FnOnce(&str) -> String) {
    let text = std::fs::read_to_string(path).expect("fixture file");
    std::fs::write(path, f(&text)).expect("rewrite fixture file");
}

/// Keeps the first `n` whitespace-separated words of every line.
fn first_words(text: &str, n: usize) -> String {
    text.lines()
        .map(|l| {
            let lead = &l[..l.len() - l.trim_start().len()];
            format!(
                "{lead}{}\n",
                l.split_whitespace().take(n).collect::<Vec<_>>().join(" ")
            )
        })
        .collect()
}

/// `step` is 0 for t0 and 1 for t1: the injected counters grow by their figure between them.
fn rewrite(k: &Kernel, root: &Path, step: u64) {
    let proc = root.join("proc");
    std::fs::write(
        proc.join("sys/kernel/osrelease"),
        format!("{}\n", k.release),
    )
    .expect("osrelease");
    match k.psi {
        Psi::None => std::fs::remove_dir_all(proc.join("pressure")).expect("no PSI"),
        Psi::NoIrq => {}
        Psi::WithIrq => std::fs::write(
            proc.join("pressure/irq"),
            format!(
                "full avg10=0.00 avg60=0.00 avg300=0.00 total={}\n",
                5_000_000 + step * IRQ_STALL_US
            ),
        )
        .expect("irq pressure"),
    }
    edit(&proc.join("diskstats"), |t| {
        first_words(t, 3 + k.diskstats_fields)
    });
    edit(&proc.join("net/softnet_stat"), |t| {
        first_words(t, k.softnet_cols)
    });
    edit(&proc.join("meminfo"), |t| {
        t.lines()
            .filter(|l| {
                let key = l.split(':').next().unwrap_or("");
                !k.meminfo_absent.contains(&key)
            })
            .map(|l| format!("{l}\n"))
            .collect()
    });
    edit(&proc.join("vmstat"), |t| vmstat(k.vmstat, t, step));
    cgroups::write(k.cgroups, root, step);
}

/// `/proc/vmstat` in `format`, with `SCANNED` and `REFAULTS` of growth from t0 to t1.
fn vmstat(format: VmFormat, text: &str, step: u64) -> String {
    let scanned = 40_000 + step * SCANNED;
    let refaults = 9_000 + step * REFAULTS;
    let mut out = String::new();
    for l in text.lines() {
        let key = l.split_whitespace().next().unwrap_or("");
        let old_gone = format == VmFormat::PerZone
            && (key.starts_with("workingset_")
                || key == "oom_kill"
                || key.starts_with("pgscan_")
                || key.starts_with("pgsteal_")
                || key.starts_with("allocstall_"));
        let split_gone = format == VmFormat::OneRefault && key.starts_with("workingset_refault_");
        if old_gone || split_gone {
            continue;
        }
        match (format, key) {
            (VmFormat::SplitRefault, "pgscan_kswapd") => {
                out.push_str(&format!("pgscan_kswapd {scanned}\n"))
            }
            (VmFormat::SplitRefault, "workingset_refault_file") => {
                out.push_str(&format!("workingset_refault_file {refaults}\n"))
            }
            (VmFormat::OneRefault, "pgscan_kswapd") => out.push_str(&format!(
                "pgscan_kswapd {scanned}\nworkingset_refault {refaults}\n"
            )),
            _ => out.push_str(&format!("{l}\n")),
        }
    }
    if format == VmFormat::PerZone {
        // 3.10 names every zone; kswapd's scans split 3:1 between Normal and DMA32.
        let (normal, dma32) = (scanned * 3 / 4, scanned / 4);
        out.push_str(&format!(
            "pgsteal_kswapd_dma 0\npgsteal_kswapd_dma32 0\npgsteal_kswapd_normal 0\n\
             pgsteal_kswapd_movable 0\npgscan_kswapd_dma 0\npgscan_kswapd_dma32 {dma32}\n\
             pgscan_kswapd_normal {normal}\npgscan_kswapd_movable 0\npgscan_direct_dma 0\n\
             pgscan_direct_dma32 0\npgscan_direct_normal 0\npgscan_direct_movable 0\n\
             allocstall 0\n"
        ));
    }
    out
}
