//! Interrupts against `mpstat -I CPU` and `/proc/interrupts`: every per-type row (LOC, RES, CAL,
//! TLB...) per CPU, every IRQ line, each CPU's hard interrupts, and `ipi.storm` under a load of
//! TLB shootdowns.

use super::live::{self, f, find, LoadThread, Recording, Table};
use super::*;
use crate::support::ticker::{self, Ticks};
use std::collections::BTreeMap;

/// TLB shootdowns from safe Rust: one thread spins so this process's memory map is live on a
/// CPU, another maps and unmaps 64 MiB over and over (glibc serves allocations past its 32 MiB
/// mmap threshold with mmap, and frees them with munmap). Each munmap of a touched page
/// flushes the spinning CPU's TLB with an IPI: on x86 one function-call IPI (CAL) and one
/// shootdown (TLB) per munmap; ~50 000/s of each on the 2-vCPU VM.
fn shootdowns() -> (LoadThread, LoadThread) {
    let spin = LoadThread::start(favoured(|| {
        let mut x = 0u64;
        for i in 0..100_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
    }));
    let unmap = LoadThread::start(favoured(|| {
        let mut v: Vec<u8> = Vec::with_capacity(64 << 20);
        v.push(1);
        std::hint::black_box(&v);
    }));
    (spin, unmap)
}

/// `work`, run by a thread at nice -10 (set on its first call; on Linux the nice value is
/// the thread's): the load is the stimulus, not the thing measured (perftop and mpstat read
/// the kernel's counts whoever drives them), so it may take more than its share. Beside
/// `stress-ng --cpu 2 --io 1 --vm 1` and four builds on the 2-vCPU VM it still reached only
/// 96-389 CAL+TLB/s at nice 0 and -10 (586-854 at -20, which also starved the test's own
/// reader for 1.7 s) against ~50,000/s on a quiet VM: the rounds are set aside and the test
/// says SKIP there. Shootdowns need both CPUs running this process at once.
fn favoured(mut work: impl FnMut() + Send + 'static) -> impl FnMut() + Send + 'static {
    let mut set = false;
    move || {
        if !set {
            set = true;
            let _ = rustix::process::setpriority_process(None, -10);
        }
        work();
    }
}

/// `/proc/interrupts` by the reference reader (`support::interrupt_rows`) as the ticker's
/// counters: `ROW/CPU` per row and CPU column, `ROW/all` summed over CPUs, and `ALL/CPU` the
/// CPU's every interrupt (every row but `TLB`, which arrives as a `CAL` IPI).
fn irq_counters() -> Option<BTreeMap<String, u64>> {
    let text = live::read_trim("/proc/interrupts")?;
    let (cpus, rows) = support::interrupt_rows(&text);
    let mut out = BTreeMap::new();
    for (row, counts) in rows {
        for (cpu, n) in cpus.iter().zip(&counts) {
            out.insert(format!("{row}/{cpu}"), *n);
            if row != "TLB" {
                *out.entry(format!("ALL/{cpu}")).or_default() += n;
            }
        }
        out.insert(format!("{row}/all"), counts.iter().sum());
    }
    Some(out)
}

/// mpstat's per-CPU rate of every row it prints (`24`, `LOC`, `CAL`...), one map per CPU.
fn mpstat_rows(stat: &Value) -> BTreeMap<u32, BTreeMap<String, f64>> {
    let mut out = BTreeMap::new();
    for c in stat["individual-interrupts"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let Some(cpu) = c["cpu"].as_str().and_then(|x| x.parse().ok()) else {
            continue;
        };
        let rates = c["intr"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| Some((x["name"].as_str()?.to_string(), x["value"].as_f64()?)))
            .collect();
        out.insert(cpu, rates);
    }
    out
}

fn config(dir: &std::path::Path, ipi_per_s: f64) -> std::path::PathBuf {
    let p = dir.join(format!("ipi-{}.toml", ipi_per_s as u64));
    std::fs::write(
        &p,
        format!("[findings]\nipi_storm_per_s = {ipi_per_s:.0}\n"),
    )
    .expect("config");
    p
}

/// CAL+TLB/s on the load's busiest CPU that perftop must show in every interval; a round
/// whose load the kernel counted under twice this is set aside as starved.
const LOAD_FLOOR: f64 = 1000.0;

#[test]
fn interrupts_match_mpstat_and_the_kernel() {
    const T: &str = "interrupts_match_mpstat_and_the_kernel";
    let _machine = support::machine();
    if !live::ready(T, &["mpstat"]) {
        return;
    }
    ticker::rounds(T, 3, |_| interrupts_round(T));
}

/// A frame's interrupt window in wall-clock ms, as its JSON declares it: the frame's interval,
/// or, read in turns, `table_secs` ending `table_age_s` before the frame.
fn irq_window(fr: &Value) -> Option<(i64, i64, f64)> {
    let m = &fr["interrupts"];
    let end = f(fr, &["host", "wall_ms"])? - f(m, &["table_age_s"]).unwrap_or(0.0) * 1000.0;
    let secs = f(m, &["table_secs"]).or_else(|| f(fr, &["interval_s"]))?;
    Some(((end - secs * 1000.0) as i64, end as i64, secs))
}

/// One round: perftop's every per-CPU row against the kernel's counts read ten times a second
/// around its windows (always judged), and against mpstat where the rate was steady enough
/// that mpstat's window, started by a busy machine some ms away, reads the same.
fn interrupts_round(test: &'static str) -> Table {
    let load = shootdowns();
    live::sleep_ms(300);
    const D: u32 = 2;
    const N: usize = 2;
    let (ds, ns) = (D.to_string(), N.to_string());
    let tick = ticker::Ticker::start(100, irq_counters);
    let rec = Recording::start(D.into(), N as u32 + 1);
    let mp = live::spawn("mpstat", &["-I", "CPU", "-o", "JSON", &ds, &ns]);
    let recorded = rec.stop();
    let mpstat = sysstat(&live::output(mp));
    let ticks = tick.stop();
    drop(load);
    let frames = recorded.dump(&[]);
    let mut t = Table::new(test);
    assert_eq!(frames.len(), N, "perftop intervals");
    assert_eq!(mpstat.len(), N, "mpstat reports");
    // Foreign activity: this process's reads starved (a bracket too wide to judge), or the
    // load never reached its rate (the kernel's own count says so, whatever perftop shows).
    let gap = ticks.longest_gap_ms();
    if gap > 600 {
        t.noisy(&format!("{gap} ms between two reads of /proc/interrupts"));
    }
    let cpus: Vec<u32> = frames[0]["interrupts"]["cpus"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| Some(c["cpu"].as_u64()? as u32))
        .collect();
    let kernel_load = cpus
        .iter()
        .map(|c| {
            ticks.rate(&format!("CAL/{c}")).unwrap_or(0.0)
                + ticks.rate(&format!("TLB/{c}")).unwrap_or(0.0)
        })
        .fold(0.0, f64::max);
    // Every check below holds at any load rate (counts against the kernel's bracket, the
    // storm threshold set from perftop's own rates); the load need only stand clear of the
    // host's own IPIs (tens a second). Beside stress-ng --cpu 2 --io 1 --vm 1 and two other
    // sessions' builds it reached 1,925-4,321/s (10,000 was asked before: 3 rounds of 3 set
    // aside, a SKIP in every busy run).
    if kernel_load < LOAD_FLOOR * 2.0 {
        t.noisy(&format!(
            "the shootdown load reached {kernel_load:.0} CAL+TLB/s on its busiest CPU by the \
             kernel's count (~50,000/s on a quiet 2-vCPU VM): other work starved it"
        ));
    }
    // (name, kind) of every per-type row.
    let types: Vec<String> = frames[0]["interrupts"]["types"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| Some(x["name"].as_str()?.to_string()))
        .collect();
    assert!(types.iter().any(|x| x == "LOC"), "per-type rows: {types:?}");
    for (i, fr) in frames.iter().enumerate() {
        let Some((from, to, secs)) = irq_window(fr) else {
            t.holds(
                &format!("[{i}] window"),
                "none".into(),
                "declared".into(),
                false,
            );
            continue;
        };
        let m = &fr["interrupts"];
        // The kernel's bracket: a sample takes its wall time, then reads its files (300 ms
        // allowed for that on a busy machine); a count is rate x the declared window.
        for cpu in &cpus {
            let Some(ours) = find(&m["cpus"], "cpu", &cpu.to_string()) else {
                t.holds(
                    &format!("[{i}] cpu {cpu}"),
                    "absent".into(),
                    "present".into(),
                    false,
                );
                continue;
            };
            for name in types.iter().map(String::as_str).chain(["ALL"]) {
                let key = format!("{name}/{cpu}");
                let Some((lo, hi)) = ticks.bracket(&key, from, to, ticker::lags(i)) else {
                    continue;
                };
                let rate = if name == "ALL" {
                    f(ours, &["hard_irq_per_s"])
                } else {
                    f(ours, &["rates", name])
                };
                t.bracket(
                    &format!("[{i}] cpu {cpu} {name} counted in its window ({secs:.2} s) vs the kernel's reads around it"),
                    rate.map(|r| r * secs),
                    lo,
                    hi,
                    1.0,
                );
            }
            // The shootdown rate the storm finding reads, judged as the rows it sums.
            let both = |k: &str| ticks.bracket(&format!("{k}/{cpu}"), from, to, ticker::lags(i));
            if let (Some((lc, hc)), Some((lt, ht))) = (both("CAL"), both("TLB")) {
                t.bracket(
                    &format!("[{i}] cpu {cpu} CAL+TLB counted in its window ({secs:.2} s) vs the kernel's reads around it"),
                    f(ours, &["call_tlb_per_s"]).map(|r| r * secs),
                    lc + lt,
                    hc + ht,
                    2.0,
                );
            }
        }
        check_against_mpstat(&mut t, i, fr, &mpstat[i], &ticks);
    }
    // The load reached the spinning CPU as function-call + TLB IPIs, and ipi.storm says so
    // once its threshold is under that rate; not above it.
    let worst = frames
        .iter()
        .flat_map(|fr| {
            fr["interrupts"]["cpus"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|c| f(&c, &["call_tlb_per_s"]))
        .fold(0.0, f64::max);
    let least = frames
        .iter()
        .map(|fr| {
            fr["interrupts"]["cpus"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| f(c, &["call_tlb_per_s"]))
                .fold(0.0, f64::max)
        })
        .fold(f64::INFINITY, f64::min);
    // Below the floor in an interval, the load was starved there (a clean-clone run beside
    // three builds, load 11: 944/s in one interval, 2,300/s in the other, both inside the
    // kernel's bracket above): the storm checks below need a rate well clear of the host's own
    // IPIs, so such a round is set aside; the rate perftop showed was judged above.
    if least <= LOAD_FLOOR {
        t.noisy(&format!(
            "the shootdown load fell to {least:.0} CAL+TLB/s on the busiest CPU in one interval \
             (perftop's count, within the kernel's reads): other work starved it"
        ));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let low = config(dir.path(), (least / 2.0).floor());
    for (i, fr) in recorded
        .dump(&["--config".as_ref(), low.as_os_str()])
        .iter()
        .enumerate()
    {
        let f = fr["findings"]
            .as_array()
            .and_then(|v| v.iter().find(|x| x["id"] == "ipi.storm"));
        t.holds(
            &format!(
                "[{i}] ipi.storm at ipi_storm_per_s {:.0}",
                (least / 2.0).floor()
            ),
            f.and_then(|x| x["message"].as_str())
                .unwrap_or("none")
                .into(),
            "raised".into(),
            f.is_some(),
        );
    }
    let high = config(dir.path(), (worst * 2.0).ceil() + 1.0);
    for (i, fr) in recorded
        .dump(&["--config".as_ref(), high.as_os_str()])
        .iter()
        .enumerate()
    {
        let raised = fr["findings"]
            .as_array()
            .is_some_and(|v| v.iter().any(|x| x["id"] == "ipi.storm"));
        t.holds(
            &format!(
                "[{i}] no ipi.storm at ipi_storm_per_s {:.0}",
                (worst * 2.0).ceil() + 1.0
            ),
            if raised { "raised" } else { "none" }.into(),
            "none".into(),
            !raised,
        );
    }
    t
}

/// Frame `i` against mpstat's report `i`, where the two can be compared: a frame whose rates
/// run over its own interval (not a table read in turns), rows whose rate the ticker saw
/// steady to within the tolerance over half-second slices (mpstat sleeps its interval after
/// its own work and is started by a busy machine when it gets round to it: its window may sit
/// hundreds of ms from perftop's). Others are noted, not judged: the kernel bracket judged them.
fn check_against_mpstat(t: &mut Table, i: usize, fr: &Value, stat: &Value, ticks: &Ticks) {
    let m = &fr["interrupts"];
    if f(m, &["table_secs"]).is_some() {
        t.note(
            &format!("[{i}] vs mpstat"),
            "read in turns",
            "windows differ: not compared",
        );
        return;
    }
    let theirs = mpstat_rows(stat);
    let steady = |key: &str, tol: f64| -> bool {
        ticks
            .spread(key, 500)
            .is_some_and(|(lo, hi)| hi - lo <= tol)
    };
    let mut unsteady = Vec::new();
    // 5% of the row's rate summed over CPUs (the spinning thread may move between CPUs), plus
    // 10/s; the rows that come in bursts (rescheduling IPIs) are left to the steadiness test.
    let total = |name: &str| theirs.values().filter_map(|r| r.get(name)).sum::<f64>();
    for (cpu, rows) in &theirs {
        let Some(ours) = find(&m["cpus"], "cpu", &cpu.to_string()) else {
            t.holds(
                &format!("[{i}] cpu {cpu}"),
                "absent".into(),
                "present".into(),
                false,
            );
            continue;
        };
        for (name, &r) in rows.iter().filter(|(n, _)| n.parse::<u32>().is_err()) {
            let tol = 0.05 * total(name) + 10.0;
            if !steady(&format!("{name}/{cpu}"), tol) {
                unsteady.push(format!("cpu {cpu} {name}"));
                continue;
            }
            t.close(
                &format!("[{i}] cpu {cpu} {name}/s vs mpstat"),
                f(ours, &["rates", name]),
                r,
                tol,
            );
        }
        // Every interrupt of the CPU: mpstat's rows summed (lines and types) but TLB, whose
        // shootdowns arrived as CAL IPIs.
        let all: f64 = rows
            .iter()
            .filter(|(n, _)| *n != "TLB")
            .map(|(_, r)| r)
            .sum();
        let tol = 0.05
            * theirs
                .values()
                .map(|r| r.values().sum::<f64>())
                .sum::<f64>()
            + 20.0;
        if steady(&format!("ALL/{cpu}"), tol) {
            t.close(
                &format!("[{i}] cpu {cpu} hard irq/s vs mpstat rows summed"),
                f(ours, &["hard_irq_per_s"]),
                all,
                tol,
            );
        } else {
            unsteady.push(format!("cpu {cpu} all"));
        }
    }
    // Every IRQ line mpstat saw take interrupts; perftop lists the busy ones (an absent line
    // took none in its interval).
    let mut lines: BTreeMap<&str, f64> = BTreeMap::new();
    for rows in theirs.values() {
        for (name, r) in rows.iter().filter(|(n, _)| n.parse::<u32>().is_ok()) {
            *lines.entry(name).or_default() += r;
        }
    }
    for (irq, r) in lines.iter().filter(|(_, r)| **r > 0.0) {
        if !steady(&format!("{irq}/all"), 0.05 * r + 5.0) {
            unsteady.push(format!("IRQ {irq}"));
            continue;
        }
        let ours = find(&m["lines"], "irq", irq).map_or(Some(0.0), |l| f(l, &["per_s"]));
        t.rel(&format!("[{i}] IRQ {irq}/s vs mpstat"), ours, *r, 0.05, 5.0);
    }
    if !unsteady.is_empty() {
        t.note(
            &format!("[{i}] unsteady, not compared with mpstat"),
            &unsteady.join(", "),
            "kernel bracket only",
        );
    }
    // Summed over CPUs, the hard interrupts are the kernel's `intr` total, over windows a few
    // ms apart (the sample reads /proc/interrupts after /proc/stat) while the test's own load
    // swings the rate: CI saw 1.2% at 64k IRQ/s and a clean-clone run 1.8% at 41k IRQ/s, with
    // every row unsteady over half-second slices. 2.5% + 20/s still fails a table counted
    // twice (100%), a CPU left out (50%) or a rate over the wrong interval.
    let sum: f64 = m["cpus"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| f(c, &["hard_irq_per_s"]))
        .sum();
    // Where a CPU's total swung over half-second slices, the two files' windows a few ms apart
    // read different rates: 3.7% apart beside three builds (load 11), every row unsteady. Each
    // CPU's total was judged against the kernel's reads above; here 10% still fails a table
    // counted twice or a rate over the wrong interval (50-100%).
    let swung = unsteady.iter().any(|u| u.ends_with(" all"));
    if let Some(intr) = f(m, &["intr_per_s"]) {
        t.rel(
            &format!(
                "[{i}] hard irq/s summed over CPUs vs /proc/stat intr{}",
                if swung { " (totals unsteady)" } else { "" }
            ),
            Some(sum),
            intr,
            if swung { 0.10 } else { 0.025 },
            20.0,
        );
    }
}
