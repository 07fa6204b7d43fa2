//! Synthetic CPUs: `/proc/stat`, topology, cpuidle states, intel_pstate policies, ksoftirqd.

use super::io::softirq_rates;
use super::{c32, Host, Out};
use anyhow::Result;
use std::fmt::Write as _;

/// Per-second `/proc/stat` ticks of CPU `i`: user nice system idle iowait irq softirq.
pub(crate) fn cpu_rates(i: u64) -> [u64; 7] {
    let user = 10 + 5 * (i % 7);
    let nice = i % 2;
    let system = 5 + 2 * (i % 3);
    let irq = 1;
    let softirq = 2 + i % 4;
    let iowait = if i % 5 == 0 { 3 } else { 0 };
    let idle = 100 - user - nice - system - irq - softirq - iowait;
    [user, nice, system, idle, iowait, irq, softirq]
}

impl Host {
    pub(super) fn write_stat(&self, out: &Out) -> Result<()> {
        let a = self.age;
        let mut total = [0u64; 7];
        let mut lines = String::with_capacity(80 * self.cpus as usize + 4096);
        for i in 0..u64::from(self.cpus) {
            let r = cpu_rates(i);
            put!(lines, "cpu{i}");
            for (t, v) in total.iter_mut().zip(r) {
                *t += v * a;
                put!(lines, " {}", v * a);
            }
            lines.push_str(" 0 0 0\n");
        }
        let mut s = String::with_capacity(lines.len() + 8192);
        s.push_str("cpu ");
        for t in total {
            put!(s, " {t}");
        }
        s.push_str(" 0 0 0\n");
        s.push_str(&lines);
        // intr: the grand total, then one total per IRQ number (as the kernel prints it).
        let (per_irq, arch) = self.irq_totals();
        let sum: u64 = per_irq.iter().map(|&(_, v)| v).sum::<u64>() + arch;
        put!(s, "intr {sum}");
        let max_irq = per_irq.last().map_or(0, |&(n, _)| n);
        let mut it = per_irq.iter().peekable();
        for n in 0..=max_irq {
            let v = match it.peek() {
                Some(&&(m, v)) if m == n => {
                    it.next();
                    v
                }
                _ => 0,
            };
            put!(s, " {v}");
        }
        let cpus = u64::from(self.cpus);
        put!(
            s,
            "\nctxt {}\nbtime 1700000000\nprocesses {}\nprocs_running {}\nprocs_blocked {}\n",
            3000 * cpus * a,
            50 * a + 1000,
            1 + cpus / 10,
            u64::from(self.disks) / 8
        );
        let mut soft = [0u64; 10];
        for i in 0..cpus {
            for (t, r) in soft.iter_mut().zip(softirq_rates(i)) {
                *t += c32(r, a);
            }
        }
        put!(s, "softirq {}", soft.iter().sum::<u64>());
        for t in soft {
            put!(s, " {t}");
        }
        s.push('\n');
        out.file("proc/stat", &s)
    }

    pub(super) fn write_cpus(&self, out: &Out) -> Result<()> {
        let a = self.age;
        let base = "sys/devices/system/cpu";
        for d in ["cpuidle", "cpufreq", "intel_pstate"] {
            out.dir(&format!("{base}/{d}"))?;
        }
        let all = self.all_cpus();
        for f in ["online", "possible", "present"] {
            out.line(&format!("{base}/{f}"), &all)?;
        }
        out.line(&format!("{base}/cpuidle/current_driver"), "intel_idle")?;
        out.line(&format!("{base}/cpuidle/current_governor"), "menu")?;
        out.line(&format!("{base}/cpuidle/current_governor_ro"), "menu")?;
        out.line(&format!("{base}/intel_pstate/status"), "active")?;
        out.line(&format!("{base}/intel_pstate/no_turbo"), 0)?;
        let states: [(&str, u64, u64); 4] = [
            ("POLL", 0, 0),
            ("C1", 1, 1),
            ("C1E", 2, 4),
            ("C6", 170, 600),
        ];
        for cpu in 0..self.cpus {
            let i = u64::from(cpu);
            let dir = format!("{base}/cpu{cpu}");
            let (pkg, core) = self.topology(cpu);
            out.dir(&format!("{dir}/topology"))?;
            out.line(&format!("{dir}/topology/physical_package_id"), pkg)?;
            out.line(&format!("{dir}/topology/die_id"), 0)?;
            out.line(&format!("{dir}/topology/core_id"), core)?;
            // Thermal throttling, always under the finding's 1%: core i hits its limit i % 3
            // times a second and spends i % 7 ms a second throttled; package p p % 4 times
            // and p % 5 ms a second.
            let t = format!("{dir}/thermal_throttle");
            let p = u64::from(pkg);
            out.dir(&t)?;
            out.line(&format!("{t}/core_throttle_count"), (i % 3) * a)?;
            out.line(&format!("{t}/core_throttle_total_time_ms"), (i % 7) * a)?;
            out.line(&format!("{t}/package_throttle_count"), (p % 4) * a)?;
            out.line(&format!("{t}/package_throttle_total_time_ms"), (p % 5) * a)?;

            let r = cpu_rates(i);
            let env = (r[3] + r[4]) * 10_000;
            let time = [
                env / 100,
                env / 10,
                env / 5,
                env - env / 100 - env / 10 - env / 5,
            ];
            let usage = [20, 100 + 10 * (i % 5), 50, 30 + i % 8];
            let above = [0, 5, 3, 2 + i % 3];
            let below = [0, 1, 2, 1];
            for (k, &(name, latency, residency)) in states.iter().enumerate() {
                let d = format!("{dir}/cpuidle/state{k}");
                out.dir(&d)?;
                out.line(&format!("{d}/name"), name)?;
                out.line(&format!("{d}/latency"), latency)?;
                out.line(&format!("{d}/residency"), residency)?;
                out.line(&format!("{d}/usage"), usage[k] * a)?;
                out.line(&format!("{d}/time"), time[k] * a)?;
                out.line(&format!("{d}/above"), above[k] * a)?;
                out.line(&format!("{d}/below"), below[k] * a)?;
                out.line(&format!("{d}/disable"), 0)?;
            }

            let d = format!("{base}/cpufreq/policy{cpu}");
            out.dir(&d)?;
            let perf = self.node_of[cpu as usize] == 0;
            let (gov, epp) = if perf {
                ("performance", "performance")
            } else {
                ("powersave", "balance_performance")
            };
            let cur = 1_200_000 + 100_000 * ((i + self.tick) % 25);
            for (f, v) in [
                ("affected_cpus", cpu.to_string()),
                ("related_cpus", cpu.to_string()),
                ("scaling_driver", "intel_pstate".into()),
                ("scaling_governor", gov.into()),
                (
                    "scaling_available_governors",
                    "performance powersave".into(),
                ),
                ("energy_performance_preference", epp.into()),
                (
                    "energy_performance_available_preferences",
                    "default performance balance_performance balance_power power".into(),
                ),
                ("scaling_cur_freq", cur.to_string()),
                ("scaling_min_freq", "800000".into()),
                ("scaling_max_freq", "3800000".into()),
                ("cpuinfo_min_freq", "800000".into()),
                ("cpuinfo_max_freq", "3800000".into()),
                ("base_frequency", "2000000".into()),
            ] {
                out.line(&format!("{d}/{f}"), v)?;
            }
        }
        Ok(())
    }

    pub(super) fn write_ksoftirqd(&self, out: &Out) -> Result<()> {
        let a = self.age;
        let proc_stat = |pid: u64, comm: &str, stime: u64, cpu: u64| {
            format!(
                "{pid} ({comm}) S 2 0 0 0 -1 69238848 0 0 0 0 0 {stime} 0 0 20 0 1 0 {} 0 0 \
                 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 17 {cpu} 0 0 0 0 0 0 0 0 \
                 0 0 0 0 0\n",
                pid * 3
            )
        };
        for (pid, comm) in [(1u64, "systemd"), (2, "kthreadd")] {
            out.dir(&format!("proc/{pid}"))?;
            out.line(&format!("proc/{pid}/comm"), comm)?;
            out.file(&format!("proc/{pid}/stat"), &proc_stat(pid, comm, a, 0))?;
        }
        for i in 0..u64::from(self.cpus) {
            let pid = ksoftirqd_pid(i);
            let comm = format!("ksoftirqd/{i}");
            let ticks = if i % 10 == 3 { 4 * a } else { 0 };
            out.dir(&format!("proc/{pid}"))?;
            out.line(&format!("proc/{pid}/comm"), &comm)?;
            out.file(
                &format!("proc/{pid}/stat"),
                &proc_stat(pid, &comm, ticks, i),
            )?;
        }
        Ok(())
    }
}

fn ksoftirqd_pid(cpu: u64) -> u64 {
    16 + 8 * cpu
}
