//! End-to-end: the real `perftop` binary in a real terminal (tmux), driven by keys, resizes and
//! signals, read back with `capture-pane`. Checks the six panes and the footer, help, zoom, sort,
//! pause, history, the "too small" screen, growing back, and that `q` (status 0), SIGTERM
//! (143), SIGHUP (129) and SIGQUIT (131) give the terminal back (normal screen, cooked mode,
//! cursor shown).
//!
//! Needs `tmux` (skips itself with a message when it is missing). CI images install it, e.g.
//! `command -v tmux || apt-get install -y tmux`.
//!
//! The harness (`support::tmux`): every wait polls with a deadline; nothing sleeps blindly.
//! Each test uses its own tmux server socket (`-S` in its temp dir, removed with it), so tests
//! run in parallel, never touch a user's tmux and leave nothing in /tmp/tmux-UID.

use crate::support;

use std::process::Command;
use std::time::Instant;
use support::tmux::{
    all_panes, fixture_root, has_footer, leftovers, titles, tmux_available, Session, POLL, WAIT,
};

/// Lines of the screen that start with a pane title.
fn titles_at_line_start(screen: &str) -> Vec<String> {
    titles()
        .into_iter()
        .filter(|t| screen.lines().any(|l| l.starts_with(t.as_str())))
        .collect()
}

/// A screen property checked in tmux (these once only warned; they hold strictly now).
fn assert_screen(ok: bool, what: &str, screen: &str) {
    assert!(ok, "{what}; screen:\n{screen}");
}

#[test]
fn keys_resizes_and_quit_in_tmux() {
    if !tmux_available() {
        support::skip(
            "keys_resizes_and_quit_in_tmux",
            "tmux is not installed (apt-get install -y tmux)",
        );
        return;
    }
    let s = Session::start("keys");

    let first = s.wait(
        "the first frame with six panes and the footer at 80x24",
        |sc| all_panes(sc) && has_footer(sc),
    );
    assert!(first.contains("LIVE"), "header without LIVE:\n{first}");
    // An 80x24 terminal under tmux's status line gives perftop 80x23, where tables once all
    // vanished: every row is used and each table keeps its header and a row under it.
    s.resize(80, 23);
    let short = s.wait("80x23: the frame redrawn for 23 rows", |sc| {
        all_panes(sc) && has_footer(sc) && sc.lines().count() == 23
    });
    assert_eq!(s.format("#{pane_width}x#{pane_height}"), "80x23");
    // CPU rows are never idle: its header is always there. A table of idle rows (every disk
    // quiet) is its `N idle devices hidden` line alone, with no header to judge.
    assert!(
        short.contains("CPU      C0%"),
        "80x23: no CPU table\n{short}"
    );
    for header in ["CPU      C0%", "node cpus", "Device       r/s"] {
        let Some(at) = short.lines().position(|l| l.starts_with(header)) else {
            continue;
        };
        let row = short.lines().nth(at + 1);
        assert!(
            row.is_some_and(|r| r.starts_with(|c: char| c.is_ascii_alphanumeric())),
            "80x23: table {header:?} without a row under it:\n{short}"
        );
    }
    assert!(
        short.lines().all(|l| !l.trim().is_empty()) && short.lines().count() == 23,
        "80x23: a blank row\n{short}"
    );
    s.resize(80, 24);
    s.wait("80x24 again", |sc| {
        all_panes(sc) && sc.lines().count() == 24
    });

    s.keys(&["?"]);
    // The frame may be captured while it is still being written: wait for the box's last
    // row (its bottom border) before judging what it holds.
    let help = s.wait("the whole help screen", |sc| {
        sc.contains("perftop keys") && sc.contains("? or Esc closes")
    });
    assert_screen(
        help.contains("back to live"),
        "help at 80x24 cuts off its last rows (Home / End) without any scroll hint",
        &help,
    );

    s.keys(&["Escape"]);
    s.wait("help closed, all panes back", |sc| {
        !sc.contains("perftop keys") && all_panes(sc) && has_footer(sc)
    });

    s.keys(&["Enter"]);
    s.wait("zoom: only the focused pane's title", |sc| {
        titles_at_line_start(sc) == ["1 CPU power"] && has_footer(sc)
    });
    // The footer follows the state (issue 41 item 11): zoomed, Enter unzooms.
    s.wait("the footer says Enter unzoom", |sc| {
        sc.contains("Enter unzoom")
    });

    s.keys(&["Enter"]);
    s.wait("unzoomed: all panes back", |sc| {
        titles_at_line_start(sc).len() == titles().len()
    });

    s.keys(&["s"]);
    s.wait("the sort status in the footer", |sc| {
        sc.contains("sort: by name")
    });

    s.keys(&["Space"]);
    s.wait("PAUSED in the header", |sc| {
        sc.lines().next().is_some_and(|l| l.contains("PAUSED"))
    });
    // Paused, space resumes, and the footer says so rather than `space pause`.
    s.wait("the footer says space resume", |sc| {
        sc.contains("space resume") && !sc.contains("space pause")
    });

    // Stepping back needs two samples in memory; resend until the header says so.
    s.keys(&["T"]);
    s.wait_retrying("HISTORY in the header after T", &["T"], |sc| {
        sc.lines().next().is_some_and(|l| l.contains("HISTORY"))
    });

    s.resize(20, 5);
    let small = s.wait("the too-small screen at 20x5", |sc| {
        sc.contains("20x5, need") || sc.contains("too small")
    });
    assert!(
        !titles().iter().any(|t| small.contains(t.as_str())),
        "panes drawn at 20x5:\n{small}"
    );
    assert_screen(
        small.contains("too small"),
        "at 20 columns the first line 'perftop: terminal too small' is cut to 'perftop: terminal to'",
        &small,
    );

    s.resize(200, 50);
    let big = s.wait("all panes back at 200x50", |sc| {
        all_panes(sc) && has_footer(sc) && sc.lines().count() >= 40
    });
    assert!(
        big.lines().next().is_some_and(|l| l.contains("HISTORY")),
        "history view lost on resize:\n{big}"
    );

    // Help over the big screen, then back: the last frame is a partial update that leaves the
    // cursor mid-screen, the case where leftovers show on the normal screen (see below).
    s.keys(&["?"]);
    // tmux may be captured between the frame's first and last rows: wait for the whole box
    // (a box that never gets its last row fails the wait).
    let help = s.wait("the whole help screen at 200x50", |sc| {
        sc.contains("perftop keys") && sc.contains("back to live")
    });
    assert!(
        help.contains("back to live"),
        "help at 200x50 lacks its last row:\n{help}"
    );
    s.keys(&["Escape"]);
    s.wait("help closed at 200x50", |sc| {
        !sc.contains("perftop keys") && all_panes(sc)
    });

    s.keys(&["q"]);
    let after = s.assert_exited_and_restored("q", &["0"]);
    assert_screen(
        leftovers(&after).is_empty(),
        "after growing the window while on the alternate screen, tmux 3.3a keeps dashboard lines \
         on the normal screen at exit (clearing the alternate screen before leaving it avoids it)",
        &after,
    );
}

/// A signal ends the dashboard with the terminal given back and exit status 128 + the
/// signal's number, as a shell reports a process a signal ended.
fn signal_restores_the_terminal(test: &str, signal: &str, rc: &str) {
    if !tmux_available() {
        support::skip(test, "tmux is not installed (apt-get install -y tmux)");
        return;
    }
    let s = Session::start(&signal.to_ascii_lowercase());
    s.wait("the first frame", |sc| all_panes(sc) && has_footer(sc));
    let pid = s.perftop_pid();
    let out = Command::new("kill")
        .args([&format!("-{signal}"), &pid])
        .output()
        .expect("running kill");
    assert!(out.status.success(), "kill -{signal} {pid} failed");
    let after = s.assert_exited_and_restored(&format!("SIG{signal}"), &[rc]);
    assert!(
        leftovers(&after).is_empty(),
        "dashboard left on the normal screen after SIG{signal}:\n{after}"
    );
}

#[test]
fn sigterm_restores_the_terminal() {
    // 143 = 128 + SIGTERM (15).
    signal_restores_the_terminal("sigterm_restores_the_terminal", "TERM", "143");
}

#[test]
fn sighup_restores_the_terminal() {
    // 129 = 128 + SIGHUP (1): what an SSH session that drops sends.
    signal_restores_the_terminal("sighup_restores_the_terminal", "HUP", "129");
}

#[test]
fn sigquit_restores_the_terminal() {
    // 131 = 128 + SIGQUIT (3). Uncaught, it dumped core and left the terminal on the
    // alternate screen (issue 37).
    signal_restores_the_terminal("sigquit_restores_the_terminal", "QUIT", "131");
}

/// `R` records the live stream to a file, `R` again stops it; `perftop replay` then shows that
/// file with its timeline, steps with T, plays with space to the end, and quits cleanly.
#[test]
fn record_with_r_then_replay() {
    if !tmux_available() {
        support::skip(
            "record_with_r_then_replay",
            "tmux is not installed (apt-get install -y tmux)",
        );
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let rec_dir = dir.path().to_path_buf();
    let s = Session::start_with("rec", |tmp| {
        let root = fixture_root(tmp);
        vec![
            "--root".into(),
            root.to_string_lossy().into_owned(),
            "-d".into(),
            "0.25".into(),
            "--record-dir".into(),
            rec_dir.to_string_lossy().into_owned(),
        ]
    });
    s.wait("the first frame", |sc| all_panes(sc) && has_footer(sc));
    s.keys(&["R"]);
    s.wait("REC in the header", |sc| {
        sc.lines().next().is_some_and(|l| l.contains(" REC "))
    });
    let file = {
        let start = Instant::now();
        loop {
            let found = std::fs::read_dir(&rec_dir)
                .expect("record dir")
                .filter_map(|e| e.ok().map(|e| e.path()))
                .find(|p| p.extension().is_some_and(|x| x == "ptrec"));
            if let Some(f) = found {
                let n = perftop::record::Recording::open(&f).map_or(0, |r| r.len());
                if n >= 4 {
                    break f;
                }
            }
            assert!(
                start.elapsed() < WAIT,
                "no recording with 4 samples appeared"
            );
            std::thread::sleep(POLL);
        }
    };
    s.keys(&["R"]);
    s.wait("recording stopped", |sc| sc.contains("recording stopped"));
    s.keys(&["q"]);
    s.assert_exited_and_restored("q after recording", &["0"]);
    let rec = perftop::record::Recording::open(&file).expect("the R recording");
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    let n = rec.len();
    assert!(n >= 4, "{n} samples");

    let file_arg = file.to_string_lossy().into_owned();
    let r = Session::start_with("replay", |_| {
        vec![
            "replay".into(),
            file_arg.clone(),
            "--glyphs".into(),
            "ascii".into(),
        ]
    });
    let first = r.wait("the replay's first frame", |sc| {
        all_panes(sc) && sc.contains("REPLAY PAUSED") && sc.contains(&format!(" 1/{n} "))
    });
    assert!(
        first.lines().nth(2).is_some_and(|l| l.contains('|')),
        "timeline row with its cursor:\n{first}"
    );
    // `t` forward and `T` back, as in atop -r and below replay (issue 41 item 2), and the
    // footer says so.
    assert!(first.contains("t fwd T back"), "footer:\n{first}");
    r.keys(&["t"]);
    r.wait("t steps forward to the second sample", |sc| {
        sc.contains(&format!(" 2/{n} "))
    });
    r.keys(&["T"]);
    r.wait("T steps back to the first sample", |sc| {
        sc.contains(&format!(" 1/{n} "))
    });
    r.keys(&["t"]);
    r.wait("t steps forward again", |sc| {
        sc.contains(&format!(" 2/{n} "))
    });
    r.keys(&["g"]);
    r.keys(&["Space"]);
    r.wait("playback reaches the end", |sc| {
        sc.contains("end of recording") && sc.contains(&format!(" {n}/{n} "))
    });
    r.keys(&["q"]);
    r.assert_exited_and_restored("q in replay", &["0"]);
}
