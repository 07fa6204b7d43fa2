//! Recordings: round trip, crash safety (kill -9, torn tails, flipped bytes, full disk),
//! segments and retention, the golden v1 file, and every dump format.

mod support;

use perftop::findings::Thresholds;
use perftop::record::dump::{dump, DumpOptions, Format};
use perftop::record::format::FRAME_HEADER;
use perftop::record::writer::{header_for, is_disk_full, list_segments};
use perftop::record::{Action, Decoder, EventKind, Gap, Recorder, Recording, Retention, Writer};
use perftop::root::Root;
use perftop::sample::Sample;
use perftop::source::Reader;
use perftop::view::JSON_KEYS as PANES;
use proptest::prelude::*;
use std::io::{self, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use support::synth::{write_host, SynthSpec};

const T0: i64 = 1_763_733_930_000;

fn spec() -> SynthSpec {
    SynthSpec {
        cpus: 2,
        nodes: 1,
        disks: 2,
        queues: 2,
    }
}

/// `k` samples of a small synthetic host, one second apart.
fn make_samples(k: u64) -> Vec<Sample> {
    let dir = tempfile::tempdir().expect("tempdir");
    (0..k)
        .map(|t| {
            write_host(dir.path(), &spec(), t).expect("synth");
            let mut s = Reader::new(Root::new(dir.path())).sample();
            s.time.wall_ms = T0 + i64::try_from(t).expect("tick") * 1000;
            s
        })
        .collect()
}

/// 130 samples (three keyframes), made once.
fn samples() -> &'static [Sample] {
    static S: OnceLock<Vec<Sample>> = OnceLock::new();
    S.get_or_init(|| make_samples(130))
}

fn encode(samples: &[Sample]) -> Vec<u8> {
    let h = header_for(&samples[0], Duration::from_secs(1), 0);
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    w.gap(
        &Gap {
            reason: "start".into(),
            detail: None,
        },
        T0,
        0,
    )
    .expect("gap");
    for (i, s) in samples.iter().enumerate() {
        w.sample(s, i as u64 * 1_000_000_000).expect("sample");
    }
    w.into_inner()
}

fn decode_all(rec: &Recording) -> Vec<Sample> {
    let mut d = Decoder::default();
    (0..rec.len())
        .map(|i| rec.decode(i, &mut d).expect("decode"))
        .collect()
}

#[test]
fn round_trip_keyframes_and_deltas() {
    let s = samples();
    let bytes = encode(s);
    let rec = Recording::from_bytes("mem", bytes.clone()).expect("open");
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert_eq!(rec.len(), s.len());
    assert_eq!(rec.samples.iter().filter(|r| r.is_key).count(), 3);
    assert_eq!(decode_all(&rec), s);
    let h = rec.header().expect("header");
    assert_eq!(h.format_version, 1);
    assert_eq!(h.cpus, 2);
    assert_eq!(rec.seek(T0 + 65_500), 65);
    assert_eq!(rec.seek(T0 - 1), 0);
    // Deltas are much smaller than keyframes: zstd level 6 with minimum match 6 keeps this
    // synthetic host (every counter moves every second) near 500 B/sample (650 at level 3).
    let per = bytes.len() / s.len();
    assert!(per < 600, "{per} bytes/sample");
}

#[test]
fn deltas_compress_against_their_keyframe() {
    let s = &samples()[..61];
    let h = header_for(&s[0], Duration::from_secs(1), 0);
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    let sizes: Vec<usize> = s
        .iter()
        .enumerate()
        .map(|(i, x)| w.sample(x, i as u64).expect("sample"))
        .collect();
    let json = serde_json::to_vec(&s[0]).expect("json").len();
    let delta = sizes[1..60].iter().sum::<usize>() / 59;
    eprintln!(
        "json {json} B, keyframes {} / {} B, deltas {delta} B mean",
        sizes[0], sizes[60]
    );
    // A keyframe is the whole sample compressed; a delta only what changed since its keyframe.
    assert!(sizes[0] < json / 2, "{sizes:?}");
    assert!(delta * 4 < sizes[0], "{sizes:?}");
    assert!(delta < 500, "{delta}");
    let rec = Recording::from_bytes("sizes", w.into_inner()).expect("open");
    let keys: Vec<usize> = (0..rec.len()).filter(|&i| rec.samples[i].is_key).collect();
    assert_eq!(keys, [0, 60]);
    assert_eq!(decode_all(&rec), s);
}

#[test]
fn flipped_bytes_skip_one_record_and_resume() {
    let s = samples();
    let mut bytes = encode(s);
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 8] {
        *b ^= 0x5a;
    }
    let rec = Recording::from_bytes("flipped", bytes).expect("open");
    assert!(!rec.warnings.is_empty());
    assert!(
        rec.warnings.iter().any(|w| w.contains("skipped")),
        "{:?}",
        rec.warnings
    );
    assert!(
        rec.len() >= s.len() - 2 && rec.len() < s.len(),
        "{}",
        rec.len()
    );
    // What remains decodes to the original samples.
    for (i, got) in decode_all(&rec).iter().enumerate() {
        assert!(s.contains(got), "sample {i} differs");
    }
    // The last sample survives.
    assert_eq!(
        rec.samples.last().map(|r| r.wall_ms),
        s.last().map(|x| x.time.wall_ms)
    );
}

#[test]
fn damaged_keyframe_loses_only_its_deltas() {
    let s = samples();
    let mut bytes = encode(&s[..70]);
    let rec = Recording::from_bytes("ok", bytes.clone()).expect("open");
    // The second keyframe (sample 60): damage its payload.
    let key2 = &rec.samples[60];
    assert!(key2.is_key);
    let at = bytes.len() - 1; // the last delta: damaged tail byte
    bytes[at] ^= 1;
    let rec2 = Recording::from_bytes("tail", bytes).expect("open");
    assert_eq!(rec2.len(), 69);
    assert_eq!(decode_all(&rec2), &s[..69]);
}

#[test]
fn truncated_at_any_byte_reads_the_complete_records() {
    let s = &samples()[..8];
    let bytes = encode(s);
    let mut last = 0;
    for cut in 8..=bytes.len() {
        let rec = Recording::from_bytes("cut", bytes[..cut].to_vec()).expect("open");
        assert!(rec.len() >= last, "cut {cut}");
        last = rec.len();
        let got = decode_all(&rec);
        assert_eq!(got, &s[..got.len()], "cut {cut}");
        if cut > FRAME_HEADER + 8 && cut < bytes.len() && !rec.warnings.is_empty() {
            assert!(
                rec.warnings.iter().any(|w| w.contains("tail")),
                "{:?}",
                rec.warnings
            );
        }
    }
    assert_eq!(last, s.len());
}

#[test]
fn empty_and_foreign_files_are_clear_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = dir.path().join("empty.rec");
    std::fs::write(&empty, b"").expect("write");
    let e = Recording::open(&empty).expect_err("empty");
    assert!(format!("{e:#}").contains("is empty"), "{e:#}");
    let foreign = dir.path().join("notes.txt");
    std::fs::write(&foreign, b"hello, this is not a recording\n").expect("write");
    let e = Recording::open(&foreign).expect_err("foreign");
    assert!(
        format!("{e:#}").contains("not a perftop recording"),
        "{e:#}"
    );
    let e = Recording::open(&dir.path().join("missing")).expect_err("missing");
    assert!(format!("{e:#}").contains("missing"), "{e:#}");
    let out = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(["dump"])
        .arg(&foreign)
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a perftop recording"), "{err}");
}

/// A sink that accepts `limit` bytes, then fails like a full disk (ENOSPC), writing part of the
/// last buffer as a real file system would.
struct FullDisk {
    data: Vec<u8>,
    limit: usize,
}

impl Write for FullDisk {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = self.limit - self.data.len();
        if room == 0 {
            return Err(io::Error::from_raw_os_error(28));
        }
        let n = room.min(buf.len());
        self.data.extend_from_slice(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn disk_full_stops_with_a_clear_error_and_a_readable_file() {
    let s = samples();
    let h = header_for(&s[0], Duration::from_secs(1), 0);
    let mut w = Writer::new(
        FullDisk {
            data: Vec::new(),
            limit: 20_000,
        },
        &h,
    )
    .expect("header");
    let mut err = None;
    let mut written = 0;
    for (i, x) in s.iter().enumerate() {
        match w.sample(x, i as u64) {
            Ok(_) => written += 1,
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    let e = err.expect("the disk fills up");
    assert!(is_disk_full(&e), "{e}");
    // Later writes refuse rather than append after a torn record.
    assert!(w.sample(&s[0], 0).is_err());
    let data = w.into_inner().data;
    let rec = Recording::from_bytes("full", data).expect("open");
    assert_eq!(rec.len(), written);
    assert_eq!(decode_all(&rec), &s[..written]);
    assert!(
        rec.warnings.iter().any(|w| w.contains("tail")),
        "{:?}",
        rec.warnings
    );
}

#[test]
fn restart_opens_a_new_segment_and_retention_trims_old_ones() {
    let s = samples();
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("rec");
    let mut r = Recorder::create(&base, &s[0], Duration::from_secs(1), Retention::default())
        .expect("create");
    for x in &s[..10] {
        r.sample(x).expect("sample");
    }
    drop(r); // as if killed: no stop marker
    let mut r2 = Recorder::create(&base, &s[0], Duration::from_secs(1), Retention::default())
        .expect("create again");
    for x in &s[10..20] {
        r2.sample(x).expect("sample");
    }
    r2.action(&Action {
        kind: "applied".into(),
        name: "vm.dirty_ratio".into(),
        from: Some("20".into()),
        to: Some("10".into()),
    })
    .expect("action");
    r2.finish("stop").expect("finish");
    assert_eq!(list_segments(&base).len(), 2);
    let rec = Recording::open(&base).expect("open");
    assert_eq!(rec.len(), 20);
    let gaps: Vec<&str> = rec
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Gap(g) => Some(g.reason.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(gaps, ["start", "start", "stop"]);
    assert!(rec.gap_before(10));
    assert!(!rec.gap_before(11));
    assert!(rec
        .events
        .iter()
        .any(|e| matches!(&e.kind, EventKind::Action(a) if a.name == "vm.dirty_ratio")));

    // Retention: a 64 KiB segment limit with a 200 KiB total keeps rolling and trimming.
    let base2 = dir.path().join("ret");
    let ret = Retention {
        max_size: Some(200 * 1024),
        max_age: None,
    };
    let mut r = Recorder::create(&base2, &s[0], Duration::from_secs(1), ret).expect("create");
    for _ in 0..12 {
        for x in s {
            r.sample(x).expect("sample");
        }
    }
    r.finish("stop").expect("finish");
    let segs = list_segments(&base2);
    assert!(segs.len() >= 2, "{segs:?}");
    let total: u64 = segs
        .iter()
        .map(|(_, p)| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .sum();
    assert!(total <= 200 * 1024 + 80 * 1024, "{total}");
    assert!(segs[0].0 > 0, "the oldest segment was deleted: {segs:?}");
    let rec = Recording::open(&base2).expect("open");
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    decode_all(&rec);
}

fn dump_str(rec: &Recording, format: Format, pane: Option<&str>) -> String {
    let opts = DumpOptions {
        format,
        from: None,
        to: None,
        pane: pane.map(String::from),
        width: 80,
        thresholds: Thresholds::default(),
        threads: 0,
    };
    let mut out = Vec::new();
    dump(rec, &opts, &mut out, &mut |w| panic!("warning {w}")).expect("dump");
    String::from_utf8(out).expect("utf8")
}

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
    assert!(om.contains("perftop_cpus_user_pct{cpu=\"0\""), "{om}");
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
        let mut want = vec!["interval_s", pane, "time"];
        want.sort();
        assert_eq!(keys, want, "--pane {pane}");
        assert_eq!(v[pane], derived[pane], "--pane {pane}");
    }
}

/// A recording long enough for several decode chunks, with recorder restarts (gap markers) at
/// and next to chunk boundaries.
fn long_recording() -> Recording {
    let s = samples();
    let h = header_for(&s[0], Duration::from_secs(1), 0);
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    let gap = Gap {
        reason: "start".into(),
        detail: None,
    };
    for i in 0..1100usize {
        if [0, 512, 700, 1023].contains(&i) {
            w.gap(&gap, T0 + i as i64 * 1000 - 1, 0).expect("gap");
        }
        let mut x = s[i % s.len()].clone();
        x.time.wall_ms = T0 + i as i64 * 1000;
        w.sample(&x, i as u64).expect("sample");
    }
    Recording::from_bytes("long", w.into_inner()).expect("open")
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
        .arg(golden_path())
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
        .filter(|l| l.starts_with("perftop_host_busy_pct "))
        .filter_map(|l| l.split(' ').nth(1)?.parse().ok())
        .collect();
    assert_eq!(dumped.len(), 5);
    let back: Vec<f64> = promtool_query(&db, "perftop_host_busy_pct")
        .into_iter()
        .map(|(_, v, _)| v)
        .collect();
    assert_eq!(back, dumped);
    let cpu1 = promtool_query(&db, "perftop_cpus_user_pct{cpu=\"1\"}");
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

fn golden_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/recording-v1.ptrec")
}

/// The committed v1 recording must stay readable by every later perftop. Regenerate only when
/// the format version changes, as a new file: `PERFTOP_WRITE_GOLDEN=1 cargo test --test record`.
#[test]
fn golden_v1_recording_replays() {
    let path = golden_path();
    if std::env::var_os("PERFTOP_WRITE_GOLDEN").is_some() {
        let s = make_samples(6);
        let h = header_for(&s[0], Duration::from_secs(1), 0);
        let mut w = Writer::new(Vec::new(), &h).expect("header");
        let start = Gap {
            reason: "start".into(),
            detail: None,
        };
        w.gap(&start, T0, 0).expect("gap");
        for (i, x) in s.iter().enumerate() {
            if i == 3 {
                let a = Action {
                    kind: "applied".into(),
                    name: "governor".into(),
                    from: Some("powersave".into()),
                    to: Some("performance".into()),
                };
                w.action(&a, T0 + 2500, 0).expect("action");
            }
            w.sample(x, 0).expect("sample");
        }
        let bytes = w.into_inner();
        std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
        std::fs::write(&path, bytes).expect("write golden");
    }
    let rec = Recording::open(&path).expect("golden recording");
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert_eq!(rec.len(), 6);
    let h = rec.header().expect("header");
    assert_eq!(h.format_version, 1);
    assert_eq!(h.cpus, 2);
    assert!(rec
        .events
        .iter()
        .any(|e| matches!(&e.kind, EventKind::Action(a) if a.name == "governor")));
    let all = decode_all(&rec);
    assert_eq!(all[5].time.wall_ms, T0 + 5000);
    let json = dump_str(&rec, Format::Json, Some("host"));
    let lines: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 5);
    for l in &lines {
        assert_eq!(l["interval_s"], 1.0);
        let busy = l["host"]["busy_pct"].as_f64().expect("busy");
        assert!(busy > 10.0 && busy < 100.0, "{busy}");
    }
}

fn record_cmd(dir: &Path, out: &Path, extra: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_perftop"))
        .arg("--root")
        .arg(dir)
        .args(["record", "-d", "0.25", "-o"])
        .arg(out)
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn perftop record")
}

fn wait_for_samples(path: &Path, n: usize) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(20) {
        if Recording::open(path).is_ok_and(|r| r.len() >= n) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("recorder did not write {n} samples");
}

#[test]
fn kill_9_mid_record_then_dump() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host = dir.path().join("host");
    write_host(&host, &spec(), 0).expect("synth");
    let out = dir.path().join("k.rec");
    let mut child = record_cmd(&host, &out, &[]);
    wait_for_samples(&out, 4);
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let dump = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(["dump", "--format", "json"])
        .arg(&out)
        .output()
        .expect("dump");
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    assert!(String::from_utf8_lossy(&dump.stdout).lines().count() >= 3);
    // A restarted recorder starts a new segment.
    let status = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .arg("--root")
        .arg(&host)
        .args(["record", "-d", "0.25", "-n", "2", "-o"])
        .arg(&out)
        .status()
        .expect("record again");
    assert!(status.success());
    assert_eq!(list_segments(&out).len(), 2);
}

#[test]
fn sigterm_flushes_and_closes_cleanly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host = dir.path().join("host");
    write_host(&host, &spec(), 0).expect("synth");
    let out = dir.path().join("t.rec");
    let child = record_cmd(&host, &out, &["--duration", "1h"]);
    wait_for_samples(&out, 2);
    let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).expect("pid")).expect("pid");
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM");
    let o = child.wait_with_output().expect("wait");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bytes/sample"));
    let rec = Recording::open(&out).expect("open");
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert!(
        matches!(rec.events.last().map(|e| &e.kind), Some(EventKind::Gap(g)) if g.reason == "stop")
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Any damage (flips, cuts, inserted garbage) gives a clean result or a clean error, and every
    /// sample that is returned decodes to one that was written.
    #[test]
    fn reader_survives_damage(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        cut in any::<prop::sample::Index>(),
        junk in proptest::collection::vec(any::<u8>(), 0..64),
        junk_at in any::<prop::sample::Index>(),
    ) {
        let s = &samples()[..70];
        static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
        let mut b = BYTES.get_or_init(|| encode(&samples()[..70])).clone();
        for (i, x) in &flips {
            let at = i.index(b.len());
            b[at] ^= x;
        }
        let at = junk_at.index(b.len());
        b.splice(at..at, junk.iter().copied());
        let len = b.len();
        b.truncate(cut.index(len + 1));
        if let Ok(rec) = Recording::from_bytes("fuzz", b) {
            let mut d = Decoder::default();
            for i in 0..rec.len() {
                if let Ok(x) = rec.decode(i, &mut d) {
                    prop_assert!(s.contains(&x));
                }
            }
        }
    }
}
