//! Plain-text report of every pane (for `perftop batch`, pipes and tickets): lays out the pane
//! models of `view` as the zoomed screen would show them, without colour.
//!
//! Sized for 80 columns; big hosts get summaries, top-N rows and "+k hidden" instead of one row
//! per CPU, disk or queue. Unknown values print as `-`.

use crate::assess::Assessed;
use crate::derive::Derived;
use crate::findings::Thresholds;
use crate::safe;
use crate::units::{duration, fit, num, pct};
use crate::view::model::{busiest, counted, Block, Cells, Order, Row, Table};
use crate::view::{Ctx, PANES};
use std::fmt::Write;

/// The widest report `--width` allows (an unbounded width overflowed an allocation).
pub const MAX_WIDTH: usize = 1000;
/// The narrowest: the tables' fixed columns need 60 (a `--width` below it is refused, not
/// quietly widened).
pub const MIN_WIDTH: usize = 60;

/// Rows per table before "+k hidden" (at width 80; wider reports show more).
const TOP_ROWS: usize = 8;

/// The text report of one assessed interval (`batch`, `dump --format text`), `width` columns
/// wide (clamped to `MIN_WIDTH ..= MAX_WIDTH`, as `--width` is checked).
pub fn report(d: &Assessed, n: u64, width: usize) -> String {
    let mut r = Report {
        out: String::new(),
        width: width.clamp(MIN_WIDTH, MAX_WIDTH),
    };
    header(&mut r, d, n);
    // Plain text has no colour, so the thresholds behind the levels do not matter here.
    let thresholds = Thresholds::default();
    let ctx = Ctx::new(&thresholds, true);
    for p in PANES {
        r.section(p.section());
        let v = crate::view::pane(p, d, &ctx);
        let head: Cells = crate::view::model::fitting(&v.headline, r.width)
            .into_iter()
            .cloned()
            .collect();
        r.line(&joined(&head));
        for b in &v.body {
            r.block(b, d);
        }
    }
    findings(&mut r, d);
    r.out.push('\n');
    // Kernel strings go into the report as they are; escape bytes never leave it.
    match safe::text(&r.out) {
        std::borrow::Cow::Borrowed(_) => r.out,
        std::borrow::Cow::Owned(clean) => clean,
    }
}

struct Report {
    out: String,
    width: usize,
}

impl Report {
    fn line(&mut self, s: &str) {
        let cut = fit(s.trim_end(), self.width);
        self.out.push_str(&cut);
        self.out.push('\n');
    }

    /// `s` wrapped at spaces to the width (never cut mid-word), continuation lines indented
    /// `indent` columns: notes, field lines and findings say all they hold at any width.
    /// Only a single word wider than a line is cut (`~`).
    fn flow(&mut self, s: &str, indent: usize) {
        let s = s.trim_end();
        let mut rest: &str = s;
        let mut first = true;
        while !rest.is_empty() {
            let pad = if first { 0 } else { indent };
            let room = self.width.saturating_sub(pad).max(1);
            let line: &str = if rest.chars().count() <= room {
                rest
            } else {
                // Between two fields (`a 1  b 2`: two spaces) when one ends in the line's
                // second half, else at the last space that keeps the line within `room`
                // columns (past the indent of a first line that starts with spaces), else
                // after the whole first word.
                let lead = rest.len() - rest.trim_start().len();
                let limit = rest.char_indices().nth(room).map_or(rest.len(), |(i, _)| i);
                let head = &rest[..limit];
                let field = head.rfind("  ").filter(|&at| at > lead && at >= limit / 2);
                match field.or_else(|| head.rfind(' ').filter(|&at| at > lead)) {
                    Some(at) => &rest[..at],
                    None => {
                        rest.split_at(rest[lead..].find(' ').map_or(rest.len(), |i| lead + i))
                            .0
                    }
                }
            };
            self.line(&format!("{}{}", " ".repeat(pad), line.trim_end()));
            rest = rest[line.len()..].trim_start();
            first = false;
        }
    }

    /// `items` joined with `; `, wrapped to the width, each line starting with `prefix` or its
    /// indentation.
    fn wrapped(&mut self, prefix: &str, items: &[String]) {
        if items.is_empty() {
            return;
        }
        let mut cur = prefix.to_string();
        for (i, item) in items.iter().enumerate() {
            let piece = if i + 1 < items.len() {
                format!("{item}; ")
            } else {
                item.clone()
            };
            if cur.len() + piece.len() > self.width && cur.len() > prefix.len() {
                self.line(&cur);
                cur = " ".repeat(prefix.len());
            }
            cur.push_str(&piece);
        }
        self.line(&cur);
    }

    fn section(&mut self, title: &str) {
        let rule = "-".repeat(self.width.saturating_sub(title.len() + 4));
        self.line(&format!("-- {title} {rule}"));
    }

    fn block(&mut self, b: &Block, d: &Derived) {
        match b {
            Block::Line(cells) => self.flow(&joined(cells), 4),
            Block::Note(s) => self.flow(&format!("  {s}"), 4),
            Block::Alert(c) => self.flow(&format!("  {}", c.text), 4),
            Block::Table(t) => self.table(t),
            Block::Bars(b) => self.line(&bars_text(b, 20)),
            Block::DirtyGauge => match dirty_bar(&d.dirty, 50) {
                Some((bar, marks)) => {
                    self.line(&format!("  [{bar}]"));
                    self.line(&format!("   {marks}"));
                }
                None => self.line("  gauge: - (dirty thresholds not in /proc/vmstat)"),
            },
        }
    }

    /// A table cut to the rows allowed at this width: every row when they fit; else one
    /// summary row per group (package) when the table has them, then the busiest rows. Idle
    /// rows are counted, not shown; columns that do not fit the width are left out.
    fn table(&mut self, t: &Table) {
        let visible: Vec<&Row> = t.rows.iter().filter(|r| !r.quiet).collect();
        let quiet = t.rows.len() - visible.len();
        if t.rows.is_empty() {
            if let Some(e) = &t.empty {
                self.line(&format!("  {e}"));
            }
            return;
        }
        let wide = self.width >= 120;
        let cols: Vec<usize> = (0..t.columns.len())
            .filter(|i| wide || !t.columns[*i].extra)
            .collect();
        let mut shown: Vec<usize> = Vec::new();
        let mut used = 0;
        for i in cols {
            let need = t.columns[i].width + usize::from(!shown.is_empty());
            if used + need > self.width && !shown.is_empty() {
                break;
            }
            used += need;
            shown.push(i);
        }
        let limit = self.rows_allowed();
        let mut rows: Vec<&Row> = Vec::new();
        let mut cut = 0;
        if visible.len() <= limit.max(if t.groups.is_empty() { 0 } else { 2 * limit }) {
            rows = visible.clone();
            if t.order == Order::Load {
                rows.sort_by(|a, b| busiest(a, b));
            }
        } else {
            rows.extend(t.groups.iter().take(limit));
            let mut busy = visible.clone();
            busy.sort_by(|a, b| busiest(a, b));
            busy.truncate(limit);
            cut = visible.len() - busy.len();
            rows.extend(busy);
        }
        let title: Vec<String> = t.columns.iter().map(|c| c.title.to_string()).collect();
        self.row(t, &shown, &title);
        for r in rows {
            let cells: Vec<String> = r.cells.iter().map(|c| c.text.to_string()).collect();
            self.row(t, &shown, &cells);
        }
        let mut notes = Vec::new();
        if cut > 0 {
            notes.push(format!(
                "busiest {} of {} {} shown, +{cut} hidden",
                visible.len() - cut,
                visible.len(),
                t.what
            ));
        }
        if quiet > 0 {
            notes.push(format!(
                "{} hidden",
                counted(quiet, &format!("idle {}", t.what))
            ));
        }
        if !notes.is_empty() {
            self.line(&format!("  {}", notes.join("; ")));
        }
    }

    fn row(&mut self, t: &Table, shown: &[usize], cells: &[String]) {
        let mut s = String::new();
        for (k, i) in shown.iter().enumerate() {
            let (c, w) = (&t.columns[*i], t.columns[*i].width);
            let text = fit(cells.get(*i).map_or("", |s| s.as_str()), w);
            let sep = if k == 0 { "" } else { " " };
            if c.left {
                let _ = write!(s, "{sep}{text:<w$}");
            } else {
                let _ = write!(s, "{sep}{text:>w$}");
            }
        }
        self.line(&s);
    }

    fn rows_allowed(&self) -> usize {
        TOP_ROWS * (self.width / 80).max(1)
    }
}

fn clock(ms: i64) -> String {
    let s = ms.div_euclid(1000).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn header(r: &mut Report, d: &Derived, n: u64) {
    let h = &d.host;
    let load = h
        .loadavg
        .map(|l| format!("load {:.2} {:.2} {:.2}", l[0], l[1], l[2]))
        .unwrap_or_else(|| "load -".into());
    let cpus = match h.cpus_present {
        Some(p) => format!("{}/{} CPUs", h.cpus_online, p),
        None => format!("{} CPUs", h.cpus_online),
    };
    r.line(&format!(
        "perftop {}  {}  {}  up {}  {}  {} node{}",
        env!("CARGO_PKG_VERSION"),
        h.hostname.as_deref().unwrap_or("-"),
        h.kernel.as_deref().unwrap_or("-"),
        duration(h.uptime_s),
        cpus,
        h.nodes,
        if h.nodes == 1 { "" } else { "s" },
    ));
    r.line(&format!(
        "{load}  busy {}%  iowait {}%  steal {}%  run {} blocked {}",
        pct(h.busy_pct),
        pct(h.iowait_pct),
        pct(h.steal_pct),
        opt(h.procs_running),
        opt(h.procs_blocked)
    ));
    let when = if d.since_boot {
        "averages since boot; rates follow from the next report".to_string()
    } else {
        format!("interval {} s", num(d.interval_s, 2))
    };
    r.line(&format!("Report {n} at {} UTC: {when}", clock(h.wall_ms)));
    r.wrapped("VM: ", &h.vm_hints);
    r.wrapped("Boot: ", &crate::view::boot_context(h));
}

/// A line of cells as plain text.
fn joined(cells: &Cells) -> String {
    cells.iter().map(|c| c.text.as_ref()).collect()
}

/// The dirty gauge in ASCII: `#` dirty, `=` writeback, `.` room, and the marker line.
pub fn dirty_bar(d: &crate::derive::DirtyMetrics, width: usize) -> Option<(String, String)> {
    let g = crate::view::dirty::gauge(d, width)?;
    let bar = format!(
        "{}{}{}",
        "#".repeat(g.dirty_cells),
        "=".repeat(g.writeback_cells),
        ".".repeat(g.empty_cells)
    );
    Some((bar, g.marks))
}

fn findings(r: &mut Report, d: &Assessed) {
    r.section("Findings");
    if d.findings.is_empty() {
        r.line("none");
    }
    for f in &d.findings {
        r.flow(
            &format!("{} {}", f.severity.as_str().to_uppercase(), f.message),
            5,
        );
        if !f.culprits.is_empty() {
            let who: Vec<String> = f
                .culprits
                .iter()
                .map(|c| format!("{} (pid {})", c.short(), c.pid))
                .collect();
            r.flow(&format!("     by {}", who.join(", ")), 8);
        }
    }
    for p in &d.host.problems {
        r.line(&format!("could not read {p}"));
    }
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

/// `  cpu   some [####................]  12%  full [....................]   0%`.
fn bars_text(b: &crate::view::model::BarLine, width: usize) -> String {
    let mut out = format!("  {:<5}", b.label);
    for bar in &b.bars {
        let (filled, empty) = crate::view::model::bar_cells(bar.pct, width);
        out.push_str(&format!(
            " {} [{}{}] {:>4}",
            bar.name,
            "#".repeat(filled),
            ".".repeat(empty),
            crate::view::model::share_text(bar.pct)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Report;

    fn flowed(s: &str, width: usize, indent: usize) -> Vec<String> {
        let mut r = Report {
            out: String::new(),
            width,
        };
        r.flow(s, indent);
        r.out.lines().map(str::to_string).collect()
    }

    /// A note wider than the report wraps at a field, then a space; every word arrives whole
    /// and no line passes the width (the report cut `writeback every~`).
    #[test]
    fn notes_wrap_whole_words_within_the_width() {
        let note =
            "  vm.dirty limit 268435456 bytes  background 10%  expire 30.0s  writeback every 5.0s";
        let lines = flowed(note, 60, 4);
        assert_eq!(
            lines,
            [
                "  vm.dirty limit 268435456 bytes  background 10%",
                "    expire 30.0s  writeback every 5.0s"
            ]
        );
        for w in [20, 33, 60, 61, 80] {
            let lines = flowed(note, w, 4);
            assert!(
                lines.iter().all(|l| l.chars().count() <= w),
                "{w}: {lines:?}"
            );
            let words: Vec<&str> = lines.iter().flat_map(|l| l.split_whitespace()).collect();
            assert_eq!(words, note.split_whitespace().collect::<Vec<_>>(), "{w}");
        }
        // Only a word wider than a line is cut.
        assert_eq!(flowed("a verylongword", 8, 2), ["a", "  veryl~"]);
    }
}
