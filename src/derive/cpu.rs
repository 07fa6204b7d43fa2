//! CPU power metrics: per-CPU C0%/steal, idle-state residency inside the `/proc/stat` idle
//! envelope, wakeups and misses; per-policy frequency and governor; the header's power facts.

use super::{finite, ratio, HostMetrics, Interval};
use crate::sample::{CpuEntry, CpuTimes, FreqPolicy, IdleCounters, IdleState, Sample};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A CPU whose C0 is below this is "idle" for the stale-frequency flag: `scaling_cur_freq` is
/// only refreshed when the CPU runs, so an idle CPU shows whatever it last ran at.
const STALE_FREQ_BUSY_PCT: f64 = 5.0;
/// Sysfs residency that disagrees with the /proc/stat envelope by more than this share of the
/// interval is rescaled and marked as an estimate.
const ENVELOPE_TOLERANCE: f64 = 0.02;

#[derive(Debug, Clone, Default, Serialize)]
pub struct CpuMetrics {
    pub cpu: u32,
    pub online: bool,
    pub package: Option<u32>,
    pub core: Option<u32>,
    pub node: Option<u32>,
    pub c0_pct: Option<f64>,
    pub user_pct: Option<f64>,
    pub system_pct: Option<f64>,
    pub iowait_pct: Option<f64>,
    pub irq_pct: Option<f64>,
    pub soft_pct: Option<f64>,
    pub steal_pct: Option<f64>,
    pub mhz: Option<f64>,
    /// `scaling_cur_freq` of a mostly idle CPU is its last busy frequency, not the current one.
    pub mhz_stale: bool,
    pub policy: Option<String>,
    pub states: Vec<StateMetrics>,
    pub wakeups_per_s: Option<f64>,
    pub avg_residency_us: Option<f64>,
    pub miss_pct: Option<f64>,
    /// True when the state residencies were rescaled to fit the /proc/stat idle time (`~`).
    pub residency_scaled: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct StateMetrics {
    pub name: String,
    pub latency_us: Option<u64>,
    pub residency_pct: Option<f64>,
    pub wakeups_per_s: Option<f64>,
    pub avg_residency_us: Option<f64>,
    pub miss_pct: Option<f64>,
    pub disabled: Option<bool>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct PolicyMetrics {
    pub policy: String,
    pub dir: String,
    pub cpus: Vec<u32>,
    pub driver: Option<String>,
    pub governor: Option<String>,
    pub available_governors: Vec<String>,
    pub epp: Option<String>,
    pub available_epp: Vec<String>,
    pub min_khz: Option<u64>,
    pub max_khz: Option<u64>,
    pub cur_khz: Option<u64>,
    pub hw_max_khz: Option<u64>,
    /// Mean C0% of the policy's online CPUs.
    pub busy_pct: Option<f64>,
    pub cur_stale: bool,
}

/// Deltas of one CPU's `/proc/stat` times. Idle can step back a tick on NO_HZ kernels, so each
/// field is clamped at zero (as mpstat does) instead of poisoning the whole line.
#[derive(Debug, Clone, Copy, Default)]
pub struct TimesDelta {
    pub busy: f64,
    pub user: f64,
    pub system: f64,
    pub idle: f64,
    pub iowait: f64,
    pub irq: f64,
    pub soft: f64,
    pub steal: f64,
    pub total: f64,
}

pub fn times_delta(
    prev: Option<&CpuTimes>,
    cur: &CpuTimes,
    since_boot: bool,
) -> Option<TimesDelta> {
    let zero = CpuTimes::default();
    let p = if since_boot { &zero } else { prev? };
    let d = |a: u64, b: u64| b.saturating_sub(a) as f64;
    let user = d(p.user, cur.user) + d(p.nice, cur.nice);
    let system = d(p.system, cur.system);
    let irq = d(p.irq, cur.irq);
    let soft = d(p.softirq, cur.softirq);
    let idle = d(p.idle, cur.idle);
    let iowait = d(p.iowait, cur.iowait);
    let steal = d(p.steal.unwrap_or(0), cur.steal.unwrap_or(0));
    let busy = user + system + irq + soft;
    Some(TimesDelta {
        busy,
        user,
        system,
        idle,
        iowait,
        irq,
        soft,
        steal,
        total: busy + idle + iowait + steal,
    })
}

impl TimesDelta {
    pub fn pct(&self, part: f64) -> Option<f64> {
        ratio(part * 100.0, self.total)
    }
}

pub fn derive_cpus(
    iv: Interval,
    prev: Option<&Sample>,
    cur: &Sample,
) -> (Vec<CpuMetrics>, Vec<PolicyMetrics>) {
    let policy_of = policy_index(&cur.cpu.freq.policies);
    let mut cpus = Vec::with_capacity(cur.cpu.cpus.len());
    for c in &cur.cpu.cpus {
        let pc = prev.and_then(|p| p.cpu(c.id));
        cpus.push(derive_cpu(
            iv,
            pc,
            c,
            policy_of.get(&c.id).map(|&i| &cur.cpu.freq.policies[i]),
        ));
    }
    let policies = cur
        .cpu
        .freq
        .policies
        .iter()
        .map(|p| derive_policy(p, &cpus))
        .collect();
    (cpus, policies)
}

fn policy_index(policies: &[FreqPolicy]) -> BTreeMap<u32, usize> {
    let mut map = BTreeMap::new();
    for (i, p) in policies.iter().enumerate() {
        if let Some(list) = p.affected_cpus.as_ref().or(p.related_cpus.as_ref()) {
            for &id in list.ids() {
                map.insert(id, i);
            }
        }
    }
    map
}

fn derive_cpu(
    iv: Interval,
    prev: Option<&CpuEntry>,
    cur: &CpuEntry,
    policy: Option<&FreqPolicy>,
) -> CpuMetrics {
    let td = cur
        .times
        .as_ref()
        .and_then(|t| times_delta(prev.and_then(|p| p.times.as_ref()), t, iv.since_boot));
    let pct = |f: fn(&TimesDelta) -> f64| td.as_ref().and_then(|t| t.pct(f(t)));
    let c0_pct = pct(|t| t.busy);
    let mhz = policy.and_then(|p| p.cur_khz).map(|k| k as f64 / 1000.0);
    let mut m = CpuMetrics {
        cpu: cur.id,
        online: cur.online,
        package: cur.package,
        core: cur.core,
        node: cur.node,
        c0_pct,
        user_pct: pct(|t| t.user),
        system_pct: pct(|t| t.system),
        iowait_pct: pct(|t| t.iowait),
        irq_pct: pct(|t| t.irq),
        soft_pct: pct(|t| t.soft),
        steal_pct: pct(|t| t.steal),
        mhz,
        mhz_stale: mhz.is_some() && c0_pct.is_some_and(|c| c < STALE_FREQ_BUSY_PCT),
        policy: policy.map(|p| p.id.clone()),
        ..CpuMetrics::default()
    };
    // The share of its ticks the kernel accounted to this CPU as idle over the interval: the
    // envelope, as C0% is a share of the same ticks (so fitted states and C0 + steal add to
    // 100; ticks over 1 s can number 99 or 101).
    let envelope = |td: Option<TimesDelta>| td.and_then(|t| ratio(t.idle + t.iowait, t.total));
    match &cur.idle_turn {
        // Read in turns: over the CPU's own interval, between its two latest reads (the
        // first sample of a recording: since boot, like every other rate of that sample).
        Some(turn) => {
            let (states_iv, before_times, before) = match &turn.before {
                Some(b) => (
                    Interval::of_times(Some(&b.at), &turn.at),
                    b.times.as_ref(),
                    Some(Cow::Owned(before_states(&b.states, &cur.idle_states))),
                ),
                None if iv.since_boot => (iv, None, None),
                None => (Interval::default(), None, None),
            };
            let td = turn.times.as_ref().and_then(|t| {
                states_iv
                    .secs
                    .and(times_delta(before_times, t, states_iv.since_boot))
            });
            derive_states(states_iv, before.as_deref(), cur, envelope(td), &mut m);
        }
        None => derive_states(
            iv,
            prev.map(|p| p.idle_states.as_slice()),
            cur,
            envelope(td),
            &mut m,
        ),
    }
    m
}

/// An earlier read's counters as idle states named like the latest read's (derive pairs
/// states by index and name).
fn before_states(before: &[IdleCounters], latest: &[IdleState]) -> Vec<IdleState> {
    before
        .iter()
        .filter_map(|c| {
            let s = latest.iter().find(|s| s.index == c.index)?;
            Some(IdleState {
                usage: c.usage,
                time_us: c.time_us,
                above: c.above,
                below: c.below,
                ..s.clone()
            })
        })
        .collect()
}

fn derive_states(
    iv: Interval,
    prev: Option<&[IdleState]>,
    cur: &CpuEntry,
    envelope: Option<f64>,
    m: &mut CpuMetrics,
) {
    if cur.idle_states.is_empty() {
        return;
    }
    struct D {
        usage: Option<u64>,
        time: Option<u64>,
        miss: Option<u64>,
    }
    let deltas: Vec<D> = cur
        .idle_states
        .iter()
        .map(|s| {
            // Pair by index and name: a different driver after a reboot has other states.
            let p = prev.and_then(|ps| ps.iter().find(|p| p.index == s.index && p.name == s.name));
            let d = |f: fn(&IdleState) -> Option<u64>| iv.d64(p.and_then(f), f(s)?);
            let above = d(|s| s.above);
            let below = d(|s| s.below);
            D {
                usage: d(|s| s.usage),
                time: d(|s| s.time_us),
                miss: above.zip(below).map(|(a, b)| a.saturating_add(b)),
            }
        })
        .collect();
    let dt_us = iv.secs.map(|s| s * 1e6);
    // /proc/stat's idle share of the interval, in µs of it.
    let envelope_us = envelope.zip(dt_us).map(|(e, dt)| e * dt);
    let sum_time = sum_known(deltas.iter().map(|d| d.time));
    // The kernel adds to `time` only when a CPU leaves a state, so the raw sum can over- or
    // under-shoot the interval; /proc/stat idle is the envelope the shares are fitted into.
    let scale = match (sum_time, envelope_us, dt_us) {
        (Some(sum), Some(env), Some(dt)) if sum > 0 => {
            let sum = sum as f64;
            m.residency_scaled = (sum - env).abs() > ENVELOPE_TOLERANCE * dt;
            Some(if m.residency_scaled { env / sum } else { 1.0 })
        }
        // A CPU asleep in one state for the whole interval has not left it: no split is known.
        (Some(0), Some(env), Some(dt)) if env > ENVELOPE_TOLERANCE * dt => None,
        (Some(_), _, Some(_)) => Some(1.0),
        _ => None,
    };
    for (s, d) in cur.idle_states.iter().zip(&deltas) {
        m.states.push(StateMetrics {
            name: s.name.clone(),
            latency_us: s.latency_us,
            residency_pct: match (d.time, scale, dt_us) {
                (Some(t), Some(k), Some(dt)) => finite(t as f64 * k / dt * 100.0),
                _ => None,
            },
            wakeups_per_s: iv.rate(d.usage),
            avg_residency_us: d
                .time
                .zip(d.usage)
                .and_then(|(t, u)| ratio(t as f64, u as f64)),
            miss_pct: d
                .miss
                .zip(d.usage)
                .and_then(|(x, u)| ratio(x as f64 * 100.0, u as f64)),
            disabled: s.disabled,
        });
    }
    let usage = sum_known(deltas.iter().map(|d| d.usage));
    let miss = sum_known(deltas.iter().map(|d| d.miss));
    m.wakeups_per_s = iv.rate(usage);
    m.avg_residency_us = sum_time
        .zip(usage)
        .and_then(|(t, u)| ratio(t as f64, u as f64));
    m.miss_pct = miss
        .zip(usage)
        .and_then(|(x, u)| ratio(x as f64 * 100.0, u as f64));
}

/// Sum of values that must all be known; saturates instead of overflowing (counters are
/// kernel-supplied and can be anything after a reset).
fn sum_known(it: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    it.into_iter()
        .try_fold(0u64, |acc, v| Some(acc.saturating_add(v?)))
}

fn derive_policy(p: &FreqPolicy, cpus: &[CpuMetrics]) -> PolicyMetrics {
    let ids: Vec<u32> = p
        .affected_cpus
        .as_ref()
        .or(p.related_cpus.as_ref())
        .map(|l| l.ids().to_vec())
        .unwrap_or_default();
    let busy: Vec<f64> = ids
        .iter()
        .filter_map(|id| cpus.binary_search_by_key(id, |c| c.cpu).ok())
        .filter_map(|i| cpus[i].c0_pct)
        .collect();
    let busy_pct = (!busy.is_empty()).then(|| busy.iter().sum::<f64>() / busy.len() as f64);
    PolicyMetrics {
        policy: p.id.clone(),
        dir: p.dir.clone(),
        cpus: ids,
        driver: p.driver.clone(),
        governor: p.governor.clone(),
        available_governors: p.available_governors.clone(),
        epp: p.epp.clone(),
        available_epp: p.available_epp.clone(),
        min_khz: p.min_khz,
        max_khz: p.max_khz,
        cur_khz: p.cur_khz,
        hw_max_khz: p.hw_max_khz,
        cur_stale: p.cur_khz.is_some() && busy_pct.is_some_and(|b| b < STALE_FREQ_BUSY_PCT),
        busy_pct,
    }
}

pub fn derive_host(
    iv: Interval,
    prev: Option<&Sample>,
    cur: &Sample,
    cpus: &[CpuMetrics],
    policies: &[PolicyMetrics],
) -> HostMetrics {
    let c = &cur.cpu;
    let total = c
        .total
        .as_ref()
        .and_then(|t| times_delta(prev.and_then(|p| p.cpu.total.as_ref()), t, iv.since_boot));
    let mut governors = BTreeMap::new();
    let mut freq_drivers: Vec<String> = Vec::new();
    for p in policies {
        if let Some(g) = &p.governor {
            *governors.entry(g.clone()).or_insert(0) += 1;
        }
        if let Some(d) = &p.driver {
            if !freq_drivers.contains(d) {
                freq_drivers.push(d.clone());
            }
        }
    }
    let steal_pct = total.as_ref().and_then(|t| t.pct(t.steal));
    let mut vm_hints = Vec::new();
    if let Some(hv) = &cur.host.hypervisor {
        vm_hints.push(format!("hypervisor {hv}"));
    }
    if policies.is_empty() && !c.detail_pending {
        vm_hints.push("no cpufreq".to_string());
    }
    match c.idle_driver.as_deref() {
        Some("haltpoll") => vm_hints.push("haltpoll idle driver (KVM guest)".to_string()),
        Some("none") => vm_hints.push("no cpuidle driver".to_string()),
        _ => {}
    }
    if steal_pct.is_some_and(|s| s >= 1.0) {
        vm_hints.push(format!("steal {:.1}%", steal_pct.unwrap_or(0.0)));
    }
    let pd = |f: fn(&Sample) -> Option<u64>| iv.rate(iv.d64(prev.and_then(f), f(cur)?));
    HostMetrics {
        hostname: cur.host.hostname.clone(),
        kernel: cur.host.kernel.clone(),
        uptime_s: cur.time.uptime_s,
        wall_ms: cur.time.wall_ms,
        loadavg: cur.host.loadavg,
        cpus_online: cpus.iter().filter(|c| c.online).count(),
        cpus_present: c.present.as_ref().map(|l| l.len()),
        cpus_possible: c.possible.as_ref().map(|l| l.len()),
        nodes: 0,
        cpu_model: cur.host.cpu_model.clone(),
        hypervisor: cur.host.hypervisor.clone(),
        idle_driver: c.idle_driver.clone(),
        idle_governor: c.idle_governor.clone(),
        freq_drivers,
        governors,
        pstate_status: c.freq.pstate_status.clone(),
        boost: c.freq.boost,
        no_turbo: c.freq.no_turbo,
        busy_pct: total.as_ref().and_then(|t| t.pct(t.busy)),
        iowait_pct: total.as_ref().and_then(|t| t.pct(t.iowait)),
        steal_pct,
        ctxt_per_s: pd(|s| s.cpu.ctxt),
        intr_per_s: pd(|s| s.cpu.intr),
        procs_running: c.procs_running,
        procs_blocked: c.procs_blocked,
        tasks: None,
        cpu_detail_every: c.detail_every,
        cpu_detail_pending: c.detail_pending,
        vm_hints,
        problems: cur
            .problems
            .iter()
            .map(|p| format!("{}: {}", p.path, p.what))
            .collect(),
        cgroup_version: None,
        cgroups_unknown: None,
        cgroups_left_out: None,
        // Filled by `derive` from the sysinfo thread's reads.
        ..HostMetrics::default()
    }
}
