//! The settings tier: files only an administrator or firmware changes (see the `source` module
//! comment), read again every `SETTINGS_REFRESH_SAMPLES` samples instead of every sample. One
//! rule (`Tier::get`) decides when for every kind of setting: a file's first line, a directory
//! listing, a symlink's target.

use super::budget::{fill, Budget};
use super::{first_line, join, parse_flag, parse_u64, Probe};
use crate::root::Every;
use foldhash::HashMap;
use std::time::Duration;

/// Settings no tweak writes are read again at least this often (in samples); see the module
/// comment. On a 4096-CPU host the idle states' `disable` files alone are 16k files per sample.
pub(crate) const SETTINGS_REFRESH_SAMPLES: u64 = 10;
/// Samples at least this far apart read settings every time: the saving does not matter at
/// such intervals, and ten of them would be minutes.
pub(crate) const SETTINGS_EVERY_SAMPLE_GAP: Duration = Duration::from_secs(2);

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
}

impl Default for Tier {
    /// Before the first sample: nothing is cached, so everything is read anyway.
    fn default() -> Tier {
        Tier {
            sample_no: 0,
            every_sample: true,
            tweaked: false,
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

    /// Reads the setting again in the next sample too (and then every
    /// `SETTINGS_REFRESH_SAMPLES`).
    pub(crate) fn due_next(&mut self, sample_no: u64) {
        self.due = sample_no + 1;
    }
}

impl Tier {
    /// The tier's one rule: `slot`'s value, read again by `read` first when it is due (never
    /// read, samples far apart, or its due sample reached). A first read is due again somewhere
    /// in the next `SETTINGS_REFRESH_SAMPLES` samples, staggered by `spread` so that settings
    /// first read together are not all read again together; a later read that many samples on.
    pub(crate) fn get<V>(
        self,
        slot: &mut Option<Tiered<V>>,
        spread: u64,
        read: impl FnOnce() -> V,
    ) -> &V {
        let wait = match slot {
            None => 1 + spread % SETTINGS_REFRESH_SAMPLES,
            Some(_) => SETTINGS_REFRESH_SAMPLES,
        };
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

/// A stable spread for `key` in `0..SETTINGS_REFRESH_SAMPLES` (FNV-1a), so that settings first
/// read in the same sample are not all read again in the same later sample.
pub(crate) fn spread_of(key: &str) -> u64 {
    let h = key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    h % SETTINGS_REFRESH_SAMPLES
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
        let (root, problems, buf) = (&self.root, &mut self.problems, &mut self.buf);
        let value = self.tier.get(slot, spread, || {
            if fill(root, problems, buf, dir, name, false, Budget::Setting) {
                match first_line(&buf.text()) {
                    Some(line) => parse(line).map(Some),
                    None => Ok(None),
                }
            } else {
                Ok(None)
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
        let (root, problems, buf) = (&self.root, &mut self.problems, &mut self.buf);
        if !fill(root, problems, buf, rel, "", false, Budget::Setting) {
            return None;
        }
        first_line(&buf.text()).map(f)
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
                let every = Every::Samples(SETTINGS_REFRESH_SAMPLES);
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
