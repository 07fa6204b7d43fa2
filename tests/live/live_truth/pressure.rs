//! Memory pressure under a cgroup squeeze: PSI, reclaim, refaults and an OOM kill in perftop's
//! JSON against `/proc/pressure` and `/proc/vmstat` read directly.

use super::live::{self, f, Recording, Table};
use crate::support::trace::Trace;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A memory cgroup with a limit, the processes put in it, and a file to thrash; all removed on
/// drop (processes killed first, since a cgroup with members cannot be removed).
struct Squeeze {
    dir: PathBuf,
    file: PathBuf,
    procs: Vec<Child>,
    _scratch: tempfile::TempDir,
}

impl Squeeze {
    /// cgroup v1's memory hierarchy (`memory.limit_in_bytes`) or v2's (`memory.max`).
    fn new(limit_mb: u64, file_mb: u64) -> Result<Squeeze, String> {
        let name = format!("perftop-live-{}", std::process::id());
        let v1 = Path::new("/sys/fs/cgroup/memory");
        let v2 = Path::new("/sys/fs/cgroup");
        let (dir, limit_file) = if v1.join("memory.limit_in_bytes").exists() {
            (v1.join(&name), "memory.limit_in_bytes")
        } else if live::read_trim(v2.join("cgroup.controllers"))
            .is_some_and(|c| c.contains("memory"))
        {
            // The root must hand the memory controller to its children.
            let _ = std::fs::write(v2.join("cgroup.subtree_control"), "+memory");
            (v2.join(&name), "memory.max")
        } else {
            return Err("no memory cgroup controller (v1 or v2)".into());
        };
        std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        let (scratch, _) = super::scratch_dir().ok_or("no scratch directory on a disk")?;
        let s = Squeeze {
            dir,
            file: scratch.path().join("thrash"),
            procs: Vec::new(),
            _scratch: scratch,
        };
        std::fs::write(s.dir.join(limit_file), format!("{}", limit_mb << 20))
            .map_err(|e| format!("setting {limit_file}: {e}"))?;
        live::sh(&[
            "dd",
            "if=/dev/zero",
            &format!("of={}", s.file.display()),
            "bs=1M",
            &format!("count={file_mb}"),
            // Past the page cache: cached pages were charged to the writer's cgroup, and the
            // squeezed readers must fault every page in under their own limit.
            "oflag=direct",
        ])?;
        Ok(s)
    }

    /// `cmd` run by `sh` inside the cgroup.
    fn run(&mut self, cmd: &str) {
        let procs = self.dir.join("cgroup.procs");
        let child = Command::new("sh")
            .arg("-c")
            .arg(format!("echo $$ > {} && exec {cmd}", procs.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a process in the cgroup");
        self.procs.push(child);
    }
}

impl Drop for Squeeze {
    fn drop(&mut self) {
        for c in &mut self.procs {
            let _ = c.kill();
            let _ = c.wait();
        }
        // Members leave the cgroup asynchronously after they die.
        live::wait_until(Duration::from_secs(5), || {
            std::fs::remove_dir(&self.dir).is_ok()
        });
        let _ = std::fs::remove_file(&self.file);
    }
}

/// `/proc/vmstat` with the per-zone and per-type splits summed the way perftop documents.
fn vmstat() -> std::collections::BTreeMap<String, u64> {
    let mut m = live::kv("/proc/vmstat");
    let sum = |m: &std::collections::BTreeMap<String, u64>, keys: &[&str]| -> u64 {
        keys.iter().filter_map(|k| m.get(*k)).sum()
    };
    let refault = sum(&m, &["workingset_refault_anon", "workingset_refault_file"]);
    let steal = sum(&m, &["pgsteal_anon", "pgsteal_file"]);
    let scan = sum(&m, &["pgscan_anon", "pgscan_file"]);
    m.entry("workingset_refault".into()).or_insert(refault);
    m.insert("pgsteal".into(), steal);
    m.insert("pgscan".into(), scan);
    m
}

/// `sar -B D N` (C locale): per interval, column name -> value.
fn sar_b(text: &str) -> Vec<std::collections::BTreeMap<String, f64>> {
    let mut head: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.first() == Some(&"Average:") {
            continue;
        }
        if w.contains(&"majflt/s") {
            head = w.iter().map(|x| x.to_string()).collect();
            continue;
        }
        if !head.is_empty() && w.len() == head.len() {
            rows.push(
                head.iter()
                    .zip(&w)
                    .filter_map(|(h, x)| Some((h.clone(), x.parse().ok()?)))
                    .collect(),
            );
        }
    }
    rows
}

#[test]
fn a_cgroup_squeeze_shows_as_pressure_reclaim_and_an_oom_kill() {
    const T: &str = "a_cgroup_squeeze_shows_as_pressure_reclaim_and_an_oom_kill";
    let _machine = crate::support::machine();
    if !live::ready(T, &["sar"]) {
        return;
    }
    if live::psi_totals().totals.is_empty() {
        crate::support::skip(T, "no /proc/pressure (kernel without PSI)");
        return;
    }
    let mut sq = match Squeeze::new(64, 256) {
        Ok(s) => s,
        Err(why) => {
            crate::support::skip(T, &why);
            return;
        }
    };
    // Re-read a 256 MB file under a 64 MB limit: the cgroup reclaims its own page cache and
    // refaults it back, stalling on memory the whole time.
    let file = sq.file.display().to_string();
    sq.run(&format!("sh -c 'while :; do cat {file} > /dev/null; done'"));
    live::sleep_ms(1500);
    let (psi, vm0) = (live::psi_totals(), vmstat());
    const N: u32 = 5;
    // Major faults come in bursts (a squeezed `cat` pages its own code back in on each start):
    // the kernel's counter every 10 ms gives the count in perftop's own windows, where `sar`'s
    // windows start tens of ms apart from perftop's and a burst at an edge lands in one tool's
    // interval and the other's next one (CI saw 23 against 10, then 11 against 24).
    let majflt = Trace::vmstat("pgmajfault", Duration::from_millis(10));
    // The trace runs past both ends by more than the edges' slack.
    live::sleep_ms(200);
    let rec = Recording::start(1.0, N + 1);
    let sar = live::spawn("sar", &["-B", "1", &N.to_string()]);
    live::sleep_ms(2000);
    // One allocation of 256 MB under the 64 MB limit, no swap to go to: the OOM killer.
    sq.run("dd if=/dev/zero of=/dev/null bs=256M count=1");
    let frames = rec.finish();
    live::sleep_ms(200);
    let majflt = majflt.stop();
    let vm1 = vmstat();
    let sar = sar_b(&live::output(sar));
    let mut t = Table::new(T);
    assert_eq!(frames.len(), N as usize);
    let d = |k: &str| {
        vm1.get(k)
            .copied()
            .unwrap_or(0)
            .saturating_sub(vm0.get(k).copied().unwrap_or(0)) as f64
    };
    // The reference tool over the same window, interval by interval (its intervals start a
    // few ms after perftop's, so 5% of the rate plus 5/s).
    for (i, (fr, r)) in frames.iter().zip(&sar).enumerate() {
        for (field, col) in [
            ("pgscan_kswapd_per_s", "pgscank/s"),
            ("pgscan_direct_per_s", "pgscand/s"),
        ] {
            if let Some(theirs) = r.get(col) {
                t.rel(
                    &format!("[{i}] {field} vs sar -B {col}"),
                    f(fr, &["memory", field]),
                    *theirs,
                    0.05,
                    5.0,
                );
            }
        }
    }
    // Major faults in each of perftop's windows against the kernel's count over that window.
    // A window ends at the sample's wall-clock stamp; perftop reads /proc/vmstat a few ms after
    // stamping (the CPU counters come first), so each edge is known to 150 ms: the kernel's
    // count between reads inside both edges' slack is a floor, between reads outside a ceiling.
    let mut from = None;
    for (i, fr) in frames.iter().enumerate() {
        let (Some(to), Some(dt)) = (f(fr, &["host", "wall_ms"]), f(fr, &["interval_s"])) else {
            continue;
        };
        let start = from.unwrap_or(to - dt * 1000.0) as i64;
        from = Some(to);
        let ours = f(fr, &["memory", "major_faults_per_s"]).map(|r| r * dt);
        match majflt.count(start, to as i64, 150) {
            Some((lo, hi)) => t.bracket(
                &format!("[{i}] major faults vs /proc/vmstat pgmajfault every 10 ms"),
                ours,
                lo,
                hi,
                0.5,
            ),
            None => t.holds(
                &format!("[{i}] the 10 ms trace covers the window"),
                format!("{start}..{to}"),
                "covered".into(),
                false,
            ),
        }
    }
    // Counters sar does not print: perftop's count over its window cannot exceed the kernel's
    // over the longer bracket around it (2% + 2 for the rate x interval rounding).
    for (field, key) in [
        ("major_faults_per_s", "pgmajfault"),
        ("workingset_refault_per_s", "workingset_refault"),
        ("pgscan_per_s", "pgscan"),
        ("pgsteal_per_s", "pgsteal"),
        ("allocstall_per_s", "allocstall"),
    ] {
        let ours: Option<f64> = frames
            .iter()
            .map(|fr| Some(f(fr, &["memory", field])? * f(fr, &["interval_s"])?))
            .sum();
        let kernel = d(key);
        t.bracket(
            &format!("{key} over the run (<= kernel)"),
            ours,
            0.0,
            kernel,
            kernel * 0.02 + 2.0,
        );
    }
    let kills: u64 = frames
        .iter()
        .filter_map(|fr| fr["memory"]["oom_kills"].as_u64())
        .sum();
    t.holds(
        "oom_kills over the run vs /proc/vmstat oom_kill",
        kills.to_string(),
        d("oom_kill").to_string(),
        kills as f64 == d("oom_kill") && kills >= 1,
    );
    let flagged = frames.iter().any(|fr| {
        fr["findings"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x["id"] == "memory.oom_kill"))
    });
    t.holds(
        "memory.oom_kill finding",
        flagged.to_string(),
        "true".into(),
        flagged,
    );
    // The load did squeeze: the cgroup reclaimed and refaulted its page cache all along, and
    // tasks stalled on memory in every interval (~20% `some` on this VM).
    let steal: f64 = frames
        .iter()
        .filter_map(|fr| f(fr, &["memory", "pgsteal_per_s"]))
        .sum();
    t.holds(
        "pgsteal/s summed (load sanity)",
        format!("{steal:.0}"),
        "> 1000".into(),
        steal > 1000.0,
    );
    for (i, fr) in frames.iter().enumerate() {
        let some = f(fr, &["pressure", "memory", "some_pct"]).unwrap_or(0.0);
        t.holds(
            &format!("[{i}] memory some% > 0"),
            format!("{some:.2}"),
            "> 0".into(),
            some > 0.0,
        );
    }
    live::check_psi(&mut t, &psi, &frames);
    t.finish();
}
