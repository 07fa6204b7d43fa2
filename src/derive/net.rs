//! Softirq and network metrics: per-CPU %soft/%irq and softirq-type rates, softnet rates and
//! backlog, ksoftirqd CPU%, per-queue interrupt rates and placement, per-NIC packet/drop rates.
//!
//! Interrupt rates show where interrupts land (placement), not how much work each queue does:
//! NAPI polls many packets per interrupt. NET_RX counts handler runs, not packets.

use super::{cpu::times_delta, Interval, USER_HZ};
use crate::cpulist::CpuList;
use crate::sample::{IrqLine, NetDevice, Sample};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

#[derive(Debug, Clone, Default, Serialize)]
pub struct SoftirqCpuMetrics {
    pub cpu: u32,
    pub online: bool,
    pub soft_pct: Option<f64>,
    pub irq_pct: Option<f64>,
    /// Per softirq type (`HI`, `TIMER`, `NET_TX`, `NET_RX`, ...): handler runs per second. The
    /// names are shared by every CPU's map (as `IrqCpuMetrics::rates`).
    pub rates: BTreeMap<Arc<str>, Option<f64>>,
    pub softnet_processed_per_s: Option<f64>,
    pub softnet_dropped_per_s: Option<f64>,
    pub softnet_squeezed_per_s: Option<f64>,
    pub softnet_rps_per_s: Option<f64>,
    pub softnet_flow_limit_per_s: Option<f64>,
    pub backlog: Option<u64>,
    /// CPU% of the `ksoftirqd/N` thread: softirq work deferred out of interrupt context.
    pub ksoftirqd_pct: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct IrqQueueMetrics {
    pub irq: u32,
    pub name: Arc<str>,
    pub device: String,
    pub queue: Option<u32>,
    /// `rx`, `tx`, `txrx`, `comp` (completion queue) or `io` (NVMe).
    pub kind: String,
    pub per_s: Option<f64>,
    /// CPUs that took this IRQ during the interval.
    pub cpus: Vec<u32>,
    /// Shared with the sample's set (`CpuList::text`): no copy per sample.
    pub affinity: Option<Arc<str>>,
    pub effective_affinity: Option<Arc<str>>,
    pub node: Option<i32>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct NicMetrics {
    pub name: String,
    pub driver: Option<String>,
    pub numa_node: Option<i32>,
    pub rx_packets_per_s: Option<f64>,
    pub tx_packets_per_s: Option<f64>,
    pub rx_kb_per_s: Option<f64>,
    pub tx_kb_per_s: Option<f64>,
    pub rx_drop_per_s: Option<f64>,
    pub tx_drop_per_s: Option<f64>,
    pub rx_errs_per_s: Option<f64>,
    pub tx_errs_per_s: Option<f64>,
    pub rx_fifo_per_s: Option<f64>,
    pub rx_queues: usize,
    pub tx_queues: u32,
    /// `rps_cpus` of each rx queue (empty = RPS off).
    pub rps_cpus: Vec<Option<String>>,
    /// Speed, duplex, MTU, state, carrier changes, missed/CRC error rates (null: not read).
    pub link: Option<super::NicLinkMetrics>,
}

pub fn derive_softirq_cpus(
    iv: Interval,
    prev: Option<&Sample>,
    cur: &Sample,
) -> Vec<SoftirqCpuMetrics> {
    let mut ids: Vec<u32> = cur.cpu.cpus.iter().map(|c| c.id).collect();
    if let Some(s) = &cur.net.softirqs {
        ids.extend(&s.cpus);
    }
    ids.sort_unstable();
    ids.dedup();
    // Index everything by CPU id once: per-CPU lookups in these tables made derive quadratic
    // in the number of CPUs (57 ms of 100 at 4096 CPUs).
    let cols = |s: &Sample| -> HashMap<u32, usize> {
        s.net.softirqs.as_ref().map_or_else(HashMap::new, |t| {
            t.cpus.iter().enumerate().map(|(i, &c)| (c, i)).collect()
        })
    };
    let cur_cols = cols(cur);
    let prev_cols = prev.map(cols).unwrap_or_default();
    let prev_rows: HashMap<&str, &crate::sample::SoftirqRow> = prev
        .and_then(|p| p.net.softirqs.as_ref())
        .map(|t| t.rows.iter().map(|r| (r.name.as_str(), r)).collect())
        .unwrap_or_default();
    // Each row's name once, shared by every CPU's map.
    let names: Vec<Arc<str>> = cur.net.softirqs.as_ref().map_or_else(Vec::new, |t| {
        t.rows.iter().map(|r| Arc::from(r.name.as_str())).collect()
    });
    let cur_softnet = softnet_by_cpu(cur);
    let prev_softnet = prev.map(softnet_by_cpu).unwrap_or_default();
    let ksoft = |s: &Sample| -> HashMap<u32, (u32, u64)> {
        s.cpu
            .ksoftirqd
            .iter()
            .map(|k| (k.cpu, (k.pid, k.ticks)))
            .collect()
    };
    let since: HashMap<u32, &crate::sample::SampleTime> = cur
        .cpu
        .ksoftirqd
        .iter()
        .filter_map(|k| Some((k.cpu, k.since.as_ref()?)))
        .collect();
    let cur_ksoft = ksoft(cur);
    let prev_ksoft = prev.map(ksoft).unwrap_or_default();
    ids.into_iter()
        .map(|id| {
            let c = cur.cpu(id);
            let pc = prev.and_then(|p| p.cpu(id));
            let td = c
                .and_then(|c| c.times.as_ref())
                .and_then(|t| times_delta(pc.and_then(|p| p.times.as_ref()), t, iv.since_boot));
            let mut m = SoftirqCpuMetrics {
                cpu: id,
                online: c.is_some_and(|c| c.online),
                soft_pct: td.and_then(|t| t.pct(t.soft)),
                irq_pct: td.and_then(|t| t.pct(t.irq)),
                ..SoftirqCpuMetrics::default()
            };
            if let (Some(table), Some(&col)) = (&cur.net.softirqs, cur_cols.get(&id)) {
                let pcol = prev_cols.get(&id).copied();
                for (row, name) in table.rows.iter().zip(&names) {
                    let prev_count =
                        pcol.and_then(|i| prev_rows.get(row.name.as_str())?.counts.get(i).copied());
                    let rate = row
                        .counts
                        .get(col)
                        .and_then(|&c| iv.rate(iv.d32(prev_count, c)));
                    m.rates.insert(name.clone(), rate);
                }
            }
            if let Some(sn) = cur_softnet.get(&id) {
                let ps = prev_softnet.get(&id);
                m.softnet_processed_per_s = iv.rate(iv.d32(ps.map(|p| p.processed), sn.processed));
                m.softnet_dropped_per_s = iv.rate(iv.d32(ps.map(|p| p.dropped), sn.dropped));
                m.softnet_squeezed_per_s =
                    iv.rate(iv.d32(ps.map(|p| p.time_squeeze), sn.time_squeeze));
                m.softnet_rps_per_s = sn
                    .received_rps
                    .and_then(|c| iv.rate(iv.d32(ps.and_then(|p| p.received_rps), c)));
                m.softnet_flow_limit_per_s = sn
                    .flow_limit
                    .and_then(|c| iv.rate(iv.d32(ps.and_then(|p| p.flow_limit), c)));
                m.backlog = sn.backlog;
            }
            if let Some(&(pid, ticks)) = cur_ksoft.get(&id) {
                // Same thread only: a new pid means the CPU was re-onlined and the count restarted.
                let prev_ticks = prev_ksoft
                    .get(&id)
                    .filter(|(ppid, _)| *ppid == pid)
                    .map(|&(_, t)| t);
                // Read in turns: the growth since its last read is over that longer interval.
                let own = match since.get(&id) {
                    Some(at) if !iv.since_boot => Interval::of_times(Some(at), &cur.time),
                    _ => iv,
                };
                m.ksoftirqd_pct = own
                    .rate(iv.d64(prev_ticks, ticks))
                    .map(|r| r / USER_HZ * 100.0);
            }
            m
        })
        .collect()
}

fn softnet_by_cpu(s: &Sample) -> HashMap<u32, &crate::sample::SoftnetRow> {
    s.net.softnet.iter().map(|r| (r.cpu, r)).collect()
}

/// What an IRQ action name says about the queue behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueName {
    pub device: String,
    pub queue: Option<u32>,
    pub kind: &'static str,
}

/// Recognises the queue naming of common drivers: `eth0-TxRx-3`, `i40e-eth0-TxRx-3`,
/// `ens5-Tx-Rx-1`, `eth1-rx-0`, `mlx5_comp3@pci:0000:3b:00.0`, `virtio2-input.0`, `nvme0q4`,
/// `iwlwifi:queue_1`. Returns `None` for IRQs that are not per-queue.
pub fn parse_queue_name(name: &str) -> Option<QueueName> {
    // Shared handlers print "a, b": the first action names the queue.
    let name = name.split(", ").next()?.trim();
    let num = |s: &str| s.parse::<u32>().ok();
    if let Some((head, bus)) = name.split_once('@') {
        // mlx5_comp3@pci:0000:3b:00.0, mlx4-3@0000:...
        let q = head
            .rsplit(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(num)?;
        let drv = head.trim_end_matches(|c: char| c.is_ascii_digit());
        // Only completion vectors carry traffic; mlx5_async0, mlx5_pages_eq, mlx5_cmd_eq and
        // mlx4-async are the driver's control event queues.
        let kind = if drv.ends_with("comp") {
            "comp"
        } else if drv.ends_with('-') {
            "txrx"
        } else {
            return None;
        };
        let drv = drv.trim_end_matches('-').trim_end_matches("_comp");
        return Some(QueueName {
            device: format!("{drv}@{}", bus.trim_start_matches("pci:")),
            queue: Some(q),
            kind,
        });
    }
    if let Some(rest) = name.strip_prefix("nvme") {
        // nvme0q4 (io queue); nvme0q0 is the admin queue.
        let (ctrl, q) = rest.split_once('q')?;
        num(ctrl)?;
        return Some(QueueName {
            device: format!("nvme{ctrl}"),
            queue: Some(num(q)?),
            kind: "io",
        });
    }
    if let Some((dev, tail)) = name.split_once('-') {
        if dev.starts_with("virtio") {
            // virtio2-input.0 / virtio2-output.0
            let (dir, q) = tail.split_once('.')?;
            let kind = match dir {
                "input" => "rx",
                "output" => "tx",
                _ => return None,
            };
            return Some(QueueName {
                device: dev.to_string(),
                queue: Some(num(q)?),
                kind,
            });
        }
    }
    if let Some((dev, q)) = name.split_once(":queue_") {
        return Some(QueueName {
            device: dev.to_string(),
            queue: num(q),
            kind: "txrx",
        });
    }
    // <dev>-<Kind>-<n>, optionally prefixed by the driver (i40e-, ice-, iavf-...).
    let (head, q) = name.rsplit_once('-')?;
    let q = num(q)?;
    let kinds: [(&str, &'static str); 10] = [
        ("-TxRx", "txrx"),
        ("-Tx-Rx", "txrx"),
        ("-txrx", "txrx"),
        ("-rxtx", "txrx"),
        ("-combined", "txrx"),
        ("-fp", "txrx"),
        ("-rx", "rx"),
        ("-tx", "tx"),
        ("-Rx", "rx"),
        ("-Tx", "tx"),
    ];
    for (suffix, kind) in kinds {
        if let Some(dev) = head.strip_suffix(suffix) {
            let dev = match dev.split_once('-') {
                Some((drv, d)) if is_driver_prefix(drv) => d,
                _ => dev,
            };
            if dev.is_empty() {
                return None;
            }
            return Some(QueueName {
                device: dev.to_string(),
                queue: Some(q),
                kind,
            });
        }
    }
    None
}

fn is_driver_prefix(s: &str) -> bool {
    matches!(
        s,
        "i40e" | "ice" | "iavf" | "ixgbevf" | "igc" | "fm10k" | "qede" | "bnxt" | "hns3" | "idpf"
    )
}

pub fn derive_irq_queues(
    iv: Interval,
    prev: Option<&Sample>,
    cur: &Sample,
) -> Vec<IrqQueueMetrics> {
    let Some(irqs) = &cur.net.interrupts else {
        return Vec::new();
    };
    let (iv, prev_irqs, _) = super::irq::table_pair(iv, prev, irqs);
    irqs.irqs
        .iter()
        .filter_map(|line| {
            let q = parse_queue_name(&line.name)?;
            let p = prev_irqs.and_then(|pi| {
                pi.irqs
                    .binary_search_by_key(&line.irq, |l| l.irq)
                    .ok()
                    .map(|i| &pi.irqs[i])
                    .filter(|l| l.name == line.name)
            });
            let (total, cpus) = irq_delta(iv, p, line);
            Some(IrqQueueMetrics {
                irq: line.irq,
                name: line.name.clone(),
                device: q.device,
                queue: q.queue,
                kind: q.kind.to_string(),
                per_s: iv.rate(total),
                cpus,
                affinity: line.affinity.as_ref().map(CpuList::text),
                effective_affinity: line.effective_affinity.as_ref().map(CpuList::text),
                node: line.node,
            })
        })
        .collect()
}

/// Σ per-CPU growth (32-bit counters) and the CPUs that saw any.
fn irq_delta(iv: Interval, prev: Option<&IrqLine>, cur: &IrqLine) -> (Option<u64>, Vec<u32>) {
    if prev.is_none() && !iv.since_boot {
        return (None, Vec::new());
    }
    let mut total = 0u64;
    let mut cpus = Vec::new();
    for &(cpu, count) in &cur.counts {
        // Sparse storage: a CPU absent from prev had a zero count.
        let before = prev.map(|p| {
            p.counts
                .binary_search_by_key(&cpu, |&(c, _)| c)
                .map(|i| p.counts[i].1)
                .unwrap_or(0)
        });
        match super::irq::irq_delta(iv, before, count) {
            Some(0) => {}
            Some(d) => {
                total = total.saturating_add(d);
                cpus.push(cpu);
            }
            None => return (None, Vec::new()),
        }
    }
    (Some(total), cpus)
}

pub fn derive_nics(iv: Interval, prev: Option<&Sample>, cur: &Sample) -> Vec<NicMetrics> {
    // By name through an index: container hosts and VPN concentrators have tens of thousands
    // of interfaces, and a search per interface is quadratic (50k: ~25 s per sample).
    let before: HashMap<&str, &NetDevice> = prev
        .map(|p| p.net.devices.iter().map(|x| (x.name.as_str(), x)).collect())
        .unwrap_or_default();
    cur.net
        .devices
        .iter()
        .map(|d| {
            let p = before.get(d.name.as_str()).copied();
            let r = |f: fn(&NetDevice) -> u64| iv.rate(iv.d64(p.map(f), f(d)));
            NicMetrics {
                name: d.name.clone(),
                driver: d.driver.clone(),
                numa_node: d.numa_node.filter(|n| *n >= 0),
                rx_packets_per_s: r(|x| x.rx_packets),
                tx_packets_per_s: r(|x| x.tx_packets),
                rx_kb_per_s: r(|x| x.rx_bytes).map(|v| v / 1024.0),
                tx_kb_per_s: r(|x| x.tx_bytes).map(|v| v / 1024.0),
                rx_drop_per_s: r(|x| x.rx_drop),
                tx_drop_per_s: r(|x| x.tx_drop),
                rx_errs_per_s: r(|x| x.rx_errs),
                tx_errs_per_s: r(|x| x.tx_errs),
                rx_fifo_per_s: r(|x| x.rx_fifo),
                rx_queues: d.rx_queues.len(),
                tx_queues: d.tx_queues,
                rps_cpus: d
                    .rx_queues
                    .iter()
                    .map(|m| m.as_ref().map(|l| l.to_string()))
                    .collect(),
                link: d
                    .link
                    .as_ref()
                    .map(|l| super::tcp::derive_link(iv, p.and_then(|p| p.link.as_ref()), l)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(name: &str) -> Option<(String, Option<u32>, &'static str)> {
        parse_queue_name(name).map(|q| (q.device, q.queue, q.kind))
    }

    #[test]
    fn queue_names_of_common_drivers() {
        assert_eq!(q("eth0-TxRx-3"), Some(("eth0".into(), Some(3), "txrx")));
        assert_eq!(
            q("i40e-eth0-TxRx-3"),
            Some(("eth0".into(), Some(3), "txrx"))
        );
        assert_eq!(q("ens5-Tx-Rx-1"), Some(("ens5".into(), Some(1), "txrx")));
        assert_eq!(
            q("eth1-rx-0, eth1-tx-0"),
            Some(("eth1".into(), Some(0), "rx"))
        );
        assert_eq!(
            q("mlx5_comp3@pci:0000:3b:00.0"),
            Some(("mlx5@0000:3b:00.0".into(), Some(3), "comp"))
        );
        assert_eq!(
            q("virtio2-input.0"),
            Some(("virtio2".into(), Some(0), "rx"))
        );
        assert_eq!(
            q("virtio2-output.1"),
            Some(("virtio2".into(), Some(1), "tx"))
        );
        assert_eq!(q("nvme0q4"), Some(("nvme0".into(), Some(4), "io")));
        assert_eq!(
            q("enp59s0f0np0-TxRx-12"),
            Some(("enp59s0f0np0".into(), Some(12), "txrx"))
        );
        assert_eq!(
            q("mlx4-3@0000:04:00.0"),
            Some(("mlx4@0000:04:00.0".into(), Some(3), "txrx"))
        );
        assert_eq!(q("mlx5_async0@pci:0000:3b:00.0"), None);
        assert_eq!(q("mlx5_pages_eq@pci:0000:3b:00.0"), None);
        assert_eq!(q("mlx4-async@pci:0000:04:00.0"), None);
        assert_eq!(q("ACPI:Ged"), None);
        assert_eq!(q("virtio0-config"), None);
        assert_eq!(q("ttyS0"), None);
        assert_eq!(q("arch_timer"), None);
        assert_eq!(q(""), None);
    }
}
