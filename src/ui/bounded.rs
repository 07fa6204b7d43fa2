//! A deque that keeps at most a known number of entries, grown by doubling only up to that
//! bound: the history's deques hold 600 entries at the defaults, and plain doubling makes room
//! for 1,024 (a sample's frame, wall clock and judged baselines: ~37 KB of the idle
//! dashboard's heap for nothing).

use std::collections::VecDeque;

/// Pushes `x` onto `d`, which holds at most `most` entries after its caller drops the oldest
/// (so `most + 1` just before): when `d` is full its room doubles, but not past `most + 1`
/// unless it already holds that many (a bound changed under it: it doubles on from there).
pub fn push<T>(d: &mut VecDeque<T>, x: T, most: usize) {
    if d.len() == d.capacity() {
        let bound = most.saturating_add(1);
        let doubled = d.capacity().saturating_mul(2).max(4);
        let want = if d.len() < bound {
            doubled.min(bound)
        } else {
            doubled
        };
        d.reserve_exact(want - d.len());
    }
    d.push_back(x);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_to_the_bound_and_no_further() {
        let mut d = VecDeque::new();
        for i in 0..5_000 {
            push(&mut d, i, 600);
            while d.len() > 600 {
                d.pop_front();
            }
        }
        assert_eq!(d.len(), 600);
        assert_eq!(d.capacity(), 601);
        assert_eq!(d.front(), Some(&4_400));
        // Past its bound (the caller kept more than it said), it doubles again.
        let mut d = VecDeque::new();
        for i in 0..10 {
            push(&mut d, i, 3);
        }
        assert_eq!(d.len(), 10);
        assert_eq!(d.back(), Some(&9));
        assert_eq!(d.capacity(), 16);
    }
}
