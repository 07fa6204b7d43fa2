//! Dirty page cache findings: dirty pages past the background threshold (flushing) and past
//! the throttle point (writers held back), each naming the sysctl that sets the limit.

use super::{raise, Hit, Severity, Thresholds};
use crate::derive::Derived;
use crate::units::kb;

fn sysctl(name: &str, bytes: Option<u64>, ratio: Option<u64>, from: Option<&str>) -> String {
    match (from, bytes, ratio) {
        (Some("bytes"), Some(b), _) => format!("vm.{name}_bytes {}", kb(Some(b / 1024))),
        (_, _, Some(r)) => format!("vm.{name}_ratio {r}"),
        _ => format!("vm.{name}"),
    }
}

pub(super) fn dirty_background(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let m = &d.dirty;
    let (dirty, bg) = (m.dirty_kb?, m.background_threshold_kb?);
    // Throttling says more; it supersedes the background hint.
    if bg == 0
        || dirty as f64 <= bg as f64 * t.dirty_background_factor
        || dirty_throttled(d, t).is_some()
    {
        return None;
    }
    let knob = sysctl(
        "dirty_background",
        m.dirty_background_bytes,
        m.dirty_background_ratio,
        m.background_limit_from.as_deref(),
    );
    let tweak = match m.background_limit_from.as_deref() {
        Some("bytes") => "vm.dirty_background_bytes",
        _ => "vm.dirty_background_ratio",
    };
    let msg = format!(
        "dirty {} past background {}: flushing ({knob})",
        kb(Some(dirty)),
        kb(Some(bg))
    );
    Some(raise(Severity::Info, Some(tweak), msg))
}

pub(super) fn dirty_throttled(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let m = &d.dirty;
    let dw = m.dirty_kb?.saturating_add(m.writeback_kb.unwrap_or(0));
    let freerun = m.freerun_kb?;
    if freerun == 0 || dw as f64 <= freerun as f64 * t.dirty_throttled_factor {
        return None;
    }
    let knob = sysctl(
        "dirty",
        m.dirty_bytes,
        m.dirty_ratio,
        m.limit_from.as_deref(),
    );
    let tweak = match m.limit_from.as_deref() {
        Some("bytes") => "vm.dirty_bytes",
        _ => "vm.dirty_ratio",
    };
    let (sev, msg) = match m.threshold_kb {
        Some(hard) if dw >= hard => (
            Severity::Crit,
            format!(
                "dirty+wb {} at limit {}: writers blocked ({knob})",
                kb(Some(dw)),
                kb(Some(hard))
            ),
        ),
        _ => (
            Severity::Warn,
            format!(
                "dirty+wb {} past freerun {}: writers throttled ({knob})",
                kb(Some(dw)),
                kb(Some(freerun))
            ),
        ),
    };
    Some(raise(sev, Some(tweak), msg))
}
