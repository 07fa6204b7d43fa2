//! The four dirty page cache knobs (`vm.dirty_ratio`, `vm.dirty_background_ratio` and their
//! `_bytes` twins): each with its own description, and the twin it zeroes as a side effect.

use super::knob::{single, Allowed, Knob, Target};
use super::range::Unit;
use super::Ctx;

/// Each dirty knob says which threshold it sets and how: the ratio and bytes twins set the
/// same threshold, and the two thresholds do different things (background writeback starts at
/// one, writers are throttled near the other).
fn dirty_description(name: &str) -> &'static str {
    match name {
        "vm.dirty_ratio" => {
            "% of dirtyable memory at which writers are throttled (the dirty limit); \
             writing it zeroes vm.dirty_bytes"
        }
        "vm.dirty_background_ratio" => {
            "% of dirtyable memory at which background writeback starts; \
             writing it zeroes vm.dirty_background_bytes"
        }
        "vm.dirty_bytes" => {
            "the dirty limit in bytes (writers are throttled near it); \
             writing it zeroes vm.dirty_ratio"
        }
        _ => {
            "dirty bytes at which background writeback starts; \
             writing it zeroes vm.dirty_background_ratio"
        }
    }
}

fn dirty(ctx: &Ctx, name: &'static str, partner: &'static str, allowed: Allowed) -> Knob {
    let file = name.trim_start_matches("vm.");
    let mut k = single(
        ctx,
        name,
        dirty_description(name),
        &format!("proc/sys/vm/{file}"),
        allowed,
    );
    k.side.push(Target {
        label: partner.to_string(),
        rel: format!("proc/sys/vm/{}", partner.trim_start_matches("vm.")),
    });
    k
}

/// The four knobs; `total_kb` (MemTotal) bounds the byte forms at half of memory.
pub(super) fn knobs(ctx: &Ctx, total_kb: u64) -> Vec<Knob> {
    let bytes_max = (total_kb * 1024 / 2).max(1 << 20);
    vec![
        dirty(
            ctx,
            "vm.dirty_ratio",
            "vm.dirty_bytes",
            Allowed::Range {
                min: 1,
                max: 90,
                unit: Unit::Percent,
            },
        ),
        dirty(
            ctx,
            "vm.dirty_background_ratio",
            "vm.dirty_background_bytes",
            Allowed::Range {
                min: 1,
                max: 50,
                unit: Unit::Percent,
            },
        ),
        dirty(
            ctx,
            "vm.dirty_bytes",
            "vm.dirty_ratio",
            Allowed::Range {
                min: 1 << 20,
                max: bytes_max,
                unit: Unit::Bytes,
            },
        ),
        dirty(
            ctx,
            "vm.dirty_background_bytes",
            "vm.dirty_background_ratio",
            Allowed::Range {
                min: 1 << 20,
                max: bytes_max,
                unit: Unit::Bytes,
            },
        ),
    ]
}
