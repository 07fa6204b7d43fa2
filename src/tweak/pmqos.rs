//! PM-QoS latency hold: `/dev/cpu_dma_latency` kept open with a wake-up latency limit. The kernel
//! drops the request when the file is closed, so the hold ends with the process (or on release);
//! nothing is journalled because nothing outlives perftop.

use super::plan::Plan;
use super::{audit, Ctx};
use std::fs::File;
use std::io::Write;

pub const REL: &str = "dev/cpu_dma_latency";
/// Highest limit offered, in microseconds.
pub const MAX_US: u32 = 1000;

/// While this lives, CPUs stay in C-states with exit latency ≤ `us`.
#[derive(Debug)]
pub struct LatencyHold {
    _file: File,
    pub us: u32,
}

fn plan(us: u32) -> Plan {
    Plan {
        knob: "pmqos.cpu_dma_latency".into(),
        value: us.to_string(),
        changes: Vec::new(),
        notes: vec!["held while perftop runs".into()],
    }
}

/// Opens the PM-QoS file and writes the limit (binary s32, as the kernel expects).
pub fn hold(ctx: &Ctx, us: u32) -> Result<LatencyHold, String> {
    let path = ctx.root.path(REL);
    if ctx.read_only {
        return Err("tweaks are disabled in read-only mode".into());
    }
    if us > MAX_US {
        return Err(format!("latency {us} µs is outside 0..={MAX_US}"));
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
    let result = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|mut f| f.write_all(&(us as i32).to_ne_bytes()).map(|()| f));
    let p = plan(us);
    match result {
        Ok(f) => {
            let _ = audit::log(&ctx.state_dir, "apply", &p, &[]);
            Ok(LatencyHold { _file: f, us })
        }
        Err(e) => {
            let msg = format!("{}: {e}", path.display());
            let _ = audit::log(&ctx.state_dir, "apply", &p, std::slice::from_ref(&msg));
            Err(msg)
        }
    }
}
