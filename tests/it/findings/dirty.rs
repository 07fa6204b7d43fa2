//! Dirty page rules: background writeback and throttling.

use super::*;

#[test]
fn dirty_background() {
    let mut p = Pair::quiet(1.0);
    p.b.memory.vmstat.nr_dirty = Some(BG_PAGES + 1);
    let f = p.fires("dirty.background");
    assert_eq!(f.severity, "info");
    assert_eq!(f.pane, "dirty");
    assert_eq!(f.tweak.as_deref(), Some("vm.dirty_background_ratio"));
    assert_eq!(
        f.message,
        "dirty 781M past background 781M: flushing (vm.dirty_background_ratio 10)"
    );
    p.b.memory.vmstat.nr_dirty = Some(BG_PAGES);
    p.silent("dirty.background");
}

#[test]
fn dirty_background_names_bytes_when_set() {
    let mut p = Pair::quiet(1.0);
    p.b.memory.dirty.background_bytes = Some(512 << 20);
    p.b.memory.vmstat.nr_dirty = Some(BG_PAGES + 1);
    let f = p.fires("dirty.background");
    assert_eq!(f.tweak.as_deref(), Some("vm.dirty_background_bytes"));
    assert!(
        f.message.ends_with("(vm.dirty_background_bytes 512M)"),
        "{}",
        f.message
    );
}

#[test]
fn dirty_throttled() {
    // Pages, as /proc/vmstat states them (the gauge, state and thresholds share that read).
    let freerun = (BG_PAGES + HARD_PAGES) / 2;
    let mut p = Pair::quiet(1.0);
    p.b.memory.vmstat.nr_dirty = Some(250_000);
    p.b.memory.vmstat.nr_writeback = Some(freerun - 250_000 + 1);
    let f = p.fires("dirty.throttled");
    assert_eq!(f.severity, "warn");
    assert_eq!(f.tweak.as_deref(), Some("vm.dirty_ratio"));
    assert_eq!(
        f.message,
        "dirty+wb 1.1G past freerun 1.1G: writers throttled (vm.dirty_ratio 20)"
    );
    p.silent("dirty.background"); // superseded
    p.b.memory.vmstat.nr_writeback = Some(freerun - 250_000);
    p.silent("dirty.throttled");
    p.fires("dirty.background");
    // At the hard limit writers are blocked outright.
    p.b.memory.vmstat.nr_writeback = Some(HARD_PAGES - 250_000);
    let f = p.fires("dirty.throttled");
    assert_eq!(f.severity, "crit");
    assert!(f.message.contains("writers blocked"), "{}", f.message);
}
