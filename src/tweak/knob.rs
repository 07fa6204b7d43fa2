//! The knob registry: which files each knob writes, which values it accepts, and whether it is
//! offered here (with the reason and the equivalent shell command when it is not).

use super::range::{self, Unit};
use super::{read_value, Ctx};
use crate::root::Root;

/// One file a knob writes (a policy, a CPU, or a single sysctl).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `policy0`, `cpu3`, `vm.dirty_ratio`, ...
    pub label: String,
    /// Path under the root, e.g. `sys/devices/system/cpu/cpufreq/policy0/scaling_governor`.
    pub rel: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allowed {
    Choices(Vec<String>),
    Range {
        min: u64,
        max: u64,
        unit: Unit,
    },
    /// A set of online CPUs, typed as a list or `0x` mask and written as a hex mask of
    /// `digits` digits (RPS, `super::net`).
    CpuMask {
        online: Vec<u32>,
        digits: usize,
    },
}

#[derive(Debug, Clone)]
pub struct Knob {
    pub name: &'static str,
    pub description: &'static str,
    pub targets: Vec<Target>,
    /// Current value per target (`None`: unreadable).
    pub current: Vec<Option<String>>,
    /// Files the kernel changes as a side effect (EPP under a governor change, the other half of
    /// a dirty ratio/bytes pair). Journalled so undo can restore them.
    pub side: Vec<Target>,
    pub allowed: Allowed,
    /// Why the knob is not offered here; `None` when it is.
    pub disabled: Option<String>,
    /// Extra information for the preview (e.g. memory pinned by huge pages, per page).
    pub unit_bytes: Option<u64>,
    /// Said loudly in the preview: the change will not last (irqbalance moves an IRQ back).
    pub warning: Option<String>,
}

impl Knob {
    /// The equivalent shell command for `value` (shown when perftop cannot do it itself).
    pub fn command(&self, root: &Root, value: &str) -> String {
        let paths: Vec<String> = self
            .targets
            .iter()
            .map(|t| root.path(&t.rel).display().to_string())
            .collect();
        format!("echo {value} | sudo tee {}", paths.join(" "))
    }

    /// Checks `value` against what the knob allows here.
    pub fn check_value(&self, value: &str) -> Result<(), String> {
        match &self.allowed {
            Allowed::Choices(c) => {
                if c.iter().any(|x| x == value) {
                    Ok(())
                } else {
                    Err(format!(
                        "{value:?} is not available for {} (allowed: {})",
                        self.name,
                        c.join(", ")
                    ))
                }
            }
            Allowed::Range { min, max, unit } => match super::range::canonical(value) {
                Err(why) => Err(format!("{value:?} for {}: {why}", self.name)),
                Ok(v) if (*min..=*max).contains(&v) => Ok(()),
                _ => Err(format!(
                    "{value:?} is outside the bounds of {} ({})",
                    self.name,
                    range::words(*min, *max, *unit)
                )),
            },
            Allowed::CpuMask { online, .. } => super::net::check_mask(value, online),
        }
    }

    /// A value typed by a person as the text the knob's file takes (`256M` → `268435456` for
    /// a byte count), then checked against what the knob allows.
    pub fn parse_value(&self, typed: &str) -> Result<String, String> {
        let value = match &self.allowed {
            Allowed::Choices(_) => typed.trim().to_string(),
            Allowed::Range { unit, .. } => range::parse(typed, *unit)?.to_string(),
            Allowed::CpuMask { online, digits } => super::net::mask_value(typed, online, *digits)?,
        };
        self.check_value(&value)?;
        Ok(value)
    }

    /// What the knob accepts, in words: `performance, powersave`, `1–90 %`, `1 MiB – 12 GiB`.
    pub fn allowed_text(&self) -> String {
        match &self.allowed {
            Allowed::Choices(c) => c.join(", "),
            Allowed::Range { min, max, unit } => range::words(*min, *max, *unit),
            Allowed::CpuMask { online, .. } => format!(
                "online CPUs {} as a list (0-3) or 0x mask; none turns it off",
                crate::cpulist::CpuList::from_ids(online.clone())
            ),
        }
    }

    /// The current value when every target agrees, else `mixed`; `-` when it cannot be read,
    /// as everywhere else on screen (`?` would read as a question).
    pub fn current_text(&self) -> String {
        let first = self.current.first().cloned().flatten();
        if self.current.iter().all(|c| *c == first) {
            first.unwrap_or_else(|| "-".into())
        } else {
            "mixed".into()
        }
    }
}

const CPUFREQ: &str = "sys/devices/system/cpu/cpufreq";
const CPU: &str = "sys/devices/system/cpu";
const THP: &str = "sys/kernel/mm/transparent_hugepage";

/// cpufreq policy directories: `policyN/` when present, else the older per-CPU `cpuN/cpufreq/`.
pub fn policy_dirs(root: &Root) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = root
        .numbered_entries(CPUFREQ, "policy")
        .into_iter()
        .map(|n| (format!("policy{n}"), format!("{CPUFREQ}/policy{n}")))
        .filter(|(_, d)| root.exists(&format!("{d}/scaling_governor")))
        .collect();
    if out.is_empty() {
        out = root
            .numbered_entries(CPU, "cpu")
            .into_iter()
            .map(|n| (format!("cpu{n}"), format!("{CPU}/cpu{n}/cpufreq")))
            // A CPU sharing another's policy has a symlink to the owner's directory.
            .filter(|(_, d)| {
                !std::fs::symlink_metadata(root.path(d)).is_ok_and(|m| m.is_symlink())
                    && root.exists(&format!("{d}/scaling_governor"))
            })
            .collect();
    }
    out
}

/// The words of a choice file, the bracketed current one unbracketed
/// (`[none] mq-deadline`, `performance powersave`).
pub(super) fn words(root: &Root, rel: &str) -> Vec<String> {
    root.read(rel)
        .map(|t| {
            t.split_whitespace()
                .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Names listed in every target's file (order of the first).
fn common(lists: Vec<Vec<String>>) -> Vec<String> {
    let mut it = lists.into_iter();
    let Some(first) = it.next() else {
        return Vec::new();
    };
    let rest: Vec<Vec<String>> = it.collect();
    first
        .into_iter()
        .filter(|w| rest.iter().all(|l| l.contains(w)))
        .collect()
}

fn meminfo_kb(root: &Root, key: &str) -> Option<u64> {
    let text = root.read("proc/meminfo").ok()?;
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(key)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

pub(super) fn single(
    ctx: &Ctx,
    name: &'static str,
    description: &'static str,
    rel: &str,
    allowed: Allowed,
) -> Knob {
    let t = Target {
        label: name.to_string(),
        rel: rel.to_string(),
    };
    Knob {
        name,
        description,
        current: vec![read_value(&ctx.root, rel)],
        targets: vec![t],
        side: Vec::new(),
        allowed,
        disabled: None,
        unit_bytes: None,
        warning: None,
    }
}

fn governor(ctx: &Ctx) -> Knob {
    let root = &ctx.root;
    let dirs = policy_dirs(root);
    let mut lists = Vec::new();
    let mut targets = Vec::new();
    let mut side = Vec::new();
    for (label, dir) in &dirs {
        let mut avail = words(root, &format!("{dir}/scaling_available_governors"));
        let driver = root
            .read_line(&format!("{dir}/scaling_driver"))
            .unwrap_or_default();
        if driver == "intel_pstate" || driver.starts_with("amd-pstate") {
            avail.retain(|g| g == "performance" || g == "powersave");
        }
        lists.push(avail);
        targets.push(Target {
            label: label.clone(),
            rel: format!("{dir}/scaling_governor"),
        });
        let epp = format!("{dir}/energy_performance_preference");
        if root.exists(&epp) {
            side.push(Target {
                label: label.clone(),
                rel: epp,
            });
        }
    }
    let current = targets.iter().map(|t| read_value(root, &t.rel)).collect();
    Knob {
        name: "governor",
        description: "cpufreq governor of every policy (performance: highest P-state)",
        disabled: targets
            .is_empty()
            .then(|| "no cpufreq policies on this host".to_string()),
        allowed: Allowed::Choices(common(lists)),
        targets,
        current,
        side,
        unit_bytes: None,
        warning: None,
    }
}

fn epp(ctx: &Ctx) -> Knob {
    let root = &ctx.root;
    let mut lists = Vec::new();
    let mut targets = Vec::new();
    let mut performance = false;
    for (label, dir) in policy_dirs(root) {
        let rel = format!("{dir}/energy_performance_preference");
        if !root.exists(&rel) {
            continue;
        }
        lists.push(words(
            root,
            &format!("{dir}/energy_performance_available_preferences"),
        ));
        performance |= root
            .read_line(&format!("{dir}/scaling_governor"))
            .as_deref()
            == Some("performance");
        targets.push(Target { label, rel });
    }
    let current = targets.iter().map(|t| read_value(root, &t.rel)).collect();
    let disabled = if targets.is_empty() {
        Some("no energy_performance_preference on this host".to_string())
    } else if performance {
        Some("the driver refuses EPP changes under the performance governor (EBUSY); change the governor first".to_string())
    } else {
        None
    };
    Knob {
        name: "epp",
        description: "energy/performance preference of every policy",
        disabled,
        allowed: Allowed::Choices(common(lists)),
        targets,
        current,
        side: Vec::new(),
        unit_bytes: None,
        warning: None,
    }
}

/// Every knob perftop knows, with its state on this host.
pub fn registry(ctx: &Ctx) -> Vec<Knob> {
    let root = &ctx.root;
    let total_kb = meminfo_kb(root, "MemTotal").unwrap_or(0);
    let mut knobs = vec![governor(ctx), epp(ctx)];
    knobs.extend(super::dirty::knobs(ctx, total_kb));
    for (name, file, description) in [
        (
            "thp.enabled",
            "enabled",
            "where transparent huge pages are used: every mapping, madvise()d ones, or none",
        ),
        (
            "thp.defrag",
            "defrag",
            "how hard a THP fault compacts memory: stall for it, defer to kcompactd, or fall back",
        ),
    ] {
        let rel = format!("{THP}/{file}");
        let choices = words(root, &rel);
        knobs.push(single(
            ctx,
            name,
            description,
            &rel,
            Allowed::Choices(choices),
        ));
    }
    // Huge pages: at most what fits in MemAvailable minus a margin (10% of RAM, at least 512 MiB).
    // Unknown huge page size or MemAvailable: the pool may shrink but not grow (no size is
    // assumed: a 2 MB guess on a 512 MB-page arm64 host would allow 256x the memory).
    let page_kb = meminfo_kb(root, "Hugepagesize").filter(|&k| k > 0);
    let avail_kb = meminfo_kb(root, "MemAvailable").unwrap_or(0);
    let margin_kb = (total_kb / 10).max(512 * 1024);
    let cur = root.read_u64("proc/sys/vm/nr_hugepages").unwrap_or(0);
    let grow = page_kb.map_or(0, |p| avail_kb.saturating_sub(margin_kb) / p);
    let mut hp = single(
        ctx,
        "vm.nr_hugepages",
        "persistent huge pages (pins memory)",
        "proc/sys/vm/nr_hugepages",
        Allowed::Range {
            min: 0,
            max: cur.saturating_add(grow),
            unit: Unit::HugePages(page_kb.map(|p| p * 1024)),
        },
    );
    hp.unit_bytes = page_kb.map(|p| p * 1024);
    knobs.push(hp);
    for (name, min, max, unit, description) in [
        (
            "net.core.netdev_max_backlog",
            1000,
            262_144,
            Unit::Packets,
            "packets a CPU's input backlog holds before the stack drops (RPS, non-NAPI)",
        ),
        (
            "net.core.netdev_budget",
            300,
            6000,
            Unit::Packets,
            "packets one NET_RX softirq round may take from every NAPI device together",
        ),
        (
            "net.core.netdev_budget_usecs",
            2000,
            20_000,
            Unit::Micros,
            "time one NET_RX softirq round may run before it yields (time_squeeze)",
        ),
    ] {
        let file = name.trim_start_matches("net.core.");
        knobs.push(single(
            ctx,
            name,
            description,
            &format!("proc/sys/net/core/{file}"),
            Allowed::Range { min, max, unit },
        ));
    }
    knobs.push(single(
        ctx,
        "vm.swappiness",
        "reclaim weight of anonymous vs file pages (higher swaps sooner)",
        "proc/sys/vm/swappiness",
        Allowed::Range {
            min: 0,
            max: 200,
            unit: Unit::Plain,
        },
    ));
    // The kernel clamps its own default to at least 128 KiB; above a few percent of RAM the
    // reserve starves the page cache and can OOM at once, so perftop stops at 5% (4 GiB at most).
    knobs.push(single(
        ctx,
        "vm.min_free_kbytes",
        "free memory kswapd keeps (raise to spare allocations direct reclaim; too high wastes RAM)",
        "proc/sys/vm/min_free_kbytes",
        Allowed::Range {
            min: 128,
            max: (total_kb / 20).clamp(128, 4 << 20),
            unit: Unit::KiB,
        },
    ));
    knobs.extend(super::net::sysctls(ctx));
    for k in &mut knobs {
        gate(ctx, k);
    }
    knobs
}

/// Disables `k` when its files are missing, in read-only mode, unprivileged, or valueless.
pub(super) fn gate(ctx: &Ctx, k: &mut Knob) {
    let root = &ctx.root;
    {
        if k.disabled.is_some() {
            return;
        }
        if let Some(t) = k.targets.iter().find(|t| !root.exists(&t.rel)) {
            k.disabled = Some(format!("{} is not present on this host", t.rel));
        } else if ctx.read_only {
            k.disabled = Some("read-only mode (--read-only or replay)".into());
        } else if !ctx.privileged {
            k.disabled = Some("needs root (or CAP_SYS_ADMIN)".into());
        } else if matches!(&k.allowed, Allowed::Choices(c) if c.is_empty()) {
            k.disabled = Some("no value is available for every target".into());
        }
    }
}

/// `irq.N`: that IRQ's affinity, to one online CPU. Managed IRQs refuse with EIO. With
/// irqbalance running the knob carries a warning: the move lasts until its next pass.
pub fn irq(ctx: &Ctx, n: u32) -> Knob {
    let online = ctx
        .root
        .read_line("sys/devices/system/cpu/online")
        .and_then(|l| crate::cpulist::CpuList::parse(&l))
        .map(|c| c.ids().iter().map(|i| i.to_string()).collect())
        .unwrap_or_default();
    let mut k = single(
        ctx,
        "irq",
        "move one IRQ to one CPU (managed IRQs refuse: EIO)",
        &format!("proc/irq/{n}/smp_affinity_list"),
        Allowed::Choices(online),
    );
    k.targets[0].label = format!("irq{n}");
    if super::overriders(&ctx.root)
        .iter()
        .any(|o| o == super::IRQBALANCE)
    {
        k.warning = Some(format!(
            "irqbalance is running and will move IRQ {n} back within 10 s: stop it \
             (systemctl stop irqbalance) or ban the IRQ (irqbalance --banirq={n})"
        ));
    }
    gate(ctx, &mut k);
    k
}

/// The named knob, or the list of names in the error.
pub fn find(ctx: &Ctx, name: &str) -> Result<Knob, String> {
    if let Some(n) = name.strip_prefix("irq.").and_then(|n| n.parse().ok()) {
        return Ok(irq(ctx, n));
    }
    if let Some(k) = super::storage::find(ctx, name) {
        return k;
    }
    if let Some((dev, q)) = super::net::parse_rps_name(name) {
        return Ok(super::net::rps(ctx, dev, q));
    }
    let all = registry(ctx);
    let names: Vec<&str> = all.iter().map(|k| k.name).collect();
    let joined = names.join(", ");
    all.into_iter().find(|k| k.name == name).ok_or_else(|| {
        format!(
            "unknown knob {name:?} (known: {joined}, irq.N, net.DEV.rx-N.rps_cpus, \
             disk.DEV.scheduler, disk.DEV.read_ahead_kb, disk.DEV.nr_requests, \
             scsi.DEV.queue_depth)"
        )
    })
}
