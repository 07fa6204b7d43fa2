//! `nodes hold 12G of 126G` on a VM (issue 41 item 12): memory the node table does not
//! describe is how the host is built, said as context, not drawn in the warning colour.

use crate::support;
use perftop::ui::theme::{ColorDepth, GlyphSet, Theme};
use support::screen::{app_for, draw};

#[test]
fn nodes_holding_part_of_a_vm_is_not_a_warning() {
    let app = app_for("real/h100vm-16cpu-load");
    let theme = Theme::load("dark", ColorDepth::TrueColor, GlyphSet::Unicode).expect("theme");
    let buf = draw(&app, &theme, 200, 50);
    let w = buf.area.width as usize;
    let rows: Vec<&[ratatui::buffer::Cell]> = buf.content.chunks(w).collect();
    let (y, x) = rows
        .iter()
        .enumerate()
        .find_map(|(y, r)| {
            let line: String = r.iter().map(|c| c.symbol()).collect();
            line.find("nodes hold 12G of 126G")
                .map(|b| (y, line[..b].chars().count()))
        })
        .expect("the real GPU VM's nodes hold 12G of its 126G");
    let cell = &rows[y][x];
    assert_ne!(
        Some(cell.fg),
        theme.warn.fg,
        "drawn as a warning: {:?}",
        cell.fg
    );
    assert_eq!(Some(cell.fg), theme.dim.fg, "said as context (dim)");
}
