//! Findings from the kernel log (`/dev/kmsg`): the OOM killer's victims named on
//! `memory.oom_kill`, and `kernel.events` for hung tasks, block I/O errors, soft lockups and
//! NIC links going down.

use super::{Hit, Severity};
use crate::derive::Derived;
use crate::sample::OomVictim;

/// `stress-ng-vm (pid 4242, anon 256M) in /perftop-oom, cgroup limit`, for each victim.
pub fn victims(list: &[OomVictim]) -> String {
    let one = |v: &OomVictim| {
        let anon = v
            .anon_rss_kb
            .map(|kb| format!(", anon {}", crate::units::kb(Some(kb))))
            .unwrap_or_default();
        let group = v
            .cgroup
            .as_deref()
            .map(|g| format!(" in {}", crate::safe::line(g)))
            .unwrap_or_default();
        let why = match v.constraint.as_deref() {
            Some("CONSTRAINT_MEMCG") => ", cgroup limit",
            Some("CONSTRAINT_CPUSET") => ", cpuset",
            Some("CONSTRAINT_MEMORY_POLICY") => ", mempolicy",
            _ => "",
        };
        format!(
            "{} (pid {}{anon}){group}{why}",
            crate::safe::line(&v.comm),
            v.pid
        )
    };
    let mut out: Vec<String> = list.iter().take(3).map(one).collect();
    if list.len() > 3 {
        out.push(format!("+{} more", list.len() - 3));
    }
    out.join("; ")
}

/// `kernel.events`: what the kernel log reported this sample that needs a person: tasks
/// hung (blocked over `kernel.hung_task_timeout_secs`), block I/O errors, soft lockups, NIC
/// links down. One finding, the worst kind first, with counts.
pub(super) fn events(d: &Derived) -> Option<Hit> {
    // (kind, what it is called, severity), in the order the message lists them.
    const KINDS: [(&str, &str, Severity); 4] = [
        ("soft_lockup", "soft lockup", Severity::Crit),
        ("io_error", "I/O error", Severity::Crit),
        ("hung_task", "hung task", Severity::Warn),
        ("link_down", "link down", Severity::Warn),
    ];
    let mut parts = Vec::new();
    let mut sev = None;
    for (kind, name, s) in KINDS {
        let of: Vec<_> = d.kernel_events.iter().filter(|e| e.kind == kind).collect();
        let Some(first) = of.first() else { continue };
        sev = sev.max(Some(s));
        let whom = first
            .device
            .as_deref()
            .or(first.comm.as_deref())
            .map(|w| match first.pid {
                Some(pid) => format!(" {} ({pid})", crate::safe::line(w)),
                None => format!(" {}", crate::safe::line(w)),
            })
            .unwrap_or_default();
        let plural = if of.len() == 1 { "" } else { "s" };
        parts.push(format!("{} {name}{plural}:{whom}", of.len()));
    }
    let sev = sev?;
    Some(super::happened(
        sev,
        format!("kernel log: {}", parts.join(", ")),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::KernelEvent;

    #[test]
    fn victims_and_events_are_named() {
        let v = OomVictim {
            pid: 4242,
            comm: "stress-ng-vm".into(),
            cgroup: Some("/perftop-oom".into()),
            anon_rss_kb: Some(262_344),
            constraint: Some("CONSTRAINT_MEMCG".into()),
            ..OomVictim::default()
        };
        assert_eq!(
            victims(&[v]),
            "stress-ng-vm (pid 4242, anon 256M) in /perftop-oom, cgroup limit"
        );
        let mut d = crate::derive::derive(None, &crate::sample::Sample::default());
        assert_eq!(events(&d), None);
        let ev = |kind: &str, dev: Option<&str>, comm: Option<&str>, pid| KernelEvent {
            kind: kind.into(),
            device: dev.map(str::to_string),
            comm: comm.map(str::to_string),
            pid,
            ..KernelEvent::default()
        };
        d.kernel_events = vec![
            ev("hung_task", None, Some("dd"), Some(9)),
            ev("io_error", Some("vda"), None, None),
            ev("io_error", Some("vda"), None, None),
            ev("link_up", Some("eth0"), None, None),
        ];
        let h = events(&d).expect("hit");
        assert_eq!(h.severity, Severity::Crit);
        assert_eq!(
            h.message,
            "kernel log: 2 I/O errors: vda, 1 hung task: dd (9)"
        );
        d.kernel_events = vec![ev("link_up", Some("eth0"), None, None)];
        assert_eq!(events(&d), None, "a link coming up is no trouble");
    }
}
