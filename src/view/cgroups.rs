//! The cgroups table: per control group its CPU against its quota, throttling, memory against
//! its limit, its own memory and I/O stalls (PSI) and I/O rates, busiest first. Not a pane of
//! its own: the processes pane shows it.

use super::model::{cell, col, lcol, xcol, xlcol, Block, Cell, Level, Order, Row, Table};
use super::Ctx;
use crate::derive::{CgroupMetrics, Derived};
use crate::sample::Limit;
use crate::units::{compact, kb, num_fit};

/// CPUs as the quota column shows them: `0.2`, `1.5`, `16`; `max` for no quota.
fn quota(l: Option<Limit<f64>>) -> String {
    match l {
        None => "-".into(),
        Some(Limit::Max) => "max".into(),
        Some(Limit::Value(v)) if v >= 10.0 => format!("{v:.0}"),
        Some(Limit::Value(v)) => {
            let s = format!("{v:.2}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    }
}

/// The lower of memory.high and memory.max, `max` when neither limits.
fn mem_limit(g: &CgroupMetrics) -> String {
    let lowest = [g.mem_high_kb, g.mem_max_kb]
        .into_iter()
        .flatten()
        .filter_map(Limit::value)
        .min();
    match (lowest, g.mem_high_kb.or(g.mem_max_kb)) {
        (Some(v), _) => kb(Some(v)),
        (None, Some(_)) => "max".into(),
        (None, None) => "-".into(),
    }
}

/// Nothing happening: no CPU, no I/O, no stall, nowhere near a limit.
fn quiet(g: &CgroupMetrics, x: &Ctx) -> bool {
    let zero = |v: Option<f64>| v.is_none_or(|v| v < 0.05);
    zero(g.cpu_pct)
        && zero(g.read_kb_per_s)
        && zero(g.write_kb_per_s)
        && zero(g.mem_some_pct)
        && zero(g.io_some_pct)
        && x.levels.cgroup_memory(g.mem_of_limit_pct) != Level::Warn
        && g.oom_kills.is_none_or(|n| n == 0)
}

fn row(i: usize, g: &CgroupMetrics, x: &Ctx) -> Row {
    let l = &x.levels;
    let thr = l.cgroup_throttled(g.throttled_pct, g.throttled_ms_per_s);
    let mem_level = match l.cgroup_memory(g.mem_of_limit_pct) {
        _ if g.oom_kills.is_some_and(|n| n > 0) => Level::Crit,
        lv => lv,
    };
    let used = g.mem_working_set_kb.or(g.mem_kb);
    // Against its quota when it has one; a group without one can use the whole machine.
    let cpu_level = match g.cpu_of_quota_pct {
        Some(_) => l.busy(g.cpu_of_quota_pct),
        None if g.cpu_pct.is_some() => Level::Text,
        None => Level::Dim,
    };
    let (mem_some, _) = l.psi("mem", g.mem_some_pct, g.mem_full_pct);
    let cells: Vec<Cell> = vec![
        cell(g.name.clone(), Level::Text),
        cell(num_fit(g.cpu_pct, 1, 6), cpu_level),
        cell(quota(g.cpu_quota_cpus), Level::Dim),
        cell(num_fit(g.throttled_pct, 0, 5), thr),
        cell(kb(used), mem_level),
        cell(mem_limit(g), Level::Dim),
        cell(num_fit(g.mem_some_pct, 0, 5), mem_some),
        cell(num_fit(g.io_some_pct, 0, 5), Level::Text),
        cell(compact(g.read_kb_per_s), Level::Text),
        cell(compact(g.write_kb_per_s), Level::Text),
        cell(num_fit(g.throttled_ms_per_s, 0, 6), thr),
        cell(compact(g.read_iops), Level::Text),
        cell(compact(g.write_iops), Level::Text),
        cell(g.path.clone(), Level::Dim),
    ];
    Row {
        name: g.name.clone(),
        load: g.cpu_pct.unwrap_or(0.0),
        natural: i as u64,
        cells,
        quiet: quiet(g, x),
    }
}

/// The table of every cgroup read, busiest first; `None` when there is no cgroup hierarchy
/// (or the recording has none), which `notes` says.
pub fn table(d: &Derived, x: &Ctx) -> Option<Block> {
    if d.host.cgroups_unknown.is_some() {
        return None;
    }
    let cols = vec![
        lcol("CGROUP", 20),
        col("CPU%", 6),
        col("CPUS", 5),
        col("THR%", 5),
        col("MEM", 6),
        col("LIMIT", 6),
        col("PSIm", 5),
        col("PSIio", 5),
        col("rkB/s", 6),
        col("wkB/s", 6),
        xcol("thr ms/s", 8),
        xcol("r/s", 6),
        xcol("w/s", 6),
        xlcol("PATH", 40),
    ];
    let mut t = Table::new(cols, "cgroups", Order::Load);
    t.empty = Some("no cgroups besides the root".into());
    t.rows = d
        .cgroups
        .iter()
        .enumerate()
        .map(|(i, g)| row(i, g, x))
        .collect();
    Some(Block::Table(t))
}

/// What the table leaves unsaid: why there is none, groups not read, what v1 cannot tell.
pub fn notes(d: &Derived) -> Vec<Block> {
    let h = &d.host;
    let mut out = Vec::new();
    if let Some(why) = &h.cgroups_unknown {
        out.push(Block::Note(format!("cgroups: {why}")));
        return out;
    }
    if let Some(n) = h.cgroups_left_out.filter(|n| *n > 0) {
        out.push(Block::Note(format!(
            "+{n} cgroups not read (the {} busiest are)",
            d.cgroups.len()
        )));
    }
    if h.cgroup_version.as_deref() == Some("v1") {
        out.push(Block::Note(
            "cgroup v1: no per-group PSI or I/O; MEM is usage against the v1 limit".into(),
        ));
    }
    out.push(Block::Note(
        "THR%: share of quota periods throttled; PSIm/PSIio: group's some-stall %".into(),
    ));
    out
}

/// The table and its notes, for a pane body.
pub fn blocks(d: &Derived, x: &Ctx) -> Vec<Block> {
    table(d, x).into_iter().chain(notes(d)).collect()
}
