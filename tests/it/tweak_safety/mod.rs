//! Tweaks under concurrency and damage: simultaneous `tweak set`s each get their own id and undo
//! restores the start; a damaged journal never makes undo restore the wrong change; a non-UTF-8
//! byte spoils one record, not the file; a full state filesystem (tmpfs) or an audit log that
//! cannot be written never makes a report lie; undo refuses another root; a stale lock file
//! naming a live unrelated pid does not block. `race`: what the kernel is told, exactly;
//! `hostile`: a hostile local user against root's perftop.

use crate::support;

mod hostile;
mod race;

use perftop::root::Root;
use perftop::tweak::apply::{self, FsWriter, Which};
use perftop::tweak::journal::Journal;
use perftop::tweak::{plan, read_value, Ctx};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Host {
    dir: tempfile::TempDir,
    ctx: Ctx,
    /// Held while the test may write through perftop (see `support::writing`).
    _writes: support::Writing,
}

fn host() -> Host {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    support::copy_tree(&support::fixture("intel-pstate/t0"), &root);
    let ctx = Ctx {
        root: Root::new(&root),
        state_dir: dir.path().join("state"),
        privileged: true,
        read_only: false,
    };
    Host {
        dir,
        ctx,
        _writes: support::writing(),
    }
}

const FILES: [&str; 6] = [
    "proc/sys/vm/dirty_ratio",
    "proc/sys/vm/dirty_bytes",
    "proc/sys/vm/dirty_background_ratio",
    "proc/sys/vm/dirty_background_bytes",
    "sys/kernel/mm/transparent_hugepage/enabled",
    "sys/kernel/mm/transparent_hugepage/defrag",
];

/// Every knob file's value, normalised (a fixture file holds what was last written to it, not
/// the kernel's `[choice]` list). Governor and EPP of the four policies too.
fn snapshot(root: &Root) -> Vec<String> {
    let mut files: Vec<String> = FILES.iter().map(|f| f.to_string()).collect();
    for i in 0..4 {
        for f in ["scaling_governor", "energy_performance_preference"] {
            files.push(format!("sys/devices/system/cpu/cpufreq/policy{i}/{f}"));
        }
    }
    files
        .iter()
        .map(|f| read_value(root, f).unwrap_or_default())
        .collect()
}

fn perftop(root: &Path, state: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(["tweak"])
        .args(args)
        .arg("--root")
        .arg(root)
        .arg("--state-dir")
        .arg(state)
        .output()
        .expect("run perftop")
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Ids of the journal's change records, in order.
fn change_ids(state: &Path) -> Vec<u64> {
    let bytes = std::fs::read(state.join("journal.jsonl")).unwrap_or_default();
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .filter(|v| v.get("plan").is_some())
        .filter_map(|v| v["id"].as_u64())
        .collect()
}

/// Undoes through the CLI until nothing is left; returns how many were undone.
fn undo_all(root: &Path, state: &Path) -> usize {
    for n in 0..500 {
        let o = perftop(root, state, &["undo", "--yes"]);
        if !o.status.success() {
            assert!(
                String::from_utf8_lossy(&o.stderr).contains("nothing to undo"),
                "{}",
                text(&o)
            );
            return n;
        }
    }
    panic!("undo never ran out");
}

#[test]
fn simultaneous_sets_get_their_own_ids_and_undo_all_restores_the_start() {
    let h = host();
    let root = h.ctx.root.base().to_path_buf();
    let state = h.ctx.state_dir.clone();
    let start = snapshot(&h.ctx.root);
    let governor = ["performance", "powersave"];
    let pairs = 40;
    let (mut applied, mut refused) = (0usize, 0usize);
    for round in 0..pairs {
        // Two different knobs per pair: both can apply, one after the other.
        let a = (round % 60 + 5).to_string();
        let b = (round % 40 + 2).to_string();
        let c = governor[round % 2];
        let mut kids = Vec::new();
        for (knob, value) in [
            ("vm.dirty_ratio", a.as_str()),
            ("vm.dirty_background_ratio", &b),
        ] {
            kids.push(
                Command::new(env!("CARGO_BIN_EXE_perftop"))
                    .args(["tweak", "set", knob, value, "--yes", "--root"])
                    .arg(&root)
                    .arg("--state-dir")
                    .arg(&state)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("spawn"),
            );
        }
        // Every third round a third contender, on a third knob (the governor of four policies).
        if round % 3 == 0 {
            kids.push(
                Command::new(env!("CARGO_BIN_EXE_perftop"))
                    .args(["tweak", "set", "governor", c, "--yes", "--root"])
                    .arg(&root)
                    .arg("--state-dir")
                    .arg(&state)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("spawn"),
            );
        }
        for k in kids {
            let o = k.wait_with_output().expect("wait");
            let out = String::from_utf8_lossy(&o.stdout);
            let err = String::from_utf8_lossy(&o.stderr);
            if out.contains("already set") {
                continue;
            }
            if o.status.success() {
                assert!(out.contains("applied;"), "{}", text(&o));
                applied += 1;
            } else {
                // Refused: the message names the holder, and nothing was journalled for it.
                assert!(
                    err.contains("holds the lock") && err.contains("pid "),
                    "{}",
                    text(&o)
                );
                refused += 1;
            }
        }
    }
    eprintln!("{pairs} concurrent pairs: {applied} changes applied, {refused} refused");
    let ids = change_ids(&state);
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "an id given twice: {ids:?}");
    assert_eq!(ids.len(), applied, "one journalled change per applied set");
    assert!(applied >= pairs, "most sets apply in turn: {applied}");
    let status = perftop(&root, &state, &["status"]);
    assert!(status.status.success(), "{}", text(&status));
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("free"),
        "{}",
        text(&status)
    );
    assert_eq!(undo_all(&root, &state), applied);
    assert_eq!(snapshot(&h.ctx.root), start);
}

#[test]
fn a_held_lock_refuses_naming_the_holder_and_status_shows_it() {
    let h = host();
    let root = h.ctx.root.base().to_path_buf();
    let start = snapshot(&h.ctx.root);
    let held = Journal::new(&h.ctx.state_dir).lock().expect("lock");
    let o = perftop(
        &root,
        &h.ctx.state_dir,
        &["set", "vm.dirty_ratio", "5", "--yes"],
    );
    assert!(!o.status.success(), "{}", text(&o));
    let me = format!("pid {}", std::process::id());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&me),
        "{}",
        text(&o)
    );
    let s = perftop(&root, &h.ctx.state_dir, &["status"]);
    assert!(
        String::from_utf8_lossy(&s.stdout).contains(&format!("held by {me}")),
        "{}",
        text(&s)
    );
    assert_eq!(snapshot(&h.ctx.root), start);
    drop(held);
    let o = perftop(
        &root,
        &h.ctx.state_dir,
        &["set", "vm.dirty_ratio", "5", "--yes"],
    );
    assert!(o.status.success(), "{}", text(&o));
    // The kernel lock is gone with the file: the lock file stays, and nobody holds it.
    assert!(h.ctx.state_dir.join("lock").exists());
}

#[test]
fn a_stale_lock_file_with_a_live_unrelated_pid_does_not_block() {
    let h = host();
    let root = h.ctx.root.base().to_path_buf();
    let start = snapshot(&h.ctx.root);
    std::fs::create_dir_all(&h.ctx.state_dir).expect("mkdir");
    // The old format: a bare pid, here pid 1 (always alive).
    std::fs::write(h.ctx.state_dir.join("lock"), "1\n").expect("write");
    let o = perftop(
        &root,
        &h.ctx.state_dir,
        &["set", "vm.dirty_ratio", "5", "--yes"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = perftop(&root, &h.ctx.state_dir, &["undo", "--yes"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(snapshot(&h.ctx.root), start);
}

/// Applies A (`vm.dirty_ratio` 20 → 10) then B (`thp.enabled` → madvise) through the library.
fn two_changes(h: &Host) {
    for (k, v) in [("vm.dirty_ratio", "10"), ("thp.enabled", "madvise")] {
        let p = plan::plan(&h.ctx, k, v).expect("plan");
        assert!(apply::apply(&h.ctx, &p, &mut FsWriter).expect("apply").ok());
    }
}

/// Byte ranges of the journal's lines, newline included.
fn line_spans(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' {
            spans.push((start, i + 1));
            start = i + 1;
        }
    }
    spans
}

#[test]
fn journal_damage_at_every_byte_of_the_newest_change_never_undoes_the_older_one() {
    let h = host();
    two_changes(&h);
    let journal = h.ctx.state_dir.join("journal.jsonl");
    let good = std::fs::read(&journal).expect("journal");
    let spans = line_spans(&good);
    assert_eq!(
        spans.len(),
        5,
        "pending A, applied A, pending B, applied B, the seal"
    );
    let applied = snapshot(&h.ctx.root);
    let ratio = "proc/sys/vm/dirty_ratio";
    let thp = "sys/kernel/mm/transparent_hugepage/enabled";
    let (mut undid_b, mut stopped, mut warned) = (0, 0, 0);
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    // The newest change's record (line 3), its status mark (line 4) and the seal, every byte.
    for &(from, to) in &spans[2..] {
        for at in from..=to {
            cases.push((format!("cut at byte {at}"), good[..at].to_vec()));
        }
        for at in from..to {
            for (name, byte) in [("0xff", 0xffu8), ("newline", b'\n'), ("'x'", b'x')] {
                let mut b = good.clone();
                b[at] = byte;
                cases.push((format!("{name} at byte {at}"), b));
            }
        }
    }
    for (what, bytes) in &cases {
        // Back to "both applied", then damage the journal.
        for (f, v) in FILES.iter().zip(&applied) {
            std::fs::write(h.ctx.root.path(f), format!("{v}\n")).expect("restore");
        }
        std::fs::write(&journal, bytes).expect("damage");
        match apply::undo(&h.ctx, &mut FsWriter, Which::Last, None) {
            Ok(r) => {
                assert!(r.ok(), "{what}: {}", r.text());
                // The newest change was undone, the older one left alone.
                assert_eq!(
                    h.ctx.root.read_line(ratio).as_deref(),
                    Some("10"),
                    "{what}: the older change was undone"
                );
                assert_eq!(
                    read_value(&h.ctx.root, thp).as_deref(),
                    Some("always"),
                    "{what}: B not undone"
                );
                if !r.warnings.is_empty() {
                    warned += 1;
                }
                undid_b += 1;
            }
            Err(e) => {
                let e = format!("{e:#}");
                // A newline splits a line in two: line 5 can exist.
                assert!(
                    ["line 3", "line 4", "line 5", "line 6", "cut off"]
                        .iter()
                        .any(|w| e.contains(w)),
                    "{what}: {e}"
                );
                assert!(e.contains("will not undo"), "{what}: {e}");
                assert_eq!(snapshot(&h.ctx.root), applied, "{what}: {e}");
                stopped += 1;
            }
        }
    }
    eprintln!(
        "{} damaged journals: {undid_b} undid the newest change ({warned} with a warning), \
         {stopped} stopped with a message, 0 undid the older one",
        cases.len()
    );
    assert!(undid_b > 0 && stopped > 0);
    assert!(
        warned > 0,
        "a torn final status mark is skipped with a warning"
    );

    // The CLI, on the file cut in half: refuses naming the line; `journal` lists it; --id acts.
    let root = h.ctx.root.base().to_path_buf();
    for (f, v) in FILES.iter().zip(&applied) {
        std::fs::write(h.ctx.root.path(f), v).expect("restore");
    }
    std::fs::write(&journal, &good[..(spans[2].0 + spans[2].1) / 2]).expect("cut");
    let o = perftop(&root, &h.ctx.state_dir, &["undo", "--yes"]);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("line 3") && err.contains("torn"), "{err}");
    let j = perftop(&root, &h.ctx.state_dir, &["journal"]);
    let listing = String::from_utf8_lossy(&j.stdout);
    assert!(listing.contains("    3  UNREADABLE"), "{listing}");
    assert!(listing.contains("#1    pending"), "{listing}");
    let o = perftop(&root, &h.ctx.state_dir, &["undo", "--id", "1", "--yes"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(h.ctx.root.read_line(ratio).as_deref(), Some("20"));
}

#[test]
fn a_non_utf8_byte_in_an_old_record_spoils_that_record_only() {
    let h = host();
    let root = h.ctx.root.base().to_path_buf();
    let state = h.ctx.state_dir.clone();
    let start = snapshot(&h.ctx.root);
    two_changes(&h);
    let journal = state.join("journal.jsonl");
    let mut bytes = std::fs::read(&journal).expect("journal");
    // Inside change #1's first target label ("vm.dirty_ratio" → "vm.dirty\xffratio").
    let at = bytes
        .windows(9)
        .position(|w| w == b"\"label\":\"")
        .expect("label")
        + 12;
    bytes[at] = 0xff;
    std::fs::write(&journal, &bytes).expect("damage");
    let o = perftop(
        &root,
        &state,
        &["set", "vm.dirty_background_ratio", "5", "--yes"],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        change_ids(&state),
        vec![2, 3],
        "change #1 unreadable; no id reused"
    );
    for _ in 0..2 {
        let o = perftop(&root, &state, &["undo", "--yes"]);
        assert!(o.status.success(), "{}", text(&o));
    }
    // Change #1 itself is what is unreadable: undo stops there and names it.
    let o = perftop(&root, &state, &["undo", "--yes"]);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("line 1") && err.contains("not UTF-8") && err.contains("vm.dirty_ratio"),
        "{err}"
    );
    let mut expect = start.clone();
    expect[0] = "10".into();
    assert_eq!(snapshot(&h.ctx.root), expect);
}

#[test]
fn undo_under_another_root_refuses_naming_both() {
    let h = host();
    let a = h.ctx.root.base().to_path_buf();
    let b = h.dir.path().join("other");
    support::copy_tree(&a, &b);
    let state = h.ctx.state_dir.clone();
    let start = snapshot(&h.ctx.root);
    let o = perftop(&a, &state, &["set", "vm.dirty_ratio", "5", "--yes"]);
    assert!(o.status.success(), "{}", text(&o));
    let changed = snapshot(&h.ctx.root);
    let other = snapshot(&Root::new(&b));
    let o = perftop(&b, &state, &["undo", "--yes"]);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let ca = std::fs::canonicalize(&a).expect("canon");
    let cb = std::fs::canonicalize(&b).expect("canon");
    assert!(
        err.contains(&*ca.to_string_lossy()) && err.contains(&*cb.to_string_lossy()),
        "{err}"
    );
    assert_eq!(snapshot(&h.ctx.root), changed);
    assert_eq!(snapshot(&Root::new(&b)), other, "nothing written into B");
    let o = perftop(&a, &state, &["undo", "--yes"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(snapshot(&h.ctx.root), start);
}

#[test]
fn an_audit_log_that_cannot_be_written_is_a_warning_beside_a_true_report() {
    let h = host();
    let root = h.ctx.root.base().to_path_buf();
    let state = h.ctx.state_dir.clone();
    let start = snapshot(&h.ctx.root);
    std::fs::create_dir_all(state.join("audit.jsonl")).expect("audit as a directory");
    let o = perftop(&root, &state, &["set", "vm.dirty_ratio", "5", "--yes"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("applied;") && out.contains("warning:") && out.contains("audit"),
        "{out}"
    );
    assert_eq!(h.ctx.root.read_line(FILES[0]).as_deref(), Some("5"));
    let o = perftop(&root, &state, &["undo", "--yes"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("warning:"));
    assert_eq!(snapshot(&h.ctx.root), start);
}

/// A tmpfs of 64 KiB at `dir`, unmounted on drop.
struct Tmpfs(PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn fill(dir: &Path) -> PathBuf {
    use std::io::Write;
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).expect("filler");
    while f.write_all(&[0u8; 4096]).is_ok() {}
    while f.write_all(&[0u8]).is_ok() {}
    path
}

#[test]
fn a_full_state_filesystem_never_makes_a_report_lie() {
    let name = "a_full_state_filesystem_never_makes_a_report_lie";
    if !support::is_root() {
        support::skip(name, "mounting a tmpfs needs root");
        return;
    }
    let h = host();
    let root = h.ctx.root.base().to_path_buf();
    let state = h.dir.path().join("tmpfs");
    std::fs::create_dir_all(&state).expect("mkdir");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k,mode=0700", "perftop-test"])
        .arg(&state)
        .status();
    if !matches!(mounted, Ok(s) if s.success()) {
        support::skip(name, "mount -t tmpfs failed here (no CAP_SYS_ADMIN?)");
        return;
    }
    let _mount = Tmpfs(state.clone());
    let start = snapshot(&h.ctx.root);
    // One change while there is room, then a full filesystem.
    let o = perftop(&root, &state, &["set", "vm.dirty_ratio", "30", "--yes"]);
    assert!(o.status.success(), "{}", text(&o));
    let filler = fill(&state);
    let rel = "proc/sys/vm/dirty_background_ratio";
    let (mut ok_sets, mut refused_sets, mut ok_undos) = (0, 0, 0);
    for v in 2..14 {
        let before = h.ctx.root.read_line(rel);
        let o = perftop(
            &root,
            &state,
            &["set", "vm.dirty_background_ratio", &v.to_string(), "--yes"],
        );
        let now = h.ctx.root.read_line(rel);
        if o.status.success() {
            assert_eq!(now.as_deref(), Some(v.to_string().as_str()), "{}", text(&o));
            ok_sets += 1;
        } else {
            // Not applied means not applied.
            assert_eq!(now, before, "{}", text(&o));
            assert!(
                String::from_utf8_lossy(&o.stderr).contains("nothing was changed"),
                "{}",
                text(&o)
            );
            refused_sets += 1;
        }
        let snap = snapshot(&h.ctx.root);
        let o = perftop(&root, &state, &["undo", "--yes"]);
        if o.status.success() {
            assert!(
                String::from_utf8_lossy(&o.stdout).contains("undone"),
                "{}",
                text(&o)
            );
            ok_undos += 1;
        } else {
            assert_eq!(snapshot(&h.ctx.root), snap, "{}", text(&o));
        }
    }
    eprintln!(
        "full 64 KiB tmpfs: {ok_sets} sets applied, {refused_sets} refused before any write, \
         {ok_undos} undos ran"
    );
    assert!(refused_sets > 0, "the filesystem was never full");
    // No torn line left behind by a failed append.
    let j = perftop(&root, &state, &["journal"]);
    assert!(
        !String::from_utf8_lossy(&j.stdout).contains("UNREADABLE"),
        "{}",
        text(&j)
    );
    std::fs::remove_file(filler).expect("free");
    undo_all(&root, &state);
    assert_eq!(snapshot(&h.ctx.root), start);
}
