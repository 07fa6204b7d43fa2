//! Kernels in the field (issue 43 item 4), their cgroups: each kernel's fixture carries the
//! hierarchy its distribution mounts (`support::kernels::cgroups`: v1 on RHEL 7, RHEL 8 and
//! Ubuntu 20.04, v2 on 22.04 and 24.04, v2 only on a 6.12 Kubernetes node), found through
//! `proc/self/mountinfo` as on a real host. The busy container's numbers are worked out from
//! the counters the fixture writes; what a kernel's format lacks (3.10's `oom_kill`, v1's PSI
//! and `io.stat`) is unknown, not 0; the cgroups table is in `batch`, and the `cgroups` part of
//! the JSON `delta` prints is pinned per kernel.

use crate::old_kernels::json_of;
use crate::support::kernels::cgroups::{self as cg, Layout};
use crate::support::kernels::{self, Kernel};
use serde_json::Value;

fn group<'a>(k: &Kernel, j: &'a Value, name: &str) -> &'a Value {
    j["cgroups"]
        .as_array()
        .and_then(|v| v.iter().find(|g| g["name"] == name))
        .unwrap_or_else(|| panic!("{}: no cgroup {name} in {}", k.name, j["cgroups"]))
}

#[track_caller]
fn near(k: &Kernel, what: &str, got: &Value, want: f64) {
    let g = got
        .as_f64()
        .unwrap_or_else(|| panic!("{}: {what} is {got}, want {want}", k.name));
    assert!(
        (g - want).abs() <= want.abs() * 1e-9 + 1e-9,
        "{}: {what} {g}, want {want}",
        k.name
    );
}

#[test]
fn every_kernel_shows_its_cgroups_in_its_format() {
    const MIB_KB: f64 = 1024.0;
    for k in &kernels::KERNELS {
        let (j, text) = json_of(k);
        let secs = j["interval_s"].as_f64().expect("interval");
        assert_eq!(secs, 10.0, "{}", k.name);
        assert!(
            j["host"]["cgroups_unknown"].is_null(),
            "{}: {}",
            k.name,
            j["host"]["cgroups_unknown"]
        );
        let short = &cg::CONTAINER_ID[..12];
        let name = match k.cgroups {
            Layout::V2Only => format!("k8s:pod{}/{short}", &cg::POD_UID[..8]),
            _ => format!("docker:{short}"),
        };
        let c = group(k, &j, &name);
        near(
            k,
            "cpu_pct",
            &c["cpu_pct"],
            cg::CONTAINER_CPU_S as f64 / secs * 100.0,
        );
        near(k, "quota", &c["cpu_quota_cpus"], 1.0);
        near(k, "cpu_of_quota_pct", &c["cpu_of_quota_pct"], 90.0);
        let thr = cg::THROTTLED as f64 / cg::PERIODS as f64 * 100.0;
        near(k, "throttled_pct", &c["throttled_pct"], thr);
        let ms = cg::THROTTLED_S as f64 * 1000.0 / secs;
        near(k, "throttled_ms_per_s", &c["throttled_ms_per_s"], ms);
        // t1 charges 901 MiB of the 1 GiB limit, 100 MiB of it inactive page cache.
        near(k, "mem_kb", &c["mem_kb"], 901.0 * MIB_KB);
        near(k, "working set", &c["mem_working_set_kb"], 801.0 * MIB_KB);
        near(k, "mem_max_kb", &c["mem_max_kb"], 1024.0 * MIB_KB);
        near(
            k,
            "of limit",
            &c["mem_of_limit_pct"],
            801.0 / 1024.0 * 100.0,
        );
        near(k, "max events", &c["mem_max_events"], cg::FAILS as f64);
        // `oom_kill` in v1's memory.oom_control came in 4.13: unknown on 3.10, not 0.
        match k.cgroups {
            Layout::Legacy {
                oom_kill: false, ..
            } => assert!(c["oom_kills"].is_null(), "{}: {}", k.name, c["oom_kills"]),
            _ => near(k, "oom_kills", &c["oom_kills"], 1.0),
        }
        let v1 = matches!(k.cgroups, Layout::Legacy { .. } | Layout::Hybrid);
        if v1 {
            // v1 has no memory.high, no per-group PSI; blkio is not read.
            for f in [
                "mem_high_kb",
                "mem_some_pct",
                "io_some_pct",
                "write_kb_per_s",
            ] {
                assert!(c[f].is_null(), "{}: v1 {f} {}", k.name, c[f]);
            }
        } else {
            assert_eq!(c["mem_high_kb"], "max", "{}", k.name);
            near(
                k,
                "mem some",
                &c["mem_some_pct"],
                cg::MEM_SOME_US as f64 / 1e4 / secs,
            );
            near(
                k,
                "mem full",
                &c["mem_full_pct"],
                cg::MEM_FULL_US as f64 / 1e4 / secs,
            );
            near(
                k,
                "io some",
                &c["io_some_pct"],
                cg::IO_SOME_US as f64 / 1e4 / secs,
            );
            near(
                k,
                "wkB/s",
                &c["write_kb_per_s"],
                cg::WRITTEN as f64 / 1024.0 / secs,
            );
            near(k, "w/s", &c["write_iops"], cg::WIOS as f64 / secs);
            near(k, "rkB/s", &c["read_kb_per_s"], 0.0);
        }
        // No limit: v2 `max`, v1 the kernel's "unlimited" (3.10: LLONG_MAX; later 2^63 - 4096).
        let system = group(k, &j, "system.slice");
        assert_eq!(system["mem_max_kb"], "max", "{}", k.name);
        assert_eq!(system["cpu_quota_cpus"], "max", "{}", k.name);
        if k.cgroups == Layout::V2Only {
            near(
                k,
                "pod quota",
                &group(k, &j, &format!("k8s:pod{}", &cg::POD_UID[..8]))["cpu_quota_cpus"],
                2.0,
            );
        }
        // The 80-column table cuts names at 19 characters.
        let shown = &name[..name.len().min(19)];
        assert!(
            text.contains(shown),
            "{}: batch lists {shown}:\n{text}",
            k.name
        );
        assert!(
            !text.contains("no cgroup hierarchy mounted"),
            "{}:\n{text}",
            k.name
        );
        let json = serde_json::to_string_pretty(&j["cgroups"]).expect("json");
        insta::assert_snapshot!(format!("old_kernel_delta_cgroups_{}", k.name), json);
    }
}
