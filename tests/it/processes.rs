//! Processes: the reader and derive against synthetic `/proc` trees whose rates are known by
//! construction (`support::synth::procs`), and against damaged ones (vanished, garbled,
//! reused pids, zombies, hostile `comm`).

use crate::support;

use perftop::derive::{derive, ProcessMetrics};
use perftop::root::Root;
use perftop::sample::Sample;
use perftop::source::Reader;
use std::fs;
use std::path::Path;
use support::synth::procs::{proc_counters, write_procs};

/// Samples of one reader over `dir` after `write(tick)` for each tick.
fn samples(dir: &Path, ticks: &[u64], write: impl Fn(&Path, u64)) -> Vec<Sample> {
    let mut r = Reader::new(Root::new(dir));
    ticks
        .iter()
        .map(|&t| {
            write(dir, t);
            r.sample()
        })
        .collect()
}

/// Process k's per-second rates by construction: (cpu %, read kB/s, write kB/s, majflt/s).
fn rates(k: u64) -> (f64, f64, f64, f64) {
    let (u1, s1, m1, r1, w1) = proc_counters(k, 1);
    let (u0, s0, m0, r0, w0) = proc_counters(k, 0);
    (
        (u1 + s1 - u0 - s0) as f64, // ticks/s at USER_HZ 100 = % of one CPU
        (r1 - r0) as f64 / 1024.0,
        (w1 - w0) as f64 / 1024.0,
        (m1 - m0) as f64,
    )
}

/// Equal up to float rounding (ticks / 100 / seconds x 100).
fn close(got: Option<f64>, want: f64, what: &str) {
    let g = got.unwrap_or(f64::NAN);
    assert!((g - want).abs() < 1e-9, "{what}: {got:?} vs {want}");
}

fn k_of(m: &ProcessMetrics) -> u64 {
    u64::from(m.pid) - 1000
}

#[test]
fn rates_counts_and_ranking_match_the_synthetic_host() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    let n = 300;
    let s = samples(dir.path(), &[0, 1], |d, t| {
        write_procs(d, n, t).expect("write procs")
    });
    let d = derive(Some(&s[0]), &s[1]);
    let tasks = d.host.tasks.as_ref().expect("task counts");
    assert_eq!(tasks.total, 300);
    // D when k % 97 == 5: k = 5, 102, 199, 296.
    assert_eq!(tasks.blocked, 4);
    assert_eq!(tasks.io_read, 300);
    assert_eq!(tasks.io_unknown, None);
    assert!(!d.processes.is_empty());
    for m in &d.processes {
        let k = k_of(m);
        let (cpu, r, w, f) = rates(k);
        for (got, want, what) in [
            (m.cpu_pct, cpu, "cpu"),
            (m.read_kb_per_s, r, "read"),
            (m.write_kb_per_s, w, "write"),
            (m.major_faults_per_s, f, "faults"),
        ] {
            close(got, want, &format!("k {k} {what}"));
        }
        assert_eq!(m.rss_kb, Some((1000 + k) * 4), "k {k}");
        assert_eq!(m.comm, format!("worker {k}"));
        assert_eq!(
            m.cgroup.as_deref(),
            Some(&*format!("/system.slice/svc{}.service", k % 20))
        );
    }
    // The busiest by CPU: k % 50 == 49 use 49% each (k % 10 == 0 adds a stime tick, at most
    // 40 + 1): k = 49, 99, 149, 199, 249, 299 rank first, I/O deciding their order.
    let top: Vec<u64> = d.processes.iter().take(6).map(k_of).collect();
    let mut sorted = top.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, vec![49, 99, 149, 199, 249, 299], "{top:?}");
    // Activity order: CPU% + MiB/s of I/O + faults/10 + 1 when blocked.
    for w in d.processes.windows(2) {
        assert!(w[0].activity >= w[1].activity);
    }
    // Every blocked process is kept.
    let blocked: Vec<u64> = d
        .processes
        .iter()
        .filter(|m| m.state == "D")
        .map(k_of)
        .collect();
    assert_eq!(blocked.len(), 4, "{blocked:?}");
    // The JSON holds the top 20, in the same order.
    let json = serde_json::to_value(&d).expect("json");
    let list = json["processes"].as_array().expect("processes[]");
    assert_eq!(list.len(), 20.min(d.processes.len()));
    assert_eq!(list[0]["pid"], d.processes[0].pid);
    for key in [
        "pid",
        "comm",
        "state",
        "cpu_pct",
        "read_kb_per_s",
        "write_kb_per_s",
        "major_faults_per_s",
        "rss_kb",
        "cgroup",
    ] {
        assert!(list[0].get(key).is_some(), "{key}");
    }
}

/// A process the previous pass did not keep carries its previous counters (`base`), so its
/// rates are known at once; across a gap (not the adjacent sample) only a process present
/// in both samples has rates, over the whole gap.
#[test]
fn entrants_get_rates_from_their_base_and_gaps_pair_by_pid() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    let s = samples(dir.path(), &[0, 1, 2], |d, t| {
        write_procs(d, 300, t).expect("write procs")
    });
    let p1 = s[1].processes.as_ref().expect("processes");
    let p2 = s[2].processes.as_ref().expect("processes");
    // Kept at tick 1 and 2 alike: no base needed the second time.
    assert!(p2.tasks.iter().all(|t| t.base.is_none()), "{:?}", p2.tasks);
    assert_eq!(p1.base_wall_ms, Some(s[0].time.wall_ms));
    // Over 0 → 2 (a gap): processes kept in both have rates over two seconds, equal to the
    // per-second rates by construction.
    let d = derive(Some(&s[0]), &s[2]);
    let kept0: Vec<u32> = s[0]
        .processes
        .as_ref()
        .expect("processes")
        .tasks
        .iter()
        .map(|t| t.pid)
        .collect();
    for m in &d.processes {
        if kept0.contains(&m.pid) {
            close(m.cpu_pct, rates(k_of(m)).0, &m.pid.to_string());
        } else {
            assert_eq!(m.cpu_pct, None, "{}: no pair across a gap", m.pid);
        }
    }
    // A base is used only when the previous sample is the pass it was read in.
    let mut gap = s[2].clone();
    let t = &mut gap.processes.as_mut().expect("processes").tasks[0];
    t.base = Some(t.counters);
    let pid = t.pid;
    let mut prev = s[0].clone();
    prev.processes
        .as_mut()
        .expect("processes")
        .tasks
        .retain(|t| t.pid != pid);
    let d = derive(Some(&prev), &gap);
    let m = d.processes.iter().find(|m| m.pid == pid).expect("kept");
    assert_eq!(m.cpu_pct, None);
}

/// Damage: a process gone between listing and reading, a garbled `stat`, a zombie without
/// `io`, a `comm` with parentheses, spaces and a newline, a reused pid. Each is skipped or
/// unknown; nothing panics and nothing else is lost.
#[test]
fn vanished_garbled_reused_and_hostile_processes() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    let proc = dir.path().join("proc");
    let write = |d: &Path, t: u64| {
        write_procs(d, 20, t).expect("write procs");
        let p = d.join("proc");
        // Gone: a directory without files (ENOENT on open).
        fs::create_dir_all(p.join("5000")).expect("mkdir");
        // Garbled.
        fs::create_dir_all(p.join("5001")).expect("mkdir");
        fs::write(p.join("5001/stat"), "5001 (x S 1 2\n").expect("write");
        // A zombie: no io counters.
        fs::create_dir_all(p.join("5002")).expect("mkdir");
        fs::write(
            p.join("5002/stat"),
            "5002 (defunct) Z 1 5002 5002 0 -1 4227084 0 0 0 0 7 3 0 0 20 0 1 0 200 0 0 \
             18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
        )
        .expect("write");
        // A hostile comm; its pid reused at tick 1 (a new start time).
        fs::create_dir_all(p.join("5003")).expect("mkdir");
        let start = 300 + t * 50;
        fs::write(
            p.join("5003/stat"),
            format!(
                "5003 (a) (b\nc d) R 1 5003 5003 0 -1 4194560 0 0 9 0 {} 0 0 0 20 0 1 0 {start} \
                 0 9999999 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 \
                 0 0\n",
                500 + t * 90
            ),
        )
        .expect("write");
        fs::write(p.join("5003/io"), "read_bytes: 0\nwrite_bytes: 0\n").expect("write");
    };
    let s = samples(dir.path(), &[0, 1], write);
    assert!(proc.exists());
    let p = s[1].processes.as_ref().expect("processes");
    assert_eq!(p.total, 22, "20 synthetic + the zombie + the reused pid");
    assert_eq!(p.zombies, 1);
    let d = derive(Some(&s[0]), &s[1]);
    let hostile = d
        .processes
        .iter()
        .find(|m| m.pid == 5003)
        .expect("kept: busiest");
    assert_eq!(hostile.comm, "a) (b\nc d");
    // A new process under an old pid: no rate, though its ticks grew.
    assert_eq!(hostile.cpu_pct, None);
    // 9999999 pages: RSS is the largest, kept; the screen escapes the newline.
    assert_eq!(hostile.rss_kb, Some(9_999_999 * 4));
    assert_eq!(
        perftop::view::processes::display_name(hostile),
        "a) (b?c d",
        "control characters replaced"
    );
    // Processes come and go: none of them is a problem of the sample.
    let procs: Vec<_> = s[1]
        .problems
        .iter()
        .filter(|p| p.path.starts_with("proc/5"))
        .collect();
    assert!(procs.is_empty(), "{procs:?}");
}

/// Command lines of the kept processes: arguments parted by spaces, control characters
/// escaped, at most 256 bytes, none for a kernel thread or an empty `cmdline`; the JSON and
/// the zoomed pane's filter carry them.
#[test]
fn command_lines_of_the_kept_processes() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    let n = 300;
    let long = "y".repeat(600);
    let s = samples(dir.path(), &[0, 1], |d, t| {
        write_procs(d, n, t).expect("write procs");
        let p = |k: u64| d.join(format!("proc/{}", 1000 + k));
        fs::write(p(49).join("cmdline"), b"java\0-Xmx4g\0-jar\0app.jar\0").expect("w");
        fs::write(p(99).join("cmdline"), b"evil\n\x1b[2J\0arg").expect("w");
        fs::write(p(149).join("cmdline"), long.as_bytes()).expect("w");
        fs::write(p(199).join("cmdline"), b"").expect("w");
    });
    let d = derive(Some(&s[0]), &s[1]);
    let of = |k: u64| {
        d.processes
            .iter()
            .find(|m| k_of(m) == k)
            .unwrap_or_else(|| panic!("k {k} kept"))
            .cmdline
            .clone()
    };
    assert_eq!(of(49).as_deref(), Some("java -Xmx4g -jar app.jar"));
    assert_eq!(of(99).as_deref(), Some("evil\\n\\u{1b}[2J arg"));
    assert_eq!(of(149), Some("y".repeat(256)));
    assert_eq!(of(199), None, "empty cmdline");
    assert_eq!(of(249), None, "no cmdline file");
    let json = serde_json::to_value(&d).expect("json");
    let java = json["processes"]
        .as_array()
        .expect("processes[]")
        .iter()
        .find(|p| p["pid"] == 1049)
        .expect("k 49 in the JSON");
    assert_eq!(java["cmdline"], "java -Xmx4g -jar app.jar");
}
