//! Findings rules through the real derive path: for every rule a sample pair that triggers it and
//! one just under its threshold that does not; a quiet system gives none; the strip tracker raises
//! on the third consecutive sample and clears with hysteresis; the strip's text; and the findings
//! as `perftop batch` and `perftop delta` print them.

mod support;

use perftop::assess::{assess, Assessed};
use perftop::cpulist::CpuList;
use perftop::findings::{
    evaluate, strip_lines, ActiveFinding, DiskBaselines, FindingTracker, Thresholds, RULE_IDS,
};
use perftop::findings::{Finding, Severity};
use perftop::root::Root;
use perftop::sample::{
    CpuEntry, CpuTimes, DiskSample, FreqPolicy, HugePageSize, KernelThread, NetDevice, NodeSample,
    NumaStat, Sample, SoftirqRow, Softirqs, SoftnetRow, VmStat,
};
use perftop::source::Reader;
use std::path::{Path, PathBuf};
use std::process::Command;

const GIB_KB: u64 = 1024 * 1024;
const MEM_TOTAL_KB: u64 = 16 * GIB_KB;
/// vm thresholds of the quiet pair, in 4 kB pages: background 800 000 kB, hard 1 600 000 kB,
/// so freerun = 1 200 000 kB.
const BG_PAGES: u64 = 200_000;
const HARD_PAGES: u64 = 400_000;
const CPUS: u32 = 4;

/// Derive and findings, as every run mode prints them.
fn derive(prev: Option<&Sample>, cur: &Sample) -> Assessed {
    assess(prev, cur, &perftop::findings::Thresholds::default())
}

/// Two samples `secs` apart of a 4-CPU, 2-node host doing a little of everything.
struct Pair {
    a: Sample,
    b: Sample,
    secs: f64,
}

impl Pair {
    fn quiet(secs: f64) -> Pair {
        let mut a = Sample::default();
        a.time.uptime_s = Some(1000.0);
        a.time.wall_ms = 1_700_000_000_000;
        a.host.hostname = Some("quiet".into());
        a.cpu.online = CpuList::parse("0-3");
        a.cpu.freq.policies = vec![FreqPolicy {
            id: "policy0".into(),
            dir: "sys/devices/system/cpu/cpufreq/policy0".into(),
            affected_cpus: CpuList::parse("0-3"),
            driver: Some("intel_pstate".into()),
            governor: Some("powersave".into()),
            ..FreqPolicy::default()
        }];
        let mi = &mut a.memory.meminfo;
        mi.mem_total = Some(MEM_TOTAL_KB);
        mi.mem_free = Some(8 * GIB_KB);
        mi.dirty = Some(20_000);
        mi.writeback = Some(0);
        mi.page_tables = Some(40_000);
        let vm = &mut a.memory.vmstat;
        vm.nr_free_pages = Some(8 * GIB_KB / 4);
        vm.nr_dirty = Some(5_000);
        vm.nr_writeback = Some(0);
        vm.nr_dirty_background_threshold = Some(BG_PAGES);
        vm.nr_dirty_threshold = Some(HARD_PAGES);
        vm.thp_fault_alloc = Some(1_000);
        vm.thp_fault_fallback = Some(1_000);
        vm.compact_stall = Some(1_000);
        a.memory.dirty.ratio = Some(20);
        a.memory.dirty.background_ratio = Some(10);
        a.memory.dirty.bytes = Some(0);
        a.memory.dirty.background_bytes = Some(0);
        a.memory.thp.enabled = Some("madvise".into());
        a.memory.thp.defrag = Some("madvise".into());
        a.memory.hugepage_sizes = vec![HugePageSize {
            size_kb: 2048,
            total: Some(0),
            free: Some(0),
            rsvd: Some(0),
            surp: Some(0),
            overcommit: Some(0),
        }];
        a.net.softirqs = Some(Softirqs {
            cpus: (0..CPUS).collect(),
            rows: vec![SoftirqRow {
                name: "NET_RX".into(),
                counts: vec![1_000; CPUS as usize],
            }],
        });
        for id in 0..CPUS {
            a.cpu.ksoftirqd.push(KernelThread {
                cpu: id,
                pid: 10 + id,
                ticks: 50,
            });
        }
        a.net.devices = vec![NetDevice {
            name: "eth0".into(),
            rx_packets: 1_000_000,
            tx_packets: 1_000_000,
            ..NetDevice::default()
        }];
        let mut b = a.clone();
        b.time.uptime_s = Some(1000.0 + secs);
        b.time.wall_ms = a.time.wall_ms + (secs * 1000.0) as i64;
        let mut p = Pair { a, b, secs };
        for id in 0..CPUS {
            p.cpu(id, 5.0, 0.5);
            p.softnet(id, 1_000.0, 0.0, 0.0);
            p.b.net.softirqs.as_mut().expect("softirqs").rows[0].counts[id as usize] +=
                p.count(500.0);
            p.ksoftirqd(id, 0.1);
        }
        p.numa(0, 5_000.0, 10.0);
        p.numa(1, 5_000.0, 10.0);
        p.vm(|v| &mut v.thp_fault_alloc, 2.0);
        p.disk("nvme0n1", Some(false), 200.0, 0.2, 0.04);
        p.disk("sda", Some(true), 50.0, 5.0, 0.25);
        p.disk("sda1", Some(true), 50.0, 5.0, 0.25);
        p.a.disks[2].whole_disk = false;
        p.b.disks[2].whole_disk = false;
        p.b.net.devices[0].rx_packets += p.count(4_000.0);
        p.b.net.devices[0].tx_packets += p.count(3_000.0);
        p
    }

    /// Events in the interval for a rate per second.
    fn count(&self, per_s: f64) -> u64 {
        (per_s * self.secs).round() as u64
    }

    fn derive(&self) -> Assessed {
        derive(Some(&self.a), &self.b)
    }

    fn ids(&self) -> Vec<String> {
        self.derive().findings.into_iter().map(|f| f.id).collect()
    }

    fn finding(&self, id: &str) -> Option<Finding> {
        let f = self.derive().findings.into_iter().find(|f| f.id == id)?;
        assert!(
            f.message.chars().count() <= 76,
            "message too long: {}",
            f.message
        );
        Some(f)
    }

    fn fires(&self, id: &str) -> Finding {
        self.finding(id)
            .unwrap_or_else(|| panic!("{id} should fire; got {:?}", self.ids()))
    }

    fn silent(&self, id: &str) {
        assert!(self.finding(id).is_none(), "{id} should not fire: {:?}", {
            self.derive().findings
        });
    }

    /// CPU `id` at `busy`% C0 over the interval, `soft`% of it in softirq.
    fn cpu(&mut self, id: u32, busy: f64, soft: f64) {
        let total = (self.secs * 100.0).round() as u64;
        let busy = (total as f64 * busy / 100.0).round() as u64;
        let soft = (total as f64 * soft / 100.0).round() as u64;
        let t0 = CpuTimes {
            user: 1_000,
            softirq: 100,
            idle: 100_000,
            ..CpuTimes::default()
        };
        let t1 = CpuTimes {
            user: t0.user + busy - soft,
            softirq: t0.softirq + soft,
            idle: t0.idle + total - busy,
            ..t0
        };
        for (s, t) in [(&mut self.a, t0), (&mut self.b, t1)] {
            let entry = CpuEntry {
                id,
                online: true,
                times: Some(t),
                node: Some(id / 2),
                ..CpuEntry::default()
            };
            match s.cpu.cpus.iter_mut().find(|c| c.id == id) {
                Some(c) => *c = entry,
                None => s.cpu.cpus.push(entry),
            }
            s.cpu.cpus.sort_by_key(|c| c.id);
        }
    }

    fn softnet(&mut self, cpu: u32, processed: f64, dropped: f64, squeezed: f64) {
        let row = |p: u64, d: u64, q: u64| SoftnetRow {
            cpu,
            cpu_from_file: true,
            processed: 10_000 + p,
            dropped: 10 + d,
            time_squeeze: 10 + q,
            backlog: Some(0),
            ..SoftnetRow::default()
        };
        let r1 = row(
            self.count(processed),
            self.count(dropped),
            self.count(squeezed),
        );
        for (s, r) in [(&mut self.a, row(0, 0, 0)), (&mut self.b, r1)] {
            s.net.softnet.retain(|x| x.cpu != cpu);
            s.net.softnet.push(r);
            s.net.softnet.sort_by_key(|x| x.cpu);
        }
    }

    fn ksoftirqd(&mut self, cpu: u32, pct: f64) {
        let ticks = self.count(pct);
        let t = self
            .b
            .cpu
            .ksoftirqd
            .iter_mut()
            .find(|k| k.cpu == cpu)
            .expect("thread");
        t.ticks = 50 + ticks;
    }

    fn numa(&mut self, node: u32, hit: f64, miss: f64) {
        let stat = |h: u64, m: u64| NumaStat {
            numa_hit: Some(1_000_000 + h),
            numa_miss: Some(1_000 + m),
            ..NumaStat::default()
        };
        let s1 = stat(self.count(hit), self.count(miss));
        for (s, st) in [(&mut self.a, stat(0, 0)), (&mut self.b, s1)] {
            s.nodes.retain(|n| n.id != node);
            s.nodes.push(NodeSample {
                id: node,
                cpus: CpuList::parse(if node == 0 { "0-1" } else { "2-3" }),
                numastat: st,
                ..NodeSample::default()
            });
            s.nodes.sort_by_key(|n| n.id);
        }
    }

    fn vm(&mut self, f: fn(&mut VmStat) -> &mut Option<u64>, per_s: f64) {
        let n = self.count(per_s);
        let before = f(&mut self.a.memory.vmstat).unwrap_or(0);
        *f(&mut self.b.memory.vmstat) = Some(before + n);
    }

    /// A device doing `ios` reads/s at `await_ms`, with `aqu` requests queued on average.
    fn disk(&mut self, name: &str, rotational: Option<bool>, ios: f64, await_ms: f64, aqu: f64) {
        let n = self.count(ios);
        let ticks = (n as f64 * await_ms).round() as u64;
        let tiq = (aqu * self.secs * 1000.0).round() as u64;
        let io_ticks = tiq.min((self.secs * 1000.0) as u64);
        let d0 = DiskSample {
            name: name.into(),
            major: 8,
            minor: 0,
            fields: 17,
            read_ios: 1_000,
            read_ticks: 5_000,
            time_in_queue: 10_000,
            io_ticks: 8_000,
            whole_disk: true,
            rotational,
            ..DiskSample::default()
        };
        let d1 = DiskSample {
            read_ios: d0.read_ios + n,
            read_ticks: d0.read_ticks + ticks,
            time_in_queue: d0.time_in_queue + tiq,
            io_ticks: d0.io_ticks + io_ticks,
            ..d0.clone()
        };
        for (s, d) in [(&mut self.a, d0), (&mut self.b, d1)] {
            match s.disks.iter_mut().find(|x| x.name == name) {
                Some(x) => *x = d,
                None => s.disks.push(d),
            }
        }
    }

    fn nic_drops(&mut self, per_s: f64) {
        self.b.net.devices[0].rx_drop += self.count(per_s);
    }
}

// ---------------------------------------------------------------- quiet

#[test]
fn quiet_pairs_give_no_findings() {
    for secs in [1.0, 10.0] {
        let d = Pair::quiet(secs).derive();
        assert!(!d.since_boot);
        assert_eq!(d.findings, vec![], "quiet pair over {secs}s");
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/findings")
        .join(name)
}

fn read_root(dir: &Path) -> Sample {
    Reader::new(Root::new(dir)).sample()
}

#[test]
fn idle_vm_fixture_gives_no_findings() {
    let t0 = read_root(&fixture("vm-idle/t0"));
    let t1 = read_root(&fixture("vm-idle/t1"));
    assert!(t0.problems.is_empty() && t1.problems.is_empty());
    let d = derive(Some(&t0), &t1);
    assert!(d.interval_s.is_some_and(|s| s > 1.0));
    assert_eq!(d.findings, vec![]);
    let mut tracker = FindingTracker::new(Thresholds::default());
    for _ in 0..5 {
        assert_eq!(tracker.update(&d), vec![]);
    }
}

/// The machine the tests run on, over one second. Only meaningful on an idle machine (a
/// parallel `cargo test` is not idle), so it is opt-in: `cargo test --test findings -- --ignored`.
#[test]
#[ignore]
fn this_idle_machine_gives_no_findings() {
    let mut reader = Reader::new(Root::new("/"));
    let a = reader.sample();
    std::thread::sleep(std::time::Duration::from_secs(1));
    let b = reader.sample();
    assert_eq!(derive(Some(&a), &b).findings, vec![]);
}

#[test]
fn since_boot_gives_no_findings() {
    let mut p = Pair::quiet(10.0);
    p.b.memory.meminfo.page_tables = Some(MEM_TOTAL_KB / 4);
    p.b.memory.vmstat.nr_dirty = Some(397_500); // 1_590_000 kB
    assert!(!p.ids().is_empty());
    let d = derive(None, &p.b);
    assert!(d.since_boot);
    assert_eq!(d.findings, vec![]);
}

#[test]
fn every_rule_id_is_known_and_findings_carry_pane_and_severity() {
    let mut p = Pair::quiet(10.0);
    p.b.memory.meminfo.page_tables = Some(MEM_TOTAL_KB / 10);
    p.b.memory.vmstat.nr_dirty = Some(225_000); // 900_000 kB
    p.nic_drops(50.0);
    let found = p.derive().findings;
    // pagetables.large, dirty.background and net.drops: a check over nothing would pass.
    assert!(found.len() >= 3, "{found:?}");
    for f in found {
        assert!(RULE_IDS.contains(&f.id.as_str()), "{}", f.id);
        assert!(["info", "warn", "crit"].contains(&f.severity.as_str()));
        assert!(
            ["cpu", "numa", "hugepages", "dirty", "disks", "softirq"].contains(&f.pane.as_str())
        );
    }
}

// ---------------------------------------------------------------- dirty

#[test]
fn dirty_background() {
    let mut p = Pair::quiet(1.0);
    p.b.memory.vmstat.nr_dirty = Some(BG_PAGES + 1);
    let f = p.fires("dirty.background");
    assert_eq!(f.severity, "info");
    assert_eq!(f.pane, "dirty");
    assert_eq!(f.tweak.as_deref(), Some("vm.dirty_background_ratio"));
    assert_eq!(
        f.message,
        "dirty 781M past background 781M: flushing (vm.dirty_background_ratio 10)"
    );
    p.b.memory.vmstat.nr_dirty = Some(BG_PAGES);
    p.silent("dirty.background");
}

#[test]
fn dirty_background_names_bytes_when_set() {
    let mut p = Pair::quiet(1.0);
    p.b.memory.dirty.background_bytes = Some(512 << 20);
    p.b.memory.vmstat.nr_dirty = Some(BG_PAGES + 1);
    let f = p.fires("dirty.background");
    assert_eq!(f.tweak.as_deref(), Some("vm.dirty_background_bytes"));
    assert!(
        f.message.ends_with("(vm.dirty_background_bytes 512M)"),
        "{}",
        f.message
    );
}

#[test]
fn dirty_throttled() {
    // Pages, as /proc/vmstat states them (the gauge, state and thresholds share that read).
    let freerun = (BG_PAGES + HARD_PAGES) / 2;
    let mut p = Pair::quiet(1.0);
    p.b.memory.vmstat.nr_dirty = Some(250_000);
    p.b.memory.vmstat.nr_writeback = Some(freerun - 250_000 + 1);
    let f = p.fires("dirty.throttled");
    assert_eq!(f.severity, "warn");
    assert_eq!(f.tweak.as_deref(), Some("vm.dirty_ratio"));
    assert_eq!(
        f.message,
        "dirty+wb 1.1G past freerun 1.1G: writers throttled (vm.dirty_ratio 20)"
    );
    p.silent("dirty.background"); // superseded
    p.b.memory.vmstat.nr_writeback = Some(freerun - 250_000);
    p.silent("dirty.throttled");
    p.fires("dirty.background");
    // At the hard limit writers are blocked outright.
    p.b.memory.vmstat.nr_writeback = Some(HARD_PAGES - 250_000);
    let f = p.fires("dirty.throttled");
    assert_eq!(f.severity, "crit");
    assert!(f.message.contains("writers blocked"), "{}", f.message);
}

// ---------------------------------------------------------------- disks

#[test]
fn disk_saturated_rotational_without_baseline() {
    let mut p = Pair::quiet(10.0);
    p.disk("sda", Some(true), 100.0, 20.0, 4.0);
    let f = p.fires("disk.saturated");
    assert_eq!((f.severity.as_str(), f.pane.as_str()), ("warn", "disks"));
    assert_eq!(f.tweak, None);
    assert_eq!(
        f.message,
        "sda aqu-sz 4.0, await 20.0ms (>= 20ms): queue building"
    );
    p.disk("sda", Some(true), 100.0, 19.9, 4.0);
    p.silent("disk.saturated");
    p.disk("sda", Some(true), 100.0, 80.0, 3.9);
    p.silent("disk.saturated");
    // A partition never speaks for its disk.
    p.disk("sda1", Some(true), 100.0, 80.0, 8.0);
    p.a.disks[2].whole_disk = false;
    p.b.disks[2].whole_disk = false;
    p.silent("disk.saturated");
    // Deep queue: crit.
    p.disk("sda", Some(true), 100.0, 300.0, 32.0);
    assert_eq!(p.fires("disk.saturated").severity, "crit");
}

#[test]
fn disk_saturated_nvme_without_baseline() {
    let mut p = Pair::quiet(10.0);
    p.disk("nvme0n1", Some(false), 5_000.0, 2.0, 10.0);
    p.fires("disk.saturated");
    p.disk("nvme0n1", Some(false), 5_000.0, 1.9, 10.0);
    p.silent("disk.saturated");
    // %util is 100 here, but a parallel device with a short await is not saturated.
    assert_eq!(
        p.derive()
            .disks
            .iter()
            .find(|d| d.disk_device == "nvme0n1")
            .and_then(|d| d.util),
        Some(100.0)
    );
}

/// What a 6.x kernel shows for a hung device (the 36-request case seen live): requests in
/// flight, no completion, io_ticks growing by the whole interval (diskstats_show advances it
/// while requests are in flight), time_in_queue unchanged (a request's queue time is added only
/// when it completes, so aqu-sz is 0 and the old "aqu-sz >= 4 and nothing completed" branch of
/// disk.saturated could never run).
#[test]
fn disk_stalled_with_requests_in_flight_and_no_completions() {
    let mut p = Pair::quiet(2.0);
    p.disk("sda", Some(true), 0.0, 0.0, 0.0);
    let i = sda(&p.b);
    p.a.disks[i].in_flight = 36;
    p.b.disks[i].in_flight = 36;
    p.b.disks[i].io_ticks += 2_000;
    let d = p.derive();
    let m = &d.disks[i];
    assert!(m.stalled, "{m:?}");
    assert_eq!(
        (m.inflight, m.aqu_sz, m.util),
        (Some(36), Some(0.0), Some(100.0))
    );
    let f = p.fires("disk.stalled");
    assert_eq!(f.severity, "crit");
    assert_eq!(
        f.message,
        "sda: 36 request(s) in flight, none completed in 2.0s: stalled"
    );
    p.silent("disk.saturated");
    // The text report lists it (an idle device would be hidden) with its in-flight count.
    let text = perftop::text::report(&d, 2, 80);
    assert!(
        text.contains("sda: 36 in flight, none completed in 2.0s (stalled)"),
        "{text}"
    );
    assert!(
        text.contains("\nsda "),
        "the stalled disk has a row: {text}"
    );

    // Requests in flight that do complete: busy, not stalled.
    let mut p = Pair::quiet(2.0);
    p.disk("sda", Some(true), 100.0, 1.0, 0.5);
    let i = sda(&p.b);
    p.b.disks[i].in_flight = 3;
    assert!(!p.derive().disks[i].stalled);
    p.silent("disk.stalled");
    // Nothing in flight and nothing completed: idle, not stalled.
    let mut p = Pair::quiet(2.0);
    p.disk("sda", Some(true), 0.0, 0.0, 0.0);
    assert!(!p.derive().disks[sda(&p.b)].stalled);
    p.silent("disk.stalled");
}

fn sda(s: &Sample) -> usize {
    s.disks
        .iter()
        .position(|d| d.name == "sda")
        .unwrap_or(usize::MAX)
}

fn learned(dev: &str, rotational: bool, await_ms: f64, n: usize) -> DiskBaselines {
    let t = Thresholds::default();
    let mut b = DiskBaselines::new();
    for _ in 0..n {
        let mut p = Pair::quiet(1.0);
        p.disk(dev, Some(rotational), 1_000.0, await_ms, 1.0);
        b.update(&p.derive(), &t);
    }
    b
}

#[test]
fn disk_saturated_against_its_own_baseline() {
    let t = Thresholds::default();
    let base = learned("nvme0n1", false, 1.0, 5);
    let b = base.get("nvme0n1").expect("baseline");
    assert_eq!((b.samples, (b.await_ms * 1e6).round() / 1e6), (5, 1.0));
    let mut p = Pair::quiet(10.0);
    p.disk("nvme0n1", Some(false), 5_000.0, 3.0, 10.0);
    let f = evaluate(&p.derive(), &t, Some(&base));
    let f = f.iter().find(|f| f.id == "disk.saturated").expect("fires");
    assert_eq!(
        f.message,
        "nvme0n1 aqu-sz 10.0, await 3.0ms vs usual 1.0ms: queue building"
    );
    // Just under 3x its baseline: quiet, though the absolute 2 ms fallback would have fired.
    p.disk("nvme0n1", Some(false), 5_000.0, 2.9, 10.0);
    assert!(evaluate(&p.derive(), &t, Some(&base)).is_empty());
    assert!(p.finding("disk.saturated").is_some());
    // A slow array whose normal await is 30 ms is not saturated at 40 ms.
    let base = learned("sda", true, 30.0, 5);
    p.disk("nvme0n1", Some(false), 200.0, 0.2, 0.04);
    p.disk("sda", Some(true), 100.0, 40.0, 6.0);
    assert!(!evaluate(&p.derive(), &t, Some(&base))
        .iter()
        .any(|f| f.id == "disk.saturated"));
    // Too few samples: the absolute thresholds still apply.
    let young = learned("sda", true, 30.0, 4);
    assert!(evaluate(&p.derive(), &t, Some(&young))
        .iter()
        .any(|f| f.id == "disk.saturated"));
}

#[test]
fn disk_baseline_ignores_queued_and_idle_intervals() {
    let t = Thresholds::default();
    let mut base = learned("sda", true, 5.0, 5);
    let mut p = Pair::quiet(1.0);
    p.disk("sda", Some(true), 100.0, 200.0, 20.0);
    base.update(&p.derive(), &t);
    p.disk("sda", Some(true), 0.0, 0.0, 0.0);
    base.update(&p.derive(), &t);
    base.update(&derive(None, &p.b), &t);
    let b = base.get("sda").expect("baseline");
    assert_eq!(b.samples, 5);
    assert!((b.await_ms - 5.0).abs() < 1e-9);
    // EWMA: one slower normal interval moves it by alpha.
    p.disk("sda", Some(true), 100.0, 15.0, 1.0);
    base.update(&p.derive(), &t);
    assert!((base.get("sda").expect("baseline").await_ms - 6.0).abs() < 1e-9);
}

// ---------------------------------------------------------------- softirq / network

#[test]
fn softirq_hotspot_one_cpu_does_the_net_rx_work() {
    let mut p = Pair::quiet(10.0);
    p.softnet(0, 4_000.0, 0.0, 0.0);
    let f = p.fires("softirq.hotspot");
    assert_eq!(f.severity, "warn");
    assert_eq!(
        (f.pane.as_str(), f.tweak.as_deref()),
        ("softirq", Some("irq.affinity"))
    );
    assert_eq!(
        f.message,
        "CPU0 does 57% of NET_RX work (4.0k of 7.0k pkts/s): spread IRQs/RPS"
    );
    // Just under 4x its peers.
    p.softnet(0, 3_900.0, 0.0, 0.0);
    p.silent("softirq.hotspot");
    // Lopsided but too little traffic to matter.
    for cpu in 1..CPUS {
        p.softnet(cpu, 330.0, 0.0, 0.0);
    }
    p.softnet(0, 4_000.0, 0.0, 0.0);
    p.silent("softirq.hotspot");
}

#[test]
fn softirq_hotspot_falls_back_to_net_rx_runs() {
    let mut p = Pair::quiet(10.0);
    p.a.net.softnet.clear();
    p.b.net.softnet.clear();
    p.b.net.softirqs.as_mut().expect("softirqs").rows[0].counts[2] += p.count(20_000.0);
    let f = p.fires("softirq.hotspot");
    assert!(f.message.contains("NET_RX runs/s"), "{}", f.message);
}

#[test]
fn softirq_hotspot_soft_time_with_squeezes() {
    let mut p = Pair::quiet(10.0);
    p.cpu(1, 60.0, 50.0);
    p.softnet(1, 1_000.0, 0.0, 1.0);
    let f = p.fires("softirq.hotspot");
    assert_eq!(
        f.message,
        "CPU1 %soft 50 with 1 squeezes/s: softirq budget exhausted"
    );
    p.silent("net.drops");
    p.cpu(1, 60.0, 49.0);
    p.silent("softirq.hotspot");
    p.cpu(1, 60.0, 50.0);
    p.softnet(1, 1_000.0, 0.0, 0.9);
    p.silent("softirq.hotspot");
}

#[test]
fn net_drops_softnet_backlog() {
    let mut p = Pair::quiet(10.0);
    p.softnet(0, 1_000.0, 1.0, 0.0);
    let f = p.fires("net.drops");
    assert_eq!(f.severity, "crit");
    assert_eq!(f.tweak.as_deref(), Some("net.core.netdev_max_backlog"));
    assert_eq!(f.message, "softnet drops 1/s (backlog full)");
    p.softnet(0, 1_000.0, 0.9, 0.0);
    p.silent("net.drops");
}

#[test]
fn net_drops_time_squeezes() {
    let mut p = Pair::quiet(10.0);
    p.softnet(0, 1_000.0, 0.0, 6.0);
    p.softnet(1, 1_000.0, 0.0, 4.0);
    let f = p.fires("net.drops");
    assert_eq!(f.severity, "warn");
    assert_eq!(f.tweak.as_deref(), Some("net.core.netdev_budget"));
    assert_eq!(f.message, "squeezes 10/s");
    p.softnet(1, 1_000.0, 0.0, 3.9);
    p.silent("net.drops");
}

#[test]
fn net_drops_nic() {
    let mut p = Pair::quiet(10.0);
    p.nic_drops(10.0);
    let f = p.fires("net.drops");
    assert_eq!((f.severity.as_str(), f.tweak.as_deref()), ("warn", None));
    assert_eq!(f.message, "eth0 drops 10/s");
    let mut p = Pair::quiet(10.0);
    p.nic_drops(9.9);
    p.silent("net.drops");
}

#[test]
fn ksoftirqd_busy() {
    let mut p = Pair::quiet(10.0);
    p.ksoftirqd(3, 10.0);
    let f = p.fires("ksoftirqd.busy");
    assert_eq!((f.severity.as_str(), f.pane.as_str()), ("warn", "softirq"));
    assert_eq!(
        f.message,
        "ksoftirqd/3 at 10% CPU: softirq work spills into threads"
    );
    p.ksoftirqd(3, 9.9);
    p.silent("ksoftirqd.busy");
    p.ksoftirqd(2, 50.0);
    assert_eq!(p.fires("ksoftirqd.busy").severity, "crit");
}

// ---------------------------------------------------------------- memory

#[test]
fn numa_misses() {
    let mut p = Pair::quiet(10.0);
    p.numa(1, 9_000.0, 1_000.0);
    let f = p.fires("numa.misses");
    assert_eq!((f.severity.as_str(), f.pane.as_str()), ("warn", "numa"));
    assert_eq!(
        f.message,
        "node1 NUMA miss 10% (1.0k of 10k pages/s): allocations spill off-node"
    );
    p.numa(1, 9_001.0, 999.0);
    p.silent("numa.misses");
    // Lopsided but idle.
    p.numa(1, 500.0, 400.0);
    p.silent("numa.misses");
    p.numa(1, 6_000.0, 4_000.0);
    assert_eq!(p.fires("numa.misses").severity, "crit");
    // One node cannot miss.
    p.a.nodes.truncate(1);
    p.b.nodes.truncate(1);
    p.numa(0, 6_000.0, 4_000.0);
    p.silent("numa.misses");
}

#[test]
fn thp_fallback_share() {
    let mut p = Pair::quiet(10.0);
    p.vm(|v| &mut v.thp_fault_alloc, 50.0);
    p.vm(|v| &mut v.thp_fault_fallback, 50.0);
    let f = p.fires("thp.fallback");
    assert_eq!(
        (f.pane.as_str(), f.tweak.as_deref()),
        ("hugepages", Some("thp.enabled"))
    );
    assert_eq!(
        f.message,
        "THP fallback 50% of 100 faults/s: small pages instead (thp enabled madvise)"
    );
    p.vm(|v| &mut v.thp_fault_alloc, 51.0);
    p.vm(|v| &mut v.thp_fault_fallback, 49.0);
    p.silent("thp.fallback");
    // All fallbacks, but too few faults to matter.
    p.vm(|v| &mut v.thp_fault_alloc, 0.0);
    p.vm(|v| &mut v.thp_fault_fallback, 9.9);
    p.silent("thp.fallback");
}

#[test]
fn thp_compaction_stalls() {
    let mut p = Pair::quiet(10.0);
    p.vm(|v| &mut v.compact_stall, 5.0);
    let f = p.fires("thp.fallback");
    assert_eq!(f.tweak.as_deref(), Some("thp.defrag"));
    assert_eq!(
        f.message,
        "compaction stalls 5/s: faults wait (thp defrag madvise)"
    );
    p.vm(|v| &mut v.thp_fault_fallback, 80.0);
    p.vm(|v| &mut v.thp_fault_alloc, 20.0);
    assert_eq!(
        p.fires("thp.fallback").message,
        "compaction stalls 5/s, THP fallback 80%: faults wait (thp defrag madvise)"
    );
    let mut p = Pair::quiet(10.0);
    p.vm(|v| &mut v.compact_stall, 4.9);
    p.silent("thp.fallback");
}

#[test]
fn hugepages_unused() {
    let mut p = Pair::quiet(1.0);
    let pool = |total: u64, free: u64, rsvd: u64| HugePageSize {
        size_kb: 2048,
        total: Some(total),
        free: Some(free),
        rsvd: Some(rsvd),
        surp: Some(0),
        overcommit: Some(0),
    };
    p.b.memory.hugepage_sizes = vec![pool(1000, 750, 0)];
    let f = p.fires("hugepages.unused");
    assert_eq!(
        (f.pane.as_str(), f.tweak.as_deref()),
        ("hugepages", Some("vm.nr_hugepages"))
    );
    assert_eq!(
        f.message,
        "2.0M huge pages: 1.5G of 2.0G pool unused, 9% of RAM pinned for nothing"
    );
    p.b.memory.hugepage_sizes = vec![pool(1000, 749, 0)];
    p.silent("hugepages.unused");
    // Free but reserved by a mapping: in use.
    p.b.memory.hugepage_sizes = vec![pool(1000, 900, 200)];
    p.silent("hugepages.unused");
    // All free but a small pool (under 1% of RAM).
    p.b.memory.hugepage_sizes = vec![pool(80, 80, 0)];
    p.silent("hugepages.unused");
}

#[test]
fn pagetables_large() {
    let mut p = Pair::quiet(1.0);
    let pct = |x: f64| (MEM_TOTAL_KB as f64 * x / 100.0) as u64;
    p.b.memory.meminfo.page_tables = Some(pct(5.0) + 1);
    let f = p.fires("pagetables.large");
    assert_eq!(
        (f.severity.as_str(), f.tweak.as_deref()),
        ("warn", Some("vm.nr_hugepages"))
    );
    assert_eq!(
        f.message,
        "PageTables 819M = 5.0% of RAM 16G: huge pages would shrink them"
    );
    p.b.memory.meminfo.page_tables = Some(pct(5.0) - 1);
    p.silent("pagetables.large");
    // The seeds' Oracle box: 5 GB of page tables on 20 GB.
    p.b.memory.meminfo.page_tables = Some(5_007_924);
    p.b.memory.meminfo.mem_total = Some(20_549_012);
    assert_eq!(p.fires("pagetables.large").severity, "crit");
}

// ---------------------------------------------------------------- CPU

#[test]
fn cpu_powersave_busy() {
    let mut p = Pair::quiet(10.0);
    p.cpu(0, 50.0, 0.0);
    let f = p.fires("cpu.powersave_busy");
    assert_eq!(
        (f.severity.as_str(), f.pane.as_str(), f.tweak.as_deref()),
        ("info", "cpu", Some("governor"))
    );
    assert_eq!(
        f.message,
        "1 of 4 CPUs >= 50% busy under governor powersave: ramping adds latency"
    );
    p.cpu(0, 49.0, 0.0);
    p.silent("cpu.powersave_busy");
    p.cpu(0, 90.0, 0.0);
    p.b.cpu.freq.policies[0].governor = Some("performance".into());
    p.silent("cpu.powersave_busy");
}

// ---------------------------------------------------------------- thresholds

#[test]
fn thresholds_override_rules() {
    let mut p = Pair::quiet(1.0);
    p.b.memory.meminfo.page_tables = Some(MEM_TOTAL_KB / 50); // 2%
    let d = p.derive();
    assert!(d.findings.is_empty());
    let t = Thresholds::from_json_str(r#"{"pagetables_pct": 1.5}"#).expect("valid");
    let ids: Vec<String> = evaluate(&d, &t, None).into_iter().map(|f| f.id).collect();
    assert_eq!(ids, ["pagetables.large"]);
}

// ---------------------------------------------------------------- tracker

/// One interval whose PageTables are `pct`% of RAM, `step` seconds into the run.
fn pagetables_at(pct: f64, step: i64) -> Assessed {
    let mut p = Pair::quiet(1.0);
    p.b.memory.meminfo.page_tables = Some((MEM_TOTAL_KB as f64 * pct / 100.0) as u64);
    p.b.time.wall_ms = 1_700_000_000_000 + step * 1000;
    p.derive()
}

fn active_ids(v: &[ActiveFinding]) -> Vec<&str> {
    v.iter().map(|a| a.finding.id.as_str()).collect()
}

#[test]
fn tracker_raises_on_the_third_consecutive_sample() {
    let mut tr = FindingTracker::new(Thresholds::default());
    assert!(tr.update(&pagetables_at(6.0, 0)).is_empty());
    assert!(tr.update(&pagetables_at(6.0, 1)).is_empty());
    let active = tr.update(&pagetables_at(6.0, 2));
    assert_eq!(active_ids(&active), ["pagetables.large"]);
    assert_eq!(active[0].since_ms, 1_700_000_000_000);
    assert_eq!(active[0].samples, 3);
    // A broken streak starts over.
    let mut tr = FindingTracker::new(Thresholds::default());
    for (i, pct) in [6.0, 6.0, 1.0, 6.0, 6.0].into_iter().enumerate() {
        assert!(tr.update(&pagetables_at(pct, i as i64)).is_empty());
    }
    let active = tr.update(&pagetables_at(6.0, 5));
    assert_eq!(active[0].since_ms, 1_700_000_003_000);
    // Since-boot samples and samples without an interval neither count nor break a streak.
    let mut tr = FindingTracker::new(Thresholds::default());
    let mut boot = pagetables_at(6.0, 0);
    boot.derived.since_boot = true;
    let mut no_interval = pagetables_at(1.0, 0);
    no_interval.derived.interval_s = None;
    tr.update(&pagetables_at(6.0, 0));
    tr.update(&boot);
    tr.update(&no_interval);
    assert!(tr.update(&pagetables_at(6.0, 1)).is_empty());
    assert_eq!(
        active_ids(&tr.update(&pagetables_at(6.0, 2))),
        ["pagetables.large"]
    );
}

#[test]
fn tracker_clears_with_hysteresis() {
    let mut tr = FindingTracker::new(Thresholds::default());
    for i in 0..3 {
        tr.update(&pagetables_at(6.0, i));
    }
    // Below the 5% trigger but above 90% of it (4.5%): still raised, numbers follow.
    for i in 3..10 {
        let a = tr.update(&pagetables_at(4.6, i));
        assert_eq!(active_ids(&a), ["pagetables.large"], "step {i}");
        assert!(
            a[0].finding.message.contains("4.6%"),
            "{}",
            a[0].finding.message
        );
    }
    // Below 4.5%: clears on the third such sample, not before.
    assert_eq!(tr.update(&pagetables_at(4.0, 10)).len(), 1);
    assert_eq!(tr.update(&pagetables_at(4.0, 11)).len(), 1);
    assert!(tr.update(&pagetables_at(4.0, 12)).is_empty());
    // Two misses then a hold resets the clear count.
    for i in 13..16 {
        tr.update(&pagetables_at(6.0, i));
    }
    tr.update(&pagetables_at(1.0, 16));
    tr.update(&pagetables_at(1.0, 17));
    assert_eq!(tr.update(&pagetables_at(5.5, 18)).len(), 1);
    tr.update(&pagetables_at(1.0, 19));
    assert_eq!(tr.update(&pagetables_at(1.0, 20)).len(), 1);
    assert!(tr.update(&pagetables_at(1.0, 21)).is_empty());
}

#[test]
fn tracker_never_raises_on_the_relaxed_thresholds() {
    let mut tr = FindingTracker::new(Thresholds::default());
    for i in 0..10 {
        assert!(tr.update(&pagetables_at(4.9, i)).is_empty());
    }
}

#[test]
fn tracker_learns_disk_baselines_and_sorts_by_severity() {
    let mut tr = FindingTracker::new(Thresholds::default());
    for i in 0..6 {
        let mut p = Pair::quiet(1.0);
        p.disk("nvme0n1", Some(false), 1_000.0, 1.0, 1.0);
        p.b.time.wall_ms += i * 1000;
        tr.update(&p.derive());
    }
    assert_eq!(tr.baselines().get("nvme0n1").map(|b| b.samples), Some(6));
    let mut last = Vec::new();
    for i in 6..9 {
        let mut p = Pair::quiet(1.0);
        p.disk("nvme0n1", Some(false), 5_000.0, 5.0, 40.0);
        p.b.memory.meminfo.page_tables = Some(MEM_TOTAL_KB / 16);
        p.b.time.wall_ms += i * 1000;
        last = tr.update(&p.derive());
    }
    assert_eq!(active_ids(&last), ["disk.saturated", "pagetables.large"]);
    assert_eq!(last[0].finding.severity, "crit");
    assert!(last[0].finding.message.contains("vs usual 1.0ms"));
}

// ---------------------------------------------------------------- strip

fn active(id: &str, sev: &str, since: i64, message: &str) -> ActiveFinding {
    let severity = match sev {
        "crit" => Severity::Crit,
        "warn" => Severity::Warn,
        _ => Severity::Info,
    };
    ActiveFinding {
        finding: Finding {
            id: id.into(),
            severity,
            message: message.into(),
            pane: "cpu".into(),
            tweak: None,
        },
        since_ms: since,
        samples: 3,
    }
}

#[test]
fn strip_at_80_columns() {
    let list = vec![
        active(
            "cpu.powersave_busy",
            "info",
            1,
            "1 of 4 CPUs >= 50% busy under governor powersave: ramping adds latency",
        ),
        active(
            "dirty.throttled",
            "warn",
            2,
            "dirty+wb 1.1G past freerun 1.1G: writers throttled (vm.dirty_ratio 20)",
        ),
        active(
            "disk.saturated",
            "crit",
            3,
            "sda aqu-sz 12.0, await 85.0ms vs usual 6.1ms: queue building",
        ),
        active(
            "net.drops",
            "warn",
            1,
            "softnet drops 120/s (backlog full), squeezes 35/s, eth0 drops 12/s, and more",
        ),
        active(
            "pagetables.large",
            "crit",
            9,
            "PageTables 5.0G = 24.4% of RAM 20G: huge pages would shrink them",
        ),
    ];
    let all = strip_lines(&list, 80, 24);
    assert_eq!(
        all,
        [
            "CRIT sda aqu-sz 12.0, await 85.0ms vs usual 6.1ms: queue building",
            "CRIT PageTables 5.0G = 24.4% of RAM 20G: huge pages would shrink them",
            "WARN softnet drops 120/s (backlog full), squeezes 35/s, eth0 drops 12/s, and mo~",
            "WARN dirty+wb 1.1G past freerun 1.1G: writers throttled (vm.dirty_ratio 20)",
            "INFO 1 of 4 CPUs >= 50% busy under governor powersave: ramping adds latency",
        ]
    );
    let cut = strip_lines(&list, 80, 3);
    assert_eq!(
        cut,
        [
            "CRIT sda aqu-sz 12.0, await 85.0ms vs usual 6.1ms: queue building",
            "CRIT PageTables 5.0G = 24.4% of RAM 20G: huge pages would shrink them",
            "+3 more: net.drops, dirty.throttled, cpu.powersave_busy",
        ]
    );
    for line in strip_lines(&list, 40, 2) {
        assert!(line.chars().count() <= 40, "{line}");
    }
    assert_eq!(
        strip_lines(&list, 80, 1),
        ["+5 more: disk.saturated, pagetables.large, net.drops, dirty.throttled, cpu.powe~"]
    );
    assert!(strip_lines(&[], 80, 3).is_empty());
    assert!(strip_lines(&list, 80, 0).is_empty());
}

// ---------------------------------------------------------------- the binary

fn perftop(args: &[&str], root: Option<&Path>) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perftop"));
    if let Some(r) = root {
        cmd.arg("--root").arg(r);
    }
    let out = cmd.args(args).output().expect("run perftop");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The lines of each report's Findings section.
fn findings_sections(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut cur: Option<Vec<String>> = None;
    for line in text.lines() {
        if line.starts_with("-- ") || line.trim().is_empty() {
            if let Some(c) = cur.take() {
                out.push(c);
            }
            if line.starts_with("-- Findings ") {
                cur = Some(Vec::new());
            }
        } else if let Some(c) = cur.as_mut() {
            c.push(line.to_string());
        }
    }
    out.extend(cur);
    out
}

#[test]
fn batch_on_the_quiet_fixture_says_none() {
    let text = perftop(
        &["-d", "0.25", "batch", "-n", "2"],
        Some(&fixture("vm-idle/t1")),
    );
    let sections = findings_sections(&text);
    assert_eq!(sections.len(), 2, "{text}");
    for s in sections {
        assert_eq!(s, ["none"], "{text}");
    }
}

#[test]
fn batch_prints_a_gauge_finding_after_the_since_boot_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    support::copy_tree(&fixture("vm-idle/t1"), dir.path());
    let meminfo = dir.path().join("proc/meminfo");
    let text = std::fs::read_to_string(&meminfo).expect("meminfo");
    let total: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("MemTotal");
    let patched: String = text
        .lines()
        .map(|l| {
            if l.starts_with("PageTables:") {
                format!("PageTables:     {} kB\n", total / 5)
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(&meminfo, patched).expect("write meminfo");
    let out = perftop(&["-d", "0.25", "batch", "-n", "2"], Some(dir.path()));
    let sections = findings_sections(&out);
    assert_eq!(
        sections[0],
        ["none"],
        "the since-boot report has no findings"
    );
    assert_eq!(sections[1].len(), 1, "{out}");
    assert!(sections[1][0].starts_with("CRIT PageTables"), "{out}");
}

#[test]
fn delta_json_carries_findings() {
    let mut p = Pair::quiet(10.0);
    p.b.memory.meminfo.page_tables = Some(MEM_TOTAL_KB / 16);
    p.nic_drops(30.0);
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, serde_json::to_string(&p.a).expect("json")).expect("write");
    std::fs::write(&b, serde_json::to_string(&p.b).expect("json")).expect("write");
    let out = perftop(
        &[
            "delta",
            a.to_str().expect("path"),
            b.to_str().expect("path"),
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let findings = v["findings"].as_array().expect("findings[]");
    let ids: Vec<&str> = findings.iter().filter_map(|f| f["id"].as_str()).collect();
    assert_eq!(ids, ["net.drops", "pagetables.large"]);
    assert_eq!(findings[0]["severity"], "warn");
    assert_eq!(findings[0]["pane"], "softirq");
    assert_eq!(findings[0]["tweak"], serde_json::Value::Null);
    assert_eq!(findings[0]["message"], "eth0 drops 30/s");
    assert_eq!(findings[1]["tweak"], "vm.nr_hugepages");
}
