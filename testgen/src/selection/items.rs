//! The items each pool test covers under one ranking, and the rank of a suite: how many
//! distinct items its tests cover together.

/// Above this many items per test a suite's items are unioned through stamps instead of
/// bitsets (1 024 words of 64 bits: 8 KiB per test, 8 MiB for a pool of 1 000).
const DENSE_ITEMS: usize = 1 << 16;

/// The items of every pool test under one ranking, renumbered densely over the items the
/// pool covers (`0..universe()`, in the order of their codes), so the rank of a suite is
/// the size of the union of its tests' item sets.
#[derive(Debug, Clone)]
pub struct ItemSets {
    /// The code of each item number.
    codes: Vec<u128>,
    universe: usize,
    tests: usize,
    repr: Repr,
}

#[derive(Debug, Clone)]
enum Repr {
    /// `tests × words` bits, test-major.
    Dense { words: usize, bits: Vec<u64> },
    /// Each test's item numbers, increasing.
    Sparse(Vec<Vec<u32>>),
}

/// Reusable buffers of [`ItemSets::rank`].
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    words: Vec<u64>,
    stamps: Vec<u32>,
    stamp: u32,
}

impl ItemSets {
    /// The item sets of tests whose items are given as codes (any `u128` identifying an
    /// item; each test's list in any order, duplicates allowed).
    pub fn new(per_test: &[Vec<u128>]) -> Self {
        let mut codes: Vec<u128> = per_test.iter().flatten().copied().collect();
        codes.sort_unstable();
        codes.dedup();
        let universe = codes.len();
        // Every code is in `codes`, so the search always finds it.
        let number = |c: &u128| codes.binary_search(c).unwrap_or(0) as u32;
        let tests = per_test.len();
        let repr = if universe <= DENSE_ITEMS {
            let words = universe.div_ceil(64);
            let mut bits = vec![0u64; tests * words];
            for (t, items) in per_test.iter().enumerate() {
                for i in items.iter().map(number) {
                    bits[t * words + i as usize / 64] |= 1u64 << (i % 64);
                }
            }
            Repr::Dense { words, bits }
        } else {
            Repr::Sparse(
                per_test
                    .iter()
                    .map(|items| {
                        let mut v: Vec<u32> = items.iter().map(number).collect();
                        v.sort_unstable();
                        v.dedup();
                        v
                    })
                    .collect(),
            )
        };
        ItemSets { codes, universe, tests, repr }
    }

    /// Items covered by at least one pool test: the highest rank any suite can reach.
    pub fn universe(&self) -> usize {
        self.universe
    }

    /// The code of item `i` (as given to [`ItemSets::new`]).
    pub fn code(&self, i: u32) -> Option<u128> {
        self.codes.get(i as usize).copied()
    }

    /// Pool tests.
    pub fn tests(&self) -> usize {
        self.tests
    }

    /// The items test `t` covers, increasing (empty for a test outside the pool).
    pub fn items_of(&self, t: u32) -> Vec<u32> {
        let t = t as usize;
        match &self.repr {
            Repr::Dense { words, bits } => {
                let mut out = Vec::new();
                if let Some(row) = bits.get(t * words..(t + 1) * words) {
                    for (w, &word) in row.iter().enumerate() {
                        let mut x = word;
                        while x != 0 {
                            out.push((w * 64) as u32 + x.trailing_zeros());
                            x &= x - 1;
                        }
                    }
                }
                out
            }
            Repr::Sparse(lists) => lists.get(t).cloned().unwrap_or_default(),
        }
    }

    /// The rank of `suite` (pool test indices; repeated or out-of-range ones count once or
    /// not at all): the number of distinct items its tests cover.
    pub fn rank(&self, suite: &[u32], scratch: &mut Scratch) -> u32 {
        match &self.repr {
            Repr::Dense { words, bits } => {
                let w = *words;
                let acc = &mut scratch.words;
                acc.clear();
                acc.resize(w, 0);
                for &t in suite {
                    if let Some(row) = bits.get(t as usize * w..(t as usize + 1) * w) {
                        for (a, b) in acc.iter_mut().zip(row) {
                            *a |= *b;
                        }
                    }
                }
                acc.iter().map(|x| x.count_ones()).sum()
            }
            Repr::Sparse(lists) => {
                if scratch.stamps.len() != self.universe || scratch.stamp == u32::MAX {
                    scratch.stamps.clear();
                    scratch.stamps.resize(self.universe, 0);
                    scratch.stamp = 0;
                }
                scratch.stamp += 1;
                let s = scratch.stamp;
                let mut n = 0;
                for &t in suite {
                    for &i in lists.get(t as usize).map_or(&[][..], |v| v.as_slice()) {
                        let slot = &mut scratch.stamps[i as usize];
                        if *slot != s {
                            *slot = s;
                            n += 1;
                        }
                    }
                }
                n
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::rng::Rng;

    fn brute(per_test: &[Vec<u128>], suite: &[u32]) -> u32 {
        let set: BTreeSet<u128> = suite.iter().filter_map(|&t| per_test.get(t as usize)).flatten().copied().collect();
        set.len() as u32
    }

    #[test]
    fn rank_is_the_size_of_the_union() {
        let mut rng = Rng::new(5, 1);
        // Items drawn from small and large ranges of codes.
        for spread in [10u128, 300, 5_000_000] {
            let per_test: Vec<Vec<u128>> = (0..40)
                .map(|_| (0..rng.below(60)).map(|_| rng.below(spread as usize) as u128 * 7 + 3).collect())
                .collect();
            let sets = ItemSets::new(&per_test);
            let all: BTreeSet<u128> = per_test.iter().flatten().copied().collect();
            assert_eq!(sets.universe(), all.len());
            assert!(matches!(sets.repr, Repr::Dense { .. }), "{} items fit the bitsets", all.len());
            let mut scratch = Scratch::default();
            for _ in 0..200 {
                let suite: Vec<u32> = (0..rng.below(12)).map(|_| rng.below(45) as u32).collect();
                assert_eq!(sets.rank(&suite, &mut scratch), brute(&per_test, &suite), "{suite:?}");
            }
            let everything: Vec<u32> = (0..40).collect();
            assert_eq!(sets.rank(&everything, &mut scratch) as usize, sets.universe());
            for t in 0..40u32 {
                assert_eq!(sets.items_of(t).len() as u32, brute(&per_test, &[t]));
            }
        }
    }

    #[test]
    fn large_universes_use_stamps() {
        let per_test: Vec<Vec<u128>> = (0..3).map(|t| (0..40_000u128).map(|i| i * 3 + t).collect()).collect();
        let sets = ItemSets::new(&per_test);
        assert!(matches!(sets.repr, Repr::Sparse(_)));
        let mut scratch = Scratch::default();
        assert_eq!(sets.rank(&[0, 2], &mut scratch), 80_000);
        assert_eq!(sets.rank(&[1, 1, 99], &mut scratch), 40_000);
        assert_eq!(sets.rank(&[], &mut scratch), 0);
    }
}
