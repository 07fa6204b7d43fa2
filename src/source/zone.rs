//! `/proc/zoneinfo`: each zone's min/low/high watermarks and managed pages. The file is long
//! (a block per CPU per zone on big hosts) and its watermarks change only when
//! `vm.min_free_kbytes` or `vm.watermark_scale_factor` does, so the reader keeps the last
//! parse and reads it again when those change or the static caches are refreshed.

use super::Probe;
use crate::sample::Zone;

/// Zones as the kernel lists them; a garbled number is unknown, a block without its
/// `Node N, zone NAME` header is skipped and noted.
pub fn parse_zoneinfo(probe: &mut Probe, text: &str) -> Vec<Zone> {
    let mut out: Vec<Zone> = Vec::new();
    let mut bad = 0usize;
    // Only the first `pages free` block of a zone holds its watermarks; later lines of the
    // same name (per-CPU pagesets, `nr_free_pages`) are not read.
    let mut in_pages = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Node ") {
            in_pages = false;
            match header(rest) {
                Some((node, name)) => out.push(Zone {
                    node,
                    name,
                    ..Zone::default()
                }),
                None => bad += 1,
            }
            continue;
        }
        let t = line.trim_start();
        if t.starts_with("pages free") {
            in_pages = true;
            continue;
        }
        if !in_pages || t.starts_with("protection:") || t.starts_with("pagesets") {
            in_pages = false;
            continue;
        }
        let Some(zone) = out.last_mut() else { continue };
        let mut w = t.split_whitespace();
        let (Some(key), Some(val)) = (w.next(), w.next()) else {
            continue;
        };
        let slot = match key {
            "min" => &mut zone.min,
            "low" => &mut zone.low,
            "high" => &mut zone.high,
            "managed" => &mut zone.managed,
            _ => continue,
        };
        match val.parse() {
            Ok(v) => *slot = Some(v),
            Err(_) => bad += 1,
        }
    }
    if bad > 0 {
        probe.note("proc/zoneinfo", format!("{bad} garbled line(s) skipped"));
    }
    out
}

/// `0, zone   Normal` → (0, "Normal").
fn header(rest: &str) -> Option<(u32, String)> {
    let (node, zone) = rest.split_once(',')?;
    let name = zone.trim().strip_prefix("zone")?.trim();
    if name.is_empty() {
        return None;
    }
    Some((node.trim().parse().ok()?, name.to_string()))
}

/// The last parse, and the sysctls it was read under.
#[derive(Debug, Default)]
pub struct ZoneCache {
    key: Option<(Option<u64>, Option<u64>)>,
    zones: Vec<Zone>,
}

impl ZoneCache {
    /// The zones, read again when `key` (min_free_kbytes, watermark_scale_factor) changed or
    /// the cache was dropped.
    pub fn zones(&mut self, probe: &mut Probe, key: (Option<u64>, Option<u64>)) -> Vec<Zone> {
        if self.key != Some(key) {
            self.zones = probe
                .with_text("proc/zoneinfo", false, parse_zoneinfo)
                .unwrap_or_default();
            self.key = Some(key);
        }
        self.zones.clone()
    }

    pub fn forget(&mut self) {
        self.key = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::root::Root;

    const TEXT: &str = "Node 0, zone      DMA
  per-node stats
      nr_inactive_anon 16
  pages free     3840
        boost    0
        min      14
        low      17
        high     20
        spanned  4095
        present  3998
        managed  3840
        cma      0
        protection: (0, 2815, 15540, 15540, 15540)
      nr_free_pages 3840
  pagesets
    cpu: 0
              count: 0
              high:  0
Node 0, zone   Normal
  pages free     3280155
        min      14008
        low      17776
        high     21544
        managed  3768320
        protection: (0, 0, 0, 0, 0)
    cpu: 0
              count: 210
              high:  4186
Node 1, zone  Movable
  pages free     0
        min      x
        low      32
        high     32
        managed  0
";

    #[test]
    fn watermarks_of_each_zone_not_the_pagesets() {
        let mut p = Probe::new(Root::new("/nonexistent"));
        let z = parse_zoneinfo(&mut p, TEXT);
        assert_eq!(z.len(), 3);
        assert_eq!((z[0].node, z[0].name.as_str()), (0, "DMA"));
        assert_eq!(
            (z[0].min, z[0].low, z[0].high, z[0].managed),
            (Some(14), Some(17), Some(20), Some(3840))
        );
        // The pageset's `high: 4186` is not the zone's high watermark.
        assert_eq!(z[1].high, Some(21544));
        assert_eq!(z[1].managed, Some(3_768_320));
        assert_eq!((z[2].node, z[2].min, z[2].low), (1, None, Some(32)));
        assert!(
            p.problems.iter().any(|n| n.what.contains("garbled")),
            "{:?}",
            p.problems
        );
        assert!(parse_zoneinfo(&mut p, "").is_empty());
        assert!(parse_zoneinfo(&mut p, "Node x, zone\n  pages free 1\n  min 2\n").is_empty());
    }
}
