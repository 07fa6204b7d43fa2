//! `perftop explain` and `perftop diff` over a synthetic host driven through phases: quiet,
//! memory pressure with swapping, dirty throttling with a saturated disk, quiet again. The
//! counters each phase adds are the kernel's own (PSI totals, vmstat, diskstats, /proc/stat),
//! so every rate the reports show is derived by the one pipeline, and the expected values are
//! computed here by hand from the increments.

use crate::support;

use perftop::explain::{self, render};
use perftop::findings::Thresholds;
use perftop::record::Recording;
use perftop::sample::{Pressure, PsiLine, PsiResource, Sample};
use std::process::Command;
use std::sync::OnceLock;
use support::T0;

/// Phase boundaries in ticks (seconds from T0): quiet, memory, dirty+disk, quiet.
const MEM: u64 = 40;
const DIRTY: u64 = 80;
const CALM: u64 = 120;
const END: u64 = 160;

#[derive(Default, Clone, Copy)]
struct Acc {
    mem_some: u64,
    mem_full: u64,
    io_some: u64,
    io_full: u64,
    cpu_some: u64,
    pswpout: u64,
    pswpin: u64,
    allocstall: u64,
    pgscan_direct: u64,
    write_ticks: u64,
    queue: u64,
    iowait: u64,
}

/// What phase `t`'s second adds (per second), with `io_in_mem` choosing whether swapping
/// loads the disk (the evidence for the swap -> io.pressure link).
fn step(acc: &mut Acc, t: u64, io_in_mem: bool) {
    // Quiet: a little steady stall time, varying so the baselines have a spread.
    acc.mem_some += 1_000 + 500 * (t % 3);
    acc.io_some += 2_000 + 1_000 * (t % 2);
    acc.io_full += 1_000 + 1_000 * (t % 3);
    acc.cpu_some += 5_000;
    if (MEM..DIRTY).contains(&t) {
        acc.mem_some += 400_000; // 40% some
        acc.mem_full += 150_000; // 15% full
        acc.pswpout += 5_000;
        acc.pswpin += 1_000;
        acc.allocstall += 200;
        acc.pgscan_direct += 20_000;
        if io_in_mem {
            acc.io_some += 400_000;
            acc.io_full += 250_000; // 25% full
        }
    }
    if (DIRTY..CALM).contains(&t) {
        acc.io_some += 600_000;
        acc.io_full += 500_000; // 50% full
        acc.write_ticks += 15_000; // 150 ios/s on sda-like disk 0: +100 ms await
        acc.queue += 20_000; // aqu-sz +20
        acc.iowait += 30; // ticks (USER_HZ 100): 30% of a CPU
    }
}

fn psi(some: u64, full: Option<u64>) -> Option<PsiResource> {
    let line = |us| PsiLine {
        total_us: us,
        ..PsiLine::default()
    };
    Some(PsiResource {
        some: Some(line(some)),
        full: full.map(line),
    })
}

/// The phased samples, made once per variant (reading a synthetic host is the slow part).
fn phased(io_in_mem: bool) -> Vec<Sample> {
    static WITH: OnceLock<Vec<Sample>> = OnceLock::new();
    static WITHOUT: OnceLock<Vec<Sample>> = OnceLock::new();
    let cell = if io_in_mem { &WITH } else { &WITHOUT };
    cell.get_or_init(|| make_phased(io_in_mem)).clone()
}

/// Synthetic host samples with each phase's counters added.
fn make_phased(io_in_mem: bool) -> Vec<Sample> {
    let mut acc = Acc::default();
    support::synth_samples(0..END)
        .into_iter()
        .enumerate()
        .map(|(t, mut s)| {
            let t = t as u64;
            if t > 0 {
                // The interval ending at tick t covers second t - 1 .. t.
                step(&mut acc, t - 1, io_in_mem);
            }
            s.pressure = Some(Pressure {
                cpu: psi(acc.cpu_some, None),
                memory: psi(acc.mem_some, Some(acc.mem_full)),
                io: psi(acc.io_some, Some(acc.io_full)),
                irq: None,
            });
            let vm = &mut s.memory.vmstat;
            vm.pswpout = Some(acc.pswpout);
            vm.pswpin = Some(acc.pswpin);
            vm.allocstall = Some(acc.allocstall);
            vm.pgscan_direct = Some(acc.pgscan_direct);
            vm.oom_kill = Some(0);
            let in_dirty = t > DIRTY && t <= CALM;
            vm.nr_dirty = Some(if in_dirty { 900_000 } else { 100_000 });
            vm.nr_writeback = Some(if in_dirty { 150_000 } else { 0 });
            if let Some(d) = s.disks.first_mut() {
                d.write_ticks += acc.write_ticks;
                d.time_in_queue += acc.queue;
            }
            if let Some(tot) = s.cpu.total.as_mut() {
                tot.iowait += acc.iowait;
                tot.idle -= acc.iowait;
            }
            s
        })
        .collect()
}

fn write(samples: &[Sample], path: &std::path::Path) -> Recording {
    std::fs::write(path, support::encode_recording(samples)).expect("write recording");
    Recording::open(path).expect("open")
}

fn incident(io_in_mem: bool) -> (tempfile::TempDir, Recording) {
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = write(&phased(io_in_mem), &dir.path().join("incident.ptrec"));
    // docs/explain.md's example report is `perftop explain` of this file.
    if let (true, Some(keep)) = (io_in_mem, std::env::var_os("PERFTOP_KEEP_INCIDENT")) {
        std::fs::copy(dir.path().join("incident.ptrec"), keep).expect("keep incident");
    }
    (dir, rec)
}

/// Seconds from T0 of an RFC 3339 time in the report.
fn secs(ms: i64) -> f64 {
    (ms - T0) as f64 / 1000.0
}

fn episode<'a>(r: &'a explain::Report, family: &str) -> Vec<&'a explain::Episode> {
    r.episodes
        .iter()
        .filter(|e| explain::families::FAMILIES[e.family].name == family)
        .collect()
}

#[test]
fn episodes_follow_the_phases_in_order() {
    let (_dir, rec) = incident(true);
    let r = explain::explain(&rec, None, None, &Thresholds::default(), 0).expect("explain");
    for e in &r.episodes {
        eprintln!(
            "{} {:?} {}..{}",
            explain::families::FAMILIES[e.family].name,
            e.ids,
            secs(e.start_ms),
            secs(e.end_ms)
        );
    }
    let near = |got: i64, want: u64| (secs(got) - want as f64).abs() <= 3.0;
    let mem = episode(&r, "memory");
    assert_eq!(mem.len(), 1, "one memory episode");
    assert!(near(mem[0].start_ms, MEM) && near(mem[0].end_ms, DIRTY));
    assert!(mem[0].ids.contains(&"memory.swapping".to_string()));
    let dirty = episode(&r, "dirty");
    assert_eq!(dirty.len(), 1, "one dirty episode");
    assert!(near(dirty[0].start_ms, DIRTY) && near(dirty[0].end_ms, CALM));
    let io = episode(&r, "io");
    assert_eq!(io.len(), 1, "one io episode");
    // Swapping loads the disk from the memory phase on; the disk saturates in the next.
    assert!(near(io[0].start_ms, MEM) && near(io[0].end_ms, CALM));
    assert!(io[0].ids.contains(&"disk.saturated".to_string()));
    // None in the quiet phases, and in order of start.
    for e in &r.episodes {
        assert!(
            secs(e.start_ms) >= MEM as f64 - 3.0,
            "{:?} in the quiet",
            e.ids
        );
        assert!(
            secs(e.end_ms) <= CALM as f64 + 3.0,
            "{:?} in the quiet",
            e.ids
        );
    }
    assert!(r
        .episodes
        .windows(2)
        .all(|w| w[0].start_ms <= w[1].start_ms));
    // The memory peak: 5,000 + 1,000 pages/s swapped (the increments above).
    let p = mem[0].peak.as_ref().expect("peak");
    assert_eq!(p.metric, "memory.psi_some_pct");
    assert!((p.value - 40.15).abs() < 0.2, "psi some peak {}", p.value);
    // Normal here: the quiet seconds' 0.1, 0.15, 0.2% of memory stall.
    let (m, n) = mem[0].normal.expect("baseline");
    assert_eq!(m, "memory.psi_some_pct");
    assert!(
        (n.median - 0.15).abs() < 0.01 && (n.p95 - 0.2).abs() < 0.01,
        "{n:?}"
    );
    assert!(!mem[0].open_start && !mem[0].open_end);
    let disk_peak = io[0].peak.as_ref().expect("io peak");
    assert_eq!(disk_peak.metric, "disk.await_ms");
}

#[test]
fn swapping_links_to_io_pressure_only_when_the_data_shows_it() {
    let (_dir, rec) = incident(true);
    let r = explain::explain(&rec, None, None, &Thresholds::default(), 0).expect("explain");
    let idx = |f: &str| {
        r.episodes
            .iter()
            .position(|e| explain::families::FAMILIES[e.family].name == f)
            .expect(f)
    };
    let (mem, io) = (idx("memory"), idx("io"));
    let link = r.episodes[io].links.iter().find(|l| l.cause == mem);
    let link = link.expect("swap -> io.pressure link");
    assert!(
        link.evidence.contains("swap.pages_per_s"),
        "{}",
        link.evidence
    );
    // Without the disk load during swapping, io pressure starts with the dirty phase: the
    // memory episode is no cause of it.
    let (_dir2, rec2) = incident(false);
    let r2 = explain::explain(&rec2, None, None, &Thresholds::default(), 0).expect("explain");
    let mem2 = r2
        .episodes
        .iter()
        .position(|e| explain::families::FAMILIES[e.family].name == "memory")
        .expect("memory");
    for e in &r2.episodes {
        assert!(e.links.iter().all(|l| l.cause != mem2), "{:?}", e.links);
    }
    let text = render::text::render(&r2, 80);
    assert!(text.contains("no known link"), "{text}");
}

#[test]
fn reports_fit_80_columns_and_json_keeps_the_contract() {
    let (_dir, rec) = incident(true);
    let r = explain::explain(&rec, None, None, &Thresholds::default(), 0).expect("explain");
    let text = render::text::render(&r, 80);
    for l in text.lines() {
        assert!(l.chars().count() <= 80, "too wide: {l}");
    }
    assert!(text.contains("normal here"), "{text}");
    let v: serde_json::Value =
        serde_json::from_str(&render::json::render(&r)).expect("json parses");
    assert_eq!(v["from"], "2025-11-21T14:05:30.000Z");
    assert_eq!(v["to"], "2025-11-21T14:08:09.000Z");
    let eps = v["episodes"].as_array().expect("episodes");
    assert_eq!(eps.len(), r.episodes.len());
    for key in [
        "ids",
        "start",
        "end",
        "peak",
        "severity",
        "summary",
        "culprits",
        "caused_by",
        "baseline",
        "tweaks",
    ] {
        assert!(eps[0].get(key).is_some(), "episode lacks {key}");
    }
    let mem = eps
        .iter()
        .find(|e| e["family"] == "memory")
        .expect("memory episode");
    assert_eq!(mem["start"], "2025-11-21T14:06:10.000Z");
    assert_eq!(mem["end"], "2025-11-21T14:06:50.000Z");
    assert_eq!(mem["peak"]["metric"], "memory.psi_some_pct");
    assert!(mem["tweaks"]
        .as_array()
        .expect("tweaks")
        .iter()
        .any(|t| t["name"] == "vm.swappiness"));
    let md = render::markdown::render(&r);
    assert!(md.starts_with("# perftop explain"), "{md}");
}

fn perftop(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(args)
        .output()
        .expect("run perftop")
}

#[test]
fn a_window_outside_the_recording_names_its_span() {
    let (dir, _rec) = incident(true);
    let path = dir.path().join("incident.ptrec");
    let p = path.to_str().expect("utf8 path");
    let out = perftop(&[
        "explain",
        p,
        "--from",
        "2020-01-01 00:00",
        "--to",
        "2020-01-01 01:00",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("2025-11-21T14:05:30.000Z .. 2025-11-21T14:08:09.000Z"),
        "{err}"
    );
    // A window inside the span with no interval in it (between two samples).
    let out = perftop(&[
        "explain",
        p,
        "--from",
        "@1763733930.2",
        "--to",
        "@1763733930.5",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("no intervals"),
        "{err}"
    );
    // -o refuses a planted link.
    let link = dir.path().join("report.txt");
    std::os::unix::fs::symlink(dir.path().join("target"), &link).expect("symlink");
    let out = perftop(&["explain", p, "-o", link.to_str().expect("utf8")]);
    assert!(!out.status.success());
    assert!(!dir.path().join("target").exists(), "wrote through a link");
}

#[test]
fn diff_ranks_swap_and_pressure_first_and_finds_the_incident_only_in_b() {
    let dir = tempfile::tempdir().expect("tempdir");
    let quiet: Vec<Sample> = phased(true).into_iter().take(MEM as usize).collect();
    let qa = write(&quiet, &dir.path().join("quiet.ptrec"));
    let (_d, inc) = incident(true);
    let t = Thresholds::default();
    let a = explain::diff::side(&qa, None, None, &t, 0).expect("a");
    let b = explain::diff::side(&inc, None, None, &t, 0).expect("b");
    let d = explain::diff::diff(a, b);
    let top: Vec<&str> = d.changes.iter().take(5).map(|c| c.metric).collect();
    eprintln!("{top:?}");
    // The memory-pressure family (swap, reclaim, PSI) leads; swapping among the first five.
    let pressure =
        |m: &str| m.starts_with("swap.") || m.starts_with("reclaim.") || m.contains(".psi_");
    assert!(top[..3].iter().all(|m| pressure(m)), "top changes {top:?}");
    assert!(top.contains(&"swap.pages_per_s"), "{top:?}");
    // A metric the incident did not touch did not move.
    let busy = d
        .changes
        .iter()
        .find(|c| c.metric == "cpu.busy_pct")
        .expect("busy");
    assert!(busy.score < 1.0, "cpu.busy_pct moved {}", busy.score);
    for id in [
        "memory.swapping",
        "memory.pressure",
        "dirty.throttled",
        "io.pressure",
    ] {
        assert!(
            d.only_b.iter().any(|x| x == id),
            "{id} not only in B: {:?}",
            d.only_b
        );
    }
    assert!(d.only_a.is_empty(), "{:?}", d.only_a);
    // Episodes: the incident's families only in B, each as long as its phase (one sample a
    // second; the phases are MEM..DIRTY and DIRTY..CALM), none in the quiet recording.
    assert!(d.a.episodes.is_empty(), "{:?}", d.a.episodes);
    assert!(d.episodes_only_a.is_empty() && d.episodes_both.is_empty());
    for (fam, secs) in [("memory", DIRTY - MEM), ("dirty", CALM - DIRTY)] {
        assert!(d.episodes_only_b.contains(&fam), "{:?}", d.episodes_only_b);
        let e = d.b.episodes[fam];
        assert_eq!(e.count, 1, "{fam}: {e:?}");
        assert!(
            (e.seconds - secs as f64).abs() <= 3.0,
            "{fam} episode {} s, phase {secs} s",
            e.seconds
        );
    }
    let text = explain::diff::text(&d);
    assert!(text.contains("episodes only in B: "), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    let v: serde_json::Value = serde_json::from_str(&explain::diff::json(&d)).expect("json");
    assert!(v["changes"][0]["a"]["median"].is_number());
    assert!(v["findings"]["only_b"].is_array());
    let eb = &v["episodes"]["only_b"];
    assert!(
        eb.as_array()
            .is_some_and(|l| l.iter().any(|e| e["family"] == "memory" && e["count"] == 1)),
        "{eb}"
    );
}

/// The first of Debian's and others' names for a headless Chromium on PATH.
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

#[test]
fn html_is_self_contained_and_renders_in_headless_chromium() {
    let (dir, rec) = incident(true);
    let r = explain::explain(&rec, None, None, &Thresholds::default(), 0).expect("explain");
    let html = render::html::render(&r);
    // Self-contained: no script, no external resource of any kind.
    for bad in ["<script", "src=", "<link", "@import", "url(", "href=\"http"] {
        assert!(!html.contains(bad), "html holds {bad}");
    }
    let charts = html.matches("<svg").count();
    assert!(
        charts > r.episodes.len(),
        "a timeline and a chart per episode"
    );
    let Some(browser) = chromium() else {
        support::skip(
            "html_is_self_contained_and_renders_in_headless_chromium",
            "no chromium on PATH (apt-get install chromium)",
        );
        return;
    };
    let file = dir.path().join("report.html");
    std::fs::write(&file, &html).expect("write html");
    let profile = dir.path().join("profile");
    let out = Command::new("timeout")
        .args([
            "120",
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", file.display()))
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // What the browser built: every episode's section, its charts with the threshold drawn,
    // the episode shaded, and the line.
    assert_eq!(
        dom.matches("<section class=\"episode\"").count(),
        r.episodes.len(),
        "{dom}"
    );
    assert!(dom.contains("class=\"threshold\""), "no threshold line");
    assert!(dom.contains("<rect class=\"episode\""), "no shaded episode");
    assert!(dom.contains("<polyline class=\"series\""), "no series");
    assert_eq!(dom.matches("<svg").count(), charts, "svg lost in parsing");
    // And it paints: a screenshot of the page is written.
    let png = dir.path().join("shot.png");
    let out = Command::new("timeout")
        .args([
            "120",
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=800,1200")
        .arg(format!("file://{}", file.display()))
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).expect("screenshot");
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "{} bytes",
        bytes.len()
    );
}

#[test]
fn damaged_records_are_named_and_the_rest_explained() {
    let (dir, _rec) = incident(true);
    let path = dir.path().join("incident.ptrec");
    let mut bytes = std::fs::read(&path).expect("read");
    // Flip bytes in the first fifth (the quiet phase's records): a damaged record there.
    let at = bytes.len() / 5;
    for b in &mut bytes[at..at + 16] {
        *b ^= 0x5a;
    }
    let bad = dir.path().join("damaged.ptrec");
    std::fs::write(&bad, &bytes).expect("write");
    let rec = Recording::open(&bad).expect("open damaged");
    let r = explain::explain(&rec, None, None, &Thresholds::default(), 0).expect("explain");
    assert!(!r.unreadable.is_empty(), "damage not reported");
    let text = render::text::render(&r, 80);
    assert!(text.contains("could not read:"), "{text}");
    // The incident after the damage is still explained.
    assert_eq!(episode(&r, "dirty").len(), 1, "{text}");
    let out = perftop(&["explain", bad.to_str().expect("utf8")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).is_empty(),
        "no warning on stderr"
    );
}
