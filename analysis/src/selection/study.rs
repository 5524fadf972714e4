//! The selection study as its report sees it (plain data the caller fills from the study's
//! results), and the detection probabilities every table is built from.

// The rankings, methods and a (ranking, method, n) cell's results are the generator's own
// (names are the values of the report's `ranking` and `method` columns): one definition, so
// the two cannot drift apart.
pub use clowder_testgen::selection::{Cell, Method, Ranking};

/// The study's options that the report states or iterates over.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyOptions {
    /// Suite sizes `n`.
    pub sizes: Vec<usize>,
    /// Repetitions `R` of every (ranking, method, n).
    pub repetitions: u32,
    /// Random suites the "best of" method draws.
    pub best_of: u32,
    /// The rankings studied, in report order.
    pub rankings: Vec<Ranking>,
}

/// One mutant of a project's pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mutant {
    /// Whether it could be judged (its replays gave a verdict).
    pub judged: bool,
    /// Pool tests that kill it.
    pub killers: u32,
}

/// The residual risk of the GA's best suite at one generation, averaged over repetitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RiskPoint {
    /// The ranking whose items are the classes.
    pub ranking: Ranking,
    /// Suite size.
    pub n: usize,
    /// Mean residual risk.
    pub risk: f64,
    /// Mean variance of that estimate.
    pub variance: f64,
}

/// What the report needs of one project.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// File stem.
    pub name: String,
    /// Pool tests.
    pub tests: usize,
    /// Size of the pool's alphabet |Σ|.
    pub alphabet: usize,
    /// Coverage targets (statements) of the project.
    pub targets: u32,
    /// The pool's mutants, in the pool's order.
    pub mutants: Vec<Mutant>,
    /// Per ranking: items the pool covers and items in all.
    pub universe: Vec<(Ranking, usize, u128)>,
    /// One cell per (n, ranking, method).
    pub cells: Vec<Cell>,
    /// Wall-clock seconds of selection per cell (same order as `cells`).
    pub cell_seconds: Vec<f64>,
    /// The GA's residual risk per (ranking, n), generation by generation.
    pub risk: Vec<RiskPoint>,
    /// Seconds to build the pool and to run the selections.
    pub seconds: (f64, f64),
}

/// A mutant is *rare* when fewer than this share of the pool's tests kill it (the paper's rare
/// bugs were caught by 7–22 % of its unranked 10-test suites, i.e. by under 2.5 % of its tests).
pub const RARE: f64 = 0.05;

/// Per mutant of a pool of `tests` tests: the share of pool tests that kill it (`None` when it
/// could not be judged).
pub fn kill_rates(mutants: &[Mutant], tests: usize) -> Vec<Option<f64>> {
    mutants.iter().map(|m| m.judged.then(|| f64::from(m.killers) / tests.max(1) as f64)).collect()
}

/// Detection probabilities of one cell: the mean over the project's detectable mutants (killed
/// by some pool test) of the share of repetitions whose suite kills the mutant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detection {
    /// Detectable mutants.
    pub mutants: usize,
    /// Over all detectable mutants.
    pub all: Option<f64>,
    /// Over the rare ones.
    pub rare: Option<f64>,
    /// Over the others.
    pub common: Option<f64>,
}

/// Arithmetic mean (`None` for no values).
pub(crate) fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Per detectable mutant (`rates` from [`kill_rates`], `caught` a cell's): (its detection
/// probability in the cell, whether it is rare).
pub(crate) fn probabilities(rates: &[Option<f64>], caught: &[u32], repetitions: u32) -> Vec<(f64, bool)> {
    rates
        .iter()
        .zip(caught)
        .filter_map(|(q, &k)| q.filter(|&q| q > 0.0).map(|q| (f64::from(k) / f64::from(repetitions), q < RARE)))
        .collect()
}

/// The detection probabilities of a cell whose per-mutant kills are `caught`, for a project
/// whose mutants' kill rates are `rates`.
pub fn detection(rates: &[Option<f64>], caught: &[u32], repetitions: u32) -> Detection {
    let p = probabilities(rates, caught, repetitions);
    let pick = |rare: Option<bool>| -> Vec<f64> {
        p.iter().filter(|(_, r)| rare.is_none_or(|x| x == *r)).map(|(v, _)| *v).collect()
    };
    Detection {
        mutants: p.len(),
        all: mean(&pick(None)),
        rare: mean(&pick(Some(true))),
        common: mean(&pick(Some(false))),
    }
}

impl Project {
    /// [`kill_rates`] of this project's mutants.
    pub fn kill_rates(&self) -> Vec<Option<f64>> {
        kill_rates(&self.mutants, self.tests)
    }

    /// [`detection`] of cell `c` of this project.
    pub fn detection(&self, c: &Cell, repetitions: u32) -> Detection {
        detection(&self.kill_rates(), &c.caught, repetitions)
    }

    /// The cell of (ranking, method, n), if the study has it.
    pub(crate) fn cell(&self, r: Ranking, m: Method, n: usize) -> Option<&Cell> {
        self.cells.iter().find(|c| c.ranking == r && c.method == m && c.n == n)
    }
}
