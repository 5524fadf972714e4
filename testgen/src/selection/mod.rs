//! Suite selection by coverage criteria (issue #20; Elyasaf et al., "Generalized Coverage
//! Criteria for Combinatorial Sequence Testing", §3.3 and §4.2.1–4.2.2, Tables III and IV).
//!
//! The paper builds a pool of random tests, selects suites of `n` tests that maximise a
//! *ranking function* (the number of coverage classes a suite hits) by a genetic algorithm,
//! by the best of 1 000 random suites, or not at all ("unranked": `n` random tests), and
//! measures how often the selected suites catch injected bugs. Here:
//!
//! * **Pool** ([`pool`]): `N` random tests of one project, drawn by random search's test
//!   generator (codons of `min_events..max_events` events, Whisker's defaults 2..20, decoded
//!   against the events available in each state) and each run to its end in a fresh VM in
//!   the whisker profile, seeded with the study's seed, exactly as a run executes tests. Each
//!   test gets the regression assertions a run would record, its covered statements and its
//!   event word over the pool's alphabet ([`crate::sequence`]).
//! * **Bugs** are the project's mutants ([`crate::mutation`]). The *kill matrix* says which
//!   pool test kills which mutant, with the replays, limits and kill rule of a run's mutation
//!   analysis ([`crate::mutation::Baseline::kill_row`]), every test replayed on every mutant.
//! * **Rankings** ([`Ranking`]): statements covered, Kuhn–Higdon t = 2, 3 and consecutive
//!   windows Σ\*wΣ\* t = 2, 3 ([`crate::sequence`]); the rank of a suite is the number of
//!   items its tests cover together ([`items`]).
//! * **Methods** ([`Method`], [`search`]): the paper's GA (population 100, tournament k = 3,
//!   PMX with probability 0.7, uniform test replacement with probability 0.05, at most 300
//!   generations or Jenetics's fitness convergence with filters 10/30 and ε = 0.001), the best
//!   of 1 000 random suites, and unranked selection.
//! * **Detection** ([`study`]): for each (ranking, method, n) the study selects `R` suites
//!   (one per repetition, each with its own seeded stream) and counts, per mutant, the
//!   repetitions whose suite holds a test that kills it. A mutant's *detection probability*
//!   is that count over `R`: the paper's "probability of catching the bug" (Table III), one
//!   bug per mutant.
//!
//! Everything but the selection times is a function of (project, options, seed).

pub mod items;
pub mod pool;
pub mod search;
pub mod study;

pub use items::ItemSets;
pub use pool::{Pool, PoolError, PoolMutant, PoolOptions, PoolProgress, build_pool};
pub use search::GaParams;
pub use study::{Cell, ClassRisk, ProjectStudy, RiskPoint, StudyOptions, class_risks, run_study};

use crate::sequence::{Criterion, Strength};

/// A ranking function: what a suite's rank counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ranking {
    /// Statements (coverage targets) executed.
    Statements,
    /// Kuhn–Higdon 2-way sequences.
    Kh2,
    /// Kuhn–Higdon 3-way sequences.
    Kh3,
    /// Consecutive windows of length 2 (Σ\*wΣ\*, |w| = 2).
    Win2,
    /// Consecutive windows of length 3.
    Win3,
}

impl Ranking {
    /// Every ranking, in report order.
    pub const ALL: [Ranking; 5] = [Ranking::Statements, Ranking::Kh2, Ranking::Kh3, Ranking::Win2, Ranking::Win3];

    /// `statements`, `kh2`, `kh3`, `win2`, `win3`.
    pub fn name(self) -> &'static str {
        match self {
            Ranking::Statements => "statements",
            Ranking::Kh2 => "kh2",
            Ranking::Kh3 => "kh3",
            Ranking::Win2 => "win2",
            Ranking::Win3 => "win3",
        }
    }

    /// Parses [`Ranking::name`].
    pub fn parse(s: &str) -> Option<Ranking> {
        Ranking::ALL.into_iter().find(|r| r.name() == s.trim())
    }

    /// The sequence criterion and strength, `None` for statements.
    pub fn sequence(self) -> Option<(Criterion, Strength)> {
        match self {
            Ranking::Statements => None,
            Ranking::Kh2 => Some((Criterion::KuhnHigdon, Strength::Two)),
            Ranking::Kh3 => Some((Criterion::KuhnHigdon, Strength::Three)),
            Ranking::Win2 => Some((Criterion::Window, Strength::Two)),
            Ranking::Win3 => Some((Criterion::Window, Strength::Three)),
        }
    }
}

/// How suites are selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Method {
    /// The genetic algorithm.
    Ga,
    /// The best of many random suites.
    BestOf,
    /// One random suite.
    Unranked,
}

impl Method {
    /// Every method, in report order.
    pub const ALL: [Method; 3] = [Method::Ga, Method::BestOf, Method::Unranked];

    /// `ga`, `best_of`, `unranked`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Ga => "ga",
            Method::BestOf => "best_of",
            Method::Unranked => "unranked",
        }
    }
}

#[cfg(test)]
mod tests;
