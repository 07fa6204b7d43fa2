//! Live-only keys in a replay (issue 41 item 11): `a`, `g`, `u`, `R`, `+`, `-` do nothing there,
//! and say why on the status line instead of being silently ignored.

use crate::support;

use perftop::ui::replay_app;
use ratatui::crossterm::event::KeyCode;
use support::screen::key;

#[test]
fn live_only_keys_say_why_they_do_nothing_in_a_replay() {
    let mut app =
        replay_app(&support::screen::replay_options(&support::golden())).expect("golden recording");
    for (c, why) in [
        ('a', "a replay changes nothing on this host"),
        ('g', "a replay changes nothing on this host"),
        ('u', "a replay changes nothing on this host"),
        ('R', "a replay is already a recording"),
        ('+', "a replay's interval is the recording's"),
        ('-', "a replay's interval is the recording's"),
    ] {
        app.status.text = None;
        key(&mut app, KeyCode::Char(c));
        let status = app.status.text.clone().unwrap_or_default();
        assert!(
            status.starts_with(&format!("{c} ("))
                && status.contains("not in a replay")
                && status.contains(why),
            "{c}: {status:?}"
        );
    }
}
