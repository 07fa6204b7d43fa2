//! Boot and profile context: the `/proc/cmdline` flags that change what the panes show
//! (C-state limits, isolated CPUs, THP and huge page defaults, the elevator) and the active
//! tuned profile, so "why is C6 never entered?" is answered before anyone tweaks.

use super::Probe;
use crate::sample::Host;

/// Flags kept, by name (`name` or `name=...`); a trailing `.` keeps every parameter of that
/// module. What each does to a pane is in docs/panes.md ("Boot and profile context").
const FLAGS: &[&str] = &[
    "processor.max_cstate",
    "intel_idle.max_cstate",
    "idle",
    "cpuidle.off",
    "cpuidle.governor",
    "cpuidle_haltpoll.force",
    "haltpoll.",
    "intel_pstate",
    "amd_pstate",
    "cpufreq.default_governor",
    "nosmt",
    "mitigations",
    "isolcpus",
    "nohz_full",
    "nohz",
    "rcu_nocbs",
    "irqaffinity",
    "skew_tick",
    "transparent_hugepage",
    "hugepages",
    "hugepagesz",
    "default_hugepagesz",
    "numa_balancing",
    "numa",
    "elevator",
    "psi",
    "cgroup_no_v1",
    "systemd.unified_cgroup_hierarchy",
];

/// The kept flags of a kernel command line, in its order. Everything after `--` belongs to
/// init, not the kernel. Quoted values (`"a b"`) stay one flag.
pub fn perf_flags(cmdline: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in split_quoted(cmdline) {
        if word == "--" {
            break;
        }
        let name = word.split('=').next().unwrap_or("");
        // Dashes and underscores are the same in kernel parameter names.
        let name = name.replace('-', "_");
        let kept = |f: &&str| match f.strip_suffix('.') {
            Some(module) => name
                .strip_prefix(module)
                .is_some_and(|r| r.starts_with('.')),
            None => *f == name,
        };
        if FLAGS.iter().any(kept) {
            out.push(word.to_string());
        }
    }
    out
}

fn split_quoted(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted) = (None, false);
    for (i, ch) in s.char_indices() {
        match ch {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if let Some(st) = start.take() {
                    out.push(&s[st..i]);
                }
                continue;
            }
            _ => {}
        }
        if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(st) = start {
        out.push(&s[st..]);
    }
    out
}

pub fn read_boot(probe: &mut Probe, host: &mut Host) {
    // Fixed until the next boot; `text`, not `line`: a command line can be one long line.
    // Picked once per command line read, not every sample (a 550-byte line cost ~25 µs a
    // sample, 2% of the live VM's sample).
    host.boot_flags = probe
        .static_line("proc/cmdline")
        .map(|l| match &probe.cache.boot_flags {
            Some((was, flags)) if *was == l => flags.clone(),
            _ => {
                let flags = perf_flags(&l);
                probe.cache.boot_flags = Some((l, flags.clone()));
                flags
            }
        });
    // `tuned-adm profile X` rewrites it: a setting, re-read within the settings period.
    host.tuned_profile = probe
        .setting_line("etc/tuned/active_profile")
        .filter(|p| !p.is_empty());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_performance_flags_in_order() {
        let line = "BOOT_IMAGE=/vmlinuz root=UUID=1 ro quiet intel_idle.max_cstate=1 \
                    processor.max_cstate=1 isolcpus=nohz,domain,2-7 nohz_full=2-7 \
                    transparent_hugepage=never default_hugepagesz=1G hugepages=16 \
                    intel-pstate=disable elevator=deadline -- isolcpus=9";
        assert_eq!(
            perf_flags(line),
            vec![
                "intel_idle.max_cstate=1",
                "processor.max_cstate=1",
                "isolcpus=nohz,domain,2-7",
                "nohz_full=2-7",
                "transparent_hugepage=never",
                "default_hugepagesz=1G",
                "hugepages=16",
                "intel-pstate=disable",
                "elevator=deadline",
            ]
        );
    }

    #[test]
    fn quoted_values_and_near_misses() {
        assert_eq!(
            perf_flags(
                r#"dyndbg="file x +p" idle=poll idlex=1 nohz_fullx=3 nosmt haltpoll.guest_halt_poll_ns=0 haltpollx=1"#
            ),
            vec!["idle=poll", "nosmt", "haltpoll.guest_halt_poll_ns=0"]
        );
        assert!(perf_flags("").is_empty());
        assert!(perf_flags("   \"unterminated idle=poll").is_empty());
    }
}
