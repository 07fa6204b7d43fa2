//! CPU power pane: busy/steal, idle driver and states, frequency driver and governors; one row
//! per online CPU (and one per package for big hosts), the cpufreq policies when zoomed.

use super::model::{cell, col, lcol, Block, Cell, Cells, Level, PaneView, Row, Table};
use super::Ctx;
use crate::cpulist::CpuList;
use crate::derive::{CpuMetrics, Derived};
use crate::units::{compact, num, pct};

pub fn view(d: &Derived, x: &Ctx) -> PaneView {
    PaneView {
        headline: headline(d, x),
        body: body(d, x),
    }
}

fn headline(d: &Derived, x: &Ctx) -> Cells {
    let h = &d.host;
    let l = &x.levels;
    let mut s = vec![
        cell("busy ", Level::Dim),
        cell(format!("{}%", pct(h.busy_pct)), l.busy(h.busy_pct)),
    ];
    if h.steal_pct.is_some_and(|v| v >= 0.1) {
        s.push(cell(" steal ", Level::Dim));
        s.push(cell(format!("{}%", pct(h.steal_pct)), l.steal(h.steal_pct)));
    }
    let idle = match h.idle_driver.as_deref() {
        None | Some("none") => "no cpuidle".to_string(),
        Some(d) => d.to_string(),
    };
    s.push(cell(format!("  {idle}"), Level::Text));
    if h.cpu_detail_pending {
        s.push(cell("  freq - (reading)", Level::Dim));
    } else if d.policies.is_empty() {
        s.push(cell("  freq n/a (not exposed)", Level::Dim));
    } else {
        let govs: Vec<String> = h
            .governors
            .iter()
            .map(|(g, n)| format!("{}:{n}", short_governor(g)))
            .collect();
        s.push(cell(
            format!("  {} {}", h.freq_drivers.join(","), govs.join(" ")),
            Level::Text,
        ));
        let mhz: Vec<f64> = d.cpus.iter().filter_map(|c| c.mhz).collect();
        if !mhz.is_empty() {
            let avg = mhz.iter().sum::<f64>() / mhz.len() as f64;
            s.push(cell(format!(" {avg:.0}MHz"), Level::Text));
        }
    }
    // Context for low MHz: a hot package throttles whatever the governor asks for.
    if let Some(t) = temperature(d) {
        s.push(cell(format!("  {t}"), Level::Text));
    }
    s.extend(super::power::headline(d, x));
    let offline = d.cpus.iter().filter(|c| !c.online).count();
    if offline > 0 {
        s.push(cell(format!("  {offline} offline"), Level::Warn));
    }
    s
}

/// `pkg 87°C` (Intel package, AMD Tctl/Tdie) or `cpu 61°C`, from the hottest CPU sensor.
fn temperature(d: &Derived) -> Option<String> {
    let (label, c) = (d.host.temperature_sensor.as_deref()?, d.host.temperature_c?);
    let l = label.to_ascii_lowercase();
    let what = if ["package", "tctl", "tdie", "x86_pkg"]
        .iter()
        .any(|k| l.contains(k))
    {
        "pkg"
    } else {
        "cpu"
    };
    Some(format!("{what} {c:.0}°C"))
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

/// The idle/freq facts: driver and governor names spelled out, turbo, EPP.
fn facts(d: &Derived) -> Cells {
    let h = &d.host;
    let idle = match (&h.idle_driver, &h.idle_governor) {
        // The kernel reports driver "none" when no cpuidle driver is bound (many VMs).
        (Some(drv), _) if drv == "none" => "- (no cpuidle driver)".into(),
        (Some(drv), Some(gov)) => format!("{drv} / {gov}"),
        (Some(drv), None) => drv.clone(),
        _ => "- (cpuidle not exposed by this kernel/VM)".into(),
    };
    let freq = if h.cpu_detail_pending {
        "- (per-CPU detail: reading)".to_string()
    } else if d.policies.is_empty() {
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
    let mut s = vec![cell(format!("  idle: {idle}   freq: {freq}"), Level::Text)];
    if let Some(p) = d.policies.iter().find(|p| p.epp.is_some()) {
        s.push(cell(
            format!(
                "   EPP: {} (policy {})",
                p.epp.as_deref().unwrap_or("-"),
                p.policy
            ),
            Level::Text,
        ));
    }
    s
}

/// The idle-state columns shown: the deepest `max_states` (8 zoomed, else 4), and how many
/// shallower ones are left out.
fn shown_states(d: &Derived, x: &Ctx) -> (Vec<String>, usize) {
    let mut names = state_names(&d.cpus);
    // Deepest states matter most; keep the last ones when a driver exposes more.
    let max_states = if x.detail { 8 } else { 4 };
    let hidden_states = names.len().saturating_sub(max_states);
    names.drain(..hidden_states);
    (names, hidden_states)
}

/// A CPU row's cells after its name, under the `names` idle-state columns.
fn row_cells(c: &CpuMetrics, names: &[String], x: &Ctx) -> Vec<Cell> {
    let l = &x.levels;
    let mut v = vec![
        cell(pct(c.c0_pct), l.busy(c.c0_pct)),
        cell(pct(c.user_pct), Level::Text),
        cell(pct(c.system_pct), Level::Text),
        cell(pct(c.iowait_pct), l.iowait(c.iowait_pct)),
        cell(pct(c.steal_pct), l.steal(c.steal_pct)),
        match c.mhz {
            Some(m) if c.mhz_stale => cell(format!("{m:.0}?"), Level::Dim),
            m => cell(num(m, 0), Level::Text),
        },
        cell(compact(c.wakeups_per_s), Level::Text),
    ];
    for n in names {
        let s = c.states.iter().find(|s| &s.name == n);
        let mut text = pct(s.and_then(|s| s.residency_pct));
        if c.residency_scaled && s.is_some_and(|s| s.residency_pct.is_some()) {
            text.push('~');
        }
        if s.and_then(|s| s.disabled) == Some(true) {
            text = "off".into();
        }
        v.push(cell(text, Level::Text));
    }
    v.push(cell(pct(c.miss_pct), l.idle_miss(c.miss_pct)));
    v
}

/// Every cell of CPU `cpu`'s row (`Later::Cpu`): what `body` leaves out of the rows on a
/// screen, built for the rows drawn. Empty for a CPU the interval does not hold.
pub fn cells_of(d: &Derived, x: &Ctx, cpu: u64) -> Vec<Cell> {
    let Some(c) = d.cpus.iter().find(|c| c.online && u64::from(c.cpu) == cpu) else {
        return Vec::new();
    };
    let (names, _) = shown_states(d, x);
    let mut v = vec![cell(c.cpu.to_string(), Level::Text)];
    v.extend(row_cells(c, &names, x));
    v
}

fn body(d: &Derived, x: &Ctx) -> Vec<Block> {
    let (names, hidden_states) = shown_states(d, x);
    let mut cols = vec![
        lcol("CPU", 6),
        col("C0%", 5),
        col("usr", 5),
        col("sys", 5),
        col("iow", 5),
        col("stl", 5),
        col("MHz", 6),
        col("wake/s", 6),
    ];
    cols.extend(names.iter().map(|n| col(n.clone(), 6)));
    cols.push(col("miss%", 5));
    // On a screen the CPU rows' cells wait for the rows drawn (a screenful of 4096); the
    // package rows, a few, are built whole.
    let row_with = |name: String, natural: u64, c: &CpuMetrics, whole: bool| {
        let mut v = vec![cell(name.clone(), Level::Text)];
        if whole {
            v.extend(row_cells(c, &names, x));
        }
        Row {
            name,
            load: c.c0_pct.unwrap_or(-1.0),
            natural,
            cells: v,
            quiet: false,
        }
    };
    let row = |name: String, natural: u64, c: &CpuMetrics| row_with(name, natural, c, true);
    let online: Vec<&CpuMetrics> = d.cpus.iter().filter(|c| c.online).collect();
    let mut t = Table::new(cols, "CPUs", super::model::Order::Natural);
    if x.lazy_rows {
        t.later = Some(super::model::Later::Cpu);
    }
    t.rows = online
        .iter()
        .map(|c| row_with(c.cpu.to_string(), u64::from(c.cpu), c, !x.lazy_rows))
        // The filter knows a CPU as the headlines and findings name it (`cpu1`), and by its
        // number as the table shows it.
        .map(|mut r| {
            r.name = format!("cpu{}", r.natural);
            r
        })
        .collect();
    let mut pkgs: Vec<Option<u32>> = online.iter().map(|c| c.package).collect();
    pkgs.sort_unstable();
    pkgs.dedup();
    t.groups = pkgs
        .iter()
        .map(|p| {
            let members: Vec<&CpuMetrics> =
                online.iter().copied().filter(|c| c.package == *p).collect();
            let label = p.map_or("pkg?".to_string(), |p| format!("pkg{p}"));
            row(
                label,
                u64::from(p.unwrap_or(u32::MAX)),
                &aggregate(&members),
            )
        })
        .collect();
    t.empty = Some("- no CPUs read (proc/stat missing?)".into());
    // The spelled-out facts cost a row the unzoomed screen gives to a CPU; the headline has
    // the short form.
    let mut out = Vec::new();
    if x.detail {
        out.push(Block::Line(facts(d)));
    }
    out.push(Block::Table(t));
    let offline = d.cpus.len() - online.len();
    if offline > 0 {
        out.push(Block::Note(format!("{offline} CPU(s) offline")));
    }
    if d.host.cpu_detail_pending {
        // The first look at a big host: the detail comes with the next sample.
        out.push(Block::Note(
            "C-states, MHz, topology: - (reading every CPU's detail)".into(),
        ));
    } else if !d.cpus.is_empty() && d.cpus.iter().all(|c| c.states.is_empty()) {
        out.push(Block::Note(
            "idle states: not exposed by this kernel/VM".into(),
        ));
    }
    if hidden_states > 0 {
        out.push(Block::Note(format!(
            "{hidden_states} shallow idle state(s) not shown"
        )));
    }
    if d.cpus.iter().any(|c| c.residency_scaled) {
        out.push(Block::Note(
            "~ = residency fitted to /proc/stat idle".into(),
        ));
    }
    if d.cpus.iter().any(|c| c.mhz_stale) {
        out.push(Block::Note("? = MHz of an idle CPU (stale)".into()));
    }
    if let Some(n) = d.host.cpu_detail_every {
        // A big host: C-states and MHz are each CPU's own latest interval, not this one.
        out.push(Block::Note(format!(
            "C-states, MHz: each CPU read every {n} samples"
        )));
    }
    if x.detail && d.host.temperature_c.is_none() {
        // The headline shows a known temperature; zoomed, say why there is none.
        let why = d
            .host
            .temperature_unknown
            .as_deref()
            .unwrap_or("temperatures");
        out.push(Block::Note(format!(
            "temperature: - ({})",
            why.trim_start_matches("temperatures: ")
        )));
    }
    out.extend(super::power::notes(d, x));
    if x.detail {
        out.push(policies(d, x));
    }
    out
}

/// Zoomed: one row per cpufreq policy.
fn policies(d: &Derived, x: &Ctx) -> Block {
    let mut t = Table::new(
        vec![
            lcol("policy", 9),
            lcol("cpus", 9),
            lcol("driver", 14),
            lcol("governor", 12),
            lcol("EPP", 20),
            col("min", 5),
            col("max", 5),
            col("cur", 5),
            col("busy%", 5),
        ],
        "policies",
        super::model::Order::Natural,
    );
    t.empty = Some("cpufreq: not exposed by this kernel/VM (no policies)".into());
    let mhz = |k: Option<u64>| k.map_or("-".to_string(), |k| format!("{}", k / 1000));
    for (i, p) in d.policies.iter().enumerate() {
        let cur = format!("{}{}", mhz(p.cur_khz), if p.cur_stale { "?" } else { "" });
        t.rows.push(Row {
            name: p.policy.clone(),
            load: p.busy_pct.unwrap_or(-1.0),
            natural: i as u64,
            quiet: false,
            cells: vec![
                cell(p.policy.clone(), Level::Text),
                cell(CpuList::from_ids(p.cpus.clone()).to_string(), Level::Text),
                cell(p.driver.clone().unwrap_or_else(|| "-".into()), Level::Dim),
                cell(
                    p.governor.clone().unwrap_or_else(|| "-".into()),
                    Level::Text,
                ),
                cell(p.epp.clone().unwrap_or_else(|| "-".into()), Level::Text),
                cell(mhz(p.min_khz), Level::Dim),
                cell(mhz(p.max_khz), Level::Dim),
                cell(cur, Level::Text),
                cell(pct(p.busy_pct), x.levels.busy(p.busy_pct)),
            ],
        });
    }
    Block::Table(t)
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
