//! CPU sets as the kernel writes them: lists (`0-3,8,10-11`) and hex masks (`00000000,0000000f`).
//!
//! Stored sorted and de-duplicated; serialized in list form so a 4096-CPU set stays one short string.
//! The ids and that text are made once, when the set is read, and shared: an IRQ line's affinity
//! is read in turns but carried, derived, shown and written every sample (a 4096-CPU host's
//! lines each held 16 KB of ids, copied and formatted anew each time).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::sync::Arc;

/// Refuse absurd ids (a garbled file must not make us allocate gigabytes).
/// The kernel's NR_CPUS tops out at 8192 today; 65536 leaves room without trusting garbage.
const MAX_CPU_ID: u32 = 1 << 16;

#[derive(Debug, Clone, Default)]
pub struct CpuList {
    ids: Arc<[u32]>,
    /// `ids` in list form (`0-3,8`): what `Display` and serde write.
    text: Arc<str>,
}

impl PartialEq for CpuList {
    fn eq(&self, other: &CpuList) -> bool {
        self.ids == other.ids
    }
}

impl Eq for CpuList {}

impl std::hash::Hash for CpuList {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.ids.hash(h);
    }
}

impl CpuList {
    pub fn from_ids(mut ids: Vec<u32>) -> CpuList {
        ids.sort_unstable();
        ids.dedup();
        CpuList::sorted(ids)
    }

    /// `ids` already sorted and de-duplicated.
    fn sorted(ids: Vec<u32>) -> CpuList {
        let text = list_text(&ids).into();
        CpuList {
            ids: ids.into(),
            text,
        }
    }

    /// The list form (`0-3,8,10-11`), shared: a clone of it costs no copy.
    pub fn text(&self) -> Arc<str> {
        self.text.clone()
    }

    /// Parses `0-3,8,10-11` (whitespace-trimmed; an empty string is the empty set).
    pub fn parse(s: &str) -> Option<CpuList> {
        let s = s.trim();
        let mut ids = Vec::new();
        if s.is_empty() {
            return Some(CpuList::default());
        }
        for part in s.split(',') {
            let part = part.trim();
            // Newer kernels allow `0-15:2/4` (stride groups) only in boot parameters, not in
            // sysfs output, so a ':' here means the file is not a cpulist.
            match part.split_once('-') {
                Some((a, b)) => {
                    let a: u32 = a.trim().parse().ok()?;
                    let b: u32 = b.trim().parse().ok()?;
                    if a > b || b > MAX_CPU_ID {
                        return None;
                    }
                    ids.extend(a..=b);
                }
                None => {
                    let a: u32 = part.parse().ok()?;
                    if a > MAX_CPU_ID {
                        return None;
                    }
                    ids.push(a);
                }
            }
        }
        Some(CpuList::from_ids(ids))
    }

    /// Parses a hex mask in 32-bit comma-separated words, most significant word first.
    pub fn parse_mask(s: &str) -> Option<CpuList> {
        let s = s.trim();
        if s.is_empty() {
            return None;
        }
        let words: Vec<&str> = s.split(',').collect();
        if words.len() as u32 * 32 > MAX_CPU_ID {
            return None;
        }
        let mut ids = Vec::new();
        for (i, word) in words.iter().rev().enumerate() {
            let w = u32::from_str_radix(word.trim(), 16).ok()?;
            for bit in 0..32 {
                if w & (1 << bit) != 0 {
                    ids.push(i as u32 * 32 + bit);
                }
            }
        }
        // Bits are visited from CPU 0 up: already sorted and distinct.
        Some(CpuList::sorted(ids))
    }

    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    pub fn contains(&self, id: u32) -> bool {
        self.ids.binary_search(&id).is_ok()
    }
}

/// Sorted, distinct ids in list form: runs as `a-b`, lone ids as `a`.
fn list_text(ids: &[u32]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let mut i = 0;
    while i < ids.len() {
        let start = ids[i];
        let mut end = start;
        while i + 1 < ids.len() && ids[i + 1] == end + 1 {
            i += 1;
            end = ids[i];
        }
        if !out.is_empty() {
            out.push(',');
        }
        // Writing to a String cannot fail.
        let _ = if start == end {
            write!(out, "{start}")
        } else {
            write!(out, "{start}-{end}")
        };
        i += 1;
    }
    out
}

impl fmt::Display for CpuList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for CpuList {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for CpuList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        CpuList::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("bad cpu list {s:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_round_trip() {
        let l = CpuList::parse("0-3,8,10-11\n").expect("parse");
        assert_eq!(l.ids(), &[0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(l.to_string(), "0-3,8,10-11");
        assert_eq!(CpuList::parse("").expect("empty").len(), 0);
        assert!(CpuList::parse("3-1").is_none());
        assert!(CpuList::parse("x").is_none());
        assert!(CpuList::parse("0-4294967295").is_none());
        assert!(CpuList::parse("0-1048576").is_none());
    }

    #[test]
    fn masks() {
        let l = CpuList::parse_mask("00000001,0000000f").expect("mask");
        assert_eq!(l.ids(), &[0, 1, 2, 3, 32]);
        assert!(CpuList::parse_mask("00000000").expect("zero").is_empty());
        assert!(CpuList::parse_mask("zz").is_none());
    }

    #[test]
    fn text_is_the_canonical_list_and_equality_is_by_ids() {
        let a = CpuList::parse(" 3, 0-1,2,8 ,10-11,11").expect("parse");
        assert_eq!(&*a.text(), "0-3,8,10-11");
        assert_eq!(a, CpuList::parse_mask("00000d0f").expect("mask"));
        assert_eq!(CpuList::from_ids(vec![5, 4, 4]).to_string(), "4-5");
        assert_eq!(serde_json::to_string(&a).expect("json"), "\"0-3,8,10-11\"");
        assert_eq!(CpuList::default().to_string(), "");
    }
}
