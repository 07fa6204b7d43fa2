//! Undo: restore a journalled change (the last one still in effect, or one chosen by id),
//! only ever writing files the knob registry names for that change's knob, values that knob
//! accepts, under the root the change was made under.
//!
//! Why the registry check: the journal is data on disk, and undo runs as root. Even from a
//! trusted state directory (`state`), a journal is only believed for *which* change to restore
//! and *what* it held; *where* undo may write, and which values it may write there, come from
//! perftop's own registry of knobs, as for a new change.

use super::apply::{canonical_root, check_allowed, holds, write_one, Report, Writer};
use super::journal::{Journal, Status};
use super::knob::{self, Knob};
use super::lock;
use super::plan::{Change, Plan};
use super::{audit, read_value, Ctx};
use anyhow::{anyhow, bail, Result};

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
    check_registry(ctx, change.id, &change.plan)?;
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
    // The audit says what the undo did, in its own direction: each file from what it held
    // just before to the value restored (not the apply's old → new again).
    let mut done = Plan {
        value: plan
            .writes()
            .next()
            .map_or_else(|| plan.value.clone(), |c| c.old.clone()),
        changes: Vec::new(),
        ..plan.clone()
    };
    for c in plan.changes.iter().filter(|c| c.undo) {
        let now = read_value(&ctx.root, &c.rel);
        let held = now.as_deref() == Some(c.old.as_str());
        done.changes.push(Change {
            old: now.unwrap_or_else(|| "unreadable".into()),
            new: c.old.clone(),
            write: !held,
            ..c.clone()
        });
        if held {
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
    if let Err(e) = audit::log(&ctx.state_dir, "undo", &done, &errors) {
        report
            .warnings
            .push(format!("{e:#}; the report above is still true"));
    }
    Ok(report)
}

/// The knob that owns `rel` as a target (a twin of a `vm.dirty_*` knob, EPP beside the
/// governor).
fn owner_of(ctx: &Ctx, rel: &str) -> Option<Knob> {
    knob::registry(ctx)
        .into_iter()
        .find(|k| k.targets.iter().any(|t| t.rel == rel))
}

/// What a knob's file may be given back. A number: what the knob accepts, in its one decimal
/// form (the kernel takes any number in range, so a forged `vm.min_free_kbytes` could starve
/// the host). A choice (governor, THP, scheduler): a plain word, which the kernel itself refuses
/// with EINVAL unless it names one of the file's choices — the list perftop reads may no longer
/// show the old one (a fixture file holds only what was written). An IRQ's affinity: any list
/// of online CPUs (the kernel's default is all of them, `0-1`).
fn restorable(k: &Knob, value: &str) -> std::result::Result<(), String> {
    if let knob::Allowed::Choices(_) = &k.allowed {
        if k.name != "irq" {
            let word = !value.is_empty()
                && value.len() <= 64
                && value
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            return if word {
                Ok(())
            } else {
                Err(format!("{value:?} is not a plain choice name"))
            };
        }
    }
    if k.name == "irq" {
        let online: Vec<u32> = match &k.allowed {
            knob::Allowed::Choices(c) => c.iter().filter_map(|c| c.parse().ok()).collect(),
            _ => Vec::new(),
        };
        return match crate::cpulist::CpuList::parse(value) {
            Some(l) if !l.ids().is_empty() && l.ids().iter().all(|c| online.contains(c)) => Ok(()),
            _ => Err(format!("{value:?} is not a list of online CPUs")),
        };
    }
    k.check_value(value)
}

/// Refuses a change whose files or old values the registry does not vouch for: every file undo
/// writes is one the registry names for the change's knob (or for the knob whose twin it is),
/// and its old value one that knob accepts here.
fn check_registry(ctx: &Ctx, id: u64, plan: &Plan) -> Result<()> {
    let refuse = |why: String| {
        anyhow!(
            "refusing to undo change #{id} ({}): {why}. The journal may be damaged or forged; \
             nothing was written",
            crate::safe::line(&plan.knob)
        )
    };
    let k = knob::find(ctx, &plan.knob).map_err(&refuse)?;
    for c in plan.changes.iter().filter(|c| c.undo) {
        let rel = crate::safe::line(&c.rel);
        let owner = if k.targets.iter().any(|t| t.rel == c.rel) {
            Some(k.clone())
        } else if k.side.iter().any(|t| t.rel == c.rel) {
            owner_of(ctx, &c.rel)
        } else {
            None
        };
        let Some(owner) = owner else {
            return Err(refuse(format!(
                "it would write {rel}, which is not a file of {} on this host",
                k.name
            )));
        };
        restorable(&owner, &c.old).map_err(|e| {
            refuse(format!(
                "{rel} would get {:?}, which {} does not accept ({}); to restore it by hand: {}",
                crate::safe::line(&c.old),
                owner.name,
                crate::safe::line(&e),
                crate::safe::line(&owner.command(&ctx.root, &c.old))
            ))
        })?;
    }
    Ok(())
}
