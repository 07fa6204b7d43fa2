//! Disk metrics must print exactly what `iostat -x` (sysstat 12.x) prints, to two decimals.
//!
//! Two kinds of evidence:
//! - hand-computed cases from the fixture diskstats, with the arithmetic in the comments
//!   (sysstat `compute_ext_disk_stats` + `write_ext_stat`: rate = Δcount/Δt, kB/s =
//!   Δsectors/2/Δt, await = Δticks/Δios, areq-sz = Δsectors/Δios/2, %rrqm =
//!   Δmerges/(Δmerges+Δios), aqu-sz = Δtime_in_queue/(Δt*1000), %util = Δio_ticks/(Δt*1000)*100;
//!   per-I/O values are 0.00 when no I/O of that kind completed);
//! - `tests/fixtures/<f>/iostat-x.txt` (also `real/<host>/`): the output of sysstat 12.6.1's
//!   real `iostat -x` run over the same fixture files (interval t0 -> t1, then its since-boot report of t1), made by
//!   `tests/fixtures/iostat-x.sh`. Every number in it is compared with ours.
//!
//! Where iostat prints 0.00 for something the kernel did not report (discard and flush columns
//! of an 11-field line, flush of a 15-field line) perftop says unknown (null), and for a device
//! whose counters went down (re-created) perftop gives null where iostat prints numbers
//! computed against zero.

use crate::support;
use perftop::derive::{derive, Derived, DiskMetrics};
use std::process::Command;
use support::{fixture, read};

fn interval(name: &str) -> Derived {
    derive(Some(&read(name, "t0")), &read(name, "t1"))
}

#[track_caller]
fn disk<'a>(d: &'a Derived, name: &str) -> &'a DiskMetrics {
    d.disks
        .iter()
        .find(|x| x.disk_device == name)
        .unwrap_or_else(|| panic!("no disk {name}"))
}

/// iostat's `%.2f`; `-` for unknown.
fn two(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |x| format!("{x:.2}"))
}

/// The 22 columns in iostat -x order, as named in our JSON contract.
const COLUMNS: [&str; 22] = [
    "r/s", "rkB/s", "rrqm/s", "rrqm", "r_await", "rareq-sz", "w/s", "wkB/s", "wrqm/s", "wrqm",
    "w_await", "wareq-sz", "d/s", "dkB/s", "drqm/s", "drqm", "d_await", "dareq-sz", "f/s",
    "f_await", "aqu-sz", "util",
];

/// All 22 columns of one device, two decimals each.
fn row(m: &DiskMetrics) -> Vec<String> {
    [
        m.r_s, m.rkb_s, m.rrqm_s, m.rrqm, m.r_await, m.rareq_sz, m.w_s, m.wkb_s, m.wrqm_s, m.wrqm,
        m.w_await, m.wareq_sz, m.d_s, m.dkb_s, m.drqm_s, m.drqm, m.d_await, m.dareq_sz, m.f_s,
        m.f_await, m.aqu_sz, m.util,
    ]
    .into_iter()
    .map(two)
    .collect()
}

#[track_caller]
fn assert_row(m: &DiskMetrics, want: &str) {
    let want: Vec<&str> = want.split_whitespace().collect();
    let got = row(m);
    for (i, col) in COLUMNS.iter().enumerate() {
        assert_eq!(got[i], want[i], "{} {col}", m.disk_device);
    }
}

// ------------------------------------------------------------------ hand-computed cases

#[test]
fn virtio_17_fields() {
    // vm-2cpu vda, Δt = 1002.00 - 1000.00 = 2 s. Δ: reads 300, rmerges 100, rsect 24000,
    // rticks 450; writes 500, wmerges 250, wsect 16000, wticks 1500; io_ticks 1200,
    // time_in_queue 2100; discards 4, dmerges 1, dsect 2048, dticks 6; flushes 40, fticks 20.
    let d = interval("vm-2cpu");
    let m = disk(&d, "vda");
    // r/s 300/2 = 150; rkB/s 24000/2/2 = 6000; rrqm/s 100/2 = 50; %rrqm 100/(100+300) = 25;
    // r_await 450/300 = 1.50; rareq-sz 24000/300/2 = 40.
    // w/s 250; wkB/s 16000/2/2 = 4000; wrqm/s 125; %wrqm 250/750 = 33.33; w_await 1500/500 = 3;
    // wareq-sz 16000/500/2 = 16. d/s 2; dkB/s 2048/2/2 = 512; drqm/s 0.5; %drqm 1/5 = 20;
    // d_await 6/4 = 1.5; dareq-sz 2048/4/2 = 256. f/s 20; f_await 20/40 = 0.5.
    // aqu-sz 2100/2000 = 1.05; %util 1200/2000 = 60.
    assert_row(
        m,
        "150.00 6000.00 50.00 25.00 1.50 40.00 250.00 4000.00 125.00 33.33 3.00 16.00 \
         2.00 512.00 0.50 20.00 1.50 256.00 20.00 0.50 1.05 60.00",
    );
    assert!(!m.parallel);
}

#[test]
fn nvme_without_discards() {
    // intel-pstate nvme0n1, Δt = 1 s. Δ: reads 20000, rsect 1280000, rticks 3000; writes 5000,
    // wmerges 1000, wsect 80000, wticks 2500; no discards; flushes 100, fticks 10;
    // io_ticks 980, time_in_queue 5510.
    let d = interval("intel-pstate");
    let m = disk(&d, "nvme0n1");
    // rkB/s 1280000/2 = 640000; r_await 3000/20000 = 0.15; rareq-sz 1280000/20000/2 = 32;
    // %wrqm 1000/6000 = 16.67; w_await 0.5; wareq-sz 80000/5000/2 = 8;
    // no discard completed: d_await and dareq-sz print 0.00; f_await 10/100 = 0.10;
    // aqu-sz 5510/1000 = 5.51; %util 980/1000 = 98.
    assert_row(
        m,
        "20000.00 640000.00 0.00 0.00 0.15 32.00 5000.00 40000.00 1000.00 16.67 0.50 8.00 \
         0.00 0.00 0.00 0.00 0.00 0.00 100.00 0.10 5.51 98.00",
    );
    // NVMe serves requests in parallel: %util near 100 is not saturation.
    assert!(m.parallel);
    assert_eq!(m.inflight, Some(3)); // sys/block/nvme0n1/inflight "1 2"
}

#[test]
fn old_kernel_11_fields_and_dm() {
    // acpi-shared (4.4, 11 stat fields), Δt = 301.50 - 300.00 = 1.5 s.
    let d = interval("acpi-shared");
    // sda Δ: reads 150, rmerges 30, rsect 12000, rticks 1200; writes 300, wmerges 150,
    // wsect 19200, wticks 4500; io_ticks 1425; time_in_queue 5700.
    // r/s 100; rkB/s 12000/2/1.5 = 4000; rrqm/s 20; %rrqm 30/180 = 16.67; r_await 8;
    // rareq-sz 40; w/s 200; wkB/s 6400; wrqm/s 100; %wrqm 150/450 = 33.33; w_await 15;
    // wareq-sz 32; aqu-sz 5700/1500 = 3.80; %util 1425/1500 = 95.
    // The kernel printed no discard/flush fields: unknown, where iostat prints 0.00.
    assert_row(
        disk(&d, "sda"),
        "100.00 4000.00 20.00 16.67 8.00 40.00 200.00 6400.00 100.00 33.33 15.00 32.00 \
         - - - - - - - - 3.80 95.00",
    );
    // dm-0 Δ: reads 180, rsect 12000, rticks 2000; writes 450, wsect 19200, wticks 9000;
    // io_ticks 1450; time_in_queue 11000. r_await 2000/180 = 11.11; rareq-sz 12000/180/2 =
    // 33.33; w_await 20; wareq-sz 21.33; aqu-sz 11000/1500 = 7.33; %util 1450/1500 = 96.67.
    assert_row(
        disk(&d, "dm-0"),
        "120.00 4000.00 0.00 0.00 11.11 33.33 300.00 6400.00 0.00 0.00 20.00 21.33 \
         - - - - - - - - 7.33 96.67",
    );
    // sda1 is a 2.6-style 4-field partition line: ios and sectors only.
    // reads +140 / 1.5 = 93.33; rsect +11200 / 2 / 1.5 = 3733.33; rareq-sz 11200/140/2 = 40.
    let p = disk(&d, "sda1");
    assert_eq!(two(p.r_s), "93.33");
    assert_eq!(two(p.rkb_s), "3733.33");
    assert_eq!(two(p.rareq_sz), "40.00");
    for (col, v) in [
        ("rrqm/s", p.rrqm_s),
        ("r_await", p.r_await),
        ("aqu-sz", p.aqu_sz),
        ("util", p.util),
    ] {
        assert_eq!(v, None, "sda1 {col} is not in a 4-field line");
    }
}

#[test]
fn wrapped_ticks() {
    // wrap sdb, Δt = 1 s: read_ticks 4294967000 -> 204 (Δ 500), io_ticks 4294966796 -> 300
    // (Δ 800), time_in_queue 4294967295 -> 1499 (Δ 1500). Same as sysstat's unsigned int math.
    let d = interval("wrap");
    assert_row(
        disk(&d, "sdb"),
        "250.00 10000.00 0.00 0.00 2.00 40.00 100.00 400.00 0.00 0.00 10.00 4.00 \
         0.00 0.00 0.00 0.00 0.00 0.00 - - 1.50 80.00",
    );
}

#[test]
fn idle_disk_prints_zeroes() {
    // numa-2node-memless sda did nothing in the interval: iostat prints 0.00 in every column
    // (no division by zero, no unknown: the kernel did report every field).
    let d = interval("numa-2node-memless");
    assert_row(
        disk(&d, "sda"),
        "0.00 0.00 0.00 0.00 0.00 0.00 0.00 0.00 0.00 0.00 0.00 0.00 \
         0.00 0.00 0.00 0.00 0.00 0.00 0.00 0.00 0.00 0.00",
    );
}

// ------------------------------------------------------------------ against the real iostat

struct Golden {
    /// (device, column name as iostat prints it, value as iostat prints it)
    interval: Vec<(String, Vec<(String, String)>)>,
    boot: Vec<(String, Vec<(String, String)>)>,
}

fn golden(name: &str) -> Golden {
    let path = fixture(name).join("iostat-x.txt");
    let text = std::fs::read_to_string(&path).expect("iostat-x.txt");
    let mut g = Golden {
        interval: Vec::new(),
        boot: Vec::new(),
    };
    let mut header: Vec<String> = Vec::new();
    let mut in_boot = false;
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first() {
            None => continue,
            Some(&"sysstat") => continue,
            Some(&"boot") => in_boot = true,
            Some(&"Device") => header = words[1..].iter().map(|s| s.to_string()).collect(),
            Some(dev) => {
                let cols: Vec<(String, String)> = header
                    .iter()
                    .cloned()
                    .zip(words[1..].iter().map(|s| s.to_string()))
                    .collect();
                assert_eq!(cols.len(), 22, "{name}: {line}");
                let target = if in_boot {
                    &mut g.boot
                } else {
                    &mut g.interval
                };
                target.push((dev.to_string(), cols));
            }
        }
    }
    g
}

/// Maps iostat's column title to our JSON key (`%rrqm` -> `rrqm`, `%util` -> `util`).
fn json_key(col: &str) -> &str {
    col.trim_start_matches('%')
}

/// Compares every number iostat printed with ours; returns how many were compared.
fn compare(
    name: &str,
    section: &str,
    rows: &[(String, Vec<(String, String)>)],
    d: &Derived,
    reset: &[&str],
) -> usize {
    let mut n = 0;
    for (dev, cols) in rows {
        let m = disk(d, dev);
        let fields = m_fields(name, dev);
        let json = serde_json::to_value(m).expect("disk serializes");
        for (col, want) in cols {
            let key = json_key(col);
            let got = json
                .get(key)
                .unwrap_or_else(|| panic!("contract has no key {key:?}"));
            match got.as_f64() {
                Some(v) => {
                    assert_eq!(&format!("{v:.2}"), want, "{name} {section} {dev} {col}");
                    n += 1;
                }
                None => {
                    // Unknown is allowed only where the kernel line lacks the field or the
                    // device was re-created; iostat shows 0.00 or numbers against zero there.
                    let missing_field = (key.starts_with('d') && fields < 15)
                        || (key.starts_with('f') && fields < 17);
                    assert!(
                        missing_field || reset.contains(&dev.as_str()),
                        "{name} {section} {dev} {col}: null, iostat says {want}"
                    );
                }
            }
        }
    }
    n
}

/// Stat field count of a device in the fixture's t1 diskstats.
fn m_fields(name: &str, dev: &str) -> u8 {
    read(name, "t1")
        .disks
        .iter()
        .find(|x| x.name == dev)
        .map_or(0, |x| x.fields)
}

#[test]
fn matches_sysstat_iostat_x_on_every_fixture() {
    let mut compared = 0;
    for (name, reset) in [
        ("vm-2cpu", &[][..]),
        ("intel-pstate", &[][..]),
        ("acpi-shared", &[][..]),
        ("numa-2node-memless", &[][..]),
        ("wrap", &["sdc"][..]),
        // A real 16-CPU host under a 6 GB dd (vda), copied by `perftop capture`.
        ("real/h100vm-16cpu-load", &[][..]),
        // The lent 16-CPU host under a 16 GB dd, captured in one pass each (-d 10).
        ("real/h100-16cpu-capture", &[][..]),
    ] {
        let g = golden(name);
        assert!(!g.interval.is_empty() && !g.boot.is_empty(), "{name}");
        let t1 = read(name, "t1");
        compared += compare(name, "interval", &g.interval, &interval(name), reset);
        // The first report (no previous sample) is the since-boot average, like iostat's.
        compared += compare(name, "since boot", &g.boot, &derive(None, &t1), &[]);
    }
    // 18 device rows of 22 columns plus the real hosts' 2 x 11 each (1304 values in all); the
    // rest are the documented nulls.
    assert!(
        compared >= 330 + 2 * (2 * 11 * 22),
        "only {compared} values compared"
    );
}

#[test]
fn cli_delta_matches_iostat() {
    // The same numbers through the `perftop snapshot` / `perftop delta` JSON contract.
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = env!("CARGO_BIN_EXE_perftop");
    for when in ["t0", "t1"] {
        let out = Command::new(bin)
            .arg("snapshot")
            .arg("--root")
            .arg(fixture("vm-2cpu").join(when))
            .arg("-o")
            .arg(dir.path().join(format!("{when}.json")))
            .output()
            .expect("run snapshot");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = Command::new(bin)
        .arg("delta")
        .arg(dir.path().join("t0.json"))
        .arg(dir.path().join("t1.json"))
        .output()
        .expect("run delta");
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("delta is JSON");
    let disks = v["disks"].as_array().expect("disks array");
    let g = golden("vm-2cpu");
    for (dev, cols) in &g.interval {
        let m = disks
            .iter()
            .find(|x| x["disk_device"] == dev.as_str())
            .unwrap_or_else(|| panic!("no {dev} in delta output"));
        for (col, want) in cols {
            let got = m[json_key(col)].as_f64().expect("known value");
            assert_eq!(&format!("{got:.2}"), want, "{dev} {col}");
        }
    }
}
