//! CPU power pane: busy/steal, idle driver and states, frequency driver/governors; per-CPU table
//! on small hosts, per-package lines plus a heat strip per node and the busiest CPUs on big ones.

use super::{col, header_line, lcol, note, row_line, span, sparkline, Col, View};
use crate::derive::CpuMetrics;
use crate::text::{aggregate, state_names};
use crate::units::{compact, num, pct};
use ratatui::text::{Line, Span};

pub fn headline(v: &View) -> Vec<Span<'static>> {
    let h = &v.d.host;
    let t = v.theme;
    let mut s = vec![
        span("busy ", t.dim),
        span(
            format!("{}%", pct(h.busy_pct)),
            t.level(h.busy_pct, 70.0, 90.0),
        ),
    ];
    if h.steal_pct.is_some_and(|x| x >= 0.1) {
        s.push(span(" steal ", t.dim));
        s.push(span(
            format!("{}%", pct(h.steal_pct)),
            t.level(h.steal_pct, 5.0, 20.0),
        ));
    }
    let idle = match h.idle_driver.as_deref() {
        None | Some("none") => "no cpuidle".to_string(),
        Some(d) => d.to_string(),
    };
    s.push(span(format!("  {idle}"), t.text));
    if v.d.policies.is_empty() {
        s.push(span("  freq n/a (not exposed)", t.dim));
    } else {
        let govs: Vec<String> = h
            .governors
            .iter()
            .map(|(g, n)| format!("{}:{n}", short_governor(g)))
            .collect();
        s.push(span(
            format!("  {} {}", h.freq_drivers.join(","), govs.join(" ")),
            t.text,
        ));
        let mhz: Vec<f64> = v.d.cpus.iter().filter_map(|c| c.mhz).collect();
        if !mhz.is_empty() {
            let avg = mhz.iter().sum::<f64>() / mhz.len() as f64;
            s.push(span(format!(" {avg:.0}MHz"), t.text));
        }
    }
    let offline = v.d.cpus.iter().filter(|c| !c.online).count();
    if offline > 0 {
        s.push(span(format!("  {offline} offline"), t.warn));
    }
    if v.width >= 120 {
        let busy: Vec<Option<f64>> = v.app.trends.iter().map(|p| p.busy_pct).collect();
        s.push(span(format!("  {}", sparkline(&busy, 30, t)), t.info));
    }
    s
}

pub fn body(v: &View) -> Vec<Line<'static>> {
    let t = v.theme;
    let mut names = state_names(&v.d.cpus);
    let max_states = if v.detail || v.width >= 120 { 8 } else { 4 };
    let hidden_states = names.len().saturating_sub(max_states);
    names.drain(..hidden_states);
    let mut cols: Vec<Col> = vec![
        lcol("CPU", 6),
        col("C0%", 5),
        col("usr", 5),
        col("sys", 5),
        col("iow", 5),
        col("stl", 5),
        col("MHz", 6),
        col("wake/s", 6),
    ];
    for n in &names {
        cols.push(col(n.clone(), 6));
    }
    cols.push(col("miss%", 5));
    let online: Vec<&CpuMetrics> =
        v.d.cpus
            .iter()
            .filter(|c| c.online && v.keep(&c.cpu.to_string()))
            .collect();
    let row = |label: String, c: &CpuMetrics| {
        let mut cells = vec![
            (label, t.text),
            (pct(c.c0_pct), t.level(c.c0_pct, 70.0, 90.0)),
            (pct(c.user_pct), t.text),
            (pct(c.system_pct), t.text),
            (pct(c.iowait_pct), t.level(c.iowait_pct, 20.0, 50.0)),
            (pct(c.steal_pct), t.level(c.steal_pct, 5.0, 20.0)),
            match c.mhz {
                Some(m) if c.mhz_stale => (format!("{m:.0}?"), t.dim),
                m => (num(m, 0), t.text),
            },
            (compact(c.wakeups_per_s), t.text),
        ];
        for n in &names {
            let s = c.states.iter().find(|s| &s.name == n);
            let mut text = pct(s.and_then(|s| s.residency_pct));
            if c.residency_scaled && s.is_some_and(|s| s.residency_pct.is_some()) {
                text.push('~');
            }
            if s.and_then(|s| s.disabled) == Some(true) {
                text = "off".into();
            }
            cells.push((text, t.text));
        }
        cells.push((pct(c.miss_pct), t.level(c.miss_pct, 30.0, 60.0)));
        cells
    };
    let mut lines = vec![header_line(&cols, v.width, t)];
    let all_online = v.d.cpus.iter().filter(|c| c.online).count();
    lines.extend(v.filtered_out(online.len(), all_online));
    let small = online.len() <= 16 || v.detail;
    if small {
        let mut list = online.clone();
        if !v.by_name() && online.len() > 16 {
            list.sort_by(|a, b| {
                b.c0_pct
                    .unwrap_or(-1.0)
                    .total_cmp(&a.c0_pct.unwrap_or(-1.0))
            });
        }
        for c in list {
            lines.push(row_line(&cols, row(c.cpu.to_string(), c), v.width));
        }
    } else {
        // Heat strip per node: one glyph per CPU, C0% as the level.
        let mut nodes: Vec<Option<u32>> = online.iter().map(|c| c.node).collect();
        nodes.sort_unstable();
        nodes.dedup();
        for n in nodes {
            let cpus: Vec<&&CpuMetrics> = online.iter().filter(|c| c.node == n).collect();
            let room = v.width.saturating_sub(8);
            let strip: String = cpus
                .iter()
                .take(room)
                .map(|c| t.glyphs.level(c.c0_pct.unwrap_or(0.0) / 100.0))
                .collect();
            let more = cpus.len().saturating_sub(room);
            let label = n.map_or("n?".to_string(), |n| format!("n{n}"));
            let mut l = vec![span(format!("{label:<5} "), t.dim), span(strip, t.info)];
            if more > 0 {
                l.push(span(format!(" +{more}"), t.dim));
            }
            lines.push(Line::from(l));
        }
        let mut pkgs: Vec<Option<u32>> = online.iter().map(|c| c.package).collect();
        pkgs.sort_unstable();
        pkgs.dedup();
        for p in pkgs {
            let members: Vec<&CpuMetrics> =
                online.iter().copied().filter(|c| c.package == p).collect();
            let label = p.map_or("pkg?".to_string(), |p| format!("pkg{p}"));
            lines.push(row_line(&cols, row(label, &aggregate(&members)), v.width));
        }
        let mut busiest = online.clone();
        busiest.sort_by(|a, b| {
            b.c0_pct
                .unwrap_or(-1.0)
                .total_cmp(&a.c0_pct.unwrap_or(-1.0))
        });
        for c in busiest.iter().take(8) {
            lines.push(row_line(&cols, row(c.cpu.to_string(), c), v.width));
        }
        lines.push(note(
            format!("  busiest 8 of {} CPUs; Enter shows all", online.len()),
            t,
        ));
    }
    if v.d.cpus.is_empty() {
        lines.push(note("  - no CPUs read (proc/stat missing?)", t));
    } else if v.d.cpus.iter().all(|c| c.states.is_empty()) {
        lines.push(note("  idle states: not exposed by this kernel/VM", t));
    }
    if hidden_states > 0 {
        lines.push(note(
            format!("  {hidden_states} shallow idle state(s) not shown"),
            t,
        ));
    }
    if v.detail {
        policies(v, &mut lines);
    }
    lines
}

/// Governor names shortened for the headline (the zoomed view spells them out).
fn short_governor(g: &str) -> &str {
    match g {
        "performance" => "perf",
        "powersave" => "psave",
        "schedutil" => "sched",
        "conservative" => "conserv",
        "userspace" => "user",
        other => other,
    }
}

/// Zoomed view: one row per cpufreq policy.
fn policies(v: &View, lines: &mut Vec<Line<'static>>) {
    let t = v.theme;
    if v.d.policies.is_empty() {
        lines.push(note(
            "  cpufreq: not exposed by this kernel/VM (no policies)",
            t,
        ));
        return;
    }
    let cols = vec![
        lcol("policy", 9),
        lcol("cpus", 9),
        lcol("driver", 14),
        lcol("governor", 12),
        lcol("EPP", 20),
        col("min", 5),
        col("max", 5),
        col("cur", 5),
        col("busy%", 5),
    ];
    lines.push(header_line(&cols, v.width, t));
    let mhz = |k: Option<u64>| k.map_or("-".to_string(), |k| format!("{}", k / 1000));
    for p in &v.d.policies {
        let cur = format!("{}{}", mhz(p.cur_khz), if p.cur_stale { "?" } else { "" });
        lines.push(row_line(
            &cols,
            vec![
                (p.policy.clone(), t.text),
                (
                    crate::cpulist::CpuList::from_ids(p.cpus.clone()).to_string(),
                    t.text,
                ),
                (p.driver.clone().unwrap_or_else(|| "-".into()), t.dim),
                (p.governor.clone().unwrap_or_else(|| "-".into()), t.text),
                (p.epp.clone().unwrap_or_else(|| "-".into()), t.text),
                (mhz(p.min_khz), t.dim),
                (mhz(p.max_khz), t.dim),
                (cur, t.text),
                (pct(p.busy_pct), t.level(p.busy_pct, 70.0, 90.0)),
            ],
            v.width,
        ));
    }
}
