//! The lines of a local tweak's preview (`tweak_dialog`): every file the plan writes, old →
//! new, side effects said as such, warnings and notes.

use super::dialog_box::Tone;
use crate::tweak::plan::Plan;

/// A change's lines in a preview: the file as the kernel names it (wrapped where long; it
/// names the policy, CPU or sysctl already), then its values on a line of their own, so that
/// both are whole at 80 columns.
pub fn change_lines(rel: &str, values: String) -> [(Tone, String); 2] {
    [
        (Tone::Text, format!("/{rel}")),
        (Tone::Head, format!("    {values}")),
    ]
}

/// The preview of `p`: every file, old → new, side effects said as such, then the notes.
pub fn plan_lines(p: &Plan) -> Vec<(Tone, String)> {
    let mut lines = Vec::new();
    for c in &p.changes {
        let values = if !c.write && c.old == c.new {
            format!("{} (journalled; the kernel may change it)", c.old)
        } else if c.write {
            format!("{} → {}", c.old, c.new)
        } else {
            format!("{} → {}  (kernel side effect)", c.old, c.new)
        };
        lines.extend(change_lines(&c.rel, values));
    }
    lines.extend(
        p.warnings
            .iter()
            .map(|w| (Tone::Warn, format!("warning: {w}"))),
    );
    lines.extend(p.notes.iter().map(|n| (Tone::Dim, format!("note: {n}"))));
    lines
}

/// The old values a plan writes over, in one word when they agree (`powersave`), else `mixed`.
pub fn old_values(p: &Plan) -> Option<String> {
    let mut olds = p.writes().map(|c| c.old.as_str());
    let first = olds.next()?;
    Some(if olds.all(|o| o == first) {
        first.to_string()
    } else {
        "mixed".to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::root::Root;
    use crate::tweak::{plan, Ctx};

    /// An `irq.N` preview under a root where irqbalance runs: the warning comes before the
    /// notes, in the warning tone.
    #[test]
    fn irq_preview_warns_that_irqbalance_moves_it_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for (rel, text) in [
            ("proc/irq/36/smp_affinity_list", "0-1\n"),
            ("sys/devices/system/cpu/online", "0-1\n"),
            ("proc/812/comm", "irqbalance\n"),
        ] {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        let ctx = Ctx {
            root: Root::new(root),
            state_dir: root.join("state"),
            privileged: true,
            read_only: false,
        };
        let p = plan::plan(&ctx, "irq.36", "1").expect("plan");
        let lines = plan_lines(&p);
        let warn: Vec<&(Tone, String)> = lines.iter().filter(|(t, _)| *t == Tone::Warn).collect();
        assert_eq!(warn.len(), 1, "{lines:?}");
        assert!(
            warn[0]
                .1
                .starts_with("warning: irqbalance is running and will move IRQ 36 back"),
            "{}",
            warn[0].1
        );
        assert!(warn[0].1.contains("--banirq=36"), "{}", warn[0].1);
        // No second, vaguer note about irqbalance.
        assert!(!lines.iter().any(|(_, l)| l.starts_with("note: irqbalance")));
    }
}
