//! Preview: the exact files a tweak will change, old → new, before anything is written.

use super::knob::{self, Knob};
use super::Ctx;
use serde::{Deserialize, Serialize};

/// One file in a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub label: String,
    /// Path under the root.
    pub rel: String,
    pub old: String,
    pub new: String,
    /// perftop writes it (false: the kernel changes it as a side effect, shown for information).
    pub write: bool,
    /// Undo writes `old` back here when it differs (in plan order: governor first, then EPP).
    pub undo: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub knob: String,
    pub value: String,
    pub changes: Vec<Change>,
    pub notes: Vec<String>,
    /// What will undo the change behind perftop's back (irqbalance); shown before the notes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Why a tweak is not possible, with the command the user could run instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub reason: String,
    pub command: Option<String>,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.reason)?;
        if let Some(c) = &self.command {
            write!(f, "\n  equivalent command: {c}")?;
        }
        Ok(())
    }
}

impl Plan {
    /// Files perftop writes.
    pub fn writes(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| c.write)
    }

    /// Human preview, one line per file.
    pub fn preview(&self, ctx: &Ctx) -> String {
        let mut s = format!("{} → {}\n", self.knob, self.value);
        for c in &self.changes {
            if !c.write && c.old == c.new {
                s.push_str(&format!(
                    "  {:<10} {}: {} (journalled; the kernel may change it)\n",
                    c.label,
                    ctx.root.path(&c.rel).display(),
                    c.old
                ));
                continue;
            }
            let how = if c.write {
                ""
            } else {
                "  (kernel side effect)"
            };
            s.push_str(&format!(
                "  {:<10} {}: {} → {}{how}\n",
                c.label,
                ctx.root.path(&c.rel).display(),
                c.old,
                c.new
            ));
        }
        for w in &self.warnings {
            s.push_str(&format!("  warning: {w}\n"));
        }
        for n in &self.notes {
            s.push_str(&format!("  note: {n}\n"));
        }
        s
    }
}

fn refuse(k: &Knob, ctx: &Ctx, reason: String, value: &str) -> Refusal {
    Refusal {
        reason,
        command: (!k.targets.is_empty()).then(|| k.command(&ctx.root, value)),
    }
}

/// Builds the plan for setting `knob` to `value`, or says why it cannot be done here.
pub fn plan(ctx: &Ctx, knob_name: &str, value: &str) -> Result<Plan, Refusal> {
    let k = knob::find(ctx, knob_name).map_err(|reason| Refusal {
        reason,
        command: None,
    })?;
    if let Some(why) = &k.disabled {
        return Err(refuse(&k, ctx, format!("{}: {why}", k.name), value));
    }
    // RPS takes a CPU list or a 0x mask and writes the mask the kernel prints back; a number
    // may be typed with a unit (`64M`) and is written in its one decimal form.
    let typed;
    let value = if !matches!(k.allowed, knob::Allowed::Choices(_)) {
        typed = k.parse_value(value).map_err(|reason| Refusal {
            reason: format!("{}: {reason}", k.name),
            command: None,
        })?;
        typed.as_str()
    } else {
        value
    };
    k.check_value(value).map_err(|reason| Refusal {
        reason,
        command: None,
    })?;
    let mut changes = Vec::new();
    for (t, cur) in k.targets.iter().zip(&k.current) {
        let Some(old) = cur.clone() else {
            return Err(refuse(&k, ctx, format!("cannot read {}", t.rel), value));
        };
        if old == value {
            continue;
        }
        changes.push(Change {
            label: t.label.clone(),
            rel: t.rel.clone(),
            new: value.to_string(),
            undo: !(k.name.starts_with("vm.dirty") && old == "0"),
            old,
            write: true,
        });
    }
    let mut notes = Vec::new();
    if changes.is_empty() {
        notes.push("already set: nothing to change".into());
    } else {
        let pair = k.name.starts_with("vm.dirty");
        for t in &k.side {
            let Some(old) = super::read_value(&ctx.root, &t.rel) else {
                continue;
            };
            if pair && old == "0" {
                continue;
            }
            changes.push(Change {
                label: t.label.clone(),
                rel: t.rel.clone(),
                new: if pair { "0".into() } else { old.clone() },
                old,
                write: false,
                undo: true,
            });
        }
        if k.name == "governor" && changes.iter().any(|c| !c.write) {
            notes.push("the driver may reset EPP with the governor; undo restores governor first, then EPP".into());
        }
        if let (Some(unit), Ok(n)) = (k.unit_bytes, value.parse::<u64>()) {
            notes.push(format!(
                "pins {} MiB of memory ({} pages of {} KiB)",
                (n * unit) >> 20,
                n,
                unit >> 10
            ));
        }
    }
    // irqbalance's word is the knob's own warning (`knob::irq`).
    for o in super::overriders(&ctx.root) {
        if super::overrides(&o, knob_name) && o != super::IRQBALANCE {
            notes.push(format!("{o} is running and may override this change"));
        }
    }
    let knob = if k.name == "irq" || k.name == "rps" {
        knob_name.to_string()
    } else {
        k.name.to_string()
    };
    Ok(Plan {
        knob,
        value: value.to_string(),
        changes,
        notes,
        warnings: k.warning.into_iter().collect(),
    })
}
