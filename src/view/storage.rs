//! The zoomed Disks pane's storage stack: each whole disk's queue settings, SCSI depth and state
//! (`-` with the reason below when unknown), then every dm/md device with slaves drawn with its
//! paths, each path's r/s, w/s and share of the map's I/O, so an idle path shows at a glance.

use super::disk::label;
use super::model::{cell, col, lcol, Block, Level, Order, Row, Table};
use super::Ctx;
use crate::derive::{Derived, DiskMetrics};
use crate::units::num_fit;
use std::collections::BTreeMap;

fn opt(v: Option<u64>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// A loop device (a file), zram or a RAM disk: no hardware under it.
fn in_memory_or_file(name: &str) -> bool {
    ["loop", "zram", "ram"].iter().any(|p| name.starts_with(p))
}

/// The two tables and the reasons for what is unknown, appended to `out`.
pub fn blocks(d: &Derived, x: &Ctx, out: &mut Vec<Block>) {
    let whole: Vec<&DiskMetrics> = d.disks.iter().filter(|m| !m.partition).collect();
    if whole.is_empty() {
        return;
    }
    queues(&whole, x, out);
    maps(d, out);
}

fn queues(whole: &[&DiskMetrics], x: &Ctx, out: &mut Vec<Block>) {
    let cols = vec![
        lcol("Device", 9),
        lcol("sched", 11),
        col("nr_req", 6),
        col("hwq", 3),
        col("ra_kB", 6),
        col("max_kB", 6),
        col("rq_aff", 6),
        col("qdepth", 6),
        lcol("state", 9),
    ];
    let mut t = Table::new(cols, "queues", Order::Natural);
    let mut why: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut unused = Vec::new();
    for (i, m) in whole.iter().enumerate() {
        let s = &m.stack;
        if m.never_used {
            unused.push(m.disk_device.clone());
        }
        if let Some(r) = &s.queue_depth_unknown {
            why.entry(r.as_str())
                .or_default()
                .push(m.disk_device.clone());
        }
        let full = m
            .queue_fill_pct()
            .is_some_and(|(pct, _, _)| pct >= x.levels.t.disk_queue_full_pct);
        let depth_level = if full { Level::Warn } else { Level::Text };
        let state_level = match s.device_state.as_deref() {
            Some("running") | None => Level::Text,
            Some(_) => Level::Crit,
        };
        // When rows must be cut: a failed or full device first, then the ones doing I/O
        // ranked as the Disks table ranks them (stalled, then the deepest queue), then idle
        // hardware before idle loop, zram and RAM disks: a real disk must not be cut for
        // spare loop devices that come before it in kernel order.
        let busy = super::disk::load(m).max(0.0);
        let load = match (state_level, full, super::disk::active(m)) {
            (Level::Crit, _, _) => 3.0,
            (_, true, _) => 2.0,
            (_, _, true) => 1.0 + busy / (1.0 + busy),
            _ if in_memory_or_file(&m.disk_device) => 0.0,
            _ => 0.5,
        };
        t.rows.push(Row {
            name: label(m),
            load,
            natural: i as u64,
            cells: vec![
                cell(label(m), Level::Text),
                cell(
                    m.scheduler.clone().unwrap_or_else(|| "-".into()),
                    Level::Dim,
                ),
                cell(opt(s.nr_requests), depth_level),
                cell(opt(s.hw_queues), Level::Text),
                cell(opt(s.read_ahead_kb), Level::Text),
                cell(opt(s.max_sectors_kb), Level::Text),
                cell(opt(s.rq_affinity), Level::Text),
                cell(opt(s.queue_depth), depth_level),
                cell(
                    s.device_state.clone().unwrap_or_else(|| "-".into()),
                    state_level,
                ),
            ],
            quiet: false,
        });
    }
    out.push(Block::Table(t));
    for (r, devs) in why {
        out.push(Block::Note(format!("qdepth - ({}): {r}", which(&devs))));
    }
    // Their settings are held from the first read until the first I/O or the static refresh
    // (`disk::DiskCache`): say so, since a loop device attached meanwhile has other ones
    // (attaching sets `read_ahead_kb` and `rotational` and does no I/O).
    if !unused.is_empty() {
        out.push(Block::Note(format!(
            "{}: no I/O since boot; settings up to {} samples old",
            which(&unused),
            crate::sample::STATIC_REFRESH_SAMPLES
        )));
    }
}

/// Up to three device names, or how many.
fn which(devs: &[String]) -> String {
    match devs.len() {
        1..=3 => devs.join(" "),
        n => format!("{n} devices"),
    }
}

/// Every device with slaves, one row per path: its state, r/s, w/s and share of the map's I/O.
fn maps(d: &Derived, out: &mut Vec<Block>) {
    let with_slaves: Vec<&DiskMetrics> = d
        .disks
        .iter()
        .filter(|m| !m.partition && !m.stack.slaves.is_empty())
        .collect();
    if with_slaves.is_empty() {
        return;
    }
    let cols = vec![
        lcol("Map", 14),
        lcol("Path", 9),
        lcol("state", 9),
        col("r/s", 7),
        col("w/s", 7),
        col("share%", 6),
    ];
    let mut t = Table::new(cols, "paths", Order::Natural);
    let io = |m: &DiskMetrics| match (m.r_s, m.w_s) {
        (None, None) => None,
        (r, w) => Some(r.unwrap_or(0.0) + w.unwrap_or(0.0)),
    };
    let mut n = 0u64;
    for map in with_slaves {
        let paths: Vec<(&str, Option<&DiskMetrics>)> = map
            .stack
            .slaves
            .iter()
            .map(|s| {
                let m = d.disks.iter().find(|m| &m.disk_device == s);
                (s.as_str(), m)
            })
            .collect();
        let total: f64 = paths.iter().filter_map(|(_, m)| io((*m)?)).sum();
        let kind = if map.stack.multipath { "mpath" } else { "" };
        for (i, (name, m)) in paths.iter().enumerate() {
            let first = if i == 0 {
                format!("{} {kind}", label(map)).trim_end().to_string()
            } else {
                String::new()
            };
            let state = m.and_then(|m| m.stack.device_state.clone());
            let state_level = match state.as_deref() {
                Some("running") | None => Level::Text,
                Some(_) => Level::Crit,
            };
            let share = m
                .and_then(io)
                .filter(|_| total > 0.0)
                .map(|v| v / total * 100.0);
            t.rows.push(Row {
                name: format!("{} {name}", label(map)),
                load: 0.0,
                natural: n,
                cells: vec![
                    cell(first, Level::Text),
                    cell(name.to_string(), Level::Text),
                    cell(state.unwrap_or_else(|| "-".into()), state_level),
                    cell(num_fit(m.and_then(|m| m.r_s), 1, 7), Level::Text),
                    cell(num_fit(m.and_then(|m| m.w_s), 1, 7), Level::Text),
                    cell(num_fit(share, 0, 6), Level::Text),
                ],
                quiet: false,
            });
            n += 1;
        }
    }
    out.push(Block::Table(t));
}
