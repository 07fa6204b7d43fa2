//! Memory against free and numastat -m; the memory object.

use super::live::{self, f, Recording, Table};
use serde_json::Value;

/// `free -k -w`: Mem total, free, buffers, cache, available; Swap total, free.
struct Free {
    total: f64,
    free: f64,
    buffers: f64,
    cache: f64,
    available: f64,
    swap_total: f64,
    swap_free: f64,
}

fn free() -> Free {
    let text = live::run("free", &["-k", "-w"]);
    let mut head: Vec<String> = Vec::new();
    let (mut mem, mut swap) = (Vec::new(), Vec::new());
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.first() {
            Some(&"Mem:") => {
                mem = w[1..]
                    .iter()
                    .map(|x| x.parse().unwrap_or(f64::NAN))
                    .collect()
            }
            Some(&"Swap:") => {
                swap = w[1..]
                    .iter()
                    .map(|x| x.parse().unwrap_or(f64::NAN))
                    .collect()
            }
            Some(_) if head.is_empty() => head = w.iter().map(|x| x.to_string()).collect(),
            _ => {}
        }
    }
    let col = |k: &str| -> f64 {
        head.iter()
            .position(|h| h == k)
            .and_then(|i| mem.get(i).copied())
            .unwrap_or(f64::NAN)
    };
    Free {
        total: col("total"),
        free: col("free"),
        buffers: col("buffers"),
        cache: col("cache"),
        available: col("available"),
        swap_total: swap.first().copied().unwrap_or(f64::NAN),
        swap_free: swap.get(2).copied().unwrap_or(f64::NAN),
    }
}

/// `numastat -m` (MB): `(row, column)` → value, columns `Node 0`.. and `Total`.
type NumaTable = std::collections::BTreeMap<(String, String), f64>;
type MemInfo = std::collections::BTreeMap<String, u64>;

fn numastat_m() -> NumaTable {
    let text = live::run("numastat", &["-m"]);
    let mut cols: Vec<String> = Vec::new();
    let mut m = std::collections::BTreeMap::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if line.trim_start().starts_with("Node ") {
            // "Node 0 Node 1 Total"
            let mut names = Vec::new();
            let mut it = w.iter();
            while let Some(x) = it.next() {
                if *x == "Node" {
                    names.push(format!("Node {}", it.next().unwrap_or(&"?")));
                } else {
                    names.push(x.to_string());
                }
            }
            cols = names;
            continue;
        }
        if cols.is_empty() || w.len() != cols.len() + 1 {
            continue;
        }
        for (c, v) in cols.iter().zip(&w[1..]) {
            if let Ok(v) = v.parse() {
                m.insert((w[0].to_string(), c.clone()), v);
            }
        }
    }
    m
}

/// free, numastat and meminfo read just before and just after one perftop interval ending now.
struct MemoryWindow {
    frame: Value,
    free: (Free, Free),
    numa: (NumaTable, NumaTable),
    meminfo: (MemInfo, MemInfo),
    /// The recorder's own private writable memory (VmData + VmStk, kB) while it records:
    /// Committed_AS counts it in perftop's reading and in neither reading around it.
    own_commit_kb: f64,
    /// `/proc/meminfo` read every 10 ms from before the first reference to after the last.
    ticks: crate::support::ticker::Ticks,
}

/// Between two of the ticker's reads (10 ms apart) a gauge moved more than this: another
/// program's memory (stress-ng's `--vm` maps and frees 256 MiB over and over) moved faster
/// than the reads around perftop's can bracket, so the round is retried.
const FOREIGN_MOVE_KB: u64 = 8 * 4096;

/// Where perftop's second sample read `/proc/meminfo`: after its time stamp, within the
/// sample's own reads (500 ms allowed on a busy machine), 50 ms of clock reading before.
const SPAN_MS: (i64, i64) = (50, 500);

impl MemoryWindow {
    /// The ticker's reads of `key` around perftop's sample.
    fn around(&self, key: &str) -> Vec<u64> {
        let at = f(&self.frame, &["host", "wall_ms"]).unwrap_or(0.0) as i64;
        self.ticks
            .0
            .iter()
            .filter(|x| x.wall_ms >= at - SPAN_MS.0 && x.wall_ms <= at + SPAN_MS.1)
            .filter_map(|x| x.counts.get(key).copied())
            .collect()
    }

    /// The bracket of `key`: the references before and after (`a`, `b`) and every ticker read
    /// around perftop's sample.
    fn span(&self, key: &str, a: f64, b: f64) -> (f64, f64) {
        let v = self.around(key);
        let lo = v.iter().map(|&x| x as f64).fold(a.min(b), f64::min);
        let hi = v.iter().map(|&x| x as f64).fold(a.max(b), f64::max);
        (lo, hi)
    }

    fn judge_noise(&self, t: &mut Table) {
        for key in [
            "MemFree",
            "MemAvailable",
            "Cached",
            "Buffers",
            "SwapFree",
            "Committed_AS",
        ] {
            let v = self.around(key);
            let jump = v.windows(2).map(|w| w[0].abs_diff(w[1])).max().unwrap_or(0);
            if jump > FOREIGN_MOVE_KB {
                t.noisy(&format!(
                    "{key} moved {jump} kB between two reads 10 ms apart around perftop's (another program's memory)"
                ));
            }
        }
    }
}

/// VmData + VmStk of a process, kB (0 when it is gone).
fn own_commit_kb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .filter(|l| l.starts_with("VmData:") || l.starts_with("VmStk:"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .sum()
}

fn memory_window() -> MemoryWindow {
    let tick = crate::support::ticker::Ticker::start(10, || Some(live::kv("/proc/meminfo")));
    let (f0, n0, m0) = (free(), numastat_m(), live::kv("/proc/meminfo"));
    let rec = Recording::start(0.25, 2);
    // Between its two samples (0.25 s apart), as large as it gets before it writes.
    live::sleep_ms(120);
    let own = own_commit_kb(rec.pid());
    let frame = rec.finish().pop().expect("one interval");
    let (f1, n1, m1) = (free(), numastat_m(), live::kv("/proc/meminfo"));
    MemoryWindow {
        ticks: tick.stop(),
        own_commit_kb: own,
        frame,
        free: (f0, f1),
        numa: (n0, n1),
        meminfo: (m0, m1),
    }
}

/// Memory moves while three processes take turns reading it (this VM also runs builds):
/// perftop must fall between the readings taken before and after its own, give or take 4 MiB.
const MEM_DRIFT_KB: f64 = 4096.0;

#[test]
fn memory_matches_free_and_numastat() {
    const T: &str = "memory_matches_free_and_numastat";
    let _machine = crate::support::machine();
    if !live::ready(T, &["free", "numastat"]) {
        return;
    }
    crate::support::ticker::rounds(T, 3, |_| {
        let w = memory_window();
        let mut t = Table::new(T);
        w.judge_noise(&mut t);
        // MemTotal does not move (no hotplug during the test): exact.
        t.close(
            "hugepages.mem_total_kb vs free total",
            f(&w.frame, &["hugepages", "mem_total_kb"]),
            w.free.1.total,
            0.0,
        );
        let nodes = w.frame["nodes"].as_array().map_or(0, Vec::len);
        for n in w.frame["nodes"].as_array().into_iter().flatten() {
            let id = n["node"].as_u64().unwrap_or(0);
            let col = format!("Node {id}");
            let get = |m: &NumaTable, row: &str| {
                m.get(&(row.to_string(), col.clone()))
                    .copied()
                    .unwrap_or(f64::NAN)
            };
            // numastat prints MB with two decimals: 0.005 MB of rounding.
            let mb = |k: &str| f(n, &[k]).map(|v| v / 1024.0);
            t.close(
                &format!("node {id} MemTotal MB vs numastat -m"),
                mb("mem_total_kb"),
                get(&w.numa.1, "MemTotal"),
                0.006,
            );
            // numastat before and after; on a one-node host also every 10 ms read of
            // /proc/meminfo around perftop's sample (the node's MemFree is the host's there):
            // stress-ng --vm moved it 27 MB between numastat's reads (6,481-6,482 MB) and
            // perftop's (6,454 MB), less than the jump that marks a round noisy.
            let (lo, hi) = (get(&w.numa.0, "MemFree"), get(&w.numa.1, "MemFree"));
            let (lo, hi) = match nodes {
                1 => {
                    let (a, b) = w.span("MemFree", lo * 1024.0, hi * 1024.0);
                    (a / 1024.0, b / 1024.0)
                }
                _ => (lo, hi),
            };
            t.bracket(
                &format!("node {id} MemFree MB vs numastat -m (one node: and meminfo)"),
                mb("mem_free_kb"),
                lo,
                hi,
                MEM_DRIFT_KB / 1024.0,
            );
        }
        let node_total: f64 = w
            .numa
            .1
            .iter()
            .filter(|((row, col), _)| row == "MemTotal" && col.starts_with("Node"))
            .map(|(_, v)| v * 1024.0)
            .sum();
        t.note(
            "MemTotal vs sum of node MemTotal (hot-plugged memory outside the nodes)",
            &format!("{:.0} kB", w.free.1.total),
            &format!("{node_total:.0} kB"),
        );
        t
    });
}

#[test]
fn memory_object_matches_free() {
    const T: &str = "memory_object_matches_free";
    let _machine = crate::support::machine();
    if !live::ready(T, &["free", "numastat", "getconf"]) {
        return;
    }
    crate::support::ticker::rounds(T, 3, |_| {
        let w = memory_window();
        let mut t = Table::new(T);
        w.judge_noise(&mut t);
        let m = &w.frame["memory"];
        let (a, b) = &w.free;
        let mi = |k: &str| {
            (
                w.meminfo.0.get(k).map_or(f64::NAN, |&v| v as f64),
                w.meminfo.1.get(k).map_or(f64::NAN, |&v| v as f64),
            )
        };
        t.close(
            "memory.mem_total_kb vs free total",
            f(m, &["mem_total_kb"]),
            b.total,
            0.0,
        );
        t.bracket(
            "memory.mem_free_kb vs free free",
            f(m, &["mem_free_kb"]),
            w.span("MemFree", a.free, b.free).0,
            w.span("MemFree", a.free, b.free).1,
            MEM_DRIFT_KB,
        );
        t.bracket(
            "memory.mem_available_kb vs free available",
            f(m, &["mem_available_kb"]),
            w.span("MemAvailable", a.available, b.available).0,
            w.span("MemAvailable", a.available, b.available).1,
            MEM_DRIFT_KB,
        );
        t.bracket(
            "memory.buffers_kb vs free buffers",
            f(m, &["buffers_kb"]),
            w.span("Buffers", a.buffers, b.buffers).0,
            w.span("Buffers", a.buffers, b.buffers).1,
            MEM_DRIFT_KB,
        );
        // free's "cache" is Cached + SReclaimable (procps >= 3.3.10); perftop's cached_kb is
        // meminfo Cached, so SReclaimable (read right after each free) is taken out.
        let (sr0, sr1) = mi("SReclaimable");
        t.bracket(
            "memory.cached_kb vs free cache - SReclaimable",
            f(m, &["cached_kb"]),
            a.cache - sr0,
            b.cache - sr1,
            MEM_DRIFT_KB,
        );
        t.close(
            "memory.swap_total_kb vs free swap total",
            f(m, &["swap_total_kb"]),
            b.swap_total,
            0.0,
        );
        t.bracket(
            "memory.swap_free_kb vs free swap free",
            f(m, &["swap_free_kb"]),
            w.span("SwapFree", a.swap_free, b.swap_free).0,
            w.span("SwapFree", a.swap_free, b.swap_free).1,
            MEM_DRIFT_KB,
        );
        let (c0, c1) = mi("Committed_AS");
        // perftop's reading counts perftop itself; the readings around it do not.
        t.bracket(
            &format!(
                "memory.committed_as_kb vs meminfo Committed_AS (+ the recorder's own {:.0} kB)",
                w.own_commit_kb
            ),
            f(m, &["committed_as_kb"]),
            c0.min(c1),
            c0.max(c1) + w.own_commit_kb,
            MEM_DRIFT_KB,
        );
        let (l0, l1) = mi("CommitLimit");
        t.bracket(
            "memory.commit_limit_kb vs meminfo CommitLimit",
            f(m, &["commit_limit_kb"]),
            l0,
            l1,
            0.0,
        );
        let node_total: f64 = w
            .numa
            .1
            .iter()
            .filter(|((row, col), _)| row == "MemTotal" && col.starts_with("Node"))
            .map(|(_, v)| v * 1024.0)
            .sum();
        // numastat's MB have two decimals: 0.005 MB per node of rounding.
        t.close(
            "memory.nodes_total_kb vs numastat -m MemTotal nodes",
            f(m, &["nodes_total_kb"]),
            node_total,
            6.0,
        );
        let page_kb = (live::page_size() / 1024) as f64;
        t.close(
            "memory.page_kb vs getconf PAGESIZE",
            f(m, &["page_kb"]),
            page_kb,
            0.0,
        );
        t.close(
            "dirty.page_kb vs getconf PAGESIZE",
            f(&w.frame, &["dirty", "page_kb"]),
            page_kb,
            0.0,
        );
        let from = m["page_kb_from"].as_str().unwrap_or("null").to_string();
        t.holds(
            "memory.page_kb_from",
            from.clone(),
            "host".into(),
            from == "host",
        );
        t
    });
}
