//! Synthetic I/O: diskstats and `sys/block`, softirqs, softnet, interrupts with IRQ affinity,
//! `/proc/net/dev` and the NICs' sysfs.

use super::{c32, Host, Out};
use anyhow::Result;
use std::fmt::Write as _;

const SOFTIRQS: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

#[rustfmt::skip]
pub(super) fn softirq_rates(i: u64) -> [u64; 10] {
    [0, 250, 20 + i % 3, 1000 + 100 * (i % 16), 50 + i % 10, 0, 2, 300 + 10 * (i % 7), 5, 400]
}

impl Host {
    pub(super) fn write_softirqs(&self, out: &Out) -> Result<()> {
        let (a, cpus) = (self.age, u64::from(self.cpus));
        let mut s = String::with_capacity(11 * (cpus as usize + 2) * 11);
        s.push_str("                    ");
        for i in 0..cpus {
            put!(s, "CPU{i:<8}");
        }
        s.push('\n');
        let rates: Vec<[u64; 10]> = (0..cpus).map(softirq_rates).collect();
        for (t, name) in SOFTIRQS.iter().enumerate() {
            put!(s, "{name:>12}:");
            for r in &rates {
                put!(s, " {:>10}", c32(r[t], a));
            }
            s.push('\n');
        }
        out.file("proc/softirqs", &s)?;

        let mut s = String::with_capacity(135 * cpus as usize);
        for (i, r) in rates.iter().enumerate() {
            let i = i as u64;
            let dropped = if i % 16 == 7 { 2 } else { 0 };
            let squeezed = if i % 16 == 15 { 5 } else { 0 };
            // processed, dropped, squeezed, 0 x5, collision, rps, flow limit, backlog, cpu, 0, 0
            let mut cols = [0u64; 15];
            cols[0] = c32(4 * r[3], a);
            cols[1] = c32(dropped, a);
            cols[2] = c32(squeezed, a);
            cols[11] = i % 3;
            cols[12] = i;
            for (k, c) in cols.iter().enumerate() {
                let sep = if k == 0 { "" } else { " " };
                put!(s, "{sep}{c:08x}");
            }
            s.push('\n');
        }
        out.file("proc/net/softnet_stat", &s)
    }

    /// (irq, Σ per-CPU count) for the device IRQs, and the Σ of the arch rows.
    pub(super) fn irq_totals(&self) -> (Vec<(u32, u64)>, u64) {
        let a = self.age;
        let mut v: Vec<(u32, u64)> = LEGACY.iter().map(|l| (l.0, l.3)).collect();
        v.extend(self.queues.iter().map(|q| (q.irq, c32(q.rate, a) + 7)));
        let arch = (0..u64::from(self.cpus))
            .map(|i| {
                arch_rates(i)
                    .iter()
                    .map(|&(_, r, _)| c32(r, a))
                    .sum::<u64>()
            })
            .sum();
        (v, arch)
    }

    pub(super) fn write_interrupts(&self, out: &Out) -> Result<()> {
        let (a, cpus) = (self.age, self.cpus as usize);
        let mut s = String::with_capacity((self.queues.len() + 16) * (11 * cpus + 80));
        s.push_str("     ");
        for i in 0..cpus {
            put!(s, "CPU{i:<8}");
        }
        s.push('\n');
        let row = |s: &mut String, key: &str, counts: &mut dyn FnMut(usize) -> u64| {
            put!(s, "{key:>4}:");
            for c in 0..cpus {
                put!(s, " {:>10}", counts(c));
            }
        };
        for &(irq, chip, action, count) in &LEGACY {
            row(&mut s, &irq.to_string(), &mut |c| {
                if c == 0 {
                    count
                } else {
                    0
                }
            });
            put!(s, "  {chip}  {action}\n");
        }
        let all = self.all_cpus();
        for q in &self.queues {
            // A small count left on the next CPU from before the IRQ was moved.
            let stale = (q.cpu as usize + 1) % cpus;
            let live = c32(q.rate, a);
            row(&mut s, &q.irq.to_string(), &mut |c| {
                if c == q.cpu as usize {
                    live
                } else if c == stale {
                    7
                } else {
                    0
                }
            });
            put!(
                s,
                "  IR-PCI-MSIX-0000:{:02x}:00.0 {}-edge      {}\n",
                nic_bus(q.nic),
                524288 + q.irq,
                q.name
            );
            let d = format!("proc/irq/{}", q.irq);
            out.dir(&d)?;
            let node = q.nic % self.nodes;
            out.line(&format!("{d}/smp_affinity_list"), self.node_list(node))?;
            out.line(&format!("{d}/effective_affinity_list"), q.cpu)?;
            out.line(&format!("{d}/node"), node)?;
        }
        for &(irq, ..) in &LEGACY {
            let d = format!("proc/irq/{irq}");
            out.dir(&d)?;
            out.line(&format!("{d}/smp_affinity_list"), &all)?;
            out.line(&format!("{d}/effective_affinity_list"), 0)?;
            out.line(&format!("{d}/node"), 0)?;
        }
        let rates: Vec<[(&str, u64, &str); 5]> = (0..cpus as u64).map(arch_rates).collect();
        for (k, &(key, _, what)) in arch_rates(0).iter().enumerate() {
            row(&mut s, key, &mut |c| c32(rates[c][k].1, a));
            put!(s, "   {what}\n");
        }
        s.push_str(" ERR:          0\n MIS:          0\n");
        out.file("proc/interrupts", &s)
    }

    pub(super) fn write_disks(&self, out: &Out) -> Result<()> {
        let a = self.age;
        let mut s = String::with_capacity(160 * (self.disks as usize + 2));
        let (mut nvme, mut sd, mut dm) = (0u32, 0u32, 0u32);
        for d in 0..self.disks {
            let (name, major, minor, part) = match d % 4 {
                0 | 1 => {
                    let k = nvme;
                    nvme += 1;
                    let name = format!("nvme{k}n1");
                    let part = (k == 0).then(|| (format!("{name}p1"), 2 * k + 1));
                    (name, 259, 2 * k, part)
                }
                2 => {
                    let k = sd;
                    sd += 1;
                    let name = sd_name(k);
                    let (major, minor) = sd_dev(k);
                    let part = (k == 0).then(|| (format!("{name}1"), minor + 1));
                    (name, major, minor, part)
                }
                _ => {
                    let k = dm;
                    dm += 1;
                    (format!("dm-{k}"), 253, k, None)
                }
            };
            let rates = disk_rates(u64::from(d), name.starts_with("nvme"));
            disk_line(&mut s, major, minor, &name, &rates, a);
            if let Some((pname, pminor)) = part {
                let half = rates.map(|r| r / 2);
                disk_line(&mut s, major, pminor, &pname, &half, a);
            }
            let dir = format!("sys/block/{name}");
            out.dir(&format!("{dir}/queue"))?;
            let (sched, rot, nr) = match d % 4 {
                0 | 1 => ("[none] mq-deadline", 0, 1023),
                2 => ("[mq-deadline] kyber bfq none", 1, 64),
                _ => ("none", 0, 128),
            };
            out.line(&format!("{dir}/queue/scheduler"), sched)?;
            out.line(&format!("{dir}/queue/rotational"), rot)?;
            out.line(&format!("{dir}/queue/nr_requests"), nr)?;
            // The rest of the storage stack a real disk carries (the reader's settings tier):
            // queue limits, hardware queues for blk-mq disks, the paths of a dm map.
            out.line(&format!("{dir}/queue/read_ahead_kb"), 128)?;
            out.line(&format!("{dir}/queue/max_sectors_kb"), 1280)?;
            out.line(&format!("{dir}/queue/rq_affinity"), 1)?;
            if !name.starts_with("dm-") {
                for q in 0..4 {
                    out.dir(&format!("{dir}/mq/{q}"))?;
                }
            }
            let inflight = u64::from(d % 4);
            out.line(
                &format!("{dir}/inflight"),
                format!("{inflight:>8} {:>8}", 0),
            )?;
            if name.starts_with("dm-") {
                out.dir(&format!("{dir}/dm"))?;
                out.line(&format!("{dir}/dm/name"), format!("vg0-lv{}", dm - 1))?;
                out.line(
                    &format!("{dir}/dm/uuid"),
                    format!("LVM-synthetic{:08}", dm - 1),
                )?;
                out.dir(&format!("{dir}/slaves"))?;
            }
        }
        out.file("proc/diskstats", &s)
    }

    pub(super) fn write_net(&self, out: &Out) -> Result<()> {
        let a = self.age;
        let mut s = String::from(
            "Inter-|   Receive                                                |  Transmit\n \
             face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets \
             errs drop fifo colls carrier compressed\n",
        );
        let mask = {
            let words = self.cpus.div_ceil(32) as usize;
            vec!["00000000"; words].join(",")
        };
        let mut dev = |name: &str, pkts: u64, drop: u64| {
            let (rxp, txp) = (pkts * a, pkts / 2 * a);
            put!(
                s,
                "{name:>6}: {} {rxp} 0 {} 0 0 0 0 {} {txp} 0 0 0 0 0 0\n",
                rxp * 800,
                drop * a,
                txp * 1200
            );
        };
        dev("lo", 100, 0);
        for j in 0..self.nics {
            let pkts: u64 = self
                .queues
                .iter()
                .filter(|q| q.nic == j)
                .map(|q| 8 * q.rate)
                .sum();
            dev(&format!("eth{j}"), pkts, if j == 0 { 3 } else { 0 });
        }
        out.dir("proc/net")?;
        out.file("proc/net/dev", &s)?;
        let base = "sys/class/net";
        for (name, nq, node, driver) in
            std::iter::once(("lo".to_string(), 1, None, "")).chain((0..self.nics).map(|j| {
                let nq = self.queues.iter().filter(|q| q.nic == j).count();
                let driver = if j % 2 == 0 { "mlx5_core" } else { "i40e" };
                (format!("eth{j}"), nq, Some(j % self.nodes), driver)
            }))
        {
            let dir = format!("{base}/{name}");
            for k in 0..nq {
                out.dir(&format!("{dir}/queues/rx-{k}"))?;
                out.dir(&format!("{dir}/queues/tx-{k}"))?;
                out.line(&format!("{dir}/queues/rx-{k}/rps_cpus"), &mask)?;
                out.line(&format!("{dir}/queues/tx-{k}/xps_cpus"), &mask)?;
            }
            // Link settings and the counters a NIC with a driver has.
            out.line(
                &format!("{dir}/mtu"),
                if node.is_some() { 9000 } else { 65536 },
            )?;
            out.line(&format!("{dir}/tx_queue_len"), 1000)?;
            out.line(
                &format!("{dir}/operstate"),
                if node.is_some() { "up" } else { "unknown" },
            )?;
            if node.is_some() {
                out.line(&format!("{dir}/speed"), 100_000)?;
                out.line(&format!("{dir}/duplex"), "full")?;
                out.line(&format!("{dir}/carrier_changes"), 2)?;
                out.dir(&format!("{dir}/statistics"))?;
                out.line(&format!("{dir}/statistics/rx_missed_errors"), 0)?;
                out.line(&format!("{dir}/statistics/rx_crc_errors"), 0)?;
            }
            if let Some(node) = node {
                out.dir(&format!("{dir}/device"))?;
                out.line(&format!("{dir}/device/numa_node"), node)?;
                out.symlink(
                    &format!("{dir}/device/driver"),
                    &format!("../../../../bus/pci/drivers/{driver}"),
                )?;
            }
        }
        Ok(())
    }
}

/// Legacy IRQs: (irq, chip + hwirq-handler, action, count on CPU 0).
const LEGACY: [(u32, &str, &str, u64); 3] = [
    (0, "IR-IO-APIC    2-edge     ", "timer", 45),
    (8, "IR-IO-APIC    8-edge     ", "rtc0", 1),
    (9, "IR-IO-APIC    9-fasteoi  ", "acpi", 0),
];

/// Per-CPU arch interrupt rows: (key, per-second rate, description).
fn arch_rates(i: u64) -> [(&'static str, u64, &'static str); 5] {
    [
        ("NMI", 1, "Non-maskable interrupts"),
        ("LOC", 250, "Local timer interrupts"),
        ("RES", 10 + i % 5, "Rescheduling interrupts"),
        ("CAL", 50, "Function call interrupts"),
        ("TLB", 5, "TLB shootdowns"),
    ]
}

/// Per-second diskstats of disk `d`: the 17 fields after the name (in_flight is a gauge).
fn disk_rates(d: u64, nvme: bool) -> [u64; 17] {
    let r = 100 * (d % 5 + 1);
    let w = 50 * (d % 4 + 1);
    let (rt, wt) = (r * (d % 3 + 1) / 2, 2 * w);
    let (di, dt) = if nvme { (10, 10) } else { (0, 0) };
    let (fi, ft) = (20, 10);
    [
        r,
        r / 10,
        16 * r,
        rt,
        w,
        w / 5,
        64 * w,
        wt,
        d % 4,
        200 + 100 * (d % 7),
        rt + wt + dt + ft,
        di,
        0,
        2048 * di,
        dt,
        fi,
        ft,
    ]
}

fn disk_line(s: &mut String, major: u32, minor: u32, name: &str, r: &[u64; 17], a: u64) {
    put!(s, "{major:>4} {minor:>7} {name}");
    for (k, &v) in r.iter().enumerate() {
        let v = match k {
            8 => v,                                // in_flight: a gauge
            3 | 7 | 9 | 10 | 14 | 16 => c32(v, a), // 32-bit ms fields
            _ => v * a,
        };
        put!(s, " {v}");
    }
    s.push('\n');
}

/// `sda`, ..., `sdz`, `sdaa`, ...
pub(crate) fn sd_name(k: u32) -> String {
    let mut k = k as usize;
    let mut tail = Vec::new();
    loop {
        tail.push(b'a' + (k % 26) as u8);
        if k < 26 {
            break;
        }
        k = k / 26 - 1;
    }
    tail.reverse();
    format!("sd{}", String::from_utf8_lossy(&tail))
}

/// The kernel's SCSI disk numbers: 16 disks per major (8, 65..71, 128..135), 16 minors each.
pub(crate) fn sd_dev(k: u32) -> (u32, u32) {
    let group = k / 16;
    let major = match group {
        0 => 8,
        1..=7 => 64 + group,
        8..=15 => 120 + group,
        _ => return (259, 1_000_000 + k), // extended dev_t, as the kernel does past 256 disks
    };
    (major, (k % 16) * 16)
}

pub(super) fn nic_bus(j: u32) -> u32 {
    (0x18 + 0x20 * j) % 0x100
}
