//! Safe tweaks: a small registry of reversible kernel knobs, changed under a strict protocol.
//!
//! Knobs (`knob`): CPU governor per cpufreq policy, EPP, `vm.dirty_*` ratios and bytes, THP
//! `enabled`/`defrag`, `vm.nr_hugepages` (bounded by free memory), `net.core.netdev_*`, and per
//! disk `disk.DEV.{scheduler,read_ahead_kb,nr_requests}` and `scsi.DEV.queue_depth` (`storage`). Never
//! offered: `drop_caches`, `intel_pstate/status`, anything that can drop a network link.
//!
//! Protocol for every change:
//! 1. offered only where it can work (privileged, file present, value allowed); otherwise refused
//!    with the reason and the equivalent shell command (`knob::Knob::command`);
//! 2. preview (`plan::Plan::preview`): every file, old → new;
//! 3. under the kernel lock (`lock`: `flock` on `STATE_DIR/lock`, which allocates change ids),
//!    the plan made again from the values of that moment (`apply::Stale` when the preview no
//!    longer holds), then a write-ahead journal of those old values and the root, fsync'd,
//!    before the first write (`journal`; default state dir `/run/perftop`, mode 0600, trusted or
//!    refused by `state`);
//! 4. apply target by target with read-back; on any failure roll back in reverse order; then
//!    journal the outcome (fsync) and audit — a failure there is a warning beside a true report
//!    (`apply`);
//! 5. undo (`undo`) restores the last journalled change (also after a crash), refusing when the
//!    journal is damaged or cut after it, the change was made under another root, or it names a
//!    file or value the knob registry does not vouch for, and warning when someone else changed a
//!    value since; `undo --id N` restores a chosen change; tweaks stay applied when perftop exits;
//! 6. one JSON audit line per action (`audit`).
//!
//! The PM-QoS latency hold (`pmqos`) is the one exception to "tweaks stay applied on exit": it is
//! an open file descriptor and ends with the process.
//!
//! All paths go through `crate::root::Root`, so everything works under `--root`.

pub mod apply;
pub mod audit;
mod dirty;
pub mod journal;
pub mod knob;
pub mod lock;
pub mod net;
pub mod plan;
pub mod pmqos;
pub mod range;
pub mod state;
pub mod storage;
pub mod undo;

use crate::root::Root;
use std::path::PathBuf;

/// Default state directory (journal, lock, audit log).
pub const DEFAULT_STATE_DIR: &str = "/run/perftop";

/// Where and how tweaks run. `privileged` is injectable so tests can simulate a non-root user.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub root: Root,
    pub state_dir: PathBuf,
    pub privileged: bool,
    /// `--read-only` or replay: every tweak disabled.
    pub read_only: bool,
}

impl Ctx {
    /// Live defaults: privileged when the effective uid is 0.
    pub fn new(root: Root, state_dir: Option<PathBuf>) -> Ctx {
        Ctx {
            root,
            state_dir: state_dir.unwrap_or_else(|| PathBuf::from(DEFAULT_STATE_DIR)),
            privileged: rustix::process::geteuid().is_root(),
            read_only: false,
        }
    }
}

/// Value of a knob file: the bracketed choice (`always [madvise] never`) or the trimmed text.
pub fn norm(text: &str) -> String {
    if let (Some(a), Some(b)) = (text.find('['), text.find(']')) {
        if a < b {
            return text[a + 1..b].trim().to_string();
        }
    }
    text.trim().to_string()
}

/// Current value of `rel` under the root, normalised; `None` when unreadable.
pub fn read_value(root: &Root, rel: &str) -> Option<String> {
    root.read(rel).ok().map(|t| norm(&t))
}

/// The daemon that spreads IRQs over CPUs and moves an IRQ's affinity back every 10 s.
pub const IRQBALANCE: &str = "irqbalance";

/// Services that may override tweaks behind perftop's back (comm names and marker files).
pub fn overriders(root: &Root) -> Vec<String> {
    let mut found = Vec::new();
    let names = [
        ("tuned", "tuned"),
        ("power-profiles-", "power-profiles-daemon"),
        ("auto-cpufreq", "auto-cpufreq"),
        ("tlp", "TLP"),
        (IRQBALANCE, IRQBALANCE),
    ];
    for pid in root.list_dir("proc") {
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Some(comm) = root.read_line(&format!("proc/{pid}/comm")) {
            for (c, n) in names {
                if comm.starts_with(c) && !found.iter().any(|f| f == n) {
                    found.push(n.to_string());
                }
            }
        }
    }
    if root.exists("run/tlp") && !found.iter().any(|f| f == "TLP") {
        found.push("TLP".into());
    }
    found
}

/// Whether `service` (as `overriders` names it) takes back a change of `knob`: irqbalance moves
/// IRQ affinity (`irq.N`) and nothing else; the power and tuning daemons may change anything.
pub fn overrides(service: &str, knob: &str) -> bool {
    service != IRQBALANCE || knob.starts_with("irq.")
}

/// What an overriding service means for the knobs it does not name one by one (the tweak list,
/// the knob menu).
pub fn override_warning(service: &str) -> String {
    if service == IRQBALANCE {
        "irqbalance is running: it moves IRQ affinity (irq.N) back within 10 s".into()
    } else {
        format!("{service} is running and may override these settings")
    }
}
