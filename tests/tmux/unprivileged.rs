//! The dashboard as `nobody` (issue 43 item 3), end to end: it starts, says in its header that
//! tweaks need root, the tweak menu says so on every knob, the governor key previews nothing,
//! and `q` exits 0 with the terminal restored. Needs root (to drop to uid 65534), `setpriv`
//! and tmux; a visible SKIP otherwise.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use support::tmux::{tmux_available, Session};

#[test]
fn the_dashboard_as_nobody_says_tweaks_need_root() {
    let test = "the_dashboard_as_nobody_says_tweaks_need_root";
    if !tmux_available() {
        support::skip(test, "tmux is not installed (apt-get install -y tmux)");
        return;
    }
    if !rustix::process::geteuid().is_root() {
        support::skip(test, "not root: cannot drop to nobody");
        return;
    }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    let Some(setpriv) = setpriv else {
        support::skip(test, "no setpriv (util-linux)");
        return;
    };
    let s = Session::start_by(
        "nobody",
        |tmp| {
            // The binary where nobody can run it, and a home nobody can write.
            let open = |p: &std::path::Path, mode| {
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod")
            };
            open(tmp, 0o755);
            let home = tmp.join("home");
            std::fs::create_dir(&home).expect("home");
            open(&home, 0o777);
            let bin = tmp.join("perftop");
            std::fs::copy(env!("CARGO_BIN_EXE_perftop"), &bin).expect("copy");
            let home = home.to_string_lossy().into_owned();
            vec![
                setpriv.into(),
                "--reuid=65534".into(),
                "--regid=65534".into(),
                "--clear-groups".into(),
                "env".into(),
                format!("HOME={home}"),
                format!("XDG_STATE_HOME={home}"),
                format!("XDG_CONFIG_HOME={home}"),
                bin.to_string_lossy().into_owned(),
            ]
        },
        |_| vec!["-d".into(), "1".into()],
    );
    // The pid file names the shell that execs setpriv, then perftop: its owner is read once
    // the dashboard is up (before, it may still be root's shell).
    let pid = s.perftop_pid();
    s.wait("the dashboard", support::tmux::has_footer);
    let uid = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|st| {
            st.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|u| u.split_whitespace().next().map(str::to_string))
        });
    assert_eq!(uid.as_deref(), Some("65534"), "perftop runs as nobody");
    let screen = s.screen();
    assert!(screen.contains("tweaks need root"), "{screen}");
    // The governor key previews nothing: it says why instead.
    s.keys(&["g"]);
    let screen = s.wait("the governor key's answer", |sc| {
        sc.contains("governor:") || sc.contains("needs root")
    });
    assert!(
        !screen.contains("y applies") && !screen.contains("→"),
        "{screen}"
    );
    // The menu shows each knob's value and that it needs root: every knob row on screen is
    // disabled, and those the host has say why is root.
    s.keys(&["a"]);
    let screen = s.wait("the tweak menu", |sc| sc.contains("tweaks (g: governor"));
    let rows: Vec<&str> = screen
        .lines()
        .filter(|l| l.contains("vm.") || l.contains("net.") || l.contains("thp."))
        .collect();
    let refused = rows
        .iter()
        .filter(|l| l.contains("disabled: needs root"))
        .count();
    assert!(
        rows.len() >= 3 && refused == rows.len(),
        "{} knob rows, {refused} say root:\n{screen}",
        rows.len()
    );
    s.keys(&["Escape"]);
    s.keys(&["q"]);
    s.assert_exited_and_restored("q as nobody", &["0"]);
}
