//! Disks pane: iostat -x columns per device, stalled then busiest first; %util is bracketed for
//! devices that serve requests in parallel (NVMe, dm, md), where aqu-sz and await tell the story.

use super::model::{cell, col, lcol, xcol, Block, Cells, Level, Order, PaneView, Row, Table};
use super::Ctx;
use crate::derive::{Derived, DiskMetrics};
use crate::findings::disk_await;
use crate::units::{num, num_fit};

pub fn view(d: &Derived, x: &Ctx) -> PaneView {
    PaneView {
        headline: headline(d, x),
        body: body(d, x),
    }
}

pub fn label(m: &DiskMetrics) -> String {
    m.dm_name.clone().unwrap_or_else(|| m.disk_device.clone())
}

/// A device that completed I/O in the interval or holds requests in flight (a stalled
/// device completes nothing and is the one to see).
pub fn active(m: &DiskMetrics) -> bool {
    m.stalled
        || m.inflight.is_some_and(|n| n > 0)
        || [m.r_s, m.w_s, m.d_s, m.f_s]
            .iter()
            .any(|v| v.is_some_and(|x| x > 0.0))
}

/// `vda: 36 in flight, none completed in 2.0s (stalled)`.
pub fn stall_note(m: &DiskMetrics, interval_s: Option<f64>) -> String {
    let inflight = m.inflight.map_or("-".to_string(), |n| n.to_string());
    let secs = interval_s.map_or("the interval".to_string(), |s| format!("{s:.1}s"));
    format!(
        "{}: {inflight} in flight, none completed in {secs} (stalled)",
        label(m)
    )
}

/// Stalled devices first (most in flight first), then the deepest queue.
fn load(m: &DiskMetrics) -> f64 {
    if m.stalled {
        1e12 + m.inflight.unwrap_or(0) as f64
    } else {
        m.aqu_sz.unwrap_or(0.0)
    }
}

fn headline(d: &Derived, x: &Ctx) -> Cells {
    let l = &x.levels;
    let whole: Vec<&DiskMetrics> = d.disks.iter().filter(|m| !m.partition).collect();
    if whole.is_empty() {
        return vec![cell("no block devices in /proc/diskstats", Level::Dim)];
    }
    let n_active = whole.iter().filter(|m| active(m)).count();
    let mut s = vec![cell(
        format!("{n_active}/{} active", whole.len()),
        Level::Text,
    )];
    let stalled: Vec<&&DiskMetrics> = whole.iter().filter(|m| m.stalled).collect();
    if let Some(m) = stalled.first() {
        let more = match stalled.len() {
            1 => String::new(),
            n => format!(" +{}", n - 1),
        };
        let inflight = m.inflight.map_or("-".into(), |n| n.to_string());
        s.push(cell(
            format!("  STALLED {} {inflight} in flight{more}", label(m)),
            Level::Crit,
        ));
    } else if let Some(m) = whole
        .iter()
        .max_by(|a, b| load(a).total_cmp(&load(b)))
        .filter(|m| m.aqu_sz.unwrap_or(0.0) > 0.0)
    {
        // Completion-weighted, as the disk.saturated rule judges it: 3 slow reads must not
        // hide 40,000 fast writes.
        let wait = disk_await(m).map(|(_, w)| w);
        s.push(cell(format!("  busiest {} aqu ", label(m)), Level::Text));
        s.push(cell(num(m.aqu_sz, 2), l.aqu_sz(m.aqu_sz)));
        s.push(cell(" await ", Level::Text));
        s.push(cell(
            format!("{}ms", num(wait, 1)),
            l.await_ms(wait, m.rotational),
        ));
        if !m.parallel {
            s.push(cell(format!(" util {}%", num(m.util, 0)), l.util(m.util)));
        }
    }
    s
}

fn body(d: &Derived, x: &Ctx) -> Vec<Block> {
    let l = &x.levels;
    let mut cols = vec![
        lcol("Device", 9),
        col("r/s", 6),
        col("w/s", 6),
        col("d/s", 6),
        col("rkB/s", 7),
        col("wkB/s", 7),
        col("r_await", 7),
        col("w_await", 7),
        col("aqu-sz", 6),
        col("%util", 6),
    ];
    for (n, w) in [
        ("rrqm/s", 6),
        ("wrqm/s", 6),
        ("%rrqm", 5),
        ("%wrqm", 5),
        ("rareq-sz", 8),
        ("wareq-sz", 8),
        ("dkB/s", 7),
        ("d_await", 7),
        ("f/s", 6),
        ("f_await", 7),
        ("inflt", 5),
        ("sched", 11),
    ] {
        cols.push(xcol(n, w));
    }
    let mut t = Table::new(cols, "devices", Order::Load);
    t.empty = Some("- (no /proc/diskstats devices)".into());
    let list = d.disks.iter().filter(|m| x.detail || !m.partition);
    for (i, m) in list.enumerate() {
        let util = num(m.util, 1);
        let name_level = if m.stalled {
            Level::Crit
        } else if m.partition {
            Level::Dim
        } else {
            Level::Text
        };
        let mut cells = vec![
            cell(label(m), name_level),
            cell(num_fit(m.r_s, 1, 6), Level::Text),
            cell(num_fit(m.w_s, 1, 6), Level::Text),
            cell(num_fit(m.d_s, 1, 6), Level::Text),
            cell(num_fit(m.rkb_s, 1, 7), Level::Text),
            cell(num_fit(m.wkb_s, 1, 7), Level::Text),
            cell(
                num_fit(m.r_await, 2, 7),
                l.await_ms(m.r_await, m.rotational),
            ),
            cell(
                num_fit(m.w_await, 2, 7),
                l.await_ms(m.w_await, m.rotational),
            ),
            cell(num_fit(m.aqu_sz, 2, 6), l.aqu_sz(m.aqu_sz)),
            if m.parallel && m.util.is_some() {
                cell(format!("({util})"), Level::Dim)
            } else {
                cell(util, l.util(m.util))
            },
        ];
        for (v, dec) in [
            (m.rrqm_s, 1),
            (m.wrqm_s, 1),
            (m.rrqm, 1),
            (m.wrqm, 1),
            (m.rareq_sz, 1),
            (m.wareq_sz, 1),
            (m.dkb_s, 1),
            (m.d_await, 2),
            (m.f_s, 1),
            (m.f_await, 2),
        ] {
            cells.push(cell(num_fit(v, dec, 7), Level::Text));
        }
        cells.push(cell(
            m.inflight.map_or("-".into(), |v| v.to_string()),
            Level::Text,
        ));
        cells.push(cell(
            m.scheduler.clone().unwrap_or_else(|| "-".into()),
            Level::Dim,
        ));
        t.rows.push(Row {
            name: label(m),
            load: load(m),
            natural: i as u64,
            cells,
            quiet: !active(m),
        });
    }
    let mut out = vec![Block::Table(t)];
    for m in d.disks.iter().filter(|m| m.stalled && !m.partition) {
        out.push(Block::Alert(cell(stall_note(m, d.interval_s), Level::Crit)));
    }
    if d.disks.iter().any(|m| m.parallel && active(m)) {
        out.push(Block::Note(
            "(%util): parallel device, read aqu-sz/await".into(),
        ));
    }
    out
}
