//! `perftop capture`: two passes over every file perftop reads, an interval apart, written as a
//! fixture root with a manifest (`capture.json`), on the machinery of `crate::capture`.

use crate::capture::{prepare_output, read_pass, summary, write_pass, Manifest, Plan, Source};
use crate::root::Root;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// The whole command: learn, read t0, wait, read t1, write both and the manifest.
pub fn capture(root: &Root, out: &Path, interval: Duration) -> Result<()> {
    super::root_check(root)?;
    let out = prepare_output(out)?;
    let mut src =
        Source::new(root).with_context(|| format!("opening the root {}", root.base().display()))?;
    let plan = Plan::learn(root);
    // A first pass that is thrown away: opening each file (a /proc/PID lookup, a dentry)
    // costs ten times what re-reading a kept descriptor does, and a cold t0 spread its reads
    // over 8-24 ms here (51 ms on a loaded CI VM) against 1-2 ms for t1. After it, t0 and t1
    // both re-read the descriptors the live root keeps, as the dashboard does.
    let warm = read_pass(&mut src, &plan, 1 << 20);
    let t0 = read_pass(&mut src, &plan, warm.bytes() + (64 << 10));
    let next = Instant::now() + interval.saturating_sub(t0.spread);
    std::thread::sleep(next.saturating_duration_since(Instant::now()));
    let t1 = read_pass(&mut src, &plan, t0.bytes() + (64 << 10));
    let mut stderr = std::io::stderr().lock();
    let mut passes = Vec::new();
    for (dir, pass) in [("t0", &t0), ("t1", &t1)] {
        write_pass(&out, dir, &plan, pass)?;
        let s = summary(dir, &plan, pass);
        let _ = writeln!(
            stderr,
            "perftop: {dir}: {} files, {} bytes read in {:.2} ms (first to last read; \
             uptime and the {} counter tables in {:.2} ms), {} skipped",
            s.files,
            s.bytes,
            s.read_spread_ms,
            s.tables - 1,
            s.tables_spread_ms,
            s.skipped.len()
        );
        for k in &s.skipped {
            let _ = writeln!(
                stderr,
                "perftop:   skipped {}: {}",
                crate::safe::line(&k.path),
                crate::safe::line(&k.why)
            );
        }
        passes.push(s);
    }
    let manifest = Manifest {
        perftop_version: env!("CARGO_PKG_VERSION").to_string(),
        root: root.base().display().to_string(),
        // Through the same door as the files: a hostname link out of the root is no hostname.
        hostname: src.read_line("proc/sys/kernel/hostname"),
        kernel_release: src.read_line("proc/sys/kernel/osrelease"),
        page_size: root.is_live().then(rustix::param::page_size),
        interval_s: interval.as_secs_f64(),
        passes,
    };
    let json = serde_json::to_string_pretty(&manifest).context("encoding capture.json")?;
    // Host and file names are the root's: C1 and bidi controls become `\uXXXX` escapes.
    let json = crate::safe::json(&json);
    out.write_file(
        Path::new("capture.json"),
        format!("{json}\n").as_bytes(),
        0o644,
    )?;
    let _ = writeln!(
        stderr,
        "perftop: wrote {}",
        crate::safe::line(&out.path().display().to_string())
    );
    Ok(())
}
