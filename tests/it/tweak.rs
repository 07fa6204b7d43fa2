//! Safe tweaks: set/undo round trip, dry run, refusals, rollback on a half-way failure,
//! undo from the journal after a crash, audit lines.

use crate::support;

use perftop::root::Root;
use perftop::tweak::apply::{self, FsWriter, Which, Writer};
use perftop::tweak::journal::Journal;
use perftop::tweak::{plan, Ctx};
use std::path::Path;
use std::process::Command;

const GOV: &str = "sys/devices/system/cpu/cpufreq/policy";

struct Host {
    _dir: tempfile::TempDir,
    ctx: Ctx,
    /// Held while the test may write through perftop (see `support::writing`).
    _writes: support::Writing,
}

fn host(fixture: &str) -> Host {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    support::copy_tree(&support::fixture(fixture), &root);
    let ctx = Ctx {
        root: Root::new(&root),
        state_dir: dir.path().join("state"),
        privileged: true,
        read_only: false,
    };
    Host {
        _dir: dir,
        ctx,
        _writes: support::writing(),
    }
}

fn governors(ctx: &Ctx) -> Vec<String> {
    (0..4)
        .map(|i| {
            ctx.root
                .read_line(&format!("{GOV}{i}/scaling_governor"))
                .unwrap_or_default()
        })
        .collect()
}

fn snapshot_files(ctx: &Ctx) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for i in 0..4 {
        for f in ["scaling_governor", "energy_performance_preference"] {
            let rel = format!("{GOV}{i}/{f}");
            out.push((rel.clone(), ctx.root.read(&rel).unwrap_or_default()));
        }
    }
    for f in ["dirty_ratio", "dirty_bytes"] {
        let rel = format!("proc/sys/vm/{f}");
        out.push((rel.clone(), ctx.root.read(&rel).unwrap_or_default()));
    }
    out
}

#[test]
fn set_and_undo_round_trip() {
    let h = host("intel-pstate/t0");
    let before = snapshot_files(&h.ctx);
    let p = plan::plan(&h.ctx, "governor", "performance").expect("plan");
    assert_eq!(p.writes().count(), 3, "policy3 is already performance");
    let r = apply::apply(&h.ctx, &p, &mut FsWriter).expect("apply");
    assert!(r.ok(), "{}", r.text());
    assert_eq!(governors(&h.ctx), vec!["performance"; 4]);
    let u = apply::undo(&h.ctx, &mut FsWriter, Which::Last, None).expect("undo");
    assert!(u.ok(), "{}", u.text());
    assert_eq!(snapshot_files(&h.ctx), before);
    // Nothing left to undo.
    assert!(apply::undo(&h.ctx, &mut FsWriter, Which::Last, None).is_err());
}

#[test]
fn dirty_ratio_pair_round_trip() {
    let h = host("intel-pstate/t0");
    let before = snapshot_files(&h.ctx);
    let p = plan::plan(&h.ctx, "vm.dirty_ratio", "5").expect("plan");
    assert!(apply::apply(&h.ctx, &p, &mut FsWriter).expect("apply").ok());
    assert_eq!(
        h.ctx.root.read_line("proc/sys/vm/dirty_ratio").as_deref(),
        Some("5")
    );
    assert!(apply::undo(&h.ctx, &mut FsWriter, Which::Last, None)
        .expect("undo")
        .ok());
    assert_eq!(snapshot_files(&h.ctx), before);
    assert!(
        plan::plan(&h.ctx, "vm.dirty_ratio", "95").is_err(),
        "out of bounds"
    );
}

#[test]
fn dry_run_changes_nothing() {
    let h = host("intel-pstate/t0");
    let before = snapshot_files(&h.ctx);
    let out = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args([
            "tweak",
            "set",
            "governor",
            "performance",
            "--dry-run",
            "--root",
        ])
        .arg(h.ctx.root.base())
        .arg("--state-dir")
        .arg(&h.ctx.state_dir)
        .output()
        .expect("run");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("powersave → performance"), "{text}");
    assert_eq!(snapshot_files(&h.ctx), before);
    assert!(!h.ctx.state_dir.join("journal.jsonl").exists());
    let audit = std::fs::read_to_string(h.ctx.state_dir.join("audit.jsonl")).expect("audit");
    assert!(audit.contains("\"action\":\"preview\""), "{audit}");
}

#[test]
fn nr_hugepages_bounded_by_free_memory_and_shows_pinned_memory() {
    let h = host("intel-pstate/t0");
    std::fs::write(h.ctx.root.path("proc/sys/vm/nr_hugepages"), "0\n").expect("write");
    // MemAvailable 46.5 GB minus 10% of 65 GB, in 2 MiB pages.
    let max = (46_500_000u64 - 6_500_000) / 2048;
    assert!(plan::plan(&h.ctx, "vm.nr_hugepages", &(max + 1).to_string()).is_err());
    let p = plan::plan(&h.ctx, "vm.nr_hugepages", "512").expect("plan");
    assert!(
        p.notes.iter().any(|n| n.contains("pins 1024 MiB")),
        "{:?}",
        p.notes
    );
}

#[test]
fn unavailable_value_refused_nothing_changed() {
    let h = host("intel-pstate/t0");
    let before = snapshot_files(&h.ctx);
    // intel_pstate offers only performance and powersave.
    let e = plan::plan(&h.ctx, "governor", "ondemand").expect_err("refused");
    assert!(e.reason.contains("not available"), "{e}");
    let out = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(["tweak", "set", "governor", "schedutil", "--yes", "--root"])
        .arg(h.ctx.root.base())
        .arg("--state-dir")
        .arg(&h.ctx.state_dir)
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert_eq!(snapshot_files(&h.ctx), before);
}

/// Fails the n-th write with EBUSY.
struct FailAt {
    n: usize,
    seen: usize,
}

impl Writer for FailAt {
    fn write(&mut self, path: &Path, value: &str) -> std::io::Result<()> {
        self.seen += 1;
        if self.seen == self.n {
            return Err(std::io::Error::from_raw_os_error(16));
        }
        FsWriter.write(path, value)
    }
}

#[test]
fn failure_half_way_rolls_back_everything() {
    let h = host("intel-pstate/t0");
    let before = snapshot_files(&h.ctx);
    let p = plan::plan(&h.ctx, "governor", "performance").expect("plan");
    let r = apply::apply(&h.ctx, &p, &mut FailAt { n: 3, seen: 0 }).expect("apply");
    assert!(!r.ok());
    assert_eq!(r.rolled_back.len(), 2);
    assert!(r.text().contains("busy"), "errno in words: {}", r.text());
    assert_eq!(snapshot_files(&h.ctx), before);
    // Rolled back: nothing to undo.
    assert!(apply::undo(&h.ctx, &mut FsWriter, Which::Last, None).is_err());
    let audit = std::fs::read_to_string(h.ctx.state_dir.join("audit.jsonl")).expect("audit");
    assert!(audit.contains("\"action\":\"rollback\""));
}

#[test]
fn target_changed_since_preview_refused_before_any_write() {
    let h2 = host("intel-pstate/t0");
    // policy2's governor file becomes a directory: the third write fails with EISDIR.
    let p = plan::plan(&h2.ctx, "governor", "performance").expect("plan");
    let rel = format!("{GOV}2/scaling_governor");
    let path = h2.ctx.root.path(&rel);
    std::fs::remove_file(&path).expect("rm");
    std::fs::create_dir(&path).expect("mkdir");
    let before = snapshot_files(&h2.ctx);
    let r = apply::apply(&h2.ctx, &p, &mut FsWriter);
    // The preview saw powersave there; apply re-checks and refuses before writing anything.
    assert!(r.is_err());
    assert_eq!(snapshot_files(&h2.ctx), before);
}

#[test]
fn non_root_refused_with_reason_and_command() {
    let mut h = host("intel-pstate/t0");
    h.ctx.privileged = false;
    let before = snapshot_files(&h.ctx);
    let e = plan::plan(&h.ctx, "governor", "performance").expect_err("refused");
    assert!(e.reason.contains("needs root"), "{e}");
    let cmd = e.command.expect("command");
    assert!(cmd.starts_with("echo performance | sudo tee "), "{cmd}");
    assert!(cmd.contains("policy0/scaling_governor"));
    assert_eq!(snapshot_files(&h.ctx), before);
    h.ctx.privileged = true;
    h.ctx.read_only = true;
    let e = plan::plan(&h.ctx, "governor", "performance").expect_err("read-only");
    assert!(e.reason.contains("read-only"), "{e}");
}

#[test]
fn undo_after_crash_from_journal_alone() {
    let h = host("intel-pstate/t0");
    let before = snapshot_files(&h.ctx);
    let p = plan::plan(&h.ctx, "governor", "performance").expect("plan");
    // Crash after the journal entry and two of three writes: no status record follows.
    let j = Journal::new(&h.ctx.state_dir);
    let mut lock = j.lock().expect("lock");
    let root = apply::canonical_root(&h.ctx).expect("root");
    j.begin(&mut lock, &p, &root).expect("journal");
    drop(lock);
    for c in p.writes().take(2) {
        FsWriter
            .write(&h.ctx.root.path(&c.rel), &c.new)
            .expect("write");
    }
    assert_ne!(snapshot_files(&h.ctx), before);
    // A fresh process: the CLI, with the journal alone.
    let out = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(["tweak", "undo", "--yes", "--root"])
        .arg(h.ctx.root.base())
        .arg("--state-dir")
        .arg(&h.ctx.state_dir)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(snapshot_files(&h.ctx), before);
}

#[test]
fn undo_warns_when_changed_by_someone_else() {
    let h = host("intel-pstate/t0");
    let p = plan::plan(&h.ctx, "thp.enabled", "madvise").expect("plan");
    assert!(apply::apply(&h.ctx, &p, &mut FsWriter).expect("apply").ok());
    let rel = "sys/kernel/mm/transparent_hugepage/enabled";
    std::fs::write(h.ctx.root.path(rel), "always madvise [never]\n").expect("write");
    let warnings = apply::undo_preview(&h.ctx, Which::Last)
        .expect("preview")
        .expect("some")
        .warnings;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("someone else"));
}

#[test]
fn audit_line_per_action() {
    let h = host("intel-pstate/t0");
    std::env::set_var("SUDO_USER", "alice");
    let p = plan::plan(&h.ctx, "vm.dirty_background_ratio", "5").expect("plan");
    apply::apply(&h.ctx, &p, &mut FsWriter).expect("apply");
    apply::undo(&h.ctx, &mut FsWriter, Which::Last, None).expect("undo");
    let audit = std::fs::read_to_string(h.ctx.state_dir.join("audit.jsonl")).expect("audit");
    let lines: Vec<serde_json::Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["action"], "apply");
    assert_eq!(lines[1]["action"], "undo");
    assert_eq!(lines[0]["knob"], "vm.dirty_background_ratio");
    assert_eq!(lines[0]["sudo_user"], "alice");
    assert_eq!(lines[0]["targets"][0]["before"], "10");
    assert_eq!(lines[0]["targets"][0]["after"], "5");
    assert!(lines[0]["uid"].is_number() && lines[0]["time"].is_number());
    assert!(lines[0].get("ssh_connection").is_some());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(h.ctx.state_dir.join("journal.jsonl"))
        .expect("journal")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn lock_keeps_a_second_instance_out() {
    let h = host("intel-pstate/t0");
    let j = Journal::new(&h.ctx.state_dir);
    let _held = j.lock().expect("lock");
    let p = plan::plan(&h.ctx, "governor", "performance").expect("plan");
    let e = apply::apply(&h.ctx, &p, &mut FsWriter).expect_err("locked");
    assert!(e.to_string().contains("another perftop"), "{e}");
}

#[test]
fn older_per_cpu_layout_round_trip() {
    let h = host("intel-pstate/t0");
    let root = h.ctx.root.base().to_path_buf();
    let cpu = root.join("sys/devices/system/cpu");
    for i in 0..4 {
        let link = cpu.join(format!("cpu{i}/cpufreq"));
        let _ = std::fs::remove_file(&link);
        let _ = std::fs::remove_dir_all(&link);
        std::fs::rename(cpu.join(format!("cpufreq/policy{i}")), &link).expect("move");
    }
    let p = plan::plan(&h.ctx, "governor", "performance").expect("plan");
    assert_eq!(
        p.writes().map(|c| c.label.as_str()).collect::<Vec<_>>(),
        ["cpu0", "cpu1", "cpu2"]
    );
    assert!(apply::apply(&h.ctx, &p, &mut FsWriter).expect("apply").ok());
    assert!(apply::undo(&h.ctx, &mut FsWriter, Which::Last, None)
        .expect("undo")
        .ok());
    let gov = h
        .ctx
        .root
        .read_line("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    assert_eq!(gov.as_deref(), Some("powersave"));
    let text = perftop::mode::tweak::list(&h.ctx);
    assert!(text.contains("governor"), "{text}");
}

/// Fails every write with EIO, as the kernel does for a managed IRQ.
struct Eio;

impl Writer for Eio {
    fn write(&mut self, _: &Path, _: &str) -> std::io::Result<()> {
        Err(std::io::Error::from_raw_os_error(5))
    }
}

#[test]
fn irq_affinity_round_trip_and_managed_irq_refusal() {
    let h = host("intel-pstate/t0");
    let rel = "proc/irq/124/smp_affinity_list";
    let p = plan::plan(&h.ctx, "irq.124", "2").expect("plan");
    assert_eq!(p.knob, "irq.124");
    assert!(
        plan::plan(&h.ctx, "irq.124", "7").is_err(),
        "CPU 7 is not online"
    );
    let r = apply::apply(&h.ctx, &p, &mut Eio).expect("apply");
    assert!(r.text().contains("managed IRQ"), "{}", r.text());
    assert_eq!(h.ctx.root.read_line(rel).as_deref(), Some("0-3"));
    let p = plan::plan(&h.ctx, "irq.124", "2").expect("plan");
    assert!(apply::apply(&h.ctx, &p, &mut FsWriter).expect("apply").ok());
    assert_eq!(h.ctx.root.read_line(rel).as_deref(), Some("2"));
    assert!(apply::undo(&h.ctx, &mut FsWriter, Which::Last, None)
        .expect("undo")
        .ok());
    assert_eq!(h.ctx.root.read_line(rel).as_deref(), Some("0-3"));
}

#[test]
fn pmqos_hold_writes_binary_limit_and_refuses_non_root() {
    let mut h = host("intel-pstate/t0");
    let dev = h.ctx.root.path("dev/cpu_dma_latency");
    assert!(
        perftop::tweak::pmqos::hold(&h.ctx, 0).is_err(),
        "no such file"
    );
    std::fs::create_dir_all(dev.parent().expect("parent")).expect("mkdir");
    std::fs::write(&dev, b"").expect("create");
    let hold = perftop::tweak::pmqos::hold(&h.ctx, 20).expect("hold");
    assert_eq!(std::fs::read(&dev).expect("read"), 20i32.to_ne_bytes());
    drop(hold);
    h.ctx.privileged = false;
    let e = perftop::tweak::pmqos::hold(&h.ctx, 0).expect_err("non-root");
    assert!(e.contains("needs root"), "{e}");
}

#[test]
fn read_only_flag_refuses_on_the_command_line() {
    let h = host("intel-pstate/t0");
    let before = snapshot_files(&h.ctx);
    let out = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args([
            "--read-only",
            "tweak",
            "set",
            "vm.dirty_ratio",
            "5",
            "--yes",
            "--root",
        ])
        .arg(h.ctx.root.base())
        .arg("--state-dir")
        .arg(&h.ctx.state_dir)
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("read-only"));
    assert_eq!(snapshot_files(&h.ctx), before);
}

/// The memory knobs #14 adds: `vm.swappiness` (0–200) and `vm.min_free_kbytes` (128 KiB to 5%
/// of RAM), each through plan → apply → read-back → undo, out-of-range values refused with
/// nothing written, and typed sizes read as KiB.
#[test]
fn swappiness_and_min_free_kbytes_round_trip_and_bounds() {
    let h = host("intel-pstate/t0");
    let vm = h.ctx.root.path("proc/sys/vm");
    std::fs::write(vm.join("swappiness"), "60\n").expect("swappiness");
    std::fs::write(vm.join("min_free_kbytes"), "67584\n").expect("min_free_kbytes");
    let total_kb = h
        .ctx
        .root
        .read("proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .expect("MemTotal");
    let read = |f: &str| h.ctx.root.read_line(&format!("proc/sys/vm/{f}"));

    let p = plan::plan(&h.ctx, "vm.swappiness", "10").expect("plan");
    assert!(apply::apply(&h.ctx, &p, &mut FsWriter).expect("apply").ok());
    assert_eq!(read("swappiness").as_deref(), Some("10"));
    assert!(
        plan::plan(&h.ctx, "vm.swappiness", "201").is_err(),
        "above 200"
    );
    assert!(plan::plan(&h.ctx, "vm.swappiness", "-1").is_err());

    // 128M typed in the dashboard is 131072 KiB, what the file (and `tweak set`) takes.
    let knob = perftop::tweak::knob::find(&h.ctx, "vm.min_free_kbytes").expect("knob");
    assert_eq!(knob.parse_value("128M").as_deref(), Ok("131072"));
    let p = plan::plan(&h.ctx, "vm.min_free_kbytes", "131072").expect("plan");
    assert!(apply::apply(&h.ctx, &p, &mut FsWriter).expect("apply").ok());
    assert_eq!(read("min_free_kbytes").as_deref(), Some("131072"));
    let over = (total_kb / 20 + 1).to_string();
    let e = plan::plan(&h.ctx, "vm.min_free_kbytes", &over).expect_err("above 5% of RAM");
    assert!(
        e.to_string().contains("KiB") || e.to_string().contains("MiB"),
        "{e}"
    );
    assert!(
        plan::plan(&h.ctx, "vm.min_free_kbytes", "64").is_err(),
        "below 128 KiB"
    );

    // Undo both, newest first: the files are back to what they were.
    for _ in 0..2 {
        let u = apply::undo(&h.ctx, &mut FsWriter, Which::Last, None).expect("undo");
        assert!(u.ok(), "{}", u.text());
    }
    assert_eq!(read("swappiness").as_deref(), Some("60"));
    assert_eq!(read("min_free_kbytes").as_deref(), Some("67584"));
}

#[test]
fn irqbalance_is_detected_and_warned_about_on_irq_knobs_only() {
    let h = host("intel-pstate/t0");
    let p = plan::plan(&h.ctx, "irq.124", "2").expect("plan");
    assert!(p.warnings.is_empty(), "no irqbalance yet: {:?}", p.warnings);
    let comm = h.ctx.root.path("proc/4242/comm");
    std::fs::create_dir_all(comm.parent().expect("parent")).expect("mkdir");
    std::fs::write(&comm, "irqbalance\n").expect("write");
    assert!(perftop::tweak::overriders(&h.ctx.root).contains(&"irqbalance".to_string()));
    let p = plan::plan(&h.ctx, "irq.124", "2").expect("plan");
    assert_eq!(
        p.warnings,
        vec![
            "irqbalance is running and will move IRQ 124 back within 10 s: stop it \
             (systemctl stop irqbalance) or ban the IRQ (irqbalance --banirq=124)"
                .to_string()
        ]
    );
    let text = p.preview(&h.ctx);
    assert!(
        text.contains("  warning: irqbalance is running and will move IRQ 124 back"),
        "{text}"
    );
    // irqbalance leaves the governor alone: no word of it there.
    let g = plan::plan(&h.ctx, "governor", "performance").expect("plan");
    assert!(g.warnings.is_empty());
    assert!(
        !g.notes.iter().any(|n| n.contains("irqbalance")),
        "{:?}",
        g.notes
    );
    // `tweak set --dry-run` prints the warning; `tweak list` says what irqbalance does.
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_perftop"))
            .arg("tweak")
            .args(args)
            .arg("--root")
            .arg(h.ctx.root.base())
            .args(if args[0] == "set" {
                vec!["--state-dir".as_ref(), h.ctx.state_dir.as_os_str()]
            } else {
                vec![]
            })
            .output()
            .expect("run");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let dry = run(&["set", "irq.124", "2", "--dry-run"]);
    assert!(
        dry.contains("warning: irqbalance is running and will move IRQ 124 back"),
        "{dry}"
    );
    let list = run(&["list"]);
    assert!(
        list.contains(
            "warning: irqbalance is running: it moves IRQ affinity (irq.N) back within 10 s"
        ),
        "{list}"
    );
    // Nothing was written.
    assert_eq!(
        h.ctx
            .root
            .read_line("proc/irq/124/smp_affinity_list")
            .as_deref(),
        Some("0-3")
    );
}
