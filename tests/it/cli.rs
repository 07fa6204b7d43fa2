//! The command line contract: `perftop snapshot`, `perftop delta` and their failure modes,
//! run as the real binary against the fixture roots.

use crate::support;
use perftop::assess::assess;
use perftop::findings::Thresholds;
use perftop::root::Root;
use perftop::source::Reader;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::fixture;

fn perftop(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(args)
        .output()
        .expect("run perftop")
}

/// `perftop snapshot --root ROOT -o OUT`, which must succeed.
fn snapshot(root: &Path, out: &Path) {
    let o = perftop(&[
        "snapshot".as_ref(),
        "--root".as_ref(),
        root.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert!(
        o.status.success(),
        "snapshot {}: {}",
        root.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `perftop delta A B`, which must succeed and print JSON.
fn delta(a: &Path, b: &Path) -> Value {
    let o = perftop(&["delta".as_ref(), a.as_os_str(), b.as_os_str()]);
    assert!(
        o.status.success(),
        "delta: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("delta prints JSON")
}

/// Snapshots `<fixture>/t0` and `<fixture>/t1` into `dir`, returns their paths.
fn snapshots(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let a = dir.join(format!("{name}-t0.json"));
    let b = dir.join(format!("{name}-t1.json"));
    snapshot(&fixture(name).join("t0"), &a);
    snapshot(&fixture(name).join("t1"), &b);
    (a, b)
}

fn find<'a>(list: &'a Value, key: &str, want: &Value) -> Option<&'a Value> {
    list.as_array()?.iter().find(|x| &x[key] == want)
}

const DISK_KEYS: [&str; 22] = [
    "r/s", "w/s", "d/s", "f/s", "rkB/s", "wkB/s", "dkB/s", "rrqm/s", "wrqm/s", "drqm/s", "rrqm",
    "wrqm", "drqm", "r_await", "w_await", "d_await", "f_await", "rareq-sz", "wareq-sz", "dareq-sz",
    "aqu-sz", "util",
];

#[test]
fn delta_json_has_the_contract_keys() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = snapshots(dir.path(), "acpi-shared");
    let v = delta(&a, &b);
    for key in [
        "interval_s",
        "cpus",
        "policies",
        "nodes",
        "hugepages",
        "dirty",
        "disks",
        "softirq_cpus",
        "irq_queues",
        "memory",
        "pressure",
        "interrupts",
        "findings",
    ] {
        assert!(v.get(key).is_some(), "no top-level {key:?}");
    }
    let irq = &v["interrupts"];
    for key in [
        "lines",
        "lines_total",
        "lines_idle",
        "types",
        "cpus",
        "intr_per_s",
        "ctxt_per_s",
        "unknown",
    ] {
        assert!(irq.get(key).is_some(), "interrupts has no {key:?}");
    }
    assert!(irq["unknown"].is_null());
    let lines = irq["lines"].as_array().expect("lines");
    assert!(!lines.is_empty(), "a line took interrupts");
    for key in [
        "irq",
        "name",
        "chip",
        "per_s",
        "boot_per_s",
        "cpus",
        "affinity",
        "effective_affinity",
        "node",
    ] {
        assert!(
            lines[0].get(key).is_some(),
            "interrupts.lines[] has no {key:?}"
        );
    }
    for key in [
        "cpu",
        "hard_irq_per_s",
        "ipi_per_s",
        "call_tlb_per_s",
        "rates",
    ] {
        assert!(
            irq["cpus"][0].get(key).is_some(),
            "interrupts.cpus[] has no {key:?}"
        );
    }
    for key in ["name", "desc", "kind"] {
        assert!(
            irq["types"][0].get(key).is_some(),
            "interrupts.types[] has no {key:?}"
        );
    }
    // The per-type rows of this 4.4 kernel: NMI and LOC on each CPU (ERR/MIS are one count).
    let types: Vec<&str> = irq["types"]
        .as_array()
        .expect("types")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(types, ["NMI", "LOC"]);
    assert_eq!(irq["types"][1]["kind"], "timer");
    for key in [
        "swap_in_kb_per_s",
        "pgscan_direct_per_s",
        "pgsteal_per_s",
        "allocstall_per_s",
        "oom_kills",
        "kswapd_pct",
        "swappiness",
    ] {
        assert!(v["memory"].get(key).is_some(), "memory has no {key:?}");
    }
    // This fixture (a 4.4 kernel) has no /proc/pressure: every resource null and the reason
    // said, never 0%; a kernel before 4.18 predates PSI rather than having it off.
    for res in ["cpu", "memory", "io", "irq"] {
        assert!(v["pressure"][res].is_null(), "pressure.{res}");
    }
    assert_eq!(
        v["pressure"]["unknown"].as_str(),
        Some("no /proc/pressure: Linux 4.4 predates PSI (4.20)")
    );
    assert_eq!(v["interval_s"].as_f64(), Some(1.5));
    let disks = v["disks"].as_array().expect("disks");
    assert!(!disks.is_empty());
    for d in disks {
        for key in DISK_KEYS {
            assert!(d.get(key).is_some(), "{} has no {key:?}", d["disk_device"]);
        }
    }
    // Unknown is null (the key is there), never 0: sda has no discard/flush fields on 4.4,
    // cpu3 is offline, sda1's 4-field line has no ticks.
    let sda = find(&v["disks"], "disk_device", &"sda".into()).expect("sda");
    assert!(sda["d/s"].is_null() && sda["f_await"].is_null());
    assert_eq!(sda["r/s"].as_f64(), Some(100.0));
    let sda1 = find(&v["disks"], "disk_device", &"sda1".into()).expect("sda1");
    assert!(sda1["util"].is_null() && sda1["r_await"].is_null());
    let cpu3 = find(&v["cpus"], "cpu", &3.into()).expect("cpu3");
    assert_eq!(cpu3["online"], Value::Bool(false));
    for key in ["c0_pct", "mhz", "policy", "steal_pct"] {
        assert!(cpu3.get(key).is_some_and(Value::is_null), "cpu3 {key}");
    }
    let cpu0 = find(&v["cpus"], "cpu", &0.into()).expect("cpu0");
    assert!(cpu0["states"][0]["miss_pct"].is_null()); // no above/below on 4.4
}

#[test]
fn delta_through_json_equals_derive_in_process() {
    // Snapshots must carry everything derive needs: the CLI result equals deriving the
    // directly read samples (apart from the wall clock of the reads).
    let dir = tempfile::tempdir().expect("tempdir");
    for name in ["vm-2cpu", "intel-pstate", "numa-2node-memless", "wrap"] {
        let (a, b) = snapshots(dir.path(), name);
        let mut cli = delta(&a, &b);
        let t0 = Reader::new(Root::new(fixture(name).join("t0"))).sample();
        let t1 = Reader::new(Root::new(fixture(name).join("t1"))).sample();
        // Through text, as the CLI prints it (f32 load averages print shortest-form).
        let text = serde_json::to_string(&assess(Some(&t0), &t1, &Thresholds::default()))
            .expect("serialize");
        let mut direct: Value = serde_json::from_str(&text).expect("parse");
        for v in [&mut cli, &mut direct] {
            v["host"]["wall_ms"] = Value::Null;
        }
        assert_eq!(cli, direct, "{name}");
    }
}

#[test]
fn delta_of_mismatched_samples() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = snapshots(dir.path(), "vm-2cpu");
    // Take cpu1 and vda1 out of the older snapshot: they appear only in the newer one.
    let mut old: Value =
        serde_json::from_str(&std::fs::read_to_string(&a).expect("read")).expect("json");
    old["cpu"]["cpus"]
        .as_array_mut()
        .expect("cpus")
        .retain(|c| c["id"] != 1);
    old["disks"]
        .as_array_mut()
        .expect("disks")
        .retain(|d| d["name"] != "vda1");
    let trimmed = dir.path().join("trimmed.json");
    std::fs::write(&trimmed, old.to_string()).expect("write");

    let v = delta(&trimmed, &b);
    let cpu0 = find(&v["cpus"], "cpu", &0.into()).expect("cpu0");
    assert_eq!(cpu0["c0_pct"].as_f64(), Some(23.0));
    let cpu1 = find(&v["cpus"], "cpu", &1.into()).expect("cpu1 is still listed");
    assert!(cpu1["c0_pct"].is_null());
    let vda1 = find(&v["disks"], "disk_device", &"vda1".into()).expect("vda1");
    for key in DISK_KEYS {
        assert!(vda1[key].is_null(), "vda1 {key} without a previous sample");
    }
    assert_eq!(
        find(&v["disks"], "disk_device", &"vda".into()).expect("vda")["r/s"].as_f64(),
        Some(150.0)
    );
    // The other way round, a disk that vanished is simply not reported.
    let v = delta(&b, &trimmed);
    assert!(find(&v["disks"], "disk_device", &"vda1".into()).is_none());
    assert!(
        v["interval_s"].is_null(),
        "time went backwards: no interval"
    );

    // Samples of two different hosts: nothing pairs up, nothing breaks.
    let (_, other) = snapshots(dir.path(), "intel-pstate");
    let v = delta(&a, &other);
    let nvme = find(&v["disks"], "disk_device", &"nvme0n1".into()).expect("nvme0n1");
    assert!(nvme["r/s"].is_null());
    let cpu3 = find(&v["cpus"], "cpu", &3.into()).expect("cpu3");
    assert!(cpu3["c0_pct"].is_null());
}

#[test]
fn delta_rejects_what_is_not_a_snapshot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, _) = snapshots(dir.path(), "vm-2cpu");
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "this is not json\n").expect("write");
    let o = perftop(&["delta".as_ref(), a.as_os_str(), junk.as_os_str()]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("junk.json"), "{err}");
    assert!(err.contains("not a perftop snapshot"), "{err}");
    assert!(o.stdout.is_empty());
    // JSON, but not a sample.
    std::fs::write(&junk, "[1, 2, 3]\n").expect("write");
    let o = perftop(&["delta".as_ref(), junk.as_os_str(), a.as_os_str()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a perftop snapshot"));
    // A file that is not there.
    let gone = dir.path().join("gone.json");
    let o = perftop(&["delta".as_ref(), a.as_os_str(), gone.as_os_str()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("gone.json"));
}

#[test]
fn snapshot_of_a_missing_root_fails_clearly() {
    let o = perftop(&[
        "snapshot".as_ref(),
        "--root".as_ref(),
        "/nonexistent/perftop-root".as_ref(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/nonexistent/perftop-root"), "{err}");
    assert!(err.contains("not a directory"), "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn snapshot_of_a_bad_root_succeeds_and_lists_problems() {
    let root = fixture("bad").join("t1");
    let o = perftop(&["snapshot".as_ref(), "--root".as_ref(), root.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    // One stderr line per problem, with the full path under the root.
    assert!(
        err.lines()
            .any(|l| l.contains("proc/vmstat") && l.contains("not a regular file")),
        "{err}"
    );
    assert!(err.lines().any(|l| l.contains("proc/diskstats")), "{err}");
    assert!(err.lines().all(|l| l.starts_with("perftop: ")), "{err}");
    let v: Value = serde_json::from_slice(&o.stdout).expect("snapshot is JSON");
    let problems = v["problems"].as_array().expect("problems listed");
    assert_eq!(problems.len(), err.lines().count());
    // The good parts are there.
    assert_eq!(
        v["memory"]["meminfo"]["mem_total"].as_u64(),
        Some(2_000_000)
    );
    // And a bad root still derives.
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = snapshots(dir.path(), "bad");
    let v = delta(&a, &b);
    assert!(!v["host"]["problems"]
        .as_array()
        .expect("problems")
        .is_empty());
}

#[test]
fn snapshot_with_nan_load_average_reads_back() {
    // "nan" parses as a float; stored as-is it became JSON null and `delta` refused the file.
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("proc")).expect("mkdir");
    std::fs::write(root.join("proc/loadavg"), "nan inf 0.5 1/100 42\n").expect("write");
    std::fs::write(root.join("proc/uptime"), "10.00 5.00\n").expect("write");
    let snap = dir.path().join("s.json");
    snapshot(&root, &snap);
    let v = delta(&snap, &snap);
    assert!(v["host"]["loadavg"].is_null());
    assert!(v["host"]["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .any(|p| p.as_str().is_some_and(|s| s.starts_with("proc/loadavg"))));
}

/// `--width` is bounded everywhere a width is accepted: huge values are a clear error, not a
/// capacity-overflow panic or gigabytes of allocation.
#[test]
fn width_is_bounded() {
    let root = fixture("vm-2cpu/t1");
    for w in ["18446744073709551615", "4294967296", "1001", "19", "x"] {
        for args in [
            vec!["--root", root.to_str().expect("utf8"), "batch", "-n", "1"],
            vec!["dump", "/nonexistent/rec"],
        ] {
            let mut a: Vec<&std::ffi::OsStr> = args.iter().map(|s| s.as_ref()).collect();
            a.push("--width".as_ref());
            a.push(w.as_ref());
            let out = perftop(&a);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{w}: {err}");
            assert!(err.contains("--width"), "{err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
    let ok = perftop(&[
        "--root".as_ref(),
        root.as_os_str(),
        "batch".as_ref(),
        "-n".as_ref(),
        "1".as_ref(),
        "--width".as_ref(),
        "1000".as_ref(),
    ]);
    assert!(ok.status.success());
}

/// issue 37: `--width` 20..59 was accepted and gave 60 columns. The range is what a report
/// can be, 60..1000: 59 is refused with the range, 60 gives lines of at most 60 columns.
#[test]
fn width_below_sixty_is_refused_not_widened() {
    let root = fixture("vm-2cpu/t1");
    let run = |w: &str| {
        perftop(&[
            "--root".as_ref(),
            root.as_os_str(),
            "batch".as_ref(),
            "-n".as_ref(),
            "1".as_ref(),
            "--width".as_ref(),
            w.as_ref(),
        ])
    };
    for w in ["20", "59"] {
        let out = run(w);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--width {w}: {err}");
        assert!(err.contains("between 60 and 1000"), "{err}");
    }
    let out = run("60");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(
        (40..=60).contains(&widest),
        "widest line {widest} at --width 60"
    );
}

/// issue 37: started with stdout closed (`>&-`), the text modes exited 0 having written into
/// the `/dev/null` the Rust runtime puts on a closed descriptor. Now: status 1 and a message
/// on stderr; `> /dev/null` (write-only) is still a way to discard the output, status 0.
#[test]
fn closed_stdout_is_an_error_not_silence() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = fixture("vm-2cpu/t1");
    let root = root.to_str().expect("utf8");
    let snap = dir.path().join("s.json");
    let snap = snap.to_str().expect("utf8");
    let made = perftop(&[
        "--root".as_ref(),
        root.as_ref(),
        "snapshot".as_ref(),
        "-o".as_ref(),
        snap.as_ref(),
    ]);
    assert!(made.status.success());
    // `exec` in sh: perftop itself runs with the redirection.
    let sh = |redirect: &str, args: &[&str]| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("exec \"$0\" \"$@\" {redirect}"))
            .arg(env!("CARGO_BIN_EXE_perftop"))
            .args(args)
            .output()
            .expect("run sh")
    };
    for args in [
        &["--root", root, "batch", "-n", "1"][..],
        &["--root", root, "snapshot"],
        &["delta", snap, snap],
        &["record", "--print-unit"],
    ] {
        let o = sh(">&-", args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?} >&-: {err}");
        assert!(err.contains("stdout is closed"), "{args:?}: {err}");
        let o = sh(">/dev/null", args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{args:?} >/dev/null: {err}");
        assert!(!err.contains("stdout is closed"), "{args:?}: {err}");
    }
}

/// A reader that goes away (`perftop batch | head`) ends batch quietly with status 0, as the
/// Unix tools end on a closed pipe.
#[test]
fn a_closed_pipe_ends_batch_quietly() {
    let root = fixture("vm-2cpu/t1");
    let mut child = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(["--root".as_ref(), root.as_os_str()])
        .args(["batch", "-d", "0.25", "-n", "40"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn perftop");
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("wait");
    assert!(o.status.success(), "{:?}", o.status);
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
}

/// `--record-dir` is checked when the dashboard starts, before it needs a terminal: a missing
/// directory, a file, or a directory that cannot be written is a clear error with status 1,
/// not a surprise when `R` is pressed. A good one passes the check (the run then stops only
/// because the test has no terminal).
#[test]
fn record_dir_is_checked_at_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = fixture("vm-2cpu/t1");
    let run = |record_dir: &Path| {
        perftop(&[
            "--root".as_ref(),
            root.as_os_str(),
            "--record-dir".as_ref(),
            record_dir.as_os_str(),
        ])
    };
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").expect("write");
    for (bad, why) in [
        (
            Path::new("/nonexistent/perftop-rec"),
            "No such file or directory",
        ),
        (file.as_path(), "not a directory"),
    ] {
        let o = run(bad);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{}: {err}", bad.display());
        assert!(
            err.contains(&format!("--record-dir {}", bad.display())) && err.contains(why),
            "{err}"
        );
        assert!(
            !err.contains("needs a terminal"),
            "checked before the terminal: {err}"
        );
        assert!(o.stdout.is_empty());
    }
    // Writable: the check passes, leaves nothing behind, and the run goes on to want a terminal.
    let ok = dir.path().join("recs");
    std::fs::create_dir(&ok).expect("mkdir");
    let o = run(&ok);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("needs a terminal"), "{err}");
    assert_eq!(std::fs::read_dir(&ok).expect("read_dir").count(), 0);
    // Read-only for its owner: only root writes there anyway, which the check finds out by trying.
    use std::os::unix::fs::PermissionsExt;
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).expect("mkdir");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let o = run(&ro);
    let err = String::from_utf8_lossy(&o.stderr);
    if support::is_root() {
        assert!(
            err.contains("needs a terminal"),
            "root writes into a 0555 dir: {err}"
        );
    } else {
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("cannot create a file there"), "{err}");
    }
}

#[test]
fn delta_of_samples_from_before_per_cpu_interrupt_types() {
    // A snapshot written before perftop kept `arch_rows` (the per-type rows per CPU): the lines
    // still have rates, the per-CPU numbers are null with the reason, never a sum that leaves
    // out the timer and every IPI.
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = snapshots(dir.path(), "vm-2cpu");
    let old = |p: &Path| {
        let mut v: Value =
            serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("json");
        let irqs = v["net"]["interrupts"].as_object_mut().expect("interrupts");
        assert!(irqs.remove("arch_rows").is_some());
        assert!(irqs.contains_key("arch_totals"));
        let out = p.with_extension("old.json");
        std::fs::write(&out, v.to_string()).expect("write");
        out
    };
    let v = delta(&old(&a), &old(&b));
    let irq = &v["interrupts"];
    assert_eq!(
        irq["unknown"].as_str(),
        Some("recorded before perftop kept per-CPU interrupt types")
    );
    assert!(irq["cpus"][0]["hard_irq_per_s"].is_null());
    assert!(irq["cpus"][0]["ipi_per_s"].is_null());
    assert_eq!(
        find(&irq["lines"], "irq", &27.into()).expect("irq 27")["per_s"].as_f64(),
        Some(500.0)
    );
}

/// `snapshot -o` into a directory another user could write: a link planted at the path is
/// refused, and its target keeps its bytes.
#[test]
fn snapshot_never_writes_through_a_planted_link() {
    let dir = tempfile::tempdir().expect("tempdir");
    let decoy = dir.path().join("decoy");
    std::fs::write(&decoy, "decoy\n").expect("decoy");
    let out = dir.path().join("snap.json");
    std::os::unix::fs::symlink(&decoy, &out).expect("symlink");
    let o = perftop(&[
        "snapshot".as_ref(),
        "--root".as_ref(),
        fixture("vm-2cpu").join("t0").as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("symbolic link"));
    assert_eq!(std::fs::read_to_string(&decoy).expect("decoy"), "decoy\n");
    // A plain path is written as before.
    std::fs::remove_file(&out).expect("rm");
    snapshot(&fixture("vm-2cpu").join("t0"), &out);
}
