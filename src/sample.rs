//! The raw `Sample`: cumulative counters, instantaneous gauges and the time they were read.
//!
//! Nothing here is a rate. Rates are computed from two samples in `derive`, so a recording of
//! samples can be re-derived later by any perftop version. Unknown is `None` (skipped in JSON),
//! never 0. Lists are sorted by their kernel id so derive can pair prev/cur by id.

mod cgroups;
mod disk;
mod filesystems;
mod irq;
mod kernel;
mod net;
mod power;
mod processes;
mod storage;
mod tcp;
mod time;
mod turns;
mod zone;

pub use cgroups::{CgroupIo, CgroupPressure, CgroupSample, CgroupVersion, Cgroups, Limit};
pub use disk::DiskSample;
pub use filesystems::{Filesystem, Filesystems, ReadAt, Sensor, Temperatures};
pub use irq::{ArchRow, Interrupts, IrqLine, IrqTurn};
pub use kernel::{KernelEvent, KernelEvents, OomVictim};
pub use net::{NetDevice, NetSample, SoftirqRow, Softirqs, SoftnetRow};
pub use power::{PowerSample, RaplZone, Throttle, ThrottleRead, ThrottleScope, ThrottleTurn};
pub use processes::{Processes, Task, TaskCounters};
pub use storage::DiskStack;
pub use tcp::{Listener, NicLink, TcpSample};
pub use time::{SampleTime, MIN_INTERVAL_S, STATIC_REFRESH_SAMPLES};
pub use turns::Turn;
pub use zone::Zone;

use crate::cpulist::CpuList;
use serde::{Deserialize, Serialize};

pub const SAMPLE_VERSION: u32 = 1;

/// Declares a struct of optional counters named after kernel `key value` lines, with a setter
/// that maps the kernel key to the field. One table, so names cannot drift between parse and use.
macro_rules! kernel_keys {
    ($(#[$meta:meta])* $name:ident { $($field:ident = $key:literal),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        pub struct $name {
            $(#[serde(default, skip_serializing_if = "Option::is_none")] pub $field: Option<u64>,)*
        }
        impl $name {
            /// Stores `value` under the kernel `key`; false when the key is not one we keep.
            pub fn set(&mut self, key: &str, value: u64) -> bool {
                match key {
                    $($key => self.$field = Some(value),)*
                    _ => return false,
                }
                true
            }
        }
    };
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub version: u32,
    pub time: SampleTime,
    pub host: Host,
    pub cpu: CpuSample,
    /// Thermal throttling and RAPL energy (`None` in recordings made before perftop read them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<PowerSample>,
    pub memory: MemorySample,
    pub nodes: Vec<NodeSample>,
    pub disks: Vec<DiskSample>,
    pub net: NetSample,
    /// `/proc/pressure/*`. `None` in recordings made before perftop read PSI (unknown, and
    /// said so), `Some` with no resources where the kernel has none (PSI not enabled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<Pressure>,
    /// `/proc/PID/*`: task counts and the processes worth keeping. `None` in recordings made
    /// before perftop read processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<Processes>,
    /// Control groups (`None` in recordings made before perftop read them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroups: Option<Cgroups>,
    /// Filesystem space and temperatures from the sysinfo thread: live root only (`None` for a
    /// fixture root and in older recordings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystems: Option<Filesystems>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperatures: Option<Temperatures>,
    /// Kernel log events that arrived during this sample (`/dev/kmsg`): `None` for a root
    /// without `dev/kmsg` and in recordings made before perftop read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelEvents>,
    /// Files that exist but could not be read or parsed (missing optional files are not listed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<Problem>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Problem {
    pub path: String,
    pub what: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Host {
    pub hostname: Option<String>,
    pub kernel: Option<String>,
    pub kernel_version: Option<String>,
    pub loadavg: Option<[f32; 3]>,
    pub tasks_runnable: Option<u32>,
    pub tasks_total: Option<u32>,
    /// `hypervisor` flag in cpuinfo or `sys/hypervisor/type`.
    pub hypervisor: Option<String>,
    pub cpu_model: Option<String>,
    /// The performance-relevant flags of `/proc/cmdline` (`source::boot`), in command-line
    /// order; `None` when it could not be read (and in older recordings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_flags: Option<Vec<String>>,
    /// `etc/tuned/active_profile` under the root, when tuned is installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuned_profile: Option<String>,
}

// ---------------------------------------------------------------- CPU

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuSample {
    pub online: Option<CpuList>,
    pub possible: Option<CpuList>,
    pub present: Option<CpuList>,
    /// The aggregate `cpu` line of `/proc/stat`.
    pub total: Option<CpuTimes>,
    pub cpus: Vec<CpuEntry>,
    pub idle_driver: Option<String>,
    pub idle_governor: Option<String>,
    pub freq: FreqSample,
    pub ctxt: Option<u64>,
    pub intr: Option<u64>,
    pub procs_running: Option<u64>,
    pub procs_blocked: Option<u64>,
    /// `processes` of `/proc/stat`: tasks (processes and threads) created since boot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forks: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ksoftirqd: Vec<KernelThread>,
    /// On a host with more per-CPU detail than a sample's file budget (`source::turns`): each
    /// CPU's idle-state counters and each cpufreq policy's frequency, governor and EPP are read
    /// every this many samples, in turns (absent: every sample).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail_every: Option<u32>,
    /// The dashboard's first look at a big host (`Reader::first_look`): per-CPU detail (idle
    /// states, topology, cpufreq policies, throttle counters) not read yet, so unknown, not
    /// absent; the next sample reads it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub detail_pending: bool,
}

/// `/proc/stat` times in USER_HZ ticks (100/s on every Linux ABI).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    /// Absent before 2.6.11.
    pub steal: Option<u64>,
    /// Already included in `user`/`nice`; kept to show guest load separately.
    pub guest: Option<u64>,
    pub guest_nice: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuEntry {
    pub id: u32,
    pub online: bool,
    /// `None` when the CPU has no `cpuN` line in `/proc/stat` (offline).
    pub times: Option<CpuTimes>,
    pub package: Option<u32>,
    pub die: Option<u32>,
    pub core: Option<u32>,
    pub node: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub idle_states: Vec<IdleState>,
    /// When idle states are read in turns: the time of the read `idle_states` hold (perhaps
    /// an earlier sample's) and the read before it, so rates are over the CPU's own interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_turn: Option<IdleTurn>,
}

/// The two latest reads of one CPU's idle states when they are read in turns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IdleTurn {
    /// When the read in `CpuEntry::idle_states` was taken, and the CPU's `/proc/stat` times
    /// then (the idle envelope of the interval).
    pub at: SampleTime,
    pub times: Option<CpuTimes>,
    /// The read before it (`None` until the CPU has been read twice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<IdleRead>,
}

/// One earlier read of a CPU's idle-state counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IdleRead {
    pub at: SampleTime,
    pub times: Option<CpuTimes>,
    pub states: Vec<IdleCounters>,
}

/// The cumulative counters of one idle state (by `IdleState::index`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IdleCounters {
    pub index: u32,
    pub usage: Option<u64>,
    pub time_us: Option<u64>,
    pub above: Option<u64>,
    pub below: Option<u64>,
}

impl IdleCounters {
    pub fn of(s: &IdleState) -> IdleCounters {
        IdleCounters {
            index: s.index,
            usage: s.usage,
            time_us: s.time_us,
            above: s.above,
            below: s.below,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IdleState {
    pub index: u32,
    pub name: String,
    pub latency_us: Option<u64>,
    pub target_residency_us: Option<u64>,
    pub usage: Option<u64>,
    pub time_us: Option<u64>,
    pub above: Option<u64>,
    pub below: Option<u64>,
    pub disabled: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FreqSample {
    pub policies: Vec<FreqPolicy>,
    /// `cpufreq/boost` (acpi-cpufreq, amd-pstate).
    pub boost: Option<bool>,
    /// `intel_pstate/no_turbo`.
    pub no_turbo: Option<bool>,
    /// `intel_pstate/status` or `amd_pstate/status` (active / passive / guided / off).
    pub pstate_status: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FreqPolicy {
    /// `policy0`, or `cpu0` for the older per-CPU layout.
    pub id: String,
    /// Path of the policy directory under the root, so tweaks write where we read.
    pub dir: String,
    pub affected_cpus: Option<CpuList>,
    pub related_cpus: Option<CpuList>,
    pub driver: Option<String>,
    pub governor: Option<String>,
    #[serde(default)]
    pub available_governors: Vec<String>,
    pub epp: Option<String>,
    #[serde(default)]
    pub available_epp: Vec<String>,
    pub cur_khz: Option<u64>,
    pub min_khz: Option<u64>,
    pub max_khz: Option<u64>,
    pub hw_min_khz: Option<u64>,
    pub hw_max_khz: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelThread {
    pub cpu: u32,
    pub pid: u32,
    /// utime + stime in USER_HZ ticks (as last read: an idle thread is read in turns).
    pub ticks: u64,
    /// Read this sample after an earlier read than the previous sample's (in turns): its
    /// growth is over the interval since this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<SampleTime>,
}

// ---------------------------------------------------------------- memory

kernel_keys! {
    /// `/proc/meminfo` and `nodeN/meminfo`, values in kB except the `HugePages_*` counts.
    Meminfo {
        mem_total = "MemTotal",
        mem_free = "MemFree",
        mem_used = "MemUsed",
        mem_available = "MemAvailable",
        buffers = "Buffers",
        cached = "Cached",
        file_pages = "FilePages",
        anon_pages = "AnonPages",
        mapped = "Mapped",
        shmem = "Shmem",
        mlocked = "Mlocked",
        unevictable = "Unevictable",
        active_file = "Active(file)",
        inactive_file = "Inactive(file)",
        slab = "Slab",
        s_reclaimable = "SReclaimable",
        s_unreclaim = "SUnreclaim",
        kernel_stack = "KernelStack",
        page_tables = "PageTables",
        dirty = "Dirty",
        writeback = "Writeback",
        writeback_tmp = "WritebackTmp",
        swap_total = "SwapTotal",
        swap_free = "SwapFree",
        committed_as = "Committed_AS",
        commit_limit = "CommitLimit",
        anon_huge_pages = "AnonHugePages",
        shmem_huge_pages = "ShmemHugePages",
        file_huge_pages = "FileHugePages",
        huge_pages_total = "HugePages_Total",
        huge_pages_free = "HugePages_Free",
        huge_pages_rsvd = "HugePages_Rsvd",
        huge_pages_surp = "HugePages_Surp",
        hugepagesize = "Hugepagesize",
        hugetlb = "Hugetlb",
    }
}

kernel_keys! {
    /// `/proc/vmstat` counters (pages or events) we derive from.
    VmStat {
        nr_free_pages = "nr_free_pages",
        // Page counts whose meminfo twins are stated exactly and move slowly: the page size of
        // a root that is not the running system is inferred from them (`crate::pagesize`).
        nr_mlock = "nr_mlock",
        nr_unevictable = "nr_unevictable",
        nr_shmem = "nr_shmem",
        nr_anon_pages = "nr_anon_pages",
        nr_mapped = "nr_mapped",
        nr_page_table_pages = "nr_page_table_pages",
        nr_dirty = "nr_dirty",
        nr_writeback = "nr_writeback",
        nr_writeback_temp = "nr_writeback_temp",
        nr_dirty_threshold = "nr_dirty_threshold",
        nr_dirty_background_threshold = "nr_dirty_background_threshold",
        nr_dirtied = "nr_dirtied",
        nr_written = "nr_written",
        nr_anon_transparent_hugepages = "nr_anon_transparent_hugepages",
        pgfault = "pgfault",
        pgmajfault = "pgmajfault",
        pswpin = "pswpin",
        pswpout = "pswpout",
        pgscan_kswapd = "pgscan_kswapd",
        pgscan_direct = "pgscan_direct",
        pgsteal_kswapd = "pgsteal_kswapd",
        pgsteal_direct = "pgsteal_direct",
        // kswapd's reclaim runs and kcompactd's wakes: the memory threads at work.
        pageoutrun = "pageoutrun",
        compact_daemon_wake = "compact_daemon_wake",
        // Before 4.x one counter; since then split per zone (`allocstall_normal`, ...), which
        // the reader sums into this field (so do `pgscan_*`/`pgsteal_*` zone variants).
        allocstall = "allocstall",
        compact_stall = "compact_stall",
        compact_fail = "compact_fail",
        compact_success = "compact_success",
        thp_fault_alloc = "thp_fault_alloc",
        thp_fault_fallback = "thp_fault_fallback",
        thp_collapse_alloc = "thp_collapse_alloc",
        thp_collapse_alloc_failed = "thp_collapse_alloc_failed",
        oom_kill = "oom_kill",
        // Every reclaimer (kswapd, direct, cgroup limits, proactive) by LRU type, since 5.8:
        // the only global counters that see a cgroup reclaiming under its own limit.
        pgscan_anon = "pgscan_anon",
        pgscan_file = "pgscan_file",
        pgsteal_anon = "pgsteal_anon",
        pgsteal_file = "pgsteal_file",
        // Since 5.9 split into `_anon` and `_file`, which the reader sums into this field.
        workingset_refault = "workingset_refault",
    }
}

kernel_keys! {
    /// `nodeN/numastat`, in pages.
    NumaStat {
        numa_hit = "numa_hit",
        numa_miss = "numa_miss",
        numa_foreign = "numa_foreign",
        interleave_hit = "interleave_hit",
        local_node = "local_node",
        other_node = "other_node",
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemorySample {
    /// The host's page size in kB and how it was learnt. Absent in recordings made before
    /// perftop stored it: derive then infers it (`crate::pagesize`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_kb: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_kb_from: Option<PageKbFrom>,
    pub meminfo: Meminfo,
    pub vmstat: VmStat,
    pub dirty: DirtySysctls,
    /// One entry per directory in `sys/kernel/mm/hugepages/`.
    pub hugepage_sizes: Vec<HugePageSize>,
    pub thp: Thp,
    /// Reclaim and overcommit policy (`proc/sys/vm/*`); absent in older recordings.
    #[serde(default)]
    pub vm: VmSysctls,
    /// kswapd, kcompactd and khugepaged: reclaim and compaction done by the kernel's own threads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kthreads: Vec<MemoryThread>,
    /// Zone watermarks from `/proc/zoneinfo`; absent in older recordings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<Zone>,
}

/// The `vm.*` sysctls that decide how the kernel reclaims and overcommits.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VmSysctls {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swappiness: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_free_kbytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watermark_scale_factor: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overcommit_memory: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overcommit_ratio: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_reclaim_mode: Option<u64>,
}

/// One memory-management kernel thread (`kswapd0`, `kcompactd1`, `khugepaged`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryThread {
    pub comm: String,
    pub pid: u32,
    /// utime + stime in USER_HZ ticks.
    pub ticks: u64,
    /// Read in turns while idle (see `source::kthreads::memory_work`): when it was read
    /// before this read, if not in the previous sample. Its growth is over that interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<SampleTime>,
}

// ---------------------------------------------------------------- pressure (PSI)

/// `/proc/pressure/{cpu,memory,io,irq}`; a resource the kernel does not expose is `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<PsiResource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<PsiResource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<PsiResource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irq: Option<PsiResource>,
}

/// The `some` and `full` lines of one pressure file (cpu has no `full` before 5.13, irq no
/// `some`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PsiResource {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub some: Option<PsiLine>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full: Option<PsiLine>,
}

/// `avg10=0.00 avg60=0.00 avg300=0.00 total=0`: the kernel's running averages (%) and the
/// cumulative stall time in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PsiLine {
    // f64, not f32: the kernel prints two decimals, and an f32 widened for JSON would read
    // 1.100000023841858.
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    pub total_us: u64,
}

/// `proc/sys/vm/dirty_*`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirtySysctls {
    pub ratio: Option<u64>,
    pub bytes: Option<u64>,
    pub background_ratio: Option<u64>,
    pub background_bytes: Option<u64>,
    pub expire_centisecs: Option<u64>,
    pub writeback_centisecs: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HugePageSize {
    pub size_kb: u64,
    pub total: Option<u64>,
    pub free: Option<u64>,
    pub rsvd: Option<u64>,
    pub surp: Option<u64>,
    pub overcommit: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Thp {
    /// The bracketed choice of `transparent_hugepage/enabled` (`always`, `madvise`, `never`).
    pub enabled: Option<String>,
    pub defrag: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub enabled_choices: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defrag_choices: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeSample {
    pub id: u32,
    pub cpus: Option<CpuList>,
    pub meminfo: Meminfo,
    pub numastat: NumaStat,
    #[serde(default)]
    pub distance: Vec<u32>,
    #[serde(default)]
    pub hugepages: Vec<NodeHugePages>,
    /// `Some(n)`: samples came faster than a second, so this node's `meminfo` (gauges) is read
    /// every `n` samples, in turns, and shown as last read between.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meminfo_every: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeHugePages {
    pub size_kb: u64,
    pub total: Option<u64>,
    pub free: Option<u64>,
    pub surplus: Option<u64>,
}

impl Sample {
    pub fn cpu(&self, id: u32) -> Option<&CpuEntry> {
        self.cpu
            .cpus
            .binary_search_by_key(&id, |c| c.id)
            .ok()
            .map(|i| &self.cpu.cpus[i])
    }
}

/// How the page size in a sample was learnt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PageKbFrom {
    /// The running kernel's page size (`sysconf(_SC_PAGESIZE)`), live root only.
    Host,
    /// What most meminfo/vmstat pairs agree on (`--root`, old recordings).
    Inferred,
    /// Nothing to infer from: 4 kB assumed, and said so.
    #[default]
    Default,
}

impl PageKbFrom {
    pub fn as_str(self) -> &'static str {
        match self {
            PageKbFrom::Host => "host",
            PageKbFrom::Inferred => "inferred",
            PageKbFrom::Default => "default",
        }
    }
}
