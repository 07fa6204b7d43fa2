//! `/proc/interrupts` in turns on a quiet host. The kernel walks every IRQ number it could
//! have (`nr_irqs`: 424 on this project's 2-vCPU VM for 20 lines) and prints a count per CPU
//! for each line: the dearest file of a quiet sample, ~70 µs a read of the ~0.9 ms a sample
//! cost there after a quarter second's sleep (`cargo bench --bench sample -- files`). While
//! the host takes fewer than `QUIET_PER_CPU_S` interrupts a second per CPU (from
//! `/proc/stat`'s `intr`, read every sample), the table is read every `EVERY` samples; its counts are cumulative, so its rates are exact over the
//! interval between its own two reads (`IrqTurn`), and every sample shows the latest. A busy
//! host, a perftop tweak, or a change in the CPUs online reads it every sample.

use super::carry::Carry;
use crate::sample::{Interrupts, SampleTime};

/// Interrupts per second per CPU below which a host is quiet. A quiet VM takes ~50 (timer
/// ticks); a NIC or NVMe queue at work takes thousands, an IPI storm tens of thousands.
pub const QUIET_PER_CPU_S: f64 = 1000.0;
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
            (Some((at, was, cpus)), Some(is)) if *cpus == now.cpus && now.cpus > 0 => {
                crate::derive::Interval::of_times(Some(at), now.time)
                    .secs
                    .filter(|&s| s > 0.0)
                    .map(|s| is.saturating_sub(*was) as f64 / s / now.cpus as f64)
            }
            _ => None,
        };
        self.intr = now.intr.map(|i| (now.time.clone(), i, now.cpus));
        let quiet = rate.is_some_and(|r| r < QUIET_PER_CPU_S);
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
        self.carry.read(now.sample_no, now.time, read)
    }

    /// The table of a sample that did not read it: the last read, with its turn.
    pub fn carried(&self) -> Option<Interrupts> {
        self.carry.carried()
    }
}
