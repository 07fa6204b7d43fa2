//! Pressure pane: is the box stalling, and on what. PSI some/full of cpu, memory, io (and irq)
//! as bars, memory available against total, swap used and its traffic, reclaim by kswapd
//! against direct reclaim, OOM kills since the session began; zoomed, the kernel's
//! avg10/60/300, the reclaim policy and each node's free memory against its watermarks.

use super::model::Table;
use super::model::{
    cell, col, lcol, xcol, Bar, BarLine, Block, Cells, Level, Order, PaneView, Row,
};
use super::{Ctx, OomSince};
use crate::derive::{Derived, MemoryMetrics, PsiMetrics};
use crate::units::{compact, kb, num};

pub fn view(d: &Derived, x: &Ctx) -> PaneView {
    PaneView {
        headline: headline(d, x),
        body: body(d, x),
    }
}

/// The resources PSI reports, as the pane names them.
fn resources(d: &Derived) -> [(&'static str, Option<&PsiMetrics>); 4] {
    let p = &d.pressure;
    [
        ("cpu", p.cpu.as_ref()),
        ("mem", p.memory.as_ref()),
        ("io", p.io.as_ref()),
        ("irq", p.irq.as_ref()),
    ]
}

fn psi_pct(v: Option<f64>) -> String {
    super::model::share_text(v)
}

fn headline(d: &Derived, x: &Ctx) -> Cells {
    let m = &d.memory;
    let mut out = Vec::new();
    if d.pressure.unknown.is_some() {
        out.push(cell("PSI -", Level::Dim));
    } else {
        out.push(cell("some", Level::Dim));
        for (name, r) in resources(d).into_iter().take(3) {
            let Some(r) = r else { continue };
            // The share that rings a rule: full for memory and io when it stalls, else some.
            let (ls, lf) = x.levels.psi(name, r.some_pct, r.full_pct);
            let rank = |l: Level| match l {
                Level::Crit => 2,
                Level::Warn => 1,
                _ => 0,
            };
            let (v, lvl) = if rank(lf) > rank(ls) {
                (r.full_pct, lf)
            } else {
                (r.some_pct, ls)
            };
            out.push(cell(format!(" {name} "), Level::Text));
            out.push(cell(psi_pct(v), lvl));
        }
    }
    out.push(cell(
        format!(
            "  avail {} of {}",
            kb(m.mem_available_kb),
            kb(m.mem_total_kb)
        ),
        Level::Text,
    ));
    let r = &m.reclaim;
    let swap = match (r.swap_in_kb_per_s, r.swap_out_kb_per_s) {
        (Some(i), Some(o)) => Some(i + o),
        _ => None,
    };
    let swapping = swap.map(|kbs| kbs / m.page_kb.max(1) as f64);
    let swap_text = match m.swap_total_kb {
        Some(0) => "  no swap".to_string(),
        _ => format!("  swap {}/s", kb(swap.map(|v| v.round() as u64))),
    };
    out.push(cell(swap_text, x.levels.swapping(swapping)));
    let (kills, lvl) = oom_cell(x.oom, r.oom_kills);
    out.push(cell(format!("  OOM {kills}"), lvl));
    out
}

/// OOM kills since the session began (or, without that, in this interval), crit when any.
fn oom_cell(since: Option<OomSince>, interval: Option<u64>) -> (String, Level) {
    let n = since.map(|s| s.kills).or(interval);
    match n {
        Some(0) => ("0".into(), Level::Text),
        Some(n) => (n.to_string(), Level::Crit),
        None => ("-".into(), Level::Dim),
    }
}

fn body(d: &Derived, x: &Ctx) -> Vec<Block> {
    let mut out = Vec::new();
    match &d.pressure.unknown {
        Some(why) => out.push(Block::Alert(cell(why.clone(), Level::Dim))),
        None => {
            for (name, r) in resources(d) {
                let Some(r) = r else { continue };
                let (ls, lf) = x.levels.psi(name, r.some_pct, r.full_pct);
                out.push(Block::Bars(BarLine {
                    label: name.to_string(),
                    bars: vec![
                        Bar {
                            name: "some".into(),
                            pct: r.some_pct,
                            level: ls,
                        },
                        Bar {
                            name: "full".into(),
                            pct: r.full_pct,
                            level: lf,
                        },
                    ],
                }));
            }
        }
    }
    let m = &d.memory;
    out.push(Block::Line(memory_line(m)));
    if let Some(why) = &m.mem_available_unknown {
        out.push(Block::Note(format!("avail: - ({why})")));
    }
    out.push(Block::Line(reclaim_line(m, x)));
    out.push(Block::Line(oom_line(m, x, d.since_boot)));
    if x.detail {
        if d.pressure.unknown.is_none() {
            out.push(Block::Table(averages(d)));
        }
        out.extend(policy_lines(m).into_iter().map(Block::Line));
        out.push(Block::Table(watermarks(m)));
        out.push(Block::Note(
            "some: share of time at least one task stalled on the resource".into(),
        ));
        out.push(Block::Note(
            "full: all non-idle tasks at once; avg10/60/300: the kernel's averages".into(),
        ));
        out.push(Block::Note(
            "free below low: kswapd reclaims; below min: allocations reclaim themselves".into(),
        ));
    }
    out
}

fn memory_line(m: &MemoryMetrics) -> Cells {
    let r = &m.reclaim;
    let swap = match m.swap_total_kb {
        Some(0) => "swap none".to_string(),
        _ => format!(
            "swap {} of {} in {}/s out {}/s",
            kb(r.swap_used_kb),
            kb(m.swap_total_kb),
            kb(r.swap_in_kb_per_s.map(|v| v.round() as u64)),
            kb(r.swap_out_kb_per_s.map(|v| v.round() as u64))
        ),
    };
    vec![cell(
        format!(
            "  avail {} free {} commit {} of {}  {swap}",
            kb(m.mem_available_kb),
            kb(m.mem_free_kb),
            kb(m.committed_as_kb),
            kb(m.commit_limit_kb)
        ),
        Level::Text,
    )]
}

fn reclaim_line(m: &MemoryMetrics, x: &Ctx) -> Cells {
    let r = &m.reclaim;
    let direct = x
        .levels
        .direct_reclaim(r.allocstall_per_s, r.pgscan_direct_per_s);
    vec![
        cell(
            format!(
                "  kswapd scan {}/s steal {}/s cpu {}%",
                compact(r.pgscan_kswapd_per_s),
                compact(r.pgsteal_kswapd_per_s),
                num(r.kswapd_pct, 0)
            ),
            Level::Text,
        ),
        cell(
            format!(
                "  direct scan {}/s stalls {}/s",
                compact(r.pgscan_direct_per_s),
                compact(r.allocstall_per_s)
            ),
            direct,
        ),
    ]
}

fn oom_line(m: &MemoryMetrics, x: &Ctx, since_boot: bool) -> Cells {
    let r = &m.reclaim;
    let (kills, lvl) = oom_cell(x.oom, r.oom_kills);
    let last = x
        .oom
        .and_then(|s| s.last_ms)
        .map_or(String::new(), |ms| format!(", last {}", clock(ms)));
    let since = match (x.oom.is_some(), since_boot) {
        (true, _) => " since start",
        (false, true) => " since boot",
        (false, false) => " this interval",
    };
    // This interval's victims as the kernel log names them (`/dev/kmsg`).
    let victims = match m.oom_victims.is_empty() {
        true => String::new(),
        false => format!(": {}", crate::findings::oom_victims(&m.oom_victims)),
    };
    vec![
        cell(format!("  OOM kills {kills}{since}{last}{victims}"), lvl),
        cell(
            format!(
                "  majflt {}/s  refault {}/s  all scan {}/s",
                compact(r.major_faults_per_s),
                compact(r.workingset_refault_per_s),
                compact(r.pgscan_per_s)
            ),
            Level::Text,
        ),
    ]
}

/// `14:05:30 UTC` of a wall-clock time in ms.
fn clock(ms: i64) -> String {
    let s = ms.div_euclid(1000).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02} UTC", s / 3600, s / 60 % 60, s % 60)
}

fn averages(d: &Derived) -> Table {
    let mut t = Table::new(
        vec![
            lcol("psi", 4),
            col("some%", 6),
            col("avg10", 6),
            col("avg60", 6),
            col("avg300", 6),
            col("full%", 6),
            xcol("favg10", 6),
            xcol("favg60", 6),
            xcol("favg300", 7),
        ],
        "resources",
        Order::Natural,
    );
    for (i, (name, r)) in resources(d).into_iter().enumerate() {
        let Some(r) = r else { continue };
        let n = |v: Option<f64>| cell(num(v, 2), Level::Text);
        t.rows.push(Row {
            name: name.to_string(),
            load: r.some_pct.unwrap_or(0.0),
            natural: i as u64,
            cells: vec![
                cell(name, Level::Text),
                n(r.some_pct),
                n(r.some_avg10),
                n(r.some_avg60),
                n(r.some_avg300),
                n(r.full_pct),
                n(r.full_avg10),
                n(r.full_avg60),
                n(r.full_avg300),
            ],
            quiet: false,
        });
    }
    t
}

/// The `vm.*` policy, two lines that fit 80 columns.
fn policy_lines(m: &MemoryMetrics) -> [Cells; 2] {
    let r = &m.reclaim;
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    [
        vec![cell(
            format!(
                "  vm.swappiness {}  vm.min_free_kbytes {} ({})  watermark_scale {}",
                opt(r.swappiness),
                opt(r.min_free_kbytes),
                kb(r.min_free_kbytes),
                opt(r.watermark_scale_factor),
            ),
            Level::Text,
        )],
        vec![cell(
            format!(
                "  vm.overcommit_memory {} (ratio {})  vm.zone_reclaim_mode {}",
                opt(r.overcommit_memory),
                opt(r.overcommit_ratio),
                opt(r.zone_reclaim_mode)
            ),
            Level::Text,
        )],
    ]
}

/// Each node's free memory against its watermarks: below low kswapd works, below min
/// allocations reclaim themselves.
fn watermarks(m: &MemoryMetrics) -> Table {
    let mut t = Table::new(
        vec![
            lcol("node", 5),
            col("free", 7),
            col("min", 7),
            col("low", 7),
            col("high", 7),
            col("managed", 8),
            lcol("zones", 20),
        ],
        "nodes",
        Order::Natural,
    );
    t.empty = Some("watermarks: - (/proc/zoneinfo not read)".into());
    for w in &m.watermarks {
        let free = match (w.free_kb, w.min_kb, w.low_kb) {
            (Some(f), Some(min), _) if f < min => Level::Crit,
            (Some(f), _, Some(low)) if f < low => Level::Warn,
            (None, ..) => Level::Dim,
            _ => Level::Text,
        };
        t.rows.push(Row {
            name: format!("node{}", w.node),
            load: 0.0,
            natural: u64::from(w.node),
            cells: vec![
                cell(w.node.to_string(), Level::Text),
                cell(kb(w.free_kb), free),
                cell(kb(w.min_kb), Level::Text),
                cell(kb(w.low_kb), Level::Text),
                cell(kb(w.high_kb), Level::Text),
                cell(kb(w.managed_kb), Level::Text),
                cell(w.zones.join(","), Level::Dim),
            ],
            quiet: false,
        });
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psi_shares_and_clock() {
        assert_eq!(psi_pct(Some(0.2)), "<1%");
        assert_eq!(psi_pct(Some(0.0)), "0%");
        assert_eq!(psi_pct(Some(36.4)), "36%");
        assert_eq!(psi_pct(None), "-");
        assert_eq!(clock(1_763_733_930_000), "14:05:30 UTC");
        assert_eq!(oom_cell(None, None).1, Level::Dim);
        let s = OomSince {
            kills: 2,
            last_ms: None,
        };
        assert_eq!(oom_cell(Some(s), Some(0)), ("2".to_string(), Level::Crit));
    }
}
