//! `perftop tweak list|set|undo|status|journal|hold-latency`: the tweak mode, on the
//! machinery of `crate::tweak` (plans, the journal, the lock, apply and undo).

use crate::root::Root;
use crate::tweak::apply::{self, FsWriter, Which};
use crate::tweak::journal::{self, End, Journal, Line, Status};
use crate::tweak::{audit, knob, lock, plan, Ctx};
use anyhow::{bail, Context, Result};
use clap::Subcommand;
use std::io::{BufRead, Write};
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum TweakCmd {
    /// Every knob with its current value, allowed values, and why it is disabled.
    List,
    /// Preview, then set KNOB to VALUE (asks on the terminal unless --yes).
    Set {
        /// The knob's name, as `perftop tweak list` prints it (vm.swappiness, governor, ...).
        knob: String,
        /// The new value: a number (sizes may carry a unit: 64M) or one of the knob's choices.
        value: String,
        /// Journal, lock and audit log directory.
        #[arg(long, default_value = crate::tweak::DEFAULT_STATE_DIR)]
        state_dir: PathBuf,
        /// Preview only; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Apply without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Hold CPU wake-up latency (PM-QoS, /dev/cpu_dma_latency) at US µs until Enter or Ctrl-C.
    HoldLatency {
        #[arg(default_value_t = 0)]
        us: u32,
        #[arg(long, default_value = crate::tweak::DEFAULT_STATE_DIR)]
        state_dir: PathBuf,
    },
    /// Restore the last change from the journal (also after a crash), or change N with --id.
    Undo {
        #[arg(long, default_value = crate::tweak::DEFAULT_STATE_DIR)]
        state_dir: PathBuf,
        /// Restore change N (see `perftop tweak journal`) instead of the last one.
        #[arg(long)]
        id: Option<u64>,
        /// Restore without asking.
        #[arg(long)]
        yes: bool,
        /// Show what undo would restore; change nothing.
        #[arg(long, conflicts_with = "yes")]
        dry_run: bool,
    },
    /// Who holds the tweak lock, the changes in effect, journal damage, what undo would do.
    Status {
        #[arg(long, default_value = crate::tweak::DEFAULT_STATE_DIR)]
        state_dir: PathBuf,
    },
    /// Every journal line, readable or not, with line numbers.
    Journal {
        #[arg(long, default_value = crate::tweak::DEFAULT_STATE_DIR)]
        state_dir: PathBuf,
    },
}

/// Runs one `perftop tweak` command under `root` (`--read-only` disables every change).
pub fn run(root: Root, cmd: TweakCmd, read_only: bool) -> Result<()> {
    super::root_check(&root)?;
    let ctx = |dir: Option<PathBuf>| {
        let mut c = Ctx::new(root.clone(), dir);
        c.read_only = read_only;
        c
    };
    match cmd {
        TweakCmd::List => print(&crate::safe::text(&list(&ctx(None)))),
        TweakCmd::Set {
            knob,
            value,
            state_dir,
            dry_run,
            yes,
        } => set(&ctx(Some(state_dir)), &knob, &value, dry_run, yes),
        TweakCmd::Undo {
            state_dir,
            id,
            yes,
            dry_run,
        } => undo(&ctx(Some(state_dir)), id, yes, dry_run),
        TweakCmd::Status { state_dir } => print(&status(&ctx(Some(state_dir)))?),
        TweakCmd::Journal { state_dir } => print(&journal(&ctx(Some(state_dir)))?),
        TweakCmd::HoldLatency { us, state_dir } => hold_latency(&ctx(Some(state_dir)), us),
    }
}

fn print(text: &str) -> Result<()> {
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("writing to stdout")
}

/// One line per knob (the registry's, then each disk's storage knobs): name, current value,
/// allowed values, and why it is disabled.
pub fn list(ctx: &Ctx) -> String {
    let mut s = String::new();
    for k in knob::registry(ctx)
        .into_iter()
        .chain(crate::tweak::storage::all(ctx))
    {
        s.push_str(&format!(
            "{:<30} {:<14} allowed: {}\n",
            k.name,
            k.current_text(),
            k.allowed_text()
        ));
        s.push_str(&format!("    {}\n", k.description));
        if let Some(why) = &k.disabled {
            s.push_str(&format!("    disabled: {why}\n"));
            if !k.targets.is_empty() {
                s.push_str(&format!(
                    "    equivalent: {}\n",
                    k.command(&ctx.root, "VALUE")
                ));
            }
        }
    }
    for o in crate::tweak::overriders(&ctx.root) {
        s.push_str(&format!(
            "warning: {}\n",
            crate::tweak::override_warning(&o)
        ));
    }
    s
}

fn confirm(question: &str) -> Result<bool> {
    let mut err = std::io::stderr().lock();
    write!(err, "{question} [y/N] ").context("writing to the terminal")?;
    err.flush().context("writing to the terminal")?;
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("reading the answer")?;
    let a = line.trim();
    Ok(a == "y" || a == "Y" || a == "yes")
}

/// How many times a preview is made again when the kernel keeps changing under it.
const PREVIEWS: usize = 3;

pub fn set(ctx: &Ctx, knob: &str, value: &str, dry_run: bool, yes: bool) -> Result<()> {
    let mut p = plan::plan(ctx, knob, value).map_err(|r| anyhow::anyhow!("{r}"))?;
    let mut out = std::io::stdout().lock();
    let mut shown = 0;
    let report = loop {
        write!(out, "{}", crate::safe::text(&p.preview(ctx))).context("writing to stdout")?;
        // Best effort: an unprivileged dry run may not be able to create the state directory.
        let _ = audit::log(&ctx.state_dir, "preview", &p, &[]);
        if dry_run || p.writes().next().is_none() {
            return Ok(());
        }
        if !yes && !confirm("apply?")? {
            writeln!(out, "not applied").context("writing to stdout")?;
            return Ok(());
        }
        shown += 1;
        match apply::apply(ctx, &p, &mut FsWriter) {
            Ok(r) => break r,
            // Someone changed a value while the preview was up: the new preview, asked again.
            Err(e) if shown < PREVIEWS => match e.downcast::<apply::Stale>() {
                Ok(stale) => {
                    writeln!(out, "{stale}:").context("writing to stdout")?;
                    p = stale.plan;
                }
                Err(e) => return Err(e),
            },
            Err(e) => return Err(e),
        }
    };
    write!(out, "{}", crate::safe::text(&report.text())).context("writing to stdout")?;
    if !report.ok() {
        bail!(
            "{} not changed: {}",
            p.knob,
            if report.rolled_back.iter().all(|r| r.error.is_none()) {
                "everything was rolled back"
            } else {
                "ROLLBACK INCOMPLETE, see above"
            }
        );
    }
    writeln!(out, "applied; `perftop tweak undo` restores the old values")
        .context("writing to stdout")
}

/// Holds the PM-QoS latency limit until Enter (or the process ends: the kernel drops it then).
pub fn hold_latency(ctx: &Ctx, us: u32) -> Result<()> {
    // The same preview the dashboard shows before its `y`: what is held, the cost, the end.
    for l in crate::tweak::pmqos::preview(ctx, us).map_err(|e| anyhow::anyhow!("{e}"))? {
        eprintln!("{l}");
    }
    let hold = crate::tweak::pmqos::hold(ctx, us).map_err(|e| anyhow::anyhow!("{e}"))?;
    eprintln!(
        "holding CPU wake-up latency at {} µs; Enter or Ctrl-C releases it",
        hold.us
    );
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    drop(hold);
    eprintln!("released");
    Ok(())
}

/// Previews, confirms and restores a journalled change: the last one, or `--id N`
/// (`--dry-run`: the preview only, which `perftop ssh` shows before its `y`).
pub fn undo(ctx: &Ctx, id: Option<u64>, yes: bool, dry_run: bool) -> Result<()> {
    let which = id.map_or(Which::Last, Which::Id);
    // Before reading the journal: as another user, /run/perftop reads "Permission denied",
    // which says nothing about what to do.
    if !ctx.privileged && !ctx.read_only {
        bail!("undoing a change writes kernel settings and needs root; run perftop with sudo");
    }
    let Some(pre) = apply::undo_preview(ctx, which)? else {
        bail!("nothing to undo");
    };
    let p = &pre.plan;
    let mut out = std::io::stdout().lock();
    // Knob names, labels and values come from the journal: sanitised like every output.
    let mut shown = format!("undo change #{}: {} → {}:\n", pre.id, p.knob, p.value);
    for c in p.changes.iter().filter(|c| {
        c.undo && crate::tweak::read_value(&ctx.root, &c.rel).as_deref() != Some(c.old.as_str())
    }) {
        shown.push_str(&format!(
            "  {} {}: → {}\n",
            c.label,
            ctx.root.path(&c.rel).display(),
            c.old
        ));
    }
    for w in &pre.warnings {
        shown.push_str(&format!("  warning: {w}\n"));
    }
    write!(out, "{}", crate::safe::text(&shown)).context("writing to stdout")?;
    if dry_run {
        return Ok(());
    }
    if !yes && !confirm("restore?")? {
        writeln!(out, "not restored").context("writing to stdout")?;
        return Ok(());
    }
    let mut report = apply::undo(ctx, &mut FsWriter, which, Some(pre.id))?;
    // Shown with the preview already.
    report.warnings.retain(|w| !pre.warnings.contains(w));
    write!(out, "{}", crate::safe::text(&report.text())).context("writing to stdout")?;
    if !report.ok() {
        bail!("undo incomplete: {}", report.errors().join("; "));
    }
    if report.results.is_empty() {
        return writeln!(
            out,
            "nothing written: the kernel already holds change #{}'s old values; marked undone",
            pre.id
        )
        .context("writing to stdout");
    }
    writeln!(out, "undone").context("writing to stdout")
}

fn clean(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).collect()
}

/// `perftop tweak status`: who holds the lock, the changes in effect, damage, what undo does.
pub fn status(ctx: &Ctx) -> Result<String> {
    let dir = &ctx.state_dir;
    let mut s = String::new();
    let lock_path = lock::path(dir);
    s.push_str(&match lock::state(dir)? {
        lock::State::Missing => format!("lock: {} (none yet)\n", lock_path.display()),
        lock::State::Free(_) => format!("lock: {} free\n", lock_path.display()),
        lock::State::Held(Some(h)) => {
            format!("lock: {} held by {}\n", lock_path.display(), h.describe())
        }
        lock::State::Held(None) => format!(
            "lock: {} held by a process that has not written its name yet\n",
            lock_path.display()
        ),
    });
    let journal = Journal::new(dir);
    let contents = journal.read()?;
    s.push_str(&format!(
        "journal: {} ({} lines, last change id #{})\n",
        journal.path().display(),
        contents.lines.len(),
        contents.max_id().max(lock::last_id(dir))
    ));
    let changes = contents.changes();
    let open: Vec<_> = changes
        .iter()
        .filter(|c| matches!(c.status, Status::Pending | Status::Applied))
        .collect();
    if open.is_empty() {
        s.push_str("in effect: none\n");
    } else {
        s.push_str("in effect (newest last):\n");
        for c in open {
            s.push_str(&format!(
                "  #{:<4} {} → {} ({}, line {}, root {})\n",
                c.id,
                clean(&c.plan.knob),
                clean(&c.plan.value),
                c.status.word(),
                c.line,
                clean(c.root.as_deref().unwrap_or("not recorded"))
            ));
        }
    }
    let closed: Vec<_> = changes
        .iter()
        .filter(|c| !matches!(c.status, Status::Pending | Status::Applied))
        .collect();
    for c in closed.iter().rev().take(5).rev() {
        s.push_str(&format!(
            "  #{:<4} {} → {} ({})\n",
            c.id,
            clean(&c.plan.knob),
            clean(&c.plan.value),
            c.status.word()
        ));
    }
    for d in contents.damaged() {
        s.push_str(&format!("damaged: {}\n", d.describe()));
    }
    for n in &contents.breaks {
        s.push_str(&format!(
            "damaged: line {n}: chain broken (the line before it is not the one it follows)\n"
        ));
    }
    s.push_str(&end_line(&contents));
    s.push_str(&match contents.pick_last(lock::last_id(dir)) {
        Ok(p) => match p.change {
            Some(c) => format!(
                "`perftop tweak undo` restores #{} ({} → {})\n",
                c.id,
                clean(&c.plan.knob),
                clean(&c.plan.value)
            ),
            None => "`perftop tweak undo`: nothing to undo\n".into(),
        },
        Err(e) => format!("`perftop tweak undo` refuses: {e}\n"),
    });
    Ok(s)
}

/// How the journal ends: sealed (nothing cut off), or why not.
fn end_line(contents: &journal::Contents) -> String {
    match &contents.end {
        End::Empty => "end: empty journal\n".into(),
        End::Sealed(seal) => format!(
            "end: sealed after {} lines (newest change begun #{})\n",
            seal.lines, seal.last_id
        ),
        End::Unsealed(why) => format!("end: NOT SEALED: {}\n", clean(why)),
    }
}

/// `perftop tweak journal`: every line, readable or not, numbered.
pub fn journal(ctx: &Ctx) -> Result<String> {
    let journal = Journal::new(&ctx.state_dir);
    let contents = journal.read()?;
    let mut s = format!("{}\n", journal.path().display());
    for (n, line) in &contents.lines {
        s.push_str(&match line {
            Line::Record(r) => match &r.plan {
                Some(p) => format!(
                    "{n:>5}  #{:<4} {:<11} {} → {} ({} files, root {})\n",
                    r.id,
                    r.status.word(),
                    clean(&p.knob),
                    clean(&p.value),
                    p.writes().count(),
                    clean(r.root.as_deref().unwrap_or("not recorded"))
                ),
                None => format!("{n:>5}  #{:<4} {}\n", r.id, r.status.word()),
            },
            Line::Damaged(d) => format!("{n:>5}  UNREADABLE {}\n", d.describe()),
            Line::OldSeal => format!("{n:>5}  an older seal (an append after damage left it)\n"),
        });
        if contents.breaks.contains(n) {
            s.push_str(&format!(
                "{n:>5}  CHAIN BROKEN: the line before it is not the one it follows\n"
            ));
        }
    }
    s.push_str(&end_line(&contents));
    Ok(s)
}
