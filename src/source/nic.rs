//! A NIC's link from `sys/class/net/DEV/`: speed, duplex, MTU, `tx_queue_len` and
//! `operstate` in the settings tier, and, for NICs backed by a device (a driver link; `lo`,
//! bridges and tunnels have none), the counters `carrier_changes` every sample and
//! `statistics/rx_missed_errors` and `statistics/rx_crc_errors` whenever `/proc/net/dev` says
//! they may have moved.
//!
//! `/proc/net/dev`'s `drop` column is `rx_dropped + rx_missed_errors` and its `frame` column
//! `rx_length_errors + rx_over_errors + rx_crc_errors + rx_frame_errors`, all from the one
//! `dev_get_stats` the sysfs counters read too (`dev_seq_printf_stats`). The counters only grow
//! (a driver reset that zeroes them lowers the column, which is a move): a column that has not
//! moved since a counter was read says the counter has not either, so it is not read again.
//! On a healthy NIC both stay put, which saves 2 of its 3 files a sample.
//!
//! A carrier change is what makes the link's settings change (a link that comes up has a speed
//! again, one that drops has none), so a moved `carrier_changes` reads them again on the same
//! sample: `operstate` is then never staler than the counter that says it changed, for 3 files a
//! sample per device NIC instead of 8.

use super::probe::settings::Tiered;
use super::{parse_u64, spread_of, Cached, Probe};
use crate::cpulist::CpuList;
use crate::sample::NicLink;

/// What a reader keeps about one NIC between samples.
#[derive(Debug, Default)]
pub(crate) struct NicCache {
    /// `sys/class/net/NAME` and the tier's phase for it, made once.
    dir: String,
    spread: u64,
    /// The device's queues, RPS masks, NUMA node and driver, read again together when due.
    device: Option<Tiered<DeviceSettings>>,
    carrier: Option<u64>,
    /// `rx_missed_errors` and `rx_crc_errors` as last read, with the `/proc/net/dev` column
    /// (`drop`, `frame`) they were read at.
    missed: Option<(u64, u64)>,
    crc: Option<(u64, u64)>,
    speed: Option<Cached<String>>,
    duplex: Option<Cached<String>>,
    operstate: Option<Cached<String>>,
    mtu: Option<Cached<u64>>,
    tx_queue_len: Option<Cached<u64>>,
}

impl NicCache {
    fn expire(&mut self) {
        for s in [&mut self.speed, &mut self.duplex, &mut self.operstate]
            .into_iter()
            .flatten()
        {
            s.expire();
        }
    }
}

/// A NIC's settings that `/proc/net/dev` does not print: its receive queues' RPS masks and
/// transmit queue count (`ethtool -L`, `rps_cpus`), its device's NUMA node and its driver. No
/// tweak writes them; they are read again together within the settings tier (one lookup a
/// device a sample instead of ~6 path lookups and string copies each).
#[derive(Debug, Clone, Default)]
pub(crate) struct DeviceSettings {
    pub rx_queues: Vec<Option<CpuList>>,
    pub tx_queues: u32,
    pub numa_node: Option<i32>,
    pub driver: Option<String>,
}

/// `name`'s cache entry, taken out while the probe reads (its key is allocated once).
fn take(probe: &mut Probe, name: &str) -> NicCache {
    let c = match probe.cache.nics.get_mut(name) {
        Some(c) => std::mem::take(c),
        None => NicCache::default(),
    };
    if c.dir.is_empty() {
        let dir = format!("sys/class/net/{name}");
        let spread = spread_of(&dir);
        return NicCache { dir, spread, ..c };
    }
    c
}

fn put(probe: &mut Probe, name: &str, c: NicCache) {
    match probe.cache.nics.get_mut(name) {
        Some(slot) => *slot = c,
        None => {
            probe.cache.nics.insert(name.to_string(), c);
        }
    }
}

/// `name`'s device settings, as last read or read now when due.
pub(crate) fn device_settings(probe: &mut Probe, name: &str) -> DeviceSettings {
    let mut c = take(probe, name);
    let tier = probe.tier;
    let dir = &c.dir;
    let v = tier
        .get(&mut c.device, c.spread, || read_device_settings(probe, dir))
        .clone();
    put(probe, name, c);
    v
}

fn read_device_settings(probe: &mut Probe, dir: &str) -> DeviceSettings {
    let mut s = DeviceSettings::default();
    for q in probe.root.list_dir(&format!("{dir}/queues")) {
        if let Some(idx) = q.strip_prefix("rx-").and_then(super::parse::dec) {
            let rel = format!("{dir}/queues/{q}/rps_cpus");
            let mask = probe.setting_now(&rel, CpuList::parse_mask).flatten();
            let idx = idx as usize;
            if idx < 65536 {
                if s.rx_queues.len() <= idx {
                    s.rx_queues.resize(idx + 1, None);
                }
                s.rx_queues[idx] = mask;
            }
        } else if q.starts_with("tx-") {
            s.tx_queues += 1;
        }
    }
    // `lo`, bridges, veths and tunnels have no `device/`: only a NIC with a driver has a node
    // to read (a host with a thousand veths would otherwise probe a thousand absent files).
    s.driver = probe.root.link_name(&format!("{dir}/device/driver"));
    if s.driver.is_some() {
        s.numa_node = probe
            .setting_now(&format!("{dir}/device/numa_node"), |l| l.parse().ok())
            .flatten();
    }
    s
}

/// The `/proc/net/dev` columns of a device that sum its error counters (see the module comment).
#[derive(Debug, Clone, Copy)]
pub struct Columns {
    pub drop: u64,
    pub frame: u64,
}

/// `name`'s link; `device` says whether it has a driver (hardware or virtio), which decides
/// whether its error counters are read; `columns` are its `/proc/net/dev` columns this sample.
pub fn read_link(probe: &mut Probe, name: &str, device: bool, columns: Columns) -> NicLink {
    let mut c = take(probe, name);
    let dir = std::mem::take(&mut c.dir);
    let spread = c.spread;
    let mut link = NicLink::default();
    if device {
        link.carrier_changes = probe.u64_in(&dir, "carrier_changes");
        link.rx_missed_errors =
            counter(probe, &mut c.missed, &dir, "rx_missed_errors", columns.drop);
        link.rx_crc_errors = counter(probe, &mut c.crc, &dir, "rx_crc_errors", columns.frame);
        if c.carrier.is_some() && link.carrier_changes != c.carrier {
            c.expire();
        }
        c.carrier = link.carrier_changes;
    }
    // `speed` and `duplex` fail with EINVAL on a link that is down: unknown, not a problem.
    link.speed_mbps = quiet_in(probe, &mut c.speed, &dir, "speed", spread)
        .and_then(|s| s.parse::<u64>().ok())
        .filter(|&s| s > 0 && s < u64::from(u32::MAX));
    link.duplex = quiet_in(probe, &mut c.duplex, &dir, "duplex", spread)
        .filter(|d| d == "full" || d == "half");
    link.operstate = probe.setting_in(&mut c.operstate, &dir, "operstate", spread, |l| {
        Ok(l.to_string())
    });
    link.mtu = probe.setting_in(&mut c.mtu, &dir, "mtu", spread, parse_u64);
    link.tx_queue_len =
        probe.setting_in(&mut c.tx_queue_len, &dir, "tx_queue_len", spread, parse_u64);
    c.dir = dir;
    put(probe, name, c);
    link
}

/// `statistics/NAME`: as last read while `column`, the `/proc/net/dev` sum it is part of, has
/// not moved since; read now otherwise (and whenever it could not be read).
fn counter(
    probe: &mut Probe,
    last: &mut Option<(u64, u64)>,
    dir: &str,
    name: &str,
    column: u64,
) -> Option<u64> {
    if let Some((value, at)) = *last {
        if at == column {
            return Some(value);
        }
    }
    let value = probe.u64_in(dir, &format!("statistics/{name}"));
    *last = value.map(|v| (v, column));
    value
}

/// A settings-tier line read quietly: any read error is unknown and not noted.
fn quiet_in(
    probe: &mut Probe,
    slot: &mut Option<Cached<String>>,
    dir: &str,
    name: &str,
    spread: u64,
) -> Option<String> {
    let tier = probe.tier;
    let v = tier.get(slot, spread, || {
        Ok(probe
            .quiet_text(dir, name)
            .and_then(|t| t.lines().next().map(|l| l.trim().to_string()))
            .filter(|l| !l.is_empty()))
    });
    v.clone().ok().flatten()
}
