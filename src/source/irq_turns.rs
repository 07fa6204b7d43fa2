//! `/proc/interrupts` in turns on a quiet host. The kernel walks every IRQ number it could
//! have (`nr_irqs`: 424 on this project's 2-vCPU VM for 20 lines) and prints a count per CPU
//! for each line: the dearest file of a quiet sample, ~70 µs a read of the ~0.9 ms a sample
//! cost there after a quarter second's sleep (`cargo bench --bench sample -- files`). While
//! the host takes fewer than `QUIET_PER_CPU_S` interrupts a second per CPU (from
//! `/proc/stat`'s `intr`, read every sample), the table is read every `EVERY` samples; its
//! counts are cumulative, so its rates are exact over the interval between its own two reads
//! (`IrqTurn`), and every sample shows the latest. A busy
//! host, a perftop tweak, or a change in the CPUs online reads it every sample. So does a host
//! whose last two tables show one CPU at `HOT_CPU_PER_S` or more: `intr` is a host-wide sum,
//! and one CPU in an IPI storm (29k/s on the lent 16-CPU host) is under a thousand a second
//! per CPU once it is shared out over 32 CPUs or more.

use super::carry::Carry;
use crate::sample::{Interrupts, SampleTime};

/// Interrupts per second per CPU below which a host is quiet. A quiet VM takes ~50 (timer
/// ticks); a NIC or NVMe queue at work takes thousands, an IPI storm tens of thousands.
pub const QUIET_PER_CPU_S: f64 = 1000.0;
/// Interrupts per second on one CPU (every line and per-CPU row of the table) from which the
/// table is read every sample whatever the host-wide rate: a busy CPU's local timer is at most
/// HZ (1,000), a CPU under a storm takes tens of thousands (`ipi.storm` fires at 20,000).
pub const HOT_CPU_PER_S: f64 = 5000.0;
/// A quiet host's table is read every this many samples.
pub const EVERY: u32 = 4;

/// The table's reads so far, kept by the reader between samples.
#[derive(Debug, Default)]
pub struct IrqTurns {
    /// The table's last two reads.
    carry: Carry<Interrupts>,
    /// An IRQ's affinity moved at the last read: its effective affinity follows when it next
    /// fires, so the next sample reads the table (and the placement) again.
    again: bool,
    /// `/proc/stat`'s `intr` and the CPUs it counted, at the previous sample, and its time.
    intr: Option<(SampleTime, u64, usize)>,
    /// The last table read: its time, its CPU ids and each one's count over all its lines and
    /// rows (`per_cpu_counts`).
    per_cpu: Option<(SampleTime, Vec<u32>, Vec<u64>)>,
    /// The last two tables read showed a CPU at `HOT_CPU_PER_S` or more.
    hot: bool,
}

/// What this sample knows of the host's interrupts when it decides.
pub struct Now<'a> {
    pub sample_no: u64,
    pub time: &'a SampleTime,
    /// `/proc/stat`'s `intr` total and the CPUs listed there.
    pub intr: Option<u64>,
    pub cpus: usize,
    /// A perftop write since the last sample (an `irq.N` tweak shows its effect at once).
    pub tweaked: bool,
}

impl IrqTurns {
    /// True when this sample reads the table: fewer than two reads yet, the host not quiet (or
    /// its rate unknown), a tweak, a change in the CPUs counted, or `EVERY` samples since the
    /// last read. Keeps this sample's `intr` for the next sample's decision.
    pub fn due(&mut self, now: &Now) -> bool {
        let rate = match (&self.intr, now.intr) {
            (Some((at, was, cpus)), Some(is)) if *cpus == now.cpus && now.cpus > 0 => now
                .time
                .secs_since(at)
                .filter(|&s| s > 0.0)
                .map(|s| is.saturating_sub(*was) as f64 / s / now.cpus as f64),
            _ => None,
        };
        self.intr = now.intr.map(|i| (now.time.clone(), i, now.cpus));
        let quiet = rate.is_some_and(|r| r < QUIET_PER_CPU_S) && !self.hot;
        let due = self.carry.due(now.sample_no, EVERY, quiet && !now.tweaked);
        std::mem::take(&mut self.again) || due
    }

    /// Makes the next sample read the table (an IRQ's affinity just moved).
    pub fn read_next(&mut self) {
        self.again = true;
    }

    /// The table of a sample that read `read` (`None`: unreadable), with its `turn` set when
    /// its rates do not run from the previous sample's table.
    pub fn read(&mut self, now: &Now, read: Option<Interrupts>) -> Option<Interrupts> {
        let sums = read.as_ref().map(|t| (t.cpus.clone(), per_cpu_counts(t)));
        self.hot = match (self.per_cpu.take(), &sums) {
            // The same CPUs in the same columns (hotplug reads every sample anyway).
            (Some((at, ids, was)), Some((now_ids, is))) if ids == *now_ids => {
                now.time
                    .secs_since(&at)
                    .filter(|&s| s > 0.0)
                    .is_some_and(|s| {
                        // A wrapped 32-bit count reads as a fall, never as hot.
                        let grew = was.iter().zip(is).map(|(w, i)| i.saturating_sub(*w));
                        grew.max().is_some_and(|d| d as f64 / s >= HOT_CPU_PER_S)
                    })
            }
            _ => false,
        };
        self.per_cpu = sums.map(|(ids, s)| (now.time.clone(), ids, s));
        self.carry.read(now.sample_no, now.time, read)
    }

    /// The table of a sample that did not read it: the last read, with its turn.
    pub fn carried(&self) -> Option<Interrupts> {
        self.carry.carried()
    }
}

/// Each CPU's count over every IRQ line and per-CPU row of `table`, in the header's order
/// (`Interrupts::cpus`). Indexed by position, not by id: a garbled id cannot size the vector.
fn per_cpu_counts(table: &Interrupts) -> Vec<u64> {
    let at: foldhash::HashMap<u32, usize> = table
        .cpus
        .iter()
        .enumerate()
        .map(|(i, &c)| (c, i))
        .collect();
    let mut sums = vec![0u64; table.cpus.len()];
    for row in table.arch_rows.iter() {
        for (sum, &n) in sums.iter_mut().zip(&row.counts) {
            *sum = sum.saturating_add(n);
        }
    }
    for line in table.irqs.iter() {
        for &(cpu, n) in &line.counts {
            if let Some(sum) = at.get(&cpu).and_then(|&i| sums.get_mut(i)) {
                *sum = sum.saturating_add(n);
            }
        }
    }
    sums
}
