//! A terminal without colour or UTF-8 (issue 41 item 12): `TERM=vt100` got 256-colour SGR and
//! UTF-8 box drawing in a UTF-8 locale. A VT100 (or `dumb`) gets the monochrome theme and ASCII,
//! whatever the locale says, the help box and the tweak menu included.
//!
//! Needs `tmux` (skips itself with a message when it is missing).

use crate::support;
use crate::terminal_bytes::{first_non_ascii, run, sgr};
use support::tmux::tmux_available;

#[test]
fn vt100_gets_ascii_and_no_colour_in_a_utf8_locale() {
    let name = "vt100_gets_ascii_and_no_colour_in_a_utf8_locale";
    if !tmux_available() {
        support::skip(name, "tmux is not installed (apt-get install -y tmux)");
        return;
    }
    let env = [("TERM", "vt100"), ("LANG", "en_US.UTF-8")];
    let b = run("vt100", &env, &[], |s| {
        s.keys(&["?"]);
        s.wait("the help box", |sc| sc.contains("perftop keys"));
        s.keys(&["Escape"]);
        s.wait("help closed", |sc| !sc.contains("perftop keys"));
        s.keys(&["a"]);
        s.wait("the tweak menu", |sc| sc.contains("1 MiB - 31.0 GiB"));
        s.keys(&["Escape"]);
        s.wait("menu closed", |sc| !sc.contains("MiB - 31.0 GiB"));
    });
    assert_eq!(first_non_ascii(&b), None, "only ASCII reaches a VT100");
    let c = sgr(&b);
    assert!(c.fg.iter().all(|x| x == "39"), "no colour: {:?}", c.fg);
    assert!(c.bg.iter().all(|x| x == "49"), "no colour: {:?}", c.bg);
}
