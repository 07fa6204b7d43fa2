//! Episodes: runs of intervals in which a family of findings holds, built in one pass over the
//! walk. A gap of up to [`GAP`] intervals without the family does not end a run (a finding that
//! flickers around its threshold is one episode, not ten).

use super::families::{family_of, FAMILIES};
use super::metrics::{self, METRICS};
use crate::assess::Assessed;
use crate::findings::Severity;
use std::collections::BTreeMap;

/// Intervals without the family that an episode survives.
pub const GAP: usize = 2;

/// Culprits kept per episode.
const CULPRITS: usize = 5;

/// One named process over an episode: in how many intervals a finding named it and its largest
/// number there.
#[derive(Debug, Clone, PartialEq)]
pub struct CulpritSum {
    pub comm: String,
    pub pid: u32,
    pub cgroup: Option<String>,
    pub metric: String,
    pub max: f64,
    /// The most processes it held in one interval (a command's or a cgroup's members; 1 for
    /// one process, 0 for short-lived tasks).
    pub tasks: u32,
    pub intervals: u64,
    /// The rule that named it.
    pub finding: String,
}

/// What one rule said during an episode: its worst severity, and its message and tweak at the
/// interval where its key metric was highest, the last of equal highs as the peak is (the last
/// interval where it has none).
#[derive(Debug, Clone)]
pub struct RuleSum {
    pub severity: Severity,
    pub message: String,
    pub tweak: Option<String>,
    best: f64,
}

/// An episode as built: rows are indices into the report's rows (or, live, a count of the
/// intervals judged), with their wall clock times.
#[derive(Debug, Clone)]
pub struct Built {
    pub family: usize,
    pub first_row: usize,
    pub last_row: usize,
    /// The start and end (ms) of its first interval, and the end of its last.
    pub start_ms: i64,
    pub first_ms: i64,
    pub end_ms: i64,
    /// The rules that held, in the order they first did.
    pub ids: Vec<String>,
    pub rules: BTreeMap<String, RuleSum>,
    pub culprits: Vec<CulpritSum>,
}

impl Built {
    /// The worst severity any of its rules reached.
    pub fn severity(&self) -> Severity {
        self.rules
            .values()
            .map(|r| r.severity)
            .max()
            .unwrap_or(Severity::Info)
    }
}

#[derive(Debug, Clone)]
pub struct Builder {
    open: Vec<Option<(Built, usize)>>,
    pub done: Vec<Built>,
}

impl Default for Builder {
    fn default() -> Builder {
        Builder::new()
    }
}

impl Builder {
    pub fn new() -> Builder {
        Builder {
            open: vec![None; FAMILIES.len()],
            done: Vec::new(),
        }
    }

    /// Adds interval `row`, which ran from `start_ms` to `end_ms`; returns the bit mask of
    /// families that held in it.
    pub fn add(&mut self, row: usize, (start_ms, end_ms): (i64, i64), a: &Assessed) -> u32 {
        let mut held = 0u32;
        for f in &a.findings {
            let fam = family_of(&f.id);
            held |= 1 << fam;
            let slot = &mut self.open[fam];
            let (ep, _) = slot.get_or_insert_with(|| {
                (
                    Built {
                        family: fam,
                        first_row: row,
                        last_row: row,
                        start_ms,
                        first_ms: end_ms,
                        end_ms,
                        ids: Vec::new(),
                        rules: BTreeMap::new(),
                        culprits: Vec::new(),
                    },
                    0,
                )
            });
            ep.last_row = row;
            ep.end_ms = end_ms;
            if !ep.ids.contains(&f.id) {
                ep.ids.push(f.id.clone());
            }
            let key = FAMILIES[fam]
                .rules
                .iter()
                .find(|(r, _)| *r == f.id)
                .and_then(|(_, m)| *m)
                .and_then(metrics::index)
                .and_then(|i| METRICS[i].read(a))
                .unwrap_or(f64::NEG_INFINITY);
            let sum = ep.rules.entry(f.id.clone()).or_insert_with(|| RuleSum {
                severity: f.severity,
                message: f.message.clone(),
                tweak: f.tweak.clone(),
                best: key,
            });
            sum.severity = sum.severity.max(f.severity);
            // On a tie the later interval's message: the peak is the last of equal highs
            // (`max_by`), and the message must be the peak's ("1 task blocked in D for 1 s"
            // beside a peak at the second of two 1-task intervals and "up to 2 s" read wrong).
            if key >= sum.best {
                sum.best = key;
                sum.message.clone_from(&f.message);
                sum.tweak.clone_from(&f.tweak);
            }
            for c in &f.culprits {
                match ep
                    .culprits
                    .iter_mut()
                    .find(|s| s.comm == c.comm && s.metric == c.metric)
                {
                    Some(s) => {
                        s.intervals += 1;
                        s.max = s.max.max(c.value);
                        s.tasks = s.tasks.max(c.tasks);
                    }
                    None => ep.culprits.push(CulpritSum {
                        comm: c.comm.clone(),
                        pid: c.pid,
                        cgroup: c.cgroup.clone(),
                        metric: c.metric.clone(),
                        max: c.value,
                        tasks: c.tasks,
                        intervals: 1,
                        finding: f.id.clone(),
                    }),
                }
                // Bounded: a long episode with ever-new names keeps its most frequent ones.
                if ep.culprits.len() > 4 * CULPRITS {
                    ep.culprits.sort_by_key(|c| std::cmp::Reverse(c.intervals));
                    ep.culprits.truncate(2 * CULPRITS);
                }
            }
        }
        self.close(held);
        held
    }

    /// Adds an interval in which no finding held (not decoded: its digest says so); returns
    /// the families that held in it (none).
    pub fn quiet(&mut self) -> u32 {
        self.close(0);
        0
    }

    /// Counts an interval without each family not in `held`, and closes the episodes that have
    /// gone more than [`GAP`] intervals without theirs.
    fn close(&mut self, held: u32) {
        for (fam, slot) in self.open.iter_mut().enumerate() {
            if held & (1 << fam) != 0 {
                if let Some((_, miss)) = slot {
                    *miss = 0;
                }
                continue;
            }
            let close = match slot {
                Some((_, miss)) => {
                    *miss += 1;
                    *miss > GAP
                }
                None => false,
            };
            if close {
                if let Some((ep, _)) = slot.take() {
                    self.done.push(ep);
                }
            }
        }
    }

    /// The episodes closed so far and those still open, in no order.
    pub fn all(&self) -> impl Iterator<Item = &Built> {
        self.done
            .iter()
            .chain(self.open.iter().flatten().map(|(e, _)| e))
    }

    /// Forgets all but the newest `keep` closed episodes (they close in time order).
    pub fn keep_closed(&mut self, keep: usize) {
        let n = self.done.len().saturating_sub(keep);
        self.done.drain(..n);
    }

    /// Closes the episodes still open at the window's end; returns all, by start.
    pub fn finish(mut self) -> Vec<Built> {
        for slot in &mut self.open {
            if let Some((ep, _)) = slot.take() {
                self.done.push(ep);
            }
        }
        for ep in &mut self.done {
            ep.culprits
                .sort_by(|a, b| b.intervals.cmp(&a.intervals).then(b.max.total_cmp(&a.max)));
            ep.culprits.truncate(CULPRITS);
        }
        self.done
            .sort_by_key(|e| (e.first_row, e.family, e.last_row));
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Finding;
    use crate::pane::Pane;

    fn interval(ids: &[&str]) -> Assessed {
        Assessed {
            derived: crate::derive::derive(None, &crate::sample::Sample::default()),
            findings: ids
                .iter()
                .map(|id| Finding {
                    id: id.to_string(),
                    severity: Severity::Warn,
                    message: format!("{id} held"),
                    pane: Pane::Pressure,
                    tweak: None,
                    culprits: Vec::new(),
                    event: false,
                })
                .collect(),
        }
    }

    /// Which rows each episode spans, for a run of intervals (`true`: `memory.swapping` held).
    fn spans(held: &[bool]) -> Vec<(usize, usize)> {
        let mut b = Builder::new();
        for (row, h) in held.iter().enumerate() {
            let ids: &[&str] = if *h { &["memory.swapping"] } else { &[] };
            b.add(row, (row as i64, row as i64 + 1), &interval(ids));
        }
        b.finish()
            .iter()
            .map(|e| (e.first_row, e.last_row))
            .collect()
    }

    #[test]
    fn gaps_of_up_to_two_intervals_do_not_split_an_episode() {
        let (x, o) = (true, false);
        // One and two intervals without it: one episode.
        assert_eq!(spans(&[x, x, o, x, o, o, x, x]), vec![(0, 7)]);
        // Three: two episodes, each ending at its last interval held.
        assert_eq!(spans(&[x, x, o, o, o, x, o]), vec![(0, 1), (5, 5)]);
    }

    #[test]
    fn related_findings_make_one_episode_and_others_their_own() {
        let mut b = Builder::new();
        b.add(0, (0, 1), &interval(&["memory.pressure"]));
        b.add(1, (1, 2), &interval(&["memory.swapping", "io.pressure"]));
        let eps = b.finish();
        let names: Vec<(&str, Vec<String>)> = eps
            .iter()
            .map(|e| (FAMILIES[e.family].name, e.ids.clone()))
            .collect();
        assert_eq!(
            names,
            vec![
                (
                    "memory",
                    vec!["memory.pressure".to_string(), "memory.swapping".to_string()]
                ),
                ("io", vec!["io.pressure".to_string()]),
            ]
        );
    }
}
