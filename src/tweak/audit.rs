//! Audit log: one JSON line per action (preview, apply, rollback, undo) in
//! `STATE_DIR/audit.jsonl` (mode 0600): time, uid, SUDO_USER, SSH_CONNECTION, knob, targets,
//! before/after and errors.

use super::journal::now;
use super::plan::Plan;
use super::state::{How, StateDir};
use anyhow::{Context, Result};
use serde_json::json;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;

pub fn path(state_dir: &Path) -> std::path::PathBuf {
    state_dir.join("audit.jsonl")
}

/// Appends the audit line for `action` on `plan`. Each line reads in its own direction: an
/// apply's targets go from the old value to the new one, an undo's from what the file held
/// just before the undo to the value it restored (its `value`), `write` false where the file
/// held it already.
pub fn log(state_dir: &Path, action: &str, plan: &Plan, errors: &[String]) -> Result<()> {
    let targets: Vec<_> = plan
        .changes
        .iter()
        .map(|c| json!({"target": c.label, "file": c.rel, "before": c.old, "after": c.new, "write": c.write}))
        .collect();
    let line = json!({
        "time": now(),
        "action": action,
        "uid": rustix::process::getuid().as_raw(),
        "sudo_user": std::env::var("SUDO_USER").ok(),
        "ssh_connection": std::env::var("SSH_CONNECTION").ok(),
        "knob": plan.knob,
        "value": plan.value,
        "targets": targets,
        "errors": errors,
    });
    append(state_dir, &line.to_string()).context("writing the audit log")
}

/// Appends one line (mode 0600, through the checked state directory) and fsyncs it. A file
/// that ends mid-line (torn) gets a newline first, so the new line stays readable; a failed
/// write (a full filesystem) is cut back off, so it leaves no torn line behind.
fn append(state_dir: &Path, line: &str) -> Result<()> {
    let dir = StateDir::open(state_dir, true)?
        .with_context(|| format!("creating {}", state_dir.display()))?;
    let path = path(state_dir);
    let f = dir
        .file("audit.jsonl", How::Append)?
        .with_context(|| format!("opening {}", path.display()))?;
    let len = f
        .metadata()
        .with_context(|| format!("reading {}", path.display()))?
        .len();
    let mut bytes = Vec::with_capacity(line.len() + 2);
    let mut last = [0u8; 1];
    if len > 0 && f.read_at(&mut last, len - 1).ok() == Some(1) && last[0] != b'\n' {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    if let Err(e) = (&f).write_all(&bytes).and_then(|()| f.sync_all()) {
        let _ = f.set_len(len);
        let _ = f.sync_all();
        return Err(e).with_context(|| format!("writing {}", path.display()));
    }
    dir.sync();
    Ok(())
}
