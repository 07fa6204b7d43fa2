//! Kernels in the field (issue 43 item 4): RHEL 7 (3.10), RHEL 8 (4.18), Ubuntu 20.04 (5.4),
//! 22.04 (5.15), 24.04 (6.8) and a 6.12 host without cgroup v1, each a real capture rewritten
//! in that kernel's formats (`support::kernels`). Read through the real `Reader`, assessed, and checked as `batch` and
//! its JSON give them: where the kernel lacks a file or a field the number is unknown with the
//! reason, never 0; where it has it the value is the one worked out from the injected counters;
//! the 80-column `batch` report is pinned by a snapshot per kernel.

use crate::support::kernels::{self, Kernel, Psi, VmFormat, IRQ_STALL_US, REFAULTS, SCANNED};
use crate::support::T0;
use perftop::assess::assess;
use perftop::findings::Thresholds;
use perftop::root::Root;
use perftop::sample::Sample;
use perftop::source::Reader;
use serde_json::Value;

/// t0 and t1 of `k`, stamped T0 and T0 + their uptime difference (as `outputs.rs` does), and
/// the assessed interval as `batch --format json` serializes it.
pub(crate) fn json_of(k: &Kernel) -> (Value, String) {
    let dir = kernels::build(k);
    let read = |w: &str| -> Sample { Reader::new(Root::new(dir.path().join(w))).sample() };
    let (mut a, mut b) = (read("t0"), read("t1"));
    let secs = b.time.uptime_s.unwrap_or(0.0) - a.time.uptime_s.unwrap_or(0.0);
    a.time.wall_ms = T0;
    b.time.wall_ms = T0 + (secs * 1000.0).round() as i64;
    assert!(
        a.problems.is_empty(),
        "{}: t0 problems {:?}",
        k.name,
        a.problems
    );
    assert!(
        b.problems.is_empty(),
        "{}: t1 problems {:?}",
        k.name,
        b.problems
    );
    let d = assess(Some(&a), &b, &Thresholds::default());
    let text = perftop::text::report(&d, 2, 80);
    (serde_json::to_value(&d).expect("json"), text)
}

fn num(v: &Value, path: &[&str]) -> Option<f64> {
    path.iter().try_fold(v, |v, k| v.get(k))?.as_f64()
}

#[track_caller]
fn near(k: &Kernel, what: &str, got: Option<f64>, want: f64) {
    let g = got.unwrap_or_else(|| panic!("{}: {what} is null, want {want}", k.name));
    assert!(
        (g - want).abs() <= want.abs() * 1e-9 + 1e-9,
        "{}: {what} {g}, want {want}",
        k.name
    );
}

#[test]
fn every_kernel_renders_and_says_why_a_number_is_unknown() {
    for k in &kernels::KERNELS {
        let (j, text) = json_of(k);
        let secs = num(&j, &["interval_s"]).expect("interval");
        assert_eq!(j["host"]["kernel"], k.release, "{}", k.name);
        // PSI: absent before 4.20 (and off on RHEL 8's backport), three files until 6.1's irq.
        let p = &j["pressure"];
        match k.psi {
            Psi::None => {
                for r in ["cpu", "memory", "io", "irq"] {
                    assert!(p[r].is_null(), "{}: pressure {r} {:?}", k.name, p[r]);
                }
                let why = p["unknown"].as_str().unwrap_or("");
                let want = if k.release.starts_with("3.") {
                    "no /proc/pressure: Linux 3.10 predates PSI (4.20)"
                } else {
                    "PSI not enabled (boot with psi=1)"
                };
                assert_eq!(why, want, "{}", k.name);
                assert!(text.contains(want), "{}: batch says why:\n{text}", k.name);
            }
            Psi::NoIrq | Psi::WithIrq => {
                assert!(p["unknown"].is_null(), "{}: {:?}", k.name, p["unknown"]);
                assert!(
                    num(p, &["cpu", "some_pct"]).is_some(),
                    "{}: PSI cpu",
                    k.name
                );
                if k.psi == Psi::WithIrq {
                    near(
                        k,
                        "irq full_pct",
                        num(p, &["irq", "full_pct"]),
                        IRQ_STALL_US as f64 / (secs * 1e6) * 100.0,
                    );
                } else {
                    assert!(
                        p["irq"].is_null(),
                        "{}: no irq file, got {:?}",
                        k.name,
                        p["irq"]
                    );
                }
            }
        }
        // MemAvailable: 3.14 and later.
        let m = &j["memory"];
        if k.meminfo_absent.contains(&"MemAvailable") {
            assert!(
                m["mem_available_kb"].is_null(),
                "{}: {:?}",
                k.name,
                m["mem_available_kb"]
            );
            assert_eq!(
                m["mem_available_unknown"],
                "no MemAvailable in /proc/meminfo (Linux 3.14 added it)",
                "{}",
                k.name
            );
        } else {
            assert!(
                num(m, &["mem_available_kb"]).is_some_and(|kb| kb > 0.0),
                "{}",
                k.name
            );
            assert!(m.get("mem_available_unknown").is_none(), "{}", k.name);
        }
        // Reclaim: per zone on 3.10, summed; one counter since 4.8.
        near(
            k,
            "pgscan_kswapd_per_s",
            num(m, &["pgscan_kswapd_per_s"]),
            SCANNED as f64 / secs,
        );
        // Working-set refaults: none before 3.15; one counter until 5.9; anon + file since.
        let refault = num(m, &["workingset_refault_per_s"]);
        if k.vmstat == VmFormat::PerZone {
            assert_eq!(refault, None, "{}: no workingset counters, not 0", k.name);
            assert!(
                m["oom_kills"].is_null(),
                "{}: no oom_kill counter, got {}",
                k.name,
                m["oom_kills"]
            );
        } else {
            near(
                k,
                "workingset_refault_per_s",
                refault,
                REFAULTS as f64 / secs,
            );
        }
        // Disks: discard counts from 4.18, flush counts from 5.5; before, unknown, not 0.
        let vda = j["disks"]
            .as_array()
            .and_then(|v| v.iter().find(|d| d["disk_device"] == "vda"))
            .unwrap_or_else(|| panic!("{}: no vda", k.name));
        assert!(num(vda, &["w/s"]).is_some(), "{}: vda w/s", k.name);
        assert_eq!(
            vda["d/s"].is_null(),
            k.diskstats_fields < 15,
            "{}: d/s {}",
            k.name,
            vda["d/s"]
        );
        assert_eq!(
            vda["f/s"].is_null(),
            k.diskstats_fields < 17,
            "{}: f/s {}",
            k.name,
            vda["f/s"]
        );
        // softnet_stat: flow_limit_count from 3.11.
        let sn = &j["softirq_cpus"][0];
        assert!(
            num(sn, &["softnet_processed_per_s"]).is_some(),
            "{}",
            k.name
        );
        assert_eq!(
            sn["softnet_flow_limit_per_s"].is_null(),
            k.softnet_cols < 11,
            "{}: flow limit {}",
            k.name,
            sn["softnet_flow_limit_per_s"]
        );
        insta::assert_snapshot!(format!("old_kernel_batch_{}", k.name), text);
    }
}
