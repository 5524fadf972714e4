//! Whisker-style test generation on clowder's VM.
//!
//! [`generate`] is the one entry point the worker and `clowder gen` call: it
//! runs an algorithm on a project with a seed and a budget and returns the
//! coverage timeline, the suite and a digest. Everything is deterministic in
//! (project bytes, configuration, seed, budget).

#![warn(missing_docs)]

pub mod config;
pub mod events;
pub mod execution;
mod random_search;
pub mod result;
pub mod targets;

use std::sync::Arc;

use clowder_vm::Project;

pub use config::{Algorithm, AlgorithmConfig, Budget};
pub use result::{RunOutcome, Test, TimelinePoint};

/// Why a run could not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// The configuration is invalid (deterministic: retrying will not help).
    #[error("invalid configuration: {0}")]
    Config(String),
}

/// Runs test generation on `project` and returns its outcome.
///
/// `on_progress` sees every coverage change point as it happens (the worker
/// streams them to the coordinator).
pub fn generate(
    project: Arc<Project>,
    cfg: &AlgorithmConfig,
    seed: u64,
    budget: Budget,
    on_progress: &mut dyn FnMut(&TimelinePoint),
) -> Result<RunOutcome, GenError> {
    cfg.validate().map_err(GenError::Config)?;
    let targets = targets::statement_targets(&project);
    let space = events::EventSpace::extract(&project);
    let mut exec = execution::Executor::new(Arc::clone(&project), &targets, seed, budget);
    let suite = match cfg.algorithm {
        Algorithm::Random => random_search::run(cfg, seed, &mut exec, &space, on_progress).map_err(GenError::Config)?,
        Algorithm::Mosa | Algorithm::Mio => {
            return Err(GenError::Config(format!("{} is not implemented yet", cfg.algorithm.name())));
        }
    };
    let unknown = exec.unknown_opcodes();
    let timeline = exec.timeline().to_vec();
    let total = exec.total_targets();
    let covered = exec.covered();
    Ok(RunOutcome {
        coverage: if total == 0 { 1.0 } else { f64::from(covered) / f64::from(total) },
        covered,
        total_targets: total,
        steps: exec.steps(),
        executions: exec.executions(),
        digest: result::digest(&timeline, &suite),
        timeline,
        suite,
        steps_to_full_coverage: exec.steps_to_full_coverage(),
        geometry: "none".into(),
        unknown_opcodes: unknown,
    })
}
