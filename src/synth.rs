//! Synthetic hosts: writes a `proc/` + `sys/` tree of any size for tests and benchmarks.

use anyhow::Result;
use std::path::Path;

#[derive(Debug, Clone)]
pub struct SynthSpec {
    pub cpus: u32,
    pub nodes: u32,
    pub disks: u32,
    pub queues: u32,
}

pub fn write_host(_dir: &Path, _spec: &SynthSpec, _tick: u64) -> Result<()> {
    anyhow::bail!("not yet")
}
