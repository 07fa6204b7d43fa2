//! The dashboard's per-frame work as a count (never a wall-clock time): the table cells its pane
//! models build for a steady frame (`perftop::ui::panes::cells_built`), on the small synthetic
//! host and on a 256-CPU one. Each fails when its count grows by more than 25 % over the figure
//! committed here (docs/performance.md, "The dashboard's own cost"), so a change that makes a
//! frame do more has to say so by moving the figure.

use crate::support;

use perftop::source::Reader;
use perftop::ui::panes::cells_built;
use perftop::ui::render;
use perftop::ui::theme::{ColorDepth, GlyphSet, Theme};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use support::screen::synth_app;
use support::synth::{write_host, SynthSpec};

/// Cells a steady 80x24 frame of `support::small_host` builds, measured on this commit (207
/// before the IRQ lines' rows were built for the rows drawn, 167 before the disks' were).
const SMALL_HOST_CELLS: u64 = 147;
/// The same on a 256-CPU host (4 nodes, 8 disks, 8 queues), measured on this commit: the CPU
/// and Softirq/NIC panes' per-CPU rows built for the few drawn, not for 256 each (3,249 with
/// only the CPU pane's so; 9,877 with every row built, measured).
/// 1,457 before the IRQ lines' rows were built so, 1,397 before the disks' were.
const BIG_HOST_CELLS: u64 = 1_251;

/// The most a count may be over its committed figure: 25 %.
fn within(what: &str, got: u64, committed: u64) {
    let limit = committed + committed / 4;
    assert!(
        got <= limit,
        "{what}: {got} cells a frame, over the committed {committed} by more than 25 % (limit \
         {limit}); if the growth is meant, measure again and move the figure in \
         tests/it/frame_work.rs and docs/performance.md"
    );
}

/// Cells built by each of 4 steady 80x24 frames of `spec` (a sample, then a frame).
fn frames(spec: &SynthSpec) -> Vec<u64> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = synth_app(dir.path(), spec);
    let theme = Theme::load("dark", ColorDepth::Ansi256, GlyphSet::Unicode).expect("theme");
    let mut term = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    let mut reader = Reader::new(perftop::root::Root::new(dir.path()));
    (2..6)
        .map(|tick| {
            write_host(dir.path(), spec, tick).expect("synth host");
            app.push_sample(reader.sample());
            let before = cells_built();
            term.draw(|f| render::draw(f, &app, &theme)).expect("draw");
            cells_built() - before
        })
        .collect()
}

#[test]
fn a_steady_frame_builds_few_cells() {
    let got = frames(&support::small_host());
    eprintln!("small host: cells a frame {got:?}");
    let most = *got.iter().max().expect("frames");
    assert!(most > 0, "the frame builds its tables");
    within(
        "a steady 80x24 frame of the small host",
        most,
        SMALL_HOST_CELLS,
    );
}

#[test]
fn a_big_host_builds_the_rows_it_draws() {
    let spec = SynthSpec {
        cpus: 256,
        nodes: 4,
        disks: 8,
        queues: 8,
    };
    let got = frames(&spec);
    eprintln!("256 CPUs: cells a frame {got:?}");
    let most = *got.iter().max().expect("frames");
    // A CPU row has 13 cells here, a softirq row 15: building every row of the two panes
    // would be 7,168 cells.
    assert!(
        most < 256 * 13 / 2,
        "{most} cells a frame: the CPU pane builds rows it does not draw"
    );
    within("a steady 80x24 frame of 256 CPUs", most, BIG_HOST_CELLS);
}
