//! Findings as `perftop batch` and `perftop delta` print them.

use super::*;

fn perftop(args: &[&str], root: Option<&Path>) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perftop"));
    if let Some(r) = root {
        cmd.arg("--root").arg(r);
    }
    let out = cmd.args(args).output().expect("run perftop");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The lines of each report's Findings section.
fn findings_sections(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut cur: Option<Vec<String>> = None;
    for line in text.lines() {
        if line.starts_with("-- ") || line.trim().is_empty() {
            if let Some(c) = cur.take() {
                out.push(c);
            }
            if line.starts_with("-- Findings ") {
                cur = Some(Vec::new());
            }
        } else if let Some(c) = cur.as_mut() {
            c.push(line.to_string());
        }
    }
    out.extend(cur);
    out
}

#[test]
fn batch_on_the_quiet_fixture_says_none() {
    let text = perftop(
        &["-d", "0.25", "batch", "-n", "2"],
        Some(&fixture("vm-idle/t1")),
    );
    let sections = findings_sections(&text);
    assert_eq!(sections.len(), 2, "{text}");
    for s in sections {
        assert_eq!(s, ["none"], "{text}");
    }
}

#[test]
fn batch_prints_a_gauge_finding_after_the_since_boot_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    support::copy_tree(&fixture("vm-idle/t1"), dir.path());
    let meminfo = dir.path().join("proc/meminfo");
    let text = std::fs::read_to_string(&meminfo).expect("meminfo");
    let total: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("MemTotal");
    let patched: String = text
        .lines()
        .map(|l| {
            if l.starts_with("PageTables:") {
                format!("PageTables:     {} kB\n", total / 5)
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(&meminfo, patched).expect("write meminfo");
    let out = perftop(&["-d", "0.25", "batch", "-n", "2"], Some(dir.path()));
    let sections = findings_sections(&out);
    assert_eq!(
        sections[0],
        ["none"],
        "the since-boot report has no findings"
    );
    assert_eq!(sections[1].len(), 1, "{out}");
    assert!(sections[1][0].starts_with("CRIT PageTables"), "{out}");
}

#[test]
fn delta_json_carries_findings() {
    let mut p = Pair::quiet(10.0);
    p.b.memory.meminfo.page_tables = Some(MEM_TOTAL_KB / 16);
    p.nic_drops(30.0);
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, serde_json::to_string(&p.a).expect("json")).expect("write");
    std::fs::write(&b, serde_json::to_string(&p.b).expect("json")).expect("write");
    let out = perftop(
        &[
            "delta",
            a.to_str().expect("path"),
            b.to_str().expect("path"),
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let findings = v["findings"].as_array().expect("findings[]");
    let ids: Vec<&str> = findings.iter().filter_map(|f| f["id"].as_str()).collect();
    assert_eq!(ids, ["net.drops", "pagetables.large"]);
    assert_eq!(findings[0]["severity"], "warn");
    assert_eq!(findings[0]["pane"], "softirq");
    assert_eq!(findings[0]["tweak"], serde_json::Value::Null);
    assert_eq!(findings[0]["message"], "eth0 drops 30/s");
    assert_eq!(findings[1]["tweak"], "vm.nr_hugepages");
}
