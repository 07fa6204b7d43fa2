//! Hand-made fixture roots (`tests/fixtures/<name>/{t0,t1}`), read through the real `Reader`,
//! derived, and checked against values worked out by hand from the fixture files. The arithmetic
//! is in the comments; `/proc/stat` times are USER_HZ (100/s) ticks, Δt comes from `proc/uptime`.
//!
//! Fixtures: `vm-2cpu` (KVM guest, haltpoll, no cpufreq, virtio), `intel-pstate` (4 CPUs,
//! per-CPU policies, intel_idle, NVMe, i40e), `acpi-shared` (one acpi-cpufreq policy, CPU 3
//! offline, 4.4 file widths, dm, mlx5), `numa-2node-memless` (memory-only node, 1G + 2M huge
//! pages, writers throttled), `wrap` (32-bit counters wrapping, CPU 1 offline, resets) and `bad`
//! (garbled, truncated, empty and oversized files).
//!
//! A module of the `it` test binary (`cargo test --test it fixture_roots::`; a directory apart
//! from the fixture data in `tests/fixtures/`): loading and lookup helpers here, one module per
//! fixture.

mod acpi_shared;
mod all;
mod damaged;
mod intel_pstate;
mod numa;
mod vm_2cpu;

use crate::support;
use perftop::assess::assess;
use perftop::derive::{
    derive, CpuMetrics, Derived, DiskMetrics, IrqQueueMetrics, NicMetrics, NodeMetrics,
    SoftirqCpuMetrics, StateMetrics,
};
use perftop::sample::Sample;
use std::process::Command;
use support::{fixture, read};

/// Every hand-made fixture root, and `bad`.
fn fixtures() -> impl Iterator<Item = &'static str> {
    support::FIXTURES.into_iter().chain(["bad"])
}

struct Fx {
    t0: Sample,
    t1: Sample,
    d: Derived,
}

fn load(name: &str) -> Fx {
    let t0 = read(name, "t0");
    let t1 = read(name, "t1");
    let d = derive(Some(&t0), &t1);
    Fx { t0, t1, d }
}

/// Loads a fixture that must read without a single problem.
fn load_clean(name: &str) -> Fx {
    let fx = load(name);
    assert!(fx.t0.problems.is_empty(), "{name}/t0: {:?}", fx.t0.problems);
    assert!(fx.t1.problems.is_empty(), "{name}/t1: {:?}", fx.t1.problems);
    fx
}

#[track_caller]
fn approx(got: Option<f64>, want: f64) {
    let g = got.unwrap_or_else(|| panic!("expected {want}, got null"));
    assert!(
        (g - want).abs() <= 1e-9 * want.abs().max(1.0),
        "expected {want}, got {g}"
    );
}

#[track_caller]
fn cpu(d: &Derived, id: u32) -> &CpuMetrics {
    d.cpus
        .iter()
        .find(|c| c.cpu == id)
        .unwrap_or_else(|| panic!("no cpu {id}"))
}

#[track_caller]
fn state<'a>(c: &'a CpuMetrics, name: &str) -> &'a StateMetrics {
    c.states
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("cpu {} has no state {name}", c.cpu))
}

#[track_caller]
fn disk<'a>(d: &'a Derived, name: &str) -> &'a DiskMetrics {
    d.disks
        .iter()
        .find(|x| x.disk_device == name)
        .unwrap_or_else(|| panic!("no disk {name}"))
}

#[track_caller]
fn si(d: &Derived, id: u32) -> &SoftirqCpuMetrics {
    d.softirq_cpus
        .iter()
        .find(|c| c.cpu == id)
        .unwrap_or_else(|| panic!("no softirq row for cpu {id}"))
}

#[track_caller]
fn rate(c: &SoftirqCpuMetrics, kind: &str) -> Option<f64> {
    *c.rates
        .get(kind)
        .unwrap_or_else(|| panic!("cpu {} has no {kind} rate", c.cpu))
}

#[track_caller]
fn irq(d: &Derived, n: u32) -> &IrqQueueMetrics {
    d.irq_queues
        .iter()
        .find(|q| q.irq == n)
        .unwrap_or_else(|| panic!("irq {n} is not a queue"))
}

#[track_caller]
fn node(d: &Derived, id: u32) -> &NodeMetrics {
    d.nodes
        .iter()
        .find(|n| n.node == id)
        .unwrap_or_else(|| panic!("no node {id}"))
}

#[track_caller]
fn nic<'a>(d: &'a Derived, name: &str) -> &'a NicMetrics {
    d.nics
        .iter()
        .find(|n| n.name == name)
        .unwrap_or_else(|| panic!("no nic {name}"))
}

/// Every number in the derived JSON is finite and not negative (rates, shares, sizes), and
/// every percentage is at most 100 — except %util, which iostat (sysstat 12.6) does not cap
/// either: io_ticks can run ahead of the uptime clock.
fn assert_no_negative(v: &serde_json::Value, path: &str) {
    match v {
        serde_json::Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            assert!(f.is_finite() && f >= 0.0, "{path} = {f}");
            let key = path.rsplit('.').next().unwrap_or(path);
            if key.ends_with("_pct") || ["rrqm", "wrqm", "drqm"].contains(&key) {
                assert!(f <= 100.0 + 1e-9, "{path} = {f}");
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                assert_no_negative(x, &format!("{path}[{i}]"));
            }
        }
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                assert_no_negative(x, &format!("{path}.{k}"));
            }
        }
        _ => {}
    }
}
