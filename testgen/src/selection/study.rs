//! One project's selection study: every (ranking, method, suite size) over `R` repetitions,
//! which mutants each selected suite catches, the ranks, and the residual risk of the GA's
//! best suites generation by generation.

use std::time::Instant;

use super::items::{ItemSets, Scratch};
use super::pool::Pool;
use super::search::{GaParams, Selected, best_of, ga};
use super::{Method, Ranking};
use crate::rng::Rng;
use crate::sequence::SequenceCounter;
use crate::sequence::risk::{BetaRisk, ClassEvidence, RiskEstimate, class_risk, never_tried, residual_risk};

/// What to select and how often.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyOptions {
    /// Suite sizes `n`.
    pub sizes: Vec<usize>,
    /// Repetitions `R` of every (ranking, method, n).
    pub repetitions: u32,
    /// Random suites the "best of" method draws (1 000).
    pub best_of: u32,
    /// The GA's hyperparameters.
    pub ga: GaParams,
    /// The seed of every selection.
    pub seed: u64,
    /// The rankings studied.
    pub rankings: Vec<Ranking>,
}

/// The items of one ranking over the pool.
#[derive(Debug, Clone)]
pub struct RankingItems {
    /// The ranking.
    pub ranking: Ranking,
    /// Each pool test's items.
    pub sets: ItemSets,
    /// Items over the alphabet (or the project's statements): the coverage denominator.
    pub total: u128,
}

/// The results of one (ranking, method, n) over the repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The ranking (for unranked selection: the ranking the ranks are measured with).
    pub ranking: Ranking,
    /// The method.
    pub method: Method,
    /// Suite size.
    pub n: usize,
    /// Per pool mutant (in the pool's order): repetitions whose suite kills it.
    pub caught: Vec<u32>,
    /// Highest rank of a selected suite.
    pub rank_max: u32,
    /// Sum of the selected suites' ranks.
    pub rank_sum: u64,
    /// Sum of the GA's generations (0 for the other methods).
    pub generations: u64,
}

/// The residual risk of the GA's best suite at one generation, averaged over repetitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RiskPoint {
    /// The ranking whose items are the classes.
    pub ranking: Ranking,
    /// Suite size.
    pub n: usize,
    /// Generation (0: the initial population).
    pub generation: u32,
    /// Mean residual risk `Σ wᵢ·Eᵢ` (uniform weights over all classes).
    pub risk: f64,
    /// Mean variance `Σ wᵢ²·Vᵢ` of that estimate.
    pub variance: f64,
}

/// One project's study.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectStudy {
    /// Per ranking: items the pool covers and items in all.
    pub universe: Vec<(Ranking, usize, u128)>,
    /// One cell per (n, ranking, method) in that order.
    pub cells: Vec<Cell>,
    /// The GA's residual risk per (ranking, n, generation), sequence rankings only.
    pub risk: Vec<RiskPoint>,
    /// Wall-clock seconds of selection per cell (same order as `cells`): the only
    /// non-deterministic output, kept apart.
    pub seconds: Vec<f64>,
}

/// The items of `ranking` for every pool test.
pub fn ranking_items(pool: &Pool, ranking: Ranking) -> RankingItems {
    let (sets, total) = match ranking.sequence() {
        None => {
            let per_test: Vec<Vec<u128>> =
                pool.statements.iter().map(|s| s.iter().map(|&t| u128::from(t)).collect()).collect();
            (ItemSets::new(&per_test), u128::from(pool.targets))
        }
        Some((criterion, strength)) => {
            let k = pool.alphabet.len();
            let per_test: Vec<Vec<u128>> = pool
                .words
                .iter()
                .map(|w| {
                    let mut c = SequenceCounter::new(criterion, k, strength);
                    c.add(w);
                    c.items()
                })
                .collect();
            (ItemSets::new(&per_test), SequenceCounter::new(criterion, k, strength).total())
        }
    };
    RankingItems { ranking, sets, total }
}

/// Mutants killed per pool test as bitsets over the pool's judged mutants.
struct Kills {
    words: usize,
    bits: Vec<u64>,
}

impl Kills {
    fn new(pool: &Pool) -> Self {
        let words = pool.mutants.len().div_ceil(64);
        let mut bits = vec![0u64; pool.tests.len() * words];
        for (m, pm) in pool.mutants.iter().enumerate() {
            for &t in &pm.killed_by {
                if let Some(w) = bits.get_mut(t as usize * words + m / 64) {
                    *w |= 1u64 << (m % 64);
                }
            }
        }
        Kills { words, bits }
    }

    /// Adds one to `caught[m]` for every mutant `m` some test of `suite` kills.
    fn count(&self, suite: &[u32], acc: &mut Vec<u64>, caught: &mut [u32]) {
        acc.clear();
        acc.resize(self.words, 0);
        for &t in suite {
            if let Some(row) = self.bits.get(t as usize * self.words..(t as usize + 1) * self.words) {
                for (a, b) in acc.iter_mut().zip(row) {
                    *a |= *b;
                }
            }
        }
        for (w, &word) in acc.iter().enumerate() {
            let mut x = word;
            while x != 0 {
                if let Some(c) = caught.get_mut(w * 64 + x.trailing_zeros() as usize) {
                    *c += 1;
                }
                x &= x - 1;
            }
        }
    }
}

/// The random stream of one repetition of one (ranking, method, n); unranked selection uses
/// one stream per (n, repetition) whatever the ranking, so its suites are shared.
fn stream(seed: u64, ranking: Option<Ranking>, method: Method, n: usize, rep: u32) -> Rng {
    let r = ranking.map_or(0xFF, |r| r as u64);
    Rng::new(seed, 0x5E1E_C700_0000_0000 ^ (r << 48) ^ ((method as u64) << 40) ^ ((n as u64) << 20) ^ u64::from(rep))
}

/// Runs the study on `pool`.
pub fn run_study(pool: &Pool, opts: &StudyOptions) -> ProjectStudy {
    let items: Vec<RankingItems> = opts.rankings.iter().map(|&r| ranking_items(pool, r)).collect();
    let kills = Kills::new(pool);
    let mut scratch = Scratch::default();
    let mut acc = Vec::new();
    let mut cells = Vec::new();
    let mut seconds = Vec::new();
    let mut risk = Vec::new();
    let empty = |ranking, method, n| Cell {
        ranking,
        method,
        n,
        caught: vec![0; pool.mutants.len()],
        rank_max: 0,
        rank_sum: 0,
        generations: 0,
    };
    let note = |cell: &mut Cell, s: &Selected, acc: &mut Vec<u64>| {
        kills.count(&s.suite, acc, &mut cell.caught);
        cell.rank_max = cell.rank_max.max(s.rank);
        cell.rank_sum += u64::from(s.rank);
        cell.generations += u64::from(s.generations);
    };
    for &n in &opts.sizes {
        // Unranked suites: drawn once per repetition, ranked under every ranking.
        let started = Instant::now();
        let suites: Vec<Vec<u32>> = (0..opts.repetitions)
            .map(|rep| {
                super::search::sample(pool.tests.len(), n, &mut stream(opts.seed, None, Method::Unranked, n, rep))
            })
            .collect();
        let unranked_secs = started.elapsed().as_secs_f64();
        for ri in &items {
            let mut cell = empty(ri.ranking, Method::Unranked, n);
            for s in &suites {
                let rank = ri.sets.rank(s, &mut scratch);
                note(&mut cell, &Selected { suite: s.clone(), rank, generations: 0 }, &mut acc);
            }
            let mut ga_cell = empty(ri.ranking, Method::Ga, n);
            let mut trace = RiskTrace::new(ri, pool);
            let started = Instant::now();
            for rep in 0..opts.repetitions {
                let mut rng = stream(opts.seed, Some(ri.ranking), Method::Ga, n, rep);
                trace.start();
                let s = ga(&ri.sets, n, &opts.ga, &mut rng, &mut scratch, &mut |g, best| trace.observe(g, best));
                note(&mut ga_cell, &s, &mut acc);
            }
            let ga_secs = started.elapsed().as_secs_f64() - trace.seconds;
            risk.extend(trace.points(n));
            let mut best_cell = empty(ri.ranking, Method::BestOf, n);
            let started = Instant::now();
            for rep in 0..opts.repetitions {
                let mut rng = stream(opts.seed, Some(ri.ranking), Method::BestOf, n, rep);
                let s = best_of(&ri.sets, n, opts.best_of, &mut rng, &mut scratch);
                note(&mut best_cell, &s, &mut acc);
            }
            let best_secs = started.elapsed().as_secs_f64();
            cells.extend([ga_cell, best_cell, cell]);
            seconds.extend([ga_secs, best_secs, unranked_secs]);
        }
    }
    ProjectStudy {
        universe: items.iter().map(|ri| (ri.ranking, ri.sets.universe(), ri.total)).collect(),
        cells,
        risk,
        seconds,
    }
}

/// Per pool test: the judged mutants it kills and those it does not (its Bernoulli trials).
fn test_evidence(pool: &Pool) -> Vec<(u64, u64)> {
    let judged = pool.mutants.iter().filter(|m| m.judged).count() as u64;
    let mut kills = vec![0u64; pool.tests.len()];
    for m in pool.mutants.iter().filter(|m| m.judged) {
        for &t in &m.killed_by {
            if let Some(k) = kills.get_mut(t as usize) {
                *k += 1;
            }
        }
    }
    kills.into_iter().map(|k| (k, judged - k)).collect()
}

/// The residual risk of the GA's best suite at each generation of each repetition.
///
/// Classes are the ranking's items over the whole alphabet (`total` of them, uniform weights);
/// each test of the suite is one Bernoulli trial per judged mutant for every class it covers:
/// a failure when it kills the mutant, a pass otherwise. Classes no test of the suite covers
/// keep the prior `Beta(1, 1)`.
struct RiskTrace<'p> {
    items: Option<&'p RankingItems>,
    /// Per pool test: (mutants it kills, judged mutants it does not kill).
    evidence: Vec<(u64, u64)>,
    /// Per repetition, per generation: (risk, variance).
    reps: Vec<Vec<(f64, f64)>>,
    last: Option<(Vec<u32>, (f64, f64))>,
    /// Time spent here (not part of the GA's selection time).
    seconds: f64,
}

impl<'p> RiskTrace<'p> {
    fn new(items: &'p RankingItems, pool: &Pool) -> Self {
        let evidence = test_evidence(pool);
        let items = (items.ranking.sequence().is_some() && items.total > 0).then_some(items);
        RiskTrace { items, evidence, reps: Vec::new(), last: None, seconds: 0.0 }
    }

    fn start(&mut self) {
        if self.items.is_some() {
            self.reps.push(Vec::new());
            self.last = None;
        }
    }

    fn observe(&mut self, _generation: u32, best: &Selected) {
        let Some(ri) = self.items else { return };
        let started = Instant::now();
        let value = match &self.last {
            Some((suite, v)) if *suite == best.suite => *v,
            _ => {
                let v = self.risk_of(ri, &best.suite);
                self.last = Some((best.suite.clone(), v));
                v
            }
        };
        if let Some(r) = self.reps.last_mut() {
            r.push(value);
        }
        self.seconds += started.elapsed().as_secs_f64();
    }

    fn risk_of(&self, ri: &RankingItems, suite: &[u32]) -> (f64, f64) {
        let mut by_class = vec![None::<ClassEvidence>; ri.sets.universe()];
        for &t in suite {
            let (f, p) = self.evidence.get(t as usize).copied().unwrap_or((0, 0));
            for i in ri.sets.items_of(t) {
                if let Some(slot) = by_class.get_mut(i as usize) {
                    let e = slot.get_or_insert_with(ClassEvidence::default);
                    e.failures += f;
                    e.passes += p;
                }
            }
        }
        let total = ri.total as f64;
        let w = 1.0 / total;
        let tried: Vec<ClassEvidence> = by_class.into_iter().flatten().collect();
        let weights = vec![w; tried.len()];
        let untried = total - tried.len() as f64;
        let prior = never_tried(BetaRisk::UNIFORM);
        // Weights are finite and non-negative and match the classes, so this cannot fail.
        let r = residual_risk(BetaRisk::UNIFORM, &tried, Some(&weights)).unwrap_or(prior);
        (r.mean + untried * w * prior.mean, r.variance + untried * w * w * prior.variance)
    }

    /// Mean risk and variance per generation over the repetitions; a repetition that stopped
    /// earlier keeps its final best suite (and so its final values) in later generations.
    fn points(&self, n: usize) -> Vec<RiskPoint> {
        let Some(ri) = self.items else { return Vec::new() };
        let gens = self.reps.iter().map(Vec::len).max().unwrap_or(0);
        let reps = self.reps.len().max(1) as f64;
        (0..gens)
            .map(|g| {
                let (mut risk, mut variance) = (0.0, 0.0);
                for r in &self.reps {
                    let (e, v) = r.get(g).or(r.last()).copied().unwrap_or((0.0, 0.0));
                    risk += e;
                    variance += v;
                }
                RiskPoint { ranking: ri.ranking, n, generation: g as u32, risk: risk / reps, variance: variance / reps }
            })
            .collect()
    }
}

/// One class of a sequence ranking with the whole pool's evidence: the paper's per-class
/// estimate (§4.2.3) after running every pool test on every mutant.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassRisk {
    /// The class's symbols (indices into the pool's alphabet), in order.
    pub symbols: Vec<u32>,
    /// Pool tests that cover it.
    pub hits: u32,
    /// Failures: (covering test, mutant it kills) pairs; passes: (covering test, judged mutant
    /// it does not kill) pairs.
    pub evidence: ClassEvidence,
    /// The posterior under the uniform prior.
    pub estimate: RiskEstimate,
}

/// Every class of `ranking` some pool test covers, in the order of their codes (classes no
/// test covers keep the prior and are not listed). Empty for statements.
pub fn class_risks(pool: &Pool, ranking: Ranking) -> Vec<ClassRisk> {
    let Some((_, strength)) = ranking.sequence() else { return Vec::new() };
    let ri = ranking_items(pool, ranking);
    let evidence = test_evidence(pool);
    let mut classes: Vec<(u32, ClassEvidence)> = vec![(0, ClassEvidence::default()); ri.sets.universe()];
    for t in 0..pool.tests.len() as u32 {
        let (f, p) = evidence.get(t as usize).copied().unwrap_or((0, 0));
        for i in ri.sets.items_of(t) {
            if let Some((hits, e)) = classes.get_mut(i as usize) {
                *hits += 1;
                e.failures += f;
                e.passes += p;
            }
        }
    }
    let k = pool.alphabet.len().max(1) as u128;
    classes
        .into_iter()
        .enumerate()
        .map(|(i, (hits, evidence))| {
            let mut code = ri.sets.code(i as u32).unwrap_or(0);
            let mut symbols = vec![0u32; strength.t()];
            for s in symbols.iter_mut().rev() {
                *s = (code % k) as u32;
                code /= k;
            }
            ClassRisk { symbols, hits, evidence, estimate: class_risk(BetaRisk::UNIFORM, evidence) }
        })
        .collect()
}
