//! Reading a real-host capture (`tests/fixtures/real/<host>`) with the tests' own few lines of
//! parsing, never perftop's: raw `/proc` files, and the reference tools' output beside them.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `tests/fixtures/real/<name>`.
pub fn host(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/real")
        .join(name)
}

pub fn text(host: &Path, rel: impl AsRef<Path>) -> String {
    let p = host.join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `perftop --root tN snapshot -o FILE` for t0 and t1, then `perftop delta`: the JSON contract.
pub fn perftop_delta(host: &Path) -> Value {
    let bin = env!("CARGO_BIN_EXE_perftop");
    let dir = tempfile::tempdir().expect("tempdir");
    for t in ["t0", "t1"] {
        let o = Command::new(bin)
            .arg("--root")
            .arg(host.join(t))
            .arg("snapshot")
            .arg("-o")
            .arg(dir.path().join(t))
            .output()
            .expect("run perftop snapshot");
        assert!(o.status.success() && o.stderr.is_empty(), "{o:?}");
    }
    let o = Command::new(bin)
        .arg("delta")
        .arg(dir.path().join("t0"))
        .arg(dir.path().join("t1"))
        .output()
        .expect("run perftop delta");
    assert!(o.status.success(), "{o:?}");
    serde_json::from_slice(&o.stdout).expect("delta is JSON")
}

pub fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Equal up to float noise.
#[track_caller]
pub fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{what}: perftop {got}, expected {want}"
    );
}

/// First field of `tN/proc/uptime`.
pub fn uptime(host: &Path, t: &str) -> f64 {
    text(host, format!("{t}/proc/uptime"))
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .expect("uptime")
}

/// `cpuN user nice system idle iowait irq softirq steal guest guest_nice` lines, by N.
pub fn proc_stat_cpus(host: &Path, t: &str) -> BTreeMap<u32, Vec<u64>> {
    text(host, format!("{t}/proc/stat"))
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let id = w.next()?.strip_prefix("cpu")?.parse().ok()?;
            Some((id, w.map(|x| x.parse().expect("tick count")).collect()))
        })
        .collect()
}

/// The `cpu ` (all CPUs) line.
pub fn proc_stat_total(host: &Path, t: &str) -> Vec<u64> {
    let s = text(host, format!("{t}/proc/stat"));
    let line = s.lines().find(|l| l.starts_with("cpu ")).expect("cpu line");
    line.split_whitespace()
        .skip(1)
        .map(|x| x.parse().expect("ticks"))
        .collect()
}

/// `proc/softirqs`: CPU ids from the header, then each row's counts.
pub fn proc_softirqs(host: &Path, t: &str) -> (Vec<u32>, BTreeMap<String, Vec<u64>>) {
    let s = text(host, format!("{t}/proc/softirqs"));
    let mut lines = s.lines();
    let cpus = lines
        .next()
        .expect("header")
        .split_whitespace()
        .map(|c| c.trim_start_matches("CPU").parse().expect("cpu id"))
        .collect();
    let rows = lines
        .filter_map(|l| {
            let (name, counts) = l.split_once(':')?;
            let counts = counts
                .split_whitespace()
                .map(|x| x.parse().expect("count"))
                .collect();
            Some((name.trim().to_string(), counts))
        })
        .collect();
    (cpus, rows)
}

/// `<key>: <n> kB` from a meminfo file (node files prefix lines with `Node N `).
pub fn meminfo_kb(host: &Path, rel: &str, key: &str) -> u64 {
    text(host, rel)
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.split_whitespace().last()? == key).then(|| v.split_whitespace().next())?
        })
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {rel}"))
}

/// `key value` from a capture's `tN/proc/vmstat`.
pub fn proc_vmstat(host: &Path, t: &str, key: &str) -> u64 {
    text(host, format!("{t}/proc/vmstat"))
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {t}/proc/vmstat"))
}

/// One window of sysstat's JSON (`mpstat -o JSON`, `iostat -o JSON`), per row key (`cpu`,
/// `disk_device`), its numeric fields.
pub type Window = BTreeMap<String, BTreeMap<String, f64>>;

fn rows_by(rows: &Value, key: &str) -> Window {
    rows.as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let fields = r
                .as_object()
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                .collect();
            (r[key].as_str().expect("row key").to_string(), fields)
        })
        .collect()
}

/// mpstat's JSON: per window, `cpu-load` fields and softirq rates by CPU (`all` too).
pub struct Mpstat {
    pub load: Vec<Window>,
    pub soft: Vec<Window>,
}

pub fn mpstat(host: &Path, file: &str) -> Mpstat {
    let v: Value = serde_json::from_str(&text(host, file)).expect("mpstat JSON");
    let stats = v["sysstat"]["hosts"][0]["statistics"]
        .as_array()
        .expect("statistics");
    let mut m = Mpstat {
        load: Vec::new(),
        soft: Vec::new(),
    };
    for s in stats {
        m.load.push(rows_by(&s["cpu-load"], "cpu"));
        m.soft.push(intr_by_cpu(&s["soft-interrupts"]));
    }
    m
}

/// One window's `soft-interrupts` or `individual-interrupts` of mpstat's JSON: per CPU (`all`
/// too), rate by row name.
pub fn intr_by_cpu(rows: &Value) -> BTreeMap<String, BTreeMap<String, f64>> {
    let mut out = BTreeMap::new();
    for c in rows.as_array().expect("per-CPU rows") {
        let rates = c["intr"]
            .as_array()
            .expect("intr")
            .iter()
            .map(|i| {
                (
                    i["name"].as_str().expect("name").to_string(),
                    num(&i["value"]),
                )
            })
            .collect();
        out.insert(c["cpu"].as_str().expect("cpu").to_string(), rates);
    }
    out
}

/// iostat's JSON (`iostat -x -o JSON`): per window, fields by device.
pub fn iostat(host: &Path, file: &str) -> Vec<Window> {
    let v: Value = serde_json::from_str(&text(host, file)).expect("iostat JSON");
    v["sysstat"]["hosts"][0]["statistics"]
        .as_array()
        .expect("statistics")
        .iter()
        .map(|s| rows_by(&s["disk"], "disk_device"))
        .collect()
}

/// A procps table (`vmstat`, `free`): the header line holding `first` names the columns of the
/// lines below it; each data line maps column -> value (the row label, if any, dropped).
pub fn procps_rows(text: &str, first: &str) -> Vec<BTreeMap<String, u64>> {
    let mut cols: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.contains(&first) {
            cols = w.iter().map(|s| s.to_string()).collect();
            continue;
        }
        let nums: Vec<u64> = w.iter().filter_map(|x| x.parse().ok()).collect();
        if cols.is_empty() || nums.len() < cols.len() {
            continue;
        }
        let skip = nums.len() - cols.len();
        rows.push(
            cols.iter()
                .cloned()
                .zip(nums[skip..].iter().copied())
                .collect(),
        );
    }
    rows
}
