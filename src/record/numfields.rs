//! The numbers of one sample's JSON by hashed path, in order: what the next sample's step is
//! differenced against (`numdiff`). Looked up in order while the next sample's paths come in
//! the same order, through an index only where they do not.
//!
//! Why: a lookup in a hash map of every field was most of the step transform's cost on a big
//! host (a 512-CPU sample has ~100k numbers; the map's 4 MB missed the caches on nearly every
//! probe), while consecutive samples almost always print the same fields in the same order.
//!
//! The answer of a lookup is the one the map gave, always: the value of the *last* integer at
//! that path in the previous sample (recordings written before are decoded by the same rule;
//! a path can repeat: the zones of one node, `{"node":0,...}`, share their names). Each number
//! keeps the position of that last integer (`answers`); a sample whose paths come in the
//! previous sample's order (the same paths at the same places) takes its answers over, and an
//! index of the paths is built only for a sample whose fields changed.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Debug, Clone, Default)]
pub struct Fields {
    /// Every number the transform looked up, in order.
    nums: Vec<Num>,
    /// For each number, the position of the last integer at its path (`NONE`: no integer
    /// there): handed on from the previous sample when this one's paths came in its order (the
    /// same paths at the same places), else worked out with the index.
    answers: OnceCell<Vec<u32>>,
    index: OnceCell<Index>,
    /// The last answers' buffer, kept for the next hand-on (on a big host a few hundred kB a
    /// sample that would otherwise be allocated, page-faulted in and freed each time).
    spare: Vec<u32>,
}

/// No integer at a path.
const NONE: u32 = u32::MAX;

/// A number's path and, for an integer, its value: 24 bytes where `(u64, Option<i128>)` takes
/// 48 (an `i128` is 16-byte aligned). A 4096-CPU sample has ~550k numbers, held twice.
#[derive(Debug, Clone, Copy)]
struct Num {
    path: u64,
    lo: u64,
    /// The value's high 64 bits, or `NOT_INT`: the transform's integers have at most 21
    /// digits (and a difference added to one), far from the 2^127 that high half would mean.
    hi: i64,
}

const NOT_INT: i64 = i64::MIN;

impl Num {
    fn new(path: u64, int: Option<i128>) -> Num {
        match int {
            Some(v) => Num {
                path,
                lo: v as u64,
                hi: (v >> 64) as i64,
            },
            None => Num {
                path,
                lo: 0,
                hi: NOT_INT,
            },
        }
    }

    fn int(&self) -> Option<i128> {
        (self.hi != NOT_INT).then(|| (i128::from(self.hi) << 64) | i128::from(self.lo))
    }
}

#[derive(Debug, Clone)]
struct Index {
    /// Path → position of its last integer in `nums` (`NONE`: no integer at that path).
    last_int: HashMap<u64, u32, BuildHasherDefault<PathHasher>>,
}

/// Where the lookups of the sample being read stand in the previous sample's numbers.
pub(super) struct Cursor {
    at: usize,
    /// Every number so far was the previous sample's at the same place: the same path, an
    /// integer where it held one (the answers depend on both).
    same: bool,
    /// Whether the previous sample's number at the place just looked up was an integer.
    hit_int: Option<bool>,
}

impl Cursor {
    pub(super) fn new() -> Cursor {
        Cursor {
            at: 0,
            same: true,
            hit_int: None,
        }
    }
}

impl Fields {
    /// Integer fields (counting a path once per integer written there).
    pub fn len(&self) -> usize {
        self.nums.iter().filter(|n| n.int().is_some()).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(super) fn clear(&mut self) {
        self.nums.clear();
        if let Some(a) = self.answers.take() {
            self.spare = a;
        }
        self.index = OnceCell::new();
    }

    /// Records the number just looked up with `cur`: at `path`, `int` when it is an integer.
    pub(super) fn push(&mut self, path: u64, int: Option<i128>, cur: &mut Cursor) {
        if cur.hit_int.take() != Some(int.is_some()) {
            cur.same = false;
        }
        self.nums.push(Num::new(path, int));
    }

    /// The last integer at `path` (as a map of every integer field, last written wins, says).
    pub(super) fn get(&self, path: u64, cur: &mut Cursor) -> Option<i128> {
        let at = self.nums.get(cur.at).filter(|n| n.path == path);
        cur.hit_int = at.map(|n| n.int().is_some());
        let last = if at.is_some() {
            cur.at += 1;
            self.answers().get(cur.at - 1).copied()
        } else {
            cur.same = false;
            let last = self.index().last_int.get(&path).copied();
            if let Some(i) = last.filter(|&i| i != NONE) {
                // Found elsewhere (an element inserted or dropped): on in order from there.
                cur.at = i as usize + 1;
            }
            last
        };
        self.nums.get(last? as usize).and_then(Num::int)
    }

    /// After a sample was read against `self` into `next` with `cur`: when its paths were
    /// exactly these, in order, with integers in the same places, its answers are these.
    pub(super) fn hand_on(&self, cur: &Cursor, next: &mut Fields) {
        let same = cur.same && cur.at == self.nums.len() && next.nums.len() == self.nums.len();
        if same {
            let mut answers = std::mem::take(&mut next.spare);
            answers.clear();
            answers.extend_from_slice(self.answers());
            next.answers = OnceCell::from(answers);
        }
    }

    fn answers(&self) -> &Vec<u32> {
        self.answers.get_or_init(|| {
            let index = self.index();
            self.nums
                .iter()
                .map(|n| index.last_int.get(&n.path).copied().unwrap_or(NONE))
                .collect()
        })
    }

    fn index(&self) -> &Index {
        self.index.get_or_init(|| {
            let mut last_int: HashMap<_, _, _> = HashMap::default();
            last_int.reserve(self.nums.len());
            for (i, n) in self.nums.iter().enumerate() {
                let i = u32::try_from(i).unwrap_or(NONE);
                let e = last_int.entry(n.path).or_insert(NONE);
                if n.int().is_some() {
                    *e = i;
                }
            }
            Index { last_int }
        })
    }

    /// Whether the previous sample's answers were handed on to these fields.
    #[cfg(test)]
    pub(super) fn handed_on(&self) -> bool {
        self.answers.get().is_some()
    }

    /// Every integer field, last written wins: what the lookups answer.
    #[cfg(test)]
    pub(super) fn ints(&self) -> HashMap<u64, i128> {
        self.nums
            .iter()
            .filter_map(|n| Some((n.path, n.int()?)))
            .collect()
    }
}

/// The keys are already hashes: pass them through.
#[derive(Default)]
struct PathHasher(u64);

impl Hasher for PathHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(nums: &[(u64, Option<i128>)]) -> Fields {
        let mut f = Fields::default();
        for &(p, v) in nums {
            f.push(p, v, &mut Cursor::new());
        }
        f
    }

    /// A sample of `nums` read against `prev` as the transform does: each looked up, then
    /// recorded. The lookups' answers, and the sample with what it was handed.
    fn step(prev: &Fields, nums: &[(u64, Option<i128>)]) -> (Vec<Option<i128>>, Fields) {
        let mut cur = Cursor::new();
        let mut next = Fields::default();
        let mut got = Vec::new();
        for &(p, v) in nums {
            got.push(prev.get(p, &mut cur));
            next.push(p, v, &mut cur);
        }
        prev.hand_on(&cur, &mut next);
        (got, next)
    }

    /// Lookups of `paths` (integers) in order against `prev`, and whether its answers were
    /// handed on.
    fn read(prev: &Fields, paths: &[u64]) -> (Vec<Option<i128>>, bool) {
        let nums: Vec<_> = paths.iter().map(|&p| (p, Some(0))).collect();
        let (got, next) = step(prev, &nums);
        (got, next.answers.get().is_some())
    }

    #[test]
    fn values_keep_every_bit_in_24_bytes() {
        assert_eq!(std::mem::size_of::<Num>(), 24);
        let big = 10i128.pow(21);
        for v in [
            0,
            1,
            -1,
            i128::from(u64::MAX),
            -i128::from(u64::MAX) - 1,
            big,
            -big,
            2 * big,
        ] {
            assert_eq!(Num::new(7, Some(v)).int(), Some(v), "{v}");
        }
        assert_eq!(Num::new(7, None).int(), None);
    }

    #[test]
    fn lookups_answer_as_a_map_of_the_last_integer_would() {
        let prev = fields(&[(1, Some(10)), (2, None), (3, Some(30)), (4, Some(40))]);
        // Same paths, integers in the same places: in order, answers handed on.
        let (got, next) = step(
            &prev,
            &[(1, Some(11)), (2, None), (3, Some(31)), (4, Some(41))],
        );
        assert_eq!(got, vec![Some(10), None, Some(30), Some(40)]);
        assert!(next.answers.get().is_some());
        assert_eq!(
            read(&next, &[1, 2, 3, 4]).0,
            vec![Some(11), None, Some(31), Some(41)]
        );
        assert!(next.index.get().is_none(), "in order: no index built");
        // An element inserted (9) and one dropped (2): found again, nothing handed on.
        assert_eq!(
            read(&prev, &[1, 9, 3, 4]),
            (vec![Some(10), None, Some(30), Some(40)], false)
        );
        assert_eq!(read(&prev, &[4, 1]), (vec![Some(40), Some(10)], false));
        // Fewer numbers than before is not the same order.
        assert!(!read(&prev, &[1, 2, 3]).1);
        // An integer where there was none (or none where there was one) changes the answers:
        // nothing handed on, and the sample after it is answered as the map would.
        let (_, flip) = step(
            &prev,
            &[(1, Some(11)), (2, Some(7)), (3, None), (4, Some(41))],
        );
        assert!(flip.answers.get().is_none());
        assert_eq!(
            read(&flip, &[1, 2, 3, 4]).0,
            vec![Some(11), Some(7), None, Some(41)]
        );
        // A path several times (two elements with one name): its last integer, in order or
        // not; a non-integer after it does not hide it.
        let dup = fields(&[
            (1, Some(10)),
            (5, Some(1)),
            (5, Some(2)),
            (5, None),
            (6, Some(60)),
        ]);
        assert_eq!(read(&dup, &[1, 5, 5]).0, vec![Some(10), Some(2), Some(2)]);
        assert_eq!(read(&dup, &[6, 5, 1]).0, vec![Some(60), Some(2), Some(10)]);
        assert_eq!(dup.ints().get(&5), Some(&2));
        let same = [
            (1, Some(11)),
            (5, Some(3)),
            (5, Some(4)),
            (5, None),
            (6, Some(61)),
        ];
        let (got, next) = step(&dup, &same);
        assert_eq!(got, vec![Some(10), Some(2), Some(2), Some(2), Some(60)]);
        assert!(next.answers.get().is_some());
        assert_eq!(
            read(&next, &[1, 5, 5, 5, 6]).0,
            vec![Some(11), Some(4), Some(4), Some(4), Some(61)]
        );
        // The last integer at 5 moves from the second place to the third: not handed on.
        let moved = [
            (1, Some(11)),
            (5, Some(3)),
            (5, None),
            (5, Some(5)),
            (6, Some(61)),
        ];
        let (_, flip) = step(&dup, &moved);
        assert!(flip.answers.get().is_none());
        assert_eq!(read(&flip, &[5, 1, 6]).0, vec![Some(5), Some(11), Some(61)]);
    }
}
