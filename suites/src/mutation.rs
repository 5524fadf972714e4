//! Mutation score of a hand-written suite: the suite on every mutant of a project, with
//! testgen's operators and verdicts (`docs/mutation.md`), so a study compares hand-written
//! and generated suites on the same mutants.
//!
//! * A test that does not pass on the original is excluded (as in testgen); with every test
//!   excluded, every mutant is `excluded`.
//! * **killed**: a remaining test fails or errs on the mutant (an assertion, a constraint,
//!   an exception); the first such test is named.
//! * **timeout**: not killed, and a remaining test ran into a limit (its step limit or the
//!   VM's work cap) on the mutant.
//! * **survived**: otherwise; a test whose assumption no longer holds (`skip`) does not kill.

use std::sync::Arc;

use clowder_testgen::mutation::{
    self, MutantVerdict, MutationMode, MutationReport, Operator, OperatorSummary, Verdict,
};
use clowder_vm::Project;

use crate::{Limits, ProjectResult, Status, Suite, run_project};

/// The suite's results on the original and the mutation report.
#[derive(Debug, Clone)]
pub struct SuiteMutation {
    /// The suite on the unmutated project.
    pub original: ProjectResult,
    /// Verdicts and scores, overall and per operator.
    pub report: MutationReport,
}

/// Runs `suite` on the original and on the mutants `mode` selects, `workers` mutants at a
/// time. The verdicts do not depend on `workers`.
pub fn analyse(
    suite: &Suite,
    project: &Arc<Project>,
    name: &str,
    seed: u64,
    limits: &Limits,
    mode: MutationMode,
    workers: usize,
) -> SuiteMutation {
    let original = run_project(suite, project, name, seed, limits);
    let included: Vec<usize> =
        original.rows.iter().enumerate().filter(|(_, r)| r.status == Status::Pass).map(|(i, _)| i).collect();
    let all = mutation::enumerate(project);
    let chosen = mutation::select(&all, mode, seed);
    let verdicts: Vec<MutantVerdict> = crate::parallel::map(&chosen, workers.max(1), |m| {
        let verdict = |v: Verdict, test: Option<u32>| MutantVerdict {
            mutant_id: m.id.clone(),
            operator: m.operator,
            block_id: m.block_id.clone(),
            detail: m.detail.clone(),
            verdict: v,
            test,
            event: None,
        };
        if included.is_empty() {
            return verdict(Verdict::Excluded, None);
        }
        let mutant = match mutation::mutate(project, m) {
            Ok(p) => Arc::new(p),
            // A mutant that cannot be built changes nothing the suite could see.
            Err(_) => return verdict(Verdict::Survived, None),
        };
        judge(suite, &mutant, name, seed, limits, &included, verdict)
    });
    let mut per_operator: Vec<OperatorSummary> = Operator::ALL
        .iter()
        .map(|&op| OperatorSummary {
            operator: Some(op),
            enumerated: all.iter().filter(|m| m.operator == op).count() as u32,
            ..OperatorSummary::default()
        })
        .collect();
    let mut total = OperatorSummary { operator: None, enumerated: all.len() as u32, ..OperatorSummary::default() };
    for v in &verdicts {
        for s in per_operator.iter_mut().filter(|s| s.operator == Some(v.operator)).chain(std::iter::once(&mut total)) {
            s.generated += 1;
            match v.verdict {
                Verdict::Killed => s.killed += 1,
                Verdict::Survived => s.survived += 1,
                Verdict::Timeout => s.timeout += 1,
                Verdict::Excluded => s.excluded += 1,
            }
        }
    }
    let steps = original.rows.iter().map(|r| r.steps).sum();
    let report = MutationReport {
        mode: mode.as_string(),
        enumerated: all.len() as u32,
        excluded_tests: (original.rows.len() - included.len()) as u32,
        total,
        per_operator,
        verdicts,
        steps,
        unjudged: 0,
    };
    SuiteMutation { original, report }
}

/// The verdict of one mutant: the included tests in order until one kills it.
fn judge(
    suite: &Suite,
    mutant: &Arc<Project>,
    name: &str,
    seed: u64,
    limits: &Limits,
    included: &[usize],
    verdict: impl Fn(Verdict, Option<u32>) -> MutantVerdict,
) -> MutantVerdict {
    let mut ran_away = false;
    let mut run = crate::FileRun::new(suite, mutant, name, seed, limits);
    // Under Whisker's shared VM every earlier test shapes a test's start, so all run in order.
    let order: Vec<usize> = match limits.between_tests {
        crate::BetweenTests::Whisker => (0..suite.tests.len()).collect(),
        crate::BetweenTests::Fresh => included.to_vec(),
    };
    for i in order {
        let row = run.test(i);
        if !included.contains(&i) {
            continue;
        }
        match row.status {
            Status::Fail | Status::Error if row.timed_out => ran_away = true,
            Status::Fail | Status::Error => return verdict(Verdict::Killed, Some(i as u32)),
            Status::Pass | Status::Skip => {}
        }
    }
    verdict(if ran_away { Verdict::Timeout } else { Verdict::Survived }, None)
}
