//! One memory zone's watermarks from `/proc/zoneinfo`: the free-page levels at which kswapd
//! wakes (low), stops (high), and below which allocations reclaim themselves (min).

use serde::{Deserialize, Serialize};

/// A zone of a node (`DMA32`, `Normal`, ...), in pages. Free pages are the node's meminfo's to
/// say each second; zoneinfo is read for the watermarks, which change only with the sysctls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Zone {
    pub node: u32,
    pub name: String,
    pub min: Option<u64>,
    pub low: Option<u64>,
    pub high: Option<u64>,
    /// Pages the buddy allocator manages (0 for an empty zone).
    pub managed: Option<u64>,
}
