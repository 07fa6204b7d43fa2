//! Synthetic processes: `proc/PID/{stat,io,cgroup}` for N processes whose counters grow at
//! known rates, for the process reader's tests and its cost benchmark.
//!
//! Process k (pid 1000+k, started 1 s after boot; `/proc/uptime` says `BOOT_AGE_S + tick`,
//! too): utime grows (k % 50) ticks/s and stime 1 tick/s when k % 10 == 0, majflt k % 3 per
//! second, read_bytes 4096·(k % 7) and write_bytes 8192·(k % 5) per second, RSS 1000 + k
//! pages; state D when k % 97 == 5, else S; cgroup `/system.slice/svcK%20.service`.

use super::BOOT_AGE_S;
use anyhow::Result;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

/// Process k's counters at `tick`: (utime, stime, majflt, read_bytes, write_bytes).
pub fn proc_counters(k: u64, tick: u64) -> (u64, u64, u64, u64, u64) {
    let age = BOOT_AGE_S + tick;
    (
        (k % 50) * age,
        u64::from(k % 10 == 0) * age,
        (k % 3) * age,
        4096 * (k % 7) * age,
        8192 * (k % 5) * age,
    )
}

/// Writes `n` processes at `tick` under `dir/proc` (and `proc/uptime`).
pub fn write_procs(dir: &Path, n: u64, tick: u64) -> Result<()> {
    let proc = dir.join("proc");
    fs::create_dir_all(&proc)?;
    let age = BOOT_AGE_S + tick;
    fs::write(proc.join("uptime"), format!("{age}.00 {}.00\n", age * 2))?;
    let mut s = String::new();
    for k in 0..n {
        let pid = 1000 + k;
        let (utime, stime, majflt, rb, wb) = proc_counters(k, tick);
        let state = if k % 97 == 5 { 'D' } else { 'S' };
        let d = proc.join(pid.to_string());
        fs::create_dir_all(&d)?;
        s.clear();
        let _ = writeln!(
            s,
            "{pid} (worker {k}) {state} 1 {pid} {pid} 0 -1 4194560 500 0 {majflt} 0 {utime} \
             {stime} 0 0 20 0 1 0 100 {} {} 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 \
             {} 0 0 0 0 0 0 0 0 0 0 0 0 0",
            (1000 + k) * 4096 * 4,
            1000 + k,
            k % 2
        );
        fs::write(d.join("stat"), &s)?;
        s.clear();
        let _ = writeln!(
            s,
            "rchar: {rb}\nwchar: {wb}\nsyscr: 0\nsyscw: 0\nread_bytes: {rb}\nwrite_bytes: {wb}\n\
             cancelled_write_bytes: 0"
        );
        fs::write(d.join("io"), &s)?;
        if tick == 0 || !d.join("cgroup").exists() {
            fs::write(
                d.join("cgroup"),
                format!("0::/system.slice/svc{}.service\n", k % 20),
            )?;
        }
    }
    Ok(())
}

/// Short-lived busy processes, as a build makes them: at `tick` a new one is born (pid
/// 20000 + tick, `job<tick>`, started at that second, 50 CPU ticks a second, RSS and writes
/// growing) and the one born 3 ticks before exits, so the process table gains and loses a pid
/// every sample and the busiest rows change.
pub fn write_churn(dir: &Path, tick: u64) -> Result<()> {
    let proc = dir.join("proc");
    if let Some(gone) = tick.checked_sub(3) {
        let d = proc.join((20_000 + gone).to_string());
        if d.exists() {
            fs::remove_dir_all(d)?;
        }
    }
    let mut s = String::new();
    for born in tick.saturating_sub(2)..=tick {
        let pid = 20_000 + born;
        let life = tick - born;
        let start = (BOOT_AGE_S + born) * 100;
        let d = proc.join(pid.to_string());
        fs::create_dir_all(&d)?;
        s.clear();
        let _ = writeln!(
            s,
            "{pid} (job{born}) R 1000 {pid} {pid} 0 -1 4194560 {} 0 {} 0 {} {} 0 0 20 0 1 0 \
             {start} {} {} 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 {} 0 0 0 0 0 0 0 0 \
             0 0 0 0 0",
            100 * life,
            3 * life,
            40 * life,
            10 * life,
            (5000 + 700 * life) * 4096,
            5000 + 700 * life,
            born % 2
        );
        fs::write(d.join("stat"), &s)?;
        let (rb, wb) = (65_536 * life, 1_048_576 * life);
        fs::write(
            d.join("io"),
            format!(
                "rchar: {rb}\nwchar: {wb}\nsyscr: 0\nsyscw: 0\nread_bytes: {rb}\n\
                 write_bytes: {wb}\ncancelled_write_bytes: 0\n"
            ),
        )?;
        fs::write(d.join("cgroup"), "0::/user.slice/build.scope\n")?;
        fs::write(
            d.join("cmdline"),
            format!("rustc\0--crate-name\0crate{born}\0--edition=2021\0src/lib.rs\0"),
        )?;
    }
    Ok(())
}
