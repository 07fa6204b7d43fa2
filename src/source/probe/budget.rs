//! Read budgets: how much of a file a probe reads, and what it notes when a file is damaged.

use crate::root::{Every, ReadBuf, ReadError, Root, MAX_FILE_BYTES};

use crate::sample::Problem;

use super::join;

/// Most perftop reads of a one-value file (a sysfs attribute is at most a page); the rest of
/// a bigger one is not read.
pub(super) const VALUE_MAX_BYTES: u64 = 64 << 10;

/// IRQ lines budgeted for in `/proc/interrupts` (a 4096-CPU host with NIC and NVMe queues on
/// every CPU has ~10k).
pub(crate) const MAX_IRQ_LINES: u64 = 65_536;

/// How much of a table perftop reads, from what a real one of this host could hold: tables of
/// per-device lines get a fixed budget, per-CPU tables one relative to the CPUs seen (from
/// `/proc/stat` and sysfs, read first). Beyond that a file is damaged or hostile, and a 200 MB
/// `diskstats` would cost gigabytes and seconds per sample; the cut is listed as a problem.
pub(super) fn table_cap(rel: &str, cpus_seen: usize) -> u64 {
    // Twice what this sample saw (room for a CPU list cut by damage); nothing seen: a big host.
    let cpus = match cpus_seen {
        0 => 4096,
        n => 2 * n as u64 + 2,
    };
    let cap = match rel {
        // ~50k devices or partitions at ~150 bytes a line.
        "proc/diskstats" => 8 << 20,
        // ~200k interfaces (container hosts) at ~150 bytes a line.
        "proc/net/dev" => 32 << 20,
        // One line per IRQ: a 10-column count per CPU, then chip and names.
        "proc/interrupts" => (11 * cpus + 160) * MAX_IRQ_LINES,
        // ~10 softirq rows of a count per CPU; one line per CPU.
        "proc/softirqs" | "proc/net/softnet_stat" => cpus * 1024 + (64 << 10),
        // A few hundred short `key value` lines.
        "proc/meminfo" | "proc/vmstat" => 1 << 20,
        // A block per zone (five per node) with ~130 bytes of pageset per CPU in each.
        "proc/zoneinfo" => cpus * 5 * 1024 + (4 << 20),
        r if r.ends_with("/meminfo") || r.ends_with("/numastat") => 1 << 20,
        _ => MAX_FILE_BYTES,
    };
    cap.min(MAX_FILE_BYTES)
}

/// What `fill` reads of a file, and what damage costs: a single value is unknown when
/// damaged; a table is cut at its budget and still parsed.
#[derive(Debug, Clone, Copy)]
pub(super) enum Budget {
    Value,
    /// A value of the settings tier, read once in this many samples (`Tier::refresh`): its
    /// descriptor is kept between reads on the live root (see `root::kept`).
    Setting(u64),
    Table(u64),
    /// The first this many bytes of a file of which only the start is parsed: the cut is on
    /// purpose, not noted (damage is, as for a table).
    Head(u64),
}

/// Why a file's bytes cannot be a kernel text file: empty, or not text at all.
pub(super) fn damage(bytes: &[u8]) -> Option<&'static str> {
    if bytes.is_empty() {
        Some("empty")
    } else if bytes.contains(&0) {
        Some("not text (NUL bytes)")
    } else if std::str::from_utf8(bytes).is_err() {
        Some("not text (invalid UTF-8)")
    } else {
        None
    }
}

/// Reads `dir/name` into `buf`: true when there is something to look at. Absent is silent
/// unless `required`; unreadable is noted; oversized is noted and its first
/// `MAX_FILE_BYTES` are still there. A file that exists but is empty or not text (NUL
/// bytes, invalid UTF-8: no kernel file holds them) is noted; a `table` that is not text
/// is still parsed (its tolerant parser skips the garbled lines), a single value is unknown.
pub(super) fn fill(
    root: &Root,
    problems: &mut Vec<Problem>,
    buf: &mut ReadBuf,
    dir: &str,
    name: &str,
    required: bool,
    budget: Budget,
) -> bool {
    let (table, max, every) = match budget {
        Budget::Value => (false, VALUE_MAX_BYTES, Every::Sample),
        Budget::Setting(every) => (false, VALUE_MAX_BYTES, Every::Samples(every)),
        Budget::Table(max) | Budget::Head(max) => (true, max, Every::Sample),
    };
    // A head's cut is on purpose: judged like a whole file.
    let head = matches!(budget, Budget::Head(_));
    let (ok, what) = match root.read_into_every(dir, name, buf, max, every) {
        Ok(cut) if !cut || head => match damage(buf.bytes()) {
            None => return true,
            Some(what) => (table && !buf.bytes().is_empty(), what.to_string()),
        },
        Ok(_) => (true, ReadError::TooLarge(max).to_string()),
        Err(ReadError::Missing) if !required => return false,
        Err(e) => (false, e.to_string()),
    };
    problems.push(Problem {
        path: join(dir, name),
        what,
    });
    ok
}
