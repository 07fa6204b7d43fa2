//! Root's perftop against a hostile local user: a state directory someone else can write is
//! refused; links planted where perftop writes (`lock`, `audit.jsonl`, `journal.jsonl`) are
//! never followed; a forged journal with valid checksums, chain and seal cannot make undo
//! write a file the knob registry does not name, nor a value the knob refuses; a FIFO in the
//! state directory is refused at once, never waited on; a non-root undo says it needs root.

use super::{host, perftop, text};
use perftop::tweak::apply::{self, FsWriter, Which};
use perftop::tweak::journal::Journal;
use perftop::tweak::plan::{Change, Plan};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DECOY: &str = "root::0:0:decoy, never to be overwritten\n";

fn decoy(dir: &Path, name: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, DECOY).expect("decoy");
    p
}

fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::chown(path, Some(uid), Some(uid)).expect("chown");
}

#[test]
fn a_state_directory_another_user_can_write_is_refused() {
    let h = host();
    let root = h.ctx.root.base().to_path_buf();
    let ratio = h.ctx.root.path("proc/sys/vm/dirty_ratio");
    let mut cases = vec![("mode 0777", 0o777, None)];
    if super::support::is_root() {
        cases.push(("owned by nobody", 0o700, Some(65534)));
    } else {
        super::support::skip(
            "a_state_directory_another_user_can_write_is_refused (nobody's directory)",
            "needs root to chown a directory to nobody",
        );
    }
    for (what, mode, owner) in cases {
        let state = h.dir.path().join(format!("state-{mode:o}-{owner:?}"));
        std::fs::create_dir(&state).expect("mkdir");
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(mode)).expect("chmod");
        if let Some(uid) = owner {
            chown(&state, uid);
        }
        for args in [
            &["set", "vm.dirty_ratio", "5", "--yes"][..],
            &["undo", "--yes"][..],
            &["status"][..],
        ] {
            let o = perftop(&root, &state, args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!o.status.success(), "{what} {args:?}: {}", text(&o));
            assert!(
                err.contains("refusing the state directory"),
                "{what}: {err}"
            );
        }
        assert_eq!(std::fs::read_to_string(&ratio).expect("ratio").trim(), "20");
        assert_eq!(std::fs::read_dir(&state).expect("ls").count(), 0, "{what}");
    }
}

#[test]
fn links_planted_where_perftop_writes_are_never_followed() {
    let h = host();
    let root = h.ctx.root.base().to_path_buf();
    let state = h.ctx.state_dir.clone();
    std::fs::create_dir(&state).expect("mkdir");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let targets: Vec<_> = ["lock", "audit.jsonl", "journal.jsonl"]
        .iter()
        .map(|name| {
            let target = decoy(h.dir.path(), &format!("decoy-{name}"));
            std::os::unix::fs::symlink(&target, state.join(name)).expect("symlink");
            (name, target)
        })
        .collect();
    for args in [
        &["set", "vm.dirty_ratio", "5", "--dry-run"][..],
        &["set", "vm.dirty_ratio", "5", "--yes"][..],
        &["undo", "--yes"][..],
        &["status"][..],
        &["journal"][..],
    ] {
        let o = perftop(&root, &state, args);
        if args.contains(&"--yes") || args[0] != "set" {
            assert!(!o.status.success(), "{args:?}: {}", text(&o));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains("symbolic link"), "{args:?}: {err}");
        }
    }
    for (name, target) in &targets {
        assert_eq!(
            std::fs::read_to_string(target).expect("decoy"),
            DECOY,
            "{name} was written through"
        );
    }
    let ratio = h.ctx.root.read_line("proc/sys/vm/dirty_ratio");
    assert_eq!(
        ratio.as_deref(),
        Some("20"),
        "nothing changed without a journal"
    );
}

/// A journal perftop's own code wrote (valid checksums, chain and seal) for a plan nobody
/// previewed: a decoy file, or a number the knob refuses.
fn forge(h: &super::Host, knob: &str, rel: &str, old: &str) {
    let plan = Plan {
        knob: knob.into(),
        value: "61".into(),
        changes: vec![Change {
            label: knob.into(),
            rel: rel.into(),
            old: old.into(),
            new: "61".into(),
            write: true,
            undo: true,
        }],
        notes: Vec::new(),
        warnings: Vec::new(),
    };
    let j = Journal::new(&h.ctx.state_dir);
    let mut lock = j.lock().expect("lock");
    let root = apply::canonical_root(&h.ctx).expect("root");
    j.begin(&mut lock, &plan, &root).expect("forge");
}

#[test]
fn a_forged_journal_cannot_make_undo_write_outside_the_registry() {
    let h = host();
    let swappiness = "proc/sys/vm/swappiness";
    std::fs::write(h.ctx.root.path(swappiness), "61\n").expect("write");
    let etc = h.ctx.root.path("etc");
    std::fs::create_dir_all(&etc).expect("etc");
    let shadow = decoy(&etc, "shadow");
    let outside = decoy(h.dir.path(), "outside");
    let cases = [
        (
            "a file of no knob",
            "vm.swappiness",
            "etc/shadow",
            "root::0:0:",
        ),
        ("out of the root", "vm.swappiness", "../outside", "60"),
        (
            "another knob's file",
            "vm.swappiness",
            "proc/sys/vm/dirty_ratio",
            "60",
        ),
        ("a number out of range", "vm.swappiness", swappiness, "500"),
        ("octal", "vm.swappiness", swappiness, "010"),
        ("no such knob", "vm.no_such_knob", swappiness, "60"),
    ];
    for (what, knob, rel, old) in cases {
        forge(&h, knob, rel, old);
        let e = apply::undo(&h.ctx, &mut FsWriter, Which::Last, None).expect_err(what);
        let e = format!("{e:#}");
        assert!(
            e.contains("refusing to undo") && e.contains("nothing was written"),
            "{what}: {e}"
        );
        let status = perftop(h.ctx.root.base(), &h.ctx.state_dir, &["status"]);
        assert!(
            String::from_utf8_lossy(&status.stdout).contains(&format!("{knob} → 61")),
            "{}",
            text(&status)
        );
        // The CLI refuses too, before asking.
        let o = perftop(h.ctx.root.base(), &h.ctx.state_dir, &["undo", "--yes"]);
        assert!(!o.status.success(), "{what}: {}", text(&o));
        // Out of the way for the next case (a person's `undo --id` would refuse the same).
        let j = Journal::new(&h.ctx.state_dir);
        let _lock = j.lock().expect("lock");
        j.mark(
            j.read().expect("read").max_id(),
            perftop::tweak::journal::Status::Undone,
        )
        .expect("mark");
    }
    assert_eq!(std::fs::read_to_string(&shadow).expect("shadow"), DECOY);
    assert_eq!(std::fs::read_to_string(&outside).expect("outside"), DECOY);
    assert_eq!(
        h.ctx.root.read_line(swappiness).as_deref(),
        Some("61"),
        "no forged value written"
    );
    assert_eq!(
        h.ctx.root.read_line("proc/sys/vm/dirty_ratio").as_deref(),
        Some("20")
    );
}

/// Runs perftop with a deadline; `None` when it had to be killed.
fn run_within(args: &[&str], root: &Path, state: &Path, limit: Duration) -> Option<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .arg("tweak")
        .args(args)
        .arg("--root")
        .arg(root)
        .arg("--state-dir")
        .arg(state)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let start = Instant::now();
    while start.elapsed() < limit {
        if child.try_wait().expect("wait").is_some() {
            let o = child.wait_with_output().expect("output");
            return Some(String::from_utf8_lossy(&o.stderr).into_owned());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn a_fifo_in_the_state_directory_is_refused_at_once() {
    let h = host();
    let root = h.ctx.root.base().to_path_buf();
    for name in ["journal.jsonl", "lock", "audit.jsonl"] {
        let state = h.dir.path().join(format!("state-{name}"));
        std::fs::create_dir(&state).expect("mkdir");
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        let made = Command::new("mkfifo")
            .arg(state.join(name))
            .status()
            .expect("mkfifo");
        assert!(made.success());
        for args in [
            &["set", "vm.dirty_ratio", "5", "--yes"][..],
            &["undo", "--yes"][..],
            &["status"][..],
        ] {
            // 10 s: a hang is forever; a loaded 2-vCPU machine starts perftop in well under 1 s.
            let err = run_within(args, &root, &state, Duration::from_secs(10))
                .unwrap_or_else(|| panic!("{name}, {args:?}: hung on the FIFO"));
            // The audit log is best effort (a warning beside a true report); undo with no
            // journal has nothing to read but the lock's record, and says so.
            let refused = match name {
                "journal.jsonl" => true,
                "lock" => args[0] != "undo",
                _ => false,
            };
            if refused {
                assert!(err.contains("a FIFO"), "{name}, {args:?}: {err}");
            }
        }
    }
}

#[test]
fn undo_as_another_user_says_it_needs_root() {
    if !super::support::is_root() || Command::new("setpriv").arg("--help").output().is_err() {
        super::support::skip(
            "undo_as_another_user_says_it_needs_root",
            "needs root and setpriv to run perftop as nobody",
        );
        return;
    }
    let as_nobody = || {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]);
        c
    };
    // The build directory may sit where nobody cannot reach (a 0700 home or clone folder).
    let reachable = as_nobody()
        .arg(env!("CARGO_BIN_EXE_perftop"))
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !reachable {
        super::support::skip(
            "undo_as_another_user_says_it_needs_root",
            "nobody cannot run the test binary from this build directory",
        );
        return;
    }
    let h = host();
    super::two_changes(&h);
    let o = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_perftop"))
        .args(["tweak", "undo", "--yes", "--root"])
        .arg(h.ctx.root.base())
        .arg("--state-dir")
        .arg(&h.ctx.state_dir)
        .output()
        .expect("setpriv");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(err.contains("needs root"), "{err}");
    assert!(!err.contains("Permission denied"), "{err}");
}

#[test]
fn previews_and_reports_never_pass_on_escape_bytes() {
    let h = host();
    // A root whose path holds a terminal escape (OSC: retitle the window) and a bidi override.
    let odd = h.dir.path().join("root\u{1b}]0;pwned\u{7}\u{202e}x");
    std::fs::rename(h.ctx.root.base(), &odd).expect("rename");
    let state = h.ctx.state_dir.clone();
    for args in [
        &["set", "vm.dirty_ratio", "5", "--yes"][..],
        &["undo", "--yes"][..],
    ] {
        let o = perftop(&odd, &state, args);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("root?]0;pwned??x"), "{args:?}: {out}");
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{202e}'),
            "{args:?}: {out:?}"
        );
    }
}
