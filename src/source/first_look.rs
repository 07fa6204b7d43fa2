//! The dashboard's first look at a big host (issue 42): a sample without per-CPU detail, so a
//! first frame comes in well under a second where the complete first sample takes seconds.

use super::cpu::CpuStatic;
use super::{Probe, Reader};
use crate::sample::{CpuEntry, CpuSample, CpuTimes, Sample};

impl Reader {
    /// The dashboard's first sample: on a big host (more than `turns::FIRST_LOOK_MIN_CPUS`
    /// CPUs) everything but per-CPU detail (idle states, topology, cpufreq policies, throttle
    /// counters), marked `CpuSample::detail_pending`, so a first frame does not wait for the
    /// ~200,000 files of that detail at 4096 CPUs; on a smaller host a complete sample. The
    /// reader then starts again as new: its next sample is a first, cold one that reads every
    /// CPU's detail (the caller reads it at once, not a clock tick later).
    pub fn first_look(&mut self) -> Sample {
        self.probe.first_look = true;
        let s = self.sample();
        self.probe.first_look = false;
        if s.cpu.detail_pending {
            self.samples_read = 0;
            self.last_sample = None;
        }
        s
    }
}

/// The dashboard's first look at a big host: each CPU's times, online state and node, none
/// of its detail (idle states, topology, cpufreq): at 4096 CPUs that detail is ~200,000 of a
/// cold sample's ~225,000 files, seconds before a first frame on a loaded machine. The sample
/// says the detail is pending (`detail_pending`); nothing is cached, so the next sample reads
/// every CPU as a first sample does.
pub(super) fn cpus(probe: &mut Probe, mut out: CpuSample, known: Vec<Known>) -> CpuSample {
    out.cpus = known
        .into_iter()
        .map(|(id, online, times, node, cached)| {
            if let Some(st) = cached {
                probe.cache.cpus.insert(id, st);
            }
            CpuEntry {
                id,
                online,
                times,
                node,
                ..CpuEntry::default()
            }
        })
        .collect();
    out.detail_pending = true;
    out
}

/// What `read_cpu` knows of a CPU before its detail: id, online, `/proc/stat` times, NUMA
/// node, and what is cached about it.
pub(super) type Known = (u32, bool, Option<CpuTimes>, Option<u32>, Option<CpuStatic>);
