//! Apply a plan target by target with read-back, rolling back in reverse order on any failure;
//! undo a journalled change (the last one, or one chosen by id). Writes go through `Writer` so tests can inject failures.

use super::journal::{Journal, Status};
use super::lock;
use super::plan::{Change, Plan};
use super::{audit, read_value, Ctx};
use anyhow::{anyhow, bail, Context, Result};
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

fn write_one(ctx: &Ctx, w: &mut dyn Writer, c: &Change, value: &str) -> TargetResult {
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

fn check_allowed(ctx: &Ctx) -> Result<()> {
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

/// `the kernel holds: policy0 …/scaling_governor = performance, …`
fn holds(results: &[TargetResult]) -> String {
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
    for c in plan.writes() {
        let now = read_value(&ctx.root, &c.rel);
        if now.as_deref() != Some(c.old.as_str()) {
            bail!(
                "{} changed since the preview ({} → {}); preview again",
                c.rel,
                c.old,
                now.unwrap_or_else(|| "unreadable".into())
            );
        }
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

/// Which change undo restores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// The newest still in effect, refused when the journal is damaged after it.
    Last,
    /// Change N, chosen by a person (`perftop tweak undo --id N`).
    Id(u64),
}

/// What undo will do: the change, and warnings (damage skipped, values changed since).
#[derive(Debug, Clone)]
pub struct UndoPreview {
    pub id: u64,
    pub plan: Plan,
    pub warnings: Vec<String>,
}

fn pick(ctx: &Ctx, which: Which, last_begun: u64) -> Result<Option<UndoPreview>> {
    let journal = Journal::new(&ctx.state_dir);
    let contents = journal.read()?;
    let picked = match which {
        Which::Last => contents.pick_last(last_begun),
        Which::Id(n) => contents.pick_id(n),
    };
    let picked = picked.map_err(|e| anyhow!("{e} (journal {})", journal.path().display()))?;
    let Some(change) = picked.change else {
        return Ok(None);
    };
    let here = canonical_root(ctx)?;
    let mut warnings = picked.warnings;
    match &change.root {
        Some(r) if *r != here => bail!(
            "change #{} ({} → {}) was made under the root {r}, but this undo runs under the root \
             {here}: refusing to write its old values there. Run the undo with {}",
            change.id,
            change.plan.knob,
            change.plan.value,
            if r == "/" {
                "no --root".to_string()
            } else {
                format!("--root {r}")
            }
        ),
        Some(_) => {}
        None => warnings.push(format!(
            "change #{} records no root (an older perftop); restoring under {here}",
            change.id
        )),
    }
    for c in change.plan.writes() {
        let now = read_value(&ctx.root, &c.rel);
        if now.as_deref() != Some(c.new.as_str()) && now.as_deref() != Some(c.old.as_str()) {
            warnings.push(format!(
                "{} ({}) was changed by someone else since: now {}, perftop set {}",
                c.label,
                c.rel,
                now.unwrap_or_else(|| "unreadable".into()),
                c.new
            ));
        }
    }
    Ok(Some(UndoPreview {
        id: change.id,
        plan: change.plan,
        warnings,
    }))
}

/// The change undo would restore and warnings; `Ok(None)`: nothing to undo. Errors when the
/// journal is damaged where it matters or the change was made under another root.
pub fn undo_preview(ctx: &Ctx, which: Which) -> Result<Option<UndoPreview>> {
    pick(ctx, which, lock::last_id(&ctx.state_dir))
}

/// Restores a journalled change (governor before EPP: plan order), writing only the files that
/// differ from their old value. Works from the journal alone, e.g. after a crash. `expect`: the
/// id the preview showed; refused when the journal now points elsewhere.
pub fn undo(ctx: &Ctx, w: &mut dyn Writer, which: Which, expect: Option<u64>) -> Result<Report> {
    check_allowed(ctx)?;
    let journal = Journal::new(&ctx.state_dir);
    let lock = journal.lock()?;
    let Some(UndoPreview { id, plan, warnings }) = pick(ctx, which, lock.last_id())? else {
        bail!("nothing to undo (journal {})", journal.path().display());
    };
    if let Some(e) = expect {
        if e != id {
            bail!("the journal changed since the preview (it showed #{e}, now #{id}); look again");
        }
    }
    let mut results = Vec::new();
    for c in plan.changes.iter().filter(|c| c.undo) {
        if read_value(&ctx.root, &c.rel).as_deref() == Some(c.old.as_str()) {
            continue;
        }
        results.push(write_one(ctx, w, c, &c.old));
    }
    let mut report = Report {
        id,
        results,
        rolled_back: Vec::new(),
        warnings,
    };
    if report.ok() {
        if let Err(e) = journal.mark(id, Status::Undone) {
            report.warnings.push(format!(
                "the journal could not mark change #{id} undone ({e:#}); the kernel holds the \
                 old values{}. A later undo finds #{id} again and has nothing to write",
                if report.results.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", holds(&report.results))
                }
            ));
        }
    }
    let mut errors = report.errors();
    errors.extend(report.warnings.iter().cloned());
    if let Err(e) = audit::log(&ctx.state_dir, "undo", &plan, &errors) {
        report
            .warnings
            .push(format!("{e:#}; the report above is still true"));
    }
    Ok(report)
}
