//! Findings rules through the real derive path: for every rule a sample pair that triggers it and
//! one just under its threshold that does not; a quiet system gives none; the strip tracker raises
//! on the third consecutive sample and clears with hysteresis; the strip's text; and the findings
//! as `perftop batch` and `perftop delta` print them.
//!
//! A module of the `it` test binary (`cargo test --test it findings::`): the sample-pair builder
//! and shared helpers are here, the tests one module per subject.

use crate::support;

mod binary;
mod cgroups;
mod clearing;
mod cpu;
mod dirty;
mod disks;
mod filesystems;
mod irq;
mod memory;
mod net;
mod pressure;
mod quiet;
mod strip;
mod tcp;
mod tracker;

use perftop::assess::{assess, Assessed};
use perftop::cpulist::CpuList;
use perftop::findings::{
    evaluate, strip_lines, ActiveFinding, Baselines, FindingTracker, Thresholds, RULE_IDS,
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
                since: None,
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
        let before = *f(&mut self.a.memory.vmstat).get_or_insert(0);
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

fn fixture(name: &str) -> PathBuf {
    support::fixture("findings").join(name)
}

fn read_root(dir: &Path) -> Sample {
    Reader::new(Root::new(dir)).sample()
}
