//! The OpenMetrics dump parses with a Prometheus client and backfills with promtool.

use super::*;

#[test]
fn openmetrics_parses_with_prometheus_client() {
    let probe = Command::new("python3")
        .args(["-c", "import prometheus_client.openmetrics.parser"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        support::skip(
            "openmetrics_parses_with_prometheus_client",
            "python3 prometheus_client not installed",
        );
        return;
    }
    let s = &samples()[..6];
    let rec = Recording::from_bytes("om", encode(s)).expect("open");
    let om = dump_str(&rec, Format::OpenMetrics, None);
    let script = "import sys\nfrom prometheus_client.openmetrics.parser import text_string_to_metric_families as p\nfams = list(p(sys.stdin.read()))\nn = sum(len(f.samples) for f in fams)\nassert len(fams) > 50 and n > 200, (len(fams), n)\nprint(len(fams), n)\n";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(om.as_bytes())
        .expect("feed");
    let out = child.wait_with_output().expect("wait");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// promtool's version line, or why the backfill test cannot run.
fn promtool() -> Result<String, String> {
    match Command::new("promtool").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()),
        Ok(o) => Err(format!("promtool --version failed: {}", o.status)),
        Err(e) => Err(format!(
            "promtool not found ({e}); apt-get install prometheus"
        )),
    }
}

/// Backfills `om` with `promtool tsdb create-blocks-from openmetrics` into a fresh directory;
/// returns the directory and the one block's meta.json.
fn backfill(om: &str) -> (tempfile::TempDir, serde_json::Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("dump.om");
    std::fs::write(&file, om).expect("write dump");
    let db = dir.path().join("db");
    let out = Command::new("promtool")
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(&file)
        .arg(&db)
        .output()
        .expect("run promtool");
    assert!(
        out.status.success(),
        "promtool rejected the dump: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let blocks: Vec<_> = std::fs::read_dir(&db)
        .expect("blocks dir")
        .flatten()
        .filter(|e| e.path().join("meta.json").is_file())
        .collect();
    assert_eq!(blocks.len(), 1, "one block expected in {}", db.display());
    let meta: serde_json::Value = serde_json::from_slice(
        &std::fs::read(blocks[0].path().join("meta.json")).expect("meta.json"),
    )
    .expect("meta json");
    (dir, meta)
}

/// `promtool tsdb dump --match SELECTOR` over a backfilled directory: (labels, value, ms).
fn promtool_query(db: &Path, selector: &str) -> Vec<(String, f64, i64)> {
    // promtool 2.42 opens the directory as a TSDB, which wants a WAL directory.
    std::fs::create_dir_all(db.join("wal")).expect("wal dir");
    let out = Command::new("promtool")
        .args(["tsdb", "dump", &format!("--match={selector}")])
        .arg(db)
        .output()
        .expect("run promtool tsdb dump");
    assert!(
        out.status.success(),
        "promtool tsdb dump: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (labels, rest) = l.rsplit_once("} ")?;
            let (v, t) = rest.split_once(' ')?;
            Some((format!("{labels}}}"), v.parse().ok()?, t.parse().ok()?))
        })
        .collect()
}

/// The dump's `--format openmetrics` loads into Prometheus with promtool's backfill, every
/// sample arrives, and the values read back are the dumped ones.
#[test]
fn openmetrics_backfills_with_promtool() {
    let version = match promtool() {
        Ok(v) => v,
        Err(why) => {
            support::skip("openmetrics_backfills_with_promtool", &why);
            return;
        }
    };
    eprintln!("{version}");
    // The golden recording through the command line.
    let out = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(["dump", "--format", "openmetrics"])
        .arg(support::golden())
        .output()
        .expect("perftop dump");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let om = String::from_utf8(out.stdout).expect("utf8");
    let points = om.lines().filter(|l| !l.starts_with('#')).count();
    let (dir, meta) = backfill(&om);
    assert_eq!(meta["stats"]["numSamples"], points as u64, "{meta}");
    let series = om
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' ')?.0.rsplit_once(' ').map(|x| x.0))
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    assert_eq!(meta["stats"]["numSeries"], series as u64, "{meta}");
    // Five intervals, ending 1 s to 5 s after T0 (promtool's maxTime is exclusive).
    assert_eq!(meta["minTime"], T0 + 1000, "{meta}");
    assert_eq!(meta["maxTime"], T0 + 5001, "{meta}");
    let db = dir.path().join("db");
    let iv = promtool_query(&db, "perftop_interval_seconds");
    let want: Vec<(String, f64, i64)> = (1..=5)
        .map(|k| {
            (
                "{__name__=\"perftop_interval_seconds\"}".to_string(),
                1.0,
                T0 + k * 1000,
            )
        })
        .collect();
    assert_eq!(iv, want);
    // A per-CPU gauge: the values promtool reads back are the dumped ones.
    let dumped: Vec<f64> = om
        .lines()
        .filter(|l| l.starts_with("perftop_host_busy_ratio "))
        .filter_map(|l| l.split(' ').nth(1)?.parse().ok())
        .collect();
    assert_eq!(dumped.len(), 5);
    let back: Vec<f64> = promtool_query(&db, "perftop_host_busy_ratio")
        .into_iter()
        .map(|(_, v, _)| v)
        .collect();
    assert_eq!(back, dumped);
    let cpu1 = promtool_query(&db, "perftop_cpus_user_ratio{cpu=\"1\"}");
    assert_eq!(cpu1.len(), 5, "{cpu1:?}");
    assert!(cpu1[0].0.contains("cpu=\"1\""), "{cpu1:?}");

    // A longer recording with restarts: every interval of every series arrives.
    let rec = long_recording();
    let om = dump_str(&rec, Format::OpenMetrics, None);
    let points = om.lines().filter(|l| !l.starts_with('#')).count();
    let (dir, meta) = backfill(&om);
    assert_eq!(meta["stats"]["numSamples"], points as u64, "{meta}");
    let iv = promtool_query(&dir.path().join("db"), "perftop_interval_seconds");
    // 1096 intervals less the 8 where the cycled synthetic samples jump back (no interval).
    let dumped = om
        .lines()
        .filter(|l| l.starts_with("perftop_interval_seconds "))
        .count();
    assert_eq!((iv.len(), dumped), (1088, 1088));
    assert!(iv.iter().all(|(_, v, _)| *v == 1.0));
    assert!(iv.windows(2).all(|w| w[0].2 < w[1].2));
}
