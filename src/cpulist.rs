//! CPU sets as the kernel writes them: lists (`0-3,8,10-11`) and hex masks (`00000000,0000000f`).
//!
//! Stored sorted and de-duplicated; serialized in list form so a 4096-CPU set stays one short string.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Refuse absurd ids (a garbled file must not make us allocate gigabytes).
/// The kernel's NR_CPUS tops out at 8192 today; 65536 leaves room without trusting garbage.
const MAX_CPU_ID: u32 = 1 << 16;

#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct CpuList(Vec<u32>);

impl CpuList {
    pub fn from_ids(mut ids: Vec<u32>) -> CpuList {
        ids.sort_unstable();
        ids.dedup();
        CpuList(ids)
    }

    /// Parses `0-3,8,10-11` (whitespace-trimmed; an empty string is the empty set).
    pub fn parse(s: &str) -> Option<CpuList> {
        let s = s.trim();
        let mut ids = Vec::new();
        if s.is_empty() {
            return Some(CpuList(ids));
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
        Some(CpuList(ids))
    }

    pub fn ids(&self) -> &[u32] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, id: u32) -> bool {
        self.0.binary_search(&id).is_ok()
    }
}

impl fmt::Display for CpuList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut i = 0;
        while i < self.0.len() {
            let start = self.0[i];
            let mut end = start;
            while i + 1 < self.0.len() && self.0[i + 1] == end + 1 {
                i += 1;
                end = self.0[i];
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
            i += 1;
        }
        Ok(())
    }
}

impl Serialize for CpuList {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
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
}
