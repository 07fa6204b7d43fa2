//! A slow remote tweak step does not hold the dashboard: `a` on a remote host whose ssh takes
//! 8 s to answer (`PERFTOP_SSH` is a wrapper that sleeps before running ssh, for the tweak's
//! ssh only) says `running on HOST` at once, the screen goes on drawing new samples meanwhile,
//! a second `a` is refused while the first runs, and the knob menu opens when the answer comes.

use crate::support;
use crate::support::sshd::Sshd;
use crate::support::tmux::Session;
use std::time::{Duration, Instant};

/// How long the wrapper holds a tweak's ssh before running it.
const SLOW_S: u64 = 8;

fn wait(s: &Session, what: &str, within: Duration, pred: impl Fn(&str) -> bool) -> String {
    super::ssh::wait_within(s, what, within, pred)
}

#[test]
fn a_slow_remote_step_runs_while_the_dashboard_goes_on() {
    let name = "a_slow_remote_step_runs_while_the_dashboard_goes_on";
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
    let tmp = tempfile::tempdir().expect("temp dir");
    // A host whose counters move every second: each new sample changes the screen.
    let inc = super::ssh::Incident::start();
    // The remote copy in place already: the test is about the step, not the copy.
    let exe = sshd
        .home
        .join(".cache/perftop")
        .join(format!("perftop-{}", env!("CARGO_PKG_VERSION")));
    std::fs::create_dir_all(exe.parent().expect("cache dir")).expect("cache dir");
    std::fs::copy(env!("CARGO_BIN_EXE_perftop"), &exe).expect("seed the remote copy");
    // The stream's ssh goes at once; a tweak's (its script runs `tweak`) waits first.
    let wrapper = tmp.path().join("slow-ssh");
    std::fs::write(
        &wrapper,
        format!("case \"$*\" in *tweak*) sleep {SLOW_S} ;; esac\nexec ssh \"$@\"\n"),
    )
    .expect("wrapper");
    let perftop_ssh = sshd
        .perftop_ssh()
        .replacen("ssh", &format!("sh {}", wrapper.display()), 1);
    let env = [
        ("TERM", "xterm-256color"),
        ("PERFTOP_SSH", perftop_ssh.as_str()),
    ];
    let target = sshd.target();
    let state = tmp.path().join("state");
    let args = vec![
        "ssh".to_string(),
        target.clone(),
        "-d".into(),
        "1".into(),
        "--remote-root".into(),
        inc.root.display().to_string(),
        "--remote-state-dir".into(),
        state.display().to_string(),
    ];
    let (s, _bytes) = Session::start_captured("sshslow", &env, |_| args);
    s.resize(160, 40);
    let long = Duration::from_secs(40);
    wait(&s, "the remote's dashboard", long, |sc| {
        sc.contains(&format!("ssh {target}")) && !sc.contains("connecting")
    });

    let pressed = Instant::now();
    s.keys(&["a"]);
    // Before: the frame was held for the whole step; nothing said until the menu came.
    let first = wait(&s, "running on HOST", Duration::from_secs(4), |sc| {
        sc.contains(&format!("running on {target}: tweak list"))
    });
    assert!(
        pressed.elapsed() < Duration::from_secs(SLOW_S),
        "the status came before the answer"
    );
    // The screen above the footer (which says the step runs, its seconds moving).
    let body = |sc: &str| {
        let lines: Vec<&str> = sc.lines().collect();
        lines[..lines.len().saturating_sub(2)].join("\n")
    };
    // A second `a` while it runs is refused, in words.
    s.keys(&["a"]);
    let refused = wait(
        &s,
        "the second step refused",
        Duration::from_secs(4),
        |sc| sc.contains("one remote step at a time"),
    );
    // New samples keep coming and are drawn: the panes move on while the step runs.
    let later = wait(&s, "a new sample drawn", Duration::from_secs(5), |sc| {
        body(sc) != body(&first)
    });
    assert!(
        pressed.elapsed() < Duration::from_secs(SLOW_S),
        "the screen moved before the answer:\n{first}\n{later}\n{refused}"
    );
    // The answer comes and opens the menu (within the wrapper's wait and a slow machine's).
    wait(&s, "the remote's knob menu", long, |sc| {
        sc.contains(&format!("knobs on {target}"))
    });
    assert!(
        pressed.elapsed() >= Duration::from_secs(SLOW_S),
        "the menu came through the slow ssh"
    );
    s.keys(&["Escape", "q"]);
}
