//! Processes pane: who is doing it. The headline names the three busiest processes (so an
//! 80x24 screen always says who); the table ranks the kept processes by activity, CPU, I/O,
//! major faults or RSS; zoomed, parent, threads, last CPU, RSS growth, cgroup and command line.

use super::model::{
    cell, col, lcol, xcol, xlcol, Block, Cells, Level, Order, PaneView, Row, Table,
};
use super::Ctx;
use crate::derive::{Derived, ProcessMetrics};
use crate::safe;
use crate::units::{compact, kb, num_fit, plain_fit};

/// What the table ranks by (`s` on the focused pane cycles it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ProcSort {
    /// CPU, I/O, faults and D state together (`derive::processes::activity`).
    #[default]
    Activity,
    Cpu,
    Io,
    Faults,
    Rss,
    /// Running, then blocked (D), zombie, sleeping, idle, stopped.
    State,
    /// Newest first.
    Start,
    /// By command line (or name), A to Z.
    Command,
}

impl ProcSort {
    pub fn next(self) -> ProcSort {
        match self {
            ProcSort::Activity => ProcSort::Cpu,
            ProcSort::Cpu => ProcSort::Io,
            ProcSort::Io => ProcSort::Faults,
            ProcSort::Faults => ProcSort::Rss,
            ProcSort::Rss => ProcSort::State,
            ProcSort::State => ProcSort::Start,
            ProcSort::Start => ProcSort::Command,
            ProcSort::Command => ProcSort::Activity,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ProcSort::Activity => "activity",
            ProcSort::Cpu => "CPU",
            ProcSort::Io => "I/O",
            ProcSort::Faults => "major faults",
            ProcSort::Rss => "RSS",
            ProcSort::State => "state",
            ProcSort::Start => "start time",
            ProcSort::Command => "command",
        }
    }

    fn key(self, m: &ProcessMetrics) -> f64 {
        match self {
            ProcSort::Activity => m.activity,
            ProcSort::Cpu => m.cpu_pct.unwrap_or(0.0),
            ProcSort::Io => io_kb(m).unwrap_or(0.0),
            ProcSort::Faults => m.major_faults_per_s.unwrap_or(0.0),
            ProcSort::Rss => m.rss_kb.unwrap_or(0) as f64,
            ProcSort::State => state_rank(m.state.chars().next().unwrap_or(' ')),
            // The kept rows carry no start time: a higher pid is (nearly always) newer.
            ProcSort::Start => f64::from(m.pid),
            // Set from the rows' order by command (`by_text`).
            ProcSort::Command => 0.0,
        }
    }
}

/// Where a state sorts: running first, then blocked, zombie, sleeping, idle, stopped.
pub fn state_rank(state: char) -> f64 {
    match state {
        'R' => 6.0,
        'D' => 5.0,
        'Z' => 4.0,
        'S' => 3.0,
        'I' => 2.0,
        'T' | 't' => 1.0,
        _ => 0.0,
    }
}

/// Loads that order rows A to Z by `texts` (case-insensitive): the first the highest.
pub fn by_text(texts: &[String]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..texts.len()).collect();
    idx.sort_by_cached_key(|&i| texts[i].to_lowercase());
    let mut loads = vec![0.0; texts.len()];
    for (rank, i) in idx.into_iter().enumerate() {
        loads[i] = (texts.len() - rank) as f64;
    }
    loads
}

pub fn view(d: &Derived, x: &Ctx) -> PaneView {
    PaneView {
        headline: headline(d),
        body: body(d, x),
    }
}

fn io_kb(m: &ProcessMetrics) -> Option<f64> {
    match (m.read_kb_per_s, m.write_kb_per_s) {
        (None, None) => None,
        (r, w) => Some(r.unwrap_or(0.0) + w.unwrap_or(0.0)),
    }
}

/// `comm` as `ps` shows it (`[kswapd0]` for a kernel thread), control characters escaped.
pub fn display_name(m: &ProcessMetrics) -> String {
    let comm = safe::line(&m.comm);
    if m.kernel_thread {
        format!("[{comm}]")
    } else {
        comm.into_owned()
    }
}

/// What a process is doing, in a few characters: `98%`, `w 12M/s`, `45 flt/s`.
pub fn doing(m: &ProcessMetrics) -> String {
    let cpu = m.cpu_pct.unwrap_or(0.0);
    let io = io_kb(m).unwrap_or(0.0);
    let flt = m.major_faults_per_s.unwrap_or(0.0);
    if io / 1024.0 > cpu {
        let (r, w) = (
            m.read_kb_per_s.unwrap_or(0.0),
            m.write_kb_per_s.unwrap_or(0.0),
        );
        let dir = if w >= r { "w" } else { "r" };
        format!("{dir} {}/s", kb(Some(r.max(w).round() as u64)))
    } else if flt / 10.0 > cpu {
        format!("{} flt/s", compact(Some(flt)))
    } else {
        format!("{:.0}%", cpu)
    }
}

fn headline(d: &Derived) -> Cells {
    let mut out = Vec::new();
    let Some(t) = d.host.tasks.as_ref().filter(|t| t.total > 0) else {
        out.push(cell("processes -", Level::Dim));
        return out;
    };
    out.push(cell(format!("{} tasks ", t.total), Level::Text));
    out.push(cell(format!("R {}", t.running), Level::Text));
    out.push(cell(
        format!(" D {}", t.blocked),
        if t.blocked > 0 {
            Level::Warn
        } else {
            Level::Text
        },
    ));
    let busy: Vec<&ProcessMetrics> = d
        .processes
        .iter()
        .filter(|m| m.activity >= 0.5)
        .take(3)
        .collect();
    if busy.is_empty() {
        out.push(cell("  nothing busy", Level::Dim));
    } else {
        out.push(cell("  top ", Level::Dim));
        for (i, m) in busy.iter().enumerate() {
            let sep = if i == 0 { "" } else { " · " };
            out.push(cell(
                format!("{sep}{} {}", display_name(m), doing(m)),
                Level::Text,
            ));
        }
    }
    out
}

fn body(d: &Derived, x: &Ctx) -> Vec<Block> {
    let mut out = Vec::new();
    let why = match &d.host.tasks {
        None => "processes: not in this recording",
        Some(t) if t.total == 0 => "processes: none listed in /proc",
        Some(_) => "",
    };
    let Some(t) = d.host.tasks.as_ref().filter(|_| why.is_empty()) else {
        out.push(Block::Alert(cell(why.to_string(), Level::Dim)));
        return out;
    };
    if let Some(all) = x.everyone {
        super::everyone::blocks(all, x, &mut out);
        return out;
    }
    out.push(Block::Table(table(d, x)));
    // The cgroups behind the processes: their CPU against quota, memory against limits.
    out.extend(super::cgroups::table(d, x));
    if x.detail {
        out.extend(super::cgroups::notes(d));
        out.push(Block::Line(vec![cell(
            format!(
                "  {} tasks: {} running, {} blocked (D), {} zombie, {} kernel threads; {} threads",
                t.total, t.running, t.blocked, t.zombies, t.kernel_threads, t.threads
            ),
            Level::Text,
        )]));
        out.push(Block::Note(format!(
            "sorted by {}; CPU% of one CPU; I/O is what reached the block layer",
            x.proc_sort.name()
        )));
    }
    if let Some(n) = t.every {
        // Samples faster than a second: the table is the last pass's, over its own interval.
        out.push(Block::Note(format!(
            "processes read every {n} samples (about once a second)"
        )));
    }
    if let Some(why) = &t.io_unknown {
        out.push(Block::Note(format!("I/O: {why}")));
    }
    out
}

fn table(d: &Derived, x: &Ctx) -> Table {
    let cols = vec![
        col("PID", 7),
        lcol("COMM", 15),
        lcol("S", 1),
        col("CPU%", 5),
        col("rkB/s", 7),
        col("wkB/s", 7),
        col("mflt/s", 6),
        col("RSS", 5),
        xcol("PPID", 7),
        xcol("THR", 4),
        xcol("CPU", 4),
        xcol("RSS+/s", 6),
        xlcol("CGROUP", 40),
        xlcol("COMMAND", 60),
    ];
    let mut t = Table::new(cols, "processes", Order::Load);
    t.empty = Some("- (none busy, none resident)".into());
    let by_command = (x.proc_sort == ProcSort::Command).then(|| {
        let texts: Vec<String> = d
            .processes
            .iter()
            .map(|m| m.cmdline.clone().unwrap_or_else(|| display_name(m)))
            .collect();
        by_text(&texts)
    });
    for (i, m) in d.processes.iter().enumerate() {
        let state_level = match m.state.as_str() {
            "D" => Level::Warn,
            "Z" => Level::Dim,
            _ => Level::Text,
        };
        let cells = vec![
            cell(m.pid.to_string(), Level::Dim),
            cell(display_name(m), Level::Text),
            cell(m.state.clone(), state_level),
            cell(num_fit(m.cpu_pct, 1, 5), Level::Text),
            cell(plain_fit(m.read_kb_per_s, 0, 7), Level::Text),
            cell(plain_fit(m.write_kb_per_s, 0, 7), Level::Text),
            cell(plain_fit(m.major_faults_per_s, 0, 6), Level::Text),
            cell(kb(m.rss_kb), Level::Text),
            cell(m.ppid.to_string(), Level::Dim),
            cell(m.threads.to_string(), Level::Dim),
            cell(m.last_cpu.map_or("-".into(), |c| c.to_string()), Level::Dim),
            cell(compact(m.rss_growth_kb_per_s), Level::Text),
            cell(
                m.cgroup
                    .as_deref()
                    .map_or("-".into(), |c| safe::line(c).into_owned()),
                Level::Dim,
            ),
            cell(
                m.cmdline
                    .as_deref()
                    .map_or("-".into(), |c| safe::line(c).into_owned()),
                Level::Dim,
            ),
        ];
        let load = by_command
            .as_ref()
            .and_then(|l| l.get(i).copied())
            .unwrap_or_else(|| x.proc_sort.key(m));
        t.rows.push(Row {
            // The filter matches the pid, the name, the cgroup (`/docker` keeps containers)
            // and the command line (`/-jar` keeps the JVMs).
            name: format!(
                "{} {} {} {}",
                m.pid,
                display_name(m),
                m.cgroup.as_deref().unwrap_or(""),
                m.cmdline.as_deref().unwrap_or("")
            ),
            load,
            natural: u64::from(m.pid),
            cells,
            // Idle processes (kept for their RSS) hide unless RSS is what is asked.
            quiet: load <= 0.0 && m.activity <= 0.0,
        });
    }
    t
}
