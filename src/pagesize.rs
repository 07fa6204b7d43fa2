//! The observed host's page size: from the running kernel on the live root, inferred from
//! counters the kernel states in both pages and kB under `--root` and in old recordings.
//!
//! Never from MemFree / nr_free_pages: on 6.x kernels MemFree counts memory that
//! nr_free_pages does not (a 128 GB host showed a ratio of ~150), which once made perftop claim
//! 64 kB pages and thresholds 16x the kernel's. The pairs used here are exact copies of one
//! counter (`/proc/meminfo` prints `nr_X << (PAGE_SHIFT - 10)`), so a pair read in one pass
//! agrees exactly unless the counter moved between the two reads; slow movers are chosen so
//! that it rarely does, and the answer is what most pairs agree on.

use crate::sample::{Meminfo, VmStat};

pub use crate::sample::PageKbFrom;

/// The assumption when nothing can be inferred: x86-64 and most arm64 distributions.
pub const DEFAULT_PAGE_KB: u64 = 4;

/// Page sizes Linux runs with: 4 kB (x86), 8 kB (sparc64, alpha), 16 kB (arm64, loongarch),
/// 64 kB (arm64, ppc64), 256 kB (hexagon, ppc44x).
const SIZES_KB: [u64; 6] = [4, 8, 16, 32, 64, 256];

/// Below this many pages a ratio that is not exact says too little (rounding, a moving counter).
const NEAR_MIN_PAGES: u64 = 256;
/// A ratio within this share of a page size counts as a vote when the pair is not exact.
const NEAR_TOLERANCE: f64 = 0.02;

/// The running kernel's page size in kB.
pub fn host_page_kb() -> u64 {
    (rustix::param::page_size() as u64 / 1024).max(1)
}

/// The page size most (kB, pages) pairs agree on, or `None` when no pair says anything or
/// two sizes tie. An exact pair (kB = pages x size) counts twice, a near one once.
pub fn infer(mi: &Meminfo, vm: &VmStat) -> Option<u64> {
    let pairs = [
        (mi.mlocked, vm.nr_mlock),
        (mi.unevictable, vm.nr_unevictable),
        (mi.shmem, vm.nr_shmem),
        (mi.anon_pages, vm.nr_anon_pages),
        (mi.mapped, vm.nr_mapped),
        (mi.page_tables, vm.nr_page_table_pages),
        // Stored by every perftop version, so old recordings can be inferred too; they move
        // fast under write load, and the vote absorbs the odd disagreeing pair.
        (mi.dirty, vm.nr_dirty),
        (mi.writeback, vm.nr_writeback),
    ];
    let mut votes = [0u32; SIZES_KB.len()];
    for (kb, pages) in pairs {
        let (Some(kb), Some(pages)) = (kb, pages) else {
            continue;
        };
        if kb == 0 || pages == 0 {
            continue;
        }
        if let Some(i) = SIZES_KB
            .iter()
            .position(|&s| pages.checked_mul(s) == Some(kb))
        {
            votes[i] += 2;
            continue;
        }
        if pages < NEAR_MIN_PAGES {
            continue;
        }
        let ratio = kb as f64 / pages as f64;
        if let Some(i) = SIZES_KB
            .iter()
            .position(|&s| ((ratio - s as f64) / s as f64).abs() <= NEAR_TOLERANCE)
        {
            votes[i] += 1;
        }
    }
    let best = *votes.iter().max()?;
    if best == 0 || votes.iter().filter(|&&v| v == best).count() > 1 {
        return None;
    }
    let i = votes.iter().position(|&v| v == best)?;
    Some(SIZES_KB[i])
}

/// The page size of a sample and how it was learnt: what the sample stores, else inferred
/// from its counters, else the default.
pub fn of(mi: &Meminfo, vm: &VmStat, stored: Option<(u64, PageKbFrom)>) -> (u64, PageKbFrom) {
    if let Some((kb, from)) = stored.filter(|(kb, _)| *kb > 0) {
        return (kb, from);
    }
    match infer(mi, vm) {
        Some(kb) => (kb, PageKbFrom::Inferred),
        None => (DEFAULT_PAGE_KB, PageKbFrom::Default),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(mi: &mut Meminfo, vm: &mut VmStat, kmi: &str, kvm: &str, kb: u64, pages: u64) {
        mi.set(kmi, kb);
        vm.set(kvm, pages);
    }

    /// The 16-CPU host that made the old rule claim 64 kB pages (t0 of the real capture).
    #[test]
    fn real_host_where_memfree_disagrees() {
        let (mut mi, mut vm) = (Meminfo::default(), VmStat::default());
        mi.set("MemFree", 123_188_932);
        vm.set("nr_free_pages", 807_300);
        pair(&mut mi, &mut vm, "Mlocked", "nr_mlock", 6488, 1622);
        pair(
            &mut mi,
            &mut vm,
            "Unevictable",
            "nr_unevictable",
            8264,
            2066,
        );
        pair(&mut mi, &mut vm, "Shmem", "nr_shmem", 7368, 1842);
        pair(
            &mut mi,
            &mut vm,
            "AnonPages",
            "nr_anon_pages",
            297_568,
            74_392,
        );
        pair(&mut mi, &mut vm, "Mapped", "nr_mapped", 227_792, 56_948);
        pair(
            &mut mi,
            &mut vm,
            "PageTables",
            "nr_page_table_pages",
            3864,
            966,
        );
        pair(&mut mi, &mut vm, "Dirty", "nr_dirty", 3_622_576, 905_644);
        // Writeback moved between the two reads there (1024 kB vs 0 pages): no vote.
        pair(&mut mi, &mut vm, "Writeback", "nr_writeback", 1024, 0);
        assert_eq!(infer(&mi, &vm), Some(4));
        assert_eq!(of(&mi, &vm, None), (4, PageKbFrom::Inferred));
    }

    #[test]
    fn sixty_four_kb_pages() {
        let (mut mi, mut vm) = (Meminfo::default(), VmStat::default());
        pair(&mut mi, &mut vm, "Mlocked", "nr_mlock", 640, 10);
        pair(&mut mi, &mut vm, "Shmem", "nr_shmem", 64 * 3001, 3001);
        assert_eq!(infer(&mi, &vm), Some(64));
    }

    #[test]
    fn nothing_to_go_on_is_default() {
        let (mut mi, mut vm) = (Meminfo::default(), VmStat::default());
        mi.set("MemFree", 1000);
        vm.set("nr_free_pages", 250);
        assert_eq!(infer(&mi, &vm), None);
        assert_eq!(of(&mi, &vm, None), (4, PageKbFrom::Default));
        // A tie (one exact 4 kB pair, one exact 8 kB pair) is not an answer either.
        pair(&mut mi, &mut vm, "Mlocked", "nr_mlock", 40, 10);
        pair(&mut mi, &mut vm, "Shmem", "nr_shmem", 80, 10);
        assert_eq!(infer(&mi, &vm), None);
    }

    #[test]
    fn stored_wins() {
        let (mi, vm) = (Meminfo::default(), VmStat::default());
        assert_eq!(
            of(&mi, &vm, Some((16, PageKbFrom::Host))),
            (16, PageKbFrom::Host)
        );
    }
}
