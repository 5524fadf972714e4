//! Mutation analysis (Whisker paper RQ4): first-order mutants of the loaded
//! project ([`operators`]), and the final suite with its regression
//! assertions replayed on each of them ([`analysis`]).
//!
//! A mutant is an edited copy of the [`Project`] model (the VM compiles each
//! copy afresh); everything is deterministic in (project, suite, seed, mode).

pub mod analysis;
pub mod json;
pub mod operators;
mod schedule;

use clowder_vm::project::Project;
use serde::{Deserialize, Serialize};

pub use analysis::{Baseline, KillRow, MutantVerdict, MutationReport, OperatorSummary, TestOutcome, Verdict, analyse};
pub use operators::{Edit, MisfitMutant, Mutant, Operator, enumerate};

use crate::rng::Rng;

/// Whether and how much mutation analysis a run does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum MutationMode {
    /// No mutation analysis.
    #[default]
    Off,
    /// Every mutant.
    All,
    /// At most this many mutants per operator, chosen with the run's seed.
    SamplePerOperator(u32),
}

impl MutationMode {
    /// Parses the worker's form: `off`, `on` (or `all`), `sample:N` (N ≥ 1).
    pub fn parse(s: &str) -> Result<Self, String> {
        let t = s.trim();
        match t {
            "" | "off" => Ok(MutationMode::Off),
            "on" | "all" => Ok(MutationMode::All),
            _ => match t.strip_prefix("sample:").map(|n| n.trim().parse::<u32>()) {
                Some(Ok(n)) if n > 0 => Ok(MutationMode::SamplePerOperator(n)),
                _ => Err(format!("mutation mode {s:?}: expected \"off\", \"on\" or \"sample:N\" with N >= 1")),
            },
        }
    }

    /// The canonical text form (inverse of [`MutationMode::parse`]).
    pub fn as_string(&self) -> String {
        match self {
            MutationMode::Off => "off".into(),
            MutationMode::All => "on".into(),
            MutationMode::SamplePerOperator(n) => format!("sample:{n}"),
        }
    }
}

/// The mutants a run analyses: all of them, or per operator a sample of at
/// most `n` chosen with `seed` (kept in enumeration order). Empty when off.
pub fn select(all: &[Mutant], mode: MutationMode, seed: u64) -> Vec<Mutant> {
    match mode {
        MutationMode::Off => Vec::new(),
        MutationMode::All => all.to_vec(),
        MutationMode::SamplePerOperator(n) => {
            let mut out = Vec::new();
            for op in Operator::ALL {
                let mut idx: Vec<usize> = (0..all.len()).filter(|&i| all[i].operator == op).collect();
                if idx.len() > n as usize {
                    // Partial Fisher-Yates with a stream per operator: sampling one
                    // operator does not shift the choice of another.
                    let mut rng = Rng::new(seed, 0x4D55_5400 + op as u64);
                    for i in 0..n as usize {
                        let j = i + rng.below(idx.len() - i);
                        idx.swap(i, j);
                    }
                    idx.truncate(n as usize);
                    idx.sort_unstable();
                }
                out.extend(idx.into_iter().map(|i| all[i].clone()));
            }
            out
        }
    }
}

/// The mutant program: a copy of `project` with `mutant`'s edit.
///
/// The copy shares nothing mutable with the original; the VM compiles it on
/// first use.
pub fn mutate(project: &Project, mutant: &Mutant) -> Result<Project, MisfitMutant> {
    let mut m = project.clone_for_edit();
    operators::apply_edit(&mut m, &mutant.edit)?;
    Ok(m)
}
