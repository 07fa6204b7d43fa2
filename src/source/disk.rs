//! Disk readers: `/proc/diskstats` (4, 11, 15 or 17 stat fields) plus `sys/block/<dev>/` queue
//! settings, device-mapper names and the in-flight split.

use super::parse::dec;
use super::Probe;
use crate::sample::DiskSample;

/// Devices read per sample (each costs a few sysfs reads). A big SAN host with multipath has
/// a few thousand disks, partitions and dm devices; more is damage.
const MAX_DISKS: usize = 32_768;

pub fn read_disks(probe: &mut Probe) -> Vec<DiskSample> {
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
        let dir = format!("sys/block/{}", d.name);
        // A name is a whole disk for as long as it exists; asked once per refresh.
        d.whole_disk = probe.static_is_dir(&dir);
        if !d.whole_disk {
            continue;
        }
        // Queue settings: changed by an administrator or udev, never by a perftop tweak.
        d.rotational = probe.setting_flag(&format!("{dir}/queue/rotational"));
        d.scheduler = probe
            .setting_with(&format!("{dir}/queue/scheduler"), |l| {
                super::parse::selected_choice(l).map(str::to_string)
            })
            .flatten();
        d.nr_requests = probe.setting_u64(&format!("{dir}/queue/nr_requests"));
        if d.name.starts_with("dm-") {
            d.dm_name = probe.static_line(&format!("{dir}/dm/name"));
        }
        // The read/write split of what is in flight. `diskstats` counts the same requests
        // (the same kernel counters, read microseconds before): none there, none to split.
        if d.in_flight == 0 {
            continue;
        }
        d.inflight = probe.line_in(&dir, "inflight").and_then(|l| {
            let mut it = l.split_whitespace().map(dec);
            Some([it.next()??, it.next()??])
        });
    }
    super::storage::read_stacks(probe, &mut disks);
    disks.sort_by(|a, b| (a.major, a.minor, &a.name).cmp(&(b.major, b.minor, &b.name)));
    disks
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
