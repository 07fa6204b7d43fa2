//! Network in a sample: the softirq, softnet and per-NIC counters.

use super::{Interrupts, NicLink, TcpSample};
use crate::cpulist::CpuList;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetSample {
    pub softirqs: Option<Softirqs>,
    #[serde(default)]
    pub softnet: Vec<SoftnetRow>,
    pub interrupts: Option<Interrupts>,
    #[serde(default)]
    pub devices: Vec<NetDevice>,
    /// TCP/UDP counters and socket gauges (`None` in recordings made before perftop read them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpSample>,
}

/// `/proc/softirqs`: the header names the CPUs (including offline ones); counts are 32-bit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Softirqs {
    pub cpus: Vec<u32>,
    pub rows: Vec<SoftirqRow>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SoftirqRow {
    pub name: String,
    pub counts: Vec<u64>,
}

/// One `/proc/net/softnet_stat` line (hex, 32-bit counters).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SoftnetRow {
    pub cpu: u32,
    /// False before 5.10: the id is the n-th online CPU, not printed by the kernel.
    pub cpu_from_file: bool,
    pub processed: u64,
    pub dropped: u64,
    pub time_squeeze: u64,
    pub received_rps: Option<u64>,
    pub flow_limit: Option<u64>,
    /// Backlog queue length (a gauge), since 5.10.
    pub backlog: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetDevice {
    pub name: String,
    pub rx_bytes: u64,
    pub rx_packets: u64,
    pub rx_errs: u64,
    pub rx_drop: u64,
    pub rx_fifo: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub tx_errs: u64,
    pub tx_drop: u64,
    pub numa_node: Option<i32>,
    pub driver: Option<String>,
    /// `rps_cpus` per `queues/rx-N` (empty set = RPS off).
    #[serde(default)]
    pub rx_queues: Vec<Option<CpuList>>,
    pub tx_queues: u32,
    /// Link settings and error counters from `sys/class/net/DEV/` (`None` in older recordings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<NicLink>,
}
