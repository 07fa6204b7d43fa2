//! Scale: what a big host's sample reads in turns (`source::turns`), pinned against the
//! synthetic host's rates worked out by hand (`tests/support/synth/mod.rs`, one tick = one
//! second) and the synthetic processes' (`support::synth::procs`).

use crate::support;

mod procs;

use perftop::derive::derive;
use perftop::root::Root;
use perftop::sample::SampleTime;
use perftop::source::Reader;
use std::fs;
use support::synth::cpu::cpu_rates;
use support::synth::{write_host, SynthSpec, BOOT_AGE_S};

/// A synthetic host of `cpus` CPUs over `nodes` nodes (8 disks, 8 queues) written at tick 0,
/// and a reader of it.
fn synthetic_host(cpus: u32, nodes: u32) -> (SynthSpec, tempfile::TempDir, Reader) {
    let spec = SynthSpec {
        cpus,
        nodes,
        disks: 8,
        queues: 8,
    };
    let dir = tempfile::tempdir().expect("tempdir");
    write_host(dir.path(), &spec, 0).expect("tick 0");
    let reader = Reader::new(Root::new(dir.path()));
    (spec, dir, reader)
}

/// The tick a turn's table was read at, which must be within the last `every` ticks.
#[track_caller]
fn read_within(at: &SampleTime, tick: u64, every: u32, what: &str) -> u64 {
    let at = at.uptime_s.expect("uptime") as u64 - BOOT_AGE_S;
    assert!(
        tick - at < u64::from(every),
        "{what} at tick {tick}: read at {at}"
    );
    at
}

#[track_caller]
fn close(got: Option<f64>, want: f64, what: &str) {
    let g = got.unwrap_or_else(|| panic!("{what}: expected {want}, got None"));
    assert!(
        (g - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{what}: got {g}, want {want}"
    );
}

/// 256 CPUs with 4 idle states each: 19 detail files per CPU, 4,864 in all, read in four
/// turns within the 1,280-file budget (the two core throttle counters ride along). Every
/// CPU's detail is at most three samples old, its C-state and core-throttle rates are the
/// synthetic host's exactly (over its own four-second interval, not the sample's one second),
/// package throttling is read every sample, and a sample opens about a quarter of the detail
/// files.
#[test]
fn per_cpu_detail_in_turns_is_fresh_within_its_period_and_exact() {
    let _counting = support::counting_reads();
    let (spec, dir, mut reader) = synthetic_host(256, 4);
    let mut prev = reader.sample();
    let every = prev.cpu.detail_every.expect("256 CPUs are read in turns");
    assert_eq!(every, 4, "256 x 19 files over a 1,280-file budget");
    let mut files = Vec::new();
    for tick in 1..=4 * u64::from(every) {
        write_host(dir.path(), &spec, tick).expect("tick");
        let before = reader.root().opened();
        let cur = reader.sample();
        files.push(reader.root().opened().since(before).files);
        assert!(cur.problems.is_empty(), "{:?}", cur.problems);
        assert_eq!(cur.cpu.detail_every, Some(every));
        let d = derive(Some(&prev), &cur);
        assert_eq!(
            d.host.cpu_detail_every,
            Some(every),
            "the JSON says how fresh"
        );
        let mut read_now = 0;
        for (c, m) in cur.cpu.cpus.iter().zip(&d.cpus) {
            let i = u64::from(c.id);
            let turn = c.idle_turn.as_ref().expect("every CPU's detail says when");
            let at = read_within(&turn.at, tick, every, &format!("cpu{i}"));
            read_now += u64::from(at == tick);
            match &turn.before {
                Some(b) => {
                    let b_at = b.at.uptime_s.expect("uptime") as u64 - BOOT_AGE_S;
                    // The first turn after the all-CPU first sample can be shorter.
                    let own = at - b_at;
                    assert!(own >= 1 && own <= u64::from(every), "cpu{i}: {own} s");
                    let r = cpu_rates(i);
                    let wakeups = 20 + (100 + 10 * (i % 5)) + 50 + (30 + i % 8);
                    close(m.wakeups_per_s, wakeups as f64, &format!("cpu{i} wakeups"));
                    // C1 is a tenth of the idle + iowait envelope.
                    let c1 = (r[3] + r[4]) as f64 / 10.0;
                    close(m.states[1].residency_pct, c1, &format!("cpu{i} C1"));
                }
                // Not read twice yet: unknown, never 0 or a since-boot average.
                None => {
                    assert!(tick < u64::from(every), "cpu{i} read once by tick {tick}");
                    assert_eq!(m.wakeups_per_s, None, "cpu{i} at tick {tick}");
                }
            }
            // /proc/stat-based busy stays per sample for every CPU.
            let r = cpu_rates(i);
            close(
                m.c0_pct,
                (100 - r[3] - r[4]) as f64,
                &format!("cpu{i} busy"),
            );
        }
        assert!(
            read_now.abs_diff(256 / u64::from(every)) <= 1,
            "tick {tick}: {read_now} CPUs read"
        );
        throttle_in_turns(&cur, &d, tick, every);
        // ksoftirqd/i: 4 ticks/s when i % 10 = 3, idle otherwise; idle ones are read in
        // turns and still show 0, busy ones every sample.
        for s in &d.softirq_cpus {
            let want = if s.cpu % 10 == 3 { 4.0 } else { 0.0 };
            close(s.ksoftirqd_pct, want, &format!("ksoftirqd/{}", s.cpu));
        }
        prev = cur;
    }
    // A sample in turns opens a bounded number of files, about the same most times (a
    // sample 2 s or more after the last also reads every setting, and a slow test machine
    // makes some: those are the outliers), and always fewer than the detail alone would be.
    let mut sorted = files.clone();
    sorted.sort_unstable();
    let (lo, median, hi) = (
        sorted[0],
        sorted[sorted.len() / 2],
        sorted[sorted.len() - 1],
    );
    assert!(median - lo <= 200, "files per sample {files:?}");
    assert!(hi < 256 * 19, "files per sample {files:?}");
}

/// Core throttle counters follow the CPU's turns and are exact over the core's own interval
/// (core i: i % 3 events/s, i % 7 ms/s throttled); package counters are read every sample
/// (package p: p % 4 events/s, p % 5 ms/s).
fn throttle_in_turns(
    cur: &perftop::sample::Sample,
    d: &perftop::derive::Derived,
    tick: u64,
    every: u32,
) {
    use perftop::sample::ThrottleScope;
    let power = cur.power.as_ref().expect("power");
    let cores = power
        .throttle
        .iter()
        .filter(|t| t.scope == ThrottleScope::Core)
        .count();
    // Each synthetic CPU is its own core; four nodes of two packages.
    assert_eq!((cores, power.throttle.len() - cores), (256, 8));
    for (t, m) in power.throttle.iter().zip(&d.power.throttle) {
        match t.scope {
            ThrottleScope::Package => {
                let p = t.package.expect("package");
                close(
                    m.events_per_s,
                    f64::from(p % 4),
                    &format!("package {p} events"),
                );
                close(
                    m.throttled_pct,
                    f64::from(p % 5) / 10.0,
                    &format!("package {p} %"),
                );
                assert!(t.turn.is_none(), "packages every sample");
            }
            ThrottleScope::Core => {
                let i = u64::from(t.cpu);
                let turn = t.turn.as_ref().expect("cores in turns say when");
                read_within(&turn.at, tick, every, &format!("core {i}"));
                if turn.before.is_some() {
                    close(m.events_per_s, (i % 3) as f64, &format!("core {i} events"));
                    close(
                        m.throttled_pct,
                        (i % 7) as f64 / 10.0,
                        &format!("core {i} %"),
                    );
                } else {
                    assert_eq!(m.events_per_s, None, "core {i}: one read is no rate");
                }
            }
        }
    }
}

/// A governor perftop writes shows on the next sample on any host, not on its policy's turn.
#[test]
fn a_tweak_is_seen_on_the_next_sample_even_in_turns() {
    let _writes = support::writing();
    let (_, dir, mut reader) = synthetic_host(256, 4);
    let first = reader.sample();
    assert_eq!(first.cpu.detail_every, Some(4));
    let gov = |s: &perftop::sample::Sample, id: &str| {
        s.cpu
            .freq
            .policies
            .iter()
            .find(|p| p.id == id)
            .and_then(|p| p.governor.clone())
    };
    // Every policy in turn: one of them is not due on the next sample.
    for n in 0..4 {
        let id = format!("policy{n}");
        let path = dir.path().join(format!(
            "sys/devices/system/cpu/cpufreq/{id}/scaling_governor"
        ));
        let before = gov(&reader.sample(), &id);
        let other = if before.as_deref() == Some("performance") {
            "powersave"
        } else {
            "performance"
        };
        fs::write(&path, format!("{other}\n")).expect("write");
        perftop::root::note_write();
        assert_eq!(gov(&reader.sample(), &id).as_deref(), Some(other), "{id}");
    }
}

/// A frequency limit an administrator sets (`scaling_max_freq`) on a host read in turns is
/// seen on its policy's turn, within `SETTINGS_REFRESH_SAMPLES` (10) + the turn's period, and
/// never off it: a policy's settings are read on its turn only.
#[test]
fn a_limit_set_by_hand_is_seen_on_the_policy_turn() {
    let _counting = support::counting_reads();
    let (spec, dir, mut reader) = synthetic_host(128, 2);
    let every = reader.sample().cpu.detail_every.expect("in turns");
    let mut seen_at: Vec<Option<u64>> = vec![None; 128];
    let last = 10 + 2 * u64::from(every);
    for tick in 1..=last {
        write_host(dir.path(), &spec, tick).expect("tick");
        for n in 0..128 {
            let f = format!("sys/devices/system/cpu/cpufreq/policy{n}/scaling_max_freq");
            fs::write(dir.path().join(f), "1200000\n").expect("limit");
        }
        let cur = reader.sample();
        for p in &cur.cpu.freq.policies {
            let n: u32 =
                p.id.trim_start_matches("policy")
                    .parse()
                    .expect("policy id");
            if p.max_khz != Some(1_200_000) || seen_at[n as usize].is_some() {
                continue;
            }
            seen_at[n as usize] = Some(tick);
            // One policy per CPU, read in the same turns as the CPU's detail.
            let c = cur.cpu.cpus.iter().find(|c| c.id == n).expect("cpu");
            let at = c.idle_turn.as_ref().and_then(|t| t.at.uptime_s);
            assert_eq!(
                at.map(|u| u as u64 - BOOT_AGE_S),
                Some(tick),
                "policy{n} changed off its turn"
            );
        }
    }
    for (n, at) in seen_at.iter().enumerate() {
        let at = at.unwrap_or_else(|| panic!("policy{n}'s limit not seen in {last} samples"));
        assert!(at <= 10 + u64::from(every), "policy{n} seen at {at}");
    }
}

/// `online` and `present` are not read while `/proc/stat`'s CPU lines (the online CPUs) agree
/// with the last `online`: a CPU taken offline (its line gone from `/proc/stat`) is read on
/// that same sample; a CPU made present but not online (no `/proc/stat` line moves) shows
/// within the settings tier's 10 samples.
#[test]
fn cpu_sets_are_read_when_proc_stat_disagrees_or_within_the_tier() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("t0");
    support::copy_tree(&support::fixture("vm-2cpu").join("t0"), &root);
    let mut reader = Reader::new(Root::new(&root));
    let sets = |r: &mut Reader| {
        let s = r.sample();
        let ids = |l: Option<&perftop::cpulist::CpuList>| l.map(|l| l.ids().to_vec());
        (ids(s.cpu.online.as_ref()), ids(s.cpu.present.as_ref()))
    };
    assert_eq!(sets(&mut reader), (Some(vec![0, 1]), Some(vec![0, 1])));
    let cpu = root.join("sys/devices/system/cpu");
    // CPU 1 goes offline: the kernel drops its /proc/stat line and lists 0 online.
    let stat = fs::read_to_string(root.join("proc/stat")).expect("stat");
    let without: String = stat
        .lines()
        .filter(|l| !l.starts_with("cpu1 "))
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(root.join("proc/stat"), without).expect("stat");
    fs::write(cpu.join("online"), "0\n").expect("online");
    assert_eq!(sets(&mut reader), (Some(vec![0]), Some(vec![0, 1])));
    // A third CPU made present, not online: nothing in /proc/stat moves; seen within the tier.
    fs::write(cpu.join("present"), "0-2\n").expect("present");
    let mut n = 1;
    while sets(&mut reader).1 != Some(vec![0, 1, 2]) {
        n += 1;
        assert!(n <= 10, "present not read again within 10 samples");
    }
}

/// A huge page pool of another size than the default, empty and without overcommit (no
/// surplus pages can appear in it by themselves), is read as a setting: its `nr_hugepages`
/// once in the tier's 10 samples, not every sample. Filled by hand, it shows within the tier;
/// once it has pages, its counts are read every sample.
#[test]
fn an_empty_pool_without_overcommit_is_read_as_a_setting() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    let pool = dir
        .path()
        .join("sys/kernel/mm/hugepages/hugepages-1048576kB");
    fs::create_dir_all(&pool).expect("mkdir");
    fs::create_dir_all(dir.path().join("proc")).expect("mkdir");
    fs::write(
        dir.path().join("proc/meminfo"),
        "MemTotal: 16000000 kB\nHugePages_Total: 0\nHugePages_Free: 0\nHugePages_Rsvd: 0\n\
         HugePages_Surp: 0\nHugepagesize: 2048 kB\n",
    )
    .expect("meminfo");
    let write = |total: u64, free: u64| {
        for (f, v) in [
            ("nr_hugepages", total),
            ("free_hugepages", free),
            ("resv_hugepages", 0),
            ("surplus_hugepages", 0),
            ("nr_overcommit_hugepages", 0),
        ] {
            fs::write(pool.join(f), format!("{v}\n")).expect("pool file");
        }
    };
    write(0, 0);
    let costs = std::sync::Arc::new(std::sync::Mutex::new(Default::default()));
    let mut reader = Reader::new(Root::new(dir.path()).timed(costs.clone()));
    let gig = |s: &perftop::sample::Sample| {
        let p = s
            .memory
            .hugepage_sizes
            .iter()
            .find(|p| p.size_kb == 1_048_576)
            .expect("1 GiB pool");
        (p.total, p.free)
    };
    assert_eq!(gig(&reader.sample()), (Some(0), Some(0)));
    for _ in 0..20 {
        assert_eq!(gig(&reader.sample()), (Some(0), Some(0)));
    }
    let reads = |costs: &std::sync::Mutex<perftop::root::cost::Costs>| {
        costs
            .lock()
            .expect("costs")
            .dearest()
            .iter()
            .filter(|(p, ..)| p.ends_with("hugepages-1048576kB/nr_hugepages"))
            .map(|(_, _, n)| *n)
            .sum::<u64>()
    };
    let n = reads(&costs);
    assert!(n <= 4, "nr_hugepages read {n} times in 21 samples");
    // Pages reserved by hand: seen within the tier's 10 samples.
    write(2, 2);
    let seen = (1..=10).find(|_| gig(&reader.sample()) == (Some(2), Some(2)));
    assert!(seen.is_some(), "a filled pool shows within 10 samples");
    // With pages in it, every sample reads it: one page taken shows at once.
    write(2, 1);
    assert_eq!(gig(&reader.sample()), (Some(2), Some(1)));
}
