//! cgroup findings: a group held back by its CPU quota (`cgroup.throttled`) and a group at
//! its memory.high or near its memory limit (`cgroup.memory_high`). Each names the group.

use super::{culprits, worst, Hit, Severity, Thresholds};
use crate::derive::{CgroupMetrics, Derived};
use crate::sample::Limit;
use crate::units::{fit, kb};

/// Group names in messages are cut to this many characters (a message fits 76 columns).
const NAME_WIDTH: usize = 20;

fn name(g: &CgroupMetrics) -> String {
    fit(&g.name, NAME_WIDTH)
}

/// CPUs as a person writes them: `0.2`, `1.5`, `2`, `16`.
fn cpus(v: f64) -> String {
    if v >= 10.0 {
        return format!("{v:.0}");
    }
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub(super) fn throttled(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let hits = d
        .cgroups
        .iter()
        .filter_map(|g| {
            let (share, ms) = (g.throttled_pct?, g.throttled_ms_per_s?);
            if share < t.cgroup_throttled_pct || ms < t.cgroup_throttled_ms_per_s {
                return None;
            }
            let sev = if share >= t.cgroup_throttled_pct_crit {
                Severity::Crit
            } else {
                Severity::Warn
            };
            let used = g.cpu_pct.map_or("-".into(), |p| cpus(p / 100.0));
            let quota = match g.cpu_quota_cpus {
                Some(Limit::Value(q)) => cpus(q),
                _ => "-".into(),
            };
            let msg = format!(
                "{} throttled {share:.0}% of periods, {ms:.0} ms/s: uses {used} of {quota} CPU",
                name(g)
            );
            Some((sev, ms, msg, g.path.as_str()))
        })
        .collect();
    worst_group(d, false, hits)
}

pub(super) fn memory_high(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let hits = d
        .cgroups
        .iter()
        .filter_map(|g| memory_hit(g, t).map(|(s, v, m)| (s, v, m, g.path.as_str())))
        .collect();
    worst_group(d, true, hits)
}

/// The worst group's finding (as `worst`), naming the processes inside that group.
fn worst_group(
    d: &Derived,
    memory: bool,
    mut hits: Vec<(Severity, f64, String, &str)>,
) -> Option<Hit> {
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.total_cmp(&a.1)));
    let path = hits.first()?.3.to_string();
    let hits = hits.into_iter().map(|(s, v, m, _)| (s, v, m)).collect();
    let mut f = worst(None, hits)?;
    f.culprits = culprits::in_group(d, &path, memory);
    // A kill in the worst group is an event: the group's usage falls right after it, and the
    // finding would vanish within a sample while the host's `memory.oom_kill` stays.
    f.event = memory
        && d.cgroups
            .iter()
            .any(|g| g.path == path && g.oom_kills.is_some_and(|n| n > 0));
    Some(f)
}

/// One group's memory finding: (severity, how bad, message).
fn memory_hit(g: &CgroupMetrics, t: &Thresholds) -> Option<(Severity, f64, String)> {
    // Inactive page cache is dropped first and cheaply: a group full of it is not short.
    let used = g.mem_working_set_kb.or(g.mem_kb);
    let high = g.mem_high_kb.and_then(Limit::value);
    let max = g.mem_max_kb.and_then(Limit::value);
    let at_high = used.zip(high).filter(|(u, h)| *h > 0 && u >= h);
    let pct_of_max = used
        .zip(max)
        .filter(|(_, m)| *m > 0)
        .map(|(u, m)| u as f64 * 100.0 / m as f64);
    let near_max = pct_of_max.filter(|p| *p >= t.cgroup_memory_max_pct);
    let kills = g.oom_kills.filter(|n| *n > 0);
    if at_high.is_none() && near_max.is_none() && kills.is_none() {
        return None;
    }
    let events = g.mem_high_events.unwrap_or(0) + g.mem_max_events.unwrap_or(0);
    let sev = if kills.is_some() || events > 0 {
        Severity::Crit
    } else {
        Severity::Warn
    };
    let n = name(g);
    let msg = match (kills, near_max, at_high) {
        (Some(k), _, _) => {
            let what = if k == 1 { "1 OOM kill" } else { "OOM kills" };
            let count = if k == 1 {
                String::new()
            } else {
                format!("{k} ")
            };
            let limit = max.map_or(String::new(), |m| format!(" at its {} limit", kb(Some(m))));
            format!("{n}: {count}{what} in the group{limit}")
        }
        (None, Some(p), _) => {
            let hit = if events > 0 {
                format!(", hit it {events}x")
            } else {
                String::new()
            };
            format!(
                "{n} uses {} = {p:.0}% of its {} memory limit{hit}",
                kb(used),
                kb(max)
            )
        }
        (None, None, Some((u, h))) => {
            let hit = if events > 0 {
                format!(", {events} reclaims")
            } else {
                String::new()
            };
            format!(
                "{n} uses {} over its memory.high {}: throttled{hit}",
                kb(Some(u)),
                kb(Some(h))
            )
        }
        (None, None, None) => return None,
    };
    let badness = pct_of_max.unwrap_or(100.0) + kills.unwrap_or(0) as f64 * 1000.0;
    Some((sev, badness, msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpus_read_like_a_person_writes_them() {
        assert_eq!(
            [0.2, 0.25, 1.5, 2.0, 0.999, 16.4].map(cpus),
            ["0.2", "0.25", "1.5", "2", "1", "16"]
        );
    }
}
