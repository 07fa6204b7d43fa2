//! Control keys in the typed prompts (issue 41 item 3), in a real terminal: in `/` Ctrl-W
//! deletes the last word and Ctrl-U the line, neither typed as `w`/`u`; in `b` Ctrl-C quits
//! perftop (exit 0, terminal restored) rather than typing `c`.

use crate::support;

use support::tmux::{all_panes, has_footer, tmux_available, Session};

/// The footer's prompt line (`filter: ...`, `go to: ...`).
fn prompt_line(screen: &str, label: &str) -> Option<String> {
    screen
        .lines()
        .find(|l| l.starts_with(label))
        .map(|l| l.to_string())
}

#[test]
fn ctrl_u_ctrl_w_edit_and_ctrl_c_quits_from_a_prompt() {
    if !tmux_available() {
        support::skip(
            "ctrl_u_ctrl_w_edit_and_ctrl_c_quits_from_a_prompt",
            "tmux is not installed (apt-get install -y tmux)",
        );
        return;
    }
    let s = Session::start("prompt-keys");
    s.wait("the first frame", |sc| all_panes(sc) && has_footer(sc));
    s.keys(&["/"]);
    s.wait("the filter prompt", |sc| {
        prompt_line(sc, "filter: ").is_some_and(|l| l.starts_with("filter: _"))
    });
    s.keys(&["cpu1", "Space", "nvme"]);
    s.wait("typed 'cpu1 nvme'", |sc| {
        prompt_line(sc, "filter: ").is_some_and(|l| l.starts_with("filter: cpu1 nvme_"))
    });
    s.keys(&["C-w"]);
    s.wait("Ctrl-W deleted the word 'nvme'", |sc| {
        prompt_line(sc, "filter: ").is_some_and(|l| l.starts_with("filter: cpu1 _"))
    });
    s.keys(&["C-u"]);
    s.wait("Ctrl-U cleared the line", |sc| {
        prompt_line(sc, "filter: ").is_some_and(|l| l.starts_with("filter: _"))
    });
    // Esc and `b` apart: together a terminal reads them as Alt-b.
    s.keys(&["Escape"]);
    s.wait("the prompt closed", |sc| {
        prompt_line(sc, "filter: ").is_none()
    });
    s.keys(&["b"]);
    s.wait("the go-to prompt", |sc| {
        prompt_line(sc, "go to: ").is_some_and(|l| l.starts_with("go to: _"))
    });
    s.keys(&["C-c"]);
    s.assert_exited_and_restored("Ctrl-C in the b prompt", &["0"]);
}
