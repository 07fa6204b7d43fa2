//! PM-QoS latency hold: `/dev/cpu_dma_latency` kept open with a wake-up latency limit. The kernel
//! drops the request when the file is closed, so the hold ends with the process (or on release).
//!
//! It is not journalled: the journal is what `undo` restores after perftop is gone, and there
//! is nothing to restore once the process is gone. It goes through the rest of the protocol:
//! offered only where it can work, a preview (`preview`: what is held, what it costs, how it
//! ends) before anything is opened, and one audit line when it starts (`hold-start`) and one when
//! it ends (`hold-release`, also when perftop exits normally).

use super::plan::{Change, Plan};
use super::{audit, Ctx};
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

pub const REL: &str = "dev/cpu_dma_latency";
/// Highest limit offered, in microseconds.
pub const MAX_US: u32 = 1000;

/// While this lives, CPUs stay in C-states with exit latency ≤ `us`.
#[derive(Debug)]
pub struct LatencyHold {
    _file: File,
    pub us: u32,
    state_dir: PathBuf,
}

impl Drop for LatencyHold {
    /// The file closes right after this, and the kernel drops the request with it.
    fn drop(&mut self) {
        let _ = audit::log(&self.state_dir, "hold-release", &plan(self.us), &[]);
    }
}

/// The audit record: the file, and the request perftop holds on it.
fn plan(us: u32) -> Plan {
    Plan {
        knob: "pmqos.cpu_dma_latency".into(),
        value: us.to_string(),
        changes: vec![Change {
            label: "pmqos".into(),
            rel: REL.into(),
            old: "no request from perftop".into(),
            new: format!("{us} µs while perftop runs"),
            write: true,
            undo: false,
        }],
        notes: vec!["held while perftop runs".into()],
        warnings: Vec::new(),
    }
}

/// Why the hold cannot be taken here, in a few words (the menu's line says it before any
/// preview); `None` when it can.
pub fn refusal(ctx: &Ctx) -> Option<String> {
    if ctx.read_only {
        Some("read-only mode (--read-only or replay)".into())
    } else if !ctx.root.exists(REL) {
        Some(format!("{REL} is not present on this host"))
    } else if !ctx.privileged {
        Some("needs root (or CAP_SYS_ADMIN)".into())
    } else {
        None
    }
}

/// Refuses what cannot work here (read-only, no such file, not root), with the command to
/// run instead where there is one.
fn check(ctx: &Ctx, us: u32) -> Result<(), String> {
    let path = ctx.root.path(REL);
    if ctx.read_only {
        return Err("tweaks are disabled in read-only mode".into());
    }
    if us > MAX_US {
        return Err(format!("latency {us} µs is outside 0 – {MAX_US} µs"));
    }
    if !ctx.root.exists(REL) {
        return Err(format!("{} is not present on this host", path.display()));
    }
    if !ctx.privileged {
        return Err(format!(
            "needs root; equivalent: sudo sh -c 'exec 3>{}; printf \"\\x{:02x}\\x{:02x}\\x00\\x00\" >&3; sleep infinity'",
            path.display(),
            us & 0xff,
            (us >> 8) & 0xff
        ));
    }
    Ok(())
}

/// Idle states of CPU 0 deeper than `us`, as `C6 (133 µs)`: what the hold keeps CPUs out of.
fn states_above(ctx: &Ctx, us: u32) -> Vec<String> {
    let dir = "sys/devices/system/cpu/cpu0/cpuidle";
    ctx.root
        .numbered_entries(dir, "state")
        .into_iter()
        .filter_map(|n| {
            let name = ctx.root.read_line(&format!("{dir}/state{n}/name"))?;
            let lat = ctx.root.read_u64(&format!("{dir}/state{n}/latency"))?;
            (lat > u64::from(us)).then(|| format!("{name} ({lat} µs)"))
        })
        .collect()
}

/// What the hold will do, cost and how it ends, one statement a line; or why it cannot be had.
pub fn preview(ctx: &Ctx, us: u32) -> Result<Vec<String>, String> {
    check(ctx, us)?;
    // The file as the kernel names it (under `--root`, that file of the root), as plan
    // previews name theirs.
    let mut lines = vec![
        format!(
            "what: perftop keeps /{REL} open with a {us} µs PM-QoS request; no CPU enters an \
             idle state that takes longer than {us} µs to leave"
        ),
        match states_above(ctx, us) {
            s if s.is_empty() => {
                "states kept out of: all but polling (this kernel/VM lists no cpuidle states)"
                    .into()
            }
            s => format!("states kept out of: {}", s.join(", ")),
        },
        "cost: idle CPUs poll instead of sleeping: more power and heat, and less turbo \
         headroom for the busy cores"
            .into(),
        "release: a then l again, or quit perftop: the kernel drops the request when the \
         file closes (nothing outlives perftop; u has nothing to undo)"
            .into(),
    ];
    lines.push(format!(
        "audit: start and release go to {}",
        audit::path(&ctx.state_dir).display()
    ));
    Ok(lines)
}

/// Opens the PM-QoS file and writes the limit (binary s32, as the kernel expects).
pub fn hold(ctx: &Ctx, us: u32) -> Result<LatencyHold, String> {
    check(ctx, us)?;
    let path = ctx.root.path(REL);
    let result = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|mut f| f.write_all(&(us as i32).to_ne_bytes()).map(|()| f));
    let p = plan(us);
    match result {
        Ok(f) => {
            let _ = audit::log(&ctx.state_dir, "hold-start", &p, &[]);
            Ok(LatencyHold {
                _file: f,
                us,
                state_dir: ctx.state_dir.clone(),
            })
        }
        Err(e) => {
            let msg = format!("{}: {e}", path.display());
            let _ = audit::log(&ctx.state_dir, "hold-start", &p, std::slice::from_ref(&msg));
            Err(msg)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::root::Root;

    fn ctx(dir: &std::path::Path, privileged: bool) -> Ctx {
        Ctx {
            root: Root::new(dir.join("root")),
            state_dir: dir.join("state"),
            privileged,
            read_only: false,
        }
    }

    #[test]
    fn preview_opens_nothing_then_hold_and_release_are_audited() {
        let dir = tempfile::tempdir().expect("tempdir");
        let c = ctx(dir.path(), true);
        assert!(preview(&c, 0).is_err_and(|e| e.contains("not present")));
        let idle = dir.path().join("root/sys/devices/system/cpu/cpu0/cpuidle");
        for (n, name, lat) in [(0, "POLL", 0), (1, "C1", 2), (2, "C6", 133)] {
            std::fs::create_dir_all(idle.join(format!("state{n}"))).expect("mkdir");
            std::fs::write(idle.join(format!("state{n}/name")), format!("{name}\n")).expect("w");
            std::fs::write(idle.join(format!("state{n}/latency")), format!("{lat}\n")).expect("w");
        }
        let file = dir.path().join("root").join(REL);
        std::fs::create_dir_all(dir.path().join("root/dev")).expect("mkdir");
        std::fs::write(&file, b"").expect("dev file");
        let p = preview(&c, 0).expect("preview");
        assert!(
            p.iter()
                .any(|l| l == "states kept out of: C1 (2 µs), C6 (133 µs)"),
            "{p:?}"
        );
        assert!(p.iter().any(|l| l.starts_with("cost: ")));
        assert!(p.iter().any(|l| l.starts_with("release: ")));
        assert_eq!(
            std::fs::read(&file).expect("read").len(),
            0,
            "preview opened it"
        );
        assert!(
            !audit::path(&c.state_dir).exists(),
            "preview writes no audit line"
        );
        let h = hold(&c, 0).expect("hold");
        assert_eq!(std::fs::read(&file).expect("read"), 0i32.to_ne_bytes());
        drop(h);
        let log = std::fs::read_to_string(audit::path(&c.state_dir)).expect("audit");
        let actions: Vec<&str> = log
            .lines()
            .filter_map(|l| l.split("\"action\":\"").nth(1)?.split('"').next())
            .collect();
        assert_eq!(actions, ["hold-start", "hold-release"], "{log}");
        let user = ctx(dir.path(), false);
        assert!(preview(&user, 0).is_err_and(|e| e.contains("needs root")));
    }
}
