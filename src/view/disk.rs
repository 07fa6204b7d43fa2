//! Disks pane: iostat -x columns per device, stalled then busiest first; %util is bracketed for
//! devices that serve requests in parallel (NVMe, dm, md), where aqu-sz and await tell the story.
//! Zoomed, the mounted filesystems' space below (`filesystems`); the headline names the fullest
//! one from 90% used.

use super::levels::display::FS_HEADLINE_PCT;
use super::model::{
    cell, col, lcol, xcol, xlcol, Block, Cell, Cells, Level, Order, PaneView, Row, Table,
};
use super::Ctx;
use crate::derive::{Derived, DiskMetrics};
use crate::findings::{disk_await, fs_watched};
use crate::units::{kb, num, plain_fit};

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
pub fn load(m: &DiskMetrics) -> f64 {
    if m.stalled {
        1e12 + m.inflight.unwrap_or(0) as f64
    } else {
        m.aqu_sz.unwrap_or(0.0)
    }
}

fn headline(d: &Derived, x: &Ctx) -> Cells {
    let mut s = devices_headline(d, x);
    // The fullest filesystem fs.full watches, once it is near full: a full disk is an
    // incident no latency figure shows.
    let fullest = d
        .filesystems
        .iter()
        .filter(|f| fs_watched(f, x.levels.t))
        .filter_map(|f| Some((f, f.used_pct?)))
        .filter(|(_, p)| *p >= FS_HEADLINE_PCT)
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((f, p)) = fullest {
        s.push(cell(
            format!("  {} {p:.0}% full", f.mount),
            x.levels.fs_used(f, Some(p)),
        ));
    }
    s
}

fn devices_headline(d: &Derived, x: &Ctx) -> Cells {
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

/// The devices the table lists, in order: whole disks, and partitions when zoomed.
fn listed<'a>(d: &'a Derived, x: &Ctx) -> impl Iterator<Item = &'a DiskMetrics> {
    let detail = x.detail;
    d.disks.iter().filter(move |m| detail || !m.partition)
}

fn name_level(m: &DiskMetrics) -> Level {
    if m.stalled {
        Level::Crit
    } else if m.partition {
        Level::Dim
    } else {
        Level::Text
    }
}

/// Every cell of the `i`-th listed device's row (`Later::Disk`), built for the rows drawn.
/// Empty for a device the interval does not hold.
pub fn cells_of(d: &Derived, x: &Ctx, i: u64) -> Vec<Cell> {
    let Some(m) = usize::try_from(i).ok().and_then(|i| listed(d, x).nth(i)) else {
        return Vec::new();
    };
    let mut v = vec![cell(label(m), name_level(m))];
    v.extend(row_cells(m, x));
    v
}

/// A device's cells after its name.
fn row_cells(m: &DiskMetrics, x: &Ctx) -> Vec<Cell> {
    let l = &x.levels;
    let util = num(m.util, 1);
    let mut cells = vec![
        cell(plain_fit(m.r_s, 1, 6), Level::Text),
        cell(plain_fit(m.w_s, 1, 6), Level::Text),
        cell(plain_fit(m.d_s, 1, 6), Level::Text),
        cell(plain_fit(m.rkb_s, 1, 7), Level::Text),
        cell(plain_fit(m.wkb_s, 1, 7), Level::Text),
        cell(
            plain_fit(m.r_await, 2, 7),
            l.await_ms(m.r_await, m.rotational),
        ),
        cell(
            plain_fit(m.w_await, 2, 7),
            l.await_ms(m.w_await, m.rotational),
        ),
        cell(plain_fit(m.aqu_sz, 2, 6), l.aqu_sz(m.aqu_sz)),
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
        cells.push(cell(plain_fit(v, dec, 7), Level::Text));
    }
    cells.push(cell(
        m.inflight.map_or("-".into(), |v| v.to_string()),
        Level::Text,
    ));
    cells.push(cell(
        m.scheduler.clone().unwrap_or_else(|| "-".into()),
        Level::Dim,
    ));
    cells
}

fn body(d: &Derived, x: &Ctx) -> Vec<Block> {
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
    // On a screen a row's cells wait for the rows drawn (`Later::Disk`): a VM's ten loop
    // devices were 80 numbers formatted a frame for the two or three rows shown.
    if x.lazy_rows {
        t.later = Some(super::model::Later::Disk);
    }
    for (i, m) in listed(d, x).enumerate() {
        let mut cells = vec![cell(label(m), name_level(m))];
        if !x.lazy_rows {
            cells.extend(row_cells(m, x));
        }
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
    if x.detail {
        super::storage::blocks(d, x, &mut out);
        filesystems(d, x, &mut out);
    }
    out
}

fn bytes(b: u64) -> String {
    kb(Some(b / 1024))
}

/// The filesystems table (df's figures), then why it is empty or old when it is.
fn filesystems(d: &Derived, x: &Ctx, out: &mut Vec<Block>) {
    let l = &x.levels;
    let cols = vec![
        lcol("Mount", 20),
        lcol("Type", 8),
        col("Size", 6),
        col("Used%", 6),
        col("Avail", 6),
        xlcol("Device", 16),
        xcol("Inode%", 6),
    ];
    let mut t = Table::new(cols, "filesystems", Order::Natural);
    for (i, f) in d.filesystems.iter().enumerate() {
        let ro = if f.read_only { " ro" } else { "" };
        t.rows.push(Row {
            name: f.mount.clone(),
            load: f.used_pct.unwrap_or(0.0),
            natural: i as u64,
            cells: vec![
                cell(f.mount.clone(), Level::Text),
                cell(format!("{}{ro}", f.fstype), Level::Dim),
                cell(bytes(f.size_bytes), Level::Text),
                cell(num(f.used_pct, 1), l.fs_used(f, f.used_pct)),
                cell(bytes(f.avail_bytes), l.fs_avail(f)),
                cell(f.device.clone(), Level::Dim),
                cell(num(f.inodes_used_pct, 1), l.fs_used(f, f.inodes_used_pct)),
            ],
            quiet: false,
        });
    }
    if !t.rows.is_empty() {
        out.push(Block::Table(t));
    }
    let Some(why) = &d.host.filesystems_unknown else {
        return;
    };
    if d.filesystems.is_empty() {
        out.push(Block::Note(why.clone()));
    } else {
        // Old figures are shown, and said to be old.
        out.push(Block::Alert(cell(why.clone(), Level::Warn)));
    }
}
