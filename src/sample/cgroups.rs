//! cgroups as read: per control group its cumulative CPU, throttling, memory and I/O counters,
//! its limits and its own PSI totals, from cgroup v2 (`cpu.stat`, `cpu.max`, `memory.*`,
//! `io.stat`, `*.pressure`) or the cheap cgroup v1 files (`cpuacct.usage`, `cpu.cfs_*`,
//! `memory.*`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The cgroups of one sample. `version` is `None` when no cgroup hierarchy is mounted under the
/// root (or the root is a capture without one).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cgroups {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<CgroupVersion>,
    /// Sorted by `path`, so derive pairs prev/cur by path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<CgroupSample>,
    /// Cgroups in the scanned set (top level, their children, kubepods pods and containers)
    /// that were not read because the set is capped (see `source::cgroups::MAX_GROUPS`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub left_out: u32,
    /// Set when the groups' rates do not run from the previous sample's: read in turns when
    /// samples come faster than a second (`Reader::sample`), or read again after a gap.
    /// `None`: read this sample, and the previous sample read them too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<Box<super::Turn<Cgroups>>>,
    /// When the groups were read, on a live host: late in the sample's pass (after the
    /// processes, 0.1-1.5 s after the stamp on a loaded 2-vCPU VM), so their rates run between
    /// their own reads, not the stamps'. `None`: at the stamp (a fixture tree, an older
    /// recording).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<super::SampleTime>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Which hierarchy the numbers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CgroupVersion {
    /// One controller per hierarchy (`/sys/fs/cgroup/{cpu,cpuacct,memory}`), or the hybrid
    /// layout whose cgroup2 tree holds no cpu or memory controller.
    V1,
    /// The unified hierarchy.
    V2,
}

impl CgroupVersion {
    pub fn as_str(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "v1",
            CgroupVersion::V2 => "v2",
        }
    }
}

/// A limit as the kernel states it: a number, or `max` (no limit). Serialized the same way:
/// a JSON number, or the string `"max"`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit<T> {
    Max,
    Value(T),
}

impl<T: Copy> Limit<T> {
    pub fn value(self) -> Option<T> {
        match self {
            Limit::Max => None,
            Limit::Value(v) => Some(v),
        }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Limit<U> {
        match self {
            Limit::Max => Limit::Max,
            Limit::Value(v) => Limit::Value(f(v)),
        }
    }
}

/// v1's "no limit" is the largest page count in bytes (9223372036854771712 with 4 kB pages),
/// and a limit above the machine's memory limits nothing either.
pub const NO_LIMIT_BYTES: u64 = 1 << 62;

impl Limit<u64> {
    /// A memory limit in bytes as it acts: `Max` when it is `max`, at least `NO_LIMIT_BYTES`,
    /// or above MemTotal (when known).
    pub fn real_bytes(self, mem_total_kb: Option<u64>) -> Limit<u64> {
        match self {
            Limit::Value(b)
                if b >= NO_LIMIT_BYTES
                    || mem_total_kb.is_some_and(|kb| b > kb.saturating_mul(1024)) =>
            {
                Limit::Max
            }
            l => l,
        }
    }
}

impl<T: Serialize> Serialize for Limit<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Limit::Max => s.serialize_str("max"),
            Limit::Value(v) => v.serialize(s),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Limit<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw<T> {
            Value(T),
            Word(String),
        }
        match Raw::<T>::deserialize(d)? {
            Raw::Value(v) => Ok(Limit::Value(v)),
            Raw::Word(w) if w == "max" => Ok(Limit::Max),
            Raw::Word(w) => Err(serde::de::Error::custom(format!(
                "a limit is a number or \"max\", not {w:?}"
            ))),
        }
    }
}

/// One cgroup. Counters are cumulative since the cgroup was created; v1's nanosecond counters
/// are stored in microseconds like v2's. Unknown (file absent, unreadable, the cgroup removed
/// mid-read) is `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CgroupSample {
    /// The cgroup's path in its hierarchy, from the hierarchy's root: `/system.slice/x.service`.
    pub path: String,
    /// CPU time used (v2 `cpu.stat` usage_usec; v1 `cpuacct.usage` / 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_us: Option<u64>,
    /// CPU quota per period (v2 `cpu.max`; v1 `cpu.cfs_quota_us`, -1 = `Max`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota_us: Option<Limit<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_us: Option<u64>,
    /// Enforcement periods that elapsed, and those in which the group was throttled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_periods: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_throttled: Option<u64>,
    /// Time throttled (v2 throttled_usec; v1 throttled_time / 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled_us: Option<u64>,
    /// Memory charged to the group (v2 `memory.current`; v1 `memory.usage_in_bytes`), page
    /// cache included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_bytes: Option<u64>,
    /// v2 `memory.high` (the throttle point); v1 has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_high: Option<Limit<u64>>,
    /// v2 `memory.max`; v1 `memory.limit_in_bytes` as written (derive decides what is "no
    /// limit": the kernel's default is a huge number there, not `max`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_max: Option<Limit<u64>>,
    /// Inactive page cache the kernel drops first (`memory.stat` inactive_file; v1
    /// total_inactive_file). Read only for groups at half a limit or more (see the reader).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inactive_file_bytes: Option<u64>,
    /// v2 `memory.events` high: times reclaim was forced at memory.high.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high_events: Option<u64>,
    /// v2 `memory.events` max (times usage was about to go over memory.max); v1
    /// `memory.failcnt` (times usage hit the limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_events: Option<u64>,
    /// v2 `memory.events` oom_kill; v1 `memory.oom_control` oom_kill (since 4.13).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oom_kills: Option<u64>,
    /// The group's own PSI stall totals (v2 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<CgroupPressure>,
    /// `io.stat` summed over devices (v2 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<CgroupIo>,
}

/// The `total=` µs of the `some` and `full` lines of a group's `cpu.pressure`,
/// `memory.pressure` and `io.pressure` (the kernel's avg10/60/300 are left out: perftop
/// computes the interval's share from the totals, and a recording need not carry them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CgroupPressure {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_some_us: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_full_us: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_some_us: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_full_us: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_some_us: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_full_us: Option<u64>,
}

/// `io.stat` counters summed over every device line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CgroupIo {
    pub rbytes: u64,
    pub wbytes: u64,
    pub rios: u64,
    pub wios: u64,
}
