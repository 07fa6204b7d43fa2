//! Synthetic hosts: writes a `proc/` + `sys/` tree of any size for tests and benchmarks.
//!
//! Every counter is `rate × age` where `age = BOOT_AGE_S + tick` is the uptime in seconds, so one
//! tick is one second and the rate between two ticks is exactly the per-second rate below (and the
//! since-boot average is the same rate). Fields the kernel keeps in 32 bits wrap like the kernel's.
//!
//! Per-second rates (i = CPU id, d = disk index, q = global NIC queue index, n = node id):
//! - `/proc/stat` cpu i: user 10+5(i%7), nice i%2, system 5+2(i%3), irq 1, softirq 2+i%4,
//!   iowait 3 when i%5 = 0, steal 0, idle the rest of 100.
//! - idle states (POLL, C1, C1E, C6) split the idle+iowait envelope E µs as E/100, E/10, E/5 and
//!   the rest; usage 20, 100+10(i%5), 50, 30+i%8; above 0, 5, 3, 2+i%3; below 0, 1, 2, 1.
//! - disk d (d%4: 0,1 nvme; 2 sd; 3 dm): reads r = 100(d%5+1) of 8 kB, r/10 merged, read ticks
//!   r(d%3+1)/2 ms; writes w = 50(d%4+1) of 32 kB, w/5 merged, 2w ms; nvme discards 10 of 1 MB,
//!   10 ms; flushes 20, 10 ms; io_ticks 200+100(d%7) ms; time_in_queue = sum of the four tick fields.
//! - softirqs cpu i: TIMER 250, NET_TX 20+i%3, NET_RX 1000+100(i%16), BLOCK 50+i%10, SCHED
//!   300+10(i%7), RCU 400, ...; softnet processed 4·NET_RX, dropped 2 when i%16 = 7, squeezed 5 when
//!   i%16 = 15.
//! - NIC queue q: IRQ 100+q, 1000+10(q%100) interrupts on one CPU of its NIC's node (node j%nodes
//!   for NIC j; queue k of a NIC lands on that node's k-th CPU, wrapping).
//! - node n numastat: hit 90000+1000n, miss = foreign 1000(n%4+1); ksoftirqd/i: 4 ticks when i%10 = 3.
//! - gauges: nr_dirty 600000·nodes, nr_writeback 50000·nodes, thresholds 1000000·nodes (hard) and
//!   500000·nodes (background): "background writeback".
//!
//! A test fixture, not part of perftop: integration tests use it as `support::synth`, the
//! benches include this file as a `#[path]` module. Neither uses all of it.
#![allow(dead_code)]

use anyhow::{bail, Context, Result};
use std::fs;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct SynthSpec {
    pub cpus: u32,
    pub nodes: u32,
    pub disks: u32,
    pub queues: u32,
}

/// Uptime at tick 0, in seconds.
pub const BOOT_AGE_S: u64 = 86_400;

/// Appends formatted text to a `String` (which cannot fail).
macro_rules! put {
    ($s:expr, $($arg:tt)*) => {{ let _ = write!($s, $($arg)*); }};
}

// Visible to the test crate so `tests/it/synth.rs` can check the helpers it builds on.
pub(crate) mod cpu;
pub(crate) mod io;
pub(crate) mod memory;
pub(crate) mod procs;

use cpu::cpu_rates;
use io::nic_bus;

/// Writes the tree for `spec` at `tick` under `dir` (created if needed; files are overwritten).
pub fn write_host(dir: &Path, spec: &SynthSpec, tick: u64) -> Result<()> {
    if spec.cpus == 0 || spec.nodes == 0 {
        bail!("a synthetic host needs at least one CPU and one node");
    }
    let host = Host::new(spec, tick);
    let out = Out {
        base: dir.to_path_buf(),
    };
    host.write_proc(&out)?;
    host.write_cpus(&out)?;
    host.write_nodes(&out)?;
    host.write_disks(&out)?;
    host.write_net(&out)?;
    Ok(())
}

/// File writer rooted at the tree's base directory.
struct Out {
    base: PathBuf,
}

impl Out {
    fn dir(&self, rel: &str) -> Result<()> {
        let p = self.base.join(rel);
        fs::create_dir_all(&p).with_context(|| format!("creating {}", p.display()))
    }

    fn file(&self, rel: &str, text: &str) -> Result<()> {
        let p = self.base.join(rel);
        fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
    }

    /// A `sys/` value file: one line.
    fn line(&self, rel: &str, v: impl std::fmt::Display) -> Result<()> {
        self.file(rel, &format!("{v}\n"))
    }

    fn symlink(&self, rel: &str, target: &str) -> Result<()> {
        let p = self.base.join(rel);
        let _ = fs::remove_file(&p);
        std::os::unix::fs::symlink(target, &p).with_context(|| format!("linking {}", p.display()))
    }
}

/// A 32-bit kernel counter after `age` seconds at `rate`.
pub(crate) fn c32(rate: u64, age: u64) -> u64 {
    rate.wrapping_mul(age) & 0xffff_ffff
}

/// `first-last` (or `first`, or empty for no CPUs).
pub(crate) fn range(first: u32, count: u32) -> String {
    match count {
        0 => String::new(),
        1 => first.to_string(),
        _ => format!("{first}-{}", first + count - 1),
    }
}

/// One NIC queue's interrupt line.
pub(crate) struct Queue {
    pub(crate) irq: u32,
    pub(crate) name: String,
    pub(crate) cpu: u32,
    pub(crate) rate: u64,
    pub(crate) nic: u32,
}

pub(crate) struct Host {
    pub(crate) cpus: u32,
    pub(crate) nodes: u32,
    pub(crate) disks: u32,
    pub(crate) age: u64,
    pub(crate) tick: u64,
    /// First CPU and CPU count of each node (contiguous ranges).
    pub(crate) node_cpus: Vec<(u32, u32)>,
    pub(crate) node_of: Vec<u32>,
    pub(crate) nics: u32,
    pub(crate) queues: Vec<Queue>,
}

impl Host {
    pub(crate) fn new(spec: &SynthSpec, tick: u64) -> Host {
        let (cpus, nodes) = (spec.cpus, spec.nodes);
        let node_of: Vec<u32> = (0..cpus)
            .map(|c| (u64::from(c) * u64::from(nodes) / u64::from(cpus)) as u32)
            .collect();
        let mut node_cpus = vec![(0u32, 0u32); nodes as usize];
        for (c, &n) in node_of.iter().enumerate() {
            let e = &mut node_cpus[n as usize];
            if e.1 == 0 {
                e.0 = c as u32;
            }
            e.1 += 1;
        }
        let q = spec.queues;
        let nics = match q {
            0 => 0,
            1 => 1,
            _ => q.div_ceil(64).max(2),
        };
        let mut queues = Vec::with_capacity(q as usize);
        for j in 0..nics {
            let (lo, hi) = (j * q / nics, (j + 1) * q / nics);
            let (first, count) = node_cpus[(j % nodes) as usize];
            for (k, g) in (lo..hi).enumerate() {
                let k = k as u32;
                let cpu = if count == 0 {
                    g % cpus
                } else {
                    first + k % count
                };
                let name = if j % 2 == 0 {
                    format!("mlx5_comp{k}@pci:0000:{:02x}:00.0", nic_bus(j))
                } else {
                    format!("eth{j}-TxRx-{k}")
                };
                queues.push(Queue {
                    irq: 100 + g,
                    name,
                    cpu,
                    rate: 1000 + 10 * u64::from(g % 100),
                    nic: j,
                });
            }
        }
        Host {
            cpus,
            nodes,
            disks: spec.disks,
            age: BOOT_AGE_S + tick,
            tick,
            node_cpus,
            node_of,
            nics,
            queues,
        }
    }

    fn all_cpus(&self) -> String {
        range(0, self.cpus)
    }

    fn node_list(&self, n: u32) -> String {
        let (first, count) = self.node_cpus[n as usize];
        range(first, count)
    }

    /// Package and core id of a CPU: two packages per node (one when the node has one CPU).
    pub(crate) fn topology(&self, cpu: u32) -> (u32, u32) {
        let n = self.node_of[cpu as usize];
        let (first, count) = self.node_cpus[n as usize];
        let local = cpu - first;
        let per_pkg = if count >= 2 { count.div_ceil(2) } else { 1 };
        (2 * n + local / per_pkg, local % per_pkg)
    }

    fn write_proc(&self, out: &Out) -> Result<()> {
        let (a, cpus) = (self.age, u64::from(self.cpus));
        for d in ["proc/sys/kernel", "proc/sys/vm", "proc/net"] {
            out.dir(d)?;
        }
        let idle_s: u64 = (0..cpus).map(|i| cpu_rates(i)[3]).sum::<u64>() * a;
        out.file(
            "proc/uptime",
            &format!("{a}.00 {}.{:02}\n", idle_s / 100, idle_s % 100),
        )?;
        out.line("proc/sys/kernel/hostname", format!("synth-{cpus}c"))?;
        out.line("proc/sys/kernel/osrelease", "6.8.0-synth")?;
        out.line(
            "proc/sys/kernel/version",
            "#1 SMP PREEMPT_DYNAMIC Mon Jan  1 00:00:00 UTC 2024",
        )?;
        out.line(
            "proc/loadavg",
            format!(
                "{:.2} {:.2} {:.2} {}/{} {}",
                cpus as f64 * 0.4,
                cpus as f64 * 0.35,
                cpus as f64 * 0.3,
                1 + cpus / 10,
                cpus * 20 + 300,
                4000 + self.tick
            ),
        )?;
        out.file(
            "proc/cpuinfo",
            "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n\
             model name\t: Intel(R) Xeon(R) Platinum 8480+\ncpu MHz\t\t: 2000.000\n\
             flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat \
             pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx constant_tsc \
             arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf pni \
             monitor est tm2 ssse3 fma cx16 xtpr pdcm pcid sse4_1 sse4_2 x2apic movbe popcnt \
             aes xsave avx f16c rdrand lahf_lm abm avx2 avx512f amx_tile\n\n",
        )?;
        self.write_stat(out)?;
        self.write_memory(out)?;
        self.write_softirqs(out)?;
        self.write_interrupts(out)?;
        self.write_ksoftirqd(out)
    }
}
