//! A table read in turns (`/proc/interrupts` on a quiet host; the TCP counters on a quiet host
//! and the cgroups on any, sampled faster than once a second): its last read and the read
//! before it, kept by the reader, and the table a sample that does not read it carries (the
//! last read, with its `Turn`). Its counters are cumulative, so its rates over its own two
//! reads are exact.

use crate::sample::{Cgroups, Interrupts, SampleTime, TcpSample, Turn};

/// A table that says when it was read (`Turn`) when its rates do not run from the previous
/// sample's table.
pub trait Turned: Clone {
    fn set_turn(&mut self, turn: Option<Box<Turn<Self>>>);
}

impl Turned for Interrupts {
    fn set_turn(&mut self, turn: Option<Box<Turn<Self>>>) {
        self.turn = turn;
    }
}

impl Turned for Cgroups {
    fn set_turn(&mut self, turn: Option<Box<Turn<Self>>>) {
        self.turn = turn;
    }
}

impl Turned for TcpSample {
    fn set_turn(&mut self, turn: Option<Box<Turn<Self>>>) {
        self.turn = turn;
    }
}

/// A table's reads so far, kept by the reader between samples.
#[derive(Debug)]
pub struct Carry<T> {
    /// The last read: its sample number, its time and the table (without a turn).
    last: Option<(u64, SampleTime, T)>,
    /// The read before it: its time and table.
    before: Option<(SampleTime, T)>,
    /// This sample's table is kept for the next ones (`due` said turns are on): when every
    /// sample reads the table (1 s apart and slower) no copy is made.
    keep: bool,
}

impl<T> Default for Carry<T> {
    fn default() -> Carry<T> {
        Carry {
            last: None,
            before: None,
            keep: false,
        }
    }
}

impl<T: Turned> Carry<T> {
    /// True when sample `sample_no` reads the table: fewer than two reads yet (two make a
    /// rate), the host not `quiet`, or `every` samples since the last read.
    pub fn due(&mut self, sample_no: u64, every: u32, quiet: bool) -> bool {
        self.keep = every > 1;
        match (&self.last, &self.before) {
            (Some((n, ..)), Some(_)) if quiet => sample_no >= n + u64::from(every.max(1)),
            _ => true,
        }
    }

    /// The table of sample `sample_no` at `time`, which read `read` (`None`: unreadable, and
    /// nothing to measure the next read from), with its turn set when its rates do not run
    /// from the previous sample's table.
    pub fn read(&mut self, sample_no: u64, time: &SampleTime, read: Option<T>) -> Option<T> {
        let Some(mut table) = read else {
            *self = Carry::default();
            return None;
        };
        // No read before (the first sample, or after the table could not be read): the
        // previous sample has no other table, so the plain pair is right.
        let consecutive = self.last.as_ref().is_none_or(|(n, ..)| n + 1 == sample_no);
        let before = self.last.take().map(|(_, at, t)| (at, t));
        if !self.keep {
            // Every sample reads it: nothing to carry, no copy. A read after reads in turns
            // still runs from the last of them.
            self.before = None;
            if !consecutive {
                table.set_turn(Some(Box::new(Turn {
                    at: time.clone(),
                    before,
                })));
            }
            return Some(table);
        }
        self.before = before;
        self.last = Some((sample_no, time.clone(), table.clone()));
        if !consecutive {
            table.set_turn(self.turn());
        }
        Some(table)
    }

    /// The table of a sample that did not read it: the last read, with its turn.
    pub fn carried(&self) -> Option<T> {
        let mut table = self.last.as_ref()?.2.clone();
        table.set_turn(self.turn());
        Some(table)
    }

    /// The last read's time and the read before it.
    fn turn(&self) -> Option<Box<Turn<T>>> {
        let (_, at, _) = self.last.as_ref()?;
        Some(Box::new(Turn {
            at: at.clone(),
            before: self.before.clone(),
        }))
    }
}
