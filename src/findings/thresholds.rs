//! The numbers behind every finding, in one place: defaults (docs/findings.md, "Findings thresholds"
//! table), overrides from a config file, and the relaxed set a raised finding keeps holding at.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// All finding thresholds. Rates are per second, shares are 0..1, percentages are 0..100.
/// A rule holds when its value is at or above its threshold (dirty: strictly above, as the
/// kernel compares). Missing fields in a config keep their default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Thresholds {
    /// dirty.background: Dirty above this multiple of the kernel's background threshold.
    pub dirty_background_factor: f64,
    /// dirty.throttled: Dirty + Writeback above this multiple of the freerun point
    /// ((background + hard threshold) / 2). Crit at the hard threshold itself.
    pub dirty_throttled_factor: f64,
    /// disk.saturated: average queue depth (aqu-sz) at or above this ...
    pub disk_aqu_sz: f64,
    /// ... crit at or above this aqu-sz.
    pub disk_aqu_sz_crit: f64,
    /// ... and await (ms) at or above this multiple of the device's own baseline await ...
    pub disk_await_vs_baseline: f64,
    /// ... and never below this (ms): 0.1 → 0.4 ms is not a queue.
    pub disk_await_min_ms: f64,
    /// Without a trusted baseline (delta mode): await (ms) on rotational or unknown disks ...
    pub disk_await_rotational_ms: f64,
    /// ... and on non-rotational ones (SSD, NVMe, dm/md over them).
    pub disk_await_ssd_ms: f64,
    /// Weight of the newest sample in the per-device await EWMA (0..1).
    pub disk_baseline_alpha: f64,
    /// Samples a device's baseline needs before it replaces the absolute await thresholds.
    pub disk_baseline_min_samples: u32,
    /// fs.full: a writable filesystem at or above this % used (used / (used + avail), df's
    /// Use%), or of its inodes ...
    pub fs_full_pct: f64,
    /// ... crit at or above this % (or nothing left for unprivileged writers at all).
    pub fs_full_pct_crit: f64,
    /// fs.full also: less than this many GiB available ...
    pub fs_full_avail_gib: f64,
    /// ... on a filesystem of at least this many GiB (where that is at most a tenth of it).
    pub fs_full_avail_min_size_gib: f64,
    /// fs.full ignores filesystems smaller than this many MiB (firmware partitions, /run/lock).
    pub fs_min_size_mib: f64,
    /// softirq.hotspot: the busiest CPU's share of softnet-processed packets (NET_RX runs when
    /// softnet_stat is unknown) ...
    pub softirq_hotspot_share: f64,
    /// ... and at least this multiple of the mean of the other online CPUs ...
    pub softirq_hotspot_vs_peers: f64,
    /// ... when all CPUs together process at least this many per second.
    pub softirq_hotspot_min_per_s: f64,
    /// softirq.hotspot also: a CPU's %soft at or above this while it squeezes ...
    pub softirq_soft_pct: f64,
    /// ... at least this many time squeezes per second.
    pub softirq_soft_squeeze_per_s: f64,
    /// net.drops: softnet backlog drops per second over all CPUs (crit).
    pub net_softnet_drops_per_s: f64,
    /// net.drops: softnet time squeezes per second over all CPUs.
    pub net_squeeze_per_s: f64,
    /// net.drops: one NIC's rx+tx drops per second (`/proc/net/dev`). Higher than the softnet
    /// level: many drivers count frames nobody handles (LLDP, unknown protocols) as rx drops.
    pub net_nic_drops_per_s: f64,
    /// net.listen_overflow: TcpExt ListenOverflows per second (always crit).
    pub net_listen_overflow_per_s: f64,
    /// net.retrans: RetransSegs at or above this % of OutSegs ...
    pub net_retrans_pct: f64,
    /// ... crit at or above this % ...
    pub net_retrans_pct_crit: f64,
    /// ... while at least this many segments/s go out (an idle box's few retransmits).
    pub net_retrans_min_segs_per_s: f64,
    /// udp.rcvbuf: Udp RcvbufErrors per second.
    pub udp_rcvbuf_errors_per_s: f64,
    /// nic.errors: one NIC's rx_missed (or FIFO) or CRC errors per second.
    pub nic_errors_per_s: f64,
    /// nic.link: carrier changes within one interval.
    pub nic_carrier_changes: f64,
    /// numa.misses: a node's numa_miss / (numa_hit + numa_miss) over the interval ...
    pub numa_miss_ratio: f64,
    /// ... crit at or above this ratio ...
    pub numa_miss_ratio_crit: f64,
    /// ... when that node allocates at least this many pages per second (hit + miss).
    pub numa_min_pages_per_s: f64,
    /// thp.fallback: thp_fault_fallback / (alloc + fallback) ...
    pub thp_fallback_ratio: f64,
    /// ... when there are at least this many THP faults per second.
    pub thp_min_faults_per_s: f64,
    /// thp.fallback also: direct compaction stalls per second.
    pub thp_compact_stall_per_s: f64,
    /// hugepages.unused: free-and-unreserved share of a huge page pool ...
    pub hugepages_unused_share: f64,
    /// ... when that unused memory is at least this % of RAM.
    pub hugepages_unused_min_pct_ram: f64,
    /// pagetables.large: PageTables as % of MemTotal.
    pub pagetables_pct: f64,
    /// ... crit at or above this %.
    pub pagetables_pct_crit: f64,
    /// cpu.powersave_busy: a CPU counts as busy at or above this C0% ...
    pub powersave_busy_pct: f64,
    /// ... and the rule holds when busy CPUs under a non-`performance` governor are at least
    /// this share of the online CPUs.
    pub powersave_busy_cpu_share: f64,
    /// cpu.thermal_throttle: a core or package throttled at least this % of the interval
    /// (any throttle event where the kernel does not count time) ...
    pub thermal_throttle_pct: f64,
    /// ... crit at or above this % ...
    pub thermal_throttle_pct_crit: f64,
    /// ... while its CPUs are at least this C0% busy on average.
    pub thermal_throttle_busy_pct: f64,
    /// ksoftirqd.busy: one ksoftirqd/N thread's CPU%.
    pub ksoftirqd_pct: f64,
    /// ... crit at or above this CPU%.
    pub ksoftirqd_pct_crit: f64,
    /// irq.storm: one IRQ line at or above this many interrupts per second ...
    pub irq_storm_per_s: f64,
    /// ... and at or above this multiple of its own baseline: the EWMA of its rate learned over
    /// the run, else (`delta`, a run's first intervals) its average since boot.
    pub irq_storm_vs_baseline: f64,
    /// Weight of the newest interval in each line's rate EWMA (0..1).
    pub irq_baseline_alpha: f64,
    /// Intervals a run learns before its EWMAs replace the lines' averages since boot.
    pub irq_baseline_min_samples: u32,
    /// ipi.storm: function-call plus TLB-shootdown IPIs per second taken by one CPU.
    pub ipi_storm_per_s: f64,
    /// memory.pressure: PSI memory `full` share of the interval (%), crit ...
    pub memory_psi_full_pct: f64,
    /// ... or PSI memory `some` share (%), warn.
    pub memory_psi_some_pct: f64,
    /// memory.direct_reclaim: allocation stalls per second (every `allocstall_*`) ...
    pub direct_reclaim_allocstall_per_s: f64,
    /// ... or pages per second scanned by direct reclaim.
    pub direct_reclaim_scan_per_s: f64,
    /// memory.swapping: pages per second swapped in + out.
    pub swapping_pages_per_s: f64,
    /// cpu.pressure: PSI cpu `some` share (%): runnable tasks waiting for a CPU.
    pub cpu_psi_some_pct: f64,
    /// io.pressure: PSI io `full` share (%).
    pub io_psi_full_pct: f64,
    /// cgroup.throttled: share of a group's CPU-quota periods in the interval that were
    /// throttled (%) ...
    pub cgroup_throttled_pct: f64,
    /// ... and time throttled, ms per second ...
    pub cgroup_throttled_ms_per_s: f64,
    /// ... crit at or above this share of periods (%).
    pub cgroup_throttled_pct_crit: f64,
    /// cgroup.memory_high: a group's memory (less inactive page cache, when read) as % of its
    /// memory.max / v1 limit; at or above memory.high always holds. Crit when memory.events
    /// high/max (v1 failcnt) grew while it held, or on an OOM kill in the group.
    pub cgroup_memory_max_pct: f64,
    /// memory.oom_kill: seconds a kill stays on the strip after the last one.
    pub oom_kill_hold_s: f64,
    /// disk.queue_full: in-flight requests or aqu-sz at or above this % of the device's queue
    /// (SCSI `queue_depth`, else `nr_requests` times its hardware queues).
    pub disk_queue_full_pct: f64,
    /// mpath.path_idle: one running path's share (0..1) of its multipath map's IO/s ...
    pub mpath_path_idle_share: f64,
    /// ... when the map's running paths complete at least this many IO/s together.
    pub mpath_min_ios_per_s: f64,
    /// Strip: consecutive samples a finding must hold before it is raised.
    pub raise_after: u32,
    /// Strip: consecutive samples a raised finding must fail (even at the relaxed thresholds)
    /// before it clears.
    pub clear_after: u32,
    /// Strip: a raised finding keeps holding at this fraction of its trigger thresholds.
    pub clear_factor: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            dirty_background_factor: 1.0,
            dirty_throttled_factor: 1.0,
            disk_aqu_sz: 4.0,
            disk_aqu_sz_crit: 32.0,
            disk_await_vs_baseline: 3.0,
            disk_await_min_ms: 1.0,
            disk_await_rotational_ms: 20.0,
            disk_await_ssd_ms: 2.0,
            disk_baseline_alpha: 0.1,
            disk_baseline_min_samples: 5,
            fs_full_pct: 95.0,
            fs_full_pct_crit: 99.0,
            fs_full_avail_gib: 1.0,
            fs_full_avail_min_size_gib: 10.0,
            fs_min_size_mib: 32.0,
            softirq_hotspot_share: 0.5,
            softirq_hotspot_vs_peers: 4.0,
            softirq_hotspot_min_per_s: 5000.0,
            softirq_soft_pct: 50.0,
            softirq_soft_squeeze_per_s: 1.0,
            net_softnet_drops_per_s: 1.0,
            net_squeeze_per_s: 10.0,
            net_nic_drops_per_s: 10.0,
            net_listen_overflow_per_s: 1.0,
            net_retrans_pct: 2.0,
            net_retrans_pct_crit: 10.0,
            net_retrans_min_segs_per_s: 100.0,
            udp_rcvbuf_errors_per_s: 1.0,
            nic_errors_per_s: 1.0,
            nic_carrier_changes: 1.0,
            numa_miss_ratio: 0.10,
            numa_miss_ratio_crit: 0.30,
            numa_min_pages_per_s: 1000.0,
            thp_fallback_ratio: 0.5,
            thp_min_faults_per_s: 10.0,
            thp_compact_stall_per_s: 5.0,
            hugepages_unused_share: 0.75,
            hugepages_unused_min_pct_ram: 1.0,
            pagetables_pct: 5.0,
            pagetables_pct_crit: 15.0,
            powersave_busy_pct: 50.0,
            powersave_busy_cpu_share: 0.25,
            thermal_throttle_pct: 1.0,
            thermal_throttle_pct_crit: 20.0,
            thermal_throttle_busy_pct: 50.0,
            ksoftirqd_pct: 10.0,
            ksoftirqd_pct_crit: 50.0,
            irq_storm_per_s: 50_000.0,
            irq_storm_vs_baseline: 10.0,
            irq_baseline_alpha: 0.1,
            irq_baseline_min_samples: 5,
            ipi_storm_per_s: 20_000.0,
            memory_psi_full_pct: 10.0,
            memory_psi_some_pct: 30.0,
            direct_reclaim_allocstall_per_s: 1.0,
            direct_reclaim_scan_per_s: 1000.0,
            swapping_pages_per_s: 256.0,
            cpu_psi_some_pct: 50.0,
            io_psi_full_pct: 20.0,
            cgroup_throttled_pct: 10.0,
            cgroup_throttled_ms_per_s: 50.0,
            cgroup_throttled_pct_crit: 50.0,
            cgroup_memory_max_pct: 90.0,
            oom_kill_hold_s: 60.0,
            disk_queue_full_pct: 90.0,
            mpath_path_idle_share: 0.9,
            mpath_min_ios_per_s: 10.0,
            raise_after: 3,
            clear_after: 3,
            clear_factor: 0.9,
        }
    }
}

impl Thresholds {
    /// Defaults overridden by the fields of a JSON object; unknown fields are an error.
    pub fn from_json_str(s: &str) -> Result<Thresholds> {
        let t: Thresholds = serde_json::from_str(s).context("parsing findings thresholds")?;
        t.validate()?;
        Ok(t)
    }

    pub fn validate(&self) -> Result<()> {
        let v = serde_json::to_value(self).context("encoding thresholds")?;
        if let Some(map) = v.as_object() {
            for (k, x) in map {
                if !matches!(x.as_f64(), Some(f) if f.is_finite() && f >= 0.0) {
                    bail!("findings threshold {k} must be a finite number >= 0");
                }
            }
        }
        if self.raise_after == 0 || self.clear_after == 0 {
            bail!("raise_after and clear_after must be at least 1");
        }
        if !(0.0..=1.0).contains(&self.clear_factor)
            || !(0.0..=1.0).contains(&self.disk_baseline_alpha)
            || !(0.0..=1.0).contains(&self.irq_baseline_alpha)
        {
            bail!("clear_factor, disk_baseline_alpha and irq_baseline_alpha must be within 0..1");
        }
        Ok(())
    }

    /// The thresholds a raised finding keeps holding at: every trigger level times `k`.
    /// Activity gates (minimum rates), crit levels and tracker settings are left as they are,
    /// so hysteresis never makes a finding more severe.
    pub fn relaxed(&self, k: f64) -> Thresholds {
        let mut t = self.clone();
        for v in [
            &mut t.dirty_background_factor,
            &mut t.dirty_throttled_factor,
            &mut t.disk_aqu_sz,
            &mut t.disk_await_vs_baseline,
            &mut t.disk_await_min_ms,
            &mut t.disk_await_rotational_ms,
            &mut t.disk_await_ssd_ms,
            &mut t.fs_full_pct,
            &mut t.softirq_hotspot_share,
            &mut t.softirq_hotspot_vs_peers,
            &mut t.softirq_soft_pct,
            &mut t.softirq_soft_squeeze_per_s,
            &mut t.net_softnet_drops_per_s,
            &mut t.net_squeeze_per_s,
            &mut t.net_nic_drops_per_s,
            &mut t.net_listen_overflow_per_s,
            &mut t.net_retrans_pct,
            &mut t.udp_rcvbuf_errors_per_s,
            &mut t.nic_errors_per_s,
            &mut t.numa_miss_ratio,
            &mut t.thp_fallback_ratio,
            &mut t.thp_compact_stall_per_s,
            &mut t.hugepages_unused_share,
            &mut t.hugepages_unused_min_pct_ram,
            &mut t.pagetables_pct,
            &mut t.powersave_busy_pct,
            &mut t.powersave_busy_cpu_share,
            &mut t.thermal_throttle_pct,
            &mut t.thermal_throttle_busy_pct,
            &mut t.ksoftirqd_pct,
            &mut t.irq_storm_per_s,
            &mut t.irq_storm_vs_baseline,
            &mut t.ipi_storm_per_s,
            &mut t.memory_psi_full_pct,
            &mut t.memory_psi_some_pct,
            &mut t.direct_reclaim_allocstall_per_s,
            &mut t.direct_reclaim_scan_per_s,
            &mut t.swapping_pages_per_s,
            &mut t.cpu_psi_some_pct,
            &mut t.io_psi_full_pct,
            &mut t.cgroup_throttled_pct,
            &mut t.cgroup_throttled_ms_per_s,
            &mut t.cgroup_memory_max_pct,
            &mut t.disk_queue_full_pct,
            &mut t.mpath_path_idle_share,
        ] {
            *v *= k;
        }
        // A floor is relaxed the other way: a raised fs.full holds until 1.11 GiB is free.
        if k > 0.0 {
            t.fs_full_avail_gib /= k;
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_parse_validate_and_relax() {
        let t =
            Thresholds::from_json_str(r#"{"pagetables_pct": 8, "raise_after": 5}"#).expect("valid");
        assert_eq!(t.pagetables_pct, 8.0);
        assert_eq!(t.raise_after, 5);
        assert_eq!(t.disk_aqu_sz, Thresholds::default().disk_aqu_sz);
        assert!(
            Thresholds::from_json_str(r#"{"pagetable_pct": 8}"#).is_err(),
            "typo is an error"
        );
        assert!(Thresholds::from_json_str(r#"{"numa_miss_ratio": -1}"#).is_err());
        assert!(Thresholds::from_json_str(r#"{"raise_after": 0}"#).is_err());
        assert!(Thresholds::from_json_str(r#"{"irq_baseline_alpha": 1.5}"#).is_err());
        let r = Thresholds::default().relaxed(0.9);
        assert!((r.pagetables_pct - 4.5).abs() < 1e-9);
        assert_eq!(r.pagetables_pct_crit, 15.0, "crit levels are not relaxed");
        assert_eq!(
            r.numa_min_pages_per_s, 1000.0,
            "activity gates are not relaxed"
        );
        assert!((r.ipi_storm_per_s - 18_000.0).abs() < 1e-9);
        assert!((r.irq_storm_per_s - 45_000.0).abs() < 1e-9);
        assert!((r.irq_storm_vs_baseline - 9.0).abs() < 1e-9);
        assert_eq!(r.irq_baseline_alpha, 0.1, "learning is not relaxed");
        Thresholds::default()
            .validate()
            .expect("defaults are valid");
    }
}
