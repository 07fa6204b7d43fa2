//! The read thread pool: `Probe::par_map` shards per-CPU reads over a few threads, each with
//! its own caches kept between samples.

use super::Probe;
use crate::root::ReadBuf;
use crate::source::Cache;
use foldhash::HashMap;

/// Below this many items per-CPU files are read on one thread (starting threads costs more).
const PARALLEL_MIN_ITEMS: usize = 256;
/// At most this many reader threads on a big host. Four take most of the wall time off a
/// cold sample without the CPU that more cost in kernel contention: the 4096-CPU tree's first
/// sample on the lent 16-core host (`perftop batch -n 1`, 3 runs each) took 1.23–1.32 s wall
/// and CPU on one thread, 0.67–0.75 s wall for 1.35–1.45 s CPU on four, 0.64 s wall for
/// 1.61–1.90 s CPU on eight.
const MAX_READ_THREADS: usize = 4;

/// Cached static files and directory listings of one reader thread, and its read buffers.
#[derive(Default)]
pub(super) struct Shard {
    statics: HashMap<String, Option<String>>,
    static_dirs: HashMap<String, Vec<u32>>,
    buf: ReadBuf,
}

impl Probe {
    /// `f` over `items`, on several threads when there are many (a 4096-CPU host has ~100k
    /// per-CPU files per sample; on one thread the syscalls alone take longer than a frame).
    /// Results keep the order of `items`; problems and cache entries are merged back.
    pub fn par_map<I: Send, T: Send>(
        &mut self,
        items: Vec<I>,
        f: impl Fn(&mut Probe, I) -> T + Sync,
    ) -> Vec<T> {
        self.par_map_from(items, PARALLEL_MIN_ITEMS, f)
    }

    /// `par_map`, parallel from `min_items` items (fewer but bigger items than files).
    pub fn par_map_from<I: Send, T: Send>(
        &mut self,
        items: Vec<I>,
        min_items: usize,
        f: impl Fn(&mut Probe, I) -> T + Sync,
    ) -> Vec<T> {
        if !self.parallel || items.len() < min_items.max(2) {
            return items.into_iter().map(|i| f(self, i)).collect();
        }
        let threads = *self.cache.threads.get_or_insert_with(|| {
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(MAX_READ_THREADS)
        });
        if threads < 2 {
            return items.into_iter().map(|i| f(self, i)).collect();
        }
        let chunk = items.len().div_ceil(threads);
        let mut rest = items.into_iter();
        let mut parts: Vec<Vec<I>> = Vec::with_capacity(threads);
        loop {
            let part: Vec<I> = rest.by_ref().take(chunk).collect();
            if part.is_empty() {
                break;
            }
            parts.push(part);
        }
        self.shards
            .resize_with(self.shards.len().max(parts.len()), Shard::default);
        let shards: Vec<Shard> = self.shards[..parts.len()]
            .iter_mut()
            .map(std::mem::take)
            .collect();
        let f = &f;
        let root = &self.root;
        let tier = self.tier;
        let cpus_seen = self.cpus_seen;
        let results = std::thread::scope(|scope| {
            let handles: Vec<_> = parts
                .into_iter()
                .zip(shards)
                .map(|(part, shard)| {
                    scope.spawn(move || {
                        let mut p = Probe {
                            root: root.clone(),
                            problems: Vec::new(),
                            statics: shard.statics,
                            static_dirs: shard.static_dirs,
                            shards: Vec::new(),
                            cache: Cache::default(),
                            tier,
                            cpus_seen,
                            parallel: false,
                            first_look: false,
                            buf: shard.buf,
                            big: ReadBuf::default(),
                        };
                        let out: Vec<T> = part.into_iter().map(|i| f(&mut p, i)).collect();
                        let shard = Shard {
                            statics: p.statics,
                            static_dirs: p.static_dirs,
                            buf: p.buf,
                        };
                        (out, p.problems, shard)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
        });
        let mut all = Vec::new();
        for (i, r) in results.into_iter().enumerate() {
            match r {
                Ok((out, problems, shard)) => {
                    all.extend(out);
                    self.problems.extend(problems);
                    self.shards[i] = shard;
                }
                // A reader thread only panics on a bug; surface it like any other panic.
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use crate::root::Root;
    use crate::source::Probe;

    #[test]
    fn par_map_keeps_order_and_problems() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("n"), "x\n").expect("write");
        let mut p = Probe::new(Root::new(dir.path()));
        let items: Vec<u32> = (0..1000).collect();
        let out = p.par_map(items, |p, i| {
            if i == 500 {
                let _ = p.u64("n");
            }
            i * 2
        });
        assert_eq!(out, (0..1000).map(|i| i * 2).collect::<Vec<_>>());
        assert_eq!(p.problems.len(), 1);
        assert_eq!(p.problems[0].path, "n");
    }
}
