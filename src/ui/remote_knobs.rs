//! What a remote host's `perftop tweak` prints, read back for the dashboard: its knob list
//! (`tweak list`) as knobs, and a change's report (`tweak set|undo --yes`) cut to what was
//! written and read back.

/// One knob of the remote's `perftop tweak list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteKnob {
    pub name: String,
    pub now: String,
    pub allowed: String,
    pub description: String,
    pub disabled: Option<String>,
}

impl RemoteKnob {
    /// The values of a knob that takes one of a list (`allowed: performance, powersave`), for
    /// a pick-list as the local menu offers; None for a range (`0 – 200`), a CPU mask or
    /// anything else, which is typed.
    pub fn choices(&self) -> Option<Vec<String>> {
        let c: Vec<String> = self.allowed.split(", ").map(str::to_string).collect();
        let words = c
            .iter()
            .all(|w| !w.is_empty() && !w.contains(char::is_whitespace) && !w.contains('–'));
        words.then_some(c)
    }
}

/// Reads `perftop tweak list`: a line per knob (`NAME NOW allowed: WORDS`), its description and
/// `disabled: WHY` indented under it; `warning: …` lines after them.
pub fn parse_list(text: &str) -> (Vec<RemoteKnob>, Vec<String>) {
    let (mut knobs, mut warnings) = (Vec::<RemoteKnob>::new(), Vec::new());
    for line in text.lines() {
        if let Some(w) = line.strip_prefix("warning: ") {
            warnings.push(w.to_string());
        } else if let Some(rest) = line.strip_prefix("    ") {
            let Some(k) = knobs.last_mut() else { continue };
            if let Some(why) = rest.strip_prefix("disabled: ") {
                k.disabled = Some(why.to_string());
            } else if !rest.starts_with("equivalent: ") && k.description.is_empty() {
                k.description = rest.to_string();
            }
        } else if let Some((head, allowed)) = line.split_once(" allowed: ") {
            let mut words = head.split_whitespace();
            if let (Some(name), Some(now)) = (words.next(), words.next()) {
                knobs.push(RemoteKnob {
                    name: name.to_string(),
                    now: now.to_string(),
                    allowed: allowed.trim().to_string(),
                    description: String::new(),
                    disabled: None,
                });
            }
        }
    }
    (knobs, warnings)
}

/// The remote's report without the preview it printed first (the lines with `→`, its notes):
/// what was written and read back (`ok`, `FAILED`, `restored`), warnings, errors.
/// Many files that all read back alike (a governor on 64 CPUs) are counted, not listed.
pub fn read_back(text: &str) -> String {
    let mut keep: Vec<&str> = Vec::new();
    for l in text.lines().map(str::trim) {
        // The last word (`applied; …`, `undone`) is said by the dashboard's own words first.
        let last_word = l.starts_with("applied; ") || l == "undone";
        if l.is_empty()
            || last_word
            || l.contains(" → ")
            || l.starts_with("note: ")
            || keep.contains(&l)
        {
            continue;
        }
        keep.push(l);
    }
    let ok = keep.iter().filter(|l| l.starts_with("ok ")).count();
    if ok > 2 {
        let first = keep.iter().position(|l| l.starts_with("ok ")).unwrap_or(0);
        keep.retain(|l| !l.starts_with("ok "));
        let n = format!("{ok} files written and read back");
        let mut out: Vec<String> = keep.iter().map(|l| l.to_string()).collect();
        out.insert(first.min(out.len()), n);
        return out.join("\n");
    }
    keep.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remote_list_reads_back_into_knobs() {
        let text = "vm.swappiness                  60             allowed: 0 – 200\n    \
                    how eagerly the kernel swaps\n\
                    governor                       -              allowed: \n    \
                    the CPU frequency governor\n    disabled: no cpufreq here\n    \
                    equivalent: echo VALUE | sudo tee /x\n\
                    warning: tuned is running and may set these back\n";
        let (knobs, warnings) = parse_list(text);
        assert_eq!(
            knobs,
            [
                RemoteKnob {
                    name: "vm.swappiness".into(),
                    now: "60".into(),
                    allowed: "0 – 200".into(),
                    description: "how eagerly the kernel swaps".into(),
                    disabled: None,
                },
                RemoteKnob {
                    name: "governor".into(),
                    now: "-".into(),
                    allowed: String::new(),
                    description: "the CPU frequency governor".into(),
                    disabled: Some("no cpufreq here".into()),
                }
            ]
        );
        assert_eq!(warnings, ["tuned is running and may set these back"]);
    }

    /// `tweak set --yes`'s output as `mode::tweak::set` prints it: the preview, the report.
    #[test]
    fn the_read_back_leaves_the_preview_out() {
        let out = "vm.swappiness → 61\n  vm.swappiness /proc/sys/vm/swappiness: 60 → 61\n  \
                   ok      vm.swappiness proc/sys/vm/swappiness = 61\n\
                   applied; `perftop tweak undo` restores the old values\n";
        assert_eq!(
            read_back(out),
            "ok      vm.swappiness proc/sys/vm/swappiness = 61"
        );
        let many: String = (0..4)
            .map(|i| format!("  ok      cpu{i} x = performance\n"))
            .collect();
        assert_eq!(
            read_back(&format!("governor → performance\n{many}applied\n")),
            "4 files written and read back\napplied"
        );
    }
}
