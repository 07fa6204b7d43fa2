//! A tweak over `perftop ssh`, end to end: this machine is the remote (the private sshd logs
//! in as root, so the remote side is root), its real `vm.swappiness` the knob. `a` lists the
//! remote's knobs, the preview names the host, `y` sets it there (journalled in the remote's
//! state directory), `u` then `y` restores it; the old value is put back whatever happens.

use crate::support;
use crate::support::sshd::Sshd;
use crate::support::tmux::Session;
use std::path::Path;
use std::time::Duration;

const KNOB: &str = "/proc/sys/vm/swappiness";
/// A first connection copies a debug build; a remote command then answers within a second or
/// two even on a busy machine.
const WAIT: Duration = Duration::from_secs(40);

/// Puts the knob's old value back on drop (a failed assertion included).
struct Restore(String);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(KNOB, &self.0);
    }
}

fn read_knob() -> String {
    std::fs::read_to_string(KNOB)
        .expect("vm.swappiness")
        .trim()
        .to_string()
}

fn wait(s: &Session, what: &str, pred: impl Fn(&str) -> bool) -> String {
    super::ssh::wait_within(s, what, WAIT, pred)
}

/// `perftop tweak status --state-dir STATE`, run here (the remote is this machine): a line per
/// journalled change, `#N KNOB → VALUE (applied, …)` or `(undone)`.
fn journal(state: &Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(["tweak", "status", "--state-dir"])
        .arg(state)
        .output()
        .expect("perftop tweak journal");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Where vm.swappiness sits in the remote's knob menu: the order of `perftop tweak list` on
/// this machine, which is the remote.
fn menu_index(name: &str) -> usize {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(["tweak", "list"])
        .output()
        .expect("perftop tweak list");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with("warning: ") && l.contains(" allowed:"))
        .position(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("{name} not in perftop tweak list:\n{text}"))
}

#[test]
fn ssh_tweak_is_journalled_on_the_remote_and_undone_from_here() {
    let name = "ssh_tweak_is_journalled_on_the_remote_and_undone_from_here";
    if !support::tmux::tmux_available() {
        support::skip(name, "tmux not installed");
        return;
    }
    let sshd = match Sshd::start() {
        Ok(s) => s,
        Err(why) => {
            support::skip(name, &why);
            return;
        }
    };
    let old = read_knob();
    if std::fs::write(KNOB, &old).is_err() {
        support::skip(name, "vm.swappiness cannot be written here (a container?)");
        return;
    }
    // It changes kernel state: never beside another test that drives or measures the machine.
    let _machine = support::machine();
    let _restore = Restore(old.clone());
    let old_n: u32 = old.parse().expect("a number");
    let new = if old_n >= 100 { old_n - 7 } else { old_n + 7 }.to_string();
    let state = tempfile::tempdir().expect("state dir");
    let state_dir = state.path().join("perftop");
    // The remote copy in place already: the test is about the tweak, not the copy.
    let exe = sshd
        .home
        .join(".cache/perftop")
        .join(format!("perftop-{}", env!("CARGO_PKG_VERSION")));
    std::fs::create_dir_all(exe.parent().expect("cache dir")).expect("cache dir");
    std::fs::copy(env!("CARGO_BIN_EXE_perftop"), &exe).expect("seed the remote copy");

    let target = sshd.target();
    let perftop_ssh = sshd.perftop_ssh();
    let env = [
        ("TERM", "xterm-256color"),
        ("PERFTOP_SSH", perftop_ssh.as_str()),
    ];
    // `-d 5`: the remote sampler reads this whole machine; the test needs its dashboard, not
    // its samples, and the tests beside it their CPU.
    let args = vec![
        "ssh".to_string(),
        target.clone(),
        "-d".into(),
        "5".into(),
        "--remote-state-dir".into(),
        state_dir.display().to_string(),
    ];
    let (s, _bytes) = Session::start_captured("sshtweak", &env, |_| args);
    s.resize(160, 40);
    wait(&s, "the remote's dashboard", |sc| {
        sc.contains(&format!("ssh {target}")) && !sc.contains("connecting")
    });

    s.keys(&["a"]);
    wait(&s, "the remote's knob menu", |sc| {
        sc.contains(&format!("knobs on {target}")) && sc.contains("vm.swappiness")
    });
    for _ in 0..menu_index("vm.swappiness") {
        s.keys(&["Down"]);
    }
    s.keys(&["Enter"]);
    wait(&s, "the value prompt", |sc| sc.contains("new value:"));
    s.keys(&[new.as_str(), "Enter"]);
    let preview = wait(&s, "the remote's preview naming the host", |sc| {
        sc.contains(&format!("on {target}: set vm.swappiness -> {new}?"))
    });
    assert!(
        // In ASCII the dialog's lines draw → as `>`.
        preview.contains(&format!("{old} -> {new}")) || preview.contains(&format!("{old} > {new}")),
        "the preview shows old → new:\n{preview}"
    );
    assert_eq!(read_knob(), old, "nothing is set before y");
    assert!(
        !journal(&state_dir).contains("vm.swappiness"),
        "nothing journalled before y: {}",
        journal(&state_dir)
    );

    s.keys(&["y"]);
    let applied = wait(&s, "the remote's read-back", |sc| {
        sc.contains(&format!("vm.swappiness = {new} there (u undoes it)"))
    });
    assert_eq!(read_knob(), new, "the kernel's value after y:\n{applied}");
    let j = journal(&state_dir);
    assert!(
        j.lines()
            .any(|l| l.contains(&format!("vm.swappiness → {new} (applied"))),
        "the remote's journal holds the change:\n{j}"
    );

    s.keys(&["u"]);
    wait(&s, "the remote's undo preview", |sc| {
        sc.contains(&format!("on {target}: undo #")) && sc.contains("(vm.swappiness)?")
    });
    assert_eq!(read_knob(), new, "nothing is restored before y");
    s.keys(&["y"]);
    let undone = wait(&s, "the undo's report", |sc| {
        sc.contains("vm.swappiness restored there")
    });
    assert_eq!(read_knob(), old, "the kernel's value after undo:\n{undone}");
    let j = journal(&state_dir);
    assert!(
        j.lines()
            .any(|l| l.contains(&format!("vm.swappiness → {new} (undone)"))),
        "the remote's journal marks it undone:\n{j}"
    );
    s.keys(&["q"]);
}

/// The remote side as another user than root: the script `perftop ssh` runs there goes through
/// `sudo -n` and, where sudo is missing or wants a password, the answer says that tweaks need
/// root or passwordless sudo, naming the host (run here as `nobody`, without ssh).
#[test]
fn a_remote_user_without_root_or_sudo_gets_told_so() {
    let name = "a_remote_user_without_root_or_sudo_gets_told_so";
    if !support::is_root() || !Path::new("/usr/bin/setpriv").is_file() {
        support::skip(name, "needs root and setpriv to run the script as nobody");
        return;
    }
    let remote = perftop::remote::tweak::Remote {
        target: perftop::remote::Target::parse("db1").expect("target"),
        root: None,
        state_dir: None,
    };
    let script = remote.script(&["set", "--dry-run", "--", "vm.swappiness", "61"]);
    let out = std::process::Command::new("/usr/bin/setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .args(["sh", "-c", &script])
        .env("HOME", "/nonexistent")
        .output()
        .expect("setpriv");
    let answer = perftop::remote::tweak::judge(
        "db1",
        out.status.code(),
        &String::from_utf8_lossy(&out.stdout),
        &String::from_utf8_lossy(&out.stderr),
    );
    match &answer {
        perftop::remote::tweak::Answer::NoRoot(why) => assert!(
            why.starts_with("db1: ") && why.contains("tweaks need root or passwordless sudo"),
            "{why}"
        ),
        other => panic!("not a refusal for want of root: {other:?}"),
    }
}
