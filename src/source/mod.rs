//! Readers: one module per kernel file family, all reading through one `Root`, producing a `Sample`.
//!
//! The sampling path only reads. A file that is absent is "unknown" and silent (no cpufreq in a
//! VM is normal); a file that exists but cannot be read or parsed is recorded in
//! `Sample::problems` so `snapshot` can say what it could not read.
//!
//! What a reader caches between samples, and how stale it can get:
//! - files that do not change while the system runs (names, topology, hardware limits, kernel
//!   release, `cpu/possible`, a directory's numbered entries, which `sys/block` names are whole
//!   disks, an IRQ's NUMA node) are read once and again every `STATIC_REFRESH_SAMPLES` samples;
//! - what changes only when a CPU goes on- or offline (`affected_cpus`, the `cpuN` and policy
//!   listings, a CPU's idle states) is dropped as soon as `online` or `present`, read every
//!   sample, changes; what is cached about cpufreq policies also when the
//!   `intel_pstate`/`amd_pstate` status changes;
//! - settings that only an administrator (or firmware) changes and that no perftop tweak
//!   writes (an idle state's `disable`, cpufreq `scaling_min_freq`/`scaling_max_freq`, boost,
//!   `no_turbo`, the `intel_pstate`/`amd_pstate` status, the cpuidle driver and governor, a
//!   disk's scheduler, `nr_requests` and `rotational`, a NIC's queue list, RPS masks and
//!   driver, an IRQ's effective affinity, a cgroup's CPU quota and memory limits) are read again at least every
//!   `SETTINGS_REFRESH_SAMPLES` samples (10 s at the default interval; at faster intervals
//!   every `SETTINGS_REFRESH_SECS`, `Tier::refresh`), staggered, and every
//!   sample when samples are `SETTINGS_EVERY_SAMPLE_GAP` or more apart. An IRQ's effective
//!   affinity is also read again as soon as its `smp_affinity_list` changes;
//! - an IRQ's `smp_affinity_list` (perftop's `irq.N` tweak and irqbalance write it) is a
//!   setting too, read again on the sample after any perftop write (`root::note_write`);
//! - a disk's `inflight` split only when `diskstats` counts requests in flight;
//! - a disk's storage stack (`storage`: read-ahead, max sectors, rq_affinity, hardware queues,
//!   SCSI depth and state, dm/md slaves) is a setting, except a multipath path's SCSI `state`,
//!   read every sample;
//! - on a big host, per-CPU detail (idle-state counters, cpufreq frequency, governor, EPP) in
//!   turns within a file budget (`turns`), every policy on the sample after a perftop write;
//!   idle processes every `processes::IDLE_EVERY` passes, the pass itself about once a second
//!   when samples come faster (`processes`);
//! - which control groups exist (a walk of the cgroup hierarchies, `source::cgroups`) is listed
//!   again every `cgroups::RELIST_SAMPLES` samples, and on the next sample as soon as a listed
//!   group is gone; the hierarchies' mount points with the static files;
//! - everything else a tweak or the kernel changes at run time (governor, EPP and current
//!   frequency on a host below the budget, sysctls, THP, huge page pools, counters, gauges)
//!   is read every sample.

pub mod boot;
pub mod carry;
pub mod cgroups;
pub mod cpu;
pub mod disk;
pub mod filesystems;
mod first_look;
pub mod host;
pub mod irq;
pub mod irq_turns;
pub mod kmsg;
pub mod kthreads;
pub mod memory;
pub mod net;
pub mod nic;
pub mod parse;
pub mod power;
pub mod pressure;
mod probe;
pub mod processes;
pub mod storage;
pub mod tcp;
pub mod turns;
pub mod zone;

pub(crate) use probe::settings::{spread_of, Cached};
pub use probe::Probe;
pub(crate) use probe::{parse_u64, MAX_IRQ_LINES};

use crate::cpulist::CpuList;
use crate::pagesize::{self, PageKbFrom};
use crate::root::Root;
use crate::sample::{Sample, SAMPLE_VERSION, STATIC_REFRESH_SAMPLES};
use foldhash::HashMap;
use probe::settings::{TierMap, SETTINGS_EVERY_SAMPLE_GAP};
use std::time::Instant;

/// Typed caches of the main reader thread (see the module comment for their lifetimes).
#[derive(Default)]
pub(crate) struct Cache {
    /// Per CPU id: topology and idle state names.
    pub(crate) cpus: HashMap<u32, cpu::CpuStatic>,
    /// Per cpufreq policy directory: names, hardware limits, `affected_cpus`.
    pub(crate) policies: HashMap<String, cpu::PolicyStatic>,
    /// `online` and `present` as last read; a change drops what depends on the CPU set.
    pub(crate) hotplug: Option<(Option<CpuList>, Option<CpuList>)>,
    /// `online` and `present` in the settings tier, read again at once when `/proc/stat`'s
    /// CPU lines disagree with `online` (`cpu::cpu_sets`).
    pub(crate) cpu_sets: Option<probe::settings::Tiered<CpuSets>>,
    /// `Root::is_dir` answers for paths that exist for the system's lifetime (`sys/block/X`).
    pub(crate) is_dir: HashMap<String, bool>,
    /// `Root::list_dir` of directories whose entries are fixed (huge page sizes).
    list_dir: HashMap<String, Vec<String>>,
    /// Settings tier: first lines and directory listings, by path.
    settings: TierMap<Result<Option<String>, String>>,
    setting_lists: TierMap<Vec<String>>,
    /// Per IRQ: its last `smp_affinity_list` line and its effective affinity.
    pub(crate) irqs: HashMap<u32, net::IrqCache>,
    /// Per NIC: its link settings and last `carrier_changes`.
    pub(crate) nics: HashMap<String, nic::NicCache>,
    /// TcpExt ListenOverflows as last read: when it moves, the listeners are read.
    pub(crate) listen_overflows: Option<u64>,
    /// The `intel_pstate`/`amd_pstate` status as last read (`None`: not read yet).
    pub(crate) pstate_status: Option<Option<String>>,
    /// `cpu/possible` as read (fixed at boot).
    pub(crate) possible: Option<Option<String>>,
    /// Settings tier: symlink targets (a NIC's driver).
    setting_links: TierMap<Option<String>>,
    /// Settings tier, read quietly: a cgroup's limits (the group can vanish at any time).
    quiet_settings: TierMap<Option<String>>,
    /// The last sample's `turns::every` for per-CPU detail (1: all every sample).
    pub(crate) detail_every: Option<u32>,
    /// Per NUMA node: its `meminfo` as last read, carried between its turns when samples come
    /// faster than a second (`memory::read_nodes`).
    pub(crate) node_meminfo: HashMap<u32, crate::sample::Meminfo>,
    /// `root::writes()` as of the last sample: a perftop tweak since makes the next sample
    /// read every policy's governor and EPP, not just those whose turn it is.
    pub(crate) writes_seen: u64,
    /// `/proc/cmdline` as last read and its performance flags (`boot::perf_flags`).
    pub(crate) boot_flags: Option<(String, Vec<String>)>,
    /// Threads `par_map` may use. `available_parallelism` reads five cgroup files each call.
    threads: Option<usize>,
}

/// The `online` and `present` CPU sets as last read.
pub(crate) type CpuSets = (Option<CpuList>, Option<CpuList>);

/// Reads samples from one root, caching what does not change between samples.
pub struct Reader {
    probe: Probe,
    samples_read: u32,
    /// When the previous sample was read: the root's own clock (`/proc/uptime`), and the
    /// monotonic clock for a root whose uptime cannot be read.
    last_sample: Option<(Option<f64>, Instant)>,
    pub(crate) kthread_pids: Option<kthreads::KthreadPids>,
    /// `/proc/interrupts`' reads, for its turns on a quiet host.
    irq_turns: irq_turns::IrqTurns,
    tcp_turns: tcp::TcpTurns,
    cgroup_carry: carry::Carry<crate::sample::Cgroups>,
    /// The previous sample's `kthreads::memory_work` counters.
    memory_work: Option<[Option<u64>; 6]>,
    pub(crate) cpuinfo: Option<(Option<String>, bool)>,
    zones: zone::ZoneCache,
    /// The page size, learnt from the first sample and fixed for the session (see `pagesize`).
    page: Option<(u64, PageKbFrom)>,
    procs: processes::ProcState,
    /// The watched kernel threads' last reads, between process passes (`kthreads`).
    threads: kthreads::ThreadReads,
    power: power::PowerState,
    cgroups: cgroups::CgroupCache,
    disks: disk::DiskCache,
    /// The kernel log, open between samples (`kmsg`).
    kmsg: kmsg::Kmsg,
    /// Filesystems and temperatures, read on their own thread (live root only).
    feed: Option<filesystems::Feed>,
    /// Every process, while the dashboard shows them (`want_everyone`); never in a sample.
    everyone: processes::everyone::FullState,
    want: Option<std::sync::Arc<processes::everyone::Want>>,
    full_list: Option<processes::everyone::Everyone>,
}

impl Reader {
    pub fn new(root: Root) -> Reader {
        Reader {
            samples_read: 0,
            last_sample: None,
            kthread_pids: None,
            memory_work: None,
            irq_turns: irq_turns::IrqTurns::default(),
            tcp_turns: tcp::TcpTurns::default(),
            cgroup_carry: carry::Carry::default(),
            cpuinfo: None,
            zones: zone::ZoneCache::default(),
            page: None,
            procs: processes::ProcState::default(),
            threads: kthreads::ThreadReads::default(),
            power: power::PowerState::default(),
            cgroups: cgroups::CgroupCache::default(),
            disks: disk::DiskCache::default(),
            kmsg: kmsg::Kmsg::default(),
            // Started with the reader, so its first read overlaps the first sample's.
            feed: root
                .is_live()
                .then(|| filesystems::Feed::start(filesystems::PERIOD)),
            probe: Probe::new(root),
            everyone: processes::everyone::FullState::default(),
            want: None,
            full_list: None,
        }
    }

    /// What the dashboard sets to have every process (and thread) listed after each pass
    /// (`take_everyone`): the full list is read only while it is set.
    pub fn want_everyone(&mut self) -> std::sync::Arc<processes::everyone::Want> {
        self.want.get_or_insert_with(Default::default).clone()
    }

    /// The full list built by the last sample, if one was asked for and a pass ran.
    pub fn take_everyone(&mut self) -> Option<processes::everyone::Everyone> {
        self.full_list.take()
    }

    pub fn root(&self) -> &Root {
        &self.probe.root
    }

    /// Reads one complete sample. Never fails: what could not be read is unknown and listed.
    pub fn sample(&mut self) -> Sample {
        let probe = &mut self.probe;
        probe.root.next_sample();
        probe.parallel = self.samples_read % STATIC_REFRESH_SAMPLES == 0;
        if probe.parallel {
            probe.forget_caches();
            self.kthread_pids = None;
            self.zones.forget();
            self.procs.forget();
            self.power.forget();
            self.cgroups.forget();
            self.disks.forget();
        }
        self.samples_read = self.samples_read.wrapping_add(1);
        probe.tier.sample_no += 1;
        let writes = crate::root::writes();
        probe.tier.tweaked = std::mem::replace(&mut probe.cache.writes_seen, writes) != writes;
        probe.problems.clear();
        let time = host::read_time(probe);
        // Samples far apart read every setting. Far apart by the root's own clock, as derive
        // measures intervals: a fixture tree read slowly on a loaded machine is still one
        // second a tick, and a live host's uptime is its monotonic time.
        let now = (time.uptime_s, Instant::now());
        let gap = SETTINGS_EVERY_SAMPLE_GAP.as_secs_f64();
        let since = match self.last_sample.replace(now) {
            None => None,
            Some((Some(was), _)) if now.0.is_some() => now.0.map(|u| u - was),
            Some((_, was)) => Some(now.1.duration_since(was).as_secs_f64()),
        };
        probe.tier.every_sample = since.is_none_or(|s| s + probe::settings::CLOCK_SLACK_S >= gap);
        probe.tier.refresh = probe::settings::Tier::refresh_for(since);
        probe.tier.gap_s = since;
        probe.tier.detail_every = turns::every_for_gap(Some(probe.tier.detail_every), since);
        let mut host = host::read_host(probe, &mut self.cpuinfo);
        boot::read_boot(probe, &mut host);
        let mut nodes = memory::read_nodes(probe);
        probe.cpus_seen = 0;
        // The interrupt counters right after /proc/stat's: per-CPU hard IRQ rates (from
        // /proc/interrupts) add up to /proc/stat's `intr` rate only when both are read at one
        // moment. With the processes pass between them (5-15 ms on a loaded 2-vCPU VM) the sum
        // drifted 1.2% from `intr` at 64k IRQ/s.
        let mut irqs = net::IrqCounters::default();
        let irq_turns = &mut self.irq_turns;
        let mut cpu = cpu::read_cpu(probe, &nodes, &time, |probe, intr, cpus| {
            let now = irq_turns::Now {
                sample_no: probe.tier.sample_no,
                time: &time,
                intr,
                cpus,
                tweaked: probe.tier.tweaked,
            };
            irqs = net::read_irq_counters(probe, irq_turns, &now);
        });
        probe.cpus_seen = cpu.cpus.len();
        let power = Some(power::read_power(probe, &cpu, &time, &mut self.power));
        // Memory before the processes: its counters say whether the memory threads work.
        let mut memory = memory::read_memory(probe);
        memory::fill_lone_node_pools(&mut nodes, &memory);
        let work = kthreads::memory_work(&memory.vmstat);
        let memory_due = kthreads::memory_threads_due(self.memory_work.as_ref(), &work);
        self.memory_work = Some(work);
        // Processes before the kernel threads: the pass reads their `stat` and hands it over.
        let kpids = self
            .kthread_pids
            .get_or_insert_with(|| kthreads::scan_kthreads(probe));
        self.procs.always = if memory_due {
            kpids.memory_pids()
        } else {
            Vec::new()
        };
        self.procs.watch = kpids.all();
        let busy = processes::busy_ticks(cpu.total.as_ref());
        // About once a second when samples come faster (`ProcState::pass_due`); the samples
        // between show the last pass's processes and rates.
        let every = probe.tier.detail_every;
        let pass = self
            .procs
            .pass_due(probe.tier.sample_no, every, probe.tier.tweaked);
        let mut processes = match pass {
            false => self.procs.carried(),
            true => None,
        }
        .or_else(|| {
            // Stamped with the pass's own start on a live host, as the groups are below: its
            // rates run between two passes' reads, not two stamps (`Processes::at`).
            let at = probe.root.is_live().then(|| host::read_time(probe));
            let mut read = processes::read_processes(
                probe,
                &mut self.procs,
                at.as_ref().unwrap_or(&time),
                busy,
                cpu.forks,
            );
            read.at = at;
            Some(read)
        });
        self.threads.begin(&time);
        cpu.ksoftirqd = kthreads::read_ksoftirqd(
            probe,
            &mut self.kthread_pids,
            &self.procs,
            &mut self.threads,
        );
        memory.kthreads = kthreads::read_memory_threads(
            probe,
            &mut self.kthread_pids,
            &self.procs,
            &mut self.threads,
        );
        self.threads.retain(&self.procs.watch);
        let watermarks = (memory.vm.min_free_kbytes, memory.vm.watermark_scale_factor);
        memory.zones = self.zones.zones(probe, watermarks);
        let (page_kb, from) = *self.page.get_or_insert_with(|| {
            if probe.root.is_live() {
                (pagesize::host_page_kb(), PageKbFrom::Host)
            } else {
                pagesize::of(&memory.meminfo, &memory.vmstat, None)
            }
        });
        if from == PageKbFrom::Default {
            probe.note(
                "proc/meminfo",
                format!(
                    "page size: no meminfo/vmstat counter pair agrees on one; assuming {page_kb} kB"
                ),
            );
        }
        memory.page_kb = Some(page_kb);
        memory.page_kb_from = Some(from);
        match self.want.as_deref() {
            Some(w) if w.on() && self.procs.passed => {
                // Its rates over its own reads too (it runs after the pass and the kernel
                // threads, later into a loaded sample each time).
                let at = probe.root.is_live().then(|| host::read_time(probe));
                self.full_list = Some(processes::everyone::build(
                    probe,
                    &self.procs,
                    &mut self.everyone,
                    at.as_ref().unwrap_or(&time),
                    page_kb,
                    w.threads(),
                ));
            }
            Some(w) if !w.on() => {
                // Nothing shows it: its memory (and command line reader) go.
                self.everyone = processes::everyone::FullState::default();
                self.full_list = None;
            }
            _ => {}
        }
        let disks = disk::read_disks(probe, &mut self.disks);
        let net = net::read_net(probe, cpu.online.as_ref(), irqs, &mut self.tcp_turns, &time);
        let pressure = Some(pressure::read_pressure(probe));
        let mem_total = memory.meminfo.mem_total;
        // The groups (~3 files each, up to `MAX_GROUPS`) about once a second when samples
        // come faster: their counters are cumulative, so their rates over their own two reads
        // are exact (`Cgroups::turn`). A perftop write reads them at once.
        let every = probe.tier.detail_every;
        let carry = &mut self.cgroup_carry;
        let cgroups = match carry.due(
            probe.tier.sample_no,
            every,
            every > 1 && !probe.tier.tweaked,
        ) {
            false => carry.carried(),
            true => None,
        }
        .or_else(|| {
            // Stamped with their own read: this far into a pass a loaded host is 0.1-1.5 s
            // past the sample's stamp, by a different amount each sample, and a rate over the
            // stamps' interval was that much off (a 0.2 CPU quota read as 0.18 under stress-ng).
            let at = probe.root.is_live().then(|| host::read_time(probe));
            let mut read = cgroups::read_cgroups(probe, &mut self.cgroups, mem_total);
            read.at = at.clone();
            carry.read(
                probe.tier.sample_no,
                at.as_ref().unwrap_or(&time),
                Some(read),
            )
        });
        // Last, after every counter of the sample is read: the one wait a sample may make.
        if let Some(p) = processes.as_mut() {
            processes::settle_first_cmdlines(probe, &mut self.procs, p);
        }
        let kernel = self.kmsg.read(&probe.root);
        let (filesystems, temperatures) = match &mut self.feed {
            Some(feed) => {
                if let Some(why) = feed.failed() {
                    probe.note("sysinfo", why.to_string());
                }
                let (f, t) = feed.latest();
                (Some(f), Some(t))
            }
            None => (None, None),
        };
        Sample {
            version: SAMPLE_VERSION,
            time,
            host,
            cpu,
            power,
            memory,
            nodes,
            disks,
            net,
            pressure,
            processes,
            cgroups,
            filesystems,
            temperatures,
            kernel,
            problems: std::mem::take(&mut probe.problems),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use probe::settings::SETTINGS_REFRESH_SAMPLES;
    use std::fs;
    use std::path::Path;

    /// Copies a fixture tree (files, directories, symlinks) so a test can change it.
    fn copy_tree(from: &Path, to: &Path) {
        fs::create_dir_all(to).expect("mkdir");
        for e in fs::read_dir(from).expect("read_dir") {
            let e = e.expect("entry");
            let (src, dst) = (e.path(), to.join(e.file_name()));
            let t = e.file_type().expect("file type");
            if t.is_symlink() {
                let target = fs::read_link(&src).expect("readlink");
                std::os::unix::fs::symlink(target, &dst).expect("symlink");
            } else if t.is_dir() {
                copy_tree(&src, &dst);
            } else {
                fs::copy(&src, &dst).expect("copy");
            }
        }
    }

    /// What each cache tier promises: values perftop's tweaks write on the next sample,
    /// hotplug at once,
    /// administrator settings within `SETTINGS_REFRESH_SAMPLES`, an IRQ's effective affinity
    /// as soon as its affinity moves.
    #[test]
    fn caches_are_invalidated_as_documented() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/intel-pstate/t1");
        copy_tree(&fixture, dir.path());
        let w = |rel: &str, text: &str| fs::write(dir.path().join(rel), text).expect("write");
        let cpu = "sys/devices/system/cpu";
        let mut r = Reader::new(Root::new(dir.path()));
        let policy = |s: &Sample, id: &str| {
            s.cpu
                .freq
                .policies
                .iter()
                .find(|p| p.id == id)
                .cloned()
                .expect("policy")
        };
        let irq = |s: &Sample, n: u32| {
            s.net
                .interrupts
                .as_ref()
                .and_then(|i| i.irqs.iter().find(|l| l.irq == n).cloned())
                .expect("irq")
        };
        let a = r.sample();
        assert_eq!(policy(&a, "policy0").governor.as_deref(), Some("powersave"));
        assert_eq!(
            policy(&a, "policy3").affected_cpus.map(|l| l.len()),
            Some(1)
        );
        assert_eq!(a.disks[0].scheduler.as_deref(), Some("none"));
        assert_eq!(a.cpu.cpus[0].idle_states[1].disabled, Some(false));
        assert_eq!(irq(&a, 124).effective_affinity.map(|l| l.len()), Some(1));

        // A governor or EPP tweak and an IRQ move show on the very next sample.
        w(
            &format!("{cpu}/cpufreq/policy0/scaling_governor"),
            "performance\n",
        );
        w(
            &format!("{cpu}/cpufreq/policy0/energy_performance_preference"),
            "power\n",
        );
        w("proc/irq/124/smp_affinity_list", "2\n");
        w("proc/irq/124/effective_affinity_list", "2\n");
        // As perftop's tweaks do: a write makes the next sample read what they write.
        crate::root::note_write();
        // Administrator settings.
        w(
            "sys/block/nvme0n1/queue/scheduler",
            "none [mq-deadline] kyber bfq\n",
        );
        w(&format!("{cpu}/cpu0/cpuidle/state1/disable"), "1\n");
        w(
            &format!("{cpu}/cpufreq/policy1/scaling_max_freq"),
            "1200000\n",
        );
        // CPU 3 goes offline: its policy has no affected CPU left.
        w(&format!("{cpu}/online"), "0-2\n");
        w(&format!("{cpu}/cpufreq/policy3/affected_cpus"), "\n");
        let b = r.sample();
        assert_eq!(
            policy(&b, "policy0").governor.as_deref(),
            Some("performance")
        );
        assert_eq!(policy(&b, "policy0").epp.as_deref(), Some("power"));
        assert_eq!(
            irq(&b, 124).affinity.map(|l| l.ids().to_vec()),
            Some(vec![2])
        );
        assert_eq!(
            irq(&b, 124).effective_affinity.map(|l| l.ids().to_vec()),
            Some(vec![2])
        );
        assert_eq!(policy(&b, "policy3").affected_cpus, None);
        assert!(!b.cpu.cpus[3].online);

        let mut late = 1;
        let mut s = b;
        while s.disks[0].scheduler.as_deref() != Some("mq-deadline")
            || s.cpu.cpus[0].idle_states[1].disabled != Some(true)
            || policy(&s, "policy1").max_khz != Some(1_200_000)
        {
            assert!(
                late < SETTINGS_REFRESH_SAMPLES,
                "settings not seen after {late} samples"
            );
            s = r.sample();
            late += 1;
        }
        assert!(s.problems.is_empty(), "{:?}", s.problems);

        // A sysctl an administrator changes shows within the tier's period; one perftop
        // writes, on the next sample.
        let ratio = |s: &Sample| s.memory.dirty.ratio;
        w("proc/sys/vm/dirty_ratio", "33\n");
        let mut late = 0;
        while ratio(&s) != Some(33) {
            assert!(late < SETTINGS_REFRESH_SAMPLES, "dirty_ratio after {late}");
            s = r.sample();
            late += 1;
        }
        w("proc/sys/vm/dirty_ratio", "34\n");
        crate::root::note_write();
        assert_eq!(ratio(&r.sample()), Some(34));
    }
}
