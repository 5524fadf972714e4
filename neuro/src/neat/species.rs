//! Species and the compatibility distance (`Species.ts`, `NeatPopulation.compatibilityDistance`).

use crate::network::{Network, WhiskerVersion};
use crate::params::NeatParams;

/// Whisker's distance to an undefined representative (`Number.MAX_SAFE_INTEGER`).
pub const UNDEFINED_DISTANCE: f64 = 9_007_199_254_740_991.0;

/// NEAT compatibility distance `c1·E + c2·D + c3·W̄`. Genomes are aligned by innovation
/// number; as in Whisker the walk stops after `max(|a|, |b|)` steps, so genes after that point
/// are not counted. Master divides the excess and disjoint terms by that size; v0.7 does not.
pub fn compatibility_distance(a: &Network, b: &Network, params: &NeatParams) -> f64 {
    let (ca, cb) = (a.connections(), b.connections());
    let max = ca.len().max(cb.len());
    let (mut excess, mut disjoint, mut matching, mut weight_diff) = (0usize, 0usize, 0usize, 0.0);
    let (mut i1, mut i2) = (0, 0);
    for _ in 0..max {
        if i1 >= ca.len() {
            excess += 1;
            i2 += 1;
        } else if i2 >= cb.len() {
            excess += 1;
            i1 += 1;
        } else {
            let (x, y) = (&ca[i1], &cb[i2]);
            if x.innovation == y.innovation {
                matching += 1;
                weight_diff += (x.weight - y.weight).abs();
                i1 += 1;
                i2 += 1;
            } else if x.innovation < y.innovation {
                disjoint += 1;
                i1 += 1;
            } else {
                disjoint += 1;
                i2 += 1;
            }
        }
    }
    if max == 0 {
        return 0.0;
    }
    let (d, e) = (disjoint as f64 * params.disjoint_coefficient, excess as f64 * params.excess_coefficient);
    let structural = match params.version {
        WhiskerVersion::Master => d / max as f64 + e / max as f64,
        WhiskerVersion::V07 => d + e,
    };
    if matching == 0 { structural } else { structural + params.weight_coefficient * (weight_diff / matching as f64) }
}

/// A species: its members (by network id) and its statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct Species {
    /// Species id.
    pub id: u64,
    /// Member network ids; sorted by fitness (best first) when parents are marked.
    pub members: Vec<u64>,
    /// Master: the network new members are compared with.
    pub representative: Option<Network>,
    /// Generations survived.
    pub age: u64,
    /// Average raw fitness of the members.
    pub average_fitness: f64,
    /// Average shared fitness of the members.
    pub average_shared_fitness: f64,
    /// Best member fitness of this generation.
    pub current_best_fitness: f64,
    /// Best member fitness ever.
    pub all_time_best_fitness: f64,
    /// Offspring to breed (may be fractional after a refocus, as in Whisker).
    pub expected_offspring: f64,
    /// Created this generation (skips one ageing).
    pub is_novel: bool,
    /// Age at which the best fitness last improved.
    pub age_of_last_improvement: u64,
    /// Id of the best member.
    pub champion: Option<u64>,
}

impl Species {
    /// A new species (age 1).
    pub fn new(id: u64, novel: bool) -> Self {
        Self {
            id,
            members: Vec::new(),
            representative: None,
            age: 1,
            average_fitness: 0.0,
            average_shared_fitness: 0.0,
            current_best_fitness: 0.0,
            all_time_best_fitness: 0.0,
            expected_offspring: 0.0,
            is_novel: novel,
            age_of_last_improvement: 1,
            champion: None,
        }
    }

    /// The stagnation rule of `assignSharedFitness`: penalise (×0.01) once
    /// `age - ageOfLastImprovement + 1 >= penalizingAge`.
    pub fn is_stagnant(&self, params: &NeatParams) -> bool {
        let debt = (self.age as i64 - self.age_of_last_improvement as i64 + 1) - params.penalizing_age as i64;
        let debt = if debt == 0 { 1 } else { debt };
        debt >= 1
    }

    /// Shared fitness of one member with raw fitness `fitness` (`assignSharedFitness`).
    pub fn shared_fitness(&self, fitness: f64, params: &NeatParams) -> f64 {
        let mut shared = fitness;
        if self.is_stagnant(params) {
            shared *= 0.01;
        }
        if self.age <= 10 {
            shared *= params.age_significance;
        }
        if shared <= 0.0 {
            shared = 0.0001;
        }
        shared / self.members.len().max(1) as f64
    }

    /// How many of `n` members may reproduce (`markParents`: `floor(parentsPerSpecies · n) + 1`;
    /// v0.7 raises a zero to one first).
    pub fn number_of_parents(n: usize, params: &NeatParams) -> usize {
        let mut parents = (params.parents_per_species * n as f64).floor() as usize;
        if params.version == WhiskerVersion::V07 && parents == 0 {
            parents = 1;
        }
        parents + 1
    }

    /// `getNumberOfOffspringsNEAT`: sums the members' expected offspring, carrying fractions in
    /// `left_over` across species. Returns the new left-over.
    pub fn offspring_neat(&mut self, member_expected: &[f64], mut left_over: f64) -> f64 {
        self.expected_offspring = 0.0;
        for &e in member_expected {
            self.expected_offspring += e.floor();
            left_over += e % 1.0;
            if left_over > 1.0 {
                let whole = left_over.floor();
                self.expected_offspring += whole;
                left_over -= whole;
            }
        }
        left_over
    }
}
