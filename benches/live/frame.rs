//! `frame [W H] [N]`: the dashboard's drawing alone, on this host: an app that has seen two
//! live samples 1 s apart, drawn N times (default 400) into a W x H (default 80 x 24) test
//! terminal, as the event loop draws a frame (pane models, layout, the buffer, ratatui's diff).
//! Prints the drawing thread's CPU per frame, median of 5 runs. The terminal's bytes are not here
//! (`benches/frame_bytes.sh` counts them).

use super::thread_cpu_time;
use perftop::root::Root;
use perftop::source::Reader;
use perftop::ui::app::App;
use perftop::ui::render;
use perftop::ui::theme::{ColorDepth, GlyphSet, Theme};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use std::time::Duration;

pub fn frame(args: &[String]) {
    let num = |i: usize, d: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let (w, h, n) = (num(0, 80) as u16, num(1, 24) as u16, num(2, 400));
    let sleep = Duration::from_millis(num(3, 0) as u64);
    let mut app = App::new(Duration::from_secs(1), Duration::from_secs(60));
    let mut reader = Reader::new(Root::new("/"));
    app.push_sample(reader.sample());
    std::thread::sleep(Duration::from_secs(1));
    app.push_sample(reader.sample());
    let theme = Theme::load("dark", ColorDepth::Ansi256, GlyphSet::Unicode).expect("theme");
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    let mut runs: Vec<f64> = (0..5)
        .map(|_| {
            let mut cpu = Duration::ZERO;
            for _ in 0..n {
                if !sleep.is_zero() {
                    std::thread::sleep(sleep);
                }
                let t = thread_cpu_time();
                term.draw(|f| render::draw(f, &app, &theme)).expect("draw");
                cpu += thread_cpu_time() - t;
            }
            cpu.as_secs_f64() * 1e6 / n as f64
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    println!(
        "frame {w}x{h}, {} ms between frames: {:.0} µs CPU a frame (median of 5 runs of {n}; runs {:.0}-{:.0})",
        sleep.as_millis(),
        runs[2],
        runs[0],
        runs[4]
    );
}
