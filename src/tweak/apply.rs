//! Apply a plan target by target with read-back, rolling back in reverse order on any failure;
//! undo the last journalled change. Writes go through `Writer` so tests can inject failures.

use super::journal::{Journal, Status};
use super::plan::{Change, Plan};
use super::{audit, read_value, Ctx};
use anyhow::{bail, Result};
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
        f.write_all(format!("{value}\n").as_bytes())
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

/// Journals, applies and reads back `plan`; on any failure restores what was changed, in
/// reverse order. Audit: `apply`, plus `rollback` after a failure.
pub fn apply(ctx: &Ctx, plan: &Plan, w: &mut dyn Writer) -> Result<Report> {
    check_allowed(ctx)?;
    let journal = Journal::new(&ctx.state_dir);
    let _lock = journal.lock()?;
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
    let id = journal.begin(plan)?;
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
    let report = Report {
        id,
        results,
        rolled_back,
        warnings: Vec::new(),
    };
    let errors = report.errors();
    audit::log(&ctx.state_dir, "apply", plan, &errors)?;
    if failed {
        let clean = report.rolled_back.iter().all(|r| r.error.is_none());
        audit::log(&ctx.state_dir, "rollback", plan, &errors)?;
        if clean {
            journal.mark(id, Status::RolledBack)?;
        }
    } else {
        journal.mark(id, Status::Applied)?;
    }
    Ok(report)
}

/// The change undo would restore and warnings about values changed by someone else since.
pub fn undo_preview(ctx: &Ctx) -> Result<Option<(u64, Plan, Vec<String>)>> {
    let journal = Journal::new(&ctx.state_dir);
    let Some((id, plan)) = journal.last_open()? else {
        return Ok(None);
    };
    let mut warnings = Vec::new();
    for c in plan.writes() {
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
    Ok(Some((id, plan, warnings)))
}

/// Restores the last journalled change (governor before EPP: plan order), writing only the files
/// that differ from their old value. Works from the journal alone, e.g. after a crash.
pub fn undo(ctx: &Ctx, w: &mut dyn Writer) -> Result<Report> {
    check_allowed(ctx)?;
    let journal = Journal::new(&ctx.state_dir);
    let _lock = journal.lock()?;
    let Some((id, plan, warnings)) = undo_preview(ctx)? else {
        bail!("nothing to undo (journal {})", journal.path().display());
    };
    let mut results = Vec::new();
    for c in plan.changes.iter().filter(|c| c.undo) {
        if read_value(&ctx.root, &c.rel).as_deref() == Some(c.old.as_str()) {
            continue;
        }
        results.push(write_one(ctx, w, c, &c.old));
    }
    let report = Report {
        id,
        results,
        rolled_back: Vec::new(),
        warnings,
    };
    let mut errors = report.errors();
    errors.extend(report.warnings.iter().cloned());
    audit::log(&ctx.state_dir, "undo", &plan, &errors)?;
    if report.ok() {
        journal.mark(id, Status::Undone)?;
    }
    Ok(report)
}
