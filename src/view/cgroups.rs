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
    // Live, the groups' own reads are always a few ms off the stamps' interval: said only
    // when the difference is one a reader would see (read in turns, a gap).
    let own = |secs: f64| d.interval_s.is_none_or(|iv| (secs - iv).abs() > 0.1 * iv);
    if let Some(secs) = h.cgroups_secs.filter(|s| own(*s)) {
        // Samples faster than a second read the groups in turns: rates over their own reads.
        out.push(Block::Note(format!(
            "groups read about once a second: rates over the last {secs:.1} s"
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Thresholds;

    fn derived(groups: Vec<CgroupMetrics>) -> Derived {
        let mut d = crate::derive::derive(None, &crate::sample::Sample::default());
        d.host.cgroups_unknown = None;
        d.host.cgroup_version = Some("v2".into());
        d.host.cgroups_left_out = Some(3);
        d.cgroups = groups;
        d
    }

    #[test]
    fn rows_levels_and_notes() {
        let busy = CgroupMetrics {
            name: "docker:3f4e5d6c7b8a".into(),
            path: "/system.slice/docker-3f4e5d6c7b8a.scope".into(),
            cpu_pct: Some(50.0),
            cpu_quota_cpus: Some(Limit::Value(0.5)),
            cpu_of_quota_pct: Some(100.0),
            throttled_pct: Some(80.0),
            throttled_ms_per_s: Some(400.0),
            mem_kb: Some(962_560),
            mem_max_kb: Some(Limit::Value(1_048_576)),
            mem_of_limit_pct: Some(91.8),
            ..CgroupMetrics::default()
        };
        let idle = CgroupMetrics {
            name: "init.scope".into(),
            cpu_pct: Some(0.0),
            cpu_quota_cpus: Some(Limit::Max),
            throttled_pct: Some(0.0),
            throttled_ms_per_s: Some(0.0),
            mem_kb: Some(20_480),
            mem_high_kb: Some(Limit::Max),
            mem_max_kb: Some(Limit::Max),
            ..CgroupMetrics::default()
        };
        let t = Thresholds::default();
        let x = Ctx::new(&t, true);
        let d = derived(vec![idle, busy]);
        let Some(Block::Table(t)) = table(&d, &x) else {
            panic!("a table");
        };
        let texts = |r: &Row| r.cells.iter().map(|c| c.text.clone()).collect::<Vec<_>>();
        let (idle, busy) = (&t.rows[0], &t.rows[1]);
        assert!(idle.quiet && !busy.quiet);
        assert_eq!(busy.load, 50.0);
        assert_eq!(
            texts(busy)[..8],
            [
                "docker:3f4e5d6c7b8a",
                "50.0",
                "0.5",
                "80",
                "940M",
                "1.0G",
                "-",
                "-"
            ]
        );
        assert_eq!(texts(idle)[2..6], ["max", "0", "20M", "max"]);
        // At the rule's levels: 80% of periods and 400 ms/s is crit, 92% of the limit warn.
        assert_eq!(busy.cells[3].level, Level::Crit);
        assert_eq!(busy.cells[4].level, Level::Warn);
        assert_eq!(busy.cells[1].level, Level::Crit, "at 100% of its quota");
        let notes: Vec<String> = notes(&d)
            .into_iter()
            .filter_map(|b| match b {
                Block::Note(s) => Some(s),
                _ => None,
            })
            .collect();
        assert_eq!(notes[0], "+3 cgroups not read (the 2 busiest are)");
        let mut none = derived(Vec::new());
        none.host.cgroups_unknown = Some("no cgroup hierarchy mounted (or captured)".into());
        assert!(table(&none, &x).is_none());
        assert_eq!(blocks(&none, &x).len(), 1);
    }
}
