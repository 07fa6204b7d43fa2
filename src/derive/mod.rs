//! Derive: (prev, cur) samples → every number perftop shows. The only place rates are computed.
//!
//! With no previous sample the result is since-boot averages (as iostat's first report), and says
//! so in `since_boot`. Counter wraps and resets never give negative or huge rates; a zero or
//! negative interval gives null rates. The serialized form is the `perftop delta` JSON contract.

pub mod cgroups;
pub mod cpu;
pub mod disk;
pub mod filesystems;
pub mod irq;
pub mod memory;
pub mod net;
pub mod power;
pub mod pressure;
pub mod processes;
pub mod storage;
pub mod tcp;

use crate::sample::{Sample, SampleTime, Turn, MIN_INTERVAL_S};
use serde::Serialize;
use std::collections::BTreeMap;

pub use cgroups::CgroupMetrics;
pub use cpu::{CpuMetrics, PolicyMetrics, StateMetrics};
pub use disk::DiskMetrics;
pub use filesystems::{FsMetrics, TempMetrics};
pub use irq::{InterruptMetrics, IrqCpuMetrics, IrqKind, IrqLineMetrics, IrqType};
pub use memory::{DirtyMetrics, HugePageMetrics, MemoryMetrics, NodeMetrics};
pub use net::{IrqQueueMetrics, NicMetrics, SoftirqCpuMetrics};
pub use power::{PowerMetrics, RaplMetrics, ThrottleMetrics};
pub use pressure::{PressureMetrics, PsiMetrics, ReclaimMetrics};
pub use processes::{ProcessMetrics, TaskCounts};
pub use tcp::{NicLinkMetrics, TcpMetrics};

/// USER_HZ: the unit of `/proc/stat` and `/proc/PID/stat` times on every Linux ABI.
pub const USER_HZ: f64 = 100.0;

#[derive(Debug, Clone, Serialize)]
pub struct Derived {
    pub interval_s: Option<f64>,
    /// True when there was no previous sample and rates are averages since boot.
    pub since_boot: bool,
    pub host: HostMetrics,
    pub cpus: Vec<CpuMetrics>,
    pub policies: Vec<PolicyMetrics>,
    /// Thermal throttling per core and package, RAPL watts.
    pub power: PowerMetrics,
    /// The machine's memory (`/proc/meminfo`) and the page size every page count is scaled by.
    pub memory: MemoryMetrics,
    pub nodes: Vec<NodeMetrics>,
    pub hugepages: HugePageMetrics,
    pub dirty: DirtyMetrics,
    pub disks: Vec<DiskMetrics>,
    pub softirq_cpus: Vec<SoftirqCpuMetrics>,
    pub irq_queues: Vec<IrqQueueMetrics>,
    pub nics: Vec<NicMetrics>,
    /// Every IRQ line, the per-type rows (timer, IPIs...) per CPU, and hard interrupts per CPU.
    pub interrupts: InterruptMetrics,
    /// PSI: the share of the interval tasks stalled on cpu, memory, io and irq.
    pub pressure: PressureMetrics,
    /// The busiest processes, by `processes::activity` (the JSON holds the top
    /// `processes::JSON_TOP`).
    #[serde(serialize_with = "processes::top_json")]
    pub processes: Vec<ProcessMetrics>,
    /// Control groups: CPU, throttling, memory, PSI and I/O per group, in path order.
    pub cgroups: Vec<CgroupMetrics>,
    /// hwmon temperature sensors (live host only); the CPU headline shows the hottest CPU one.
    pub temperatures: Vec<TempMetrics>,
    /// Mounted filesystems' space (live host only; `host.filesystems_unknown` says why none or
    /// why old).
    pub filesystems: Vec<FsMetrics>,
    /// TCP/UDP stack rates and socket gauges (null: not read, e.g. an older recording).
    pub tcp: Option<TcpMetrics>,
    /// Kernel log events that arrived in this sample (`/dev/kmsg`): OOM kills, hung tasks,
    /// block I/O errors, soft lockups, NIC link changes. Absent when none arrived; unknown
    /// (and why) in `host.kernel_events_unknown`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernel_events: Vec<crate::sample::KernelEvent>,
}

/// The load averages as the decimals the kernel wrote (`2.7`, not `2.700000047683716`): the
/// CSV and OpenMetrics dumps go through `serde_json::Value`, which widens an f32 to f64.
fn loadavg_decimal<S: serde::Serializer>(v: &Option<[f32; 3]>, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&v.map(|a| a.map(crate::units::f32_decimal)), s)
}

/// Header facts: who the host is and what the CPU power stack looks like.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HostMetrics {
    pub hostname: Option<String>,
    pub kernel: Option<String>,
    pub uptime_s: Option<f64>,
    pub wall_ms: i64,
    #[serde(serialize_with = "loadavg_decimal")]
    pub loadavg: Option<[f32; 3]>,
    pub cpus_online: usize,
    pub cpus_present: Option<usize>,
    pub cpus_possible: Option<usize>,
    pub nodes: usize,
    pub cpu_model: Option<String>,
    pub hypervisor: Option<String>,
    pub idle_driver: Option<String>,
    pub idle_governor: Option<String>,
    pub freq_drivers: Vec<String>,
    /// Governor name → number of policies using it.
    pub governors: BTreeMap<String, usize>,
    pub pstate_status: Option<String>,
    pub boost: Option<bool>,
    pub no_turbo: Option<bool>,
    /// Whole-machine busy % (C0 over all online CPUs).
    pub busy_pct: Option<f64>,
    pub steal_pct: Option<f64>,
    pub iowait_pct: Option<f64>,
    pub ctxt_per_s: Option<f64>,
    pub intr_per_s: Option<f64>,
    pub procs_running: Option<u64>,
    pub procs_blocked: Option<u64>,
    /// Processes by state, from `/proc/PID/stat` (unknown in recordings made before).
    pub tasks: Option<TaskCounts>,
    /// A big host's per-CPU detail (C-state counters, MHz, governor, EPP) is read in turns:
    /// each CPU every this many samples (absent: every sample).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_detail_every: Option<u32>,
    /// The dashboard's first look at a big host: per-CPU detail (C-states, MHz, governors,
    /// throttling) not read yet, so unknown (`-`), not absent.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cpu_detail_pending: bool,
    /// Plain-language hints that this is a VM (no cpufreq, haltpoll, steal).
    pub vm_hints: Vec<String>,
    /// What could not be read in the current sample ("path: reason").
    pub problems: Vec<String>,
    /// `v1` or `v2`: the cgroup hierarchy the `cgroups` numbers come from.
    pub cgroup_version: Option<String>,
    /// Why there are no `cgroups` at all (null when the hierarchy was read).
    pub cgroups_unknown: Option<String>,
    /// Groups in the scanned set left out of `cgroups` (more than perftop reads per sample).
    pub cgroups_left_out: Option<u32>,
    /// The seconds the groups' rates run over when not the sample's interval: read in turns
    /// (samples faster than a second), after a gap, or on a live host between their own two
    /// reads late in each pass (`Cgroups::at`). A group's rate x this = its counter's growth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroups_secs: Option<f64>,
    /// Why `filesystems` is empty or old: a `--root` fixture, a first read under way, a mount
    /// that is not answering. Absent when the list is a fresh read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filesystems_unknown: Option<String>,
    /// The hottest CPU or package sensor of a fresh read, °C, and its label.
    pub temperature_c: Option<f64>,
    pub temperature_sensor: Option<String>,
    /// Why `temperature_c` is unknown (no sensor: most VMs; a fixture; a stale read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature_unknown: Option<String>,
    /// Performance-relevant kernel command-line flags (null: unknown).
    pub boot_flags: Option<Vec<String>>,
    /// The active tuned profile (null: none, or no tuned).
    pub tuned_profile: Option<String>,
    /// Processes and threads created per second (`/proc/stat` `processes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forks_per_s: Option<f64>,
    /// Why kernel log events are unknown (not root, `dmesg_restrict`): never read as "none".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_events_unknown: Option<String>,
    /// Kernel log records overwritten before perftop read them (events may be missing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_messages_lost: Option<u64>,
    /// The per-sample bound on kernel log records cut this sample's read (the rest comes
    /// with the next sample).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub kernel_events_cut: bool,
}

/// What a table's rates run between: the previous sample's table over the sample's interval,
/// or, for a table read in turns or after a gap (its `turn`), the read before it over the
/// interval between the two reads (no read before: unknown, as on a first sample). The third
/// value is that interval's length when it is not the sample's (`table_secs`, said on screen);
/// since boot (a recording's first sample) is said as such elsewhere, not as a turn.
pub fn turn_pair<'a, T>(
    iv: Interval,
    turn: Option<&'a Turn<T>>,
    prev: Option<&'a T>,
) -> (Interval, Option<&'a T>, Option<f64>) {
    match turn {
        Some(t) if !iv.since_boot => {
            let (iv, before) = match &t.before {
                Some((at, table)) => (Interval::of_times(Some(at), &t.at), Some(table)),
                None => (iv, None),
            };
            (iv, before, iv.secs)
        }
        _ => (iv, prev, None),
    }
}

/// The interval between two samples and how counters are differenced over it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Interval {
    pub secs: Option<f64>,
    pub since_boot: bool,
}

impl Interval {
    pub fn between(prev: Option<&Sample>, cur: &Sample) -> Interval {
        Interval::of_times(prev.map(|p| &p.time), &cur.time)
    }

    /// The interval between two reads' times (`None`: since boot): boot clock when both have
    /// it, else `/proc/uptime`.
    pub fn of_times(prev: Option<&SampleTime>, cur: &SampleTime) -> Interval {
        Interval {
            secs: match prev {
                None => cur
                    .uptime_s
                    .filter(|s| s.is_finite() && *s >= MIN_INTERVAL_S),
                Some(p) => cur.secs_since(p),
            },
            since_boot: prev.is_none(),
        }
    }

    /// Growth of a 64-bit counter; `None` on reset (it went down) or when prev is unknown.
    pub fn d64(&self, prev: Option<u64>, cur: u64) -> Option<u64> {
        let p = if self.since_boot { 0 } else { prev? };
        cur.checked_sub(p)
    }

    /// Growth of a counter the kernel keeps in 32 bits: one wrap is undone; a drop larger
    /// than half the range is a reset, not a wrap.
    pub fn d32(&self, prev: Option<u64>, cur: u64) -> Option<u64> {
        let p = if self.since_boot { 0 } else { prev? };
        if cur >= p {
            return Some(cur - p);
        }
        if p <= u64::from(u32::MAX) && cur <= u64::from(u32::MAX) {
            let d = cur + (1u64 << 32) - p;
            if d < (1u64 << 31) {
                return Some(d);
            }
        }
        None
    }

    pub fn rate(&self, delta: Option<u64>) -> Option<f64> {
        Some(delta? as f64 / self.secs?)
    }

    pub fn rate_f(&self, delta: Option<f64>) -> Option<f64> {
        finite(delta? / self.secs?)
    }
}

/// `a / b`, or `None` when b is zero or the result is not finite.
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    if b == 0.0 {
        return None;
    }
    finite(a / b)
}

pub fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// Derives every pane's metrics from two samples; `prev = None` gives since-boot averages.
/// Findings are the next stage's (`crate::assess`).
pub fn derive(prev: Option<&Sample>, cur: &Sample) -> Derived {
    let iv = Interval::between(prev, cur);
    let (cpus, policies) = cpu::derive_cpus(iv, prev, cur);
    let mut host = cpu::derive_host(iv, prev, cur, &cpus, &policies);
    host.nodes = cur.nodes.len();
    let (processes, tasks) = processes::derive_processes(iv, prev, cur);
    host.tasks = tasks;
    host.cgroup_version = cur
        .cgroups
        .as_ref()
        .and_then(|c| c.version)
        .map(|v| v.as_str().to_string());
    host.cgroups_unknown = cgroups::unknown(cur).map(str::to_string);
    host.cgroups_left_out = cur
        .cgroups
        .as_ref()
        .filter(|c| c.version.is_some())
        .map(|c| c.left_out);
    host.cgroups_secs = cur.cgroups.as_ref().and_then(|c| {
        let prev = prev.and_then(|p| p.cgroups.as_ref());
        cgroups::pair(iv, prev, c).2
    });
    let interrupts = irq::derive_interrupts(iv, prev, cur, &host);
    let (filesystems, fs_unknown) = filesystems::derive_filesystems(cur);
    let (temperatures, hottest) = filesystems::derive_temperatures(cur);
    host.filesystems_unknown = fs_unknown;
    (host.temperature_sensor, host.temperature_c) = hottest.sensor.unzip();
    host.temperature_unknown = hottest.unknown;
    host.boot_flags = cur.host.boot_flags.clone();
    host.tuned_profile = cur.host.tuned_profile.clone();
    let power = power::derive_power(iv, prev, cur, &cpus);
    host.forks_per_s = cur
        .cpu
        .forks
        .and_then(|f| iv.rate(iv.d64(prev.and_then(|p| p.cpu.forks), f)));
    let kernel = cur.kernel.as_ref();
    host.kernel_events_unknown = kernel.and_then(|k| k.unknown.clone());
    host.kernel_messages_lost = kernel.map(|k| k.lost).filter(|n| *n > 0);
    host.kernel_events_cut = kernel.is_some_and(|k| k.cut);
    let mut memory = memory::derive_memory(iv, prev, cur);
    memory.oom_victims = kernel.map(|k| k.oom_victims.clone()).unwrap_or_default();
    Derived {
        power,
        interval_s: iv.secs,
        since_boot: iv.since_boot,
        host,
        memory,
        nodes: memory::derive_nodes(iv, prev, cur),
        hugepages: memory::derive_hugepages(iv, prev, cur),
        dirty: memory::derive_dirty(iv, prev, cur),
        disks: disk::derive_disks(iv, prev, cur),
        softirq_cpus: net::derive_softirq_cpus(iv, prev, cur),
        irq_queues: net::derive_irq_queues(iv, prev, cur),
        nics: net::derive_nics(iv, prev, cur),
        interrupts,
        pressure: pressure::derive_pressure(iv, prev, cur),
        processes,
        cgroups: cgroups::derive_cgroups(iv, prev, cur),
        temperatures,
        filesystems,
        cpus,
        policies,
        tcp: tcp::derive_tcp(iv, prev, cur),
        kernel_events: kernel.map(|k| k.events.clone()).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(secs: f64) -> Interval {
        Interval {
            secs: Some(secs),
            since_boot: false,
        }
    }

    #[test]
    fn wraps_and_resets() {
        let i = iv(1.0);
        assert_eq!(i.d32(Some(u64::from(u32::MAX) - 9), 5), Some(15));
        assert_eq!(
            i.d32(Some(1_000_000_000), 5),
            None,
            "a 3.3e9 wrap is a reset"
        );
        assert_eq!(i.d32(Some(3_000_000_000), 5), Some(1_294_967_301));
        assert_eq!(i.d64(Some(10), 5), None);
        assert_eq!(i.d64(None, 5), None);
        assert_eq!(i.d64(Some(5), 15), Some(10));
        let boot = Interval {
            secs: Some(100.0),
            since_boot: true,
        };
        assert_eq!(boot.d64(None, 500), Some(500));
        assert_eq!(boot.rate(Some(500)), Some(5.0));
    }

    #[test]
    fn bad_intervals_give_null() {
        let mut a = Sample::default();
        let mut b = Sample::default();
        a.time.uptime_s = Some(10.0);
        b.time.uptime_s = Some(10.0);
        assert_eq!(Interval::between(Some(&a), &b).secs, None);
        b.time.uptime_s = Some(9.0);
        assert_eq!(Interval::between(Some(&a), &b).secs, None);
        b.time.uptime_s = Some(12.5);
        assert_eq!(Interval::between(Some(&a), &b).secs, Some(2.5));
        // Positive but subnormal, or under a millisecond: no interval, no inf/NaN rates.
        a.time.boottime_ns = Some(1);
        b.time.boottime_ns = Some(2);
        assert_eq!(Interval::between(Some(&a), &b).secs, None);
        a.time.boottime_ns = None;
        b.time.boottime_ns = None;
        a.time.uptime_s = Some(5e-324);
        b.time.uptime_s = Some(1e-323);
        assert_eq!(Interval::between(Some(&a), &b).secs, None);
        assert_eq!(Interval::between(None, &b).secs, None);
        b.time.uptime_s = Some(5e-324 + 0.0009);
        assert_eq!(Interval::between(Some(&a), &b).secs, None);
        b.time.uptime_s = Some(12.5);
        assert_eq!(Interval::between(None, &b).secs, Some(12.5));
        let z = Interval {
            secs: None,
            since_boot: false,
        };
        assert_eq!(z.rate(Some(5)), None);
        assert_eq!(ratio(1.0, 0.0), None);
    }
}
