//! `perftop tweak list|set|undo`.

use super::apply::{self, FsWriter};
use super::{audit, knob, plan, Ctx};
use anyhow::{bail, Context, Result};
use std::io::{BufRead, Write};

/// One line per knob: name, current value, allowed values, and why it is disabled.
pub fn list(ctx: &Ctx) -> String {
    let mut s = String::new();
    for k in knob::registry(ctx) {
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
        s.push_str(&format!(
            "warning: {o} is running and may override these settings\n"
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

pub fn undo(ctx: &Ctx, yes: bool) -> Result<()> {
    let Some((_, p, warnings)) = apply::undo_preview(ctx)? else {
        bail!("nothing to undo");
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "undo {} → {}:", p.knob, p.value).context("writing to stdout")?;
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
    for w in &warnings {
        writeln!(out, "  warning: {w}").context("writing to stdout")?;
    }
    if !yes && !confirm("restore?")? {
        writeln!(out, "not restored").context("writing to stdout")?;
        return Ok(());
    }
    let report = apply::undo(ctx, &mut FsWriter)?;
    write!(out, "{}", report.text()).context("writing to stdout")?;
    if !report.ok() {
        bail!("undo incomplete: {}", report.errors().join("; "));
    }
    Ok(())
}
