//! The count of a frame's work: table cells built on this thread, by the pane models and for
//! the rows drawn (`Later`), which `tests/it/frame_work.rs` holds to its committed figure.

thread_local! {
    static CELLS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Table cells built on this thread so far; a frame's is the difference.
pub fn cells_built() -> u64 {
    CELLS.with(|c| c.get())
}

pub(super) fn note_cells(n: usize) {
    CELLS.with(|c| c.set(c.get() + n as u64));
}
