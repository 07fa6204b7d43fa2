//! Power and boot context on a node_exporter-style tree: the intel_pstate fixture host with
//! `thermal_throttle/` counters on every CPU, powercap RAPL zones (the MMIO copy of the package
//! zone included, which must not be counted twice), a kernel command line and a tuned profile.
//! Every expected number is worked out by hand from the files written here.

use crate::support;

use perftop::assess::assess;
use perftop::findings::Thresholds;
use perftop::root::Root;
use perftop::sample::{Sample, ThrottleScope};
use perftop::source::Reader;
use std::fs;
use std::path::Path;

const CPU: &str = "sys/devices/system/cpu";

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(p, text).expect("write");
}

/// Counters of one pass: (package count, package ms, cpu0 core count, cpu0 core ms, package
/// energy µJ, core energy µJ).
struct Pass {
    pkg: (u64, u64),
    core0: (u64, u64),
    energy: (u64, u64),
}

/// One of the fixture's two passes with the power files added.
fn tree(dir: &Path, when: &str, p: &Pass) -> std::path::PathBuf {
    let root = dir.join(when);
    support::copy_tree(&support::fixture("intel-pstate").join(when), &root);
    for cpu in 0..4 {
        let t = format!("{CPU}/cpu{cpu}/thermal_throttle");
        // The package counters are the same file on every CPU of the package.
        write(
            &root,
            &format!("{t}/package_throttle_count"),
            &format!("{}\n", p.pkg.0),
        );
        write(
            &root,
            &format!("{t}/package_throttle_total_time_ms"),
            &format!("{}\n", p.pkg.1),
        );
        let (c, ms) = if cpu == 0 { p.core0 } else { (7, 70) };
        write(
            &root,
            &format!("{t}/core_throttle_count"),
            &format!("{c}\n"),
        );
        write(
            &root,
            &format!("{t}/core_throttle_total_time_ms"),
            &format!("{ms}\n"),
        );
        write(&root, &format!("{t}/core_throttle_max_time_ms"), "40\n");
    }
    let zone = |z: &str, name: &str, uj: u64| {
        let d = format!("sys/class/powercap/{z}");
        write(&root, &format!("{d}/name"), &format!("{name}\n"));
        write(&root, &format!("{d}/energy_uj"), &format!("{uj}\n"));
        write(&root, &format!("{d}/max_energy_range_uj"), "262143328850\n");
    };
    zone("intel-rapl:0", "package-0", p.energy.0);
    zone("intel-rapl:0:0", "core", p.energy.1);
    zone(
        "intel-rapl:0:2",
        "dram",
        100 + (p.energy.0 - 1_000_000_000) / 45 * 6,
    );
    zone("intel-rapl-mmio:0", "package-0", p.energy.0);
    write(&root, "sys/class/powercap/intel-rapl/enabled", "1\n");
    write(
        &root,
        "proc/cmdline",
        "BOOT_IMAGE=/vmlinuz-6.8 root=/dev/sda1 ro intel_idle.max_cstate=1 isolcpus=2-3 \
         transparent_hugepage=madvise quiet -- idle=poll\n",
    );
    write(
        &root,
        "etc/tuned/active_profile",
        "throughput-performance\n",
    );
    root
}

fn samples(p0: Pass, p1: Pass) -> (Sample, Sample) {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = Reader::new(Root::new(tree(dir.path(), "t0", &p0))).sample();
    let b = Reader::new(Root::new(tree(dir.path(), "t1", &p1))).sample();
    (a, b)
}

fn hot() -> (Pass, Pass) {
    (
        Pass {
            pkg: (100, 5_000),
            core0: (10, 1_000),
            energy: (1_000_000_000, 500_000_000),
        },
        Pass {
            pkg: (104, 5_300),
            core0: (12, 1_150),
            energy: (1_045_000_000, 530_000_000),
        },
    )
}

#[test]
fn throttle_rapl_and_boot_context_read_right() {
    let (p0, p1) = hot();
    let (a, b) = samples(p0, p1);
    assert!(b.problems.is_empty(), "{:?}", b.problems);
    let power = b.power.as_ref().expect("power read");
    // One package entry and one per core (4 cores of one package), packages first.
    let scopes: Vec<(ThrottleScope, u32)> =
        power.throttle.iter().map(|t| (t.scope, t.cpu)).collect();
    assert_eq!(
        scopes,
        [
            (ThrottleScope::Package, 0),
            (ThrottleScope::Core, 0),
            (ThrottleScope::Core, 1),
            (ThrottleScope::Core, 2),
            (ThrottleScope::Core, 3)
        ]
    );
    let zones: Vec<&str> = power.rapl.iter().map(|z| z.zone.as_str()).collect();
    assert_eq!(zones, ["intel-rapl:0", "intel-rapl:0:0", "intel-rapl:0:2"]);
    assert_eq!(
        b.host.boot_flags.as_deref(),
        Some(
            &[
                "intel_idle.max_cstate=1".to_string(),
                "isolcpus=2-3".into(),
                "transparent_hugepage=madvise".into()
            ][..]
        )
    );
    assert_eq!(
        b.host.tuned_profile.as_deref(),
        Some("throughput-performance")
    );

    let d = assess(Some(&a), &b, &Thresholds::default());
    let iv = d.derived.interval_s.expect("interval");
    assert!((iv - 1.0).abs() < 1e-9, "uptime 5000.00 -> 5001.00: {iv}");
    let pm = &d.derived.power;
    // 45 J in 1 s; the MMIO copy is not added (that would be 90 W).
    assert_eq!(pm.package_watts, Some(45.0));
    let w: Vec<(Option<&str>, Option<f64>)> = pm
        .rapl
        .iter()
        .map(|z| (z.name.as_deref(), z.watts))
        .collect();
    assert_eq!(
        w,
        [
            (Some("package-0"), Some(45.0)),
            (Some("core"), Some(30.0)),
            (Some("dram"), Some(6.0))
        ]
    );
    let pkg = &pm.throttle[0];
    assert_eq!(pkg.cpus, [0, 1, 2, 3]);
    assert_eq!(pkg.events_per_s, Some(4.0));
    assert_eq!(pkg.throttled_pct, Some(30.0));
    let core0 = &pm.throttle[1];
    assert_eq!(core0.cpus, [0]);
    assert_eq!(
        (core0.events_per_s, core0.throttled_pct),
        (Some(2.0), Some(15.0))
    );
    // /proc/stat over the interval (100 ticks each): cpu0 user +80 system +10 = 90% busy;
    // cpu1 40 + 5 + softirq 5 = 50%, cpu2 10%, cpu3 2%: the package 38%.
    assert_eq!(core0.busy_pct, Some(90.0));
    assert_eq!(pkg.busy_pct, Some(38.0));

    // The package is throttled longer but its CPUs are 38% busy: below the 50% gate. Core 0
    // is 90% busy and throttled 15%: warn (crit from 20%).
    let f = d
        .findings
        .iter()
        .find(|f| f.id == "cpu.thermal_throttle")
        .expect("cpu.thermal_throttle");
    assert_eq!((f.severity.as_str(), f.pane.as_str()), ("warn", "cpu"));
    assert_eq!(
        f.message,
        "core 0 of package 0 (CPUs 0) throttled 15% of the interval (2 events/s) at 90% busy: \
         heat or power limits clamp it, not the governor"
    );
    // What the text report shows: watts and the throttle in the headline, the boot line.
    let text = perftop::text::report(&d, 2, 160);
    assert!(
        text.contains("pkg 45W") && text.contains("THROTTLED pkg0 30%"),
        "{text}"
    );
    assert!(
        text.contains("Boot: intel_idle.max_cstate=1; isolcpus=2-3;"),
        "{text}"
    );
    assert!(text.contains("tuned:throughput-performance"), "{text}");
}

#[test]
fn just_under_the_throttle_threshold_is_silent() {
    let (p0, mut p1) = hot();
    // 0.9 ms per 100 ms of core 0: 0.9% < 1%; the package (30%) is still not busy enough.
    p1.core0 = (12, 1_009);
    let (a, b) = samples(p0, p1);
    let d = assess(Some(&a), &b, &Thresholds::default());
    assert_eq!(
        d.derived.power.throttle[1]
            .throttled_pct
            .map(|p| (p * 10.0).round()),
        Some(9.0)
    );
    assert!(
        d.findings.iter().all(|f| f.id != "cpu.thermal_throttle"),
        "{:?}",
        d.findings
    );
    // At 30% on a busy package it is crit.
    let t = Thresholds::from_json_str(r#"{"thermal_throttle_busy_pct": 30}"#).expect("valid");
    let f = perftop::findings::evaluate(&d.derived, &t, None);
    let f = f
        .iter()
        .find(|f| f.id == "cpu.thermal_throttle")
        .expect("fires at 30% busy");
    assert_eq!(f.severity.as_str(), "crit");
    assert!(
        f.message
            .starts_with("package 0 (CPUs 0-3) throttled 30% of the interval (4 events/s)"),
        "{}",
        f.message
    );
}

/// This VM has neither counters nor RAPL: unknown, with the reason, never 0 W.
#[test]
fn live_host_without_counters_says_why() {
    let live = Path::new("/");
    if !live.join("proc/cmdline").exists() {
        support::skip("live_host_without_counters_says_why", "no /proc here");
        return;
    }
    let mut r = Reader::new(Root::new(live));
    let a = r.sample();
    let b = r.sample();
    let d = assess(Some(&a), &b, &Thresholds::default());
    let cmdline = fs::read_to_string("/proc/cmdline").expect("cmdline");
    // The kept flags are the live command line's own words, in its order.
    let words: Vec<&str> = cmdline
        .split_whitespace()
        .take_while(|w| *w != "--")
        .collect();
    let flags = b.host.boot_flags.clone().expect("cmdline read");
    let mut at = 0;
    for f in &flags {
        let i = words[at..]
            .iter()
            .position(|w| w == f)
            .expect("a word of /proc/cmdline");
        at += i + 1;
    }
    let has_throttle = live.join(format!("{CPU}/cpu0/thermal_throttle")).is_dir();
    assert_eq!(d.derived.power.throttle.is_empty(), !has_throttle);
    if !has_throttle {
        assert!(d.derived.power.throttle_unknown.is_some());
    }
    let has_rapl = fs::read_dir("/sys/class/powercap")
        .map(|rd| {
            rd.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("intel-rapl:"))
        })
        .unwrap_or(false);
    if !has_rapl {
        assert_eq!(d.derived.power.package_watts, None);
        assert!(d.derived.power.rapl_unknown.is_some());
    }
}
