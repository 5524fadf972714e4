//! Algorithm configuration: which search and its parameters.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The search algorithms clowder implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// Random search: random tests, keep those that cover something new.
    Random,
    /// MOSA: many-objective sorting algorithm (Panichella et al.).
    Mosa,
    /// MIO: many independent objectives (Arcuri).
    Mio,
}

impl Algorithm {
    /// Parses an algorithm name as written in experiment files.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name.to_ascii_lowercase().as_str() {
            "random" | "randomsearch" | "random_search" => Ok(Algorithm::Random),
            "mosa" => Ok(Algorithm::Mosa),
            "mio" => Ok(Algorithm::Mio),
            other => Err(format!("unknown algorithm {other:?} (known: random, mosa, mio)")),
        }
    }

    /// Canonical lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Random => "random",
            Algorithm::Mosa => "mosa",
            Algorithm::Mio => "mio",
        }
    }
}

/// Parameters every algorithm accepts (Whisker's `chromosome`, `durations`,
/// `integerRange`, `mutation`, `localSearch` settings).
pub const COMMON_PARAMS: &[&str] = &[
    "min_events",
    "max_events",
    "wait_upper_bound",
    "press_duration",
    "click_duration",
    "sound_duration",
    "codon_min",
    "codon_max",
    "gaussian_mutation_power",
    "extension_probability",
    "extension_new_event_probability",
    "reduction_probability",
    "minimize",
    "assertions",
];

/// An algorithm with its parameters (anything not given takes the Whisker
/// study's default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlgorithmConfig {
    /// The search algorithm.
    pub algorithm: Algorithm,
    /// Parameters by name; values are JSON scalars.
    #[serde(default)]
    pub params: BTreeMap<String, serde_json::Value>,
}

impl AlgorithmConfig {
    /// A configuration with default parameters.
    pub fn new(algorithm: Algorithm) -> Self {
        Self { algorithm, params: BTreeMap::new() }
    }

    /// Normalised JSON (sorted keys, no whitespace): part of a run's identity.
    pub fn normalized_json(&self) -> String {
        // BTreeMap keeps keys sorted, so this is canonical.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Integer parameter `key`, or `default`.
    pub fn int(&self, key: &str, default: u64) -> Result<u64, String> {
        match self.params.get(key) {
            None => Ok(default),
            Some(v) => v.as_u64().ok_or_else(|| format!("parameter {key:?} must be a non-negative integer, got {v}")),
        }
    }

    /// Checks that every parameter is one this algorithm knows.
    pub fn validate(&self) -> Result<(), String> {
        let specific: &[&str] = match self.algorithm {
            Algorithm::Random => &[],
            Algorithm::Mosa => &["population_size", "crossover_probability", "mutation_probability"],
            Algorithm::Mio => &[
                "archive_size_start",
                "archive_size_focused",
                "random_selection_probability_start",
                "random_selection_probability_focused",
                "start_of_focused_phase",
                "max_mutation_count_start",
                "max_mutation_count_focused",
            ],
        };
        for k in self.params.keys() {
            if !COMMON_PARAMS.contains(&k.as_str()) && !specific.contains(&k.as_str()) {
                let mut known: Vec<&str> = COMMON_PARAMS.iter().chain(specific).copied().collect();
                known.sort_unstable();
                return Err(format!(
                    "unknown parameter {k:?} for algorithm {} (known: {})",
                    self.algorithm.name(),
                    known.join(", ")
                ));
            }
        }
        for (k, v) in &self.params {
            if !(v.is_number() || v.is_boolean()) {
                return Err(format!("parameter {k:?} must be a number or boolean, got {v}"));
            }
        }
        Ok(())
    }
}

/// How the budget of a run is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Budget {
    /// VM steps (deterministic; the default).
    Steps(u64),
    /// Test executions (deterministic).
    Executions(u64),
}

impl Budget {
    /// Short name of the unit (`steps`, `executions`).
    pub fn unit(&self) -> &'static str {
        match self {
            Budget::Steps(_) => "steps",
            Budget::Executions(_) => "executions",
        }
    }

    /// The amount in its unit.
    pub fn amount(&self) -> u64 {
        match self {
            Budget::Steps(n) | Budget::Executions(n) => *n,
        }
    }
}
