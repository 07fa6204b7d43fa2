//! The names `unit` and `sanitize` give each JSON key, kept: the keys are the same ~700 field
//! names every interval, and working each out again (three or four small strings a key) was
//! a fifth of `perftop export`'s page (`perf record`, 2026-11-27).

use foldhash::{HashMap, HashMapExt};
use std::cell::RefCell;

/// Past this many keys the cache starts again: keys are field names, but a pane whose
/// JSON has data as keys must not make it grow without end.
const MAX: usize = 4096;

thread_local! {
    static NAMES: RefCell<[HashMap<String, (String, f64)>; 2]> =
        RefCell::new([HashMap::new(), HashMap::new()]);
}

/// Calls `f` with the name of key `k` (`unit(k)` for a number, else `sanitize(k)`).
pub(super) fn with<R>(k: &str, number: bool, f: impl FnOnce(&str, f64) -> R) -> R {
    NAMES.with(|cell| {
        let mut maps = cell.borrow_mut();
        let map = &mut maps[usize::from(number)];
        if let Some((name, factor)) = map.get(k) {
            return f(name, *factor);
        }
        let (name, factor) = if number {
            super::unit(k)
        } else {
            (super::sanitize(k), 1.0)
        };
        let out = f(&name, factor);
        if map.len() >= MAX {
            map.clear();
        }
        map.insert(k.to_string(), (name, factor));
        out
    })
}
