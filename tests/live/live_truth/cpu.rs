//! CPU against mpstat -P ALL -u under a pinned burner.

use super::live::{self, f, find, Load, Recording, Table};
use super::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;

/// A shell busy loop pinned to CPU 1 (pure user time there; CPU 0 shows whatever else runs),
/// given 300 ms to settle; or a visible SKIP of test `test` on a host with one CPU.
fn burner_on_cpu_1(test: &str) -> Option<Load> {
    if online_cpus() < 2 {
        support::skip(test, "needs 2 CPUs (the burner is pinned to CPU 1)");
        return None;
    }
    let burner = Load(
        Command::new("taskset")
            .args(["-c", "1", "sh", "-c", "while :; do :; done"])
            .spawn()
            .expect("start burner"),
    );
    live::sleep_ms(300);
    Some(burner)
}

#[test]
fn cpu_matches_mpstat() {
    const T: &str = "cpu_matches_mpstat";
    let _machine = support::machine();
    if !live::ready(T, &["mpstat", "taskset"]) {
        return;
    }
    let Some(_burner) = burner_on_cpu_1(T) else {
        return;
    };
    support::ticker::rounds(T, 3, |_| {
        let psi = live::psi_totals();
        const D: u32 = 2;
        const N: usize = 2;
        let rec = Recording::start(D.into(), N as u32 + 1);
        let mp = live::spawn(
            "mpstat",
            &[
                "-P",
                "ALL",
                "-u",
                "-o",
                "JSON",
                &D.to_string(),
                &N.to_string(),
            ],
        );
        let frames = rec.finish();
        let stats = sysstat(&live::output(mp));
        let mut t = Table::new(T);
        assert_eq!(frames.len(), N, "perftop intervals");
        assert_eq!(stats.len(), N, "mpstat reports");
        // /proc/stat counts 10 ms ticks: over a 2 s interval one tick is 0.5 percentage point of
        // one CPU. The two tools read at instants a few ms to ~20 ms apart at each end of the
        // interval (separate processes, started together), so up to ~2 ticks of whatever else runs
        // can fall on the other side of a boundary, at each end: 3 points. Another build running
        // on this 2-vCPU box makes CPU 0 busier, not the windows further apart.
        const TOL: f64 = 3.0;
        for (i, (fr, st)) in frames.iter().zip(&stats).enumerate() {
            for row in st["cpu-load"].as_array().into_iter().flatten() {
                let g = |k: &str| row[k].as_f64().unwrap_or(f64::NAN);
                let id = row["cpu"].as_str().unwrap_or("?");
                // C0% = busy/(busy+idle+iowait+steal): iowait is idle time, so C0 is
                // 100 - %idle - %iowait - %steal, not mpstat's 100 - %idle.
                let c0_ref = 100.0 - g("idle") - g("iowait") - g("steal");
                let (c0, user, sys, iowait, soft, irq) = if id == "all" {
                    let h = &fr["host"];
                    (
                        f(h, &["busy_pct"]),
                        None,
                        None,
                        f(h, &["iowait_pct"]),
                        None,
                        None,
                    )
                } else {
                    let c = find(&fr["cpus"], "cpu", id).expect("cpu in perftop");
                    let p = |k: &str| f(c, &[k]);
                    (
                        p("c0_pct"),
                        p("user_pct"),
                        p("system_pct"),
                        p("iowait_pct"),
                        p("soft_pct"),
                        p("irq_pct"),
                    )
                };
                let m = |name: &str| format!("[{i}] cpu {id} {name}");
                t.close(&m("c0_pct vs 100-%idle-%iowait-%steal"), c0, c0_ref, TOL);
                t.close(&m("iowait_pct vs %iowait"), iowait, g("iowait"), TOL);
                if id == "all" {
                    continue;
                }
                t.close(
                    &m("user_pct vs %usr+%nice"),
                    user,
                    g("usr") + g("nice"),
                    TOL,
                );
                t.close(&m("system_pct vs %sys"), sys, g("sys"), TOL);
                t.close(&m("soft_pct vs %soft"), soft, g("soft"), TOL);
                t.close(&m("irq_pct vs %irq"), irq, g("irq"), TOL);
                if g("iowait") > 0.0 {
                    t.note(
                        &m("c0_pct vs 100-%idle (mpstat busy counts iowait)"),
                        &format!("{:.2}", c0.unwrap_or(f64::NAN)),
                        &format!("{:.2}", 100.0 - g("idle")),
                    );
                }
            }
            // The setup itself: the pinned burner must show, or the comparison proves little. It
            // gets most of cpu 1, not all: a CI run saw 94.03% (mpstat 93.97%) beside the test's
            // own disk writer on cpu 0.
            let c1 = find(&fr["cpus"], "cpu", "1").and_then(|c| f(c, &["c0_pct"]));
            // Under 90: another program's load (or the host's steal) took cpu 1 from the burner,
            // and the round is retried (stress-ng beside it: 87%).
            if c1.is_some_and(|c| c >= 90.0) {
                t.holds(
                    &format!("[{i}] burner visible on cpu 1 (c0 >= 90)"),
                    format!("{:.2}", c1.unwrap_or(f64::NAN)),
                    ">= 90".into(),
                    true,
                );
            } else {
                t.noisy(&format!(
                    "[{i}] the burner's cpu 1 only {:.1}% busy (steal {:.1}%)",
                    c1.unwrap_or(f64::NAN),
                    find(&fr["cpus"], "cpu", "1")
                        .and_then(|c| f(c, &["steal_pct"]))
                        .unwrap_or(f64::NAN)
                ));
            }
        }
        live::check_psi(&mut t, &psi, &frames);
        t
    });
}

/// `cpupower monitor -m Idle_Stats`' table: per CPU, each idle state's residency % in state
/// order (its header truncates the names).
fn idle_stats(text: &str) -> BTreeMap<String, Vec<f64>> {
    text.lines()
        .filter_map(|l| {
            let mut cols = l.split('|').map(str::trim);
            let cpu = cols.next()?;
            cpu.parse::<u32>().ok()?;
            let vals: Option<Vec<f64>> = cols.map(|v| v.parse().ok()).collect();
            Some((cpu.to_string(), vals?))
        })
        .collect()
}

/// Each CPU's idle-state residency against `cpupower monitor -m Idle_Stats` (linux-cpupower:
/// each state's sysfs `time` over its interval) over the same 4 s, with CPU 1 held busy by a
/// pinned burner (its states near 0 %) and CPU 0 mostly idle; and, in every interval, C0 +
/// steal + the states' residency near 100 %, two sources (`/proc/stat` ticks, sysfs µs) that
/// must agree.
#[test]
fn idle_states_match_cpupower_monitor() {
    const T: &str = "idle_states_match_cpupower_monitor";
    let _machine = support::machine();
    if !live::ready(T, &["cpupower", "taskset"]) {
        return;
    }
    if !std::path::Path::new("/sys/devices/system/cpu/cpu0/cpuidle/state0").exists() {
        support::skip(T, "no cpuidle driver: no idle states to compare");
        return;
    }
    let Some(_burner) = burner_on_cpu_1(T) else {
        return;
    };
    const D: u32 = 2;
    const N: u32 = 2;
    let rec = Recording::start(D.into(), N + 1);
    let cp = live::spawn(
        "cpupower",
        &["monitor", "-m", "Idle_Stats", "-i", &(D * N).to_string()],
    );
    let frames = rec.finish();
    let theirs = idle_stats(&live::output(cp));
    let mut t = Table::new(T);
    assert_eq!(frames.len(), N as usize, "perftop intervals");
    // The tools' windows start and end a few ms to tens of ms apart, and the kernel credits
    // a state's time when the CPU leaves it: an idle CPU here wakes 30-70 times a second, so
    // a sleep across an edge is ~20 ms of 4 s. perftop fits a state's share into /proc/stat's
    // idle when sysfs strays from it by more than 2 % of the interval. 3 points.
    const TOL: f64 = 3.0;
    for (id, theirs) in &theirs {
        let per_frame: Vec<&Value> = frames
            .iter()
            .filter_map(|fr| find(&fr["cpus"], "cpu", id))
            .collect();
        for (k, want) in theirs.iter().enumerate() {
            let ours: Vec<f64> = per_frame
                .iter()
                .filter_map(|c| c["states"].get(k).and_then(|s| f(s, &["residency_pct"])))
                .collect();
            let mean = (ours.len() == N as usize).then(|| ours.iter().sum::<f64>() / f64::from(N));
            let name = per_frame
                .first()
                .and_then(|c| c["states"].get(k))
                .and_then(|s| s["name"].as_str())
                .unwrap_or("?");
            t.close(
                &format!("cpu {id} {name} residency %, mean of the intervals"),
                mean,
                *want,
                TOL,
            );
        }
    }
    for (i, fr) in frames.iter().enumerate() {
        for c in fr["cpus"].as_array().into_iter().flatten() {
            let id = c["cpu"].as_u64().unwrap_or(u64::MAX);
            let states: Option<f64> = c["states"]
                .as_array()
                .and_then(|ss| ss.iter().map(|s| f(s, &["residency_pct"])).sum());
            let sum = f(c, &["c0_pct"])
                .zip(f(c, &["steal_pct"]))
                .zip(states)
                .map(|((a, b), s)| a + b + s);
            t.close(
                &format!("[{i}] cpu {id} c0 + steal + states' residency"),
                sum,
                100.0,
                TOL,
            );
        }
    }
    t.holds(
        "cpupower listed every CPU",
        theirs.len().to_string(),
        online_cpus().to_string(),
        theirs.len() == online_cpus(),
    );
    t.finish();
}
