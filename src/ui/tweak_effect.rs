//! What a tweak will do, said as its effect rather than its numbers (`10 → 15` says little):
//! for the dirty knobs the threshold in bytes before → after, worked out the way the kernel
//! does (`domain_dirty_limits`: dirtyable memory × ratio / 100, or the byte value; background
//! halved when it would reach the limit), from the thresholds the kernel set now (`derive`'s
//! `DirtyMetrics`, read from /proc/vmstat); for the other knobs, in words.

use crate::derive::memory::DirtyMetrics;
use crate::tweak::plan::Plan;
use crate::units::kb;

/// The four sysctls that set the two thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Settings {
    ratio: u64,
    bytes: u64,
    bg_ratio: u64,
    bg_bytes: u64,
}

impl Settings {
    fn now(m: &DirtyMetrics) -> Option<Settings> {
        Some(Settings {
            ratio: m.dirty_ratio?,
            bytes: m.dirty_bytes?,
            bg_ratio: m.dirty_background_ratio?,
            bg_bytes: m.dirty_background_bytes?,
        })
    }

    /// With `knob` set to `v`: writing one of a ratio/bytes pair zeroes the other.
    fn with(mut self, knob: &str, v: u64) -> Option<Settings> {
        match knob {
            "vm.dirty_ratio" => (self.ratio, self.bytes) = (v, 0),
            "vm.dirty_bytes" => (self.ratio, self.bytes) = (0, v),
            "vm.dirty_background_ratio" => (self.bg_ratio, self.bg_bytes) = (v, 0),
            "vm.dirty_background_bytes" => (self.bg_ratio, self.bg_bytes) = (0, v),
            _ => return None,
        }
        Some(self)
    }

    /// (background, limit, halved) in kB over `dirtyable_kb`, as the kernel sets them
    /// (halved: the background threshold would reach the limit, so it is half the limit);
    /// `None` when a ratio is used and the dirtyable memory is unknown.
    fn limits(self, dirtyable_kb: Option<u64>) -> Option<(u64, u64, bool)> {
        let of = |bytes: u64, ratio: u64| match bytes {
            0 => Some(dirtyable_kb? * ratio / 100),
            b => Some(b.div_ceil(1024)),
        };
        let limit = of(self.bytes, self.ratio)?;
        let bg = of(self.bg_bytes, self.bg_ratio)?;
        Some(if bg >= limit {
            (limit / 2, limit, true)
        } else {
            (bg, limit, false)
        })
    }
}

/// The kernel's dirtyable memory in kB, backed out of a threshold it set from a ratio now:
/// the limit's first (the background one may have been halved).
fn dirtyable_kb(m: &DirtyMetrics, s: Settings) -> Option<u64> {
    match (m.threshold_kb, m.background_threshold_kb) {
        (Some(t), _) if s.bytes == 0 && s.ratio > 0 => Some(t * 100 / s.ratio),
        (Some(t), Some(b)) if s.bg_bytes == 0 && s.bg_ratio > 0 && b != t / 2 => {
            Some(b * 100 / s.bg_ratio)
        }
        _ => None,
    }
}

/// The dirty thresholds that `knob` = `value` moves: `background writeback starts at 1.9G →
/// 2.8G`. `None` when nothing moves; words when the size cannot be worked out.
pub fn dirty(m: &DirtyMetrics, knob: &str, value: u64) -> Option<String> {
    let now = Settings::now(m)?;
    let after = now.with(knob, value)?;
    let dirtyable = dirtyable_kb(m, now);
    let (Some((bg0, lim0, _)), Some((bg1, lim1, halved))) =
        (now.limits(dirtyable), after.limits(dirtyable))
    else {
        return Some(format!(
            "{knob} {value}: the kernel sets its thresholds from byte values now, so dirtyable \
             memory (and the size the ratio gives) cannot be worked out here"
        ));
    };
    // Shown from what the kernel set (vmstat); whether a threshold moves, by the same formula
    // on both sides, so that rounding never reads as a change.
    let (kbg, klim) = (
        m.background_threshold_kb.unwrap_or(bg0),
        m.threshold_kb.unwrap_or(lim0),
    );
    let mut said = Vec::new();
    if bg1 != bg0 {
        said.push(format!(
            "background writeback starts at {} → {}",
            kb(Some(kbg)),
            kb(Some(bg1))
        ));
    }
    if lim1 != lim0 {
        said.push(format!(
            "writers are throttled near the dirty limit {} → {}",
            kb(Some(klim)),
            kb(Some(lim1))
        ));
    }
    if halved && bg1 != bg0 {
        said.push(
            "(the kernel halves the background threshold: it must stay below the limit)".into(),
        );
    }
    (!said.is_empty()).then(|| said.join("; "))
}

/// The effect of `p` for the preview's first line, when there is more to say than old → new.
pub fn effect(p: &Plan, m: Option<&DirtyMetrics>) -> Option<String> {
    let old = p.writes().next().map(|c| c.old.as_str()).unwrap_or("-");
    let v = p.value.as_str();
    let num = |s: &str| s.parse::<u64>().ok();
    match p.knob.as_str() {
        k if k.starts_with("vm.dirty_") => dirty(m?, k, num(v)?),
        "governor" => Some(
            match v {
                "performance" => "CPUs held at their highest frequency: lower latency, more power",
                "powersave" => "frequency follows load within the driver's limits (less power)",
                "schedutil" | "ondemand" | "conservative" => "frequency follows load",
                "userspace" => "frequency stays where it is set by hand",
                _ => return None,
            }
            .into(),
        ),
        "thp.enabled" => Some(
            match v {
                "always" => {
                    "every anonymous mapping may get huge pages (faults may stall, see thp.defrag)"
                }
                "madvise" => "only regions that ask (MADV_HUGEPAGE) get huge pages",
                "never" => "no new transparent huge pages; those in use stay until freed",
                _ => return None,
            }
            .into(),
        ),
        "vm.swappiness" => {
            let (o, n) = (num(old)?, num(v)?);
            Some(if n > o {
                "reclaim swaps anonymous memory sooner and keeps more file cache".into()
            } else {
                "reclaim drops file cache before it swaps anonymous memory".into()
            })
        }
        "vm.min_free_kbytes" => Some(format!(
            "kswapd keeps {} → {} free (the min watermark, spread over the zones)",
            kb(num(old)),
            kb(num(v))
        )),
        "net.core.netdev_budget" => Some(format!(
            "one NET_RX round takes up to {v} packets (was {old}) before it yields"
        )),
        "net.core.netdev_budget_usecs" => Some(format!(
            "one NET_RX round runs up to {v} µs (was {old}) before it yields"
        )),
        "net.core.netdev_max_backlog" => Some(format!(
            "each CPU queues up to {v} packets (was {old}) before it drops"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The intel-pstate fixture's numbers: ratios 20 and 10, limit 3.8G, background 1.9G
    /// (vmstat nr_dirty_threshold 1,000,000 pages of 4 KiB, background 500,000).
    fn fixture() -> DirtyMetrics {
        DirtyMetrics {
            threshold_kb: Some(4_000_000),
            background_threshold_kb: Some(2_000_000),
            dirty_ratio: Some(20),
            dirty_bytes: Some(0),
            dirty_background_ratio: Some(10),
            dirty_background_bytes: Some(0),
            ..Default::default()
        }
    }

    #[test]
    fn a_ratio_moves_its_threshold_by_dirtyable_memory() {
        // Dirtyable memory = 4,000,000 kB × 100 / 20 = 20,000,000 kB; 15% of it = 3,000,000 kB.
        assert_eq!(
            dirty(&fixture(), "vm.dirty_background_ratio", 15).as_deref(),
            Some("background writeback starts at 1.9G → 2.9G")
        );
        // 30% = 6,000,000 kB (5.7G); background stays at 10%.
        assert_eq!(
            dirty(&fixture(), "vm.dirty_ratio", 30).as_deref(),
            Some("writers are throttled near the dirty limit 3.8G → 5.7G")
        );
        // Bytes: 1 GiB = 1,048,576 kB.
        assert_eq!(
            dirty(&fixture(), "vm.dirty_bytes", 1 << 30).as_deref(),
            Some(
                "background writeback starts at 1.9G → 512M; writers are throttled near the \
                 dirty limit 3.8G → 1.0G; (the kernel halves the background threshold: it must \
                 stay below the limit)"
            )
        );
        assert_eq!(dirty(&fixture(), "vm.dirty_background_ratio", 10), None);
    }

    #[test]
    fn from_bytes_the_ratio_cannot_be_sized() {
        let mut m = fixture();
        m.dirty_bytes = Some(4_096_000_000);
        m.dirty_ratio = Some(0);
        m.dirty_background_bytes = Some(2_048_000_000);
        m.dirty_background_ratio = Some(0);
        let s = dirty(&m, "vm.dirty_ratio", 20).expect("words");
        assert!(s.contains("cannot be worked out"), "{s}");
    }
}
