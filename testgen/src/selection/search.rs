//! Choosing `n` of the pool's tests: the paper's genetic algorithm (§3.3, Table II), the best
//! of many random suites, and one random suite ("unranked"), §4.2.2.

use super::items::{ItemSets, Scratch};
use crate::rng::Rng;

/// The genetic algorithm's hyperparameters (the paper's Table II by default).
#[derive(Debug, Clone, PartialEq)]
pub struct GaParams {
    /// Suites per generation (100).
    pub population: usize,
    /// At most this many generations after the initial one (300).
    pub generations: u32,
    /// Probability that a pair of parents is recombined by PMX (0.7).
    pub crossover: f64,
    /// Probability that a test of an offspring is replaced by another pool test (0.05).
    pub mutation: f64,
    /// Tournament size of parent selection (3).
    pub tournament: usize,
    /// Generations averaged by the short filter of the convergence test (10).
    pub short_filter: usize,
    /// Generations averaged by the long filter; also the fewest generations run (30).
    pub long_filter: usize,
    /// Converged when the two filters' means differ by at most this share (0.001).
    pub epsilon: f64,
}

impl Default for GaParams {
    fn default() -> Self {
        GaParams {
            population: 100,
            generations: 300,
            crossover: 0.7,
            mutation: 0.05,
            tournament: 3,
            short_filter: 10,
            long_filter: 30,
            epsilon: 0.001,
        }
    }
}

/// A chosen suite and its rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    /// Pool test indices, distinct.
    pub suite: Vec<u32>,
    /// Its rank ([`ItemSets::rank`]).
    pub rank: u32,
    /// Generations run after the initial population (0 for the other methods).
    pub generations: u32,
}

/// `n` distinct indices of `0..pool` (all of them, in order, when `n ≥ pool`), by Floyd's
/// algorithm: `n` draws whatever the pool's size.
pub fn sample(pool: usize, n: usize, rng: &mut Rng) -> Vec<u32> {
    if n >= pool {
        return (0..pool as u32).collect();
    }
    let mut out: Vec<u32> = Vec::with_capacity(n);
    for j in pool - n..pool {
        let t = rng.below(j + 1) as u32;
        out.push(if out.contains(&t) { j as u32 } else { t });
    }
    out
}

/// Unranked selection: one random suite of `n` pool tests.
pub fn unranked(items: &ItemSets, n: usize, rng: &mut Rng, scratch: &mut Scratch) -> Selected {
    let suite = sample(items.tests(), n, rng);
    let rank = items.rank(&suite, scratch);
    Selected { suite, rank, generations: 0 }
}

/// "Best of `tries`": the highest-ranked of `tries` random suites (the first one on ties).
pub fn best_of(items: &ItemSets, n: usize, tries: u32, rng: &mut Rng, scratch: &mut Scratch) -> Selected {
    let mut best = unranked(items, n, rng, scratch);
    for _ in 1..tries {
        let s = unranked(items, n, rng, scratch);
        if s.rank > best.rank {
            best = s;
        }
    }
    best
}

/// Partially matched crossover of two suites of equal length: the children swap the segment
/// between two cut points, and a test of a child's own part that the incoming segment already
/// holds is replaced through the segment's mapping, so both children stay duplicate-free.
fn pmx(a: &[u32], b: &[u32], rng: &mut Rng) -> (Vec<u32>, Vec<u32>) {
    let n = a.len().min(b.len());
    let (mut lo, mut hi) = (rng.below(n + 1), rng.below(n + 1));
    if lo > hi {
        std::mem::swap(&mut lo, &mut hi);
    }
    let child = |own: &[u32], other: &[u32]| -> Vec<u32> {
        let seg = &other[lo..hi];
        let mut c = own[..n].to_vec();
        c[lo..hi].copy_from_slice(seg);
        for i in (0..lo).chain(hi..n) {
            let mut v = own[i];
            // v came from outside own's segment, so it is not among own[lo..hi]; each step
            // moves to an element of own's segment not visited yet, so this ends.
            while let Some(j) = seg.iter().position(|&s| s == v) {
                v = own[lo + j];
            }
            c[i] = v;
        }
        c
    };
    (child(a, b), child(b, a))
}

/// Each test of `suite` is replaced with probability `p` by a pool test not in the suite.
fn mutate(suite: &mut [u32], pool: usize, p: f64, rng: &mut Rng) {
    if suite.len() >= pool {
        return; // every pool test is in the suite already
    }
    for i in 0..suite.len() {
        if rng.next_double() < p {
            let fresh = loop {
                let t = rng.below(pool) as u32;
                if !suite.contains(&t) {
                    break t;
                }
            };
            suite[i] = fresh;
        }
    }
}

/// Tournament selection: the best of `k` suites drawn with replacement (the first drawn on ties).
fn tournament(ranks: &[u32], k: usize, rng: &mut Rng) -> usize {
    let mut best = rng.below(ranks.len());
    for _ in 1..k {
        let c = rng.below(ranks.len());
        if ranks[c] > ranks[best] {
            best = c;
        }
    }
    best
}

/// Jenetics's fitness-convergence limit (`Limits.byFitnessConvergence`), which the paper's tool
/// uses: once `long` generations have run, stop when the means of the best ranks of the last
/// `short` and the last `long` generations differ by at most `epsilon` of the larger.
fn converged(best: &[u32], p: &GaParams) -> bool {
    if best.len() < p.long_filter.max(1) || p.short_filter == 0 {
        return false;
    }
    let mean = |k: usize| best[best.len() - k..].iter().map(|&r| f64::from(r)).sum::<f64>() / k as f64;
    let (s, l) = (mean(p.short_filter.min(p.long_filter)), mean(p.long_filter));
    let div = s.abs().max(l.abs());
    let eps = (s - l).abs() / if div <= 1e-19 { 1.0 } else { div };
    eps <= p.epsilon
}

/// The genetic algorithm of the paper's tool: a population of suites (initially random),
/// generational replacement by offspring of tournament-selected parents, PMX recombination and
/// uniform test replacement; ends after `generations` generations, on fitness convergence
/// ([`converged`]), or when a suite covers every item the pool covers (none can rank higher).
/// Returns the best suite seen. `observe` sees each generation's number (0: the initial
/// population) and the best suite so far.
pub fn ga(
    items: &ItemSets,
    n: usize,
    p: &GaParams,
    rng: &mut Rng,
    scratch: &mut Scratch,
    observe: &mut dyn FnMut(u32, &Selected),
) -> Selected {
    let pool = items.tests();
    let size = p.population.max(2);
    let mut population: Vec<Vec<u32>> = (0..size).map(|_| sample(pool, n, rng)).collect();
    let mut ranks: Vec<u32> = population.iter().map(|s| items.rank(s, scratch)).collect();
    let mut best = Selected { suite: Vec::new(), rank: 0, generations: 0 };
    let mut history: Vec<u32> = Vec::new();
    let ceiling = items.universe() as u32;
    for generation in 0..=p.generations {
        if generation > 0 {
            let mut next: Vec<Vec<u32>> = Vec::with_capacity(size + 1);
            while next.len() < size {
                let a = &population[tournament(&ranks, p.tournament, rng)];
                let b = &population[tournament(&ranks, p.tournament, rng)];
                let (mut c, mut d) =
                    if rng.next_double() < p.crossover { pmx(a, b, rng) } else { (a.clone(), b.clone()) };
                mutate(&mut c, pool, p.mutation, rng);
                mutate(&mut d, pool, p.mutation, rng);
                next.push(c);
                next.push(d);
            }
            next.truncate(size);
            population = next;
            ranks = population.iter().map(|s| items.rank(s, scratch)).collect();
        }
        let (i, &r) = ranks.iter().enumerate().max_by_key(|&(i, r)| (*r, std::cmp::Reverse(i))).unwrap_or((0, &0));
        if best.suite.is_empty() || r > best.rank {
            best = Selected { suite: population[i].clone(), rank: r, generations: generation };
        }
        best.generations = generation;
        observe(generation, &best);
        history.push(r);
        if best.rank >= ceiling || converged(&history, p) {
            break;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn distinct(s: &[u32]) -> bool {
        s.iter().collect::<BTreeSet<_>>().len() == s.len()
    }

    #[test]
    fn samples_are_distinct_and_cover_the_pool() {
        let mut rng = Rng::new(1, 2);
        let mut seen = BTreeSet::new();
        for _ in 0..300 {
            let s = sample(50, 10, &mut rng);
            assert_eq!(s.len(), 10);
            assert!(distinct(&s) && s.iter().all(|&t| t < 50), "{s:?}");
            seen.extend(s);
        }
        assert_eq!(seen.len(), 50, "every pool test is drawn sometimes");
        assert_eq!(sample(3, 5, &mut rng), vec![0, 1, 2]);
    }

    #[test]
    fn pmx_children_are_duplicate_free_mixes_of_their_parents() {
        let mut rng = Rng::new(3, 4);
        for _ in 0..2000 {
            let n = 1 + rng.below(12);
            let a = sample(30, n, &mut rng);
            let b = sample(30, n, &mut rng);
            let (c, d) = pmx(&a, &b, &mut rng);
            let parents: BTreeSet<u32> = a.iter().chain(&b).copied().collect();
            for child in [&c, &d] {
                assert_eq!(child.len(), n);
                assert!(distinct(child), "{a:?} × {b:?} → {child:?}");
                assert!(child.iter().all(|t| parents.contains(t)), "{a:?} × {b:?} → {child:?}");
            }
        }
        // Identical parents give themselves back.
        let a = vec![4, 9, 1, 7];
        assert_eq!(pmx(&a, &a, &mut rng), (a.clone(), a.clone()));
    }

    #[test]
    fn mutation_keeps_suites_duplicate_free() {
        let mut rng = Rng::new(5, 6);
        let mut s = sample(12, 10, &mut rng);
        let before = s.clone();
        for _ in 0..500 {
            mutate(&mut s, 12, 0.5, &mut rng);
            assert!(distinct(&s) && s.iter().all(|&t| t < 12), "{s:?}");
        }
        assert_ne!(s, before);
        let mut all: Vec<u32> = (0..5).collect();
        mutate(&mut all, 5, 1.0, &mut rng);
        assert_eq!(all, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn convergence_follows_the_two_filters() {
        let p = GaParams { short_filter: 2, long_filter: 4, epsilon: 0.01, ..GaParams::default() };
        assert!(!converged(&[5, 5, 5], &p), "fewer generations than the long filter");
        assert!(converged(&[5, 5, 5, 5], &p));
        // Short mean 10, long mean 7.5: 25 % apart.
        assert!(!converged(&[5, 5, 10, 10], &p));
        assert!(converged(&[0, 0, 0, 0], &p));
    }

    /// A pool where test `i` covers items `{i}` and a few shared ones; the best suites hold the
    /// tests with the private items and the ones covering many shared items.
    fn pool() -> (Vec<Vec<u128>>, ItemSets) {
        let mut per_test = Vec::new();
        let mut rng = Rng::new(7, 8);
        for i in 0..200u128 {
            let mut items = vec![1000 + rng.below(20) as u128];
            if i % 10 == 0 {
                items.extend((0..30).map(|j| 10_000 + i * 100 + j)); // rich tests
            }
            per_test.push(items);
        }
        let sets = ItemSets::new(&per_test);
        (per_test, sets)
    }

    #[test]
    fn ga_and_best_of_beat_unranked_selection() {
        let (_, items) = pool();
        let mut scratch = Scratch::default();
        let (mut ga_sum, mut best_sum, mut un_sum) = (0u64, 0u64, 0u64);
        for rep in 0..20 {
            let mut rng = Rng::new(rep, 9);
            let mut gens = Vec::new();
            let g = ga(&items, 10, &GaParams::default(), &mut rng, &mut scratch, &mut |generation, best| {
                gens.push((generation, best.rank));
            });
            assert_eq!(g.rank, items.rank(&g.suite, &mut scratch));
            assert!(distinct(&g.suite) && g.suite.len() == 10);
            assert!(gens.windows(2).all(|w| w[0].0 + 1 == w[1].0 && w[0].1 <= w[1].1), "best never drops");
            assert_eq!(gens.last().map(|x| x.0), Some(g.generations));
            let b = best_of(&items, 10, 1000, &mut rng, &mut scratch);
            let u = unranked(&items, 10, &mut rng, &mut scratch);
            ga_sum += u64::from(g.rank);
            best_sum += u64::from(b.rank);
            un_sum += u64::from(u.rank);
        }
        // Ten rich tests (30 private items each) exist: the GA finds most of them.
        assert!(ga_sum >= best_sum && best_sum > un_sum, "GA {ga_sum}, best of 1000 {best_sum}, unranked {un_sum}");
        assert!(ga_sum as f64 / 20.0 > 250.0, "GA mean rank {}", ga_sum as f64 / 20.0);
    }

    #[test]
    fn ga_stops_at_the_ceiling() {
        // Two tests cover everything the pool covers: the initial population may already hold
        // them; the GA stops as soon as one suite reaches the ceiling.
        let per_test: Vec<Vec<u128>> = (0..30u128).map(|i| vec![i % 2]).collect();
        let items = ItemSets::new(&per_test);
        let mut rng = Rng::new(1, 1);
        let g = ga(&items, 5, &GaParams::default(), &mut rng, &mut Scratch::default(), &mut |_, _| {});
        assert_eq!(g.rank, 2);
        assert!(g.generations < 5, "{g:?}");
    }
}
