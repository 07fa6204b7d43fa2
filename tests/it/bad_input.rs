//! Bad input that must cost a bounded amount and be listed: FIFOs and other non-regular files
//! anywhere in the read set, empty and garbled files, huge tables, many NICs.

use crate::support;

use perftop::root::{Root, Trace};
use perftop::sample::Sample;
use perftop::source::Reader;
use std::fs;
use std::path::Path;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;
use support::fixture;

/// The files one sample of `root` reads (in reading order).
fn files_read(root: &Path) -> Vec<String> {
    let trace = Arc::new(Mutex::new(Trace::default()));
    let mut r = Reader::new(Root::new(root).traced(trace.clone()));
    let _ = r.sample();
    let files = trace.lock().expect("trace").files.clone();
    files
}

/// One sample of `root` read by a fresh reader, or `None` when it took longer than `limit`
/// (the reader thread is left behind, blocked: the test fails anyway).
fn sample_within(root: &Path, limit: Duration) -> Option<Sample> {
    let (tx, rx) = mpsc::channel();
    let root = root.to_path_buf();
    std::thread::spawn(move || {
        let s = Reader::new(Root::new(root)).sample();
        let _ = tx.send(s);
    });
    rx.recv_timeout(limit).ok()
}

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .expect("mkfifo");
}

/// Replaces each file a fixture sample reads, one at a time, with a FIFO (no writer: `open`
/// without `O_NONBLOCK` blocks forever): the sample still completes and lists the path.
#[test]
fn a_fifo_anywhere_in_the_read_set_is_listed_and_never_blocks() {
    for name in ["intel-pstate/t1", "vm-2cpu/t1"] {
        let dir = tempfile::tempdir().expect("tempdir");
        support::copy_tree(&fixture(name), dir.path());
        let files = files_read(dir.path());
        assert!(files.len() > 40, "{name}: only {} files read", files.len());
        for rel in &files {
            let path = dir.path().join(rel);
            let aside = dir.path().join("aside");
            fs::rename(&path, &aside).expect("move aside");
            mkfifo(&path);
            let s = sample_within(dir.path(), Duration::from_secs(20))
                .unwrap_or_else(|| panic!("{name}: a FIFO at {rel} blocks the sample"));
            assert!(
                s.problems
                    .iter()
                    .any(|p| &p.path == rel && p.what == "not a regular file"),
                "{name}: FIFO at {rel} not listed: {:?}",
                s.problems
            );
            fs::remove_file(&path).expect("rm fifo");
            fs::rename(&aside, &path).expect("restore");
        }
    }
}

/// `--config`, `--theme` and a recording segment that are FIFOs are refused at once.
#[test]
fn fifo_config_theme_and_segment_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("x.toml");
    mkfifo(&fifo);
    let (tx, rx) = mpsc::channel();
    let f = fifo.clone();
    std::thread::spawn(move || {
        let config = perftop::config::load(Some(&f)).map(|_| ());
        let theme = perftop::ui::theme::Theme::load(
            &f.display().to_string(),
            perftop::ui::theme::ColorDepth::Mono,
            perftop::ui::theme::GlyphSet::Ascii,
        )
        .map(|_| ());
        let rec = perftop::record::reader::Recording::open(&f).map(|_| ());
        let _ = tx.send((config, theme, rec));
    });
    let (config, theme, rec) = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("a FIFO config, theme or segment blocks");
    for r in [config, theme, rec] {
        let e = format!("{:#}", r.expect_err("a FIFO is refused"));
        assert!(e.contains("not a regular file"), "{e}");
    }
}

/// A `/proc/net/dev` with `n` interfaces (a container host's veths), counters growing with `tick`.
fn many_nics(root: &Path, n: usize, tick: u64) {
    let mut t = String::from(
        "Inter-|   Receive                                                |  Transmit\n \
         face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n",
    );
    for i in 0..n {
        let v = (i as u64 + 1) * (tick + 1);
        t.push_str(&format!(
            "veth{i:06}: {v} {v} 0 0 0 0 0 0 {v} {v} 0 0 0 0 0 0\n"
        ));
    }
    fs::create_dir_all(root.join("proc/net")).expect("mkdir");
    fs::write(root.join("proc/net/dev"), t).expect("write");
    fs::write(
        root.join("proc/uptime"),
        format!("{}.00 0.00\n", 100 + tick),
    )
    .expect("write");
}

/// Pairing interfaces across samples is by name through an index: 50,000 NICs derive in well
/// under a second (a linear search per NIC took ~28 s).
#[test]
fn fifty_thousand_nics_derive_in_bounded_time() {
    const NICS: usize = 50_000;
    let dir = tempfile::tempdir().expect("tempdir");
    many_nics(dir.path(), NICS, 0);
    let mut r = Reader::new(Root::new(dir.path()));
    let t = std::time::Instant::now();
    let a = r.sample();
    let read = t.elapsed();
    many_nics(dir.path(), NICS, 1);
    let b = r.sample();
    assert_eq!(b.net.devices.len(), NICS);
    let t = std::time::Instant::now();
    let d = perftop::assess::assess(Some(&a), &b, &perftop::findings::Thresholds::default());
    let derive = t.elapsed();
    eprintln!("{NICS} NICs: read {read:?}, derive {derive:?}");
    assert_eq!(d.nics.len(), NICS);
    let last = d.nics.last().expect("nics");
    assert_eq!(last.rx_packets_per_s, Some(NICS as f64));
    // Debug build, a shared 2-CPU machine: linear is ~0.1 s, quadratic tens of seconds.
    assert!(derive < Duration::from_secs(3), "derive took {derive:?}");
    assert!(read < Duration::from_secs(20), "read took {read:?}");
    let t = std::time::Instant::now();
    let text = perftop::text::report(&d, 2, 80);
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "report took {:?}",
        t.elapsed()
    );
    assert!(text.len() < 64 << 10, "report is {} bytes", text.len());
}

/// Bytes no kernel text file holds: NUL, invalid UTF-8, and some that look like numbers.
const RANDOM: &[u8] = b"\x00\xff\xfe 12\x9c\x00\x81q:\xc3(\n\x01\x02 7 \xe2\x82\n";

/// Every file a fixture sample reads, emptied (zero bytes) or filled with random bytes in turn,
/// is listed as a problem: "unknown and listed", never silently unknown (or silently zero).
#[test]
fn empty_and_garbled_files_are_listed() {
    let mut silent = Vec::new();
    for name in ["intel-pstate/t1", "vm-2cpu/t1"] {
        let dir = tempfile::tempdir().expect("tempdir");
        support::copy_tree(&fixture(name), dir.path());
        for rel in files_read(dir.path()) {
            let path = dir.path().join(&rel);
            let original = fs::read(&path).expect("read");
            for (what, bytes) in [("empty", &b""[..]), ("random", RANDOM)] {
                fs::write(&path, bytes).expect("write");
                let s = Reader::new(Root::new(dir.path())).sample();
                if !s.problems.iter().any(|p| p.path == rel) {
                    silent.push(format!("{name}: {what} {rel}"));
                }
            }
            fs::write(&path, original).expect("restore");
        }
    }
    assert!(silent.is_empty(), "not listed:\n{}", silent.join("\n"));
}

/// An empty `cpu/online` is unknown, not "no CPU online": /proc/stat still says which are.
#[test]
fn empty_online_file_is_unknown_not_zero() {
    let dir = tempfile::tempdir().expect("tempdir");
    support::copy_tree(&fixture("intel-pstate/t1"), dir.path());
    for text in ["", "\n"] {
        fs::write(dir.path().join("sys/devices/system/cpu/online"), text).expect("write");
        let s = Reader::new(Root::new(dir.path())).sample();
        assert_eq!(s.cpu.online, None, "{text:?}");
        assert_eq!(s.cpu.cpus.iter().filter(|c| c.online).count(), 4);
        assert!(s
            .problems
            .iter()
            .any(|p| p.path == "sys/devices/system/cpu/online"));
        let d = perftop::assess::assess(None, &s, &perftop::findings::Thresholds::default());
        assert_eq!(d.host.cpus_online, 4);
    }
}

/// A positive but subnormal (or sub-millisecond) interval is no interval: no `inf`/`NaN` in
/// rates, finding messages or the report.
#[test]
fn subnormal_interval_gives_no_rates() {
    let a = Reader::new(Root::new(fixture("intel-pstate/t0"))).sample();
    for gap in [5e-324, 1e-300, 1e-9, 0.0009] {
        let mut b = Reader::new(Root::new(fixture("intel-pstate/t1"))).sample();
        let up = a.time.uptime_s.expect("uptime");
        b.time.uptime_s = Some(up + gap);
        b.time.boottime_ns = None;
        let mut a = a.clone();
        a.time.boottime_ns = None;
        let d = perftop::assess::assess(Some(&a), &b, &perftop::findings::Thresholds::default());
        assert_eq!(d.interval_s, None, "gap {gap}");
        assert!(d
            .disks
            .iter()
            .all(|m| m.aqu_sz.is_none() && m.util.is_none()));
        let text = perftop::text::report(&d, 2, 200);
        for f in &d.findings {
            assert!(
                !f.message.contains("inf") && !f.message.contains("NaN"),
                "{}",
                f.message
            );
        }
        // Word by word: the disk table's "inflt" column title is not a number.
        let bad = |w: &str| {
            let w = w
                .trim_matches(|c: char| "()%,;:".contains(c))
                .to_ascii_lowercase();
            w == "inf" || w == "-inf" || w == "nan"
        };
        assert!(!text.split_whitespace().any(bad), "{text}");
    }
}

/// A huge `diskstats` or `interrupts` (damage, or a hostile fixture) is read only as far as a
/// real one of this host could reach: the sample stays bounded in time and size, and the cut
/// is listed.
#[test]
fn huge_tables_are_cut_and_listed() {
    let dir = tempfile::tempdir().expect("tempdir");
    support::copy_tree(&fixture("vm-2cpu/t1"), dir.path());
    let mut disks = String::new();
    let mut irqs = fs::read_to_string(dir.path().join("proc/interrupts")).expect("irqs");
    let mut i = 0u64;
    while disks.len() < 100 << 20 {
        disks.push_str(&format!(
            " 8 {} sd{i} 5020000 0 321280000 753000 2005000 401000 32080000 1002500 3 3000980 1765510 0 0 0 0 40100 4010\n",
            i % 256
        ));
        i += 1;
    }
    let mut n = 1000u64;
    while irqs.len() < 100 << 20 {
        irqs.push_str(&format!(" {n}: 1 2 PCI-MSI {n}-edge q{n}\n"));
        n += 1;
    }
    fs::write(dir.path().join("proc/diskstats"), disks).expect("write");
    fs::write(dir.path().join("proc/interrupts"), irqs).expect("write");
    let t = std::time::Instant::now();
    let s = sample_within(dir.path(), Duration::from_secs(120)).expect("sample");
    let took = t.elapsed();
    eprintln!(
        "100 MB diskstats + interrupts: {took:?}, {} disks, {:?} irqs",
        s.disks.len(),
        s.net.interrupts.as_ref().map(|i| i.irqs.len())
    );
    for rel in ["proc/diskstats", "proc/interrupts"] {
        assert!(
            s.problems.iter().any(|p| p.path == rel
                && (p.what.contains("only that much read") || p.what.contains("only the first"))),
            "{rel} cut not listed: {:?}",
            s.problems
        );
    }
    assert!(s.disks.len() < 100_000, "{} disks", s.disks.len());
    let irqs = s.net.interrupts.as_ref().map_or(0, |i| i.irqs.len());
    assert!(irqs <= 65_536, "{irqs} irqs");
    // Debug build on a shared machine; before the budgets this took tens of seconds.
    assert!(took < Duration::from_secs(30), "{took:?}");
}

/// Every cgroup file a sample reads, garbled (random bytes, or text in no kernel format) or
/// replaced by a FIFO, is listed; a truncated one costs nothing but its values. A group
/// removed between listing and reading (a container stopped) is silently gone, and one with
/// some files gone mid-read keeps what was read; never a panic, never a stalled sample.
#[test]
fn cgroup_files_garbled_truncated_fifo_or_removed_mid_read() {
    for name in ["cgroups/v2/t1", "cgroups/v1/t1"] {
        let dir = tempfile::tempdir().expect("tempdir");
        support::copy_tree(&fixture(name), dir.path());
        let files: Vec<String> = files_read(dir.path())
            .into_iter()
            .filter(|f| f.starts_with("sys/fs/cgroup") || f.ends_with("mountinfo"))
            .collect();
        assert!(
            files.len() > 20,
            "{name}: only {} cgroup files read",
            files.len()
        );
        let mut silent = Vec::new();
        for rel in &files {
            let path = dir.path().join(rel);
            let original = fs::read(&path).expect("read");
            for (what, bytes) in [("random", RANDOM), ("text", &b"garbage here\n"[..])] {
                fs::write(&path, bytes).expect("write");
                let s = Reader::new(Root::new(dir.path())).sample();
                if !s.problems.iter().any(|p| &p.path == rel) {
                    silent.push(format!("{name}: {what} {rel}"));
                }
            }
            let cut = &original[..original.len() / 2];
            fs::write(&path, cut).expect("write");
            let _ = Reader::new(Root::new(dir.path())).sample();
            fs::remove_file(&path).expect("rm");
            mkfifo(&path);
            let s = sample_within(dir.path(), Duration::from_secs(20))
                .unwrap_or_else(|| panic!("{name}: a FIFO at {rel} blocks the sample"));
            assert!(
                s.problems.iter().any(|p| &p.path == rel),
                "{name}: FIFO at {rel} not listed"
            );
            fs::remove_file(&path).expect("rm fifo");
            fs::write(&path, original).expect("restore");
        }
        assert!(silent.is_empty(), "not listed:\n{}", silent.join("\n"));
    }

    // Removed mid-read: the reader listed the groups, then one is gone and another lost its
    // memory files.
    let dir = tempfile::tempdir().expect("tempdir");
    support::copy_tree(&fixture("cgroups/v2/t1"), dir.path());
    let mut r = Reader::new(Root::new(dir.path()));
    let names = |s: &Sample| -> Vec<String> {
        let c = s.cgroups.as_ref().expect("cgroups");
        c.groups.iter().map(|g| g.path.clone()).collect()
    };
    let before = names(&r.sample());
    let cg = dir.path().join("sys/fs/cgroup/system.slice");
    fs::remove_dir_all(cg.join("new.service")).expect("rm group");
    for f in [
        "memory.current",
        "memory.max",
        "memory.events",
        "memory.stat",
    ] {
        let _ = fs::remove_file(cg.join("nginx.service").join(f));
    }
    let s = r.sample();
    assert!(
        s.problems.iter().all(|p| !p.path.contains("cgroup")),
        "{:?}",
        s.problems
    );
    let after = names(&s);
    assert_eq!(after.len() + 1, before.len());
    assert!(!after.iter().any(|p| p.ends_with("new.service")));
    let c = s.cgroups.as_ref().expect("cgroups");
    let nginx = c.groups.iter().find(|g| g.path.ends_with("nginx.service"));
    let nginx = nginx.expect("nginx kept");
    // Its limit is a setting, read again within ten samples: as last read until then.
    assert_eq!(nginx.mem_bytes, None);
    assert_eq!(nginx.mem_max, Some(perftop::sample::Limit::Value(1 << 30)));
    assert!(nginx.usage_us.is_some());
    // Back again: listed at once (a vanished group makes the reader list again).
    fs::create_dir(cg.join("new.service")).expect("mkdir");
    fs::write(cg.join("new.service/cpu.stat"), "usage_usec 5\n").expect("write");
    assert_eq!(names(&r.sample()).len(), before.len());
}
