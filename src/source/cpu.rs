//! CPU readers: `/proc/stat` times keyed by CPU id, online/present sets, topology, cpuidle states,
//! cpufreq policies (both `cpufreq/policyX/` and the older `cpuN/cpufreq/`), boost, ksoftirqd time.

use super::parse::dec;
use super::turns;
use super::{spread_of, Cached, Probe};
use idle::{idle_state_names, read_idle_states, StateStatic};

mod idle;
use crate::cpulist::CpuList;
use crate::sample::{
    CpuEntry, CpuSample, CpuTimes, FreqPolicy, FreqSample, IdleCounters, IdleRead, IdleState,
    IdleTurn, NodeSample, SampleTime,
};

const CPU_DIR: &str = "sys/devices/system/cpu";

/// What is read once per refresh for one CPU: topology and its idle states' names.
#[derive(Debug, Clone, Default)]
pub(crate) struct CpuStatic {
    package: Option<u32>,
    die: Option<u32>,
    core: Option<u32>,
    /// Idle states that have a name; listed the first time the CPU is read online.
    idle: Option<Vec<StateStatic>>,
    /// Read in turns: the latest read of the idle states (when, the CPU's times then, the
    /// states) and the counters of the read before it.
    last: Option<(SampleTime, Option<CpuTimes>, Vec<IdleState>)>,
    before: Option<IdleRead>,
}

/// Files one CPU's detail costs a sample: 4 counters per idle state, and `scaling_cur_freq`,
/// governor and EPP of its policy (one per CPU with intel_pstate, the big-host case). A core's
/// two throttle counters (`source::power`) follow the same turns, a tenth more on top.
fn detail_files(states: usize) -> usize {
    4 * states + 3
}

/// `after_stat` runs right after `/proc/stat` is read, for counters that must be read at the
/// same moment.
pub fn read_cpu(
    probe: &mut Probe,
    nodes: &[NodeSample],
    time: &SampleTime,
    after_stat: impl FnOnce(&mut Probe, Option<u64>, usize),
) -> CpuSample {
    let mut out = CpuSample {
        possible: possible_cpus(probe),
        idle_driver: probe.setting_line(&format!("{CPU_DIR}/cpuidle/current_driver")),
        idle_governor: probe
            .setting_line(&format!("{CPU_DIR}/cpuidle/current_governor"))
            .or_else(|| probe.setting_line(&format!("{CPU_DIR}/cpuidle/current_governor_ro"))),
        ..CpuSample::default()
    };
    // By CPU id, sorted: a map's node (~1.4 KB here) was a large allocation each sample, and
    // glibc tidies every small free chunk before serving one (~2 % of the recorder's CPU).
    let mut per_cpu: Vec<(u32, CpuTimes)> = Vec::new();
    probe.with_text("proc/stat", true, |probe, text| {
        parse_stat(probe, text, &mut out, &mut per_cpu);
        if out.total.is_none() && per_cpu.is_empty() {
            // An empty or cut /proc/stat: every CPU time is unknown, so say why.
            probe.note("proc/stat", "no cpu lines");
        }
    });
    // The per-CPU tables read next are budgeted by the CPUs /proc/stat lists.
    probe.cpus_seen = per_cpu.len();
    after_stat(probe, out.intr, per_cpu.len());
    let stat_ids: Vec<u32> = per_cpu.iter().map(|&(id, _)| id).collect();
    (out.online, out.present) = cpu_sets(probe, &stat_ids);
    hotplug(probe, &out);

    // Every CPU we know of: present, plus the cpuN directories, plus any with a /proc/stat
    // line. A `present` far larger than what else we see is garbled: probing thousands of CPUs
    // that do not exist would make one sample take seconds.
    let mut ids = probe.static_entries(CPU_DIR, "cpu");
    let seen = ids.len().max(per_cpu.len());
    match &out.present {
        Some(p) if p.len() <= 4 * seen + 64 => ids.extend(p.ids()),
        Some(p) => {
            let msg = format!("{} CPUs present but {seen} seen; ignored", p.len());
            probe.note(&format!("{CPU_DIR}/present"), msg);
        }
        None => {}
    }
    ids.extend(&stat_ids);
    ids.sort_unstable();
    ids.dedup();

    let node_of = |cpu: u32| {
        nodes
            .iter()
            .find(|n| n.cpus.as_ref().is_some_and(|c| c.contains(cpu)))
            .map(|n| n.id)
    };
    let known: Vec<super::first_look::Known> = ids
        .into_iter()
        .map(|id| {
            let times = per_cpu
                .binary_search_by_key(&id, |&(c, _)| c)
                .ok()
                .map(|i| per_cpu[i].1);
            // /proc/stat lists exactly the online CPUs; the online file is the cross-check.
            let online = match &out.online {
                Some(list) => list.contains(id),
                None => times.is_some(),
            };
            let cached = probe.cache.cpus.remove(&id);
            (id, online, times, node_of(id), cached)
        })
        .collect();
    if probe.first_look && known.len() > turns::FIRST_LOOK_MIN_CPUS {
        return super::first_look::cpus(probe, out, known);
    }
    // Per-CPU detail in turns when it exceeds the budget (see `turns`); the states per CPU of
    // the first CPU listed (they are the same on every CPU of one idle driver).
    let states = known
        .iter()
        .find_map(|k| k.4.as_ref()?.idle.as_ref().map(Vec::len))
        .unwrap_or(4);
    let every = turns::every(
        known.len(),
        detail_files(states),
        turns::DETAIL_FILES_PER_SAMPLE,
    )
    .max(probe.tier.detail_every);
    let in_turns = every > 1 || probe.cache.detail_every.is_some_and(|e| e > 1);
    probe.cache.detail_every = Some(every);
    if every > 1 {
        out.detail_every = Some(every);
    }
    let sample_no = probe.tier.sample_no;
    let known: Vec<_> = known.into_iter().enumerate().collect();
    let read = probe.par_map(known, |probe, (i, (id, online, times, node, cached))| {
        let dir = format!("{CPU_DIR}/cpu{id}");
        let fresh = cached.is_none();
        let mut st = cached.unwrap_or_default();
        // A CPU not read yet (the first sample, one just online) is read at once.
        let due = st.last.is_none() || turns::due(i, sample_no, every);
        let mut idle_turn = None;
        let idle_states = if !online {
            st.last = None;
            st.before = None;
            Vec::new()
        } else if !in_turns {
            let states = st.idle.get_or_insert_with(|| idle_state_names(probe, &dir));
            st.last = None;
            st.before = None;
            read_idle_states(probe, id, states)
        } else {
            if due {
                let states = st.idle.get_or_insert_with(|| idle_state_names(probe, &dir));
                let read = read_idle_states(probe, id, states);
                st.before = st.last.take().map(|(at, times, states)| IdleRead {
                    at,
                    times,
                    states: states.iter().map(IdleCounters::of).collect(),
                });
                st.last = Some((time.clone(), times, read));
            }
            match &st.last {
                Some((at, times, states)) => {
                    idle_turn = Some(IdleTurn {
                        at: at.clone(),
                        times: *times,
                        before: st.before.clone(),
                    });
                    states.clone()
                }
                None => Vec::new(),
            }
        };
        if fresh {
            st.package = small_id(quiet_u64(probe, &dir, "topology/physical_package_id"));
            st.die = small_id(quiet_u64(probe, &dir, "topology/die_id"));
            st.core = small_id(quiet_u64(probe, &dir, "topology/core_id"));
        }
        let entry = CpuEntry {
            id,
            online,
            times,
            package: st.package,
            die: st.die,
            core: st.core,
            node,
            idle_states,
            idle_turn,
        };
        (entry, st)
    });
    out.cpus = Vec::with_capacity(read.len());
    for (entry, st) in read {
        probe.cache.cpus.insert(entry.id, st);
        out.cpus.push(entry);
    }
    out.freq = read_freq(probe, &out.cpus, in_turns.then_some(every));
    out
}

/// `online` and `present`. `/proc/stat` has a `cpuN` line for each online CPU and no other
/// (`show_stat` walks the online CPUs), so while its lines are the CPUs the `online` file
/// last listed, the two files are as last read: they are read again when the lines differ
/// (a CPU went on- or offline: read on that sample), within the settings tier otherwise (a
/// CPU made present but not yet online shows within 10 samples), and every sample while
/// either is unreadable or garbled (noted each time). 2 files a sample not read.
fn cpu_sets(probe: &mut Probe, stat_ids: &[u32]) -> (Option<CpuList>, Option<CpuList>) {
    let mut slot = probe.cache.cpu_sets.take();
    let agrees = slot.as_ref().is_some_and(|t| match t.value() {
        (Some(online), Some(_)) => online.ids() == stat_ids,
        _ => false,
    });
    if !agrees {
        if let Some(t) = &mut slot {
            t.expire();
        }
    }
    let tier = probe.tier;
    let sets = tier
        .get(&mut slot, spread_of(CPU_DIR), || {
            (
                nonempty_cpu_list(probe, &format!("{CPU_DIR}/online")),
                nonempty_cpu_list(probe, &format!("{CPU_DIR}/present")),
            )
        })
        .clone();
    probe.cache.cpu_sets = slot;
    sets
}

/// Drops what depends on the set of online or present CPUs when that set changed since the
/// last sample: the `cpuN` and policy listings, `affected_cpus`, `cpuN/cpufreq` directories
/// and the cached idle states of CPUs that went on- or offline. Hotplug is seen at once.
fn hotplug(probe: &mut Probe, out: &CpuSample) {
    let now = (out.online.clone(), out.present.clone());
    let Some(before) = probe.cache.hotplug.replace(now) else {
        return;
    };
    if before.0 == out.online && before.1 == out.present {
        return;
    }
    probe.forget_entries(CPU_DIR, "cpu");
    probe.forget_entries(&format!("{CPU_DIR}/cpufreq"), "policy");
    probe.cache.is_dir.clear();
    // Managed IRQs move with the CPUs they were spread over.
    probe.cache.irqs.clear();
    for p in probe.cache.policies.values_mut() {
        p.affected_cpus = None;
    }
    match (&before.0, &out.online) {
        (Some(a), Some(b)) => {
            let flipped: Vec<u32> = a
                .ids()
                .iter()
                .chain(b.ids())
                .copied()
                .filter(|&id| a.contains(id) != b.contains(id))
                .collect();
            for id in flipped {
                probe.cache.cpus.remove(&id);
            }
        }
        _ => probe.cache.cpus.clear(),
    }
}

/// A number from a file read once per refresh: unreadable is noted, garbled is unknown.
pub(super) fn quiet_u64(probe: &mut Probe, dir: &str, name: &str) -> Option<u64> {
    probe.line_in(dir, name)?.parse().ok()
}

/// Topology ids are small; `-1` (seen on some arm boxes) does not parse and stays unknown.
fn small_id(v: Option<u64>) -> Option<u32> {
    v.and_then(|v| u32::try_from(v).ok())
}

fn cpu_list(probe: &mut Probe, rel: &str) -> Option<CpuList> {
    let text = probe.text(rel)?;
    parsed_cpu_list(probe, rel, &text)
}

/// A CPU set that always holds at least the boot CPU (`online`, `present`): empty is garbled,
/// not "no CPU" (which would show `0/4 CPUs` while /proc/stat lists four).
fn nonempty_cpu_list(probe: &mut Probe, rel: &str) -> Option<CpuList> {
    let list = cpu_list(probe, rel)?;
    if list.is_empty() {
        probe.note(rel, "empty: no CPU listed");
        return None;
    }
    Some(list)
}

fn parsed_cpu_list(probe: &mut Probe, rel: &str, text: &str) -> Option<CpuList> {
    match CpuList::parse(text) {
        Some(l) => Some(l),
        None => {
            probe.note(rel, "not a cpu list");
            None
        }
    }
}

/// `possible` is fixed at boot: read once per refresh (garbled is still noted every sample).
fn possible_cpus(probe: &mut Probe) -> Option<CpuList> {
    let rel = format!("{CPU_DIR}/possible");
    let text = match &probe.cache.possible {
        Some(text) => text.clone(),
        None => {
            let text = probe.text(&rel);
            probe.cache.possible = Some(text.clone());
            text
        }
    }?;
    parsed_cpu_list(probe, &rel, &text)
}

fn parse_stat(
    probe: &mut Probe,
    text: &str,
    out: &mut CpuSample,
    per_cpu: &mut Vec<(u32, CpuTimes)>,
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
                per_cpu.push((id, times));
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
            "processes" => out.forks = first,
            _ => {}
        }
    }
    // The kernel lists CPUs in order; a garbled file may not, or may repeat one (the last
    // line for an id wins, as it did in a map).
    if !per_cpu.is_sorted_by(|a, b| a.0 < b.0) {
        per_cpu.reverse();
        per_cpu.sort_by_key(|&(id, _)| id);
        per_cpu.dedup_by_key(|&mut (id, _)| id);
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

/// The cpufreq policies. `every`: policies' frequency, governor and EPP are read in turns,
/// each every that many samples (all of them on the sample after a perftop tweak wrote one).
fn read_freq(probe: &mut Probe, cpus: &[CpuEntry], every: Option<u32>) -> FreqSample {
    let base = format!("{CPU_DIR}/cpufreq");
    let tweaked = probe.tier.tweaked;
    let sample_no = probe.tier.sample_no;
    let due = |i: usize| match every {
        Some(every) if !tweaked => turns::due(i, sample_no, every),
        _ => true,
    };
    // Read first: switching intel_pstate/amd_pstate between active and passive re-creates the
    // policies with other governors, so a change drops what is cached about them. The status
    // itself is a setting (an administrator's), seen within SETTINGS_REFRESH_SAMPLES.
    let pstate_status = probe
        .setting_line(&format!("{CPU_DIR}/intel_pstate/status"))
        .or_else(|| probe.setting_line(&format!("{CPU_DIR}/amd_pstate/status")));
    if probe
        .cache
        .pstate_status
        .replace(pstate_status.clone())
        .is_some_and(|before| before != pstate_status)
    {
        probe.cache.policies.clear();
        probe.forget_entries(&base, "policy");
    }
    let mut policies = Vec::new();
    let policy_ids = probe.static_entries(&base, "policy");
    if !policy_ids.is_empty() {
        // intel_pstate has one policy per CPU: as many directories as CPUs.
        let items: Vec<_> = policy_ids
            .into_iter()
            .enumerate()
            .map(|(i, id)| {
                let dir = format!("{base}/policy{id}");
                let cached = probe.cache.policies.remove(&dir);
                (format!("policy{id}"), dir, cached, due(i))
            })
            .collect();
        let read = probe.par_map(items, |probe, (id, dir, cached, due)| {
            read_policy(probe, id, dir, cached, due)
        });
        for (p, st) in read {
            probe.cache.policies.insert(p.dir.clone(), st);
            policies.push(p);
        }
    } else {
        // Older kernels: a cpufreq directory per CPU, shared CPUs listed in affected_cpus.
        let mut covered = CpuList::default();
        for (i, c) in cpus.iter().enumerate() {
            let dir = format!("{CPU_DIR}/cpu{}/cpufreq", c.id);
            if covered.contains(c.id) || !probe.static_is_dir(&dir) {
                continue;
            }
            let cached = probe.cache.policies.remove(&dir);
            let (p, st) = read_policy(probe, format!("cpu{}", c.id), dir, cached, due(i));
            if let Some(aff) = &p.affected_cpus {
                let mut ids = covered.ids().to_vec();
                ids.extend(aff.ids());
                covered = CpuList::from_ids(ids);
            }
            probe.cache.policies.insert(p.dir.clone(), st);
            policies.push(p);
        }
    }
    FreqSample {
        policies,
        // Set by an administrator, never by a tweak: settings.
        boost: probe.setting_flag(&format!("{base}/boost")),
        no_turbo: probe.setting_flag(&format!("{CPU_DIR}/intel_pstate/no_turbo")),
        pstate_status,
    }
}

/// What is read once per refresh for one cpufreq policy. `affected_cpus` (the online CPUs of
/// the policy) is kept until the online set changes.
#[derive(Debug, Clone, Default)]
pub(crate) struct PolicyStatic {
    related_cpus: Option<CpuList>,
    driver: Option<String>,
    available_governors: Vec<String>,
    available_epp: Vec<String>,
    hw_min_khz: Option<u64>,
    hw_max_khz: Option<u64>,
    /// `scaling_min_freq`/`scaling_max_freq`: limits an administrator, firmware (_PPC) or
    /// thermal capping sets, never a perftop tweak; settings. The frequency itself
    /// (`scaling_cur_freq`) is read every sample, so throttling shows at once.
    min_khz: Option<Cached<u64>>,
    max_khz: Option<Cached<u64>>,
    /// `None`: not read yet (or dropped by a hotplug); kept only when the file was readable.
    pub(crate) affected_cpus: Option<Option<CpuList>>,
    /// Governor, EPP and frequency as last read: what a sample that is not this policy's
    /// turn shows (`read_freq`).
    last: Option<(Option<String>, Option<String>, Option<u64>)>,
}

/// `0 1 2 3` (affected_cpus, related_cpus are space separated, unlike cpulist files).
fn spaced_list(line: &str) -> Option<CpuList> {
    CpuList::parse(&line.split_whitespace().collect::<Vec<_>>().join(","))
}

/// One policy. Files are read in the same order whether cached or not, so the problems of a
/// first sample are listed in a stable order. Governor, EPP and frequency are read every
/// sample (`due`) unless the host reads them in turns: perftop's own tweaks change them and
/// expect to see the change on the next frame, which `read_freq` sees to on any host.
fn read_policy(
    probe: &mut Probe,
    id: String,
    dir: String,
    cached: Option<PolicyStatic>,
    due: bool,
) -> (FreqPolicy, PolicyStatic) {
    let fresh = cached.is_none();
    let mut st = cached.unwrap_or_default();
    let words = |probe: &mut Probe, f: &str| -> Vec<String> {
        probe
            .line_in(&dir, f)
            .map(|l| l.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default()
    };
    let affected_cpus = match &st.affected_cpus {
        Some(list) => list.clone(),
        None => {
            let line = probe.line_in(&dir, "affected_cpus");
            let list = line.as_deref().and_then(spaced_list);
            if line.is_some() {
                st.affected_cpus = Some(list.clone());
            }
            list
        }
    };
    if fresh {
        st.related_cpus = probe
            .line_in(&dir, "related_cpus")
            .and_then(|l| spaced_list(&l));
        st.driver = probe.line_in(&dir, "scaling_driver");
    }
    let due = due || st.last.is_none();
    let mut governor = None;
    if due {
        governor = probe.line_in(&dir, "scaling_governor");
    }
    if fresh {
        st.available_governors = words(probe, "scaling_available_governors");
    }
    let mut epp = None;
    if due {
        epp = probe.line_in(&dir, "energy_performance_preference");
    }
    if fresh {
        st.available_epp = words(probe, "energy_performance_available_preferences");
    }
    let (governor, epp, cur_khz) = match (&st.last, due) {
        (Some(last), false) => last.clone(),
        _ => (governor, epp, probe.u64_in(&dir, "scaling_cur_freq")),
    };
    st.last = Some((governor.clone(), epp.clone(), cur_khz));
    // Settings, refreshed on the policy's turn (every sample below the detail budget).
    let min_khz = probe.setting_on_turn(
        &mut st.min_khz,
        &dir,
        "scaling_min_freq",
        due,
        super::parse_u64,
    );
    let max_khz = probe.setting_on_turn(
        &mut st.max_khz,
        &dir,
        "scaling_max_freq",
        due,
        super::parse_u64,
    );
    if fresh {
        st.hw_min_khz = quiet_u64(probe, &dir, "cpuinfo_min_freq");
        st.hw_max_khz = quiet_u64(probe, &dir, "cpuinfo_max_freq");
    }
    let policy = FreqPolicy {
        affected_cpus,
        related_cpus: st.related_cpus.clone(),
        driver: st.driver.clone(),
        governor,
        available_governors: st.available_governors.clone(),
        epp,
        available_epp: st.available_epp.clone(),
        cur_khz,
        min_khz,
        max_khz,
        hw_min_khz: st.hw_min_khz,
        hw_max_khz: st.hw_max_khz,
        id,
        dir,
    };
    (policy, st)
}

#[cfg(test)]
mod tests;
