//! Apply a plan target by target with read-back, rolling back in reverse order on any failure.
//! The plan is made again under the lock, from the kernel's values of that moment, and must
//! match the preview the person said `y` to (`Stale` otherwise). Writes go through `Writer` so
//! tests can inject failures. Undo: `undo`.

use super::journal::{Journal, Status};
use super::plan::{self, Change, Plan};
use super::{audit, read_value, Ctx};
use anyhow::{anyhow, bail, Context, Result};

pub use super::undo::{undo, undo_preview, UndoPreview, Which};
use std::io::Write;
use std::path::Path;

/// The one place tweak values are written.
pub trait Writer {
    fn write(&mut self, path: &Path, value: &str) -> std::io::Result<()>;
}

/// Writes the real file (sysfs/procfs attribute, or a fixture file under `--root`).
pub struct FsWriter;

impl Writer for FsWriter {
    fn write(&mut self, path: &Path, value: &str) -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(path)?;
        let written = f.write_all(format!("{value}\n").as_bytes());
        // Counted after the write (a reader thread must not read before it lands), and
        // when it failed too: the kernel may have taken part of it.
        crate::root::note_write();
        written
    }
}

/// What happened to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetResult {
    pub label: String,
    pub rel: String,
    pub value: String,
    /// `None`: written and read back; else the error in words (errno text).
    pub error: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub id: u64,
    pub results: Vec<TargetResult>,
    /// Restores done after a failure, in reverse order.
    pub rolled_back: Vec<TargetResult>,
    pub warnings: Vec<String>,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.results.iter().all(|r| r.error.is_none())
            && self.rolled_back.iter().all(|r| r.error.is_none())
            && self.rolled_back.is_empty()
    }

    pub fn errors(&self) -> Vec<String> {
        self.results
            .iter()
            .chain(&self.rolled_back)
            .filter_map(|r| {
                r.error
                    .as_ref()
                    .map(|e| format!("{} ({}): {e}", r.label, r.rel))
            })
            .collect()
    }

    pub fn text(&self) -> String {
        let mut s = String::new();
        for r in &self.results {
            match &r.error {
                None => s.push_str(&format!("  ok      {} {} = {}\n", r.label, r.rel, r.value)),
                Some(e) => s.push_str(&format!("  FAILED  {} {}: {e}\n", r.label, r.rel)),
            }
        }
        for r in &self.rolled_back {
            match &r.error {
                None => s.push_str(&format!("  restored {} {} = {}\n", r.label, r.rel, r.value)),
                Some(e) => s.push_str(&format!("  NOT RESTORED {} {}: {e}\n", r.label, r.rel)),
            }
        }
        for w in &self.warnings {
            s.push_str(&format!("  warning: {w}\n"));
        }
        s
    }
}

pub(super) fn write_one(ctx: &Ctx, w: &mut dyn Writer, c: &Change, value: &str) -> TargetResult {
    let error = match w.write(&ctx.root.path(&c.rel), value) {
        Err(e) if e.raw_os_error() == Some(5) && c.rel.starts_with("proc/irq/") => Some(format!(
            "{e}: a managed IRQ, whose affinity the kernel owns; it cannot be moved"
        )),
        Err(e) => Some(e.to_string()),
        Ok(()) => match read_value(&ctx.root, &c.rel) {
            Some(v) if v == value => None,
            got => Some(format!(
                "read back {:?} instead of {value:?}",
                got.unwrap_or_else(|| "nothing".into())
            )),
        },
    };
    TargetResult {
        label: c.label.clone(),
        rel: c.rel.clone(),
        value: value.to_string(),
        error,
    }
}

pub(super) fn check_allowed(ctx: &Ctx) -> Result<()> {
    if ctx.read_only {
        bail!("tweaks are disabled in read-only mode (--read-only or replay)");
    }
    if !ctx.privileged {
        bail!("changing kernel settings needs root (or CAP_SYS_ADMIN); run perftop with sudo");
    }
    Ok(())
}

/// The root's canonical path, as journalled with each change.
pub fn canonical_root(ctx: &Ctx) -> Result<String> {
    let base = ctx.root.base();
    let p = std::fs::canonicalize(base)
        .with_context(|| format!("resolving the root {}", base.display()))?;
    Ok(p.display().to_string())
}

/// The kernel no longer holds what the preview showed: the plan made now, to show again.
#[derive(Debug, Clone)]
pub struct Stale {
    /// What moved, in words (`proc/sys/vm/dirty_background_ratio: 10 → 15`).
    pub what: Vec<String>,
    pub plan: Plan,
}

impl Stale {
    fn new(before: &Plan, now: Plan) -> Stale {
        let mut what = Vec::new();
        for c in &now.changes {
            match before.changes.iter().find(|b| b.rel == c.rel) {
                Some(b) if b.old == c.old && b == c => {}
                Some(b) => what.push(format!("{}: {} → {}", c.rel, b.old, c.old)),
                None => what.push(format!("{}: now {} (not in the preview)", c.rel, c.old)),
            }
        }
        for b in &before.changes {
            if !now.changes.iter().any(|c| c.rel == b.rel) {
                what.push(format!("{}: no longer changes (was {})", b.rel, b.old));
            }
        }
        Stale { what, plan: now }
    }
}

impl std::fmt::Display for Stale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the kernel changed since the preview ({}); nothing was written: look at the new \
             preview",
            crate::safe::line(&self.what.join(", "))
        )
    }
}

impl std::error::Error for Stale {}

/// The plan for `p`'s knob and value made again now. RPS values are journalled as the mask
/// the kernel prints (`3`), which typed again would read as a CPU list: `0x` says mask.
fn replan(ctx: &Ctx, p: &Plan) -> Result<Plan> {
    let rps = p.knob.starts_with("net.") && p.knob.ends_with(".rps_cpus");
    let value = if rps {
        format!("0x{}", p.value)
    } else {
        p.value.clone()
    };
    plan::plan(ctx, &p.knob, &value).map_err(|r| anyhow!("{}: {r}; nothing was changed", p.knob))
}

/// `the kernel holds: policy0 …/scaling_governor = performance, …`
pub(super) fn holds(results: &[TargetResult]) -> String {
    results
        .iter()
        .map(|r| format!("{} {} = {}", r.label, r.rel, r.value))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Journals (fsync), writes, reads back, journals the outcome (fsync), then audits; on any
/// write failure restores what was changed, in reverse order. Failures after the kernel files
/// were written (journal status, audit) are warnings in a true report, never an error that would
/// read as "not applied".
pub fn apply(ctx: &Ctx, plan: &Plan, w: &mut dyn Writer) -> Result<Report> {
    check_allowed(ctx)?;
    let root = canonical_root(ctx)?;
    let journal = Journal::new(&ctx.state_dir);
    let mut lock = journal.lock()?;
    // Every old value (the twins the kernel changes too) read again under the lock, just
    // before the journal records them: a value read at the preview may have changed while a
    // person looked at it, and undo would restore one that was never in effect before.
    let fresh = replan(ctx, plan)?;
    if fresh.changes != plan.changes {
        return Err(Stale::new(plan, fresh).into());
    }
    let (id, mut warnings) = journal
        .begin(&mut lock, plan, &root)
        .context("journalling the old values (nothing was changed)")?;
    let mut results = Vec::new();
    let mut touched: Vec<&Change> = Vec::new();
    let mut failed = false;
    for c in plan.writes() {
        let r = write_one(ctx, w, c, &c.new);
        let bad = r.error.is_some();
        results.push(r);
        if bad {
            // A failed write may still have changed the value: restore it too when it moved.
            if read_value(&ctx.root, &c.rel).as_deref() != Some(c.old.as_str()) {
                touched.push(c);
            }
            failed = true;
            break;
        }
        touched.push(c);
    }
    let mut rolled_back = Vec::new();
    if failed {
        for c in touched.iter().rev() {
            rolled_back.push(write_one(ctx, w, c, &c.old));
        }
    }
    let clean = rolled_back.iter().all(|r: &TargetResult| r.error.is_none());
    let status = match (failed, clean) {
        (false, _) => Some(Status::Applied),
        (true, true) => Some(Status::RolledBack),
        // Partly restored: stays pending, so undo finishes the job.
        (true, false) => None,
    };
    if let Some(status) = status {
        if let Err(e) = journal.mark(id, status) {
            warnings.push(if failed {
                format!(
                    "the journal could not mark change #{id} rolled back ({e:#}); the kernel \
                     holds the old values again, and undo would find nothing to write"
                )
            } else {
                format!(
                    "the journal could not mark change #{id} applied ({e:#}); the kernel holds \
                     the new values ({}). The journal still says pending, which undo treats as \
                     in effect: `perftop tweak undo` restores them",
                    holds(&results)
                )
            });
        }
    }
    let mut report = Report {
        id,
        results,
        rolled_back,
        warnings,
    };
    let errors = report.errors();
    let mut audit = audit::log(&ctx.state_dir, "apply", plan, &errors);
    if failed && audit.is_ok() {
        audit = audit::log(&ctx.state_dir, "rollback", plan, &errors);
    }
    if let Err(e) = audit {
        report
            .warnings
            .push(format!("{e:#}; the report above is still true"));
    }
    Ok(report)
}
