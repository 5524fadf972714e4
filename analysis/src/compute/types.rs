//! What an analysis computes: the per-dataset results (coverage, Table 6, time to full
//! coverage, suite sizes, mutation, sizes, curves, sequence coverage) that the report reads.
//! Plain data; the functions that fill it are in the sibling modules.

use std::collections::BTreeMap;

use super::options::Options;
use crate::curves::Curve;
use crate::estimate::Estimate;
use crate::load::{SEQ_METRICS, Verdicts};
use crate::stats::{Magnitude, PairCounts, Pearson};

/// Coverage summary of one algorithm on one dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct CoverageRow {
    /// Algorithm label.
    pub algorithm: String,
    /// Projects with at least one run with a result.
    pub projects: usize,
    /// Runs with a result (`ok` or `limit`).
    pub runs_ok: usize,
    /// Of those, runs with status `limit` (ended by the per-run work cap).
    pub runs_limit: usize,
    /// Runs with another status.
    pub runs_not_ok: usize,
    /// Mean over projects of the per-project mean coverage.
    pub mean: Option<f64>,
    /// Median over projects of the per-project mean coverage.
    pub median: Option<f64>,
    /// Projects where every successful run reached 100 %.
    pub full_projects: usize,
    /// Per-project mean coverage (sorted by project), for box plots.
    pub per_project: Vec<f64>,
    /// Neatest: mean over projects of the per-project mean reliable coverage (statements
    /// covered on `stable_count` seeds); `None` when no run of the algorithm reports it.
    pub reliable_mean: Option<f64>,
}

/// One project in one comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectComparison {
    /// Project name.
    pub project: String,
    /// Mean coverage of A.
    pub mean_a: f64,
    /// Mean coverage of B.
    pub mean_b: f64,
    /// Pair counts (U, Â12).
    pub counts: PairCounts,
    /// Unadjusted two-sided p.
    pub p: f64,
    /// p used for significance (Holm-adjusted when requested).
    pub p_used: f64,
    /// Magnitude of Â12.
    pub magnitude: Magnitude,
}

/// A project left out of one comparison, with the results each side had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExcludedProject {
    /// Project name.
    pub project: String,
    /// Runs of A with a result.
    pub n_a: usize,
    /// Runs of B with a result.
    pub n_b: usize,
}

/// A Table-6 row: "A vs B" on one dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// First sample.
    pub a: String,
    /// Second sample.
    pub b: String,
    /// Per-project results (sorted by project).
    pub projects: Vec<ProjectComparison>,
    /// Projects excluded under the [`Incomplete`](super::options::Incomplete) rule in use (sorted
    /// by project).
    pub excluded: Vec<ExcludedProject>,
    /// Mean Â12 over compared projects.
    pub mean_a12: Option<f64>,
    /// Â12 > 0.5 and p < alpha.
    pub sig_better: usize,
    /// Â12 > 0.5.
    pub better: usize,
    /// Â12 = 0.5 exactly.
    pub equal: usize,
    /// Â12 < 0.5.
    pub worse: usize,
    /// Â12 < 0.5 and p < alpha.
    pub sig_worse: usize,
}

/// Why a (project, algorithm) lacks a result for some expected seed.
#[derive(Debug, Clone, PartialEq)]
pub struct Exclusion {
    /// Project.
    pub project: String,
    /// Algorithm.
    pub algorithm: String,
    /// Runs with a result (`ok` or `limit`) in this cell.
    pub results: usize,
    /// Reason.
    pub reason: String,
}

/// How often and how fast an algorithm reaches full coverage.
#[derive(Debug, Clone, PartialEq)]
pub struct FullCoverageRow {
    /// Algorithm.
    pub algorithm: String,
    /// Successful runs.
    pub runs_ok: usize,
    /// Runs that covered every target.
    pub reached: usize,
    /// Mean steps to full coverage over the runs that reached it.
    pub mean_steps: Option<f64>,
    /// Median steps to full coverage.
    pub median_steps: Option<f64>,
}

/// Suite sizes on projects where all algorithms reach equal coverage.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SuiteSize {
    /// Projects where every successful run of every algorithm has the same coverage.
    pub projects: usize,
    /// Per algorithm: (label, mean tests, median tests, mean events, median events), over the
    /// per-project means.
    pub rows: Vec<SuiteSizeRow>,
    /// Per comparison on these projects: Â12 of the suite size (events, else tests).
    pub comparisons: Vec<SizeComparison>,
}

/// Suite size of one algorithm.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteSizeRow {
    /// Algorithm.
    pub algorithm: String,
    /// Mean tests after minimisation.
    pub mean_tests: Option<f64>,
    /// Median tests after minimisation.
    pub median_tests: Option<f64>,
    /// Mean events after minimisation.
    pub mean_events: Option<f64>,
    /// Median events after minimisation.
    pub median_events: Option<f64>,
}

/// Â12 of suite sizes for one comparison (smaller is better: Â12 < 0.5 means A is smaller).
#[derive(Debug, Clone, PartialEq)]
pub struct SizeComparison {
    /// First sample.
    pub a: String,
    /// Second sample.
    pub b: String,
    /// What was compared (`events` or `tests`).
    pub measure: &'static str,
    /// Projects compared.
    pub projects: usize,
    /// Mean Â12.
    pub mean_a12: Option<f64>,
    /// Projects where A's suites are larger (Â12 > 0.5).
    pub larger: usize,
    /// Â12 = 0.5.
    pub equal: usize,
    /// Projects where A's suites are smaller.
    pub smaller: usize,
}

/// Mutation analysis of one algorithm.
#[derive(Debug, Clone, PartialEq)]
pub struct MutationRow {
    /// Algorithm.
    pub algorithm: String,
    /// Runs with mutation data.
    pub runs: usize,
    /// Verdicts summed over runs (as analysed: a sample when the study sampled).
    pub verdicts: Verdicts,
    /// Score pooled over all mutants (the paper's headline aggregate): exact when every
    /// mutant was analysed, else the stratified estimate with its 95 % interval.
    pub pooled: Option<Estimate>,
    /// Mean over projects of the per-project mean run score (each run's score estimated
    /// the same way).
    pub mean_project_score: Option<f64>,
}

/// Mutation score of one algorithm for one operator.
#[derive(Debug, Clone, PartialEq)]
pub struct OperatorRow {
    /// Algorithm.
    pub algorithm: String,
    /// Operator.
    pub operator: String,
    /// Verdicts summed over runs (as analysed).
    pub verdicts: Verdicts,
    /// Pooled score of this operator's mutants (estimate and interval when sampled).
    pub pooled: Option<Estimate>,
    /// Mean over projects of the per-project mean run score for this operator.
    pub mean_project_score: Option<f64>,
}

/// Correlation between project size and coverage for one algorithm.
#[derive(Debug, Clone, PartialEq)]
pub struct CorrelationRow {
    /// Algorithm.
    pub algorithm: String,
    /// Pearson r, p, n (None if undefined).
    pub pearson: Option<Pearson>,
}

/// Where the time to full coverage came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FullCoverageSource {
    /// `steps_to_full_coverage` in runs.
    Column,
    /// First timeline point with covered = total.
    Timeline,
    /// Only whether it was reached (coverage = 1); no times.
    CoverageOnly,
}

/// Everything computed for one dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetAnalysis {
    /// Dataset name.
    pub name: String,
    /// Algorithms with runs in this dataset (sorted).
    pub algorithms: Vec<String>,
    /// Projects in this dataset.
    pub projects: usize,
    /// Runs by status.
    pub statuses: BTreeMap<String, usize>,
    /// Coverage per algorithm.
    pub coverage: Vec<CoverageRow>,
    /// Table-6 rows.
    pub comparisons: Vec<Comparison>,
    /// Comparisons asked for that cannot be made here (an algorithm has no runs).
    pub skipped_comparisons: Vec<String>,
    /// Incomplete (project, algorithm) cells.
    pub exclusions: Vec<Exclusion>,
    /// Time to full coverage per algorithm.
    pub full_coverage: Vec<FullCoverageRow>,
    /// Source of the full-coverage times.
    pub full_coverage_source: FullCoverageSource,
    /// Suite sizes on equal-coverage projects.
    pub suite_size: SuiteSize,
    /// Mutation analysis per algorithm (empty when no mutation data).
    pub mutation: Vec<MutationRow>,
    /// Mutation per operator (empty without `mutants`).
    pub operators: Vec<OperatorRow>,
    /// Project sizes (total targets), sorted by project.
    pub sizes: Vec<(String, u64)>,
    /// Size vs coverage correlation per algorithm.
    pub correlations: Vec<CorrelationRow>,
    /// Coverage over time per algorithm (empty without timeline).
    pub curves: Vec<Curve>,
    /// Event-sequence coverage (`None` when the runs have no sequence values).
    pub sequence: Option<SequenceAnalysis>,
}

/// The whole analysis.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// Options used.
    pub options: Options,
    /// Per dataset.
    pub datasets: Vec<DatasetAnalysis>,
    /// Last grid point of the coverage-over-time grid, in steps (0 without timeline).
    pub grid_end: u64,
    /// Which optional inputs were present: suite sizes, mutation.
    pub has_tests: bool,
    /// `events_after_min` present.
    pub has_events: bool,
}

/// Mean sequence coverage of one algorithm.
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceRow {
    /// Algorithm.
    pub algorithm: String,
    /// Projects with sequence values.
    pub projects: usize,
    /// Runs with a result and sequence values.
    pub runs: usize,
    /// Per [`SEQ_METRICS`] column: mean over projects of the project's mean.
    pub means: [Option<f64>; SEQ_METRICS.len()],
}

/// Table 6 on one criterion.
#[derive(Debug, Clone, PartialEq)]
pub struct CriterionComparisons {
    /// The [`SEQ_METRICS`] column compared.
    pub metric: &'static str,
    /// One row per comparison, as for coverage.
    pub comparisons: Vec<Comparison>,
}

/// Pearson correlation of a criterion with the mutation score over projects (each a pair of
/// per-project means over the runs that have both), for one algorithm.
#[derive(Debug, Clone, PartialEq)]
pub struct MutationCorrelation {
    /// Algorithm.
    pub algorithm: String,
    /// One of [`CRITERIA`](super::sequence::CRITERIA).
    pub criterion: &'static str,
    /// r, p, n (`None` when undefined: fewer than 3 projects or a constant side).
    pub pearson: Option<Pearson>,
}

/// Sequence coverage of one dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceAnalysis {
    /// Per algorithm.
    pub rows: Vec<SequenceRow>,
    /// Table 6 per criterion (every [`SEQ_METRICS`] column).
    pub table6: Vec<CriterionComparisons>,
    /// Per algorithm and criterion (empty without mutation data).
    pub correlations: Vec<MutationCorrelation>,
}
