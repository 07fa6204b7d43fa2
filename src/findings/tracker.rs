//! Findings over time for the live/replay strip: the baselines rules learn over a run (disk
//! awaits, IRQ line rates), the tracker that raises and clears findings, and the strip's text.

use super::irq::IrqBaselines;
use super::Finding;
use super::{disk_await, evaluate, Severity, Thresholds};
use crate::derive::Derived;
use crate::units::fit;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One device's usual await.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DiskBaseline {
    /// EWMA of the device's await (ms) over intervals with completions and no queue.
    pub await_ms: f64,
    pub samples: u32,
}

/// What rules learn over a run, in sample order: per-device await baselines for disk.saturated
/// (learned only from intervals where the device completed I/O and its queue was below
/// `disk_aqu_sz`, so an incident does not become the norm) and per-line rates for irq.storm
/// (`super::irq`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Baselines {
    /// Sorted by name. A vector of shared names, not a map of strings: the live view keeps a
    /// copy per sample in its ring (600 at the defaults), and a map's node and a string per
    /// device made each copy an allocation or more larger (the idle VM's heap at a full ring:
    /// 1,572 KB against 1,688 KB).
    devices: Vec<(Arc<str>, DiskBaseline)>,
    irqs: IrqBaselines,
}

impl Baselines {
    pub fn new() -> Self {
        Self::default()
    }

    /// A disk's await baseline.
    pub fn get(&self, device: &str) -> Option<&DiskBaseline> {
        self.devices
            .binary_search_by(|(n, _)| n.as_ref().cmp(device))
            .ok()
            .map(|i| &self.devices[i].1)
    }

    /// The IRQ lines' usual rates.
    pub fn irqs(&self) -> &IrqBaselines {
        &self.irqs
    }

    /// Folds one interval in. Devices and lines that disappeared are forgotten.
    pub fn update(&mut self, d: &Derived, t: &Thresholds) {
        if d.since_boot || d.interval_s.is_none() {
            return;
        }
        self.irqs.update(d, t);
        self.devices
            .retain(|(name, _)| d.disks.iter().any(|m| m.disk_device == **name));
        for m in d.disks.iter().filter(|m| !m.partition) {
            let (Some(aqu), Some((ios, wait))) = (m.aqu_sz, disk_await(m)) else {
                continue;
            };
            if ios <= 0.0 || aqu >= t.disk_aqu_sz {
                continue;
            }
            let name = m.disk_device.as_str();
            match self.devices.binary_search_by(|(n, _)| n.as_ref().cmp(name)) {
                Ok(i) => {
                    let b = &mut self.devices[i].1;
                    b.await_ms += t.disk_baseline_alpha * (wait - b.await_ms);
                    b.samples = b.samples.saturating_add(1);
                }
                Err(i) => self.devices.insert(
                    i,
                    (
                        Arc::from(name),
                        DiskBaseline {
                            await_ms: wait,
                            samples: 1,
                        },
                    ),
                ),
            }
        }
    }
}

/// A finding raised on the strip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActiveFinding {
    /// The latest evaluation: message and severity follow the current numbers.
    pub finding: Finding,
    /// Wall time (ms since the epoch) of the first sample of the run that raised it.
    pub since_ms: i64,
    /// Samples it has been holding (including the ones before it was raised).
    pub samples: u32,
    /// Raised, but the last sample(s) held not even at the relaxed thresholds: it is clearing.
    /// `finding.message` is then the last one that held, so its numbers are stale; the strip
    /// does not show them (a pane beside it would contradict them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clearing: Option<Clearing>,
}

/// A raised finding on its way out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Clearing {
    /// More samples below the relaxed thresholds before it clears (>= 1).
    pub left: u32,
    /// Wall time (ms) of the last sample it held in, which `finding.message` describes.
    pub last_held_ms: i64,
}

#[derive(Debug, Clone)]
struct Track {
    last: Finding,
    since_ms: i64,
    samples: u32,
    raised: bool,
    /// Consecutive samples a raised finding failed to hold even at the relaxed thresholds.
    misses: u32,
    /// Wall time (ms) of the last sample it held in.
    last_ms: i64,
}

/// Findings over time, for the live and replay strip.
///
/// Raising: a rule must hold (at the normal thresholds) for `raise_after` consecutive samples;
/// one sample that does not hold restarts the count. Clearing has two kinds of hysteresis: a
/// raised finding keeps holding while its values stay above `clear_factor` (90%) of the trigger
/// thresholds, and only clears after `clear_after` consecutive samples below even that. Since-boot
/// samples and samples without a valid interval (no rates) are skipped: neither counted nor
/// clearing. Baselines are updated after each
/// evaluation, so a sample is judged against the baseline of the samples before it.
#[derive(Debug, Clone)]
pub struct FindingTracker {
    thresholds: Thresholds,
    relaxed: Thresholds,
    baselines: Baselines,
    tracks: BTreeMap<String, Track>,
}

impl FindingTracker {
    pub fn new(thresholds: Thresholds) -> Self {
        FindingTracker {
            relaxed: thresholds.relaxed(thresholds.clear_factor),
            thresholds,
            baselines: Baselines::new(),
            tracks: BTreeMap::new(),
        }
    }

    pub fn thresholds(&self) -> &Thresholds {
        &self.thresholds
    }

    pub fn baselines(&self) -> &Baselines {
        &self.baselines
    }

    /// Forgets everything (a replay jump: the next samples are not consecutive with the last).
    pub fn reset(&mut self) {
        self.baselines = Baselines::new();
        self.tracks.clear();
    }

    /// Folds in one interval and returns the raised findings, most severe first.
    pub fn update(&mut self, d: &Derived) -> Vec<ActiveFinding> {
        if d.since_boot || d.interval_s.is_none() {
            return self.active();
        }
        let strict = evaluate(d, &self.thresholds, Some(&self.baselines));
        let relaxed = evaluate(d, &self.relaxed, Some(&self.baselines));
        self.baselines.update(d, &self.thresholds);
        let find = |list: &[Finding], id: &str| list.iter().find(|f| f.id == id).cloned();
        let (raise_after, clear_after) = (self.thresholds.raise_after, self.thresholds.clear_after);
        let now = d.host.wall_ms;
        let hold_ms = (self.thresholds.oom_kill_hold_s * 1000.0) as i64;
        self.tracks.retain(|id, tr| {
            let held = if tr.raised {
                find(&strict, id).or_else(|| find(&relaxed, id))
            } else {
                find(&strict, id)
            };
            match held {
                Some(f) => {
                    tr.last = f;
                    tr.samples = tr.samples.saturating_add(1);
                    tr.misses = 0;
                    tr.last_ms = now;
                    tr.raised |= tr.samples >= raise_after;
                    true
                }
                // Findings about an event (`Finding::event`: an OOM kill, a kernel message) are
                // raised at once and kept for `oom_kill_hold_s` after the last sample they held
                // in, so nobody misses one.
                None if tr.last.event => now.saturating_sub(tr.last_ms) < hold_ms,
                None if tr.raised => {
                    tr.misses += 1;
                    tr.misses < clear_after
                }
                None => false,
            }
        });
        for f in strict {
            self.tracks.entry(f.id.clone()).or_insert_with(|| Track {
                since_ms: d.host.wall_ms,
                samples: 1,
                raised: raise_after <= 1 || f.event,
                misses: 0,
                last_ms: d.host.wall_ms,
                last: f,
            });
        }
        self.active()
    }

    /// The raised findings, most severe first, then oldest first.
    pub fn active(&self) -> Vec<ActiveFinding> {
        let mut out: Vec<ActiveFinding> = self
            .tracks
            .values()
            .filter(|t| t.raised)
            .map(|t| ActiveFinding {
                finding: t.last.clone(),
                since_ms: t.since_ms,
                samples: t.samples,
                // Sticky findings name an event, not a level: nothing of theirs goes stale.
                clearing: (t.misses > 0 && !t.last.event).then(|| Clearing {
                    left: self.thresholds.clear_after.saturating_sub(t.misses).max(1),
                    last_held_ms: t.last_ms,
                }),
            })
            .collect();
        sort_active(&mut out);
        out
    }
}

fn sort_active(v: &mut [ActiveFinding]) {
    // Holding findings before clearing ones: the strip's first line is about now.
    v.sort_by(|a, b| {
        a.clearing
            .is_some()
            .cmp(&b.clearing.is_some())
            .then(b.finding.severity.cmp(&a.finding.severity))
            .then(a.since_ms.cmp(&b.since_ms))
            .then(a.finding.id.cmp(&b.finding.id))
    });
}

/// `; by dd w 80M/s`: the first culprit, kept when the message is cut.
fn by(f: &Finding) -> String {
    f.culprits
        .first()
        .map_or(String::new(), |c| format!("; by {}", c.short()))
}

/// One row of the strip.
#[derive(Debug, Clone, PartialEq)]
pub struct StripRow {
    /// The finding's severity; `None` for the `+k more` row.
    pub severity: Option<Severity>,
    /// A clearing finding's row, drawn dimmed.
    pub clearing: bool,
    pub text: String,
}

/// `WARN message; by culprit`, or for a clearing finding `WARN clearing: id below its threshold
/// now ...` with none of its stale numbers.
fn row_text(a: &ActiveFinding, width: usize, suffix: &str) -> String {
    let sev = a.finding.severity.as_str().to_uppercase();
    if let Some(c) = a.clearing {
        let text = format!(
            "{sev} clearing: {} below its threshold now, off in {} sample{}",
            a.finding.id,
            c.left,
            if c.left == 1 { "" } else { "s" }
        );
        let cut = fit(&text, width.saturating_sub(suffix.chars().count()));
        return fit(&format!("{cut}{suffix}"), width);
    }
    let by = by(&a.finding);
    let text = format!("{sev} {}", a.finding.message);
    let tail = format!("{by}{suffix}");
    let cut = fit(&text, width.saturating_sub(tail.chars().count()));
    fit(&format!("{cut}{tail}"), width)
}

/// The findings strip as text: one line per finding (`CRIT message`), see [`strip_rows`].
pub fn strip_lines(active: &[ActiveFinding], width: usize, max_lines: usize) -> Vec<String> {
    strip_rows(active, width, max_lines)
        .into_iter()
        .map(|r| r.text)
        .collect()
}

/// The findings strip: one row per finding (`CRIT message`) with its severity, most severe
/// first (clearing ones last, without their stale numbers), each cut to `width`; when they do
/// not fit in `max_lines`, the last row says `+k more: ids` (no severity of its own). No
/// findings give no rows (the caller decides whether to say "none").
pub fn strip_rows(active: &[ActiveFinding], width: usize, max_lines: usize) -> Vec<StripRow> {
    if width == 0 || max_lines == 0 {
        return Vec::new();
    }
    let mut v = active.to_vec();
    sort_active(&mut v);
    let row = |a: &ActiveFinding, suffix: &str| StripRow {
        severity: Some(a.finding.severity),
        clearing: a.clearing.is_some(),
        text: row_text(a, width, suffix),
    };
    if max_lines == 1 && v.len() > 1 {
        // One line (80x24): the most severe message, never only a list of ids, then how many
        // more there are.
        return vec![row(&v[0], &format!(" +{} more", v.len() - 1))];
    }
    let shown = if v.len() > max_lines {
        max_lines - 1
    } else {
        v.len()
    };
    let mut lines: Vec<StripRow> = v[..shown].iter().map(|a| row(a, "")).collect();
    if shown < v.len() {
        let ids: Vec<&str> = v[shown..].iter().map(|a| a.finding.id.as_str()).collect();
        let text = format!("+{} more: {}", v.len() - shown, ids.join(", "));
        lines.push(StripRow {
            severity: None,
            clearing: false,
            text: fit(&text, width),
        });
    }
    lines
}
