//! The CPU pane's power facts: package watts and throttling in the headline; zoomed, each
//! RAPL zone and each throttled core or package, or why there are none.

use super::model::{cell, Block, Cells, Level};
use super::Ctx;
use crate::cpulist::CpuList;
use crate::derive::{Derived, ThrottleMetrics};
use crate::sample::ThrottleScope;

/// Throttled packages and cores named on the zoomed line; the rest are counted.
const SHOWN: usize = 4;

/// A throttle entry worth a word: throttled or with events in the interval.
fn throttled(m: &ThrottleMetrics) -> bool {
    m.throttled_pct.is_some_and(|p| p >= 0.05) || m.events_per_s.is_some_and(|e| e > 0.0)
}

/// Throttled enough for the headline: the finding's share (any event where the kernel does
/// not count time); a core that brushed its limit for 2 ms is zoomed-only detail.
fn headline_worthy(m: &ThrottleMetrics, x: &Ctx) -> bool {
    match m.throttled_pct {
        Some(p) => p >= x.levels.t.thermal_throttle_pct,
        None => m.events_per_s.is_some_and(|e| e > 0.0),
    }
}

/// `  pkg 45W` and, when a package or core was throttled, `  THROTTLED pkg0 35%`.
pub fn headline(d: &Derived, x: &Ctx) -> Cells {
    let mut s = Vec::new();
    if let Some(w) = d.power.package_watts {
        s.push(cell(format!("  pkg {w:.0}W"), Level::Text));
    }
    let worst = d
        .power
        .throttle
        .iter()
        .filter(|m| headline_worthy(m, x))
        .max_by(|a, b| {
            let k = |m: &ThrottleMetrics| m.throttled_pct.unwrap_or(0.0);
            k(a).partial_cmp(&k(b)).unwrap_or(std::cmp::Ordering::Equal)
        });
    if let Some(m) = worst {
        let share = m
            .throttled_pct
            .map(|p| format!(" {p:.0}%"))
            .unwrap_or_default();
        s.push(cell(
            format!("  THROTTLED {}{share}", label(m)),
            Level::Warn,
        ));
    }
    s
}

fn label(m: &ThrottleMetrics) -> String {
    match m.scope {
        ThrottleScope::Package => m.package.map_or("pkg?".into(), |p| format!("pkg{p}")),
        ThrottleScope::Core => match m.cpus.as_slice() {
            [] => "core?".into(),
            ids => format!("cpu{}", CpuList::from_ids(ids.to_vec())),
        },
    }
}

/// Zoomed: RAPL watts per zone and the throttled entries, each with what is unknown and why.
pub fn notes(d: &Derived, x: &Ctx) -> Vec<Block> {
    if !x.detail {
        return Vec::new();
    }
    let p = &d.power;
    let mut out = Vec::new();
    if p.rapl.is_empty() && p.throttle.is_empty() {
        // Neither (a VM; an old recording): one short row, not two; JSON has both reasons.
        let why = match (&p.rapl_unknown, &p.throttle_unknown) {
            (Some(r), Some(t)) if r == t => r.as_str(),
            _ => "no RAPL or thermal_throttle here: most VMs have neither",
        };
        out.push(Block::Note(format!("power: - ({why})")));
        return out;
    }
    if p.rapl.is_empty() || p.package_watts.is_none() {
        let why = p.rapl_unknown.as_deref().unwrap_or("unknown");
        out.push(Block::Note(format!("RAPL power: - ({why})")));
    }
    if !p.rapl.is_empty() {
        let zones: Vec<String> = p
            .rapl
            .iter()
            .map(|z| {
                let name = z.name.as_deref().unwrap_or(&z.zone);
                match z.watts {
                    Some(w) => format!("{name} {w:.1}W"),
                    None => format!("{name} -"),
                }
            })
            .collect();
        out.push(Block::Line(vec![cell(
            format!("  RAPL: {}", zones.join("  ")),
            Level::Text,
        )]));
    }
    if let Some(why) = &p.throttle_unknown {
        out.push(Block::Note(format!("thermal throttle: - ({why})")));
    } else {
        let mut hot: Vec<&ThrottleMetrics> = p.throttle.iter().filter(|m| throttled(m)).collect();
        // The longest throttled first; a big host's list is cut at `SHOWN`.
        hot.sort_by(|a, b| {
            let k = |m: &ThrottleMetrics| {
                (
                    m.throttled_pct.unwrap_or(0.0),
                    m.events_per_s.unwrap_or(0.0),
                )
            };
            k(b).partial_cmp(&k(a)).unwrap_or(std::cmp::Ordering::Equal)
        });
        let more = hot.len().saturating_sub(SHOWN);
        let mut hot: Vec<String> = hot
            .iter()
            .take(SHOWN)
            .map(|m| {
                let share = m
                    .throttled_pct
                    .map(|v| format!(" {v:.0}%"))
                    .unwrap_or_default();
                let ev = m
                    .events_per_s
                    .map(|e| format!(" {}/s", crate::units::compact(Some(e))))
                    .unwrap_or_default();
                format!("{}{share}{ev}", label(m))
            })
            .collect();
        if more > 0 {
            hot.push(format!("+{more} more"));
        }
        let line = if hot.is_empty() {
            let packages = p
                .throttle
                .iter()
                .filter(|m| m.scope == ThrottleScope::Package)
                .count();
            let cores = p.throttle.len() - packages;
            format!("  thermal throttle: none ({packages} package(s), {cores} core(s) read)")
        } else {
            format!("  thermal throttle: {}", hot.join("  "))
        };
        let level = if hot.is_empty() {
            Level::Dim
        } else {
            Level::Warn
        };
        out.push(Block::Line(vec![cell(line, level)]));
    }
    out
}
