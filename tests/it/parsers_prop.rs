//! Property tests: the kernel-file parsers and a whole `Reader` never panic, whatever the files
//! contain, and what they do accept is self-consistent. Inputs are arbitrary strings, kernel-ish
//! token soup, and real fixture files cut and spliced with noise (the shapes a truncated read or a
//! changed kernel format produce). Case counts are modest so the suite stays fast.

use perftop::assess::assess;
use perftop::cpulist::CpuList;
use perftop::derive::cgroups::display_name;
use perftop::findings::Thresholds;
use perftop::root::Root;
use perftop::source::cgroups::{
    key_values, parse_cfs_quota, parse_cpu_max, parse_io_stat, parse_limit, parse_mountinfo,
};
use perftop::source::disk::parse_line;
use perftop::source::irq::parse_interrupts;
use perftop::source::net::{parse_softirqs, parse_softnet};
use perftop::source::parse::kv_lines;
use perftop::source::processes::{parse_cgroup, parse_cmdline, parse_io, parse_stat};
use perftop::source::{Probe, Reader};
use proptest::prelude::*;

fn fixture_file(rel: &str) -> Vec<u8> {
    std::fs::read(crate::support::fixture(rel)).unwrap_or_default()
}

fn probe() -> Probe {
    Probe::new(Root::new("/nonexistent"))
}

/// Kernel-looking tokens: numbers of every width, hex, CPU headers, separators, handler words.
/// One index and one number pick a token, which keeps generation cheap (a `prop_oneof!` of
/// many arms builds a value tree per arm).
fn token() -> impl Strategy<Value = String> {
    const WORDS: [&str; 28] = [
        "18446744073709551616",
        "4294967295",
        "-1",
        "nan",
        "inf",
        "1e400",
        ":",
        " ",
        "   ",
        "\n",
        "\t",
        ",",
        "-",
        "kB",
        "Node",
        "1-edge",
        "IR-PCI-MSI",
        "eth0-TxRx-1",
        "mlx5_comp3@pci:0000:3b:00.0",
        "NET_RX:",
        "MemTotal:",
        "sda",
        "(",
        ")",
        "[",
        "]",
        "\u{e9}",
        "x",
    ];
    (0usize..WORDS.len() + 4, any::<u64>()).prop_map(|(i, n)| match i.checked_sub(WORDS.len()) {
        None => WORDS[i].to_string(),
        Some(0) => (n % 5_000).to_string(),
        Some(1) => n.to_string(),
        Some(2) => format!("{:08x}", n as u32),
        _ => format!("CPU{}", n % 8),
    })
}

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(token(), 0..40).prop_map(|t| t.concat())
}

/// A real fixture file, cut at `cut` and with `noise` spliced in at `at`.
fn spliced(base: &[u8], cut: usize, at: usize, noise: &[u8]) -> Vec<u8> {
    let mut v = base.to_vec();
    if !v.is_empty() {
        v.truncate(cut % (v.len() + 1));
    }
    let at = at % (v.len() + 1);
    v.splice(at..at, noise.iter().copied());
    v
}

fn mutated(rel: &'static str) -> impl Strategy<Value = String> {
    let base = fixture_file(rel);
    (
        any::<usize>(),
        any::<usize>(),
        prop_oneof![soup().prop_map(String::into_bytes), any::<Vec<u8>>()],
    )
        .prop_map(move |(cut, at, noise)| {
            String::from_utf8_lossy(&spliced(&base, cut, at, &noise)).into_owned()
        })
}

/// `base` (a real file's text) cut and spliced with noise, as `mutated` does with a fixture.
fn mutated_text(base: &'static str) -> impl Strategy<Value = String> {
    (
        any::<usize>(),
        any::<usize>(),
        prop_oneof![soup().prop_map(String::into_bytes), any::<Vec<u8>>()],
    )
        .prop_map(move |(cut, at, noise)| {
            String::from_utf8_lossy(&spliced(base.as_bytes(), cut, at, &noise)).into_owned()
        })
}

/// This VM's `/proc/PID/stat`, `io` and `cgroup` of one process (a comm with a space).
const STAT: &str = "1151 (tokio rt) S 1 1151 1151 0 -1 4194560 1363 0 2 0 54 31 0 0 20 0 3 0 1842 \
                    10477568 1180 18446744073709551615 1 1 0 0 0 0 65536 4 65536 0 0 0 17 1 0 0 0 0 0\n";
const IO: &str = "rchar: 3018\nwchar: 2\nsyscr: 12\nsyscw: 1\nread_bytes: 4096\n\
                  write_bytes: 8192\ncancelled_write_bytes: 0\n";
const CGROUP: &str = "12:memory:/process_api\n11:cpu,cpuacct:/\n1:name=systemd:/init.scope\n0::/\n";

/// Text for a parser: arbitrary, token soup, or a damaged real file.
fn input(rel: &'static str) -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), soup(), mutated(rel)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn diskstats_line(line in input("vm-2cpu/t1/proc/diskstats")) {
        for l in line.lines() {
            if let Some(d) = parse_line(l) {
                prop_assert!(d.fields == 4 || (11..=17).contains(&d.fields), "{}", d.fields);
                prop_assert_eq!(d.discard_ios.is_some(), d.fields >= 15);
                prop_assert_eq!(d.flush_ios.is_some(), d.fields >= 17);
                prop_assert!(!d.name.is_empty());
            }
        }
    }

    #[test]
    fn softirqs(text in input("acpi-shared/t1/proc/softirqs")) {
        let mut p = probe();
        if let Some(s) = parse_softirqs(&mut p, &text) {
            for r in &s.rows {
                prop_assert_eq!(r.counts.len(), s.cpus.len());
            }
        }
    }

    #[test]
    fn softnet(text in input("vm-2cpu/t1/proc/net/softnet_stat"), online in "[0-9,-]{0,12}") {
        let online = CpuList::parse(&online);
        let mut p = probe();
        let rows = parse_softnet(&mut p, &text, online.as_ref());
        prop_assert!(rows.len() <= text.lines().count());
        prop_assert!(rows.windows(2).all(|w| w[0].cpu <= w[1].cpu));
    }

    #[test]
    fn interrupts(text in input("intel-pstate/t1/proc/interrupts")) {
        let mut p = probe();
        let irqs = parse_interrupts(&mut p, &text);
        for line in irqs.irqs.iter() {
            for (cpu, n) in &line.counts {
                prop_assert!(irqs.cpus.contains(cpu));
                prop_assert!(*n > 0);
            }
        }
    }

    #[test]
    fn key_value_tables(text in input("numa-2node-memless/t1/proc/meminfo")) {
        let mut good = 0usize;
        let bad = kv_lines(&text, |_, _| good += 1);
        let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
        prop_assert!(good + bad <= lines, "{} + {} > {}", good, bad, lines);
    }

    #[test]
    fn process_stat(text in prop_oneof![any::<String>(), soup(), mutated_text(STAT)]) {
        if let Some(s) = parse_stat(&text) {
            // comm is what lies between the first `(` and the last `)`.
            let (open, close) = (text.find('(').unwrap_or(0), text.rfind(')').unwrap_or(0));
            prop_assert_eq!(Some(&*s.comm), text.get(open + 1..close));
            prop_assert!(s.state != ' ');
        }
    }

    #[test]
    fn process_io(text in prop_oneof![any::<String>(), soup(), mutated_text(IO)]) {
        if let Some((r, w)) = parse_io(&text) {
            // Only ever what a `read_bytes:` / `write_bytes:` line says.
            for (k, v) in [("read_bytes", r), ("write_bytes", w)] {
                let said = |l: &str| l.split_once(':').is_some_and(|(key, val)| key == k && val.trim() == v.to_string());
                prop_assert!(text.lines().any(said), "{} {}", k, v);
            }
        }
    }

    #[test]
    fn process_cgroup(text in prop_oneof![any::<String>(), soup(), mutated_text(CGROUP)]) {
        if let Some(path) = parse_cgroup(&text) {
            prop_assert!(text.contains(path.as_str()));
        }
    }

    #[test]
    fn process_cmdline(bytes in prop_oneof![any::<Vec<u8>>(), soup().prop_map(String::into_bytes)]) {
        if let Some(line) = parse_cmdline(&bytes) {
            prop_assert!(line.len() <= 256);
            prop_assert!(!line.chars().any(char::is_control), "{:?}", line);
            prop_assert_eq!(line.trim(), line.as_str());
        }
    }

    #[test]
    fn cgroup_mountinfo(text in input("cgroups/v1/t1/proc/self/mountinfo")) {
        let m = parse_mountinfo(&text);
        for mount in [m.v2, m.cpu, m.cpuacct, m.memory].into_iter().flatten() {
            prop_assert!(!mount.dir.starts_with('/'), "{}", mount.dir);
        }
    }

    #[test]
    fn cgroup_tables(text in input("cgroups/v2/t1/sys/fs/cgroup/system.slice/cpu.stat")) {
        let [usage, periods] = key_values(&text, &["usage_usec", "nr_periods"]);
        // A value is only ever what a `key value` line of the text says.
        for (k, v) in [("usage_usec", usage), ("nr_periods", periods)] {
            if let Some(v) = v {
                let line = format!("{k} {v}");
                prop_assert!(text.lines().any(|l| l.split_ascii_whitespace().collect::<Vec<_>>().join(" ") == line));
            }
        }
        let _ = parse_limit(text.trim());
        let _ = parse_cfs_quota(&text);
        if let Some((_, period)) = parse_cpu_max(&text) {
            prop_assert!(period > 0);
        }
    }

    #[test]
    fn cgroup_io_stat(text in input("cgroups/v2/t1/sys/fs/cgroup/system.slice/docker-3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00998877665544332211.scope/io.stat")) {
        if let Some(io) = parse_io_stat(&text) {
            // Summed with saturation: never below one device's count (no wrap).
            let most = text
                .split_ascii_whitespace()
                .filter_map(|w| w.strip_prefix("rbytes=")?.parse::<u64>().ok())
                .max()
                .unwrap_or(0);
            prop_assert!(io.rbytes >= most);
        }
    }

    #[test]
    fn cgroup_names(path in prop_oneof![any::<String>(), soup(), "(/[a-z0-9_.:-]{0,70}){0,6}"]) {
        let n = display_name(&path);
        prop_assert!(!n.is_empty());
    }

    #[test]
    fn cpu_lists(s in prop_oneof![any::<String>(), "[0-9,\\- \n]{0,24}", soup()]) {
        if let Some(l) = CpuList::parse(&s) {
            prop_assert!(l.ids().windows(2).all(|w| w[0] < w[1]));
            prop_assert!(l.ids().iter().all(|&id| id <= 1 << 20));
            // What we print we can read back.
            prop_assert_eq!(CpuList::parse(&l.to_string()), Some(l));
        }
    }

    #[test]
    fn cpu_masks(s in prop_oneof![any::<String>(), "[0-9a-fA-F,]{0,40}", soup()]) {
        if let Some(l) = CpuList::parse_mask(&s) {
            let words = s.trim().split(',').count() as u32;
            prop_assert!(l.ids().iter().all(|&id| id < words * 32));
        }
    }
}

/// This VM's `/proc/net/snmp` Tcp and Udp lines and `/proc/net/sockstat` (Linux 6.18).
const SNMP: &str = "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails \
EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n\
Tcp: 1 200 120000 -1 4 4 0 0 1 387932 387176 0 0 6 0\n\
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n\
Udp: 944 0 0 944 0 0 0 0 0\n";
const SOCKSTAT: &str =
    "sockets: used 10\nTCP: inuse 1 orphan 0 tw 1 alloc 1 mem 147\nUDP: inuse 0 mem 0\n";
const NET_TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr\n\
    0: 0100007F:1F90 00000000:0000 0A 00000000:00000002 00:00000000\n\
    1: 0100007F:1F90 0100007F:D2F0 01 00000000:00000000 00:00000000\n";

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Header/value pairs by name: a value is only ever a number the value line printed at
    /// the header's position; a damaged file never panics.
    #[test]
    fn snmp_pairs(text in prop_oneof![any::<String>(), soup(), mutated_text(SNMP)]) {
        let mut p = probe();
        for prefix in ["Tcp", "Udp"] {
            let got = perftop::source::tcp::pairs(&mut p, "proc/net/snmp", &text, prefix, &[]);
            // Asked for some names, it keeps those of the same pairs and no other.
            let want = ["RetransSegs", "OutSegs", "RcvbufErrors"];
            let some = perftop::source::tcp::pairs(&mut p, "proc/net/snmp", &text, prefix, &want);
            for (name, v) in &got {
                prop_assert_eq!(some.get(name), want.contains(name).then_some(v));
            }
            prop_assert!(some.keys().all(|k| want.contains(k)));
            let mut lines = text.lines().filter_map(|l| {
                let (a, rest) = l.split_once(':')?;
                (a == prefix).then_some(rest)
            });
            let names: Vec<&str> = lines.next().map(|l| l.split_ascii_whitespace().collect()).unwrap_or_default();
            let values: Vec<&str> = lines.next().map(|l| l.split_ascii_whitespace().collect()).unwrap_or_default();
            for (name, v) in &got {
                let at = |i: usize| values.get(i).and_then(|x| x.parse::<u64>().ok()) == Some(*v);
                let ok = names.iter().enumerate().any(|(i, n)| n == name && at(i));
                prop_assert!(ok, "{}={}", name, v);
            }
        }
    }

    #[test]
    fn sockstat_and_tcp_mem(text in prop_oneof![any::<String>(), soup(), mutated_text(SOCKSTAT)]) {
        let s = perftop::source::tcp::sockstat_tcp(&text);
        let line = text.lines().find_map(|l| l.strip_prefix("TCP:")).unwrap_or("");
        let words: Vec<&str> = line.split_ascii_whitespace().collect();
        for (k, v) in &s {
            let ok = words.chunks(2).any(|c| c.len() == 2 && c[0] == *k && c[1].parse::<u64>().ok() == Some(*v));
            prop_assert!(ok, "{}={}", k, v);
        }
        let _ = perftop::source::tcp::tcp_mem(&text);
    }

    #[test]
    fn net_tcp_listeners(text in prop_oneof![any::<String>(), soup(), mutated_text(NET_TCP)], v6 in any::<bool>()) {
        // Every listener found is a listening row of the text with a waiting queue.
        for l in perftop::source::tcp::parse_listeners(&text, v6) {
            prop_assert!(l.queue > 0);
            let row = text.lines().any(|r| {
                let w: Vec<&str> = r.split_ascii_whitespace().collect();
                w.get(3) == Some(&"0A")
                    && w.get(1)
                        .and_then(|a| a.split_once(':'))
                        .and_then(|(_, p)| u16::from_str_radix(p, 16).ok())
                        == Some(l.port)
            });
            prop_assert!(row, "{:?}", l);
        }
    }
}

const VM: &str = "vm-2cpu/t1";
const INTEL: &str = "intel-pstate/t1";
const ACPI: &str = "acpi-shared/t1";
const NUMA: &str = "numa-2node-memless/t1";
const WRAP: &str = "wrap/t1";
const CG2: &str = "cgroups/v2/t1";

/// Files a `Reader` looks at, and the fixture each one's real content is taken from.
const FILES: &[(&str, &str)] = &[
    ("proc/uptime", VM),
    ("proc/stat", VM),
    ("proc/meminfo", NUMA),
    ("proc/vmstat", NUMA),
    ("proc/diskstats", ACPI),
    ("proc/softirqs", ACPI),
    ("proc/net/softnet_stat", WRAP),
    ("proc/interrupts", INTEL),
    ("proc/net/dev", VM),
    ("proc/loadavg", VM),
    ("proc/cpuinfo", VM),
    ("proc/sys/kernel/hostname", VM),
    ("proc/sys/vm/dirty_ratio", VM),
    ("proc/sys/vm/dirty_bytes", ACPI),
    ("proc/14/comm", VM),
    ("proc/14/stat", VM),
    ("proc/irq/27/smp_affinity_list", VM),
    ("sys/devices/system/cpu/online", WRAP),
    ("sys/devices/system/cpu/present", WRAP),
    ("sys/devices/system/cpu/possible", WRAP),
    ("sys/devices/system/cpu/cpuidle/current_driver", INTEL),
    ("sys/devices/system/cpu/cpu0/cpuidle/state1/name", INTEL),
    ("sys/devices/system/cpu/cpu0/cpuidle/state1/usage", INTEL),
    ("sys/devices/system/cpu/cpu0/cpuidle/state1/time", INTEL),
    ("sys/devices/system/cpu/cpu0/cpuidle/state1/above", INTEL),
    ("sys/devices/system/cpu/cpu0/topology/core_id", INTEL),
    ("sys/devices/system/cpu/cpufreq/policy0/affected_cpus", ACPI),
    ("sys/devices/system/cpu/cpufreq/policy0/related_cpus", ACPI),
    (
        "sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq",
        ACPI,
    ),
    (
        "sys/devices/system/cpu/cpufreq/policy0/scaling_governor",
        ACPI,
    ),
    ("sys/devices/system/cpu/cpufreq/boost", ACPI),
    ("sys/devices/system/node/node0/cpulist", NUMA),
    ("sys/devices/system/node/node0/meminfo", NUMA),
    ("sys/devices/system/node/node0/numastat", NUMA),
    ("sys/devices/system/node/node0/distance", NUMA),
    (
        "sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages",
        NUMA,
    ),
    (
        "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
        NUMA,
    ),
    (
        "sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
        NUMA,
    ),
    ("sys/kernel/mm/transparent_hugepage/enabled", NUMA),
    ("sys/block/sda/queue/rotational", ACPI),
    ("sys/block/sda/queue/scheduler", ACPI),
    ("sys/block/sda/inflight", ACPI),
    ("sys/block/dm-0/dm/name", ACPI),
    ("sys/class/net/eth0/queues/rx-0/rps_cpus", WRAP),
    ("proc/self/mountinfo", CG2),
    ("sys/fs/cgroup/cgroup.controllers", CG2),
    ("sys/fs/cgroup/system.slice/cpu.stat", CG2),
    ("sys/fs/cgroup/system.slice/cpu.max", CG2),
    ("sys/fs/cgroup/system.slice/memory.current", CG2),
    ("sys/fs/cgroup/system.slice/memory.max", CG2),
    ("sys/fs/cgroup/system.slice/memory.events", CG2),
    ("sys/fs/cgroup/system.slice/memory.pressure", CG2),
    ("sys/fs/cgroup/system.slice/io.stat", CG2),
    ("sys/fs/cgroup/system.slice/nginx.service/memory.stat", CG2),
    (
        "sys/fs/cgroup/system.slice/nginx.service/memory.current",
        CG2,
    ),
    ("sys/fs/cgroup/system.slice/nginx.service/memory.max", CG2),
];

/// What one file of the random root holds.
#[derive(Debug, Clone)]
enum Content {
    Missing,
    Directory,
    Real,
    Bytes(Vec<u8>),
    Spliced(usize, usize, Vec<u8>),
}

fn content() -> impl Strategy<Value = Content> {
    prop_oneof![
        1 => Just(Content::Missing),
        1 => Just(Content::Directory),
        2 => Just(Content::Real),
        2 => prop_oneof![any::<Vec<u8>>(), soup().prop_map(String::into_bytes)].prop_map(Content::Bytes),
        4 => (any::<usize>(), any::<usize>(), prop_oneof![any::<Vec<u8>>(), soup().prop_map(String::into_bytes)])
            .prop_map(|(c, a, n)| Content::Spliced(c, a, n)),
    ]
}

fn build(dir: &std::path::Path, files: &[Content]) {
    for ((rel, from), c) in FILES.iter().zip(files) {
        let path = dir.join(rel);
        let parent = path.parent().expect("has a parent");
        std::fs::create_dir_all(parent).expect("mkdir");
        if path.is_dir() {
            std::fs::remove_dir_all(&path).expect("rmdir");
        } else if path.exists() {
            std::fs::remove_file(&path).expect("rm");
        }
        let real = || fixture_file(&format!("{from}/{rel}"));
        match c {
            Content::Missing => {}
            Content::Directory => std::fs::create_dir_all(&path).expect("mkdir"),
            Content::Real => std::fs::write(&path, real()).expect("write"),
            Content::Bytes(b) => std::fs::write(&path, b).expect("write"),
            Content::Spliced(cut, at, noise) => {
                std::fs::write(&path, spliced(&real(), *cut, *at, noise)).expect("write")
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A whole root of damaged files: two samples (the second over rewritten files, through the
    /// same Reader and its caches), every derive and the text report.
    #[test]
    fn reader_over_random_root(
        first in prop::collection::vec(content(), FILES.len()),
        second in prop::collection::vec(content(), FILES.len()),
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        build(dir.path(), &first);
        let mut reader = Reader::new(Root::new(dir.path()));
        let a = reader.sample();
        build(dir.path(), &second);
        let b = reader.sample();
        let t = Thresholds::default();
        for d in [assess(None, &a, &t), assess(Some(&a), &b, &t), assess(Some(&b), &a, &t)] {
            let text = perftop::text::report(&d, 2, 80);
            prop_assert!(text.lines().all(|l| l.chars().count() <= 80));
            serde_json::to_string(&d).expect("derived serializes");
        }
        // A sample survives its own JSON round trip (what `snapshot` + `delta` rely on).
        let json = serde_json::to_string(&b).expect("sample serializes");
        let back: perftop::sample::Sample = serde_json::from_str(&json).expect("sample parses");
        prop_assert_eq!(back.disks.len(), b.disks.len());
    }
}

/// The unmutated process files the property tests start from parse as the kernel meant.
#[test]
fn process_bases_parse() {
    let s = parse_stat(STAT).expect("stat");
    assert_eq!((&*s.comm, s.state, s.ppid), ("tokio rt", 'S', 1));
    assert_eq!(
        (s.ticks, s.threads, s.start, s.rss_pages),
        (85, 3, 1842, 1180)
    );
    assert_eq!(parse_io(IO), Some((4096, 8192)));
    assert!(parse_cgroup(CGROUP).is_some());
}
