//! `/proc/interrupts` in turns (`source::irq_turns`): a quiet host's table is read every
//! `EVERY` samples and its rates are exact over its own two reads on every sample; a busy
//! host's is read every sample. Counts written by hand, one tick = one second.

use crate::support;
use perftop::derive::derive;
use perftop::root::Root;
use perftop::source::irq_turns::EVERY;
use perftop::source::Reader;
use std::fs;
use std::path::Path;

/// The host at `t` seconds: LOC at `loc(t)` per CPU, IRQ 24 (on CPU0) at 50/s, and
/// `/proc/stat`'s `intr` their sum.
fn write(dir: &Path, t: u64, loc: u64) {
    let proc = dir.join("proc");
    fs::create_dir_all(&proc).expect("mkdir");
    let up = 10_000 + t;
    fs::write(proc.join("uptime"), format!("{up}.00 {}.00\n", 2 * up)).expect("uptime");
    let eth = 50 * t;
    let intr = 2 * loc + eth;
    fs::write(
        proc.join("stat"),
        format!(
            "cpu  100 0 100 {i} 0 0 0 0 0 0\ncpu0 50 0 50 {h} 0 0 0 0 0 0\n\
             cpu1 50 0 50 {h} 0 0 0 0 0 0\nintr {intr} 0\nctxt 1\n",
            i = up * 200,
            h = up * 100
        ),
    )
    .expect("stat");
    fs::write(
        proc.join("interrupts"),
        format!(
            "           CPU0       CPU1       \n 24: {eth:>10} {:>10}  IO-APIC   5-edge      eth0\n\
             LOC: {loc:>10} {loc:>10}   Local timer interrupts\n",
            0
        ),
    )
    .expect("interrupts");
}

/// When the table sample `cur` (at tick `t`) shows was read: this sample unless turned.
fn read_at_tick(cur: &perftop::sample::Sample, t: u64) -> u64 {
    let table = cur.net.interrupts.as_ref().expect("table");
    table
        .turn
        .as_ref()
        .and_then(|turn| turn.at.uptime_s)
        .map_or(t, |u| u as u64 - 10_000)
}

#[test]
fn a_quiet_table_is_read_in_turns_and_its_rates_stay_exact() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    // LOC: 100/s per CPU to t = 20 (125 interrupts/s per CPU: quiet), then 5,000/s (busy).
    let loc = |t: u64| {
        if t <= 20 {
            100 * t
        } else {
            2_000 + 5_000 * (t - 20)
        }
    };
    write(dir.path(), 0, loc(0));
    let mut reader = Reader::new(Root::new(dir.path()));
    let mut prev = reader.sample();
    let mut read_at = Vec::new();
    for t in 1..=30 {
        write(dir.path(), t, loc(t));
        let cur = reader.sample();
        let at = read_at_tick(&cur, t);
        read_at.push(at);
        let d = derive(Some(&prev), &cur);
        let m = &d.interrupts;
        let cpu0 = m.cpus.iter().find(|c| c.cpu == 0).expect("cpu0");
        let loc_rate = cpu0.rates.get("LOC").copied().flatten();
        let eth = m.lines.iter().find(|l| l.irq == 24).and_then(|l| l.per_s);
        // The quiet phase, once two reads are in: every sample says 100/s and 50/s, the
        // rates between the table's own two reads (up to EVERY seconds apart).
        if t <= 20 {
            assert_eq!(loc_rate, Some(100.0), "LOC at {t}");
            assert_eq!(eth, Some(50.0), "eth0 at {t}");
        }
        if (2..=20).contains(&t) {
            let secs = m.table_secs.expect("read in turns: its interval said");
            assert!(secs >= 1.0 && secs <= f64::from(EVERY), "{secs} s at {t}");
        }
        // Busy from t = 21 on: /proc/stat's intr says so at t = 21, which reads the table at
        // once; from t = 22 on every sample reads it and runs over one second.
        if t >= 22 {
            assert_eq!(at, t, "read every sample when busy");
            assert_eq!(loc_rate, Some(5_000.0), "LOC at {t}");
            assert_eq!(m.table_secs, None, "one sample's interval at {t}");
        }
        prev = cur;
    }
    // The quiet phase read the table at t = 0 and 1 (two reads make a rate), then every
    // EVERY samples; the busy phase from its first sample.
    let quiet: Vec<u64> = read_at[..20].to_vec();
    let reads: std::collections::BTreeSet<u64> = quiet.iter().copied().collect();
    assert_eq!(
        reads,
        (0..20)
            .filter(|&t| t == 1 || (t > 1 && (t - 1) % u64::from(EVERY) == 0))
            .collect(),
        "quiet reads at {quiet:?}"
    );
    assert!(
        quiet
            .iter()
            .enumerate()
            .all(|(i, &at)| at + u64::from(EVERY) > i as u64 + 1),
        "no table older than EVERY samples: {quiet:?}"
    );
    assert_eq!(read_at[20], 21, "the first busy sample reads the table");
}

/// A 64-CPU host at `t` seconds: LOC at 100/s on every CPU, and from t = 10 on CPU 5 alone in
/// a function-call IPI storm at 25,000/s. `/proc/stat`'s `intr` is their sum.
fn write_storm(dir: &Path, t: u64) {
    const CPUS: u64 = 64;
    let proc = dir.join("proc");
    fs::create_dir_all(&proc).expect("mkdir");
    let up = 10_000 + t;
    let cal = 25_000 * t.saturating_sub(10);
    let loc = 100 * t;
    let mut stat = format!("cpu  100 0 100 {} 0 0 0 0 0 0\n", up * 100 * CPUS);
    for c in 0..CPUS {
        stat += &format!("cpu{c} 1 0 1 {} 0 0 0 0 0 0\n", up * 100);
    }
    stat += &format!("intr {} 0\nctxt 1\n", CPUS * loc + cal);
    fs::write(proc.join("uptime"), format!("{up}.00 {}.00\n", 64 * up)).expect("uptime");
    fs::write(proc.join("stat"), stat).expect("stat");
    let head: String = (0..CPUS)
        .map(|c| format!("{:>11}", format!("CPU{c}")))
        .collect();
    let row = |f: &dyn Fn(u64) -> u64| -> String {
        (0..CPUS).map(|c| format!(" {:>10}", f(c))).collect()
    };
    fs::write(
        proc.join("interrupts"),
        format!(
            "{head}\nLOC:{}   Local timer interrupts\nCAL:{}   Function call interrupts\n",
            row(&|_| loc),
            row(&|c| if c == 5 { cal } else { 0 })
        ),
    )
    .expect("interrupts");
}

#[test]
fn one_cpu_in_a_storm_on_a_quiet_host_reads_the_table_every_sample() {
    let _counting = support::counting_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    write_storm(dir.path(), 0);
    let mut reader = Reader::new(Root::new(dir.path()));
    let mut prev = reader.sample();
    let mut read_at = Vec::new();
    let mut cal = Vec::new();
    for t in 1..=24 {
        write_storm(dir.path(), t);
        let cur = reader.sample();
        read_at.push(read_at_tick(&cur, t));
        let d = derive(Some(&prev), &cur);
        let cpu5 = d.interrupts.cpus.iter().find(|c| c.cpu == 5).expect("cpu5");
        cal.push(cpu5.rates.get("CAL").copied().flatten());
        prev = cur;
    }
    // By /proc/stat alone the host stays quiet: (64 x 100 + 25,000) / 64 = 490 a second per CPU.
    // Before the storm the table is read in turns.
    assert!(
        read_at[..10].iter().any(|&at| at < 10),
        "turns before the storm: {read_at:?}"
    );
    // The first table read after the storm began (t = 11 on: counts moved from t = 10) sees
    // CPU 5 at 25,000/s against the read before; from the sample after it, every sample reads.
    let first = (11..=24u64)
        .find(|&t| read_at[t as usize - 1] == t)
        .expect("a read after the storm began");
    assert!(
        first < 11 + u64::from(EVERY),
        "seen within EVERY samples: {read_at:?}"
    );
    for t in first + 1..=24 {
        assert_eq!(
            read_at[t as usize - 1],
            t,
            "read every sample once hot: {read_at:?}"
        );
        assert_eq!(cal[t as usize - 1], Some(25_000.0), "CPU 5's CAL at {t}");
    }
}
