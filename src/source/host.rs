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

/// Model name and the `hypervisor` flag from the first processor block of `proc/cpuinfo`.
fn first_cpuinfo(probe: &mut Probe) -> (Option<String>, bool) {
    let Some(text) = probe.text("proc/cpuinfo") else {
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
