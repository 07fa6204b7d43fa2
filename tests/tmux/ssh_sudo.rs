//! A tweak on a remote host whose user is not root, through a real `sudo -n`: the script that
//! `perftop ssh` runs there (`remote::tweak::Remote::script`) is run here as `nobody`, with a
//! sudoers rule that lets `nobody` run only the remote copy of perftop as root, without a
//! password. Preview, apply, journal and undo go through sudo; without the rule, sudo's refusal
//! is told as "needs a password". The rule, the knob's old value and the copy are removed or put
//! back whatever happens.

use crate::support;
use perftop::remote::tweak::{judge, Answer, Remote};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const KNOB: &str = "/proc/sys/vm/swappiness";
const HOST: &str = "db1";

/// Removes the sudoers rule and puts the knob back on drop (a failed assertion included).
struct Cleanup {
    rule: PathBuf,
    knob: String,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.rule);
        let _ = std::fs::write(KNOB, &self.knob);
    }
}

fn knob() -> String {
    std::fs::read_to_string(KNOB)
        .expect("vm.swappiness")
        .trim()
        .to_string()
}

/// The remote's script for `args`, run as `nobody` with `home` as its HOME; judged as the
/// dashboard judges it.
fn as_nobody(remote: &Remote, home: &Path, args: &[&str]) -> Answer {
    let out = Command::new("/usr/bin/setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .args(["sh", "-c", &remote.script(args)])
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .output()
        .expect("setpriv");
    judge(
        HOST,
        out.status.code(),
        &String::from_utf8_lossy(&out.stdout),
        &String::from_utf8_lossy(&out.stderr),
    )
}

fn done(a: Answer, step: &str) -> String {
    match a {
        Answer::Done(text) => text,
        other => panic!("{step}: not done through sudo: {other:?}"),
    }
}

#[test]
fn a_remote_tweak_runs_through_passwordless_sudo_and_is_undone() {
    let name = "a_remote_tweak_runs_through_passwordless_sudo_and_is_undone";
    if !support::is_root() {
        support::skip(name, "needs root (writes a sudoers rule)");
        return;
    }
    for tool in ["/usr/bin/sudo", "/usr/sbin/visudo", "/usr/bin/setpriv"] {
        if !Path::new(tool).is_file() {
            support::skip(
                name,
                &format!("{tool} missing (apt-get install sudo util-linux)"),
            );
            return;
        }
    }
    let old = knob();
    if std::fs::write(KNOB, &old).is_err() {
        support::skip(name, "vm.swappiness cannot be written here (a container?)");
        return;
    }
    // It changes kernel state: never beside another test that drives or measures the machine.
    let _machine = support::machine();

    // The remote user's HOME with the copy `perftop ssh` would have left there. nobody must be
    // able to reach it: the temporary directory is made 0755 (it holds nothing else).
    let home = tempfile::tempdir().expect("home");
    let exe = home
        .path()
        .join(".cache/perftop")
        .join(format!("perftop-{}", env!("CARGO_PKG_VERSION")));
    std::fs::create_dir_all(exe.parent().expect("cache dir")).expect("cache dir");
    std::fs::copy(env!("CARGO_BIN_EXE_perftop"), &exe).expect("the remote copy");
    for dir in [
        home.path().to_path_buf(),
        home.path().join(".cache"),
        home.path().join(".cache/perftop"),
    ] {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    // root's journal: a directory only root can write, as perftop requires.
    let state = tempfile::tempdir().expect("state dir");
    let remote = Remote {
        target: perftop::remote::Target::parse(HOST).expect("target"),
        root: None,
        state_dir: Some(state.path().join("perftop").display().to_string()),
    };
    let old_n: u32 = old.parse().expect("a number");
    let new = if old_n >= 100 { old_n - 7 } else { old_n + 7 }.to_string();
    let set = ["set", "--dry-run", "--", "vm.swappiness", new.as_str()];

    // Without a rule, sudo refuses: "needs a password", naming the host, nothing changed.
    let rule = PathBuf::from(format!(
        "/etc/sudoers.d/perftop-test-{}",
        std::process::id()
    ));
    let _cleanup = Cleanup {
        rule: rule.clone(),
        knob: old.clone(),
    };
    match as_nobody(&remote, home.path(), &set) {
        Answer::NoRoot(why) => assert!(
            why.starts_with("db1: sudo needs a password") && why.contains("sudo said: "),
            "{why}"
        ),
        other => panic!("without a sudoers rule: {other:?}"),
    }

    // The rule: only that binary, as root, without a password; checked by visudo first.
    std::fs::write(
        &rule,
        format!("nobody ALL=(root) NOPASSWD: {}\n", exe.display()),
    )
    .expect("sudoers rule");
    std::fs::set_permissions(&rule, std::fs::Permissions::from_mode(0o440)).expect("chmod");
    let check = Command::new("/usr/sbin/visudo")
        .args(["-c", "-q", "-f"])
        .arg(&rule)
        .status()
        .expect("visudo");
    assert!(check.success(), "visudo refused the test's rule");

    let preview = done(as_nobody(&remote, home.path(), &set), "preview");
    assert!(
        preview.contains(&old) && preview.contains(&new),
        "the preview shows old and new: {preview}"
    );
    assert_eq!(knob(), old, "a preview changes nothing");

    let applied = done(
        as_nobody(
            &remote,
            home.path(),
            &["set", "--yes", "--", "vm.swappiness", new.as_str()],
        ),
        "apply",
    );
    assert_eq!(knob(), new, "set through sudo: {applied}");
    let journal = std::fs::read_dir(state.path().join("perftop"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert!(journal > 0, "root's journal is in the state directory");

    let undone = done(as_nobody(&remote, home.path(), &["undo", "--yes"]), "undo");
    assert_eq!(knob(), old, "undone through sudo: {undone}");
}
