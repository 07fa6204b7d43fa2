//! Audit log: one JSON line per action (preview, apply, rollback, undo) in
//! `STATE_DIR/audit.jsonl` (mode 0600): time, uid, SUDO_USER, SSH_CONNECTION, knob, targets,
//! before/after and errors.

use super::journal::{append_line, ensure_dir, now};
use super::plan::Plan;
use anyhow::{Context, Result};
use serde_json::json;
use std::path::Path;

pub fn path(state_dir: &Path) -> std::path::PathBuf {
    state_dir.join("audit.jsonl")
}

/// Appends the audit line for `action` on `plan`.
pub fn log(state_dir: &Path, action: &str, plan: &Plan, errors: &[String]) -> Result<()> {
    ensure_dir(state_dir)?;
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
    append_line(&path(state_dir), &line.to_string()).context("writing the audit log")
}
