//! Disks pane: iostat -x columns per device, busiest first; %util is bracketed for devices that
//! serve requests in parallel (NVMe, dm, md), where aqu-sz and await tell the real story.

use super::{col, header_line, lcol, note, row_line, span, sparkline, View};
use crate::derive::DiskMetrics;
use crate::text::{disk_active, disk_order, disk_stall_note};
use crate::units::{num, num_fit};
use ratatui::text::{Line, Span};

fn label(m: &DiskMetrics) -> String {
    m.dm_name.clone().unwrap_or_else(|| m.disk_device.clone())
}

fn busiest<'a>(v: &View<'a>) -> Option<&'a DiskMetrics> {
    v.d.disks
        .iter()
        .filter(|m| !m.partition)
        .max_by(|a, b| a.aqu_sz.unwrap_or(0.0).total_cmp(&b.aqu_sz.unwrap_or(0.0)))
}

pub fn headline(v: &View) -> Vec<Span<'static>> {
    let t = v.theme;
    let whole: Vec<&DiskMetrics> = v.d.disks.iter().filter(|m| !m.partition).collect();
    if whole.is_empty() {
        return vec![span("no block devices in /proc/diskstats", t.dim)];
    }
    let active = whole.iter().filter(|m| disk_active(m)).count();
    let mut s = vec![span(format!("{active}/{} active", whole.len()), t.text)];
    let stalled: Vec<&&DiskMetrics> = whole.iter().filter(|m| m.stalled).collect();
    if let Some(m) = stalled.first() {
        let more = match stalled.len() {
            1 => String::new(),
            n => format!(" +{}", n - 1),
        };
        let inflight = m.inflight.map_or("-".into(), |n| n.to_string());
        s.push(span(
            format!("  STALLED {} {inflight} in flight{more}", label(m)),
            t.crit,
        ));
    } else if let Some(m) = busiest(v).filter(|m| m.aqu_sz.unwrap_or(0.0) > 0.0) {
        let wait = m.r_await.unwrap_or(0.0).max(m.w_await.unwrap_or(0.0));
        s.push(span(format!("  busiest {} aqu ", label(m)), t.text));
        s.push(span(num(m.aqu_sz, 2), t.level(m.aqu_sz, 1.0, 4.0)));
        s.push(span(" await ", t.text));
        s.push(span(
            format!("{wait:.1}ms"),
            t.level(Some(wait), 20.0, 100.0),
        ));
        if !m.parallel {
            s.push(span(
                format!(" util {}%", num(m.util, 0)),
                t.level(m.util, 60.0, 90.0),
            ));
        }
    }
    if v.width >= 120 {
        let a: Vec<Option<f64>> = v.app.trends.iter().map(|p| p.disk_aqu).collect();
        s.push(span(format!("  {}", sparkline(&a, 30, t)), t.info));
    }
    s
}

pub fn body(v: &View) -> Vec<Line<'static>> {
    let t = v.theme;
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
    let extra = v.detail || v.width >= 120;
    if extra {
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
            cols.push(col(n, w));
        }
    }
    let mut list: Vec<&DiskMetrics> =
        v.d.disks
            .iter()
            .filter(|m| (v.detail || !m.partition) && v.keep(&label(m)))
            .collect();
    let all = list.len();
    if v.app.hide_idle {
        list.retain(|m| disk_active(m));
    }
    if v.by_name() {
        list.sort_by_key(|m| label(m));
    } else {
        list.sort_by(|a, b| disk_order(a, b));
    }
    let mut lines = vec![header_line(&cols, v.width, t)];
    let devices =
        v.d.disks
            .iter()
            .filter(|m| v.detail || !m.partition)
            .count();
    lines.extend(v.filtered_out(all, devices));
    for m in &list {
        let util = num(m.util, 1);
        let name_style = if m.stalled {
            t.crit
        } else if m.partition {
            t.dim
        } else {
            t.text
        };
        let mut cells = vec![
            (label(m), name_style),
            (num_fit(m.r_s, 1, 6), t.text),
            (num_fit(m.w_s, 1, 6), t.text),
            (num_fit(m.d_s, 1, 6), t.text),
            (num_fit(m.rkb_s, 1, 7), t.text),
            (num_fit(m.wkb_s, 1, 7), t.text),
            (num_fit(m.r_await, 2, 7), t.level(m.r_await, 20.0, 100.0)),
            (num_fit(m.w_await, 2, 7), t.level(m.w_await, 20.0, 100.0)),
            (num_fit(m.aqu_sz, 2, 6), t.level(m.aqu_sz, 1.0, 4.0)),
            if m.parallel && m.util.is_some() {
                (format!("({util})"), t.dim)
            } else {
                (util, t.level(m.util, 60.0, 90.0))
            },
        ];
        if extra {
            for (x, d) in [
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
                cells.push((num_fit(x, d, 7), t.text));
            }
            cells.push((m.inflight.map_or("-".into(), |x| x.to_string()), t.text));
            cells.push((m.scheduler.clone().unwrap_or_else(|| "-".into()), t.dim));
        }
        lines.push(row_line(&cols, cells, v.width));
    }
    for m in list.iter().filter(|m| m.stalled) {
        lines.push(Line::from(span(
            format!("  {}", disk_stall_note(m, v.d.interval_s)),
            t.crit,
        )));
    }
    let hidden = all - list.len();
    let mut notes = Vec::new();
    if hidden > 0 {
        notes.push(format!("{hidden} idle hidden (h shows)"));
    }
    if list.iter().any(|m| m.parallel) {
        notes.push("(%util): parallel device, read aqu-sz/await".into());
    }
    if !notes.is_empty() {
        lines.push(note(format!("  {}", notes.join("; ")), t));
    }
    lines
}
