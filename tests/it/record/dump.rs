//! `perftop dump`: every format, every derived key in the JSON rows, the parallel dump.

use super::*;

#[test]
fn dump_formats() {
    let s = &samples()[..5];
    let rec = Recording::from_bytes("d", encode(s)).expect("open");
    // JSON Lines: one object per interval with time + delta keys.
    let json = dump_str(&rec, Format::Json, None);
    let lines: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["time"], "2025-11-21T14:05:31.000Z");
    assert_eq!(lines[0]["interval_s"], 1.0);
    assert!(lines[0]["cpus"].is_array() && lines[0]["disks"].is_array());
    let cpu_only = dump_str(&rec, Format::Json, Some("cpu"));
    let v: serde_json::Value =
        serde_json::from_str(cpu_only.lines().next().expect("line")).expect("json");
    assert!(v.get("cpus").is_some() && v.get("disks").is_none());
    // CSV: one header row per pane.
    let csv = dump_str(&rec, Format::Csv, None);
    let headers: Vec<&str> = csv.lines().filter(|l| l.starts_with("time,")).collect();
    let panes = csv.lines().filter(|l| l.starts_with("# pane: ")).count();
    assert_eq!(headers.len(), panes);
    assert!(panes >= 8, "{panes}");
    assert!(csv.contains("# pane: cpus\ntime,cpu,"), "{csv}");
    // Two CPUs × 4 intervals.
    let cpus_rows = csv
        .split("\n\n")
        .find(|sec| sec.starts_with("# pane: cpus"))
        .expect("cpus section")
        .lines()
        .count();
    assert_eq!(cpus_rows, 2 + 8);
    // Text.
    let text = dump_str(&rec, Format::Text, None);
    assert_eq!(text.matches("# 2025-11-21T14:05:").count(), 4);
    // OpenMetrics: grouped families, seconds, # EOF.
    let om = dump_str(&rec, Format::OpenMetrics, None);
    assert!(om.ends_with("# EOF\n"));
    let mut fams = Vec::new();
    for l in om.lines().filter(|l| l.starts_with("# TYPE ")) {
        fams.push(l.to_string());
    }
    let mut dedup = fams.clone();
    dedup.dedup();
    assert_eq!(fams.len(), dedup.len());
    assert!(om.contains("perftop_cpus_user_ratio{cpu=\"0\""), "{om}");
    assert!(om.contains(" 1763733931.000\n"));
}

#[test]
fn json_rows_hold_every_derived_key_and_each_pane_alone() {
    let s = &samples()[..3];
    let rec = Recording::from_bytes("keys", encode(s)).expect("open");
    // Through text, as the dump's values are (serde_json's float parsing may differ in the last
    // digit from a direct `to_value`).
    let d = perftop::assess::assess(Some(&s[0]), &s[1], &Thresholds::default());
    let derived: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&d).expect("derived json")).expect("json");
    let mut want: Vec<String> = derived
        .as_object()
        .expect("object")
        .keys()
        .cloned()
        .collect();
    want.push("time".into());
    want.sort();
    let json = dump_str(&rec, Format::Json, None);
    let first: serde_json::Value =
        serde_json::from_str(json.lines().next().expect("line")).expect("json");
    let mut got: Vec<String> = first.as_object().expect("object").keys().cloned().collect();
    got.sort();
    assert_eq!(got, want);
    // `time` comes first, then the keys in `perftop delta`'s order.
    assert!(json.starts_with("{\"time\":\"2025-11-21T14:05:31.000Z\",\"interval_s\":1.0,"));
    // The first interval's values are the derived ones.
    assert_eq!(first["cpus"], derived["cpus"]);
    for pane in PANES {
        let one = dump_str(&rec, Format::Json, Some(pane));
        let v: serde_json::Value =
            serde_json::from_str(one.lines().next().expect("line")).expect("json");
        let mut keys: Vec<&str> = v
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort();
        // A key that is also a pane's name (`pressure`) selects that pane's keys.
        let mut want = vec!["interval_s", "time"];
        match perftop::pane::Pane::named(pane) {
            // A key absent from the derived JSON (`kernel_events` when none arrived) is
            // absent from the pane's too.
            Some(p) => want.extend(p.json_keys().iter().filter(|k| derived.get(**k).is_some())),
            None if derived.get(pane).is_none() => {}
            None => want.push(pane),
        }
        want.sort();
        assert_eq!(keys, want, "--pane {pane}");
        assert_eq!(v[pane], derived[pane], "--pane {pane}");
    }
}

#[test]
fn parallel_dump_matches_the_serial_one() {
    let rec = long_recording();
    assert_eq!(rec.len(), 1100);
    for (from, to) in [(None, None), (Some("+100s"), Some("+1050s"))] {
        for format in [Format::Json, Format::Csv, Format::OpenMetrics, Format::Text] {
            let run = |threads| {
                let opts = DumpOptions {
                    format,
                    from: from.map(String::from),
                    to: to.map(String::from),
                    pane: None,
                    width: 80,
                    thresholds: Thresholds::default(),
                    threads,
                };
                let mut out = Vec::new();
                let n = dump(&rec, &opts, &mut out, &mut |w| panic!("warning {w}")).expect("dump");
                (n, String::from_utf8(out).expect("utf8"))
            };
            let (n1, serial) = run(1);
            let (n3, parallel) = run(3);
            // 1100 samples, 4 restarts: 1096 intervals; those ending at 100..=1050 less the
            // restarts at 512, 700 and 1023: 951 - 3.
            let want = if from.is_none() { 1096 } else { 948 };
            assert_eq!((n1, n3), (want, want), "{format:?} {from:?}");
            assert!(
                serial == parallel,
                "{format:?} {from:?}: parallel output differs"
            );
        }
    }
}
