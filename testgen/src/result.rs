//! What a run produces: coverage, timeline, suite, digest.

use serde::{Deserialize, Serialize};

use crate::assertions::Assertion;
use crate::events::Event;

/// A coverage change point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// VM steps used by the run so far (30 steps = one Scratch second).
    pub steps: u64,
    /// Test executions so far, counting the one that covered something.
    pub executions: u64,
    /// Targets covered.
    pub covered: u32,
}

/// One generated test: the green flag, then `events`, each followed by a one-step wait.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Test {
    /// Events after the initial green flag.
    pub events: Vec<Event>,
    /// Regression assertions checked after each event (parallel to `events`;
    /// empty when the suite has no assertions). See [`crate::assertions`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assertions: Vec<Vec<Assertion>>,
}

/// The outcome of one generation run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunOutcome {
    /// Covered / total targets (1.0 for a project without targets).
    pub coverage: f64,
    /// Targets covered.
    pub covered: u32,
    /// Targets in the project.
    pub total_targets: u32,
    /// VM steps used by the search.
    pub steps: u64,
    /// Test executions of the search.
    pub executions: u64,
    /// Fitness evaluations of the search.
    pub evaluations: u64,
    /// Coverage change points (starting at 0 covered).
    pub timeline: Vec<TimelinePoint>,
    /// The final test suite (after minimisation when enabled).
    pub suite: Vec<Test>,
    /// Tests in the suite before minimisation.
    pub tests_before_min: u32,
    /// Tests after minimisation.
    pub tests_after_min: u32,
    /// Events (not counting the automatic one-step waits) before minimisation.
    pub events_before_min: u32,
    /// Events after minimisation.
    pub events_after_min: u32,
    /// Steps until full coverage, if reached.
    pub steps_to_full_coverage: Option<u64>,
    /// Each covered target (block index in the project) with the step it was
    /// first covered at, in order of coverage.
    pub first_covered: Vec<(u32, u64)>,
    /// VM steps spent replaying tests for minimisation (not part of the budget).
    pub minimization_steps: u64,
    /// `none`, `approximate` or `exact`.
    pub geometry: String,
    /// False for wall-clock budgets.
    pub reproducible: bool,
    /// Opcodes the VM did not implement, with counts.
    pub unknown_opcodes: Vec<(String, u64)>,
    /// blake3 over timeline and suite (and the mutation verdicts when
    /// mutation analysis ran): equal digests mean equal runs.
    pub digest: String,
    /// Mutation analysis of the final suite, when requested ([`crate::generate_with`]).
    #[serde(default)]
    pub mutation: Option<crate::mutation::MutationReport>,
    /// Everything the run did, in work-meter units ([`crate::work`], about nanoseconds; the
    /// units of the work cap, [`crate::RunOptions::work_cap`]): generation (search,
    /// minimisation, assertions) and, when it ran, mutation analysis.
    #[serde(default)]
    pub work: u64,
    /// [`RunOutcome::work`] by kind (`vm`, `eval`, `geometry`, `scheduler`, `start`, `step`, `extraction`, `fitness`,
    /// `search`, `observe`, `mutants`).
    #[serde(default)]
    pub work_by_kind: Vec<(String, u64)>,
    /// The part of [`RunOutcome::work`] done by mutation analysis.
    #[serde(default)]
    pub mutation_work: u64,
    /// The phase (`search`, `minimisation`, `assertions`) in which the work cap stopped the
    /// run, if it did: the result is then partial, and the same on every machine.
    #[serde(default)]
    pub limit: Option<String>,
    /// Size of the run's event alphabet Σ for sequence coverage: the symbols of every test
    /// the search executed ([`crate::sequence`]). `None` in results written before sequence
    /// coverage existed (their `seq_*` values are then 0 and mean nothing).
    #[serde(default)]
    pub seq_alphabet: Option<u32>,
    /// Kuhn–Higdon 2-way sequence coverage of the final suite: ordered pairs of distinct
    /// symbols of Σ occurring as a subsequence of some test, over `|Σ|·(|Σ|−1)` (1.0 when
    /// that is 0). Not part of the digest, like the other `seq_*` values.
    #[serde(default)]
    pub seq_kh2: f64,
    /// Kuhn–Higdon 3-way sequence coverage of the final suite (over `|Σ|·(|Σ|−1)·(|Σ|−2)`).
    #[serde(default)]
    pub seq_kh3: f64,
    /// Window coverage Σ\*wΣ\* of the final suite, t = 2: words of 2 symbols occurring
    /// contiguously in some test, over `|Σ|²` (1.0 when Σ is empty).
    #[serde(default)]
    pub seq_win2: f64,
    /// Window coverage of the final suite, t = 3 (over `|Σ|³`).
    #[serde(default)]
    pub seq_win3: f64,
    /// [`RunOutcome::seq_kh2`] of the suite before minimisation (the archive), same Σ.
    #[serde(default)]
    pub seq_kh2_unmin: f64,
    /// [`RunOutcome::seq_kh3`] before minimisation.
    #[serde(default)]
    pub seq_kh3_unmin: f64,
    /// [`RunOutcome::seq_win2`] before minimisation.
    #[serde(default)]
    pub seq_win2_unmin: f64,
    /// [`RunOutcome::seq_win3`] before minimisation.
    #[serde(default)]
    pub seq_win3_unmin: f64,
    /// Neatest: statements covered on `stable_count` seeds ("reliable coverage").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reliable_covered: Option<u32>,
    /// Neatest: the dynamic suite (Whisker's JSON format: the networks of the archive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_suite: Option<String>,
}

/// The digest of a run: hash of its timeline and its suite (canonical JSON).
pub fn digest(timeline: &[TimelinePoint], suite: &[Test]) -> String {
    let mut h = blake3::Hasher::new();
    h.update(b"clowder-digest-v2\0");
    h.update(serde_json::to_string(timeline).unwrap_or_default().as_bytes());
    h.update(b"\0");
    h.update(serde_json::to_string(suite).unwrap_or_default().as_bytes());
    h.finalize().to_hex().to_string()
}

/// Coverage at each point of `grid` (steps), carrying the last change point forward.
pub fn resample(timeline: &[TimelinePoint], grid: &[u64]) -> Vec<u32> {
    let mut out = Vec::with_capacity(grid.len());
    let mut i = 0;
    let mut cur = 0;
    for &g in grid {
        while i < timeline.len() && timeline[i].steps <= g {
            cur = timeline[i].covered;
            i += 1;
        }
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resampling_carries_forward() {
        let t = [
            TimelinePoint { steps: 0, executions: 0, covered: 0 },
            TimelinePoint { steps: 5, executions: 1, covered: 3 },
            TimelinePoint { steps: 40, executions: 2, covered: 4 },
        ];
        assert_eq!(resample(&t, &[0, 4, 5, 30, 60]), vec![0, 0, 3, 3, 4]);
    }
}
