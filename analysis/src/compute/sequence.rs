//! Event-sequence coverage of the suites (issue 20; the criteria are defined in
//! `docs/testgen.md` "Sequence coverage", the columns in `docs/exports.md`): per algorithm the
//! mean of each criterion, Table 6 on each criterion, and how each criterion of the final suite
//! correlates with the mutation score, next to statement coverage.
//!
//! Units as everywhere in the analysis: a project's value is the mean over its runs, an
//! algorithm's the mean over projects; comparisons are per project over seeds (Â12 and
//! Mann-Whitney: the Table 6 of [`compare`], with the same `--incomplete` rule). The tables are
//! built by the report's `sequence` module.

use std::collections::{BTreeMap, BTreeSet};

use super::cells::Cell;
use super::compare::compare;
use super::mutation::run_score;
use super::options::Options;
// Re-exported: `crate::sequence` keeps these at their old public path.
pub use super::types::{CriterionComparisons, MutationCorrelation, SequenceAnalysis, SequenceRow};
use crate::error::AnalysisError;
use crate::load::{Results, Run, SEQ_METRICS};
use crate::stats;

/// The criteria correlated with the mutation score: statement coverage and the sequence
/// criteria of the final suite (the suite that mutation analysis runs; the unminimised
/// suite's values describe another suite).
pub const CRITERIA: [&str; 5] = ["coverage", "seq_kh2", "seq_kh3", "seq_win2", "seq_win3"];

fn value(r: &Run, metric: &str) -> Option<f64> {
    if metric == "coverage" {
        return r.coverage;
    }
    SEQ_METRICS.iter().position(|m| *m == metric).and_then(|k| r.seq[k])
}

/// Sequence coverage of a dataset whose coverage cells are `cells`; `None` when no run has
/// sequence values (exports made before they existed).
pub(crate) fn analyze(
    res: &Results,
    options: &Options,
    cells: &BTreeMap<(u32, u32), Cell>,
    projects: &BTreeSet<u32>,
    algs: &BTreeSet<u32>,
    pairs: &[(u32, u32)],
) -> Result<Option<SequenceAnalysis>, AnalysisError> {
    let runs = &res.runs;
    let results = |c: &Cell| c.range.clone().filter(|&i| runs[i].has_result());
    if !cells.values().any(|c| results(c).any(|i| runs[i].seq.iter().any(Option::is_some))) {
        return Ok(None);
    }
    let alg_name = |a: u32| res.algorithms[a as usize].clone();
    let mut rows = Vec::new();
    for &a in algs {
        let mut per_metric: Vec<Vec<f64>> = vec![Vec::new(); SEQ_METRICS.len()];
        let (mut n_runs, mut n_projects) = (0, 0);
        for &p in projects {
            let Some(c) = cells.get(&(p, a)) else { continue };
            let with: Vec<&Run> = results(c).map(|i| &runs[i]).filter(|r| r.seq[0].is_some()).collect();
            n_runs += with.len();
            n_projects += usize::from(!with.is_empty());
            for (k, m) in per_metric.iter_mut().enumerate() {
                let v: Vec<f64> = results(c).filter_map(|i| runs[i].seq[k]).collect();
                m.extend(stats::mean(&v));
            }
        }
        rows.push(SequenceRow {
            algorithm: alg_name(a),
            projects: n_projects,
            runs: n_runs,
            means: std::array::from_fn(|k| stats::mean(&per_metric[k])),
        });
    }
    let mut table6 = Vec::new();
    for (k, metric) in SEQ_METRICS.iter().enumerate() {
        // A project's cell is complete for a criterion when it is for coverage and every run
        // with a result has the criterion's value.
        let metric_cells: BTreeMap<(u32, u32), Cell> = cells
            .iter()
            .map(|(&key, c)| {
                let values: Vec<f64> = results(c).filter_map(|i| runs[i].seq[k]).collect();
                let complete = c.complete && values.len() == c.values.len();
                (key, Cell { range: c.range.clone(), values, complete })
            })
            .collect();
        let mut comparisons = Vec::new();
        for &(ia, ib) in pairs {
            let (a, b) = (alg_name(ia), alg_name(ib));
            comparisons.push(compare(options, &metric_cells, projects, ia, ib, &a, &b, &res.projects)?);
        }
        table6.push(CriterionComparisons { metric, comparisons });
    }
    let mut correlations = Vec::new();
    for &a in algs {
        for criterion in CRITERIA {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            for &p in projects {
                let Some(c) = cells.get(&(p, a)) else { continue };
                let both: Vec<(f64, f64)> =
                    results(c).filter_map(|i| Some((value(&runs[i], criterion)?, run_score(res, i)?))).collect();
                let (xs, ys): (Vec<f64>, Vec<f64>) = both.into_iter().unzip();
                if let (Some(mx), Some(my)) = (stats::mean(&xs), stats::mean(&ys)) {
                    x.push(mx);
                    y.push(my);
                }
            }
            if !x.is_empty() {
                correlations.push(MutationCorrelation {
                    algorithm: alg_name(a),
                    criterion,
                    pearson: stats::pearson(&x, &y),
                });
            }
        }
    }
    Ok(Some(SequenceAnalysis { rows, table6, correlations }))
}
