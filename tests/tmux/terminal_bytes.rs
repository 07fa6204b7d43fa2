//! The raw byte stream the dashboard sends, captured from its first byte (tmux `pipe-pane`) in
//! terminals of each kind: `TERM=xterm` under `LC_ALL=C` gets only ASCII and only the 16
//! colours' SGR codes, with the help box, the tweak menu and a tweak preview opened;
//! `xterm-256color` gets indexed colours but no 24-bit; `COLORTERM=truecolor` gets 24-bit;
//! `NO_COLOR` no colour at all.
//!
//! Needs `tmux` (skips itself with a message when it is missing).

use crate::support;

use std::path::Path;
use std::time::Instant;
use support::tmux::{all_panes, fixture_root, has_footer, tmux_available, Session, POLL, WAIT};

/// The SGR colour parameters of a byte stream: foreground and background, each as written
/// (`31`, `38;5;196`, `38;2;255;0;0`, `39`).
#[derive(Debug, Default)]
pub(super) struct Sgr {
    pub fg: Vec<String>,
    pub bg: Vec<String>,
}

/// Walks every CSI sequence (`ESC [ params final`) and collects the colours of those ending
/// in `m`; an extended colour (38/48) takes its 5;N or 2;R;G;B with it.
pub(super) fn sgr(bytes: &[u8]) -> Sgr {
    let mut out = Sgr::default();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] != 0x1b || bytes[i + 1] != b'[' {
            i += 1;
            continue;
        }
        let start = i + 2;
        let Some(len) = bytes[start..]
            .iter()
            .position(|b| (0x40..=0x7e).contains(b))
        else {
            break;
        };
        let end = start + len;
        if bytes[end] == b'm' {
            let params = String::from_utf8_lossy(&bytes[start..end]).into_owned();
            let mut p = params.split(';').peekable();
            while let Some(code) = p.next() {
                let list = match code {
                    "38" | "39" => &mut out.fg,
                    "48" | "49" => &mut out.bg,
                    c if c.len() == 2 && (c.starts_with('3') || c.starts_with('9')) => &mut out.fg,
                    c if (c.len() == 2 && c.starts_with('4'))
                        || (c.len() == 3 && c.starts_with("10")) =>
                    {
                        &mut out.bg
                    }
                    _ => continue,
                };
                let mut text = code.to_string();
                if code == "38" || code == "48" {
                    let n = match p.next() {
                        Some("5") => 1,
                        Some("2") => 3,
                        other => panic!("malformed extended colour {code};{other:?} in {params}"),
                    };
                    text.push_str(if n == 1 { ";5" } else { ";2" });
                    for _ in 0..n {
                        text.push(';');
                        text.push_str(p.next().unwrap_or("?"));
                    }
                }
                list.push(text);
            }
        }
        i = end + 1;
    }
    out
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Waits until perftop has left the alternate screen and tmux has copied that far.
fn captured(bytes: &Path) -> Vec<u8> {
    let start = Instant::now();
    loop {
        let b = std::fs::read(bytes).unwrap_or_default();
        if contains(&b, "\x1b[?1049l") {
            return b;
        }
        assert!(
            start.elapsed() < WAIT,
            "the capture never got the leave-alternate-screen sequence ({} bytes)",
            b.len()
        );
        std::thread::sleep(POLL);
    }
}

/// Runs the dashboard on a copy of a fixture root in `env` with `extra` arguments, shows the
/// first frame, runs `then` (more keys), quits with `q`, and returns every byte it wrote.
pub(super) fn run(
    tag: &str,
    env: &[(&str, &str)],
    extra: &[&str],
    then: impl FnOnce(&Session),
) -> Vec<u8> {
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    let (s, bytes) = Session::start_captured(tag, env, |tmp| {
        let root = tmp.join("root");
        support::copy_tree(&fixture_root(tmp), &root);
        let mut args = vec![
            "--root".to_string(),
            root.to_string_lossy().into_owned(),
            "--state-dir".into(),
            tmp.join("state").to_string_lossy().into_owned(),
        ];
        args.extend(extra);
        args
    });
    s.wait("the first frame", |sc| all_panes(sc) && has_footer(sc));
    then(&s);
    s.keys(&["q"]);
    s.assert_exited_and_restored("q", &["0"]);
    captured(&bytes)
}

/// The first byte above 0x7f with the bytes before it, for the failure message.
pub(super) fn first_non_ascii(b: &[u8]) -> Option<String> {
    let i = b.iter().position(|x| *x >= 0x80)?;
    let from = i.saturating_sub(60);
    Some(format!(
        "byte {:#04x} at {i} after {:?}",
        b[i],
        String::from_utf8_lossy(&b[from..i])
    ))
}

#[test]
fn xterm_in_the_c_locale_gets_ascii_and_16_colours() {
    if !tmux_available() {
        support::skip(
            "xterm_in_the_c_locale_gets_ascii_and_16_colours",
            "tmux is not installed (apt-get install -y tmux)",
        );
        return;
    }
    let env = [("TERM", "xterm"), ("LC_ALL", "C")];
    let mut previewed = false;
    let b = run("xterm16", &env, &[], |s| {
        s.keys(&["?"]);
        s.wait("the whole help box", |sc| {
            sc.contains("perftop keys") && sc.contains("? or Esc closes")
        });
        s.keys(&["Escape"]);
        s.wait("help closed", |sc| !sc.contains("perftop keys"));
        s.keys(&["a"]);
        s.wait("the tweak menu", |sc| sc.contains("1 MiB - 31.0 GiB"));
        s.keys(&["Escape"]);
        s.wait("menu closed", |sc| !sc.contains("MiB - 31.0 GiB"));
        // A tweak preview opens where tweaks are allowed (root).
        if support::is_root() {
            s.keys(&["g"]);
            s.wait("the governor preview", |sc| {
                sc.contains("set governor -> performance?") && sc.contains("y applies")
            });
            s.keys(&["Escape"]);
            s.wait("preview cancelled", |sc| {
                sc.contains("cancelled: nothing changed")
            });
            previewed = true;
        }
    });
    if !previewed {
        support::skip(
            "xterm_in_the_c_locale_gets_ascii_and_16_colours (tweak preview part)",
            "tweaks need root; the help box and the tweak menu were checked",
        );
    }
    // The screens above (each seen in tmux) went through this stream, frame after frame
    // (unchanged cells are skipped, so a popup's text need not be one run of bytes)...
    let frames = b.windows(8).filter(|w| w == b"\x1b[?2026h").count();
    assert!(frames >= 6, "{frames} frames captured");
    // ... in ASCII only ...
    if let Some(at) = first_non_ascii(&b) {
        panic!("non-ASCII under LC_ALL=C: {at}");
    }
    // ... and with the 16 colours' codes only.
    assert!(
        !contains(&b, "38;5;") && !contains(&b, "48;5;"),
        "256-colour code sent"
    );
    assert!(
        !contains(&b, "38;2;") && !contains(&b, "48;2;"),
        "24-bit code sent"
    );
    let c = sgr(&b);
    let fg_ok = |x: &String| matches!(x.parse::<u8>(), Ok(30..=37 | 39 | 90..=97));
    let bg_ok = |x: &String| matches!(x.parse::<u8>(), Ok(40..=47 | 49 | 100..=107));
    assert!(c.fg.iter().all(fg_ok), "foreground codes {:?}", c.fg);
    assert!(c.bg.iter().all(bg_ok), "background codes {:?}", c.bg);
    // The dark theme does colour the screen: the check saw colours, not their absence.
    assert!(
        c.fg.iter().any(|x| x != "39"),
        "no colour at all: {:?}",
        c.fg
    );
}

#[test]
fn xterm_256color_gets_indexed_colours_but_no_24_bit() {
    if !tmux_available() {
        support::skip(
            "xterm_256color_gets_indexed_colours_but_no_24_bit",
            "tmux is not installed (apt-get install -y tmux)",
        );
        return;
    }
    // high-contrast names its colours #rrggbb: at 256 colours they become cube indexes.
    let env = [("TERM", "xterm-256color"), ("LC_ALL", "C")];
    let b = run("xterm256", &env, &["--theme", "high-contrast"], |_| {});
    let c = sgr(&b);
    assert!(c.fg.iter().any(|x| x.starts_with("38;5;")), "{:?}", c.fg);
    assert!(
        !contains(&b, "38;2;") && !contains(&b, "48;2;"),
        "24-bit code sent"
    );
    // #ff0000 (crit) and #ffff00 (title) are exactly cube 196 and 226.
    assert!(c.fg.iter().any(|x| x == "38;5;226"), "{:?}", c.fg);
}

#[test]
fn colorterm_truecolor_gets_24_bit() {
    if !tmux_available() {
        support::skip(
            "colorterm_truecolor_gets_24_bit",
            "tmux is not installed (apt-get install -y tmux)",
        );
        return;
    }
    let env = [
        ("TERM", "xterm-256color"),
        ("COLORTERM", "truecolor"),
        ("LC_ALL", "C.UTF-8"),
    ];
    let b = run("truecolor", &env, &["--theme", "high-contrast"], |_| {});
    let c = sgr(&b);
    assert!(c.fg.iter().any(|x| x == "38;2;255;255;0"), "{:?}", c.fg);
    assert!(!c.fg.iter().any(|x| x.starts_with("38;5;")), "{:?}", c.fg);
    // In a UTF-8 locale the box and block glyphs are sent as they are (so the ASCII check
    // above is not true of every stream by construction).
    assert!(first_non_ascii(&b).is_some(), "no UTF-8 in a UTF-8 locale");
}

#[test]
fn no_color_sends_no_colour() {
    if !tmux_available() {
        support::skip(
            "no_color_sends_no_colour",
            "tmux is not installed (apt-get install -y tmux)",
        );
        return;
    }
    let env = [
        ("TERM", "xterm-256color"),
        ("COLORTERM", "truecolor"),
        ("NO_COLOR", "1"),
        ("LC_ALL", "C"),
    ];
    let b = run("nocolor", &env, &[], |_| {});
    let c = sgr(&b);
    assert!(c.fg.iter().all(|x| x == "39"), "{:?}", c.fg);
    assert!(c.bg.iter().all(|x| x == "49"), "{:?}", c.bg);
    // Emphasis stays: the focused pane is reversed.
    assert!(contains(&b, "\x1b[7m") || contains(&b, ";7m") || contains(&b, "[7;"));
}
