//! CPU readers: `/proc/stat` times keyed by CPU id, online/present sets, topology, cpuidle states,
//! cpufreq policies (both `cpufreq/policyX/` and the older `cpuN/cpufreq/`), boost, ksoftirqd time.

use super::parse::dec;
use super::Probe;
use crate::cpulist::CpuList;
use crate::sample::{
    CpuEntry, CpuSample, CpuTimes, FreqPolicy, FreqSample, IdleState, KernelThread, NodeSample,
};
use std::collections::BTreeMap;

const CPU_DIR: &str = "sys/devices/system/cpu";

pub fn read_cpu(probe: &mut Probe, nodes: &[NodeSample]) -> CpuSample {
    let mut out = CpuSample {
        online: cpu_list(probe, &format!("{CPU_DIR}/online")),
        possible: cpu_list(probe, &format!("{CPU_DIR}/possible")),
        present: cpu_list(probe, &format!("{CPU_DIR}/present")),
        idle_driver: probe.line(&format!("{CPU_DIR}/cpuidle/current_driver")),
        idle_governor: probe
            .line(&format!("{CPU_DIR}/cpuidle/current_governor"))
            .or_else(|| probe.line(&format!("{CPU_DIR}/cpuidle/current_governor_ro"))),
        ..CpuSample::default()
    };

    let mut per_cpu: BTreeMap<u32, CpuTimes> = BTreeMap::new();
    if let Some(text) = probe.required("proc/stat") {
        parse_stat(probe, &text, &mut out, &mut per_cpu);
        if out.total.is_none() && per_cpu.is_empty() {
            // An empty or cut /proc/stat: every CPU time is unknown, so say why.
            probe.note("proc/stat", "no cpu lines");
        }
    }

    // Every CPU we know of: present, plus the cpuN directories, plus any with a /proc/stat
    // line. A `present` far larger than what else we see is garbled: probing thousands of CPUs
    // that do not exist would make one sample take seconds.
    let mut ids = probe.root.numbered_entries(CPU_DIR, "cpu");
    let seen = ids.len().max(per_cpu.len());
    match &out.present {
        Some(p) if p.len() <= 4 * seen + 64 => ids.extend(p.ids()),
        Some(p) => {
            let msg = format!("{} CPUs present but {seen} seen; ignored", p.len());
            probe.note(&format!("{CPU_DIR}/present"), msg);
        }
        None => {}
    }
    ids.extend(per_cpu.keys());
    ids.sort_unstable();
    ids.dedup();

    let node_of = |cpu: u32| {
        nodes
            .iter()
            .find(|n| n.cpus.as_ref().is_some_and(|c| c.contains(cpu)))
            .map(|n| n.id)
    };
    let known: Vec<(u32, bool, Option<CpuTimes>, Option<u32>)> = ids
        .into_iter()
        .map(|id| {
            let times = per_cpu.get(&id).copied();
            // /proc/stat lists exactly the online CPUs; the online file is the cross-check.
            let online = match &out.online {
                Some(list) => list.contains(id),
                None => times.is_some(),
            };
            (id, online, times, node_of(id))
        })
        .collect();
    out.cpus = probe.par_map(&known, |probe, &(id, online, times, node)| {
        let dir = format!("{CPU_DIR}/cpu{id}");
        let idle_states = if online {
            read_idle_states(probe, &dir)
        } else {
            Vec::new()
        };
        CpuEntry {
            id,
            online,
            times,
            package: small_id(probe.static_u64(&format!("{dir}/topology/physical_package_id"))),
            die: small_id(probe.static_u64(&format!("{dir}/topology/die_id"))),
            core: small_id(probe.static_u64(&format!("{dir}/topology/core_id"))),
            node,
            idle_states,
        }
    });
    out.freq = read_freq(probe, &out.cpus);
    out
}

/// Topology ids are small; `-1` (seen on some arm boxes) does not parse and stays unknown.
fn small_id(v: Option<u64>) -> Option<u32> {
    v.and_then(|v| u32::try_from(v).ok())
}

fn cpu_list(probe: &mut Probe, rel: &str) -> Option<CpuList> {
    let line = probe.text(rel)?;
    match CpuList::parse(&line) {
        Some(l) => Some(l),
        None => {
            probe.note(rel, "not a cpu list");
            None
        }
    }
}

fn parse_stat(
    probe: &mut Probe,
    text: &str,
    out: &mut CpuSample,
    per_cpu: &mut BTreeMap<u32, CpuTimes>,
) {
    for line in text.lines() {
        let mut it = line.split_ascii_whitespace();
        let Some(key) = it.next() else { continue };
        if let Some(rest) = key.strip_prefix("cpu") {
            let Some(times) = parse_times(it) else {
                probe.note("proc/stat", format!("garbled {key} line"));
                continue;
            };
            if rest.is_empty() {
                out.total = Some(times);
            } else if let Some(id) = dec(rest).and_then(|v| u32::try_from(v).ok()) {
                per_cpu.insert(id, times);
            } else {
                probe.note("proc/stat", format!("bad cpu id {key:?}"));
            }
            continue;
        }
        // `intr` is one huge line on big hosts; only its first number (the total) is used.
        let first = it.next().and_then(dec);
        match key {
            "ctxt" => out.ctxt = first,
            "intr" => out.intr = first,
            "procs_running" => out.procs_running = first,
            "procs_blocked" => out.procs_blocked = first,
            _ => {}
        }
    }
}

fn parse_times<'a>(it: impl Iterator<Item = &'a str>) -> Option<CpuTimes> {
    let mut v = [None::<u64>; 10];
    let mut n = 0;
    for tok in it.take(10) {
        v[n] = Some(dec(tok)?);
        n += 1;
    }
    // user nice system idle are in every kernel; iowait/irq/softirq since 2.6.
    if n < 4 {
        return None;
    }
    Some(CpuTimes {
        user: v[0]?,
        nice: v[1]?,
        system: v[2]?,
        idle: v[3]?,
        iowait: v[4].unwrap_or(0),
        irq: v[5].unwrap_or(0),
        softirq: v[6].unwrap_or(0),
        steal: v[7],
        guest: v[8],
        guest_nice: v[9],
    })
}

fn read_idle_states(probe: &mut Probe, cpu_dir: &str) -> Vec<IdleState> {
    let base = format!("{cpu_dir}/cpuidle");
    let mut states = Vec::new();
    for index in probe.static_entries(&base, "state") {
        let d = format!("{base}/state{index}");
        let Some(name) = probe.static_line(&format!("{d}/name")) else {
            continue;
        };
        states.push(IdleState {
            index,
            name,
            latency_us: probe.static_u64(&format!("{d}/latency")),
            target_residency_us: probe.static_u64(&format!("{d}/residency")),
            usage: probe.u64(&format!("{d}/usage")),
            time_us: probe.u64(&format!("{d}/time")),
            above: probe.u64(&format!("{d}/above")),
            below: probe.u64(&format!("{d}/below")),
            // `disable` is a bitmask-ish integer on some kernels: any non-zero is disabled.
            disabled: probe.u64(&format!("{d}/disable")).map(|v| v != 0),
        });
    }
    states
}

fn read_freq(probe: &mut Probe, cpus: &[CpuEntry]) -> FreqSample {
    let base = format!("{CPU_DIR}/cpufreq");
    let mut policies = Vec::new();
    let policy_ids = probe.root.numbered_entries(&base, "policy");
    if !policy_ids.is_empty() {
        // intel_pstate has one policy per CPU: as many directories as CPUs.
        policies = probe.par_map(&policy_ids, |probe, id| {
            read_policy(probe, format!("policy{id}"), format!("{base}/policy{id}"))
        });
    } else {
        // Older kernels: a cpufreq directory per CPU, shared CPUs listed in affected_cpus.
        let mut covered = CpuList::default();
        for c in cpus {
            let dir = format!("{CPU_DIR}/cpu{}/cpufreq", c.id);
            if covered.contains(c.id) || !probe.root.is_dir(&dir) {
                continue;
            }
            let p = read_policy(probe, format!("cpu{}", c.id), dir);
            if let Some(aff) = &p.affected_cpus {
                let mut ids = covered.ids().to_vec();
                ids.extend(aff.ids());
                covered = CpuList::from_ids(ids);
            }
            policies.push(p);
        }
    }
    FreqSample {
        policies,
        boost: probe.flag(&format!("{base}/boost")),
        no_turbo: probe.flag(&format!("{CPU_DIR}/intel_pstate/no_turbo")),
        pstate_status: probe
            .line(&format!("{CPU_DIR}/intel_pstate/status"))
            .or_else(|| probe.line(&format!("{CPU_DIR}/amd_pstate/status"))),
    }
}

fn read_policy(probe: &mut Probe, id: String, dir: String) -> FreqPolicy {
    let words = |probe: &mut Probe, f: &str| -> Vec<String> {
        probe
            .static_line(&format!("{dir}/{f}"))
            .map(|l| l.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default()
    };
    FreqPolicy {
        affected_cpus: probe
            .line(&format!("{dir}/affected_cpus"))
            // affected_cpus is space separated ("0 1 2 3"), unlike cpulist files.
            .and_then(|l| CpuList::parse(&l.split_whitespace().collect::<Vec<_>>().join(","))),
        related_cpus: probe
            .static_line(&format!("{dir}/related_cpus"))
            .and_then(|l| CpuList::parse(&l.split_whitespace().collect::<Vec<_>>().join(","))),
        driver: probe.static_line(&format!("{dir}/scaling_driver")),
        governor: probe.line(&format!("{dir}/scaling_governor")),
        available_governors: words(probe, "scaling_available_governors"),
        epp: probe.line(&format!("{dir}/energy_performance_preference")),
        available_epp: words(probe, "energy_performance_available_preferences"),
        cur_khz: probe.u64(&format!("{dir}/scaling_cur_freq")),
        min_khz: probe.u64(&format!("{dir}/scaling_min_freq")),
        max_khz: probe.u64(&format!("{dir}/scaling_max_freq")),
        hw_min_khz: probe.static_u64(&format!("{dir}/cpuinfo_min_freq")),
        hw_max_khz: probe.static_u64(&format!("{dir}/cpuinfo_max_freq")),
        id,
        dir,
    }
}

/// utime+stime of each `ksoftirqd/N`. Thread ids are found by a scan of `proc/` (cached, and
/// redone when a thread vanishes) so each sample costs one small read per CPU.
pub fn read_ksoftirqd(probe: &mut Probe, pids: &mut Option<Vec<(u32, u32)>>) -> Vec<KernelThread> {
    let found = pids.get_or_insert_with(|| scan_ksoftirqd(probe)).clone();
    let read = probe.par_map(&found, |probe, &(cpu, pid)| {
        let text = probe.root.read(&format!("proc/{pid}/stat")).ok()?;
        match stat_comm_ticks(&text) {
            Some((comm, ticks)) if comm == format!("ksoftirqd/{cpu}") => {
                Some(KernelThread { cpu, pid, ticks })
            }
            _ => None,
        }
    });
    // A thread that vanished (CPU offlined, pid reused): find them all again next time.
    if read.iter().any(Option::is_none) {
        *pids = None;
    }
    read.into_iter().flatten().collect()
}

/// `comm` and utime+stime of a `/proc/PID/stat` line. Parsed here because procfs-core's `Stat`
/// slices the line around the parens and panics on a garbled one (a reused pid, a bad root).
fn stat_comm_ticks(text: &str) -> Option<(&str, u64)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?;
    // state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
    let mut rest = text.get(close + 1..)?.split_ascii_whitespace();
    let utime = dec(rest.nth(11)?)?;
    let stime = dec(rest.next()?)?;
    Some((comm, utime.saturating_add(stime)))
}

fn scan_ksoftirqd(probe: &mut Probe) -> Vec<(u32, u32)> {
    let mut found = Vec::new();
    for name in probe.root.list_dir("proc") {
        let Some(pid) = dec(&name).and_then(|p| u32::try_from(p).ok()) else {
            continue;
        };
        let Ok(comm) = probe.root.read(&format!("proc/{pid}/comm")) else {
            continue;
        };
        if let Some(cpu) = comm.trim().strip_prefix("ksoftirqd/").and_then(dec) {
            if let Ok(cpu) = u32::try_from(cpu) {
                found.push((cpu, pid));
            }
        }
    }
    found.sort_unstable();
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::root::Root;

    #[test]
    fn stat_ids_come_from_lines_not_positions() {
        let mut probe = Probe::new(Root::new("/nonexistent"));
        let mut out = CpuSample::default();
        let mut per = BTreeMap::new();
        let text = "cpu  10 0 10 80 0 0 0 0 0 0\ncpu0 5 0 5 40 0 0 0 0 0 0\ncpu3 5 0 5 40 0 0 0 0 0 0\ncpuX 1 2\nintr 99 1 2 3\nctxt 1234\n";
        parse_stat(&mut probe, text, &mut out, &mut per);
        assert_eq!(per.keys().copied().collect::<Vec<_>>(), vec![0, 3]);
        assert_eq!(out.intr, Some(99));
        assert_eq!(out.ctxt, Some(1234));
        assert_eq!(out.total.map(|t| t.idle), Some(80));
        assert_eq!(probe.problems.len(), 1);
    }

    #[test]
    fn short_cpu_lines() {
        let t = parse_times("1 2 3 4".split(' ')).expect("4 fields");
        assert_eq!((t.idle, t.iowait, t.steal), (4, 0, None));
        assert!(parse_times("1 2 3".split(' ')).is_none());
        assert!(parse_times("1 2 x 4".split(' ')).is_none());
    }
}
