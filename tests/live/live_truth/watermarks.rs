//! Zone watermarks and the `vm.min_free_kbytes` knob on the live kernel: perftop's per-node
//! watermarks sum to what the kernel split `min_free_kbytes` into, follow the knob when perftop
//! itself changes it (`tweak set`, journalled), and `tweak undo` puts the kernel's value back.

use super::live::{self, f, Recording, Table};
use super::*;

/// Writes the value back on every path (the test's own undo is checked; this is the net).
struct MinFree(String);

impl Drop for MinFree {
    fn drop(&mut self) {
        let _ = std::fs::write("/proc/sys/vm/min_free_kbytes", &self.0);
    }
}

/// (min, low, high) pages summed over zones with managed pages, from `/proc/zoneinfo`.
fn zoneinfo_sums() -> (u64, u64, u64) {
    let (min, low, high, _) = zoneinfo_sums_and_boost();
    (min, low, high)
}

/// As `zoneinfo_sums`, and the zones' watermark boost: after a fragmenting allocation (the
/// cgroup squeeze before this test, say) the kernel raises every watermark by `boost` pages
/// for a while, and zoneinfo's `min` includes it.
fn zoneinfo_sums_and_boost() -> (u64, u64, u64, u64) {
    let text = std::fs::read_to_string("/proc/zoneinfo").unwrap_or_default();
    let (mut sums, mut zone, mut in_pages) = ((0, 0, 0, 0), (0, 0, 0, 0, 0), false);
    let mut add = |z: (u64, u64, u64, u64, u64)| {
        if z.3 > 0 {
            sums = (sums.0 + z.0, sums.1 + z.1, sums.2 + z.2, sums.3 + z.4);
        }
    };
    for line in text.lines() {
        let t = line.trim_start();
        if line.starts_with("Node ") {
            add(zone);
            zone = (0, 0, 0, 0, 0);
            in_pages = false;
        } else if t.starts_with("pages free") {
            in_pages = true;
        } else if t.starts_with("protection:") {
            in_pages = false;
        } else if in_pages {
            let mut w = t.split_whitespace();
            let (k, n) = (w.next(), w.next().and_then(|n| n.parse().ok()));
            match (k, n) {
                (Some("min"), Some(n)) => zone.0 = n,
                (Some("low"), Some(n)) => zone.1 = n,
                (Some("high"), Some(n)) => zone.2 = n,
                (Some("managed"), Some(n)) => zone.3 = n,
                (Some("boost"), Some(n)) => zone.4 = n,
                _ => {}
            }
        }
    }
    add(zone);
    sums
}

/// The frame's watermarks summed over nodes, in kB.
fn frame_sums(frame: &serde_json::Value) -> (Option<f64>, Option<f64>, Option<f64>) {
    let nodes = frame["memory"]["watermarks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let sum = |k: &str| -> Option<f64> {
        if nodes.is_empty() {
            return None;
        }
        nodes.iter().map(|n| f(n, &[k])).sum()
    };
    (sum("min_kb"), sum("low_kb"), sum("high_kb"))
}

#[test]
fn watermarks_follow_min_free_kbytes_set_and_undone_by_perftop() {
    const T: &str = "watermarks_follow_min_free_kbytes_set_and_undone_by_perftop";
    let _machine = support::machine();
    if !live::ready(T, &[]) {
        return;
    }
    let Some(old) = live::read_trim("/proc/sys/vm/min_free_kbytes") else {
        support::skip(T, "no /proc/sys/vm/min_free_kbytes");
        return;
    };
    if !std::path::Path::new("/proc/zoneinfo").exists() {
        support::skip(T, "no /proc/zoneinfo");
        return;
    }
    let _restore = MinFree(old.clone());
    let old_kb: u64 = old.parse().unwrap_or(0);
    let total_kb = live::kv("/proc/meminfo")["MemTotal"];
    // Half again as much, within the knob's bounds (5% of RAM).
    let new_kb = (old_kb + old_kb / 2).min(total_kb / 20);
    let page_kb = live::page_size() / 1024;
    let (b_min, b_low, b_high, boost) = zoneinfo_sums_and_boost();
    let before = (b_min, b_low, b_high);
    let state = tempfile::tempdir().expect("state dir");

    // 8 samples 0.5 s apart; the knob changes between the 3rd and the 4th.
    let rec = Recording::start(0.5, 8);
    live::sleep_ms(1200);
    let (ok, text) = perftop_tweak(
        state.path(),
        &["set", "vm.min_free_kbytes", &new_kb.to_string()],
    );
    assert!(ok, "perftop tweak set: {text}");
    let set_to = live::read_trim("/proc/sys/vm/min_free_kbytes");
    let after = zoneinfo_sums();
    let frames = rec.finish();
    let (ok, undo) = perftop_tweak(state.path(), &["undo"]);
    assert!(ok, "perftop tweak undo: {undo}");
    let restored = live::read_trim("/proc/sys/vm/min_free_kbytes");

    let mut t = Table::new(T);
    t.holds(
        "min_free_kbytes after tweak set",
        set_to.clone().unwrap_or_default(),
        new_kb.to_string(),
        set_to.as_deref() == Some(new_kb.to_string().as_str()),
    );
    // The kernel splits min_free_kbytes over the zones in whole pages: the sum is within a
    // page per zone of the sysctl.
    let zones = 5.0 * page_kb as f64;
    let (first, last) = (
        frames.first().expect("frames"),
        frames.last().expect("frames"),
    );
    let (min0, low0, high0) = frame_sums(first);
    // The sysctl split over the zones, plus the boost zoneinfo's `min` carries (0 at rest).
    t.close(
        "first frame min_kb vs min_free_kbytes + watermark boost",
        min0,
        (old_kb + boost * page_kb) as f64,
        zones,
    );
    t.close(
        "first frame min_kb vs zoneinfo",
        min0,
        (before.0 * page_kb) as f64,
        0.0,
    );
    t.close(
        "first frame low_kb vs zoneinfo",
        low0,
        (before.1 * page_kb) as f64,
        0.0,
    );
    t.close(
        "first frame high_kb vs zoneinfo",
        high0,
        (before.2 * page_kb) as f64,
        0.0,
    );
    let (min1, low1, high1) = frame_sums(last);
    t.close(
        "last frame min_kb vs the new min_free_kbytes",
        min1,
        new_kb as f64,
        zones,
    );
    t.close(
        "last frame min_kb vs zoneinfo",
        min1,
        (after.0 * page_kb) as f64,
        0.0,
    );
    t.close(
        "last frame low_kb vs zoneinfo",
        low1,
        (after.1 * page_kb) as f64,
        0.0,
    );
    t.close(
        "last frame high_kb vs zoneinfo",
        high1,
        (after.2 * page_kb) as f64,
        0.0,
    );
    t.holds(
        "min_free_kbytes after tweak undo",
        restored.clone().unwrap_or_default(),
        old.clone(),
        restored.as_deref() == Some(old.as_str()),
    );
    t.note("undo report", undo.lines().next().unwrap_or(""), "");
    t.finish();
}
