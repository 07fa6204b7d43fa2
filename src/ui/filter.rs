//! The `/` row filter: one per pane (a disk name typed on Disks must not empty the CPU table),
//! matched against what the pane calls a row on screen.

use crate::pane::{Pane, PANES};
use crate::view::model::Row;

/// The kept filter of each pane (empty: none).
#[derive(Debug, Clone, Default)]
pub struct PaneFilters {
    by_pane: [String; PANES.len()],
}

impl PaneFilters {
    pub fn get(&self, p: Pane) -> &str {
        &self.by_pane[p.index()]
    }

    pub fn set(&mut self, p: Pane, filter: String) {
        self.by_pane[p.index()] = filter;
    }

    /// Clears `p`'s filter; false when it had none.
    pub fn clear(&mut self, p: Pane) -> bool {
        !std::mem::take(&mut self.by_pane[p.index()]).is_empty()
    }
}

/// Whether `row` is kept by `filter`: a case-insensitive substring of the row's name as the
/// pane says it (`cpu1`, `node0`, `nvme0n1`, a queue and its device) or of what its first
/// column shows (`1` under CPU). Both, because the headline says `hot cpu1` while the table's
/// CPU column says `1`.
pub fn matches(row: &Row, filter: &str) -> bool {
    if filter.is_empty() {
        return true;
    }
    let f = filter.to_lowercase();
    let shown = row.cells.first().map(|c| c.text.as_ref()).unwrap_or("");
    row.name.to_lowercase().contains(&f) || shown.to_lowercase().contains(&f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::model::{cell, Level};

    fn row(name: &str, shown: &str) -> Row {
        Row {
            name: name.into(),
            load: 0.0,
            natural: 0,
            cells: vec![cell(shown.to_string(), Level::Text)],
            quiet: false,
        }
    }

    #[test]
    fn a_row_matches_its_name_or_what_its_first_column_shows() {
        let cpu1 = row("cpu1", "1");
        let cpu12 = row("cpu12", "12");
        let cpu2 = row("cpu2", "2");
        assert!(matches(&cpu1, "cpu1") && matches(&cpu1, "CPU1"));
        assert!(matches(&cpu12, "cpu1"), "a substring, as the help says");
        assert!(!matches(&cpu2, "cpu1"));
        assert!(matches(&cpu2, "2") && matches(&cpu2, ""));
        assert!(matches(&row("nvme0n1", "nvme0n1"), "nvme"));
        assert!(!matches(&row("nvme0n1", "nvme0n1"), "loop"));
    }

    #[test]
    fn each_pane_keeps_its_own_filter() {
        let mut f = PaneFilters::default();
        f.set(Pane::Disks, "loop".into());
        assert_eq!(f.get(Pane::Disks), "loop");
        assert_eq!(f.get(Pane::Cpu), "");
        assert!(f.clear(Pane::Disks));
        assert!(!f.clear(Pane::Disks));
    }
}
