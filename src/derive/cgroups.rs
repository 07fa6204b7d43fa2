//! cgroups over the interval: per control group its CPU against its quota, throttling, memory
//! against memory.high / memory.max (or the v1 limit), memory events, its own PSI and I/O
//! rates, under a name that says what it is (a systemd unit, a docker/podman/k8s container).

use super::{ratio, turn_pair, Interval};
use crate::sample::{CgroupIo, CgroupPressure, CgroupSample, Cgroups, Limit, Sample};
use serde::Serialize;
use std::collections::HashMap;

/// Why there are no cgroup numbers, when there are none.
pub const CGROUPS_NOT_RECORDED: &str = "not in this recording (made before perftop read cgroups)";
pub const CGROUPS_NOT_MOUNTED: &str = "no cgroup hierarchy mounted (or captured)";

/// One cgroup over the interval. Rates are unknown (null) for a since-boot report: a group's
/// counters start when it is created, not at boot. `*_events` and `oom_kills` are counts in
/// the interval.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CgroupMetrics {
    /// `docker:0123456789ab`, `k8s:pod1a2b3c4d/0123456789ab`, `nginx.service`, else the path.
    pub name: String,
    /// The cgroup's path in its hierarchy: `/system.slice/nginx.service`.
    pub path: String,
    /// CPU used, in % of one CPU (200 = two CPUs busy).
    pub cpu_pct: Option<f64>,
    /// CPUs the quota allows (quota / period), or `"max"`: no quota.
    pub cpu_quota_cpus: Option<Limit<f64>>,
    /// CPU used as % of the quota.
    pub cpu_of_quota_pct: Option<f64>,
    /// Share of the interval's enforcement periods in which the group was throttled (%).
    pub throttled_pct: Option<f64>,
    /// Time the group spent throttled, ms per second.
    pub throttled_ms_per_s: Option<f64>,
    /// Memory charged to the group, page cache included.
    pub mem_kb: Option<u64>,
    /// `mem_kb` less inactive page cache (known only for a group near a limit).
    pub mem_working_set_kb: Option<u64>,
    /// v2 memory.high, or `"max"`.
    pub mem_high_kb: Option<Limit<u64>>,
    /// v2 memory.max, or v1 memory.limit_in_bytes; `"max"` when there is none (v1: a value
    /// of 2^62 bytes or more, or above MemTotal).
    pub mem_max_kb: Option<Limit<u64>>,
    /// The working set (else `mem_kb`) as % of the lower of memory.high and memory.max.
    pub mem_of_limit_pct: Option<f64>,
    /// Times reclaim was forced at memory.high in the interval (v2).
    pub mem_high_events: Option<u64>,
    /// Times the group hit memory.max in the interval (v1: memory.failcnt).
    pub mem_max_events: Option<u64>,
    pub oom_kills: Option<u64>,
    /// The group's own PSI: share of the interval (%) some / all of its tasks stalled.
    pub cpu_some_pct: Option<f64>,
    pub mem_some_pct: Option<f64>,
    pub mem_full_pct: Option<f64>,
    pub io_some_pct: Option<f64>,
    pub io_full_pct: Option<f64>,
    pub read_kb_per_s: Option<f64>,
    pub write_kb_per_s: Option<f64>,
    pub read_iops: Option<f64>,
    pub write_iops: Option<f64>,
}

/// Every cgroup of the current sample, in path order, against the same group (by path) in the
/// previous one.
pub fn derive_cgroups(iv: Interval, prev: Option<&Sample>, cur: &Sample) -> Vec<CgroupMetrics> {
    let Some(c) = &cur.cgroups else {
        return Vec::new();
    };
    // Groups read in turns (samples faster than a second) or after a gap run between their
    // own two reads; unknown when there is no read before.
    let prev = prev.and_then(|p| p.cgroups.as_ref());
    let (iv, before, _) = pair(iv, prev, c);
    let before: HashMap<&str, &CgroupSample> = before
        .filter(|p| p.version == c.version)
        .map(|p| p.groups.iter().map(|g| (g.path.as_str(), g)).collect())
        .unwrap_or_default();
    let mem_total = cur.memory.meminfo.mem_total;
    c.groups
        .iter()
        .map(|g| one(iv, before.get(g.path.as_str()).copied(), g, mem_total))
        .collect()
}

/// What the groups' rates run between: the read before (`turn_pair`) over the time between
/// the two reads, which on a live host is the groups' own read times (`Cgroups::at`), not
/// the stamps'. The third value is that time when it is not the sample's interval
/// (`cgroups_secs`).
pub fn pair<'a>(
    iv: Interval,
    prev: Option<&'a Cgroups>,
    cur: &'a Cgroups,
) -> (Interval, Option<&'a Cgroups>, Option<f64>) {
    if cur.turn.is_some() || iv.since_boot {
        return turn_pair(iv, cur.turn.as_deref(), prev);
    }
    match (prev.and_then(|p| p.at.as_ref()), cur.at.as_ref()) {
        (Some(a), Some(b)) => {
            let own = Interval::of_times(Some(a), b);
            (own, prev, own.secs)
        }
        _ => (iv, prev, None),
    }
}

/// Why `derive_cgroups` gave nothing, when that is not simply "no groups".
pub fn unknown(cur: &Sample) -> Option<&'static str> {
    match &cur.cgroups {
        None => Some(CGROUPS_NOT_RECORDED),
        Some(c) if c.version.is_none() => Some(CGROUPS_NOT_MOUNTED),
        Some(_) => None,
    }
}

fn one(
    iv: Interval,
    p: Option<&CgroupSample>,
    g: &CgroupSample,
    mem_total_kb: Option<u64>,
) -> CgroupMetrics {
    // Since boot is no interval for a group (its counters start at its creation).
    let p = if iv.since_boot { None } else { p };
    let d = |f: &dyn Fn(&CgroupSample) -> Option<u64>| iv.d64(Some(f(p?)?), f(g)?);
    let secs = iv.secs.filter(|_| p.is_some());
    let per_s = |v: Option<u64>| Some(v? as f64 / secs?);
    let cpu_pct = per_s(d(&|g| g.usage_us)).map(|us| us / 1e6 * 100.0);
    let quota = match (g.quota_us, g.period_us) {
        (Some(Limit::Max), _) => Some(Limit::Max),
        (Some(Limit::Value(q)), Some(per)) => ratio(q as f64, per as f64).map(Limit::Value),
        _ => None,
    };
    let cpu_of_quota_pct = match (cpu_pct, quota) {
        (Some(used), Some(Limit::Value(cpus))) => ratio(used, cpus),
        _ => None,
    };
    let (periods, throttled) = (d(&|g| g.nr_periods), d(&|g| g.nr_throttled));
    // A share of periods, not a rate, but of an interval all the same: none, no share.
    let (periods, throttled) = (periods.filter(|_| secs.is_some()), throttled);
    let throttled_pct = match (periods, throttled) {
        // No period elapsed: nothing ran against a quota, so nothing was throttled.
        (Some(0), Some(0)) => Some(0.0),
        (Some(n), Some(t)) => ratio(t as f64 * 100.0, n as f64).map(|v| v.min(100.0)),
        _ => None,
    };
    let kb = |b: u64| b / 1024;
    let mem_kb = g.mem_bytes.map(kb);
    let working = g
        .mem_bytes
        .zip(g.inactive_file_bytes)
        .map(|(m, i)| kb(m.saturating_sub(i)));
    let high = g.mem_high.map(|l| l.real_bytes(mem_total_kb).map(kb));
    let max = g.mem_max.map(|l| l.real_bytes(mem_total_kb).map(kb));
    let lowest = [high, max]
        .into_iter()
        .flatten()
        .filter_map(Limit::value)
        .min();
    let mem_of_limit_pct = match (working.or(mem_kb), lowest) {
        (Some(used), Some(lim)) => ratio(used as f64 * 100.0, lim as f64),
        _ => None,
    };
    let psi = |f: fn(&CgroupPressure) -> Option<u64>| {
        let us = d(&|g| f(g.pressure.as_ref()?))?;
        // Clamped: the kernel's totals and perftop's clock are read a few µs apart.
        Some((us as f64 / (secs? * 1e6) * 100.0).clamp(0.0, 100.0))
    };
    let io = |f: fn(&CgroupIo) -> u64| d(&|g| g.io.as_ref().map(f));
    CgroupMetrics {
        name: display_name(&g.path),
        path: g.path.clone(),
        cpu_pct,
        cpu_quota_cpus: quota,
        cpu_of_quota_pct,
        throttled_pct,
        throttled_ms_per_s: per_s(d(&|g| g.throttled_us)).map(|us| us / 1000.0),
        mem_kb,
        mem_working_set_kb: working,
        mem_high_kb: high,
        mem_max_kb: max,
        mem_of_limit_pct,
        mem_high_events: d(&|g| g.high_events),
        mem_max_events: d(&|g| g.max_events),
        oom_kills: d(&|g| g.oom_kills),
        cpu_some_pct: psi(|p| p.cpu_some_us),
        mem_some_pct: psi(|p| p.mem_some_us),
        mem_full_pct: psi(|p| p.mem_full_us),
        io_some_pct: psi(|p| p.io_some_us),
        io_full_pct: psi(|p| p.io_full_us),
        read_kb_per_s: per_s(io(|i| i.rbytes)).map(|b| b / 1024.0),
        write_kb_per_s: per_s(io(|i| i.wbytes)).map(|b| b / 1024.0),
        read_iops: per_s(io(|i| i.rios)),
        write_iops: per_s(io(|i| i.wios)),
    }
}

/// A container id: 12 or more hex digits (docker, containerd and CRI-O use 64).
fn hex_id(s: &str) -> Option<&str> {
    (s.len() >= 12 && s.bytes().all(|b| b.is_ascii_hexdigit())).then(|| &s[..12])
}

/// The id in `<prefix><hex>[.scope]` for one of `prefixes`.
fn scoped_id<'a>(name: &'a str, prefixes: &[&str]) -> Option<&'a str> {
    let bare = name.strip_suffix(".scope").unwrap_or(name);
    prefixes
        .iter()
        .find_map(|p| bare.strip_prefix(p))
        .and_then(hex_id)
}

/// A kubernetes pod's uid from its cgroup: `kubepods-burstable-pod<uid>.slice` (systemd
/// driver, `_` for `-`) or `pod<uid>` (cgroupfs driver); its first 8 characters.
fn pod_uid(name: &str) -> Option<&str> {
    let bare = name.strip_suffix(".slice").unwrap_or(name);
    let uid = match bare.rfind("-pod") {
        Some(i) if bare.starts_with("kubepods") => &bare[i + 4..],
        _ => bare.strip_prefix("pod")?,
    };
    let head = uid.get(..8)?;
    head.bytes().all(|b| b.is_ascii_hexdigit()).then_some(head)
}

/// What a cgroup is, from the common path shapes: `docker:<12hex>` (`docker-<id>.scope` or
/// `/docker/<id>`), `podman:<12hex>` (`libpod-<id>.scope`), `k8s:pod<uid8>/<12hex>` (a
/// container under `kubepods*`: `cri-containerd-`, `crio-`, `docker-` scopes or a bare id)
/// or `k8s:pod<uid8>` (the pod itself), a systemd unit's own name (`nginx.service`), else the
/// path without its leading `/`.
pub fn display_name(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let Some(&last) = parts.last() else {
        return "/".into();
    };
    const RUNTIMES: [&str; 4] = ["cri-containerd-", "crio-", "docker-", "cri-o-"];
    if parts.first().is_some_and(|p| p.starts_with("kubepods")) {
        if let Some(i) = parts.iter().position(|p| pod_uid(p).is_some()) {
            let uid = pod_uid(parts[i]).unwrap_or_default();
            if i + 1 == parts.len() {
                return format!("k8s:pod{uid}");
            }
            if let Some(id) = scoped_id(last, &RUNTIMES).or_else(|| hex_id(last)) {
                return format!("k8s:pod{uid}/{id}");
            }
        }
    }
    if let Some(id) = scoped_id(last, &["docker-"]) {
        return format!("docker:{id}");
    }
    if parts.len() >= 2 && parts[parts.len() - 2] == "docker" {
        if let Some(id) = hex_id(last) {
            return format!("docker:{id}");
        }
    }
    if let Some(id) = scoped_id(last, &["libpod-"]) {
        return format!("podman:{id}");
    }
    const UNITS: [&str; 6] = [".service", ".scope", ".slice", ".socket", ".mount", ".swap"];
    if UNITS.iter().any(|u| last.ends_with(u)) {
        return last.to_string();
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00998877665544332211";

    #[test]
    fn container_names_from_path_shapes() {
        let n = |p: &str| display_name(p);
        assert_eq!(
            n(&format!("/system.slice/docker-{ID}.scope")),
            "docker:3f4e5d6c7b8a"
        );
        assert_eq!(n(&format!("/docker/{ID}")), "docker:3f4e5d6c7b8a");
        assert_eq!(
            n(&format!("/machine.slice/libpod-{ID}.scope")),
            "podman:3f4e5d6c7b8a"
        );
        let pod = "kubepods-burstable-pod8a2f0c1e_1b2c_4d5e_8f90_a1b2c3d4e5f6.slice";
        let k8s = format!("/kubepods.slice/kubepods-burstable.slice/{pod}");
        assert_eq!(n(&k8s), "k8s:pod8a2f0c1e");
        assert_eq!(
            n(&format!("{k8s}/cri-containerd-{ID}.scope")),
            "k8s:pod8a2f0c1e/3f4e5d6c7b8a"
        );
        assert_eq!(
            n(&format!(
                "/kubepods.slice/kubepods-pod12345678_aaaa.slice/crio-{ID}.scope"
            )),
            "k8s:pod12345678/3f4e5d6c7b8a"
        );
        // cgroupfs driver: `/kubepods/burstable/pod<uid>/<id>`.
        assert_eq!(
            n(&format!("/kubepods/burstable/pod8a2f0c1e-1b2c-4d5e/{ID}")),
            "k8s:pod8a2f0c1e/3f4e5d6c7b8a"
        );
        assert_eq!(
            n("/kubepods.slice/kubepods-besteffort.slice"),
            "kubepods-besteffort.slice"
        );
        assert_eq!(n("/system.slice/nginx.service"), "nginx.service");
        assert_eq!(n("/user.slice/user-1000.slice"), "user-1000.slice");
        assert_eq!(n("/process_api/b29ed4c4"), "process_api/b29ed4c4");
        assert_eq!(n("/docker/short"), "docker/short");
        assert_eq!(n("/"), "/");
    }

    /// Live, the groups are read late in the pass, a different time after each stamp: a
    /// burner at its 0.2 CPU quota used 0.16 CPU-s between two reads 0.8 s apart, in samples
    /// stamped 1 s apart (the first read lagged its stamp 0.3 s, the second 0.1 s). Its rate is
    /// 20%, over the reads' own 0.8 s; the stamps' interval made it 16%.
    #[test]
    fn live_groups_rate_over_their_own_reads() {
        use crate::sample::{CgroupVersion, SampleTime};
        let t = |s: f64| SampleTime {
            uptime_s: Some(s),
            boottime_ns: Some((s * 1e9) as u64),
            wall_ms: (s * 1000.0) as i64,
        };
        let at = |stamp: f64, read: f64, usage_us: u64| Sample {
            time: t(stamp),
            cgroups: Some(Cgroups {
                version: Some(CgroupVersion::V1),
                groups: vec![CgroupSample {
                    path: "/burner".into(),
                    usage_us: Some(usage_us),
                    ..CgroupSample::default()
                }],
                at: Some(t(read)),
                ..Cgroups::default()
            }),
            ..Sample::default()
        };
        let (a, b) = (at(100.0, 100.3, 5_000_000), at(101.0, 101.1, 5_160_000));
        let d = super::super::derive(Some(&a), &b);
        let cpu = d.cgroups[0].cpu_pct.expect("cpu %");
        assert!((cpu - 20.0).abs() < 1e-6, "{cpu}");
        let secs = d.host.cgroups_secs.expect("cgroups_secs");
        assert!((secs - 0.8).abs() < 1e-6, "{secs}");
        // A fixture tree's groups (no read time of their own) run over the stamps' interval.
        let (mut a, mut b) = (a, b);
        for s in [&mut a, &mut b] {
            s.cgroups.as_mut().expect("groups").at = None;
        }
        let d = super::super::derive(Some(&a), &b);
        assert!((d.cgroups[0].cpu_pct.expect("cpu %") - 16.0).abs() < 1e-6);
        assert_eq!(d.host.cgroups_secs, None);
    }
}
