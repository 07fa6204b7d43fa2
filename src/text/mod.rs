//! Plain-text report of every pane (for `perftop batch`, pipes and tickets), from `Derived` only.
//!
//! Sized for 80 columns; big hosts get summaries, top-N rows and "+k hidden" instead of one row
//! per CPU, disk or queue. Unknown values print as `-`.

pub mod safe;

use crate::assess::Assessed;
use crate::derive::{CpuMetrics, Derived, DiskMetrics, IrqQueueMetrics, SoftirqCpuMetrics};
use crate::units::{compact, duration, fit, kb, num, num_fit, pct};
use crate::view::Pane;
use std::fmt::Write;

/// Rows per table before "+k hidden" (at width 80; wider reports show more).
const TOP_ROWS: usize = 8;

/// The text report of one assessed interval (`batch`, `dump --format text`), `width` columns
/// wide (clamped to 60 ..= 1000, as `--width` is).
pub fn report(d: &Assessed, n: u64, width: usize) -> String {
    let mut r = Report {
        out: String::new(),
        width: width.clamp(60, crate::cli::MAX_WIDTH),
    };
    header(&mut r, d, n);
    cpu(&mut r, d);
    numa(&mut r, d);
    hugepages(&mut r, d);
    dirty(&mut r, d);
    disks(&mut r, d);
    softirq(&mut r, d);
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

    /// Rows of right-aligned cells (first cell left-aligned) with the given widths.
    fn table(&mut self, widths: &[usize], rows: &[Vec<String>]) {
        self.table_left(widths, 1, rows)
    }

    /// Like `table`, with the first `left` columns left-aligned.
    fn table_left(&mut self, widths: &[usize], left: usize, rows: &[Vec<String>]) {
        for row in rows {
            let mut s = String::new();
            for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
                let cell = fit(cell, *w);
                if i == 0 {
                    let _ = write!(s, "{cell:<w$}");
                } else if i < left {
                    let _ = write!(s, " {cell:<w$}");
                } else {
                    let _ = write!(s, " {cell:>w$}");
                }
            }
            self.line(&s);
        }
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
}

/// Idle-state names in index order, union over CPUs.
pub fn state_names(cpus: &[CpuMetrics]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for c in cpus {
        for s in &c.states {
            if !names.contains(&s.name) {
                names.push(s.name.clone());
            }
        }
    }
    names
}

fn cpu(r: &mut Report, d: &Derived) {
    r.section(Pane::Cpu.section());
    let h = &d.host;
    let idle = match (&h.idle_driver, &h.idle_governor) {
        // The kernel reports driver "none" when no cpuidle driver is bound (many VMs).
        (Some(drv), _) if drv == "none" => "- (no cpuidle driver)".into(),
        (Some(drv), Some(gov)) => format!("{drv} / {gov}"),
        (Some(drv), None) => drv.clone(),
        _ => "- (cpuidle not exposed by this kernel/VM)".into(),
    };
    let freq = if d.policies.is_empty() {
        "- (cpufreq not exposed by this kernel/VM)".to_string()
    } else {
        let govs: Vec<String> = h
            .governors
            .iter()
            .map(|(g, n)| format!("{g} x{n}"))
            .collect();
        let mut s = format!("{} {}", h.freq_drivers.join(","), govs.join(", "));
        if let Some(st) = &h.pstate_status {
            s.push_str(&format!(" ({st})"));
        }
        if let Some(nt) = h.no_turbo {
            s.push_str(if nt { " turbo off" } else { " turbo on" });
        } else if let Some(b) = h.boost {
            s.push_str(if b { " boost on" } else { " boost off" });
        }
        s
    };
    r.line(&format!("idle: {idle}   freq: {freq}"));
    if let Some(p) = d.policies.iter().find(|p| p.epp.is_some()) {
        r.line(&format!(
            "EPP: {} (policy {})",
            p.epp.as_deref().unwrap_or("-"),
            p.policy
        ));
    }
    let mut names = state_names(&d.cpus);
    // Deepest states matter most; keep the last four when a driver exposes more.
    let hidden_states = names.len().saturating_sub(4);
    names.drain(..hidden_states);
    let mut widths = vec![5, 5, 5, 5, 5, 5, 6, 6];
    widths.extend(std::iter::repeat_n(6, names.len()));
    widths.push(5);
    let mut head: Vec<String> = ["CPU", "C0%", "usr", "sys", "iow", "stl", "MHz", "wake/s"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    head.extend(names.iter().map(|n| fit(n, 6)));
    head.push("miss%".into());
    let row = |label: String, c: &CpuMetrics| {
        let mut v = vec![
            label,
            pct(c.c0_pct),
            pct(c.user_pct),
            pct(c.system_pct),
            pct(c.iowait_pct),
            pct(c.steal_pct),
            match c.mhz {
                Some(m) if c.mhz_stale => format!("{m:.0}?"),
                m => num(m, 0),
            },
            compact(c.wakeups_per_s),
        ];
        for n in &names {
            let s = c.states.iter().find(|s| &s.name == n);
            let mut cell = pct(s.and_then(|s| s.residency_pct));
            if c.residency_scaled && s.is_some_and(|s| s.residency_pct.is_some()) {
                cell.push('~');
            }
            if s.and_then(|s| s.disabled) == Some(true) {
                cell = "off".into();
            }
            v.push(cell);
        }
        v.push(pct(c.miss_pct));
        v
    };
    let online: Vec<&CpuMetrics> = d.cpus.iter().filter(|c| c.online).collect();
    let mut rows = vec![head];
    let limit = r.rows_allowed() * 2;
    if online.len() <= limit {
        rows.extend(online.iter().map(|c| row(c.cpu.to_string(), c)));
        r.table(&widths, &rows);
    } else {
        // Big host: one line per package, then the busiest CPUs.
        let mut pkgs: Vec<Option<u32>> = online.iter().map(|c| c.package).collect();
        pkgs.sort_unstable();
        pkgs.dedup();
        for p in &pkgs {
            let members: Vec<&CpuMetrics> =
                online.iter().copied().filter(|c| c.package == *p).collect();
            let agg = aggregate(&members);
            let label = p.map_or("pkg ?".to_string(), |p| format!("pkg{p}"));
            rows.push(row(label, &agg));
            if rows.len() > r.rows_allowed() {
                break;
            }
        }
        let mut busiest = online.clone();
        busiest.sort_by(|a, b| {
            b.c0_pct
                .unwrap_or(-1.0)
                .total_cmp(&a.c0_pct.unwrap_or(-1.0))
        });
        rows.extend(
            busiest
                .iter()
                .take(r.rows_allowed())
                .map(|c| row(c.cpu.to_string(), c)),
        );
        r.table(&widths, &rows);
        r.line(&format!(
            "  busiest {} of {} online CPUs shown, +{} hidden",
            r.rows_allowed().min(online.len()),
            online.len(),
            online.len().saturating_sub(r.rows_allowed())
        ));
    }
    let offline = d.cpus.len() - online.len();
    let mut notes = Vec::new();
    if offline > 0 {
        notes.push(format!("{offline} CPU(s) offline"));
    }
    if hidden_states > 0 {
        notes.push(format!("{hidden_states} shallow idle state(s) not shown"));
    }
    if d.cpus.iter().any(|c| c.residency_scaled) {
        notes.push("~ = residency fitted to /proc/stat idle".into());
    }
    if d.cpus.iter().any(|c| c.mhz_stale) {
        notes.push("? = MHz of an idle CPU (stale)".into());
    }
    if !notes.is_empty() {
        r.line(&format!("  {}", notes.join("; ")));
    }
}

/// Mean of a group of CPUs' percentages, sum of their wakeups (for package lines).
pub fn aggregate(members: &[&CpuMetrics]) -> CpuMetrics {
    let mean = |f: fn(&CpuMetrics) -> Option<f64>| {
        let v: Vec<f64> = members.iter().filter_map(|c| f(c)).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let mut states = members
        .first()
        .map(|c| c.states.clone())
        .unwrap_or_default();
    for s in &mut states {
        let name = s.name.clone();
        let v: Vec<f64> = members
            .iter()
            .filter_map(|c| c.states.iter().find(|x| x.name == name)?.residency_pct)
            .collect();
        s.residency_pct = (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        s.disabled = None;
    }
    CpuMetrics {
        c0_pct: mean(|c| c.c0_pct),
        user_pct: mean(|c| c.user_pct),
        system_pct: mean(|c| c.system_pct),
        iowait_pct: mean(|c| c.iowait_pct),
        steal_pct: mean(|c| c.steal_pct),
        mhz: mean(|c| c.mhz),
        wakeups_per_s: members.iter().map(|c| c.wakeups_per_s).sum::<Option<f64>>(),
        miss_pct: mean(|c| c.miss_pct),
        residency_scaled: members.iter().any(|c| c.residency_scaled),
        states,
        online: true,
        ..CpuMetrics::default()
    }
}

/// `avail 22G of 24G`: the machine's memory from `/proc/meminfo`, which the NUMA pane heads with.
pub fn machine_memory(d: &Derived) -> String {
    format!(
        "avail {} of {}",
        kb(d.memory.mem_available_kb),
        kb(d.memory.mem_total_kb)
    )
}

/// `nodes hold 12G of 126G` when the nodes' meminfo covers under 95% of MemTotal (hot-plugged
/// memory in a VM, firmware that describes one node only): node sums are then not the machine.
pub fn nodes_partial(d: &Derived) -> Option<String> {
    let m = &d.memory;
    let cover = m.nodes_cover_pct?;
    (cover < crate::derive::memory::NODES_COVER_MIN_PCT).then(|| {
        format!(
            "nodes hold {} of {}",
            kb(m.nodes_total_kb),
            kb(m.mem_total_kb)
        )
    })
}

fn numa(r: &mut Report, d: &Derived) {
    r.section(Pane::Numa.section());
    let mut head = format!("machine {}", machine_memory(d));
    if let Some(p) = nodes_partial(d) {
        head.push_str(&format!("; {p}: rows are part of it"));
    }
    r.line(&head);
    if d.nodes.is_empty() {
        r.line("- (no sys/devices/system/node: NUMA not exposed)");
        return;
    }
    let widths = [4, 7, 5, 5, 5, 5, 5, 5, 5, 6, 6, 5];
    let mut rows = vec![[
        "node", "cpus", "total", "free", "file", "anon", "dirty", "wback", "slab", "hit/s",
        "miss/s", "miss%",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect::<Vec<_>>()];
    let mut order: Vec<&crate::derive::NodeMetrics> = d.nodes.iter().collect();
    let limit = r.rows_allowed();
    if order.len() > limit {
        order.sort_by(|a, b| {
            b.miss_ratio
                .unwrap_or(0.0)
                .total_cmp(&a.miss_ratio.unwrap_or(0.0))
        });
    }
    for n in order.iter().take(limit) {
        let cpus = if n.cpus.is_empty() {
            "(none)".to_string()
        } else {
            crate::cpulist::CpuList::from_ids(n.cpus.clone()).to_string()
        };
        rows.push(vec![
            n.node.to_string(),
            cpus,
            kb(n.mem_total_kb),
            kb(n.mem_free_kb),
            kb(n.file_kb),
            kb(n.anon_kb),
            kb(n.dirty_kb),
            kb(n.writeback_kb),
            kb(n.slab_kb),
            compact(n.numa_hit_per_s),
            compact(n.numa_miss_per_s),
            pct(n.miss_ratio.map(|x| x * 100.0)),
        ]);
    }
    r.table(&widths, &rows);
    if d.nodes.len() > limit {
        r.line(&format!(
            "  highest miss ratio shown, +{} nodes hidden",
            d.nodes.len() - limit
        ));
    }
    r.line("  hit/miss in pages/s (numastat units)");
}

fn hugepages(r: &mut Report, d: &Derived) {
    r.section(Pane::Huge.section());
    let h = &d.hugepages;
    if h.sizes.is_empty() {
        r.line("static huge pages: - (not exposed)");
    }
    for s in &h.sizes {
        r.line(&format!(
            "{:>7}: total {} free {} rsvd {} surp {}  pool {}  unused {}",
            kb(Some(s.size_kb)),
            opt(s.total),
            opt(s.free),
            opt(s.rsvd),
            opt(s.surp),
            kb(s.pool_kb),
            kb(s.unused_kb)
        ));
    }
    r.line(&format!(
        "AnonHuge {}  ShmemHuge {}  FileHuge {}  PageTables {} ({}% of RAM)",
        kb(h.anon_huge_kb),
        kb(h.shmem_huge_kb),
        kb(h.file_huge_kb),
        kb(h.page_tables_kb),
        num(h.page_tables_pct, 2)
    ));
    r.line(&format!(
        "THP enabled {}  defrag {}  | faults {}/s  fallback {}/s ({}%)",
        h.thp_enabled.as_deref().unwrap_or("-"),
        h.thp_defrag.as_deref().unwrap_or("-"),
        compact(h.thp_fault_alloc_per_s),
        compact(h.thp_fault_fallback_per_s),
        pct(h.thp_fallback_ratio.map(|x| x * 100.0)),
    ));
    r.line(&format!(
        "    collapse {}/s  collapse failed {}/s  compact stall {}/s  compact fail {}/s",
        compact(h.thp_collapse_alloc_per_s),
        compact(h.thp_collapse_alloc_failed_per_s),
        compact(h.compact_stall_per_s),
        compact(h.compact_fail_per_s)
    ));
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

/// Geometry of the dirty gauge, shared by the text report and the TUI: cells of dirty and of
/// writeback (stacked) on a scale to a bit past the hard limit, and the marker line with `b`
/// (background), `f` (freerun: throttling starts) and `T` (threshold).
pub struct DirtyGauge {
    pub dirty_cells: usize,
    pub writeback_cells: usize,
    pub empty_cells: usize,
    pub marks: String,
}

/// Said when page counts are scaled by an assumed page size (a `--root` whose counters give
/// no answer): the thresholds and rates are then only as good as the guess.
pub fn page_note(d: &Derived) -> Option<String> {
    (d.memory.page_kb_from == crate::pagesize::PageKbFrom::Default).then(|| {
        format!(
            "~ page size not known: {} kB assumed for thresholds and rates",
            d.memory.page_kb
        )
    })
}

pub fn dirty_gauge(d: &crate::derive::DirtyMetrics, width: usize) -> Option<DirtyGauge> {
    let t = d.threshold_kb? as f64;
    let dirty = d.dirty_kb? as f64;
    let wb = d.writeback_kb.unwrap_or(0) as f64;
    let scale = (t * 1.1).max(dirty + wb).max(1.0);
    let cell = |v: f64| ((v / scale) * width as f64).round() as usize;
    let nd = cell(dirty).min(width);
    let nw = cell(dirty + wb).min(width).saturating_sub(nd);
    let mut marks = vec![' '; width];
    for (v, ch) in [
        (d.background_threshold_kb, 'b'),
        (d.freerun_kb, 'f'),
        (d.threshold_kb, 'T'),
    ] {
        if let Some(v) = v {
            marks[cell(v as f64).min(width.saturating_sub(1))] = ch;
        }
    }
    Some(DirtyGauge {
        dirty_cells: nd,
        writeback_cells: nw,
        empty_cells: width - nd - nw,
        marks: marks.into_iter().collect(),
    })
}

/// The gauge in ASCII: `#` dirty, `=` writeback, `.` room, and the marker line.
pub fn dirty_bar(d: &crate::derive::DirtyMetrics, width: usize) -> Option<(String, String)> {
    let g = dirty_gauge(d, width)?;
    let bar = format!(
        "{}{}{}",
        "#".repeat(g.dirty_cells),
        "=".repeat(g.writeback_cells),
        ".".repeat(g.empty_cells)
    );
    Some((bar, g.marks))
}

fn dirty(r: &mut Report, d: &Derived) {
    r.section(Pane::Dirty.section());
    let x = &d.dirty;
    let state = match x.state.as_deref() {
        Some("below_background") => "below background",
        Some("background") => "background writeback",
        Some("throttled") => "WRITERS THROTTLED",
        _ => "- (thresholds not in /proc/vmstat)",
    };
    match dirty_bar(x, 50) {
        Some((bar, marks)) => {
            r.line(&format!("[{bar}] {state}"));
            r.line(&format!(" {marks}  b=bg f=freerun T=limit"));
        }
        None => r.line(&format!("state: {state}")),
    }
    r.line(&format!(
        "dirty {}  writeback {}  | bg {}  freerun {}  limit {}",
        kb(x.dirty_kb),
        kb(x.writeback_kb),
        kb(x.background_threshold_kb),
        kb(x.freerun_kb),
        kb(x.threshold_kb)
    ));
    if let Some(n) = page_note(d) {
        r.line(&n);
    }
    let lim = |bytes: Option<u64>, ratio: Option<u64>, from: &Option<String>| match from.as_deref()
    {
        Some("bytes") => format!("{} bytes", opt(bytes)),
        _ => format!("{}%", opt(ratio)),
    };
    r.line(&format!(
        "vm.dirty limit {}  background {}  expire {} s  flush every {} s",
        lim(x.dirty_bytes, x.dirty_ratio, &x.limit_from),
        lim(
            x.dirty_background_bytes,
            x.dirty_background_ratio,
            &x.background_limit_from
        ),
        num(x.dirty_expire_centisecs.map(|c| c as f64 / 100.0), 1),
        num(x.dirty_writeback_centisecs.map(|c| c as f64 / 100.0), 1)
    ));
    r.line(&format!(
        "dirtied {}B/s  written {}B/s",
        kb(x.dirtied_kb_per_s.map(|v| v as u64)),
        kb(x.written_kb_per_s.map(|v| v as u64))
    ));
}

/// A device that completed I/O in the interval or holds requests in flight (a stalled
/// device completes nothing and is the one to see).
pub fn disk_active(m: &DiskMetrics) -> bool {
    m.stalled
        || m.inflight.is_some_and(|n| n > 0)
        || [m.r_s, m.w_s, m.d_s, m.f_s]
            .iter()
            .any(|v| v.is_some_and(|x| x > 0.0))
}

/// Stalled devices first, then the deepest queue.
pub fn disk_order(a: &DiskMetrics, b: &DiskMetrics) -> std::cmp::Ordering {
    b.stalled
        .cmp(&a.stalled)
        .then(b.aqu_sz.unwrap_or(0.0).total_cmp(&a.aqu_sz.unwrap_or(0.0)))
}

/// `vda: 36 in flight, none completed in 2.0s (stalled)`.
pub fn disk_stall_note(m: &DiskMetrics, interval_s: Option<f64>) -> String {
    let name = m.dm_name.as_ref().unwrap_or(&m.disk_device);
    let inflight = m.inflight.map_or("-".to_string(), |n| n.to_string());
    let secs = interval_s.map_or("the interval".to_string(), |s| format!("{s:.1}s"));
    format!("{name}: {inflight} in flight, none completed in {secs} (stalled)")
}

fn disks(r: &mut Report, d: &Derived) {
    r.section(Pane::Disks.section());
    let whole: Vec<&DiskMetrics> = d.disks.iter().filter(|m| !m.partition).collect();
    if whole.is_empty() {
        r.line("- (no /proc/diskstats devices)");
        return;
    }
    let mut active: Vec<&DiskMetrics> = whole.iter().copied().filter(|m| disk_active(m)).collect();
    // Stalled, then busiest first when there are too many to list.
    active.sort_by(|a, b| disk_order(a, b));
    let widths = [8, 6, 6, 7, 7, 7, 7, 6, 5, 5, 5];
    let mut rows = vec![[
        "Device", "r/s", "w/s", "rkB/s", "wkB/s", "r_await", "w_await", "aqu-sz", "rareq", "wareq",
        "%util",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect::<Vec<_>>()];
    let limit = r.rows_allowed();
    for m in active.iter().take(limit) {
        let name = m
            .dm_name
            .as_ref()
            .map_or(m.disk_device.clone(), |n| n.clone());
        let util = num(m.util, 1);
        rows.push(vec![
            name,
            num_fit(m.r_s, 1, 6),
            num_fit(m.w_s, 1, 6),
            num_fit(m.rkb_s, 1, 7),
            num_fit(m.wkb_s, 1, 7),
            num_fit(m.r_await, 2, 7),
            num_fit(m.w_await, 2, 7),
            num_fit(m.aqu_sz, 2, 6),
            num_fit(m.rareq_sz, 1, 5),
            num_fit(m.wareq_sz, 1, 5),
            if m.parallel && m.util.is_some() {
                format!("({util})")
            } else {
                util
            },
        ]);
    }
    r.table(&widths, &rows);
    let idle = whole.len() - active.len();
    let shown = active.len().min(limit);
    for m in active.iter().filter(|m| m.stalled) {
        r.line(&format!("  {}", disk_stall_note(m, d.interval_s)));
    }
    let mut notes = Vec::new();
    if active.len() > shown {
        notes.push(format!("+{} busy hidden", active.len() - shown));
    }
    if idle > 0 {
        notes.push(format!("{idle} idle device(s) hidden"));
    }
    if active.iter().any(|m| m.parallel) {
        notes.push("(%util) = parallel device: read aqu-sz/await".into());
    }
    if !notes.is_empty() {
        r.line(&format!("  {}", notes.join("; ")));
    }
}

fn rate(c: &SoftirqCpuMetrics, name: &str) -> Option<f64> {
    c.rates.get(name).copied().flatten()
}

fn softirq(r: &mut Report, d: &Derived) {
    r.section(Pane::Softirq.section());
    let widths = [4, 5, 5, 8, 8, 8, 7, 6, 6, 5, 6];
    let mut rows = vec![[
        "CPU", "%soft", "%irq", "NET_RX/s", "NET_TX/s", "TIMER/s", "pkts/s", "drop/s", "sqz/s",
        "bklg", "ksirq%",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect::<Vec<_>>()];
    let mut cpus: Vec<&SoftirqCpuMetrics> = d.softirq_cpus.iter().filter(|c| c.online).collect();
    let limit = r.rows_allowed();
    if cpus.len() > limit {
        cpus.sort_by(|a, b| {
            let k = |c: &SoftirqCpuMetrics| {
                c.soft_pct.unwrap_or(0.0) + rate(c, "NET_RX").unwrap_or(0.0) / 1e6
            };
            k(b).total_cmp(&k(a))
        });
    }
    for c in cpus.iter().take(limit) {
        rows.push(vec![
            c.cpu.to_string(),
            pct(c.soft_pct),
            pct(c.irq_pct),
            compact(rate(c, "NET_RX")),
            compact(rate(c, "NET_TX")),
            compact(rate(c, "TIMER")),
            compact(c.softnet_processed_per_s),
            compact(c.softnet_dropped_per_s),
            compact(c.softnet_squeezed_per_s),
            opt(c.backlog),
            pct(c.ksoftirqd_pct),
        ]);
    }
    r.table(&widths, &rows);
    if cpus.len() > limit {
        r.line(&format!(
            "  busiest {limit} CPUs shown, +{} hidden",
            cpus.len() - limit
        ));
    }
    irq_queues(r, &d.irq_queues);
    nics(r, d);
}

fn irq_queues(r: &mut Report, queues: &[IrqQueueMetrics]) {
    if queues.is_empty() {
        r.line("queues: - (no per-queue IRQs recognised in /proc/interrupts)");
        return;
    }
    let mut q: Vec<&IrqQueueMetrics> = queues.iter().collect();
    q.sort_by(|a, b| b.per_s.unwrap_or(-1.0).total_cmp(&a.per_s.unwrap_or(-1.0)));
    let widths = [24, 5, 7, 10, 12, 12];
    let mut rows = vec![
        ["queue", "IRQ", "irq/s", "on CPUs", "affinity", "effective"]
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>(),
    ];
    let limit = r.rows_allowed();
    for x in q.iter().take(limit) {
        rows.push(vec![
            x.name.clone(),
            x.irq.to_string(),
            compact(x.per_s),
            crate::cpulist::CpuList::from_ids(x.cpus.clone()).to_string(),
            x.affinity.clone().unwrap_or_else(|| "-".into()),
            x.effective_affinity.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    r.table(&widths, &rows);
    if q.len() > limit {
        r.line(&format!(
            "  busiest {limit} queues shown, +{} hidden",
            q.len() - limit
        ));
    }
}

fn nics(r: &mut Report, d: &Derived) {
    let list: Vec<&crate::derive::NicMetrics> = d.nics.iter().filter(|n| n.name != "lo").collect();
    if list.is_empty() {
        return;
    }
    let widths = [10, 8, 8, 8, 8, 7, 7, 4, 8];
    let mut rows = vec![[
        "NIC", "rx pkt/s", "tx pkt/s", "rx kB/s", "tx kB/s", "rxdrop", "txdrop", "node", "queues",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect::<Vec<_>>()];
    for n in list.iter().take(r.rows_allowed()) {
        let rps = n
            .rps_cpus
            .iter()
            .filter(|m| m.as_deref().is_some_and(|m| !m.is_empty()))
            .count();
        rows.push(vec![
            n.name.clone(),
            compact(n.rx_packets_per_s),
            compact(n.tx_packets_per_s),
            compact(n.rx_kb_per_s),
            compact(n.tx_kb_per_s),
            compact(n.rx_drop_per_s),
            compact(n.tx_drop_per_s),
            n.numa_node.map_or("-".into(), |v| v.to_string()),
            format!(
                "{}/{}{}",
                n.rx_queues,
                n.tx_queues,
                if rps > 0 { " rps" } else { "" }
            ),
        ]);
    }
    r.table(&widths, &rows);
}

fn findings(r: &mut Report, d: &Assessed) {
    r.section("Findings");
    if d.findings.is_empty() {
        r.line("none");
    }
    for f in &d.findings {
        r.line(&format!(
            "{} {}",
            f.severity.as_str().to_uppercase(),
            f.message
        ));
    }
    for p in &d.host.problems {
        r.line(&format!("could not read {p}"));
    }
}
