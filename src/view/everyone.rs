//! The Processes pane's full list: every process (with `H`, every thread under its process),
//! as the dashboard's sampler listed it while something shows it
//! (`source::processes::everyone`). Columns in the order they are dropped from the right when
//! the screen is narrow: who and how busy first, then memory, waits, placement, command line.

use super::model::{
    cell, col, lcol, opt_cell, Block, Cell, Column, Later, Level, Order, Row, Table,
};
use super::processes::{by_text, state_rank, ProcSort};
use super::Ctx;
use crate::safe;
use crate::source::processes::everyone::{Entry, Everyone};
use crate::units::{fit, kb, num_fit, plain_fit};
use foldhash::HashMap;

/// Blocked tasks whose wait channel and stack are said above the table at most.
const STUCK_LINES: usize = 5;

/// The columns, by priority (a narrow screen keeps the leading ones). Units: in the header
/// and plain numbers under it (`rkB/s`, `RDELAY` in ms/s), or a suffix on every value (`RSS`,
/// `SWAP`), never both.
pub fn columns() -> Vec<Column> {
    vec![
        col("PID", 7),
        lcol("COMM", 15),
        lcol("S", 1),
        col("CPU%", 5),
        col("RSS", 5),
        col("rkB/s", 7),
        col("wkB/s", 7),
        col("mflt/s", 6),
        col("RDELAY", 6),
        lcol("USER", 8),
        col("SWAP", 5),
        col("THR", 4),
        col("NI", 3),
        col("CPU", 3),
        col("START", 5),
        lcol("COMMAND", 48),
        lcol("CGROUP", 32),
    ]
}

/// The full list's blocks: stuck tasks' stacks, the table, and what it is.
pub fn blocks(all: &Everyone, x: &Ctx, out: &mut Vec<Block>) {
    let stuck: Vec<&Entry> = all
        .entries
        .iter()
        .filter(|e| e.state == 'D' && (e.wchan.is_some() || !e.stack.is_empty()))
        .collect();
    for e in stuck.iter().take(STUCK_LINES) {
        out.push(Block::Line(stuck_line(e)));
    }
    if stuck.len() > STUCK_LINES {
        out.push(Block::Line(vec![cell(
            format!("  +{} more tasks in D", stuck.len() - STUCK_LINES),
            Level::Dim,
        )]));
    }
    out.push(Block::Table(table(all, x)));
    let processes = all.entries.iter().filter(|e| e.tgid == e.pid).count();
    let threads = all.entries.len() - processes;
    let what = if all.threads {
        format!("{processes} processes and {threads} more threads")
    } else {
        format!("{processes} processes (H lists threads)")
    };
    // Short notes: a zoomed pane cuts a note at its width.
    out.push(Block::Note(format!("{what}, by {}", x.proc_sort.name())));
    out.push(Block::Note(
        "RDELAY: ms a second waited for a CPU; idle ones read in turns".into(),
    ));
    if all.first {
        out.push(Block::Note(
            "rates show from the next read (- until then)".into(),
        ));
    }
    if let Some((read, there)) = all.threads_cut {
        out.push(Block::Alert(cell(
            format!("threads cut: {read} tasks listed of {there} (at most a fixed number read a second)"),
            Level::Warn,
        )));
    }
}

/// `  D 4242 dd  wchan percpu_rwsem_wait  stack percpu_rwsem_wait < __sb_start_write < ...`:
/// who and the wait channel always (each cut to a bound, so they fit 80 columns), then as many
/// whole stack frames as the screen has room for.
fn stuck_line(e: &Entry) -> Vec<Cell> {
    let mut s = vec![cell(
        format!("  D {} {}", e.pid, fit(&safe::line(&e.comm), 15)),
        Level::Warn,
    )];
    if let Some(w) = &e.wchan {
        s.push(cell(
            format!("  wchan {}", fit(&safe::line(w), 32)),
            Level::Warn,
        ));
    }
    if e.stack.is_empty() {
        s.push(opt_cell("  stack - (root only)", Level::Warn));
    }
    for (i, f) in e.stack.iter().enumerate() {
        let lead = if i == 0 { "  stack " } else { " < " };
        s.push(opt_cell(format!("{lead}{}", safe::line(f)), Level::Warn));
    }
    s
}

fn activity(e: &Entry) -> f64 {
    let io = e.read_kb_s.unwrap_or(0.0) + e.write_kb_s.unwrap_or(0.0);
    e.cpu_pct.unwrap_or(0.0)
        + io / 1024.0
        + e.majflt_s.unwrap_or(0.0)
        + if e.state == 'D' { 50.0 } else { 0.0 }
}

fn key(sort: ProcSort, e: &Entry) -> f64 {
    match sort {
        ProcSort::Activity => activity(e),
        ProcSort::Cpu => e.cpu_pct.unwrap_or(0.0),
        ProcSort::Io => e.read_kb_s.unwrap_or(0.0) + e.write_kb_s.unwrap_or(0.0),
        ProcSort::Faults => e.majflt_s.unwrap_or(0.0),
        ProcSort::Rss => e.rss_kb.unwrap_or(0) as f64,
        ProcSort::State => state_rank(e.state),
        ProcSort::Start => e.started_ms.unwrap_or(0) as f64,
        // Set from the order by command (`by_text`).
        ProcSort::Command => 0.0,
    }
}

/// What a row is called and matched by (`/`): pid, name and command line (a thread's are its
/// process's, so filtering by a process keeps its threads), cgroup.
fn name(e: &Entry) -> String {
    format!(
        "{} {} {} {}",
        e.pid,
        e.comm,
        e.cmdline.as_deref().unwrap_or(""),
        e.cgroup.as_deref().unwrap_or("")
    )
}

fn table(all: &Everyone, x: &Ctx) -> Table {
    let mut t = Table::new(columns(), "processes", Order::Load);
    t.empty = Some("- (none listed in /proc)".into());
    let sort = x.proc_sort;
    let by_command = (sort == ProcSort::Command).then(|| {
        let texts: Vec<String> = all
            .entries
            .iter()
            .map(|e| {
                // A thread sorts with its process.
                e.cmdline.clone().unwrap_or_else(|| e.comm.to_string())
            })
            .collect();
        by_text(&texts)
    });
    let load_of = |i: usize, e: &Entry| match &by_command {
        Some(l) => l.get(i).copied().unwrap_or(0.0),
        None => key(sort, e),
    };
    // A thread is ordered with its process: its process's load, after it.
    let process_load: HashMap<u32, f64> = all
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.tgid == e.pid)
        .map(|(i, e)| (e.pid, load_of(i, e)))
        .collect();
    // Cells are built for the rows drawn only (`cells_of`).
    t.later = Some(Later::Everyone);
    for (i, e) in all.entries.iter().enumerate() {
        let load = if e.tgid != e.pid {
            process_load.get(&e.tgid).copied().unwrap_or(0.0)
        } else {
            load_of(i, e)
        };
        t.rows.push(Row {
            name: name(e),
            load,
            natural: natural(e),
            cells: Vec::new(),
            // Every process is listed: this is the list that shows the idle ones.
            quiet: false,
        });
    }
    t
}

/// A task's row key: its process, then (a thread) its own id.
fn natural(e: &Entry) -> u64 {
    let thread = if e.tgid != e.pid { u64::from(e.pid) } else { 0 };
    (u64::from(e.tgid) << 32) | thread
}

/// The cells of the row keyed `natural` (`Table::later`): empty when no task has that key.
pub fn cells_of(all: &Everyone, natural_key: u64) -> Vec<Cell> {
    all.entries
        .iter()
        .find(|e| natural(e) == natural_key)
        .map(|e| cells(e, e.tgid != e.pid, all.wall_ms))
        .unwrap_or_default()
}

fn cells(e: &Entry, thread: bool, now_ms: i64) -> Vec<Cell> {
    let state_level = match e.state {
        'D' => Level::Warn,
        'Z' => Level::Dim,
        _ => Level::Text,
    };
    let comm = safe::line(&e.comm);
    let shown = if thread {
        format!("  {comm}")
    } else if e.kernel {
        format!("[{comm}]")
    } else {
        comm.into_owned()
    };
    let text = |v: Option<&str>| v.map_or("-".into(), |s| safe::line(s).into_owned());
    vec![
        cell(e.pid.to_string(), Level::Dim),
        cell(shown, if thread { Level::Dim } else { Level::Text }),
        cell(e.state.to_string(), state_level),
        cell(num_fit(e.cpu_pct, 1, 5), Level::Text),
        cell(if thread { "-".into() } else { kb(e.rss_kb) }, Level::Text),
        cell(plain_fit(e.read_kb_s, 0, 7), Level::Text),
        cell(plain_fit(e.write_kb_s, 0, 7), Level::Text),
        cell(plain_fit(e.majflt_s, 0, 6), Level::Text),
        cell(plain_fit(e.delay_ms_s, 1, 6), Level::Text),
        cell(text(e.user.as_deref()), Level::Dim),
        cell(kb(e.swap_kb), Level::Text),
        cell(e.threads.to_string(), Level::Dim),
        cell(e.nice.map_or("-".into(), |n| n.to_string()), Level::Dim),
        cell(e.last_cpu.map_or("-".into(), |c| c.to_string()), Level::Dim),
        cell(started(e.started_ms, now_ms), Level::Dim),
        cell(text(e.cmdline.as_deref()), Level::Dim),
        cell(text(e.cgroup.as_deref()), Level::Dim),
    ]
}

/// `14:05` (UTC) for a task started in the last day, `12d` before.
pub fn started(at: Option<i64>, now_ms: i64) -> String {
    let Some(at) = at else {
        return "-".into();
    };
    let age = now_ms.saturating_sub(at);
    if age >= 86_400_000 {
        return format!("{}d", age / 86_400_000);
    }
    let s = at.div_euclid(1000).rem_euclid(86_400);
    format!("{:02}:{:02}", s / 3600, s / 60 % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_times_read_as_a_clock_or_days() {
        let now = 1_700_000_000_000;
        // 1_700_000_000 s is 22:13:20 UTC.
        assert_eq!(started(Some(now - 60_000), now), "22:12");
        assert_eq!(started(Some(now - 3 * 86_400_000 - 5), now), "3d");
        assert_eq!(started(None, now), "-");
    }

    #[test]
    fn threads_sort_under_their_process() {
        let p = |pid, tgid, cpu| Entry {
            pid,
            tgid,
            cpu_pct: Some(cpu),
            comm: "x".into(),
            state: 'S',
            ..Entry::default()
        };
        let all = Everyone {
            entries: vec![
                p(10, 10, 1.0),
                p(20, 20, 5.0),
                p(11, 10, 0.5),
                p(21, 20, 4.0),
            ],
            ..Everyone::default()
        };
        let t = table(
            &all,
            &Ctx::new(&crate::findings::Thresholds::default(), true).with_proc_sort(ProcSort::Cpu),
        );
        let mut rows = t.rows.clone();
        rows.sort_by(super::super::model::busiest);
        let pids: Vec<String> = rows
            .iter()
            .map(|r| cells_of(&all, r.natural)[0].text.to_string())
            .collect();
        assert_eq!(pids, ["20", "21", "10", "11"]);
        assert!(cells_of(&all, 99 << 32).is_empty(), "no such task");
    }
}
