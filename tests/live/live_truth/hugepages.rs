//! The huge page pool against what the kernel granted.

use super::live::{self, f, find, Recording, Table};
use super::*;

/// Restores `vm.nr_hugepages` on every path.
struct HugePool(String);

impl Drop for HugePool {
    fn drop(&mut self) {
        let _ = std::fs::write("/proc/sys/vm/nr_hugepages", &self.0);
    }
}

#[test]
fn hugepage_pool_shows_in_sizes_and_node() {
    const T: &str = "hugepage_pool_shows_in_sizes_and_node";
    let _machine = support::machine();
    if !live::ready(T, &[]) {
        return;
    }
    let Some(old) = live::read_trim("/proc/sys/vm/nr_hugepages") else {
        support::skip(T, "no /proc/sys/vm/nr_hugepages (kernel without hugetlbfs)");
        return;
    };
    if live::kv("/proc/meminfo").get("Hugepagesize") != Some(&2048) {
        support::skip(T, "default huge page size is not 2048 kB");
        return;
    }
    let _pool = HugePool(old.clone());
    let want: u64 = old.parse::<u64>().unwrap_or(0) + 8;
    live::write_file("/proc/sys/vm/nr_hugepages", &want.to_string());
    let mi = live::kv("/proc/meminfo");
    let frame = Recording::start(0.25, 2)
        .finish()
        .pop()
        .expect("one interval");
    let mut t = Table::new(T);
    let (total, free) = (mi["HugePages_Total"], mi["HugePages_Free"]);
    t.holds(
        "kernel granted the pool",
        format!("{total} total, {free} free"),
        format!("{want}"),
        total == want,
    );
    let size = find(&frame["hugepages"]["sizes"], "size_kb", "2048");
    // Nothing maps these pages during the test: the counts are exact.
    t.close(
        "hugepages 2048 kB total vs meminfo",
        size.and_then(|s| f(s, &["total"])),
        total as f64,
        0.0,
    );
    t.close(
        "hugepages 2048 kB free vs meminfo",
        size.and_then(|s| f(s, &["free"])),
        free as f64,
        0.0,
    );
    let mut node_total = 0.0;
    let mut node_free = 0.0;
    for n in frame["nodes"].as_array().into_iter().flatten() {
        let id = n["node"].as_u64().unwrap_or(0);
        let dir = format!("/sys/devices/system/node/node{id}/hugepages/hugepages-2048kB");
        let k = |x: &str| live::read_trim(format!("{dir}/{x}")).and_then(|v| v.parse::<f64>().ok());
        let ours = find(&n["hugepages"], "size_kb", "2048");
        let (kt, kf) = (
            k("nr_hugepages").unwrap_or(f64::NAN),
            k("free_hugepages").unwrap_or(f64::NAN),
        );
        t.close(
            &format!("node {id} 2048 kB total vs sysfs"),
            ours.and_then(|s| f(s, &["total"])),
            kt,
            0.0,
        );
        t.close(
            &format!("node {id} 2048 kB free vs sysfs"),
            ours.and_then(|s| f(s, &["free"])),
            kf,
            0.0,
        );
        node_total += ours.and_then(|s| f(s, &["total"])).unwrap_or(0.0);
        node_free += ours.and_then(|s| f(s, &["free"])).unwrap_or(0.0);
    }
    t.close(
        "sum of nodes 2048 kB total",
        Some(node_total),
        total as f64,
        0.0,
    );
    t.close(
        "sum of nodes 2048 kB free",
        Some(node_free),
        free as f64,
        0.0,
    );
    t.finish();
}
