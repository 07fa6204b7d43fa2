//! `/proc/interrupts` in turns on a quiet host. The kernel walks every IRQ number it could
//! have (`nr_irqs`: 424 on this project's 2-vCPU VM for 20 lines) and prints a count per CPU
//! for each line: the dearest file of a quiet sample, ~70 µs a read of the ~0.9 ms a sample
//! cost there after a quarter second's sleep (`cargo bench --bench sample -- files`). While
//! the host takes fewer than `QUIET_PER_CPU_S` interrupts a second per CPU (from
//! `/proc/stat`'s `intr`, read every sample), the table is read every `EVERY` samples; its counts are cumulative, so its rates are exact over the
//! interval between its own two reads (`IrqTurn`), and every sample shows the latest. A busy
//! host, a perftop tweak, or a change in the CPUs online reads it every sample.

use crate::sample::{Interrupts, IrqTurn, SampleTime};

/// Interrupts per second per CPU below which a host is quiet. A quiet VM takes ~50 (timer
/// ticks); a NIC or NVMe queue at work takes thousands, an IPI storm tens of thousands.
pub const QUIET_PER_CPU_S: f64 = 1000.0;
/// A quiet host's table is read every this many samples.
pub const EVERY: u32 = 4;

/// The table's reads so far, kept by the reader between samples.
#[derive(Debug, Default)]
pub struct IrqTurns {
    /// The last read: its sample number, its time and the table.
    last: Option<(u64, SampleTime, Interrupts)>,
    /// The read before it: its time and table.
    before: Option<(SampleTime, Interrupts)>,
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
        // Two reads make a rate: the second sample reads it too.
        match (&self.last, &self.before) {
            (Some((n, ..)), Some(_)) if quiet && !now.tweaked => {
                now.sample_no >= n + u64::from(EVERY)
            }
            _ => true,
        }
    }

    /// The table of a sample that read `read` (`None`: unreadable), with its `turn` set when
    /// its rates do not run from the previous sample's table.
    pub fn read(&mut self, now: &Now, read: Option<Interrupts>) -> Option<Interrupts> {
        let Some(mut table) = read else {
            // Unreadable now: nothing to measure the next read from.
            *self = IrqTurns {
                intr: self.intr.take(),
                ..IrqTurns::default()
            };
            return None;
        };
        // No read before (the first sample, or after the table could not be read): the
        // previous sample has no other table, so the plain pair is right.
        let consecutive = self
            .last
            .as_ref()
            .is_none_or(|(n, ..)| n + 1 == now.sample_no);
        self.before = self.last.take().map(|(_, at, t)| (at, t));
        self.last = Some((now.sample_no, now.time.clone(), table.clone()));
        if !consecutive {
            table.turn = self.turn();
        }
        Some(table)
    }

    /// The table of a sample that did not read it: the last read, with its turn.
    pub fn carried(&self) -> Option<Interrupts> {
        let mut table = self.last.as_ref()?.2.clone();
        table.turn = self.turn();
        Some(table)
    }

    /// The last read's time and the read before it (stored without turns: one read back is
    /// all a rate needs, never a chain of older tables).
    fn turn(&self) -> Option<Box<IrqTurn>> {
        let (_, at, _) = self.last.as_ref()?;
        Some(Box::new(IrqTurn {
            at: at.clone(),
            before: self.before.clone(),
        }))
    }
}
