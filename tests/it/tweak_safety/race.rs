//! What the kernel is told, exactly: a twin that moved while a preview was open is read again
//! under the lock and shown again (fixture and live kernel); `010` and other non-canonical
//! numbers are refused; a journal cut at a record boundary, with the lock file gone, never
//! makes undo restore an older change.

use super::{host, line_spans, perftop, text, two_changes, FILES};
use perftop::tweak::apply::{self, FsWriter, Stale, Which};
use perftop::tweak::journal::Journal;
use perftop::tweak::{plan, read_value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

const BG_RATIO: &str = "proc/sys/vm/dirty_background_ratio";
const BG_BYTES: &str = "proc/sys/vm/dirty_background_bytes";

#[test]
fn a_twin_changed_while_the_preview_was_open_is_read_again_and_shown_again() {
    let h = host();
    let p = plan::plan(&h.ctx, "vm.dirty_background_bytes", "64M").expect("plan");
    let twin = p.changes.iter().find(|c| c.rel == BG_RATIO).expect("twin");
    assert_eq!((twin.old.as_str(), twin.write), ("10", false));
    // Someone else (a person, another perftop) sets the ratio while the preview is up.
    std::fs::write(h.ctx.root.path(BG_RATIO), "15\n").expect("write");
    let e = apply::apply(&h.ctx, &p, &mut FsWriter).expect_err("stale preview applied");
    let stale = e.downcast_ref::<Stale>().expect("a Stale error");
    assert!(
        format!("{e}").contains("dirty_background_ratio: 10 → 15"),
        "{e}"
    );
    assert_eq!(
        h.ctx.root.read_line(BG_BYTES).as_deref(),
        Some("0"),
        "nothing written"
    );
    let fresh = stale.plan.clone();
    let twin = fresh
        .changes
        .iter()
        .find(|c| c.rel == BG_RATIO)
        .expect("twin");
    assert_eq!(twin.old, "15", "the new preview shows the value of now");
    assert!(apply::apply(&h.ctx, &fresh, &mut FsWriter)
        .expect("apply")
        .ok());
    // What the kernel does on its own: writing the bytes zeroes the ratio.
    std::fs::write(h.ctx.root.path(BG_RATIO), "0\n").expect("write");
    assert!(apply::undo(&h.ctx, &mut FsWriter, Which::Last, None)
        .expect("undo")
        .ok());
    assert_eq!(
        h.ctx.root.read_line(BG_RATIO).as_deref(),
        Some("15"),
        "undo restores what was in effect just before the change, not what the preview read"
    );
}

/// Runs `perftop tweak set KNOB VALUE` (no `--yes`) and answers its `apply?` prompts: before
/// each answer, `between` runs with the prompt's number. Returns stdout and the exit status.
fn set_answering(
    root: &Path,
    state: &Path,
    knob: &str,
    value: &str,
    mut between: impl FnMut(usize),
) -> (String, Option<i32>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(["tweak", "set", knob, value, "--root"])
        .arg(root)
        .arg("--state-dir")
        .arg(state)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    let mut prompts = 0;
    let mut buf = Vec::new();
    // Each prompt ends in "[y/N] " with no newline: read up to its last byte.
    while err.read_until(b' ', &mut buf).expect("read stderr") > 0 {
        if buf.ends_with(b"[y/N] ") {
            prompts += 1;
            between(prompts);
            stdin.write_all(b"y\n").expect("answer");
            buf.clear();
        }
    }
    drop(stdin);
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("stdout");
    let status = child.wait().expect("wait");
    out.push_str(&String::from_utf8_lossy(&buf));
    (out, status.code())
}

#[test]
fn two_processes_deterministically_a_second_perftop_changes_the_twin_under_the_lock() {
    let h = host();
    let root = h.ctx.root.base().to_path_buf();
    let state = h.ctx.state_dir.clone();
    let ctx = h.ctx.clone();
    let (out, code) = set_answering(&root, &state, "vm.dirty_background_bytes", "64M", |n| {
        if n == 1 {
            // Another perftop, holding the lock, changes the twin while this one waits at its
            // prompt: what the journal records must be read after that, under the lock.
            let held = Journal::new(&ctx.state_dir).lock().expect("lock");
            let p = plan::plan(&ctx, "vm.dirty_background_ratio", "15").expect("plan");
            drop(held);
            assert!(apply::apply(&ctx, &p, &mut FsWriter).expect("apply").ok());
        }
    });
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("the kernel changed since the preview"),
        "{out}"
    );
    assert!(out.contains("15 → 0  (kernel side effect)"), "{out}");
    std::fs::write(h.ctx.root.path(BG_RATIO), "0\n").expect("the kernel's zeroing");
    // Undo the bytes change: the ratio comes back as the other perftop left it.
    let o = perftop(&root, &state, &["undo", "--yes"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(h.ctx.root.read_line(BG_RATIO).as_deref(), Some("15"));
}

/// The same race on this machine's kernel, which zeroes the twin itself (root; values restored).
#[test]
fn live_kernel_twin_race_undo_restores_the_value_in_effect() {
    if !super::support::is_root() {
        super::support::skip(
            "live_kernel_twin_race_undo_restores_the_value_in_effect",
            "needs root to write /proc/sys/vm",
        );
        return;
    }
    let vm = Path::new("/proc/sys/vm");
    let read = |f: &str| {
        std::fs::read_to_string(vm.join(f))
            .expect("read")
            .trim()
            .to_string()
    };
    let (ratio0, bytes0) = (
        read("dirty_background_ratio"),
        read("dirty_background_bytes"),
    );
    let state = tempfile::tempdir().expect("tempdir");
    let restore = || {
        // Whichever of the pair was in use goes back last (writing one zeroes the other).
        let (first, last) = if bytes0 != "0" {
            (
                ("dirty_background_ratio", &ratio0),
                ("dirty_background_bytes", &bytes0),
            )
        } else {
            (
                ("dirty_background_bytes", &bytes0),
                ("dirty_background_ratio", &ratio0),
            )
        };
        for (f, v) in [first, last] {
            if v != "0" {
                let _ = std::fs::write(vm.join(f), v);
            }
        }
    };
    std::fs::write(vm.join("dirty_background_ratio"), "7").expect("write");
    let (out, code) = set_answering(
        Path::new("/"),
        state.path(),
        "vm.dirty_background_bytes",
        "64M",
        |n| {
            if n == 1 {
                std::fs::write(vm.join("dirty_background_ratio"), "9").expect("write");
            }
        },
    );
    let applied = (
        read("dirty_background_ratio"),
        read("dirty_background_bytes"),
    );
    let o = perftop(Path::new("/"), state.path(), &["undo", "--yes"]);
    let undone = (
        read("dirty_background_ratio"),
        read("dirty_background_bytes"),
    );
    restore();
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("dirty_background_ratio: 7 → 9"), "{out}");
    assert_eq!(applied, ("0".into(), (64u64 << 20).to_string()));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(undone, ("9".into(), "0".into()), "{}", text(&o));
}

#[test]
fn numbers_the_kernel_would_read_otherwise_are_refused() {
    let h = host();
    let swappiness = "proc/sys/vm/swappiness";
    std::fs::write(h.ctx.root.path(swappiness), "60\n").expect("write");
    // 010 is octal 8 to the kernel's kstrtoul; + and 0x are taken too.
    for bad in ["010", "+5", "0x10", "1e2", "00", " 010"] {
        let e = plan::plan(&h.ctx, "vm.swappiness", bad).expect_err(bad);
        assert!(e.reason.contains("vm.swappiness"), "{bad}: {e}");
    }
    let e = plan::plan(&h.ctx, "vm.swappiness", "010").expect_err("010");
    assert!(e.reason.contains("leading zero"), "{e}");
    let o = perftop(
        h.ctx.root.base(),
        &h.ctx.state_dir,
        &["set", "vm.swappiness", "010", "--yes"],
    );
    assert!(!o.status.success(), "{}", text(&o));
    assert_eq!(read_value(&h.ctx.root, swappiness).as_deref(), Some("60"));
    // The one form is taken.
    let p = plan::plan(&h.ctx, "vm.swappiness", "10").expect("10");
    assert_eq!(p.changes[0].new, "10");
}

#[test]
fn a_journal_cut_at_a_record_boundary_without_its_lock_file_never_undoes_an_older_change() {
    let h = host();
    two_changes(&h);
    let journal = h.ctx.state_dir.join("journal.jsonl");
    let good = std::fs::read(&journal).expect("journal");
    let applied: Vec<String> = FILES
        .iter()
        .map(|f| read_value(&h.ctx.root, f).unwrap_or_default())
        .collect();
    let ratio = "proc/sys/vm/dirty_ratio";
    let mut refused = 0;
    let spans = line_spans(&good);
    for &(_, end) in &spans[..spans.len() - 1] {
        for (f, v) in FILES.iter().zip(&applied) {
            std::fs::write(h.ctx.root.path(f), format!("{v}\n")).expect("restore");
        }
        std::fs::write(&journal, &good[..end]).expect("cut");
        let _ = std::fs::remove_file(h.ctx.state_dir.join("lock"));
        match apply::undo(&h.ctx, &mut FsWriter, Which::Last, None) {
            Ok(r) => panic!("cut at byte {end}: undid #{} {}", r.id, r.text()),
            Err(e) => {
                let e = format!("{e:#}");
                assert!(e.contains("cut off") && e.contains("will not undo"), "{e}");
                refused += 1;
            }
        }
        assert_eq!(
            h.ctx.root.read_line(ratio).as_deref(),
            Some("10"),
            "cut at byte {end}: change #1 was undone"
        );
    }
    assert_eq!(refused, spans.len() - 1);
    // The whole journal, still without its lock file: the newest change is undone.
    std::fs::write(&journal, &good).expect("whole");
    let r = apply::undo(&h.ctx, &mut FsWriter, Which::Last, None).expect("undo");
    assert_eq!(r.id, 2);
}
