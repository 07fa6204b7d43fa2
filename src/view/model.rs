//! What a pane shows, independent of where: lines of cells, tables of rows, notes, each cell
//! with a level. The text report and the screen lay these out; neither decides a number or a
//! colour on its own.

use std::borrow::Cow;

/// How a value stands against its thresholds (the renderer picks the colour).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// An ordinary value.
    Text,
    /// Context: labels, units, unknown values, idle devices.
    Dim,
    /// Worth a look but not a problem (memory-only nodes, sparklines).
    Info,
    /// Healthy state words ("below background").
    Good,
    Warn,
    Crit,
}

/// One piece of text with its level.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// A literal for many cells (labels between numbers): kept as it is, not copied.
    pub text: Cow<'static, str>,
    pub level: Level,
    /// Shown only where the line has room: a renderer leaves every optional cell of a line out
    /// before it cuts the line.
    pub optional: bool,
}

pub fn cell(text: impl Into<Cow<'static, str>>, level: Level) -> Cell {
    Cell {
        text: text.into(),
        level,
        optional: false,
    }
}

/// A cell of kernel text, or `-` when it is unknown (the `-` not copied).
pub fn text_cell(text: Option<&str>, level: Level) -> Cell {
    match text {
        Some(t) => cell(t.to_string(), level),
        None => cell(crate::units::UNKNOWN, level),
    }
}

/// A cell a narrow line leaves out (see `Cell::optional`).
pub fn opt_cell(text: impl Into<Cow<'static, str>>, level: Level) -> Cell {
    Cell {
        optional: true,
        ..cell(text, level)
    }
}

/// `cells` as they fit in `width` characters: all of them, else without the optional ones.
pub fn fitting(cells: &[Cell], width: usize) -> Vec<&Cell> {
    let len = |c: &&Cell| c.text.chars().count();
    let all: Vec<&Cell> = cells.iter().collect();
    if all.iter().map(len).sum::<usize>() <= width {
        return all;
    }
    all.into_iter().filter(|c| !c.optional).collect()
}

/// `cells` as they fit in `width` characters, leaving optional cells out from the right one
/// at a time (a fact line whose tail is a list: a stack's frames), so what is kept is whole.
pub fn fitting_from_right(cells: &[Cell], width: usize) -> Vec<&Cell> {
    let len = |c: &Cell| c.text.chars().count();
    let mut used: usize = cells.iter().map(len).sum();
    let mut keep = vec![true; cells.len()];
    for (i, c) in cells.iter().enumerate().rev() {
        if used <= width {
            break;
        }
        if c.optional {
            keep[i] = false;
            used -= len(c);
        }
    }
    cells
        .iter()
        .zip(keep)
        .filter_map(|(c, k)| k.then_some(c))
        .collect()
}

/// A line of cells (a headline, a fact line above a table).
pub type Cells = Vec<Cell>;

/// A table column: title, width, alignment; `extra` columns show only when there is room
/// (zoomed, or a wide terminal/report).
#[derive(Debug, Clone)]
pub struct Column {
    /// A literal for most columns: a frame builds every table's columns again.
    pub title: Cow<'static, str>,
    pub width: usize,
    pub left: bool,
    pub extra: bool,
}

pub fn col(title: impl Into<Cow<'static, str>>, width: usize) -> Column {
    Column {
        title: title.into(),
        width,
        left: false,
        extra: false,
    }
}

pub fn lcol(title: impl Into<Cow<'static, str>>, width: usize) -> Column {
    Column {
        left: true,
        ..col(title, width)
    }
}

pub fn xcol(title: impl Into<Cow<'static, str>>, width: usize) -> Column {
    Column {
        extra: true,
        ..col(title, width)
    }
}

/// A left-aligned extra column.
pub fn xlcol(title: impl Into<Cow<'static, str>>, width: usize) -> Column {
    Column {
        left: true,
        ..xcol(title, width)
    }
}

/// One row: `name` is what a filter matches and what name order sorts by; `load` orders rows
/// busiest first (stalled disks, hot CPUs); `natural` is the kernel's order (CPU number, IRQ).
#[derive(Debug, Clone)]
pub struct Row {
    pub name: String,
    pub load: f64,
    pub natural: u64,
    pub cells: Vec<Cell>,
    /// Nothing happening (an idle disk): hidden unless asked for, and counted.
    pub quiet: bool,
}

/// Which order a table keeps when all its rows fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Kernel order (CPUs, nodes), busiest first only when rows must be cut.
    Natural,
    /// Busiest first always (disks: a stalled device must be on top).
    Load,
}

/// A table: its rows in natural order; `groups` are summary rows (one per package) shown
/// instead of every row when a big host's rows do not fit; `what` names the rows in
/// "+N hidden" notes.
#[derive(Debug, Clone)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    pub groups: Vec<Row>,
    pub order: Order,
    pub what: &'static str,
    /// Said instead of the table when it has no rows at all.
    pub empty: Option<String>,
    /// The rows' cells are left empty and built only for the rows drawn (see `Later`).
    pub later: Option<Later>,
    /// What `later` needs beyond a row's key: `Later::IrqCpu`'s interrupt types, by column.
    pub keys: Vec<String>,
}

/// Whose cells a renderer builds for the rows it draws, from the row's `natural` key: a list
/// of thousands (every process) shows a screenful, and formatting every row each frame was
/// most of the zoomed pane's cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Later {
    /// `view::everyone::cells_of`.
    Everyone,
    /// `view::cpu::cells_of`: the CPU pane's row per CPU (4096 on a big host, a screenful
    /// drawn). The row keeps its first cell, the name a filter matches.
    Cpu,
    /// `view::softirq::cells_of`: the Softirq/NIC pane's row per CPU, as `Cpu`.
    SoftirqCpu,
    /// `view::softirq::irq_cells_of`: the interrupts per CPU, under the types in `Table::keys`.
    IrqCpu,
    /// `view::softirq::irq_line_cells_of`: the row per IRQ line, as `Cpu`.
    IrqLine,
    /// `view::disk::cells_of`: the Disks pane's row per device, as `Cpu`.
    Disk,
}

impl Table {
    pub fn new(columns: Vec<Column>, what: &'static str, order: Order) -> Table {
        Table {
            columns,
            rows: Vec::new(),
            groups: Vec::new(),
            order,
            what,
            empty: None,
            later: None,
            keys: Vec::new(),
        }
    }
}

/// `n` and a table's plural noun, singular for one: `1 idle device`, `3 idle IRQ lines`.
pub fn counted(n: usize, plural: &str) -> String {
    if n != 1 {
        return format!("{n} {plural}");
    }
    let one = if let Some(stem) = plural.strip_suffix("ies") {
        format!("{stem}y")
    } else if let Some(stem) = plural.strip_suffix("sses") {
        format!("{stem}ss")
    } else {
        plural.strip_suffix('s').unwrap_or(plural).to_string()
    };
    format!("1 {one}")
}

/// Busiest first; equal loads keep the kernel's order.
pub fn busiest(a: &Row, b: &Row) -> std::cmp::Ordering {
    b.load.total_cmp(&a.load).then(a.natural.cmp(&b.natural))
}

/// One block of a pane's body, top to bottom.
#[derive(Debug, Clone)]
pub enum Block {
    /// A line of facts.
    Line(Cells),
    /// A table.
    Table(Table),
    /// A dimmed remark (legends, reasons for unknown values), said once below what it explains.
    Note(String),
    /// A line that matters (a stalled disk, an assumed page size), in its level.
    Alert(Cell),
    /// The dirty gauge goes here; each renderer draws it its own way (geometry from
    /// `view::dirty::gauge`).
    DirtyGauge,
    /// One line of meters (PSI some/full of a resource): each renderer draws the bars its own
    /// way, filled to each meter's share.
    Bars(BarLine),
}

/// A label, then meters side by side.
#[derive(Debug, Clone)]
pub struct BarLine {
    pub label: String,
    pub bars: Vec<Bar>,
}

/// A meter: its name, the share 0..100 it is filled to (unknown: empty, value `-`), and the
/// level of that share.
#[derive(Debug, Clone)]
pub struct Bar {
    pub name: String,
    pub pct: Option<f64>,
    pub level: Level,
}

/// A meter's value: whole percent, `<1%` for a share that is there but rounds to nothing,
/// `-` unknown.
pub fn share_text(pct: Option<f64>) -> String {
    match pct {
        Some(v) if v > 0.0 && v < 0.5 => "<1%".into(),
        Some(v) => format!("{v:.0}%"),
        None => "-".into(),
    }
}

/// Cells of a bar `width` wide filled to `pct` (0..100): (filled, empty). Unknown is empty.
pub fn bar_cells(pct: Option<f64>, width: usize) -> (usize, usize) {
    let f = pct
        .filter(|p| p.is_finite())
        .unwrap_or(0.0)
        .clamp(0.0, 100.0);
    // A stall that happened shows at least one cell: 0.4% is not nothing.
    let mut filled = (f / 100.0 * width as f64).round() as usize;
    if f > 0.0 && filled == 0 && width > 0 {
        filled = 1;
    }
    (filled.min(width), width - filled.min(width))
}

/// A pane as both renderers see it: the headline (one line, always on screen) and the body.
#[derive(Debug, Clone, Default)]
pub struct PaneView {
    pub headline: Cells,
    pub body: Vec<Block>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_of_a_table_is_singular() {
        let one = |w| super::counted(1, w);
        assert_eq!(one("idle devices"), "1 idle device");
        assert_eq!(one("idle IRQ lines"), "1 idle IRQ line");
        assert_eq!(one("idle processes"), "1 idle process");
        assert_eq!(one("idle policies"), "1 idle policy");
        assert_eq!(one("idle CPUs"), "1 idle CPU");
        assert_eq!(super::counted(2, "idle processes"), "2 idle processes");
        assert_eq!(super::counted(0, "idle CPUs"), "0 idle CPUs");
    }
}
