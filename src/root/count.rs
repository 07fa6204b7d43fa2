//! How many files a root opened, read through kept descriptors, found missing and which
//! other lookups it made: the benchmark's files/sample column.

use std::sync::atomic::AtomicU64;

/// How many files a root opened: what a sample costs the kernel, counted where it is paid
/// (the benchmark's files/sample column). Relaxed atomics: a counter, not a lock.
#[derive(Debug, Default)]
pub struct Count {
    pub(super) opened: AtomicU64,
    pub(super) reread: AtomicU64,
    pub(super) missing: AtomicU64,
    pub(super) listed: AtomicU64,
}

/// A reading of `Count`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Opened {
    /// Files read, or found unreadable: opened by path, or read again through a descriptor
    /// kept open (`reread`).
    pub files: u64,
    /// Of `files`, those read through a kept descriptor (no open, no path walk).
    pub reread: u64,
    /// Opens that found nothing (ENOENT).
    pub missing: u64,
    /// Other lookups: directory listings (`getdents` walks), existence checks, symlink reads.
    pub lookups: u64,
}

impl Opened {
    /// What was opened since `before`.
    pub fn since(self, before: Opened) -> Opened {
        Opened {
            files: self.files.saturating_sub(before.files),
            reread: self.reread.saturating_sub(before.reread),
            missing: self.missing.saturating_sub(before.missing),
            lookups: self.lookups.saturating_sub(before.lookups),
        }
    }
}
