//! Kernels in the field (issue 43 item 4) on the dashboard: every pane of every kernel's
//! fixture (`support::kernels`, cgroups included) draws at 80x24 and zoomed at 120x40 without
//! a panic, and the zoomed processes pane lists the busy container's cgroup.

use crate::support::kernels::{self, cgroups as cg};
use crate::support::screen::{draw, key, mono, text, titles};
use perftop::root::Root;
use perftop::source::Reader;
use perftop::ui::app::App;
use ratatui::crossterm::event::KeyCode;
use std::time::Duration;

#[test]
fn every_kernel_draws_every_pane() {
    let th = mono();
    for k in &kernels::KERNELS {
        let dir = kernels::build(k);
        let mut app = App::new(Duration::from_secs(10), Duration::from_secs(600));
        app.session.privilege = "root".into();
        for t in ["t0", "t1"] {
            app.push_sample(Reader::new(Root::new(dir.path().join(t))).sample());
        }
        let screen = text(&draw(&app, &th, 80, 24));
        // The header cuts the release at 80 columns; its version part is always there.
        let version = k.release.split('-').next().unwrap_or(k.release);
        assert!(screen.contains(version), "{}: header\n{screen}", k.name);
        for (i, t) in titles().iter().enumerate() {
            key(&mut app, KeyCode::Char(char::from(b'1' + i as u8)));
            key(&mut app, KeyCode::Enter);
            let zoom = text(&draw(&app, &th, 120, 40));
            assert!(zoom.contains(t), "{}: zoom of {t}\n{zoom}", k.name);
            if t.contains("Processes") {
                let short = &cg::CONTAINER_ID[..12];
                assert!(
                    zoom.contains(short) || zoom.contains("k8s:pod8a2f0c1e"),
                    "{}: the cgroups table lists the container\n{zoom}",
                    k.name
                );
            }
            key(&mut app, KeyCode::Esc);
        }
    }
}
