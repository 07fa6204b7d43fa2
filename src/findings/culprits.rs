//! Who is behind a finding: the processes whose numbers feed it (writers for dirty pages,
//! readers and writers for a disk, RSS growth and major faults for memory, CPU for CPU
//! pressure, what last ran on a hot softirq CPU), named on the finding with the number.
//!
//! Processes are grouped before they are named: by command (`stress-ng-cpu x4 182%`), and by
//! control group when one group explains more than any single command. A group is named only
//! when it explains a real share of the machine's number (`MIN_SHARE`); when the processes
//! alive explain little of it, the rest is "short-lived tasks" with the fork rate and the
//! cgroup whose usage grew beyond its members'. Tasks blocked in D come first for a stalled
//! disk or I/O pressure; writeback flushers are never named for I/O done for others.

use super::Finding;
use crate::derive::{Derived, ProcessMetrics};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Culprits named per finding.
pub const MAX_CULPRITS: usize = 3;

/// A group is named only when it explains at least this share of the machine's number (an
/// idle `cargo` at 1% is no cause of a 63% CPU pressure).
pub const MIN_SHARE: f64 = 0.2;

/// What the live processes do not explain of the machine's number was done by tasks that
/// started and ended between two reads, when processes are created at least this fast (a sample keeps only the busiest
/// processes, so on a host of many small ones the kept ones explain little without a storm).
const MIN_FORKS_PER_S: f64 = 10.0;

/// One process (or group of them) behind a finding and the number that makes it one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Culprit {
    /// The process, or a group's busiest member (0: none, short-lived tasks).
    pub pid: u32,
    /// Its command; a cgroup culprit's group name; `short-lived tasks`.
    pub comm: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    /// Which number: `cpu_pct`, `write_kb_per_s`, `io_kb_per_s`, `rss_growth_kb_per_s`,
    /// `major_faults_per_s` (the `processes[]` field names), `blocked_s` (in D this long).
    pub metric: String,
    /// The group's sum.
    pub value: f64,
    /// How many processes the group holds (1 for one process).
    #[serde(default = "one")]
    pub tasks: u32,
    /// `process`, `command` (processes sharing a command), `cgroup`, `short_lived`.
    #[serde(default = "process")]
    pub kind: String,
    /// Short-lived tasks: processes and threads created per second (`/proc/stat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forks_per_s: Option<f64>,
    /// A blocked task's wait channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wchan: Option<String>,
}

fn one() -> u32 {
    1
}

fn process() -> String {
    "process".to_string()
}

impl Culprit {
    /// `dd 80M/s w`, `cc1 98%`, `stress-ng-cpu x4 182%`: the name and the number, for the
    /// findings strip.
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
            "blocked_s" => match &self.wchan {
                Some(w) => format!("D {v:.0}s in {}", crate::safe::line(w)),
                None => format!("D {v:.0}s"),
            },
            _ => format!("{v:.0}"),
        };
        let name = crate::safe::line(&self.comm);
        match self.kind.as_str() {
            "short_lived" => {
                let forks = self
                    .forks_per_s
                    .map(|f| format!(" ({f:.0} forks/s)"))
                    .unwrap_or_default();
                let group = self
                    .cgroup
                    .as_deref()
                    .map(|g| format!(" in {}", crate::safe::line(g)))
                    .unwrap_or_default();
                format!("short-lived tasks{forks}{group} {what}")
            }
            _ if self.tasks > 1 => format!("{name} x{} {what}", self.tasks),
            _ => format!("{name} {what}"),
        }
    }

    fn one(m: &ProcessMetrics, metric: &str, value: f64) -> Culprit {
        Culprit {
            pid: m.pid,
            comm: m.comm.clone(),
            cgroup: m.cgroup.clone(),
            metric: metric.to_string(),
            value,
            tasks: 1,
            kind: process(),
            forks_per_s: None,
            wchan: None,
        }
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

/// The machine's own figure for a metric, in the processes' unit, where it has one: CPU as
/// user + system time of every CPU (% of one CPU; interrupts are no process's), the disks'
/// reads and writes, pages dirtied, major faults. `None`: the processes' sum is the total.
fn machine_total(d: &Derived, name: &str) -> Option<f64> {
    match name {
        "cpu_pct" => {
            let v: Vec<f64> = d
                .cpus
                .iter()
                .filter(|c| c.online)
                .filter_map(|c| Some(c.user_pct? + c.system_pct?))
                .collect();
            (!v.is_empty()).then(|| v.iter().sum())
        }
        "io_kb_per_s" => {
            let v: Vec<f64> = d
                .disks
                .iter()
                .filter(|x| !x.partition && x.dm_name.is_none())
                .filter_map(|x| Some(x.rkb_s.unwrap_or(0.0) + x.wkb_s?))
                .collect();
            (!v.is_empty()).then(|| v.iter().sum())
        }
        "write_kb_per_s" => d.dirty.dirtied_kb_per_s,
        "major_faults_per_s" => d.memory.reclaim.major_faults_per_s,
        _ => None,
    }
}

/// A writeback flusher (`kworker/u8:4-flush-7:0`) or another kernel thread: it writes what
/// others dirtied, so it is never named for I/O.
fn does_io_for_others(m: &ProcessMetrics) -> bool {
    m.kernel_thread
}

/// The groups behind `metric` among the processes `which` admits: by command, and the
/// cgroup that explains more than any one command; each at least the metric's floor and
/// `MIN_SHARE` of the machine's figure; short-lived tasks for what the live processes do not
/// explain of it (CPU and I/O), at the same share, in a fork storm.
fn top(
    d: &Derived,
    (name, value, floor): Metric,
    which: impl Fn(&ProcessMetrics) -> bool,
) -> Vec<Culprit> {
    grouped(d, (name, value, floor), which, true)
}

/// `top`, with the share taken of the machine's figure (`machine`) or of what the admitted
/// processes did (a cgroup's, a CPU's).
fn grouped(
    d: &Derived,
    (name, value, floor): Metric,
    which: impl Fn(&ProcessMetrics) -> bool,
    machine: bool,
) -> Vec<Culprit> {
    let mut v: Vec<(&ProcessMetrics, f64)> = d
        .processes
        .iter()
        .filter(|m| which(m))
        .filter_map(|m| Some((m, value(m)?)))
        .filter(|(_, v)| *v > 0.0)
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.pid.cmp(&b.0.pid)));
    let live: f64 = v.iter().map(|x| x.1).sum();
    let machine = machine.then(|| machine_total(d, name)).flatten();
    let total = machine.unwrap_or(0.0).max(live);
    let bar = floor.max(MIN_SHARE * total);
    // By command, in the order of each command's busiest process.
    let mut commands: Vec<Culprit> = Vec::new();
    for (m, val) in &v {
        match commands.iter_mut().find(|c| c.comm == m.comm) {
            Some(c) => {
                c.value += val;
                c.tasks += 1;
                c.kind = "command".into();
                if c.cgroup != m.cgroup {
                    c.cgroup = None;
                }
            }
            None => commands.push(Culprit::one(m, name, *val)),
        }
    }
    commands.sort_by(|a, b| b.value.total_cmp(&a.value).then(a.pid.cmp(&b.pid)));
    let mut out: Vec<Culprit> = Vec::new();
    // The cgroup that explains more than any one command (several commands in it).
    let mut groups: BTreeMap<&str, (f64, u32, Vec<&str>, u32)> = BTreeMap::new();
    for (m, val) in &v {
        let Some(g) = m.cgroup.as_deref().filter(|g| *g != "/") else {
            continue;
        };
        let e = groups.entry(g).or_insert((0.0, 0, Vec::new(), m.pid));
        e.0 += val;
        e.1 += 1;
        if !e.2.contains(&m.comm.as_str()) {
            e.2.push(&m.comm);
        }
    }
    // Named when it explains a share more than the busiest command does (its commands
    // together, not one command and its idle neighbours); its own commands are then not
    // named again.
    let best_command = commands.first().map_or(0.0, |c| c.value);
    if let Some((g, (sum, n, _, pid))) = groups
        .iter()
        .filter(|(_, e)| e.2.len() > 1 && e.0 >= best_command + bar)
        .max_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
    {
        out.push(Culprit {
            pid: *pid,
            comm: crate::derive::cgroups::display_name(g),
            cgroup: Some(g.to_string()),
            metric: name.to_string(),
            value: *sum,
            tasks: *n,
            kind: "cgroup".into(),
            forks_per_s: None,
            wchan: None,
        });
        commands.retain(|c| c.cgroup.as_deref() != Some(*g));
    }
    out.extend(commands.into_iter().filter(|c| c.value >= bar));
    // The unexplained rest is a group like the others: named at the same share.
    if let (Some(m), "cpu_pct" | "io_kb_per_s") = (machine, name) {
        let storm = d.host.forks_per_s.is_some_and(|f| f >= MIN_FORKS_PER_S);
        if storm && m - live >= bar {
            let c = short_lived(d, name, m - live);
            let at = out
                .iter()
                .position(|x| x.value < c.value)
                .unwrap_or(out.len());
            out.insert(at, c);
        }
    }
    out.truncate(MAX_CULPRITS);
    out
}

/// What tasks too short-lived to be read did: the machine's figure less the live processes',
/// with the fork rate and the cgroup whose own figure grew most beyond its live members'.
fn short_lived(d: &Derived, name: &str, unexplained: f64) -> Culprit {
    let group_value = |g: &crate::derive::CgroupMetrics| match name {
        "cpu_pct" => g.cpu_pct,
        _ => Some(g.read_kb_per_s.unwrap_or(0.0) + g.write_kb_per_s?),
    };
    let member_value = |m: &ProcessMetrics| match name {
        "cpu_pct" => m.cpu_pct.unwrap_or(0.0),
        _ => m.read_kb_per_s.unwrap_or(0.0) + m.write_kb_per_s.unwrap_or(0.0),
    };
    let controller = if name == "cpu_pct" { "cpu" } else { "blkio" };
    let grown: Vec<(&str, f64)> = d
        .cgroups
        .iter()
        .filter(|g| g.path != "/")
        .filter_map(|g| {
            let members: f64 = d
                .processes
                .iter()
                .filter(|m| inside(in_hierarchy(m, controller), &g.path))
                .map(member_value)
                .sum();
            Some((g.path.as_str(), group_value(g)? - members))
        })
        .collect();
    let most = grown.iter().map(|x| x.1).fold(0.0, f64::max);
    // The deepest of those within 80% of the most: a parent holds its children's growth.
    let cgroup = grown
        .iter()
        .filter(|x| most > 0.0 && x.1 >= 0.8 * most)
        .max_by_key(|x| x.0.matches('/').count())
        .map(|x| x.0.to_string());
    Culprit {
        pid: 0,
        comm: "short-lived tasks".into(),
        cgroup,
        metric: name.to_string(),
        value: unexplained,
        tasks: 0,
        kind: "short_lived".into(),
        forks_per_s: d.host.forks_per_s,
        wchan: None,
    }
}

/// The tasks in D the longest, with what they wait in: who a stalled disk is holding up.
pub(super) fn blocked(d: &Derived, at_least_s: f64) -> Vec<Culprit> {
    let mut v: Vec<&ProcessMetrics> = d
        .processes
        .iter()
        .filter(|m| m.state == "D" && m.blocked_s.is_some_and(|s| s >= at_least_s))
        .collect();
    v.sort_by(|a, b| {
        b.blocked_s
            .unwrap_or(0.0)
            .total_cmp(&a.blocked_s.unwrap_or(0.0))
            .then(a.pid.cmp(&b.pid))
    });
    v.into_iter()
        .take(MAX_CULPRITS)
        .map(|m| Culprit {
            wchan: m.wchan.clone(),
            ..Culprit::one(m, "blocked_s", m.blocked_s.unwrap_or(0.0))
        })
        .collect()
}

/// Busiest processes that last ran on `cpu` (a softirq hotspot: what runs there competes
/// with the packets, or makes them).
pub fn on_cpu(d: &Derived, cpu: u32) -> Vec<Culprit> {
    grouped(d, CPU, |m| m.last_cpu == Some(cpu), false)
}

/// True when a process in cgroup `of` is inside the group at `path` (the group itself or
/// one below it: a container's processes sit in its sub-groups).
fn inside(of: Option<&str>, path: &str) -> bool {
    let Some(of) = of else { return false };
    let base = path.trim_end_matches('/');
    base.is_empty() || of == base || of.strip_prefix(base).is_some_and(|r| r.starts_with('/'))
}

/// The path a process has in the hierarchy a group's numbers come from: on v1 the cpu
/// controller's, the memory controller's or the blkio controller's, where it has its own;
/// else its one path.
fn in_hierarchy<'a>(m: &'a ProcessMetrics, controller: &str) -> Option<&'a str> {
    let own = match controller {
        "cpu" => m.cpu_cgroup.as_deref(),
        "memory" => m.memory_cgroup.as_deref(),
        _ => m.blkio_cgroup.as_deref(),
    };
    own.or(m.cgroup.as_deref())
}

/// The processes behind a cgroup finding, inside the group at `path`: by CPU for a group
/// held back by its CPU quota; for one at its memory limit, RSS growth first, then the
/// largest RSS (what the limit is full of).
pub(super) fn in_group(d: &Derived, path: &str, memory: bool) -> Vec<Culprit> {
    let mine =
        |m: &ProcessMetrics| inside(in_hierarchy(m, if memory { "memory" } else { "cpu" }), path);
    let mut v = match memory {
        false => grouped(d, CPU, mine, false),
        true => {
            let mut v = grouped(d, GROWTH, mine, false);
            for c in grouped(d, RSS, mine, false) {
                if v.len() < MAX_CULPRITS && v.iter().all(|x| x.pid != c.pid) {
                    v.push(c);
                }
            }
            v
        }
    };
    // Each named with its path in the group's hierarchy (v1: not its name=systemd path).
    let controller = if memory { "memory" } else { "cpu" };
    for c in v.iter_mut().filter(|c| c.kind == "process") {
        if let Some(m) = d.processes.iter().find(|m| m.pid == c.pid) {
            c.cgroup = in_hierarchy(m, controller).map(str::to_string);
        }
    }
    v
}

/// Names the culprits of each finding that has none yet, by its id.
pub fn attach(findings: &mut [Finding], d: &Derived) {
    for f in findings.iter_mut().filter(|f| f.culprits.is_empty()) {
        let id = f.id.as_str();
        f.culprits = if id.starts_with("dirty.") || id == "fs.full" {
            top(d, WRITE, |m| !does_io_for_others(m))
        } else if id.starts_with("disk.") || id == "io.pressure" {
            // Tasks blocked in D for a sample or more first: what the stall holds up.
            let mut v = blocked(d, f64::MIN_POSITIVE);
            for c in top(d, IO, |m| !does_io_for_others(m)) {
                if v.len() < MAX_CULPRITS {
                    v.push(c);
                }
            }
            v
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
mod tests;
