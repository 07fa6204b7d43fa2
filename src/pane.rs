//! The panes that exist: their titles on the screen and in the report, their names on the
//! command line and in findings, their JSON keys and focus keys. Depends on nothing, so every
//! stage (findings, views, dump, keymap) may name a pane.

use anyhow::{bail, Result};

/// One pane of the dashboard, in screen order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pane {
    Cpu,
    Numa,
    Huge,
    Dirty,
    Disks,
    Softirq,
    Pressure,
    Procs,
}

/// Every pane, in the order the screen and the report show them.
pub const PANES: [Pane; 8] = [
    Pane::Cpu,
    Pane::Numa,
    Pane::Huge,
    Pane::Dirty,
    Pane::Disks,
    Pane::Softirq,
    Pane::Pressure,
    Pane::Procs,
];

/// The top-level keys of the assessed JSON (`delta`, `dump --format json`), in output order.
/// `host` and `findings` belong to no pane; the rest belong to exactly one.
pub const JSON_KEYS: [&str; 20] = [
    "host",
    "cpus",
    "policies",
    "nodes",
    "hugepages",
    "dirty",
    "disks",
    "softirq_cpus",
    "irq_queues",
    "nics",
    "tcp",
    "interrupts",
    "memory",
    "pressure",
    "processes",
    "cgroups",
    "temperatures",
    "filesystems",
    "kernel_events",
    "findings",
];

impl Pane {
    /// The title on the screen.
    pub const fn title(self) -> &'static str {
        match self {
            Pane::Cpu => "CPU power",
            Pane::Numa => "NUMA",
            Pane::Huge => "HugePages/THP",
            Pane::Dirty => "Dirty",
            Pane::Disks => "Disks",
            Pane::Softirq => "Softirq/NIC",
            Pane::Pressure => "Pressure",
            Pane::Procs => "Processes",
        }
    }

    /// The section title in the text report (room for what the screen abbreviates).
    pub fn section(self) -> &'static str {
        match self {
            Pane::Cpu => "CPU power (C/P-states)",
            Pane::Numa => "NUMA memory",
            Pane::Huge => "HugePages / THP",
            Pane::Dirty => "Dirty / writeback",
            Pane::Disks => "Disks (iostat -x)",
            Pane::Softirq => "Softirq / NIC queues",
            Pane::Pressure => "Pressure (PSI, reclaim, swap, OOM)",
            Pane::Procs => "Processes (who: CPU, I/O, faults, RSS)",
        }
    }

    /// What the pane shows, in one paragraph (the man page; docs/panes.md has the formulas).
    pub fn about(self) -> &'static str {
        match self {
            Pane::Cpu => {
                "Per CPU busy % (C0), steal, idle-state residency and wakeups, MHz and \
                the governor and its policy, package and core throttling, RAPL power: what \
                turbostat shows."
            }
            Pane::Numa => {
                "Per node memory, free and file pages, numa_hit/miss/foreign rates and \
                the miss ratio, per-node CPU: what numastat shows."
            }
            Pane::Huge => {
                "HugePages pools per size and node (total, free, reserved), THP \
                settings, THP faults and fallbacks, compaction stalls, page tables."
            }
            Pane::Dirty => {
                "Dirty and Writeback against the kernel's background and hard \
                thresholds (the freerun point between them), dirtied and written per second, \
                the vm.dirty_* settings."
            }
            Pane::Disks => {
                "Per disk r/s, w/s, d/s, kB/s, await, aqu-sz and %util as iostat -x \
                computes them; queue settings, dm/md stacks and multipath paths; filesystems \
                that are full."
            }
            Pane::Softirq => {
                "Per CPU %soft, %irq, NET_RX/NET_TX and the softnet counters \
                (processed, dropped, squeezed), IRQ lines and their affinity, NIC queues, drops \
                and link, TCP retransmits and listen overflows: mpstat -I SCPU and more."
            }
            Pane::Pressure => {
                "PSI some/full for cpu, memory and io, direct reclaim and \
                compaction, swapping, OOM kills, watermarks: vmstat and /proc/pressure."
            }
            Pane::Procs => {
                "Who: the busiest processes by CPU, I/O, faults and RSS, and cgroups \
                with their CPU, throttling and memory against their limits."
            }
        }
    }

    /// The short name: `--pane` value, `Finding.pane`, the help text.
    pub fn name(self) -> &'static str {
        match self {
            Pane::Cpu => "cpu",
            Pane::Numa => "numa",
            Pane::Huge => "hugepages",
            Pane::Dirty => "dirty",
            Pane::Disks => "disks",
            Pane::Softirq => "softirq",
            Pane::Pressure => "pressure",
            Pane::Procs => "procs",
        }
    }

    /// Other names `--pane` accepts for it.
    fn aliases(self) -> &'static [&'static str] {
        match self {
            Pane::Cpu => &[],
            Pane::Numa => &["node"],
            Pane::Huge => &["huge", "thp"],
            Pane::Dirty => &[],
            Pane::Disks => &["disk", "io", "iostat"],
            Pane::Softirq => &["net"],
            Pane::Pressure => &["psi", "swap", "reclaim"],
            Pane::Procs => &["processes", "process", "top", "who", "ps"],
        }
    }

    /// The JSON keys whose values this pane shows.
    pub fn json_keys(self) -> &'static [&'static str] {
        match self {
            Pane::Cpu => &["cpus", "policies", "temperatures"],
            Pane::Numa => &["nodes"],
            Pane::Huge => &["hugepages"],
            Pane::Dirty => &["dirty"],
            Pane::Disks => &["disks", "filesystems"],
            Pane::Softirq => &["softirq_cpus", "irq_queues", "nics", "tcp", "interrupts"],
            Pane::Pressure => &["memory", "pressure", "kernel_events"],
            Pane::Procs => &["processes", "cgroups"],
        }
    }

    /// The key that focuses it (`1`..), as the screen's titles number them.
    pub const fn key(self) -> char {
        match self {
            Pane::Cpu => '1',
            Pane::Numa => '2',
            Pane::Huge => '3',
            Pane::Dirty => '4',
            Pane::Disks => '5',
            Pane::Softirq => '6',
            Pane::Pressure => '7',
            Pane::Procs => '8',
        }
    }

    pub fn index(self) -> usize {
        PANES.iter().position(|p| *p == self).unwrap_or(0)
    }

    /// The pane a finding's `pane` field names.
    pub fn named(name: &str) -> Option<Pane> {
        let n = name.to_ascii_lowercase();
        PANES
            .into_iter()
            .find(|p| p.name() == n || p.aliases().contains(&n.as_str()))
    }
}

impl Pane {
    /// The short name (`name`), as findings' JSON writes it.
    pub fn as_str(self) -> &'static str {
        self.name()
    }
}

impl PartialEq<&str> for Pane {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

/// In JSON a pane is its short name (`"disks"`), as `Finding.pane` always was.
impl serde::Serialize for Pane {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Pane {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Pane, D::Error> {
        let name = String::deserialize(d)?;
        Pane::named(&name).ok_or_else(|| serde::de::Error::custom(format!("no pane {name:?}")))
    }
}

/// `--pane NAME` → the JSON keys it selects: a pane's name or alias, one JSON key itself
/// (`memory` is the memory object), `mem` (NUMA, huge pages, dirty and pressure) or `nic`.
pub fn keys_for(name: &str) -> Result<Vec<&'static str>> {
    let n = name.to_ascii_lowercase();
    if let Some(p) = Pane::named(&n) {
        return Ok(p.json_keys().to_vec());
    }
    if let Some(k) = JSON_KEYS.iter().find(|k| **k == n) {
        return Ok(vec![*k]);
    }
    Ok(match n.as_str() {
        "nic" => vec!["nics"],
        "mem" => [Pane::Numa, Pane::Huge, Pane::Dirty, Pane::Pressure]
            .iter()
            .flat_map(|p| p.json_keys().iter().copied())
            .collect(),
        _ => bail!("unknown pane '{name}' ({})", choices()),
    })
}

/// What `keys_for` accepts, in words: the one list for `dump --pane`'s help and its error.
pub fn choices() -> String {
    format!(
        "{}, mem, nic, or one of {}",
        PANES.map(Pane::name).join(", "),
        JSON_KEYS.join(", ")
    )
}

/// `dump --pane`'s long help, from the same list as the error.
pub fn choices_help() -> String {
    format!("Only this pane (csv, json, openmetrics): {}.", choices())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_json_key_but_host_and_findings_belongs_to_exactly_one_pane() {
        for k in JSON_KEYS {
            let owners = PANES.iter().filter(|p| p.json_keys().contains(&k)).count();
            let expect = usize::from(k != "host" && k != "findings");
            assert_eq!(owners, expect, "{k}");
        }
    }

    #[test]
    fn pane_names_and_aliases_resolve() {
        assert_eq!(
            keys_for("CPU").ok(),
            Some(vec!["cpus", "policies", "temperatures"])
        );
        assert_eq!(keys_for("iostat").ok(), Some(vec!["disks", "filesystems"]));
        assert_eq!(keys_for("thp").ok(), Some(vec!["hugepages"]));
        assert_eq!(
            keys_for("mem").ok(),
            Some(vec![
                "nodes",
                "hugepages",
                "dirty",
                "memory",
                "pressure",
                "kernel_events"
            ])
        );
        assert_eq!(keys_for("memory").ok(), Some(vec!["memory"]));
        assert_eq!(
            keys_for("psi").ok(),
            Some(vec!["memory", "pressure", "kernel_events"])
        );
        assert_eq!(keys_for("irq_queues").ok(), Some(vec!["irq_queues"]));
        let e = keys_for("bogus")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("cpu, numa, hugepages, dirty, disks, softirq, pressure, procs"),
            "{e}"
        );
        for (i, p) in PANES.iter().enumerate() {
            assert_eq!(p.key(), char::from(b'1' + i as u8), "{p:?}");
        }
    }
}
