//! `/proc/interrupts`: the header's CPU ids, every IRQ line (per-CPU counts, chip, action
//! names) and the per-type rows (`LOC`, `CAL`, `TLB`... on x86, `IPI0`..`IPIn` on arm64) with
//! their per-CPU counts; parsed from the read buffer, in chunks on the reader threads when large.

use super::net::header_cpus;
use super::parse::dec;
use super::Probe;
use crate::sample::{ArchRow, Interrupts, IrqLine};
use std::sync::Arc;

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
    let (mut lines, mut totals, mut rows) = (Vec::new(), Vec::new(), Vec::new());
    for (irqs, arch, b) in parts {
        lines.extend(irqs);
        totals.extend(arch.totals);
        rows.extend(arch.rows);
        bad += b;
    }
    if bad > 0 {
        probe.note("proc/interrupts", format!("{bad} garbled line(s) skipped"));
    }
    // Each IRQ costs a few `proc/irq/N` reads per sample.
    if lines.len() > super::MAX_IRQ_LINES as usize {
        let msg = format!(
            "{} IRQ lines; only the first {} read",
            lines.len(),
            super::MAX_IRQ_LINES
        );
        probe.note("proc/interrupts", msg);
        lines.truncate(super::MAX_IRQ_LINES as usize);
    }
    // Derive pairs IRQs across samples by binary search; the kernel lists them in order, a
    // damaged or hand-made file may not.
    if !lines.is_sorted_by_key(|l| l.irq) {
        lines.sort_by_key(|l| l.irq);
    }
    out.irqs = lines.into();
    out.arch_totals = totals.into();
    out.arch_rows = rows.into();
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

/// The per-type rows of a piece of `/proc/interrupts`.
#[derive(Debug, Default, PartialEq)]
struct ArchPart {
    /// Every row as a total over CPUs (`ERR` and `MIS` have only that).
    totals: Vec<(String, u64)>,
    /// The rows with one count per CPU column.
    rows: Vec<ArchRow>,
}

/// IRQ lines, arch rows (`LOC`, `ERR`, ...) and the number of garbled lines in `text`
/// (lines after the header).
fn parse_irq_lines(cpus: &[u32], text: &str) -> (Vec<IrqLine>, ArchPart, usize) {
    let mut irqs = Vec::new();
    let mut arch = ArchPart::default();
    let mut bad = 0usize;
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim();
        let b = rest.as_bytes();
        let is_irq = dec(key).is_some();
        let mut counts = Vec::new();
        // Per-type rows keep every column (zeros too): they are few, and dense per CPU.
        let mut dense = Vec::new();
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
            if !is_irq {
                dense.push(v);
            }
            seen += 1;
        };
        // A device IRQ line has one count per CPU column; ERR/MIS rows have a single one.
        if is_irq && seen < cpus.len() {
            bad += 1;
            continue;
        }
        let Some(irq) = dec(key).and_then(|v| u32::try_from(v).ok()) else {
            arch.totals.push((key.to_string(), total));
            // `ERR`/`MIS` (x86), `Err` (arm64) are one system-wide count even on one CPU.
            let global = key.eq_ignore_ascii_case("err") || key.eq_ignore_ascii_case("mis");
            if !is_irq && !global && seen == cpus.len() && !cpus.is_empty() {
                arch.rows.push(ArchRow {
                    name: key.to_string(),
                    desc: rest[tail..].trim().to_string(),
                    counts: dense,
                });
            }
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
            .map(|&(s, _)| Arc::from(desc[s..].trim()))
            .unwrap_or_default();
        irqs.push(IrqLine {
            irq,
            name,
            chip: chip.into(),
            counts,
            ..IrqLine::default()
        });
    }
    (irqs, arch, bad)
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
        let names: Vec<&str> = irqs.irqs.iter().map(|i| &*i.name).collect();
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
            *irqs.arch_totals,
            vec![("LOC".to_string(), 29579), ("ERR".to_string(), 0)]
        );
        // Per CPU, in the header's order; ERR has one system-wide count, so no row.
        assert_eq!(
            *irqs.arch_rows,
            vec![ArchRow {
                name: "LOC".into(),
                desc: "Local timer interrupts".into(),
                counts: vec![15075, 14504],
            }]
        );
        assert!(p.problems.is_empty(), "{:?}", p.problems);
    }

    #[test]
    fn arm64_ipi_rows_and_one_cpu_err() {
        // arm64 (6.x) names its IPIs IPI0..IPI6; on one CPU `Err` still is no per-CPU row.
        let text = "           CPU0       CPU1
 11:      34227      31019     GICv3  27 Level     arch_timer
IPI0:       1803       2005       Rescheduling interrupts
IPI1:        361        422       Function call interrupts
IPI2:          0          0       CPU stop interrupts
Err:          0
";
        let mut p = probe();
        let irqs = parse_interrupts(&mut p, text);
        let rows: Vec<(&str, &str, &[u64])> = irqs
            .arch_rows
            .iter()
            .map(|r| (r.name.as_str(), r.desc.as_str(), r.counts.as_slice()))
            .collect();
        assert_eq!(
            rows,
            vec![
                ("IPI0", "Rescheduling interrupts", &[1803, 2005][..]),
                ("IPI1", "Function call interrupts", &[361, 422][..]),
                ("IPI2", "CPU stop interrupts", &[0, 0][..]),
            ]
        );
        assert_eq!(&*irqs.irqs[0].name, "arch_timer");
        let one = parse_interrupts(
            &mut p,
            "   CPU0\n ERR:  3\n MIS:  0\n LOC:  9  Local timer interrupts\n",
        );
        assert_eq!(one.arch_rows.len(), 1);
        assert_eq!(one.arch_rows[0].counts, vec![9]);
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
        assert_eq!(*whole.irqs, irqs);
        assert_eq!(*whole.arch_totals, arch.totals);
        assert_eq!(*whole.arch_rows, arch.rows);
        assert_eq!(whole.arch_rows[0].counts, vec![5, 6]);
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
}
