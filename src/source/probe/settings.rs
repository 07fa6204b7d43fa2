//! The settings tier: files only an administrator or firmware changes (see the `source` module
//! comment), read again every `SETTINGS_REFRESH_SAMPLES` samples, or every
//! `SETTINGS_REFRESH_SECS` when samples come faster (`Tier::refresh`), instead of every sample.
//! One rule (`Tier::get`) decides when for every kind of setting: a file's first line, a
//! directory listing, a symlink's target.

use super::budget::Budget;
use super::{first_line, join, parse_flag, parse_u64, Probe};
use crate::root::Every;
use foldhash::HashMap;
use std::time::Duration;

/// Settings no tweak writes are read again at least this often (in samples); see the module
/// comment. On a 4096-CPU host the idle states' `disable` files alone are 16k files per sample.
pub(crate) const SETTINGS_REFRESH_SAMPLES: u64 = 10;
/// ...or, when samples come faster than one a second, this often in time: a setting changed by
/// hand shows within 10 s at any interval, and four samples a second do not read settings four
/// times as often (~15 files a sample on the 2-vCPU VM, a fifth of a 0.25 s sample's CPU).
pub(crate) const SETTINGS_REFRESH_SECS: f64 = 10.0;
/// The most samples a refresh may wait (10 s at the fastest interval, 0.25 s).
pub(crate) const SETTINGS_REFRESH_MAX_SAMPLES: u64 = 40;
/// Samples at least this far apart read settings every time: the saving does not matter at
/// such intervals, and ten of them would be minutes.
pub(crate) const SETTINGS_EVERY_SAMPLE_GAP: Duration = Duration::from_secs(2);
/// What a gap may fall short of `SETTINGS_EVERY_SAMPLE_GAP` and still count: a step and a
/// half of `/proc/uptime`'s 10 ms. Samples 2 s apart read 1.99, 2.00 or 2.01 s apart by that
/// clock; without the slack, those that read 1.99 s fell back to the tier (a setting read
/// again within 20 s) while the rest read every setting.
pub(crate) const CLOCK_SLACK_S: f64 = 0.015;

/// Where sampling stands for the settings tier; a copy goes to every reader thread.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tier {
    /// Counts samples (from 1); settings are due by it.
    pub(crate) sample_no: u64,
    /// Settings are read every sample (samples far apart; see `SETTINGS_EVERY_SAMPLE_GAP`).
    pub(crate) every_sample: bool,
    /// perftop wrote a kernel file since the last sample (`root::note_write`): every setting
    /// (a tweak's sysctl, THP mode, scheduler) is read again this sample, and what tweaks
    /// write per CPU (governor, EPP, IRQ affinity) wherever it is read in turns.
    pub(crate) tweaked: bool,
    /// Samples between two reads of a setting: `SETTINGS_REFRESH_SAMPLES`, more when samples
    /// come faster than `SETTINGS_REFRESH_SECS` allows (`Tier::refresh_for`).
    pub(crate) refresh: u64,
    /// Seconds since the previous sample by the root's clock (`None`: the first sample, or a
    /// clock that does not move): what `detail_every` and the idle processes' turns
    /// (`processes::idle_every`) are worked out from.
    pub(crate) gap_s: Option<f64>,
    /// Samples between two reads of what is read about once a second when samples come
    /// faster (per-CPU detail, a node's meminfo, the TCP tables, the cgroups, the process
    /// pass): `turns::every_for_gap`, set once a sample so every reader uses one period.
    pub(crate) detail_every: u32,
}

impl Default for Tier {
    /// Before the first sample: nothing is cached, so everything is read anyway.
    fn default() -> Tier {
        Tier {
            sample_no: 0,
            every_sample: true,
            tweaked: false,
            refresh: SETTINGS_REFRESH_SAMPLES,
            gap_s: None,
            detail_every: 1,
        }
    }
}

/// A setting as last read and the sample number at which it is read again.
#[derive(Debug, Clone)]
pub(crate) struct Tiered<V> {
    value: V,
    due: u64,
}

/// A setting file's first line as last read: its value, or why it is garbled (noted again
/// every sample, as if it had been read).
pub(crate) type Cached<T> = Tiered<Result<Option<T>, String>>;

impl<V> Tiered<V> {
    /// The setting as last read.
    pub(crate) fn value(&self) -> &V {
        &self.value
    }

    /// Makes the next `Tier::get` read the setting again.
    pub(crate) fn expire(&mut self) {
        self.due = 0;
    }

    /// Keeps the setting until `expire` or a perftop write: never due by the sample count.
    pub(crate) fn hold(&mut self) {
        self.due = u64::MAX;
    }

    /// Reads the setting again in the next sample too (and then every
    /// `SETTINGS_REFRESH_SAMPLES`).
    pub(crate) fn due_next(&mut self, sample_no: u64) {
        self.due = sample_no + 1;
    }
}

impl Tier {
    /// The refresh period in samples for samples `gap_s` seconds apart (by the root's clock):
    /// `SETTINGS_REFRESH_SAMPLES`, or as many as make `SETTINGS_REFRESH_SECS` when samples
    /// come faster, at most `SETTINGS_REFRESH_MAX_SAMPLES`. An unknown or zero gap (a fixture
    /// tree whose clock does not move) keeps the sample count.
    pub(crate) fn refresh_for(gap_s: Option<f64>) -> u64 {
        match gap_s {
            Some(g) if g > 0.0 && g.is_finite() => {
                let n = (SETTINGS_REFRESH_SECS / g).ceil();
                (n.min(SETTINGS_REFRESH_MAX_SAMPLES as f64) as u64).max(SETTINGS_REFRESH_SAMPLES)
            }
            _ => SETTINGS_REFRESH_SAMPLES,
        }
    }

    /// The tier's one rule: `slot`'s value, read again by `read` first when it is due (never
    /// read, samples far apart, or its due sample reached). A read is due again on the next
    /// sample whose number falls on the setting's own phase of the refresh period, set by
    /// `spread`: within `refresh` samples, and settings read together (the first sample, the
    /// one after a tweak) are not all read again together.
    pub(crate) fn get<V>(
        self,
        slot: &mut Option<Tiered<V>>,
        spread: u64,
        read: impl FnOnce() -> V,
    ) -> &V {
        let refresh = self.refresh.max(1);
        let wait = refresh - (self.sample_no.wrapping_add(spread) % refresh);
        if slot
            .as_ref()
            .is_some_and(|c| self.every_sample || self.tweaked || self.sample_no >= c.due)
        {
            // Emptied so that `get_or_insert_with` below reads it again.
            *slot = None;
        }
        let due = self.sample_no + wait;
        &slot
            .get_or_insert_with(|| Tiered { value: read(), due })
            .value
    }
}

/// A stable spread for `key` (FNV-1a), its phase in the refresh period, so that settings read
/// in the same sample are not all read again in the same later sample.
pub(crate) fn spread_of(key: &str) -> u64 {
    key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Settings kept by path. A slot is taken out while it is refreshed (the probe reading it is
/// borrowed meanwhile) and put back; its key is allocated only the first time.
pub(crate) type TierMap<V> = HashMap<String, Option<Tiered<V>>>;

fn take_slot<V>(map: &mut TierMap<V>, key: &str) -> Option<Tiered<V>> {
    map.get_mut(key).and_then(Option::take)
}

fn put_slot<V>(map: &mut TierMap<V>, key: &str, slot: Option<Tiered<V>>) {
    match map.get_mut(key) {
        Some(s) => *s = slot,
        None => {
            map.insert(key.to_string(), slot);
        }
    }
}

impl Probe {
    /// `setting_in` for a setting of something read in turns (a big host's cpufreq policies):
    /// off its owner's turn the value as last read, so a refresh that falls due waits for the
    /// next turn. A 4096-CPU host's policies' `scaling_min_freq`/`scaling_max_freq` were 819
    /// of 4,839 files a sample when refreshed every 10 samples whatever the turns.
    pub(crate) fn setting_on_turn<T: Clone>(
        &mut self,
        slot: &mut Option<Cached<T>>,
        dir: &str,
        name: &str,
        turn: bool,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<T> {
        match slot {
            Some(cached) if !turn => self.as_read(&cached.value, dir, name, T::clone),
            _ => self.setting_in(slot, dir, name, spread_of(&join(dir, name)), parse),
        }
    }

    /// A setting's first line through `parse`, kept in `slot` and read again only when due
    /// (see `Tier::get`); `spread` staggers the first refresh. Unreadable is noted when read;
    /// garbled is noted every sample.
    pub(crate) fn setting_in<T: Clone>(
        &mut self,
        slot: &mut Option<Cached<T>>,
        dir: &str,
        name: &str,
        spread: u64,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<T> {
        self.setting_view(slot, dir, name, spread, parse, T::clone)
    }

    /// `setting_in`, handing `view` the cached value instead of a copy of it.
    fn setting_view<T, R>(
        &mut self,
        slot: &mut Option<Cached<T>>,
        dir: &str,
        name: &str,
        spread: u64,
        parse: impl FnOnce(&str) -> Result<T, String>,
        view: impl FnOnce(&T) -> R,
    ) -> Option<R> {
        let tier = self.tier;
        let value = tier.get(slot, spread, || {
            match self.first_line_now(dir, name, parse) {
                Some(parsed) => parsed.map(Some),
                None => Ok(None),
            }
        });
        self.as_read(value, dir, name, view)
    }

    /// A cached setting through `view`; garbled (`Err`) is noted, every time it is looked at.
    fn as_read<T, R>(
        &mut self,
        value: &Result<Option<T>, String>,
        dir: &str,
        name: &str,
        view: impl FnOnce(&T) -> R,
    ) -> Option<R> {
        match value {
            Ok(v) => v.as_ref().map(view),
            Err(what) => {
                let what = what.clone();
                self.note(&join(dir, name), what);
                None
            }
        }
    }

    /// First line of a settings-tier file (see `setting_in`), by path.
    pub fn setting_line(&mut self, rel: &str) -> Option<String> {
        self.setting_with(rel, str::to_string)
    }

    /// `f` of a settings-tier file's first line, borrowed from the cache: the ~170 settings
    /// of a small host are looked at every sample and read once in ten, and a `String` copy
    /// of each (for `setting_u64` to parse and drop) was a fifth of a sample's allocations.
    pub(crate) fn setting_with<R>(&mut self, rel: &str, f: impl FnOnce(&str) -> R) -> Option<R> {
        let mut slot = take_slot(&mut self.cache.settings, rel);
        let line = |l: &str| Ok(l.to_string());
        let v = self.setting_view(&mut slot, rel, "", spread_of(rel), line, |s| f(s));
        put_slot(&mut self.cache.settings, rel, slot);
        v
    }

    /// `f` of a settings-tier file's first line, read now, for settings a reader keeps as one
    /// group that falls due together (a disk's: `disk::DiskCache`). Unreadable is noted, as
    /// `setting_with` notes it when it reads.
    pub(crate) fn setting_now<R>(&mut self, rel: &str, f: impl FnOnce(&str) -> R) -> Option<R> {
        self.first_line_now(rel, "", f)
    }

    /// `f` of `dir/name`'s first line, read now as a setting (its descriptor kept for the
    /// tier's period): what every setting read comes down to. `None` when absent, unreadable
    /// (noted) or empty.
    fn first_line_now<R>(&mut self, dir: &str, name: &str, f: impl FnOnce(&str) -> R) -> Option<R> {
        if !self.fill_buf(dir, name, false, Budget::Setting(self.tier.refresh)) {
            return None;
        }
        first_line(&self.buf.text()).map(f)
    }

    /// `u64` of a settings-tier file read now (`setting_now`); garbled is noted.
    pub(crate) fn setting_now_u64(&mut self, rel: &str) -> Option<u64> {
        let parsed = self.setting_now(rel, parse_u64)?;
        self.noted(rel, parsed)
    }

    /// `flag` of a settings-tier file read now (`setting_now`); garbled is noted.
    pub(crate) fn setting_now_flag(&mut self, rel: &str) -> Option<bool> {
        let parsed = self.setting_now(rel, parse_flag)?;
        self.noted(rel, parsed)
    }

    /// First line of a settings-tier file `dir/name` that can vanish with its directory (a
    /// cgroup's limits), read as `Probe::quiet_text` reads: gone is unknown, not a problem.
    pub fn quiet_setting(&mut self, dir: &str, name: &str) -> Option<String> {
        let key = join(dir, name);
        let mut slot = take_slot(&mut self.cache.quiet_settings, &key);
        let tier = self.tier;
        let line = tier
            .get(&mut slot, spread_of(&key), || {
                let every = Every::Samples(tier.refresh);
                let text = self.quiet(dir, name, false, every)?;
                first_line(&text).map(str::to_string)
            })
            .clone();
        put_slot(&mut self.cache.quiet_settings, &key, slot);
        line
    }

    /// `u64` of a settings-tier file; garbled is noted every sample.
    pub fn setting_u64(&mut self, rel: &str) -> Option<u64> {
        let parsed = self.setting_with(rel, parse_u64)?;
        self.noted(rel, parsed)
    }

    /// `flag` of a settings-tier file; garbled is noted every sample.
    pub fn setting_flag(&mut self, rel: &str) -> Option<bool> {
        let parsed = self.setting_with(rel, parse_flag)?;
        self.noted(rel, parsed)
    }

    /// `Root::list_dir` of a settings-tier directory (a NIC's `queues/`).
    pub fn setting_list_dir(&mut self, rel: &str) -> Vec<String> {
        self.setting_list_with(rel, <[String]>::to_vec)
    }

    /// `f` of a settings-tier directory's names, borrowed from the cache (a disk's `mq/`
    /// is counted every sample, listed once in ten).
    pub fn setting_list_with<R>(&mut self, rel: &str, f: impl FnOnce(&[String]) -> R) -> R {
        let mut slot = take_slot(&mut self.cache.setting_lists, rel);
        let root = &self.root;
        let names: &Vec<String> = self
            .tier
            .get(&mut slot, spread_of(rel), || root.list_dir(rel));
        let out = f(names);
        put_slot(&mut self.cache.setting_lists, rel, slot);
        out
    }

    /// `Root::link_name` of a settings-tier symlink (a NIC's `device/driver`).
    pub fn setting_link_name(&mut self, rel: &str) -> Option<String> {
        let mut slot = take_slot(&mut self.cache.setting_links, rel);
        let root = &self.root;
        let name = self
            .tier
            .get(&mut slot, spread_of(rel), || root.link_name(rel))
            .clone();
        put_slot(&mut self.cache.setting_links, rel, slot);
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10 samples at 1 s or slower, 10 s of samples when faster (40 at 0.25 s, the fastest
    /// interval), 10 samples when the gap is unknown or zero (a fixture whose clock stands).
    #[test]
    fn the_refresh_is_ten_samples_or_ten_seconds() {
        assert_eq!(Tier::refresh_for(Some(1.0)), 10);
        assert_eq!(Tier::refresh_for(Some(5.0)), 10);
        assert_eq!(Tier::refresh_for(Some(0.5)), 20);
        assert_eq!(Tier::refresh_for(Some(0.25)), 40);
        assert_eq!(Tier::refresh_for(Some(0.001)), 40);
        assert_eq!(Tier::refresh_for(Some(0.0)), 10);
        assert_eq!(Tier::refresh_for(None), 10);
    }

    /// Every setting is read again within `refresh` samples of its last read, on its own phase:
    /// 400 settings all read in one sample (the first, or the one after a tweak) spread over the
    /// next period instead of falling due together again.
    #[test]
    fn settings_read_together_spread_over_the_period() {
        for refresh in [10u64, 40] {
            let mut tier = Tier {
                sample_no: 1,
                every_sample: false,
                tweaked: false,
                refresh,
                gap_s: None,
                detail_every: 1,
            };
            let mut slots: Vec<Option<Tiered<u64>>> = (0..400).map(|_| None).collect();
            for (i, s) in slots.iter_mut().enumerate() {
                tier.get(s, spread_of(&format!("sys/setting{i}")), || 0);
            }
            let mut reads = vec![0u32; refresh as usize];
            for n in 2..=1 + refresh {
                tier.sample_no = n;
                for (i, s) in slots.iter_mut().enumerate() {
                    let mut read = false;
                    tier.get(s, spread_of(&format!("sys/setting{i}")), || {
                        read = true;
                        n
                    });
                    reads[(n - 2) as usize] += u32::from(read);
                }
            }
            assert_eq!(
                reads.iter().sum::<u32>(),
                400,
                "each once in {refresh} samples"
            );
            let most = *reads.iter().max().expect("reads");
            assert!(
                u64::from(most) < 3 * 400 / refresh,
                "refresh {refresh}: {reads:?}"
            );
        }
    }
}
