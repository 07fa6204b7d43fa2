//! Who is behind a finding: the processes whose numbers feed it (writers for dirty pages,
//! readers and writers for a disk, RSS growth and major faults for memory, CPU for CPU
//! pressure, what last ran on a hot softirq CPU), named on the finding with the number.

use super::Finding;
use crate::derive::{Derived, ProcessMetrics};
use serde::{Deserialize, Serialize};

/// Culprits named per finding.
pub const MAX_CULPRITS: usize = 3;

/// One process behind a finding and the number that makes it one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Culprit {
    pub pid: u32,
    pub comm: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    /// Which number: `cpu_pct`, `write_kb_per_s`, `io_kb_per_s`, `rss_growth_kb_per_s`,
    /// `major_faults_per_s` (the `processes[]` field names).
    pub metric: String,
    pub value: f64,
}

impl Culprit {
    /// `dd 80M/s w`, `cc1 98%`: the name and the number, for the findings strip.
    pub fn short(&self) -> String {
        let v = self.value;
        let size = |kbs: f64| crate::units::kb(Some(kbs.max(0.0).round() as u64));
        let what = match self.metric.as_str() {
            "cpu_pct" => format!("{v:.0}%"),
            "write_kb_per_s" => format!("w {}/s", size(v)),
            "io_kb_per_s" => format!("{}/s", size(v)),
            "rss_growth_kb_per_s" => format!("+{}/s", size(v)),
            "major_faults_per_s" => format!("{} flt/s", crate::units::compact(Some(v))),
            "rss_kb" => size(v),
            _ => format!("{v:.0}"),
        };
        format!("{} {what}", crate::safe::line(&self.comm))
    }
}

type Metric = (&'static str, fn(&ProcessMetrics) -> Option<f64>, f64);

/// (metric, value, the least that names a process): 1% of a CPU, 1 MiB/s of I/O, 1 major
/// fault/s, 1 MiB/s of RSS growth. Less is noise, not a cause.
const CPU: Metric = ("cpu_pct", |m| m.cpu_pct, 1.0);
const WRITE: Metric = ("write_kb_per_s", |m| m.write_kb_per_s, 1024.0);
const IO: Metric = (
    "io_kb_per_s",
    |m| match (m.read_kb_per_s, m.write_kb_per_s) {
        (None, None) => None,
        (r, w) => Some(r.unwrap_or(0.0) + w.unwrap_or(0.0)),
    },
    1024.0,
);
const GROWTH: Metric = ("rss_growth_kb_per_s", |m| m.rss_growth_kb_per_s, 1024.0);
/// Resident memory, for a group at its memory limit: what holds the memory (1 MiB at least).
const RSS: Metric = ("rss_kb", |m| m.rss_kb.map(|k| k as f64), 1024.0);
const FAULTS: Metric = ("major_faults_per_s", |m| m.major_faults_per_s, 1.0);

/// The top processes by `metric` among those `which` admits, at least its floor each.
fn top(
    d: &Derived,
    (name, value, floor): Metric,
    which: impl Fn(&ProcessMetrics) -> bool,
) -> Vec<Culprit> {
    let mut v: Vec<(&ProcessMetrics, f64)> = d
        .processes
        .iter()
        .filter(|m| which(m))
        .filter_map(|m| Some((m, value(m)?)))
        .filter(|(_, v)| *v >= floor)
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.pid.cmp(&b.0.pid)));
    v.into_iter()
        .take(MAX_CULPRITS)
        .map(|(m, value)| Culprit {
            pid: m.pid,
            comm: m.comm.clone(),
            cgroup: m.cgroup.clone(),
            metric: name.to_string(),
            value,
        })
        .collect()
}

/// Busiest processes that last ran on `cpu` (a softirq hotspot: what runs there competes
/// with the packets, or makes them).
pub fn on_cpu(d: &Derived, cpu: u32) -> Vec<Culprit> {
    top(d, CPU, |m| m.last_cpu == Some(cpu))
}

/// True when a process in cgroup `of` is inside the group at `path` (the group itself or
/// one below it: a container's processes sit in its sub-groups).
fn inside(of: Option<&str>, path: &str) -> bool {
    let Some(of) = of else { return false };
    let base = path.trim_end_matches('/');
    base.is_empty() || of == base || of.strip_prefix(base).is_some_and(|r| r.starts_with('/'))
}

/// The processes behind a cgroup finding, inside the group at `path`: by CPU for a group
/// held back by its CPU quota; for one at its memory limit, RSS growth first, then the
/// largest RSS (what the limit is full of).
pub(super) fn in_group(d: &Derived, path: &str, memory: bool) -> Vec<Culprit> {
    let mine = |m: &ProcessMetrics| inside(m.cgroup.as_deref(), path);
    if !memory {
        return top(d, CPU, mine);
    }
    let mut v = top(d, GROWTH, mine);
    for c in top(d, RSS, mine) {
        if v.len() < MAX_CULPRITS && v.iter().all(|x| x.pid != c.pid) {
            v.push(c);
        }
    }
    v
}

/// Names the culprits of each finding that has none yet, by its id.
pub fn attach(findings: &mut [Finding], d: &Derived) {
    for f in findings.iter_mut().filter(|f| f.culprits.is_empty()) {
        let id = f.id.as_str();
        f.culprits = if id.starts_with("dirty.") || id == "fs.full" {
            top(d, WRITE, |_| true)
        } else if id.starts_with("disk.") || id == "io.pressure" {
            top(d, IO, |_| true)
        } else if id.starts_with("memory.") {
            let mut v = top(d, GROWTH, |_| true);
            for c in top(d, FAULTS, |_| true) {
                if v.len() < MAX_CULPRITS && v.iter().all(|x| x.pid != c.pid) {
                    v.push(c);
                }
            }
            v
        } else if matches!(
            id,
            "cpu.pressure" | "cpu.powersave_busy" | "cpu.thermal_throttle"
        ) {
            top(d, CPU, |_| true)
        } else {
            Vec::new()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::inside;

    #[test]
    fn a_process_is_inside_its_group_and_the_groups_below() {
        let g = "/system.slice/docker-ab12.scope";
        assert!(inside(Some(g), g));
        assert!(inside(Some("/system.slice/docker-ab12.scope/init"), g));
        assert!(!inside(Some("/system.slice/docker-ab123.scope"), g));
        assert!(!inside(Some("/user.slice"), g));
        assert!(!inside(None, g));
        assert!(inside(Some("/user.slice"), "/"));
    }
}
