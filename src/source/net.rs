//! Softirq and network readers: `/proc/softirqs`, `/proc/net/softnet_stat`, per-IRQ affinity of
//! the `/proc/interrupts` lines (parsed in `interrupts`), `/proc/net/dev` and the per-NIC sysfs
//! (NUMA node, driver, RPS masks).

use super::irq::parse_interrupts;
use super::irq_turns::{IrqTurns, Now};
use super::parse::dec;
use super::{Cached, Probe};
use crate::cpulist::CpuList;
use crate::sample::{
    Interrupts, NetDevice, NetSample, SampleTime, SoftirqRow, Softirqs, SoftnetRow,
};

/// What a reader keeps about one IRQ between samples.
#[derive(Debug, Default)]
pub(crate) struct IrqCache {
    /// `smp_affinity_list`: a setting, read again on the sample after a perftop tweak (its
    /// `irq.N` tweak writes it) and within `SETTINGS_REFRESH_SAMPLES` otherwise (irqbalance
    /// moves IRQs every 10 s).
    /// Kept parsed: a list is parsed when read, not every sample (unparsable is unknown).
    affinity: Option<Cached<Option<CpuList>>>,
    /// The affinity as the last sample saw it; `None` before the first read.
    last: Option<Option<CpuList>>,
    effective: Option<Cached<Option<CpuList>>>,
    /// `proc/irq/N` and the IRQ's NUMA node (fixed; dropped with the other static caches):
    /// built and read once, not every sample for every IRQ.
    dir: String,
    node: Option<Option<i32>>,
}

/// The interrupt counters, read apart from the rest of the pane: right after `/proc/stat` (see
/// `Reader::sample`).
#[derive(Debug, Default)]
pub struct IrqCounters {
    softirqs: Option<Softirqs>,
    interrupts: Option<Interrupts>,
}

/// `/proc/interrupts` on its turn (see `irq_turns`), else its last read; `/proc/softirqs`.
pub fn read_irq_counters(probe: &mut Probe, turns: &mut IrqTurns, now: &Now) -> IrqCounters {
    let fresh = turns
        .due(now)
        .then(|| probe.with_text("proc/interrupts", false, parse_interrupts));
    let softirqs = probe
        .with_text("proc/softirqs", false, parse_softirqs)
        .flatten();
    // Both counter files first, read together; then the placement files of a fresh table.
    let interrupts = match fresh {
        Some(read) => {
            let read = read.map(|mut table| {
                if fill_placement(probe, &mut table) {
                    turns.read_next();
                }
                table
            });
            turns.read(now, read)
        }
        None => turns.carried(),
    };
    IrqCounters {
        interrupts,
        softirqs,
    }
}

/// Each line's placement: its affinity (a setting perftop's `irq.N` tweak and irqbalance write:
/// read again after a tweak and within the settings tier), its effective affinity (read again
/// when the affinity changes, or on CPU hotplug, which drops this cache) and its node (fixed).
/// Filled when the table is read, so a table carried between its turns keeps the placement of
/// its read instead of being filled again. True when an affinity moved: its effective affinity
/// is read again on the next sample, which must then read the table.
fn fill_placement(probe: &mut Probe, irqs: &mut Interrupts) -> bool {
    let mut again = false;
    // A table just parsed: its lines are not shared yet, so this copies nothing.
    for irq in std::sync::Arc::make_mut(&mut irqs.irqs) {
        let mut c = probe.cache.irqs.remove(&irq.irq).unwrap_or_default();
        if c.dir.is_empty() {
            c.dir = format!("proc/irq/{}", irq.irq);
        }
        let dir = std::mem::take(&mut c.dir);
        if probe.tier.tweaked {
            if let Some(a) = &mut c.affinity {
                a.expire();
            }
        }
        let affinity = cpu_list_setting(probe, &mut c.affinity, &dir, "smp_affinity_list", irq.irq);
        let moved = c.last.as_ref().is_some_and(|a| *a != affinity);
        if moved {
            if let Some(e) = &mut c.effective {
                e.expire();
            }
        }
        irq.effective_affinity = cpu_list_setting(
            probe,
            &mut c.effective,
            &dir,
            "effective_affinity_list",
            irq.irq,
        );
        if moved {
            // x86 moves an IRQ when it next fires: look again next sample (which reads the
            // table then, in turns or not).
            again = true;
            if let Some(e) = &mut c.effective {
                e.due_next(probe.tier.sample_no);
            }
        }
        c.last = Some(affinity.clone());
        irq.affinity = affinity;
        // Kept once known; an absent or garbled node is asked again (and noted)
        // every sample, as before.
        irq.node = match c.node {
            Some(node) => node,
            None => {
                let node = probe
                    .static_i64(&format!("{dir}/node"))
                    .and_then(|v| i32::try_from(v).ok());
                c.node = node.is_some().then_some(node);
                node
            }
        };
        c.dir = dir;
        probe.cache.irqs.insert(irq.irq, c);
    }
    again
}

pub fn read_net(
    probe: &mut Probe,
    online: Option<&CpuList>,
    counters: IrqCounters,
    tcp: &mut super::tcp::TcpTurns,
    time: &SampleTime,
) -> NetSample {
    let mut net = NetSample {
        softirqs: counters.softirqs,
        softnet: probe
            .with_text("proc/net/softnet_stat", false, |probe, t| {
                parse_softnet(probe, t, online)
            })
            .unwrap_or_default(),
        interrupts: counters.interrupts,
        devices: probe
            .with_text("proc/net/dev", false, read_devices)
            .map(|devs| {
                devs.into_iter()
                    .map(|(mut d, frame)| {
                        let columns = super::nic::Columns {
                            drop: d.rx_drop,
                            frame,
                        };
                        let device = d.driver.is_some();
                        d.link = Some(super::nic::read_link(probe, &d.name, device, columns));
                        d
                    })
                    .collect()
            })
            .unwrap_or_default(),
        tcp: None,
    };
    net.tcp = super::tcp::read_tcp(probe, tcp, time, &net.devices);
    net
}

/// IRQ `irq`'s CPU list setting `dir/name`, kept parsed in `slot` (unparsable is unknown),
/// staggered by the IRQ number.
fn cpu_list_setting(
    probe: &mut Probe,
    slot: &mut Option<Cached<Option<CpuList>>>,
    dir: &str,
    name: &str,
    irq: u32,
) -> Option<CpuList> {
    probe
        .setting_in(slot, dir, name, u64::from(irq), |l| Ok(CpuList::parse(l)))
        .flatten()
}

/// CPU ids from a `CPU0 CPU1 ...` header line.
pub(super) fn header_cpus(line: &str) -> Option<Vec<u32>> {
    line.split_ascii_whitespace()
        .map(|t| dec(t.strip_prefix("CPU")?).and_then(|v| u32::try_from(v).ok()))
        .collect()
}

pub fn parse_softirqs(probe: &mut Probe, text: &str) -> Option<Softirqs> {
    let mut lines = text.lines();
    let Some(cpus) = lines.next().and_then(header_cpus) else {
        probe.note("proc/softirqs", "no CPU header");
        return None;
    };
    let mut rows = Vec::new();
    for line in lines {
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        let counts: Option<Vec<u64>> = rest.split_ascii_whitespace().map(dec).collect();
        match counts {
            Some(c) if c.len() == cpus.len() => rows.push(SoftirqRow {
                name: name.trim().to_string(),
                counts: c,
            }),
            _ => probe.note("proc/softirqs", format!("garbled {} row", name.trim())),
        }
    }
    Some(Softirqs { cpus, rows })
}

pub fn parse_softnet(probe: &mut Probe, text: &str, online: Option<&CpuList>) -> Vec<SoftnetRow> {
    let mut rows = Vec::new();
    let online_ids = online.map(|l| l.ids()).unwrap_or(&[]);
    for (n, line) in text.lines().enumerate() {
        let t: Option<Vec<u64>> = line
            .split_ascii_whitespace()
            .map(|w| u64::from_str_radix(w, 16).ok())
            .collect();
        let t = match t {
            Some(t) if t.len() >= 9 => t,
            _ => {
                probe.note("proc/net/softnet_stat", format!("garbled line {}", n + 1));
                continue;
            }
        };
        // Since 5.10 column 13 is the CPU id; before that lines are the online CPUs in order.
        let (cpu, from_file) = match t.get(12) {
            Some(&id) => (u32::try_from(id).unwrap_or(u32::MAX), true),
            None => (online_ids.get(n).copied().unwrap_or(n as u32), false),
        };
        rows.push(SoftnetRow {
            cpu,
            cpu_from_file: from_file,
            processed: t[0],
            dropped: t[1],
            time_squeeze: t[2],
            received_rps: t.get(9).copied(),
            flow_limit: t.get(10).copied(),
            backlog: if t.len() >= 13 {
                t.get(11).copied()
            } else {
                None
            },
        });
    }
    rows.sort_by_key(|r| r.cpu);
    rows
}

/// The devices of `/proc/net/dev`, each with its `frame` column (what `nic::read_link` needs
/// to tell whether `rx_crc_errors` moved).
fn read_devices(probe: &mut Probe, text: &str) -> Vec<(NetDevice, u64)> {
    let mut out = Vec::new();
    for line in text.lines().skip(2) {
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        // 16 columns (more on no kernel yet; extra ones are ignored), all numbers.
        let mut v = [0u64; 16];
        let mut n = 0usize;
        let numbers = rest.split_ascii_whitespace().all(|t| {
            let Some(x) = dec(t) else { return false };
            if let Some(slot) = v.get_mut(n) {
                *slot = x;
            }
            n += 1;
            true
        });
        let name = name.trim();
        if !numbers || n < 16 {
            probe.note("proc/net/dev", format!("garbled line for {name}"));
            continue;
        }
        let known = super::nic::device_settings(probe, name);
        let frame = v[5];
        let dev = NetDevice {
            rx_bytes: v[0],
            rx_packets: v[1],
            rx_errs: v[2],
            rx_drop: v[3],
            rx_fifo: v[4],
            tx_bytes: v[8],
            tx_packets: v[9],
            tx_errs: v[10],
            tx_drop: v[11],
            numa_node: known.numa_node,
            driver: known.driver,
            rx_queues: known.rx_queues,
            tx_queues: known.tx_queues,
            name: name.to_string(),
            link: None,
        };
        out.push((dev, frame));
    }
    out.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::root::Root;

    fn probe() -> Probe {
        Probe::new(Root::new("/nonexistent"))
    }

    #[test]
    fn softnet_widths() {
        let mut p = probe();
        let online = CpuList::parse("0,2").expect("list");
        // 10 columns (pre-3.x flow limit), ids by online position.
        let old = parse_softnet(
            &mut p,
            "0000000a 00000001 00000002 00000000 00000000 00000000 00000000 00000000 00000000 00000003\n\
             0000000b 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n",
            Some(&online),
        );
        assert_eq!(old.iter().map(|r| r.cpu).collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(
            (old[0].processed, old[0].received_rps, old[0].backlog),
            (10, Some(3), None)
        );
        // 15 columns (6.x): cpu id in column 13.
        let new = parse_softnet(
            &mut p,
            "00001335 00000002 00000003 00000000 00000000 00000000 00000000 00000000 00000000 00000004 00000005 00000006 00000007 00000000 00000000\n",
            None,
        );
        assert_eq!(new[0].cpu, 7);
        assert!(new[0].cpu_from_file);
        assert_eq!(
            (new[0].processed, new[0].backlog, new[0].flow_limit),
            (0x1335, Some(6), Some(5))
        );
        assert!(parse_softnet(&mut p, "zz 1\n", None).is_empty());
        assert_eq!(p.problems.len(), 1);
    }

    #[test]
    fn softirqs_header_ids() {
        let mut p = probe();
        let s = parse_softirqs(
            &mut p,
            "                    CPU0       CPU1       CPU3\n          HI:          0          0  1\n      NET_RX:  3122  4093 5\n  BAD: 1\n",
        )
        .expect("softirqs");
        assert_eq!(s.cpus, vec![0, 1, 3]);
        assert_eq!(s.rows.len(), 2);
        assert_eq!(s.rows[1].counts, vec![3122, 4093, 5]);
        assert_eq!(p.problems.len(), 1);
    }
}
