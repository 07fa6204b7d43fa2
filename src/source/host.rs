//! Host identity (hostname, kernel, load, hypervisor) and the sample's time base.
//!
//! The time base is the root's `proc/uptime`, as iostat uses, so a fixture root carries its own
//! time. On the live system CLOCK_BOOTTIME (the same clock, finer grained) is kept beside it.

use super::Probe;
use crate::sample::{Host, SampleTime};
use procfs_core::FromRead;

pub fn read_time(probe: &mut Probe) -> SampleTime {
    let boottime_ns = probe.root.is_live().then(|| {
        let ts = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
        (ts.tv_sec as u64)
            .saturating_mul(1_000_000_000)
            .saturating_add(ts.tv_nsec as u64)
    });
    let uptime_s = match boottime_ns {
        // `/proc/uptime`'s first number is this clock (`ktime_get_boottime_ts64`, with the
        // same time-namespace offset) printed in hundredths: taken from the clock as the file
        // would print it, one file less a sample. A fixture root has only the file.
        Some(ns) => Some((ns / 10_000_000) as f64 / 100.0),
        None => probe
            .with_text(
                "proc/uptime",
                true,
                |probe, text| match procfs_core::Uptime::from_read(text.as_bytes()) {
                    Ok(u) if u.uptime.is_finite() && u.uptime >= 0.0 => Some(u.uptime),
                    _ => {
                        probe.note("proc/uptime", "not '<seconds> <idle seconds>'");
                        None
                    }
                },
            )
            .flatten(),
    };
    let wall_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    SampleTime {
        uptime_s,
        boottime_ns,
        wall_ms,
    }
}

/// `cpuinfo` is cached: it is large on big hosts and reading it can cost IPIs on x86.
pub fn read_host(probe: &mut Probe, cpuinfo: &mut Option<(Option<String>, bool)>) -> Host {
    let mut host = Host {
        // A setting: `hostname(1)` changes it, rarely; 14 µs a sample read every sample (a
        // sysctl read formats into a zeroed kernel buffer).
        hostname: probe.setting_line("proc/sys/kernel/hostname"),
        // Fixed until the next boot.
        kernel: probe.static_line("proc/sys/kernel/osrelease"),
        kernel_version: probe.static_line("proc/sys/kernel/version"),
        ..Host::default()
    };
    if let Some(text) = probe.text("proc/loadavg") {
        match procfs_core::LoadAverage::from_read(text.as_bytes()) {
            // "nan" parses as an f32 but cannot be stored in JSON (snapshots, recordings).
            Ok(l)
                if [l.one, l.five, l.fifteen]
                    .iter()
                    .all(|v| v.is_finite() && *v >= 0.0) =>
            {
                host.loadavg = Some([l.one, l.five, l.fifteen]);
                host.tasks_runnable = Some(l.cur);
                host.tasks_total = Some(l.max);
            }
            _ => probe.note("proc/loadavg", "garbled"),
        }
    }
    let (model, hv_flag) = cpuinfo.get_or_insert_with(|| first_cpuinfo(probe)).clone();
    host.cpu_model = model;
    host.hypervisor = probe
        .static_line("sys/hypervisor/type")
        .or_else(|| hv_flag.then(|| "detected".to_string()));
    host
}

/// The most of `proc/cpuinfo` read: its first processor block is ~1.5 KiB. The kernel builds
/// the file a CPU at a time, asking each CPU for its clock (an IPI on x86): all of it is
/// 23 KiB on a 16-CPU host and megabytes on a 4096-CPU one.
const CPUINFO_MAX_BYTES: u64 = 16 * 1024;

/// Model name and the `hypervisor` flag from the first processor block of `proc/cpuinfo`.
fn first_cpuinfo(probe: &mut Probe) -> (Option<String>, bool) {
    let Some(text) = probe.head("proc/cpuinfo", CPUINFO_MAX_BYTES) else {
        return (None, false);
    };
    let mut model = None;
    let mut hv = false;
    for line in text.lines() {
        if line.trim().is_empty() {
            break;
        }
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        match k.trim() {
            "model name" | "Processor" | "cpu model" => model = Some(v.trim().to_string()),
            "flags" | "Features" => hv = v.split_whitespace().any(|f| f == "hypervisor"),
            _ => {}
        }
    }
    (model, hv)
}

#[cfg(test)]
mod tests {
    use super::{first_cpuinfo, CPUINFO_MAX_BYTES};
    use crate::root::Root;
    use crate::source::Probe;

    /// A big host's `cpuinfo` is read up to `CPUINFO_MAX_BYTES`: the first block parsed, the
    /// cut not a problem; an empty one is.
    #[test]
    fn cpuinfo_is_read_to_its_first_block_and_cut_quietly() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("proc")).expect("proc");
        let block = |n: usize| {
            format!("processor\t: {n}\nmodel name\t: Big Iron {n}\nflags\t\t: fpu hypervisor\n\n")
        };
        let all: String = (0..4096).map(block).collect();
        assert!(all.len() as u64 > 4 * CPUINFO_MAX_BYTES);
        std::fs::write(dir.path().join("proc/cpuinfo"), &all).expect("cpuinfo");
        let mut probe = Probe::new(Root::new(dir.path()));
        assert_eq!(
            first_cpuinfo(&mut probe),
            (Some("Big Iron 0".to_string()), true)
        );
        assert!(probe.problems.is_empty(), "{:?}", probe.problems);
        std::fs::write(dir.path().join("proc/cpuinfo"), "").expect("empty");
        assert_eq!(first_cpuinfo(&mut probe), (None, false));
        assert_eq!(probe.problems.len(), 1, "{:?}", probe.problems);
        // Cut and damaged: the damage is what is noted, not the cut.
        let garbled = all.replacen("Big Iron 1", "Big\0Iron 1", 1);
        std::fs::write(dir.path().join("proc/cpuinfo"), garbled).expect("garbled");
        first_cpuinfo(&mut probe);
        assert_eq!(probe.problems.len(), 2, "{:?}", probe.problems);
        assert!(
            probe.problems[1].what.contains("NUL"),
            "{:?}",
            probe.problems
        );
    }
}
