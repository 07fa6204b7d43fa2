//! End-to-end, the interactive parts: the real `perftop` binary in a real terminal (tmux),
//! driven by keys and read back with `capture-pane`. A zoomed pane scrolls (its position moves),
//! `/cpu1` filters the CPU pane and no other, `f` lists the findings, and the latency hold
//! holds nothing until `y` (on a copy of a fixture root with its own state dir, so nothing real
//! is touched), after which the header says so.
//!
//! Needs `tmux` (a visible SKIP without it). The harness is `support::tmux`, as for `tmux.rs`.

use crate::support;

use support::tmux::{tmux_available, Session};

/// `rows A–B of N` on a zoomed pane's title.
fn position(screen: &str) -> Option<(usize, usize, usize)> {
    let title = screen.lines().find(|l| l.contains(" rows "))?;
    let tail = &title[title.find(" rows ")? + 6..];
    let (range, total) = tail.split_once(" of ")?;
    let (a, b) = range.split_once('–')?;
    Some((a.parse().ok()?, b.parse().ok()?, total.trim().parse().ok()?))
}

/// The lines of the pane titled `title` (up to the next title, the strip or the footer).
fn pane_lines<'a>(screen: &'a str, title: &str) -> Vec<&'a str> {
    let next = [
        "1 CPU",
        "2 NUMA",
        "3 Huge",
        "4 Dirty",
        "5 Disks",
        "6 Softirq",
        "7 Pressure",
        "8 Processes",
        "findings",
    ];
    let mut lines = screen.lines().skip_while(|l| !l.starts_with(title));
    let mut out: Vec<&str> = lines.next().into_iter().collect();
    out.extend(lines.take_while(|l| !next.iter().any(|n| l.starts_with(n))));
    out
}

/// Table rows of a pane: lines that start with a number followed by a percentage or figure.
fn rows<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    lines
        .iter()
        .copied()
        .filter(|l| {
            let mut w = l.split_whitespace();
            w.next().is_some_and(|x| x.parse::<u32>().is_ok())
                && w.next()
                    .is_some_and(|x| x.parse::<f64>().is_ok() || x.contains('-'))
        })
        .collect()
}

#[test]
fn zoom_scroll_filter_and_findings_in_tmux() {
    if !tmux_available() {
        support::skip(
            "zoom_scroll_filter_and_findings_in_tmux",
            "tmux is not installed (apt-get install -y tmux)",
        );
        return;
    }
    // A 64-CPU host: more CPU rows than 80x24 shows. Its counters do not move between reads
    // (rates are `-`), its dirty pages sit past the background threshold (a finding).
    let s = Session::start_with("interact", |tmp| {
        let root = tmp.join("synth");
        let spec = support::synth::SynthSpec {
            cpus: 64,
            nodes: 2,
            disks: 4,
            queues: 8,
        };
        support::synth::write_host(&root, &spec, 0).expect("synthetic host");
        vec![
            "--root".into(),
            root.to_string_lossy().into_owned(),
            "-d".into(),
            "1".into(),
        ]
    });
    // The second sample: what the panes show from then on (the first is since-boot averages).
    let first = s.wait("a frame after the first sample", |sc| {
        sc.contains("6 Softirq/NIC") && sc.contains("q quit") && !sc.contains("since-boot")
    });

    // Zoom scroll: the position on the title moves with PgDn and Down.
    s.keys(&["Enter"]);
    let top = s.wait("the zoomed CPU pane with its position", |sc| {
        position(sc).is_some_and(|p| p.0 == 1)
    });
    let (_, b, total) = position(&top).unwrap_or_default();
    assert!(total > 64, "{top}");
    s.keys(&["PageDown"]);
    let paged = s.wait("a page further", |sc| {
        position(sc).is_some_and(|p| p.0 == b)
    });
    assert!(
        paged.lines().nth(3).is_some_and(|l| l.starts_with("CPU ")),
        "the table header stays on top:\n{paged}"
    );
    s.keys(&["Down"]);
    s.wait("one row further", |sc| {
        position(sc).is_some_and(|p| p.0 == b + 1)
    });
    s.keys(&["Escape"]);
    s.wait("unzoomed", |sc| sc.contains("6 Softirq/NIC"));

    // The filter: /cpu1 on the CPU pane keeps CPUs named cpu1* there, and only there: every
    // line the other panes showed below their titles is still there (they may gain rows the
    // CPU pane gave up).
    // (NUMA shows its headline only at 80x24 since the Processes pane came: the first rows
    // a pane is given are a header and a row, or none.)
    let others_before: Vec<Vec<String>> = ["5 Disks", "6 Softirq"]
        .iter()
        .map(|t| {
            pane_lines(&first, t)
                .iter()
                .skip(1)
                .map(|l| l.to_string())
                .collect()
        })
        .collect();
    assert!(others_before.iter().all(|r| r.len() >= 2), "{first}");
    s.keys(&["/", "c", "p", "u", "1", "Enter"]);
    let filtered = s.wait("the CPU pane filtered", |sc| {
        sc.lines()
            .any(|l| l.starts_with("1 CPU power") && l.contains("/cpu1"))
            && !sc.contains("filter: ")
    });
    let cpu = rows(&pane_lines(&filtered, "1 CPU power"));
    assert!(!cpu.is_empty(), "{filtered}");
    for r in &cpu {
        let id = r.split_whitespace().next().unwrap_or("");
        assert!(
            id == "1" || id.starts_with('1'),
            "row {r:?} does not match cpu1\n{filtered}"
        );
    }
    assert!(
        cpu.iter().any(|r| r.split_whitespace().next() == Some("1")),
        "{filtered}"
    );
    for (t, before) in ["5 Disks", "6 Softirq"].iter().zip(&others_before) {
        let after = pane_lines(&filtered, t);
        for r in before {
            assert!(after.contains(&r.as_str()), "{t} lost {r:?}\n{filtered}");
        }
    }
    s.keys(&["Escape"]);
    s.wait("the filter cleared", |sc| !sc.contains("/cpu1"));

    // The findings list: opens with a finding's whole message, Esc closes it.
    s.keys(&["f"]);
    s.wait("the findings list with a message", |sc| {
        sc.contains("findings ·")
            && sc.contains("dirty.background")
            && sc.contains("past background")
    });
    s.keys(&["Escape"]);
    s.wait("the list closed", |sc| {
        !sc.contains("findings ·") && sc.contains("6 Softirq/NIC")
    });
    s.keys(&["q"]);
    s.wait("perftop exited", |sc| sc.contains("EXITED rc=0"));
}

#[test]
fn latency_hold_waits_for_y_in_tmux() {
    if !tmux_available() {
        support::skip(
            "latency_hold_waits_for_y_in_tmux",
            "tmux is not installed (apt-get install -y tmux)",
        );
        return;
    }
    if !support::is_root() {
        // The dashboard offers tweaks to root only (its privilege is the process's own).
        support::skip(
            "latency_hold_waits_for_y_in_tmux",
            "not root: the dashboard refuses the hold before any preview",
        );
        return;
    }
    // A copy of a fixture root with its own /dev/cpu_dma_latency (a plain file) and state dir:
    // nothing of the machine is held or written.
    let s = Session::start_with("hold", |tmp| {
        let root = tmp.join("root");
        support::copy_tree(&support::fixture("intel-pstate/t1"), &root);
        std::fs::create_dir_all(root.join("dev")).expect("dev dir");
        std::fs::write(root.join("dev/cpu_dma_latency"), b"").expect("dev file");
        vec![
            "--root".into(),
            root.to_string_lossy().into_owned(),
            "--state-dir".into(),
            tmp.join("state").to_string_lossy().into_owned(),
        ]
    });
    let file = s.dir().join("root/dev/cpu_dma_latency");
    let audit = s.dir().join("state/audit.jsonl");
    let audited = |what: &str| {
        std::fs::read_to_string(&audit)
            .unwrap_or_default()
            .contains(&format!("\"action\":\"{what}\""))
    };
    s.wait("the first frame", |sc| sc.contains("6 Softirq/NIC"));
    s.keys(&["a"]);
    s.wait("the knob menu", |sc| {
        sc.contains("tweaks (g: governor toggle")
    });
    s.keys(&["l"]);
    let preview = s.wait("the hold's preview", |sc| {
        sc.contains("hold CPU wake-up latency at 0 µs?") && sc.contains("y applies")
    });
    assert!(
        preview.contains("cost:") && preview.contains("release:"),
        "{preview}"
    );
    assert_eq!(
        std::fs::read(&file).expect("dev file").len(),
        0,
        "held before y"
    );
    assert!(!audited("hold-start"));
    assert!(
        !preview.lines().next().is_some_and(|l| l.contains("HOLD")),
        "{preview}"
    );
    s.keys(&["y"]);
    let held = s.wait("HOLD in the header", |sc| {
        sc.lines()
            .next()
            .is_some_and(|l| l.contains("HOLD cpu_dma_latency 0us"))
    });
    assert!(!held.contains("y applies"), "{held}");
    assert_eq!(std::fs::read(&file).expect("dev file"), 0i32.to_ne_bytes());
    assert!(audited("hold-start"));
    // Quitting ends the hold; the audit log says so.
    s.keys(&["q"]);
    s.wait("perftop exited", |sc| sc.contains("EXITED rc=0"));
    assert!(audited("hold-release"));
}

/// A FIFO planted as the journal: `u` says why it cannot undo, at once, and `q` still quits
/// (the journal's blocking open used to hang the dashboard, deaf to `q` and SIGTERM).
#[test]
fn undo_with_a_fifo_journal_answers_and_quits_in_tmux() {
    let name = "undo_with_a_fifo_journal_answers_and_quits_in_tmux";
    if !tmux_available() {
        support::skip(name, "tmux is not installed (apt-get install -y tmux)");
        return;
    }
    if !support::is_root() {
        support::skip(
            name,
            "not root: the dashboard refuses undo before reading the journal",
        );
        return;
    }
    let s = Session::start_with("fifo", |tmp| {
        let root = tmp.join("root");
        support::copy_tree(&support::fixture("intel-pstate/t1"), &root);
        let state = tmp.join("state");
        std::fs::create_dir(&state).expect("state dir");
        let made = std::process::Command::new("mkfifo")
            .arg(state.join("journal.jsonl"))
            .status()
            .expect("mkfifo");
        assert!(made.success());
        vec![
            "--root".into(),
            root.to_string_lossy().into_owned(),
            "--state-dir".into(),
            state.to_string_lossy().into_owned(),
        ]
    });
    s.wait("the first frame", |sc| sc.contains("6 Softirq/NIC"));
    s.keys(&["u"]);
    s.wait("undo's refusal", |sc| sc.contains("a FIFO"));
    s.keys(&["q"]);
    s.wait("perftop exited", |sc| sc.contains("EXITED rc=0"));
}
