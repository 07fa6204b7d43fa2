//! Disk readers: `/proc/diskstats` (4, 11, 15 or 17 stat fields) plus `sys/block/<dev>/` queue
//! settings, device-mapper names and the in-flight split.

use super::parse::dec;
use super::probe::settings::{spread_of, Tiered};
use super::Probe;
use crate::sample::{DiskSample, DiskStack, Problem};
use foldhash::HashMap;

/// Devices read per sample (each costs a few sysfs reads). A big SAN host with multipath has
/// a few thousand disks, partitions and dm devices; more is damage.
const MAX_DISKS: usize = 32_768;

pub fn read_disks(probe: &mut Probe, cache: &mut DiskCache) -> Vec<DiskSample> {
    let Some(mut disks) = probe.with_text("proc/diskstats", true, |probe, text| {
        let mut disks = Vec::new();
        let mut bad = 0usize;
        for line in text.lines() {
            if line.trim().is_empty() {
                continue;
            }
            match parse_line(line) {
                Some(d) => disks.push(d),
                None => bad += 1,
            }
        }
        if bad > 0 {
            probe.note("proc/diskstats", format!("{bad} garbled line(s) skipped"));
        }
        if disks.len() > MAX_DISKS {
            let msg = format!("{} devices; only the first {MAX_DISKS} read", disks.len());
            probe.note("proc/diskstats", msg);
            disks.truncate(MAX_DISKS);
        }
        disks
    }) else {
        return Vec::new();
    };
    for d in &mut disks {
        let known = cache.of(probe, &d.name, d.never_used());
        d.whole_disk = known.whole;
        d.rotational = known.rotational;
        d.scheduler.clone_from(&known.scheduler);
        d.nr_requests = known.nr_requests;
        d.dm_name.clone_from(&known.dm_name);
        d.stack.clone_from(&known.stack);
        // A setting found garbled (or unreadable) stays said while its value is the one read.
        probe.problems.extend(known.problems.iter().cloned());
        // The read/write split of what is in flight. `diskstats` counts the same requests
        // (the same kernel counters, read microseconds before): none there, none to split.
        if !d.whole_disk || d.in_flight == 0 {
            continue;
        }
        let dir = format!("sys/block/{}", d.name);
        d.inflight = probe.line_in(&dir, "inflight").and_then(|l| {
            let mut it = l.split_whitespace().map(dec);
            Some([it.next()??, it.next()??])
        });
    }
    cache.keep_only(&disks);
    super::storage::read_path_states(probe, &mut disks);
    disks.sort_by(|a, b| (a.major, a.minor, &a.name).cmp(&(b.major, b.minor, &b.name)));
    disks
}

/// Per device of `/proc/diskstats`: whether it is a whole disk and, if so, its settings (queue,
/// scheduler, stack), kept between samples and read again together when due (the settings
/// tier's rule, `Tier::get`: within `Tier::refresh` samples, on a phase set by the name,
/// every sample at long intervals, and on the sample after a perftop write). A device that
/// has never done I/O (`DiskSample::never_used`) is read when first seen and then only on
/// the static refresh, after a perftop write, and on the sample its first I/O shows: its
/// settings shape nothing until it is used, and the kernel's spare loop devices and an
/// unconfigured zram were 42 of this VM's ~120 settings (5 of 57 files a 1 s sample, ~5 % of
/// its CPU, docs/performance.md "Never-used devices' settings held"). One lookup per device a sample
/// instead of one per setting: with ten loop, zram and virtio devices the ~90 per-setting
/// lookups (a path formatted and hashed each) were ~5% of a live sample's CPU in a profile,
/// and a SAN host has thousands of devices.
#[derive(Debug, Default)]
pub struct DiskCache {
    by_name: HashMap<String, Option<Tiered<Known>>>,
}

/// One device's settings as last read.
#[derive(Debug, Clone, Default)]
struct Known {
    whole: bool,
    rotational: Option<bool>,
    scheduler: Option<String>,
    nr_requests: Option<u64>,
    dm_name: Option<String>,
    stack: Option<DiskStack>,
    /// What reading them noted: said again every sample the values are shown.
    problems: Vec<Problem>,
    /// Read while the device had never done I/O (`DiskSample::never_used`): held until it does.
    unused: bool,
}

impl DiskCache {
    /// Forgets every device (the static refresh: disks come and go with hardware).
    pub fn forget(&mut self) {
        self.by_name.clear();
    }

    /// `name`'s settings: as last read, or read now when due. `unused`: the device has never
    /// done I/O (`DiskSample::never_used`); settings read while it had not are held until it
    /// does.
    fn of(&mut self, probe: &mut Probe, name: &str, unused: bool) -> &Known {
        if !self.by_name.contains_key(name) {
            self.by_name.insert(name.to_string(), None);
        }
        let slot = self.by_name.get_mut(name).expect("inserted above");
        let mut tier = probe.tier;
        if let Some(k) = slot.as_mut().filter(|k| k.value().unused) {
            if unused {
                // Held (see `Tiered::hold`): only a perftop write reads it again, at any
                // interval; the static refresh forgets it.
                tier.every_sample = false;
            } else {
                // Its first I/O: the settings it does it with, read now.
                k.expire();
            }
        }
        tier.get(slot, spread_of(name), || read_known(probe, name, unused));
        let k = slot.as_mut().expect("read above");
        if k.value().unused {
            k.hold();
        }
        k.value()
    }

    /// Drops the devices `/proc/diskstats` no longer lists.
    fn keep_only(&mut self, disks: &[DiskSample]) {
        if self.by_name.len() != disks.len() {
            let listed: std::collections::HashSet<&str> =
                disks.iter().map(|d| d.name.as_str()).collect();
            self.by_name
                .retain(|name, _| listed.contains(name.as_str()));
        }
    }
}

/// Reads one device's settings now (`unused`: it has never done I/O).
fn read_known(probe: &mut Probe, name: &str, unused: bool) -> Known {
    let noted = probe.problems.len();
    let dir = format!("sys/block/{name}");
    // A name is a whole disk for as long as it exists; asked once per static refresh.
    let mut k = Known {
        whole: probe.static_is_dir(&dir),
        unused,
        ..Known::default()
    };
    if k.whole {
        // Queue settings: changed by an administrator, udev or a perftop tweak (the tier
        // reads every disk's again on the sample after any perftop write).
        k.rotational = probe.setting_now_flag(&format!("{dir}/queue/rotational"));
        k.scheduler = probe
            .setting_now(&format!("{dir}/queue/scheduler"), |l| {
                super::parse::selected_choice(l).map(str::to_string)
            })
            .flatten();
        k.nr_requests = probe.setting_now_u64(&format!("{dir}/queue/nr_requests"));
        if name.starts_with("dm-") {
            k.dm_name = probe.static_line(&format!("{dir}/dm/name"));
        }
        k.stack = Some(super::storage::read_settings(probe, name));
    }
    // Taken out here and put back by `read_disks` every sample, this one included.
    k.problems = probe.problems.split_off(noted);
    k
}

/// One line; `None` when garbled. The field layout is decided by the count after the name.
pub fn parse_line(line: &str) -> Option<DiskSample> {
    let mut it = line.split_ascii_whitespace();
    let major = u32::try_from(dec(it.next()?)?).ok()?;
    let minor = u32::try_from(dec(it.next()?)?).ok()?;
    let name = it.next()?.to_string();
    let mut f = [0u64; 17];
    let mut n = 0;
    for tok in it {
        if n == f.len() {
            break; // later kernels may add fields; the first 17 keep their meaning
        }
        f[n] = dec(tok)?;
        n += 1;
    }
    let mut d = DiskSample {
        name,
        major,
        minor,
        fields: n as u8,
        ..DiskSample::default()
    };
    match n {
        // 2.6 partitions: reads, read sectors, writes, write sectors.
        4 => {
            d.read_ios = f[0];
            d.read_sectors = f[1];
            d.write_ios = f[2];
            d.write_sectors = f[3];
        }
        11.. => {
            d.read_ios = f[0];
            d.read_merges = f[1];
            d.read_sectors = f[2];
            d.read_ticks = f[3];
            d.write_ios = f[4];
            d.write_merges = f[5];
            d.write_sectors = f[6];
            d.write_ticks = f[7];
            d.in_flight = f[8];
            d.io_ticks = f[9];
            d.time_in_queue = f[10];
            if n >= 15 {
                d.discard_ios = Some(f[11]);
                d.discard_merges = Some(f[12]);
                d.discard_sectors = Some(f[13]);
                d.discard_ticks = Some(f[14]);
            }
            if n >= 17 {
                d.flush_ios = Some(f[15]);
                d.flush_ticks = Some(f[16]);
            }
        }
        _ => return None,
    }
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths() {
        let old = parse_line("   3    1 hda1 35486 38030 38030 38030").expect("4 fields");
        assert_eq!(
            (old.fields, old.read_ios, old.read_sectors),
            (4, 35486, 38030)
        );
        let v11 = parse_line(" 8 0 sda 1 2 3 4 5 6 7 8 9 10 11").expect("11");
        assert_eq!((v11.time_in_queue, v11.discard_ios), (11, None));
        let v17 = parse_line(
            " 254       0 vda 5660 3137 1727258 8193 525 8396 115344 986 0 1780 9257 3012 63 38040 76 18 0",
        )
        .expect("17");
        assert_eq!(v17.flush_ios, Some(18));
        assert_eq!(v17.discard_sectors, Some(38040));
        assert!(parse_line("8 0 sda 1 2 3 4 5").is_none());
        assert!(parse_line("8 0 sda 1 2 3 x").is_none());
        assert!(parse_line("").is_none());
    }
}
