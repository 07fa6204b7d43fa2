//! `perftop tweak list|set|undo|status|journal|hold-latency`.

use super::apply::{self, FsWriter, Which};
use super::journal::{Journal, Line, Status};
use super::{audit, knob, lock, plan, Ctx};
use anyhow::{bail, Context, Result};
use std::io::{BufRead, Write};

/// One line per knob (the registry's, then each disk's storage knobs): name, current value,
/// allowed values, and why it is disabled.
pub fn list(ctx: &Ctx) -> String {
    let mut s = String::new();
    for k in knob::registry(ctx)
        .into_iter()
        .chain(super::storage::all(ctx))
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
    for o in super::overriders(&ctx.root) {
        s.push_str(&format!("warning: {}\n", super::override_warning(&o)));
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

pub fn set(ctx: &Ctx, knob: &str, value: &str, dry_run: bool, yes: bool) -> Result<()> {
    let p = plan::plan(ctx, knob, value).map_err(|r| anyhow::anyhow!("{r}"))?;
    let mut out = std::io::stdout().lock();
    write!(out, "{}", p.preview(ctx)).context("writing to stdout")?;
    // Best effort: an unprivileged dry run may not be able to create the state directory.
    let _ = audit::log(&ctx.state_dir, "preview", &p, &[]);
    if dry_run || p.writes().next().is_none() {
        return Ok(());
    }
    if !yes && !confirm("apply?")? {
        writeln!(out, "not applied").context("writing to stdout")?;
        return Ok(());
    }
    let report = apply::apply(ctx, &p, &mut FsWriter)?;
    write!(out, "{}", report.text()).context("writing to stdout")?;
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
    for l in super::pmqos::preview(ctx, us).map_err(|e| anyhow::anyhow!("{e}"))? {
        eprintln!("{l}");
    }
    let hold = super::pmqos::hold(ctx, us).map_err(|e| anyhow::anyhow!("{e}"))?;
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

/// Previews, confirms and restores a journalled change: the last one, or `--id N`.
pub fn undo(ctx: &Ctx, id: Option<u64>, yes: bool) -> Result<()> {
    let which = id.map_or(Which::Last, Which::Id);
    let Some(pre) = apply::undo_preview(ctx, which)? else {
        bail!("nothing to undo");
    };
    let p = &pre.plan;
    let mut out = std::io::stdout().lock();
    writeln!(out, "undo change #{}: {} → {}:", pre.id, p.knob, p.value)
        .context("writing to stdout")?;
    for c in p.changes.iter().filter(|c| {
        c.undo && super::read_value(&ctx.root, &c.rel).as_deref() != Some(c.old.as_str())
    }) {
        writeln!(
            out,
            "  {} {}: → {}",
            c.label,
            ctx.root.path(&c.rel).display(),
            c.old
        )
        .context("writing to stdout")?;
    }
    for w in &pre.warnings {
        writeln!(out, "  warning: {w}").context("writing to stdout")?;
    }
    if !yes && !confirm("restore?")? {
        writeln!(out, "not restored").context("writing to stdout")?;
        return Ok(());
    }
    let mut report = apply::undo(ctx, &mut FsWriter, which, Some(pre.id))?;
    // Shown with the preview already.
    report.warnings.retain(|w| !pre.warnings.contains(w));
    write!(out, "{}", report.text()).context("writing to stdout")?;
    if !report.ok() {
        bail!("undo incomplete: {}", report.errors().join("; "));
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
        });
    }
    Ok(s)
}
