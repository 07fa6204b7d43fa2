//! Softirq and network readers: `/proc/softirqs`, `/proc/net/softnet_stat`, `/proc/interrupts`
//! with per-IRQ affinity, `/proc/net/dev` and the per-NIC sysfs (NUMA node, driver, RPS masks).

use super::parse::dec;
use super::{Cached, Probe};
use crate::cpulist::CpuList;
use crate::sample::{Interrupts, IrqLine, NetDevice, NetSample, SoftirqRow, Softirqs, SoftnetRow};

/// What a reader keeps about one IRQ between samples.
#[derive(Debug, Default)]
pub(crate) struct IrqCache {
    /// `smp_affinity_list` as last read; `None` before the first read.
    affinity: Option<Option<String>>,
    effective: Option<Cached<String>>,
}

pub fn read_net(probe: &mut Probe, online: Option<&CpuList>) -> NetSample {
    NetSample {
        softirqs: probe
            .with_text("proc/softirqs", false, parse_softirqs)
            .flatten(),
        softnet: probe
            .with_text("proc/net/softnet_stat", false, |probe, t| {
                parse_softnet(probe, t, online)
            })
            .unwrap_or_default(),
        interrupts: probe
            .with_text("proc/interrupts", false, parse_interrupts)
            .map(|mut irqs| {
                for irq in &mut irqs.irqs {
                    let dir = format!("proc/irq/{}", irq.irq);
                    // Affinity is read every sample: perftop's irq.N tweak and irqbalance
                    // move it. The effective affinity follows it (or CPU hotplug, which
                    // drops this cache), so it is a setting read again when the affinity
                    // changes. The node is the device's and fixed.
                    let affinity = probe.line_in(&dir, "smp_affinity_list");
                    let mut c = probe.cache.irqs.remove(&irq.irq).unwrap_or_default();
                    let moved = c.affinity.as_ref().is_some_and(|a| *a != affinity);
                    if moved {
                        if let Some(e) = &mut c.effective {
                            e.expire();
                        }
                    }
                    irq.effective_affinity = probe
                        .setting_in(
                            &mut c.effective,
                            &dir,
                            "effective_affinity_list",
                            u64::from(irq.irq),
                            |l| Ok(l.to_string()),
                        )
                        .and_then(|l| CpuList::parse(&l));
                    if moved {
                        // x86 moves an IRQ when it next fires: look again next sample.
                        if let Some(e) = &mut c.effective {
                            e.due_next(probe.tier.sample_no);
                        }
                    }
                    irq.affinity = affinity.as_deref().and_then(CpuList::parse);
                    c.affinity = Some(affinity);
                    probe.cache.irqs.insert(irq.irq, c);
                    irq.node = probe
                        .static_i64(&format!("{dir}/node"))
                        .and_then(|v| i32::try_from(v).ok());
                }
                irqs
            }),
        devices: probe
            .with_text("proc/net/dev", false, read_devices)
            .unwrap_or_default(),
    }
}

/// CPU ids from a `CPU0 CPU1 ...` header line.
fn header_cpus(line: &str) -> Option<Vec<u32>> {
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

/// Byte spans of whitespace-separated tokens (the IRQ name is the raw tail of the line).
fn spans(line: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let b = line.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            return None;
        }
        let s = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        Some((s, i))
    })
}

/// Index of the first byte at or after `i` that is not ASCII whitespace (or `b.len()`).
/// Skips eight spaces at a time: the zero-padded count columns of `/proc/interrupts` are
/// mostly spaces.
fn skip_whitespace(b: &[u8], mut i: usize) -> usize {
    const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
    // One integer compare per eight bytes (a slice compare here becomes a memcmp call).
    while let Some(w) = b.get(i..i + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
        if u64::from_ne_bytes(w) != SPACES {
            break;
        }
        i += 8;
    }
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The decimal token starting at `*i` (which is not whitespace), as `dec` would parse it;
/// `*i` ends after it. `None` when the token is not a number (then `*i` is meaningless).
#[inline]
fn count_at(b: &[u8], i: &mut usize) -> Option<u64> {
    let start = *i;
    let mut v: u64 = 0;
    while let Some(&c) = b.get(*i) {
        if c.is_ascii_digit() {
            v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
        } else if c.is_ascii_whitespace() {
            break;
        } else {
            return None;
        }
        *i += 1;
    }
    // `dec` refuses more than 20 digits even when their value fits (leading zeros).
    (*i - start <= 20).then_some(v)
}

/// Flow handler words the kernel prints before the action names (`5-edge`, `Level`, ...).
fn is_handler_token(tok: &str) -> bool {
    let last = tok.rsplit('-').next().unwrap_or(tok);
    matches!(
        last.to_ascii_lowercase().as_str(),
        "edge" | "level" | "fasteoi" | "simple" | "percpu" | "percpu_devid" | "untyped" | "bad"
    )
}

/// Above this size `/proc/interrupts` is parsed in chunks of about this many bytes, on the
/// reader threads (a 4096-CPU host's file is 23 MB).
const IRQ_CHUNK_BYTES: usize = 1 << 20;
/// Chunks below which parsing stays on one thread.
const IRQ_PARALLEL_CHUNKS: usize = 4;

pub fn parse_interrupts(probe: &mut Probe, text: &str) -> Interrupts {
    let (header, body) = text.split_once('\n').unwrap_or((text, ""));
    let Some(cpus) = Some(header)
        .filter(|_| !text.is_empty())
        .and_then(header_cpus)
    else {
        probe.note("proc/interrupts", "no CPU header");
        return Interrupts::default();
    };
    let chunks = line_chunks(body, IRQ_CHUNK_BYTES);
    let parts = probe.par_map_from(chunks, IRQ_PARALLEL_CHUNKS, |_, chunk| {
        parse_irq_lines(&cpus, chunk)
    });
    let mut out = Interrupts {
        cpus,
        ..Interrupts::default()
    };
    let mut bad = 0usize;
    for (irqs, arch, b) in parts {
        out.irqs.extend(irqs);
        out.arch_totals.extend(arch);
        bad += b;
    }
    if bad > 0 {
        probe.note("proc/interrupts", format!("{bad} garbled line(s) skipped"));
    }
    // Each IRQ costs a few `proc/irq/N` reads per sample.
    if out.irqs.len() > super::MAX_IRQ_LINES as usize {
        let msg = format!(
            "{} IRQ lines; only the first {} read",
            out.irqs.len(),
            super::MAX_IRQ_LINES
        );
        probe.note("proc/interrupts", msg);
        out.irqs.truncate(super::MAX_IRQ_LINES as usize);
    }
    // Derive pairs IRQs across samples by binary search; the kernel lists them in order, a
    // damaged or hand-made file may not.
    if !out.irqs.is_sorted_by_key(|l| l.irq) {
        out.irqs.sort_by_key(|l| l.irq);
    }
    out
}

/// `text` cut after a newline about every `target` bytes (whole lines per piece).
fn line_chunks(text: &str, target: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        // A cut right after b'\n' is always a char boundary.
        let cut = rest
            .as_bytes()
            .get(target..)
            .and_then(|tail| tail.iter().position(|&b| b == b'\n'))
            .map_or(rest.len(), |i| target + i + 1);
        let (piece, tail) = rest.split_at(cut);
        out.push(piece);
        rest = tail;
    }
    out
}

/// IRQ lines, arch rows (`LOC`, `ERR`, ...) and the number of garbled lines in `text`
/// (lines after the header).
fn parse_irq_lines(cpus: &[u32], text: &str) -> (Vec<IrqLine>, Vec<(String, u64)>, usize) {
    let mut irqs = Vec::new();
    let mut arch = Vec::new();
    let mut bad = 0usize;
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim();
        let b = rest.as_bytes();
        let mut counts = Vec::new();
        let mut total = 0u64;
        let mut seen = 0;
        let mut i = 0;
        // One pass over the counts (a 4096-CPU host has ~2 million of them, mostly zeros
        // padded to 10 columns); `tail` is where the first token that is not a count starts.
        let tail = loop {
            i = skip_whitespace(b, i);
            let Some(&cpu) = cpus.get(seen).filter(|_| i < b.len()) else {
                break i.min(b.len());
            };
            let start = i;
            let Some(v) = count_at(b, &mut i) else {
                break start;
            };
            if v > 0 {
                counts.push((cpu, v));
                total = total.saturating_add(v);
            }
            seen += 1;
        };
        // A device IRQ line has one count per CPU column; ERR/MIS rows have a single one.
        if dec(key).is_some() && seen < cpus.len() {
            bad += 1;
            continue;
        }
        let Some(irq) = dec(key).and_then(|v| u32::try_from(v).ok()) else {
            arch.push((key.to_string(), total));
            continue;
        };
        let desc = &rest[tail..];
        let words: Vec<(usize, usize)> = spans(desc).collect();
        let chip = words
            .first()
            .map(|&(s, e)| desc[s..e].to_string())
            .unwrap_or_default();
        let name_start = words
            .iter()
            .position(|&(s, e)| is_handler_token(&desc[s..e]))
            .map(|i| i + 1)
            // No handler word: the kernel prints chip and hwirq, then the names.
            .unwrap_or(2.min(words.len().saturating_sub(1)));
        let name = words
            .get(name_start)
            .map(|&(s, _)| desc[s..].trim().to_string())
            .unwrap_or_default();
        irqs.push(IrqLine {
            irq,
            name,
            chip,
            counts,
            ..IrqLine::default()
        });
    }
    (irqs, arch, bad)
}

fn read_devices(probe: &mut Probe, text: &str) -> Vec<NetDevice> {
    let mut out = Vec::new();
    for line in text.lines().skip(2) {
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        let v: Option<Vec<u64>> = rest.split_ascii_whitespace().map(dec).collect();
        let v = match v {
            Some(v) if v.len() >= 16 => v,
            _ => {
                probe.note("proc/net/dev", format!("garbled line for {}", name.trim()));
                continue;
            }
        };
        let name = name.trim().to_string();
        let dir = format!("sys/class/net/{name}");
        let mut rx_queues = Vec::new();
        let mut tx_queues = 0;
        // Queue count (ethtool -L) and RPS masks are settings no tweak writes.
        for q in probe.setting_list_dir(&format!("{dir}/queues")) {
            if let Some(idx) = q.strip_prefix("rx-").and_then(dec) {
                let mask = probe
                    .setting_line(&format!("{dir}/queues/{q}/rps_cpus"))
                    .and_then(|m| CpuList::parse_mask(&m));
                let idx = idx as usize;
                if idx < 65536 {
                    if rx_queues.len() <= idx {
                        rx_queues.resize(idx + 1, None);
                    }
                    rx_queues[idx] = mask;
                }
            } else if q.starts_with("tx-") {
                tx_queues += 1;
            }
        }
        out.push(NetDevice {
            rx_bytes: v[0],
            rx_packets: v[1],
            rx_errs: v[2],
            rx_drop: v[3],
            rx_fifo: v[4],
            tx_bytes: v[8],
            tx_packets: v[9],
            tx_errs: v[10],
            tx_drop: v[11],
            numa_node: probe
                .static_line(&format!("{dir}/device/numa_node"))
                .and_then(|l| l.parse().ok()),
            driver: probe.setting_link_name(&format!("{dir}/device/driver")),
            rx_queues,
            tx_queues,
            name,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
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
    fn interrupt_names_and_arch_rows() {
        let text = "           CPU0       CPU2\n\
  24:          1          0  IO-APIC   5-edge      ACPI:Ged\n\
  38:          0       4141 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n\
  90:        100        200  IR-PCI-MSI 1048576-edge      i40e-eth0-TxRx-3\n\
  91:          5          0  GICv3  27 Level     arch_timer\n\
  92:          0          0  IR-PCI-MSI 524288-edge      mlx5_comp3@pci:0000:3b:00.0\n\
  93:          7          0  PCI-MSI 1-edge      eth1-rx-0, eth1-tx-0\n\
 LOC:      15075      14504   Local timer interrupts\n\
 ERR:          0\n\
  94:        1 2\n";
        let mut p = probe();
        let irqs = parse_interrupts(&mut p, text);
        assert_eq!(irqs.cpus, vec![0, 2]);
        let names: Vec<&str> = irqs.irqs.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "ACPI:Ged",
                "virtio2-input.0",
                "i40e-eth0-TxRx-3",
                "arch_timer",
                "mlx5_comp3@pci:0000:3b:00.0",
                "eth1-rx-0, eth1-tx-0",
                ""
            ]
        );
        assert_eq!(irqs.irqs[1].counts, vec![(2, 4141)]);
        assert_eq!(irqs.irqs[2].counts, vec![(0, 100), (2, 200)]);
        assert_eq!(
            irqs.arch_totals,
            vec![("LOC".to_string(), 29579), ("ERR".to_string(), 0)]
        );
        assert!(p.problems.is_empty(), "{:?}", p.problems);
    }

    #[test]
    fn interrupts_in_chunks_as_in_one_piece() {
        let mut text = String::from("   CPU0 CPU1\n");
        for n in 0..300 {
            text.push_str(&format!(
                " {n}: {} 0 PCI-MSI {n}-edge eth0-TxRx-{n}\n",
                n * 7
            ));
        }
        text.push_str(" LOC: 5 6 Local timer interrupts\n 7: 1\n");
        let chunks = line_chunks(&text, 100);
        assert!(chunks.len() > 100);
        assert_eq!(chunks.concat(), text);
        assert!(chunks.iter().all(|c| c.ends_with('\n')));
        let (mut p, mut q) = (probe(), probe());
        let whole = parse_interrupts(&mut p, &text);
        let (irqs, arch, bad) = parse_irq_lines(&[0, 1], text.split_once('\n').expect("header").1);
        assert_eq!(whole.irqs, irqs);
        assert_eq!(whole.arch_totals, arch);
        assert_eq!((whole.irqs.len(), bad), (300, 1));
        assert_eq!(p.problems.len(), 1);
        assert!(parse_interrupts(&mut q, "").cpus.is_empty());
        assert_eq!(q.problems[0].what, "no CPU header");
    }

    #[test]
    fn counts_parse_like_dec() {
        for tok in [
            "0",
            "7",
            "4294967295",
            "18446744073709551615",
            "000000000000000000001",
        ] {
            let b = format!("{tok} x");
            let mut i = 0;
            assert_eq!(count_at(b.as_bytes(), &mut i), dec(tok), "{tok}");
        }
        for tok in ["18446744073709551616", "1a", "-1"] {
            let mut i = 0;
            assert_eq!(count_at(tok.as_bytes(), &mut i), None, "{tok}");
        }
        let b = b"                 \t 9";
        assert_eq!(skip_whitespace(b, 0), b.len() - 1);
        assert_eq!(skip_whitespace(b"", 0), 0);
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
