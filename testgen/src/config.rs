//! Algorithm configuration: which search and its parameters.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The search algorithms clowder implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// Random search: random tests, keep those that cover something new.
    Random,
}

impl Algorithm {
    /// Parses an algorithm name as written in experiment files.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name.to_ascii_lowercase().as_str() {
            "random" | "randomsearch" | "random_search" => Ok(Algorithm::Random),
            other => Err(format!("unknown algorithm {other:?} (known: random)")),
        }
    }

    /// Canonical lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Random => "random",
        }
    }
}

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
        let known: &[&str] = match self.algorithm {
            Algorithm::Random => &["min_events", "max_events", "wait_upper_bound", "press_duration", "click_duration"],
        };
        for k in self.params.keys() {
            if !known.contains(&k.as_str()) {
                return Err(format!(
                    "unknown parameter {k:?} for algorithm {} (known: {})",
                    self.algorithm.name(),
                    known.join(", ")
                ));
            }
        }
        for k in known {
            self.int(k, 0)?;
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
