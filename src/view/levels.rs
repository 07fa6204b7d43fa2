//! Colour levels of values, from the same thresholds as the findings: editing `config.toml`
//! moves the colour with the finding. Values no rule judges have their display cut-offs here,
//! in one table, so no renderer hard-codes a number.

use super::model::Level;
use crate::derive::FsMetrics;
use crate::findings::{fs_low_avail, fs_watched, Thresholds};

/// Cut-offs (warn, crit) for values that colour but raise no finding.
pub mod display {
    /// C0% / busy% of a CPU or the machine.
    pub const BUSY_PCT: (f64, f64) = (70.0, 90.0);
    /// iowait% of a CPU.
    pub const IOWAIT_PCT: (f64, f64) = (20.0, 50.0);
    /// steal% of a CPU (a VM's host is busy).
    pub const STEAL_PCT: (f64, f64) = (5.0, 20.0);
    /// Idle-state miss% (the governor picked a state too deep or too shallow).
    pub const IDLE_MISS_PCT: (f64, f64) = (30.0, 60.0);
    /// %irq of a CPU.
    pub const IRQ_PCT: (f64, f64) = (30.0, 60.0);
    /// %util of a serial device (rotational, or one queue).
    pub const UTIL_PCT: (f64, f64) = (60.0, 90.0);
    /// numa_miss pages/s of a node.
    pub const NUMA_MISS_PER_S: (f64, f64) = (1000.0, 100_000.0);
    /// The Disks headline names the fullest watched filesystem from this % used (fs.full's
    /// own levels colour it).
    pub const FS_HEADLINE_PCT: f64 = 90.0;
}

/// Level of `v` against (warn, crit): unknown is dim, never a colour of health.
pub fn level(v: Option<f64>, warn: f64, crit: f64) -> Level {
    match v {
        Some(x) if x >= crit => Level::Crit,
        Some(x) if x >= warn => Level::Warn,
        Some(_) => Level::Text,
        None => Level::Dim,
    }
}

fn pair(v: Option<f64>, (warn, crit): (f64, f64)) -> Level {
    level(v, warn, crit)
}

/// Levels for every coloured value of every pane.
pub struct Levels<'a> {
    pub t: &'a Thresholds,
}

impl Levels<'_> {
    pub fn busy(&self, v: Option<f64>) -> Level {
        pair(v, display::BUSY_PCT)
    }
    pub fn iowait(&self, v: Option<f64>) -> Level {
        pair(v, display::IOWAIT_PCT)
    }
    pub fn steal(&self, v: Option<f64>) -> Level {
        pair(v, display::STEAL_PCT)
    }
    pub fn idle_miss(&self, v: Option<f64>) -> Level {
        pair(v, display::IDLE_MISS_PCT)
    }
    pub fn irq_pct(&self, v: Option<f64>) -> Level {
        pair(v, display::IRQ_PCT)
    }
    pub fn util(&self, v: Option<f64>) -> Level {
        pair(v, display::UTIL_PCT)
    }
    pub fn numa_miss_per_s(&self, v: Option<f64>) -> Level {
        pair(v, display::NUMA_MISS_PER_S)
    }

    /// fs.full: a filesystem's (or its inodes') used %; dim where the rule does not look
    /// (read-only, tiny).
    pub fn fs_used(&self, f: &FsMetrics, pct: Option<f64>) -> Level {
        if !fs_watched(f, self.t) {
            return Level::Dim;
        }
        level(pct, self.t.fs_full_pct, self.t.fs_full_pct_crit)
    }

    /// fs.full's free-space leg.
    pub fn fs_avail(&self, f: &FsMetrics) -> Level {
        match (fs_watched(f, self.t), f.avail_bytes) {
            (false, _) => Level::Dim,
            (true, 0) => Level::Crit,
            (true, _) if fs_low_avail(f, self.t) => Level::Warn,
            _ => Level::Text,
        }
    }

    /// numa.misses: a node's miss ratio in %.
    pub fn numa_miss_pct(&self, v: Option<f64>) -> Level {
        level(
            v,
            self.t.numa_miss_ratio * 100.0,
            self.t.numa_miss_ratio_crit * 100.0,
        )
    }

    /// thp.fallback: the fallback share in % (the rule has one level).
    pub fn thp_fallback_pct(&self, v: Option<f64>) -> Level {
        level(v, self.t.thp_fallback_ratio * 100.0, f64::INFINITY)
    }

    /// pagetables.large: PageTables as % of RAM.
    pub fn page_tables_pct(&self, v: Option<f64>) -> Level {
        level(v, self.t.pagetables_pct, self.t.pagetables_pct_crit)
    }

    /// hugepages.unused: the unused share of the pools (0..1), warn at the rule's share.
    pub fn hugepages_unused(&self, share: Option<f64>) -> Level {
        match share {
            Some(s) if s > 0.0 && s >= self.t.hugepages_unused_share => Level::Warn,
            Some(_) => Level::Text,
            None => Level::Dim,
        }
    }

    /// disk.saturated: the queue depth.
    pub fn aqu_sz(&self, v: Option<f64>) -> Level {
        level(v, self.t.disk_aqu_sz, self.t.disk_aqu_sz_crit)
    }

    /// disk.saturated's absolute await (ms) for this kind of device (the rule has one level;
    /// the queue decides crit).
    pub fn await_ms(&self, v: Option<f64>, rotational: Option<bool>) -> Level {
        let warn = if rotational == Some(false) {
            self.t.disk_await_ssd_ms
        } else {
            self.t.disk_await_rotational_ms
        };
        level(v, warn, f64::INFINITY)
    }

    /// softirq.hotspot: a CPU's %soft.
    pub fn soft_pct(&self, v: Option<f64>) -> Level {
        level(v, self.t.softirq_soft_pct, f64::INFINITY)
    }

    /// net.drops: softnet backlog drops/s (the rule is crit).
    pub fn softnet_drops(&self, v: Option<f64>) -> Level {
        level(
            v,
            self.t.net_softnet_drops_per_s,
            self.t.net_softnet_drops_per_s,
        )
    }

    /// net.drops: time squeezes/s.
    pub fn squeezes(&self, v: Option<f64>) -> Level {
        level(v, self.t.net_squeeze_per_s, f64::INFINITY)
    }

    /// net.drops: a NIC's drops/s.
    pub fn nic_drops(&self, v: Option<f64>) -> Level {
        level(v, self.t.net_nic_drops_per_s, f64::INFINITY)
    }

    /// ksoftirqd.busy: a ksoftirqd thread's CPU%.
    pub fn ksoftirqd(&self, v: Option<f64>) -> Level {
        level(v, self.t.ksoftirqd_pct, self.t.ksoftirqd_pct_crit)
    }

    /// irq.storm's absolute rate: an IRQ line's interrupts/s (the rule also wants a jump
    /// from the line's usual rate, which a single interval cannot show).
    pub fn irq_line(&self, v: Option<f64>) -> Level {
        level(v, self.t.irq_storm_per_s, f64::INFINITY)
    }

    /// ipi.storm: a CPU's function-call + TLB-shootdown IPIs/s.
    pub fn ipi(&self, v: Option<f64>) -> Level {
        level(v, self.t.ipi_storm_per_s, f64::INFINITY)
    }

    /// PSI (some, full) shares of a resource (`cpu`, `mem`, `io`, `irq`): memory.pressure
    /// (some warn, full crit), io.pressure (full warn), cpu.pressure (some warn); irq has no
    /// rule.
    pub fn psi(&self, res: &str, some: Option<f64>, full: Option<f64>) -> (Level, Level) {
        let t = self.t;
        let never = f64::INFINITY;
        let (some_at, full_at, full_lvl) = match res {
            "cpu" => (t.cpu_psi_some_pct, never, Level::Warn),
            "mem" => (t.memory_psi_some_pct, t.memory_psi_full_pct, Level::Crit),
            "io" => (never, t.io_psi_full_pct, Level::Warn),
            _ => (never, never, Level::Warn),
        };
        let full = match level(full, full_at, never) {
            Level::Warn => full_lvl,
            l => l,
        };
        (level(some, some_at, never), full)
    }

    /// cgroup.throttled: a group's throttled share of periods (%), coloured only when its
    /// throttled time also reaches the rule's level.
    pub fn cgroup_throttled(&self, pct: Option<f64>, ms_per_s: Option<f64>) -> Level {
        let t = self.t;
        match ms_per_s {
            Some(ms) if ms >= t.cgroup_throttled_ms_per_s => {
                level(pct, t.cgroup_throttled_pct, t.cgroup_throttled_pct_crit)
            }
            _ if pct.is_some() => Level::Text,
            _ => Level::Dim,
        }
    }

    /// cgroup.memory_high: a group's memory as % of its lowest limit (crit is the rule's
    /// events, which a gauge does not show).
    pub fn cgroup_memory(&self, pct_of_limit: Option<f64>) -> Level {
        match pct_of_limit {
            None => Level::Text,
            v => level(v, self.t.cgroup_memory_max_pct, f64::INFINITY),
        }
    }

    /// memory.swapping: pages swapped in + out per second.
    pub fn swapping(&self, pages_per_s: Option<f64>) -> Level {
        level(pages_per_s, self.t.swapping_pages_per_s, f64::INFINITY)
    }

    /// memory.direct_reclaim: allocation stalls/s or direct-reclaim scans/s, whichever rings.
    pub fn direct_reclaim(&self, stalls: Option<f64>, scans: Option<f64>) -> Level {
        let a = level(
            stalls,
            self.t.direct_reclaim_allocstall_per_s,
            f64::INFINITY,
        );
        let b = level(scans, self.t.direct_reclaim_scan_per_s, f64::INFINITY);
        match (a, b) {
            (Level::Warn, _) | (_, Level::Warn) => Level::Warn,
            (Level::Dim, Level::Dim) => Level::Dim,
            _ => Level::Text,
        }
    }

    /// dirty.*: the writeback state word.
    pub fn dirty_state(&self, state: Option<&str>) -> Level {
        match state {
            Some("throttled") => Level::Crit,
            Some("background") => Level::Warn,
            Some(_) => Level::Good,
            None => Level::Dim,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_move_with_the_config() {
        let mut t = Thresholds::default();
        let l = Levels { t: &t };
        assert_eq!(l.aqu_sz(Some(4.0)), Level::Warn);
        assert_eq!(l.aqu_sz(Some(3.9)), Level::Text);
        assert_eq!(l.aqu_sz(Some(32.0)), Level::Crit);
        assert_eq!(l.numa_miss_pct(Some(10.0)), Level::Warn);
        assert_eq!(l.numa_miss_pct(Some(30.0)), Level::Crit);
        assert_eq!(l.aqu_sz(None), Level::Dim);
        t.disk_aqu_sz = 8.0;
        let l = Levels { t: &t };
        assert_eq!(l.aqu_sz(Some(4.0)), Level::Text);
        assert_eq!(l.await_ms(Some(2.5), Some(false)), Level::Warn);
        assert_eq!(l.await_ms(Some(2.5), Some(true)), Level::Text);
        assert_eq!(l.ipi(Some(20_000.0)), Level::Warn);
        assert_eq!(l.ipi(Some(19_999.0)), Level::Text);
        assert_eq!(l.irq_line(Some(50_000.0)), Level::Warn);
        assert_eq!(l.irq_line(None), Level::Dim);
    }
}
