//! Which findings make one episode: a family is a group of rules that report one mechanism
//! (memory running short, dirty pages held back, the disk queue, ...), with the key metric each
//! rule is judged by. Every rule belongs to exactly one family (a test holds `RULES` to it).

/// One family: its name, its rules in the order that picks the episode's key metric (the first
/// rule of the list that held), and each rule's key metric (a `metrics::METRICS` name).
pub struct Family {
    pub name: &'static str,
    pub rules: &'static [(&'static str, Option<&'static str>)],
}

pub const FAMILIES: [Family; 17] = [
    Family {
        name: "memory",
        rules: &[
            ("memory.pressure", Some("memory.psi_some_pct")),
            ("memory.swapping", Some("swap.pages_per_s")),
            ("memory.direct_reclaim", Some("reclaim.allocstall_per_s")),
            ("cgroup.memory_high", Some("memory.psi_some_pct")),
            ("memory.oom_kill", Some("memory.psi_some_pct")),
        ],
    },
    Family {
        name: "dirty",
        rules: &[
            ("dirty.throttled", Some("dirty.dirty_wb_pct_of_freerun")),
            ("dirty.background", Some("dirty.dirty_wb_pct_of_freerun")),
        ],
    },
    Family {
        name: "io",
        rules: &[
            ("disk.saturated", Some("disk.await_ms")),
            ("disk.stalled", Some("disk.util_pct")),
            ("disk.queue_full", Some("disk.aqu_sz")),
            ("io.pressure", Some("io.psi_full_pct")),
            // Tasks stuck in D are the I/O story's who (their wait channel names the lock); an
            // episode of them alone peaks in how many there were, not in an I/O stall of 0%.
            ("proc.blocked", Some("proc.blocked_tasks")),
            ("mpath.path_down", None),
            ("mpath.path_idle", None),
        ],
    },
    Family {
        name: "cpu",
        rules: &[
            ("cpu.pressure", Some("cpu.psi_some_pct")),
            ("cgroup.throttled", Some("cpu.psi_some_pct")),
        ],
    },
    Family {
        name: "power",
        rules: &[
            ("cpu.thermal_throttle", Some("cpu.throttled_pct")),
            ("cpu.powersave_busy", Some("cpu.busy_pct")),
        ],
    },
    Family {
        name: "softirq",
        rules: &[
            ("softirq.hotspot", Some("softirq.max_cpu_pct")),
            ("ksoftirqd.busy", Some("softirq.max_cpu_pct")),
        ],
    },
    Family {
        name: "drops",
        rules: &[
            ("net.drops", Some("net.softnet_drops_per_s")),
            ("nic.errors", None),
            ("udp.rcvbuf", None),
        ],
    },
    Family {
        name: "tcp",
        rules: &[
            ("net.retrans", Some("tcp.retrans_pct")),
            ("net.listen_overflow", None),
        ],
    },
    Family {
        name: "nic.link",
        rules: &[("nic.link", None)],
    },
    Family {
        name: "fs.full",
        rules: &[("fs.full", None)],
    },
    Family {
        name: "numa",
        rules: &[("numa.misses", None)],
    },
    Family {
        name: "thp",
        rules: &[("thp.fallback", None)],
    },
    Family {
        name: "hugepages",
        rules: &[("hugepages.unused", None)],
    },
    Family {
        name: "pagetables",
        rules: &[("pagetables.large", None)],
    },
    Family {
        name: "kernel",
        rules: &[("kernel.events", None)],
    },
    Family {
        name: "irq",
        rules: &[("irq.storm", None), ("ipi.storm", None)],
    },
    // A rule added later and not yet placed: its own episodes, no key metric.
    Family {
        name: "other",
        rules: &[],
    },
];

/// The family of a rule id (`other` for an id no family lists).
pub fn family_of(id: &str) -> usize {
    FAMILIES
        .iter()
        .position(|f| f.rules.iter().any(|(r, _)| *r == id))
        .unwrap_or(FAMILIES.len() - 1)
}

/// The key metric of an episode of family `fam` holding `ids`: the first rule of the family's
/// list that held and has one.
pub fn key_metric(fam: usize, ids: &[String]) -> Option<&'static str> {
    FAMILIES.get(fam)?.rules.iter().find_map(
        |(r, m)| {
            if ids.iter().any(|i| i == r) {
                *m
            } else {
                None
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::RULE_IDS;

    #[test]
    fn every_rule_has_one_family_and_known_metrics() {
        for id in RULE_IDS {
            let n = FAMILIES
                .iter()
                .filter(|f| f.rules.iter().any(|(r, _)| *r == id))
                .count();
            assert_eq!(n, 1, "{id} is in {n} families");
        }
        for f in &FAMILIES {
            for (r, m) in f.rules {
                assert!(RULE_IDS.contains(r), "{r} is no rule");
                if let Some(m) = m {
                    assert!(super::super::metrics::index(m).is_some(), "{m} no metric");
                }
            }
        }
    }

    /// Tasks blocked in D alone peak in how many there were (a real episode under stress-ng
    /// said `peak: io.psi_full_pct 0.00%`); beside an I/O stall the stall is the key.
    #[test]
    fn blocked_tasks_alone_are_counted_not_read_as_an_io_stall() {
        let io = FAMILIES.iter().position(|f| f.name == "io").expect("io");
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            key_metric(io, &ids(&["proc.blocked"])),
            Some("proc.blocked_tasks")
        );
        assert_eq!(
            key_metric(io, &ids(&["proc.blocked", "io.pressure"])),
            Some("io.psi_full_pct")
        );
        assert_eq!(super::super::metrics::show(2.0, "tasks"), "2 tasks");
        assert_eq!(super::super::metrics::show(1.0, "tasks"), "1 task");
    }
}
