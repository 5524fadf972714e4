//! The analysis proper: per dataset, coverage summaries, Table-6 comparisons, time to full
//! coverage, suite sizes, mutation scores, project sizes and coverage over time.
//!
//! Everything iterates in sorted order (datasets, projects, algorithms, seeds), so the same
//! input gives the same numbers in the same order.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use crate::AnalysisError;
use crate::curves::{self, Curve, Grid};
use crate::estimate::{self, Estimate, Stratum};
use crate::load::{Results, Run, Verdicts};
use crate::sequence::{self, SequenceAnalysis};
use crate::stats::{self, Magnitude, PMethod, PairCounts, Thresholds};

/// What to compute and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Significance level (p < alpha is significant).
    pub alpha: f64,
    /// Comparisons "A vs B" to make; empty = every pair, alphabetical (A < B).
    pub compare: Vec<(String, String)>,
    /// How p-values are computed.
    pub p_method: PMethod,
    /// Holm-adjust the p-values of each comparison across its projects.
    pub holm: bool,
    /// Magnitude thresholds for Â12.
    pub thresholds: Thresholds,
    /// Grid for coverage over time.
    pub grid: Grid,
    /// Which projects enter a comparison when some runs failed or are missing.
    pub incomplete: Incomplete,
}

/// Rule for projects whose repetitions are incomplete (failed or missing runs), `--incomplete`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Incomplete {
    /// A project enters "A vs B" only when every expected seed of A and of B has a result.
    #[default]
    Exclude,
    /// Test the runs that exist (unequal sample sizes); projects with fewer than
    /// [`MIN_RUNS_COMPARED`] results on a side are excluded.
    Compare,
}

/// Fewest results per side for a project to be compared under [`Incomplete::Compare`]: a single
/// run says nothing about an algorithm's spread over seeds.
pub const MIN_RUNS_COMPARED: usize = 2;

impl Incomplete {
    /// Option value (`exclude`, `compare`).
    pub fn name(self) -> &'static str {
        match self {
            Incomplete::Exclude => "exclude",
            Incomplete::Compare => "compare",
        }
    }

    /// The rule in words, as stated in reports.
    pub fn describe(self) -> String {
        match self {
            Incomplete::Exclude => "`--incomplete exclude`: a project enters a comparison only if both \
                configurations have a result for every seed that configuration has in the dataset; other \
                projects are excluded and counted (Excluded)"
                .into(),
            Incomplete::Compare => format!(
                "`--incomplete compare`: a project enters a comparison with whatever results exist for A and \
                 for B (unequal sample sizes, as scipy and R allow; n A and n B per project in `pairs.csv`); \
                 projects with fewer than {MIN_RUNS_COMPARED} results on a side are excluded and counted \
                 (Excluded)"
            ),
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            alpha: 0.05,
            compare: Vec::new(),
            p_method: PMethod::Asymptotic,
            holm: false,
            thresholds: Thresholds::VarghaDelaney,
            grid: Grid::default(),
            incomplete: Incomplete::Exclude,
        }
    }
}

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
    /// Projects excluded under the [`Incomplete`] rule in use (sorted by project).
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
    pub pearson: Option<stats::Pearson>,
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

/// Runs of one (dataset, project, algorithm) as a range into `Results::runs`.
#[derive(Debug, Clone)]
struct Group {
    dataset: u32,
    project: u32,
    algorithm: u32,
    range: Range<usize>,
}

fn groups(res: &Results) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for (i, r) in res.runs.iter().enumerate() {
        match out.last_mut() {
            Some(g) if (g.dataset, g.project, g.algorithm) == (r.dataset, r.project, r.algorithm) => {
                g.range.end = i + 1
            }
            _ => out.push(Group { dataset: r.dataset, project: r.project, algorithm: r.algorithm, range: i..i + 1 }),
        }
    }
    out
}

/// Per (project, algorithm) state within a dataset.
#[derive(Debug, Clone)]
pub(crate) struct Cell {
    /// The runs of the cell in `Results::runs`.
    pub(crate) range: Range<usize>,
    /// Coverage (or the compared measure) of the runs with a result (`ok` or `limit`), in
    /// seed order.
    pub(crate) values: Vec<f64>,
    /// Every expected seed has a result.
    pub(crate) complete: bool,
}

/// Runs the analysis.
pub fn analyze(res: &Results, options: &Options) -> Result<Analysis, AnalysisError> {
    if !(options.alpha > 0.0 && options.alpha < 1.0) {
        return Err(AnalysisError::Options(format!("alpha must be in (0, 1), got {}", options.alpha)));
    }
    for (a, b) in &options.compare {
        for name in [a, b] {
            if !res.algorithms.contains(name) {
                return Err(AnalysisError::Options(format!(
                    "--compare: unknown algorithm {name:?} (known: {})",
                    res.algorithms.join(", ")
                )));
            }
        }
        if a == b {
            return Err(AnalysisError::Options(format!("--compare: {a} vs itself")));
        }
    }
    let file_missing = |c: &str| res.files.first().is_some_and(|f| f.missing.iter().any(|m| m == c));
    let has_tests = !file_missing("tests_after_min");
    let has_events = !file_missing("events_after_min");
    let has_to_full = !file_missing("steps_to_full_coverage");
    let grid_end = curves::grid_end(res);
    let all = groups(res);
    let mut datasets = Vec::new();
    for (di, name) in res.datasets.iter().enumerate() {
        let gs: Vec<&Group> = all.iter().filter(|g| g.dataset == di as u32).collect();
        if gs.is_empty() {
            continue;
        }
        datasets.push(analyze_dataset(res, options, name, &gs, has_to_full, grid_end)?);
    }
    Ok(Analysis { options: options.clone(), datasets, grid_end, has_tests, has_events })
}

fn analyze_dataset(
    res: &Results,
    options: &Options,
    name: &str,
    gs: &[&Group],
    has_to_full: bool,
    grid_end: u64,
) -> Result<DatasetAnalysis, AnalysisError> {
    let runs = &res.runs;
    let alg_ids: BTreeSet<u32> = gs.iter().map(|g| g.algorithm).collect();
    let project_ids: BTreeSet<u32> = gs.iter().map(|g| g.project).collect();
    let alg_name = |a: u32| res.algorithms[a as usize].clone();
    let proj_name = |p: u32| res.projects[p as usize].clone();
    let mut statuses = BTreeMap::new();
    for g in gs {
        for r in &runs[g.range.clone()] {
            *statuses.entry(r.status.clone()).or_insert(0) += 1;
        }
    }
    // Seeds expected for an algorithm: every seed it has in this dataset.
    let mut expected: BTreeMap<u32, BTreeSet<u64>> = BTreeMap::new();
    for g in gs {
        expected.entry(g.algorithm).or_default().extend(runs[g.range.clone()].iter().map(|r| r.seed));
    }
    let mut cells: BTreeMap<(u32, u32), Cell> = BTreeMap::new();
    let mut exclusions = Vec::new();
    for g in gs {
        let rs = &runs[g.range.clone()];
        let with_result: Vec<&Run> = rs.iter().filter(|r| r.has_result()).collect();
        let exp = &expected[&g.algorithm];
        let result_seeds: BTreeSet<u64> = with_result.iter().map(|r| r.seed).collect();
        let complete = result_seeds == *exp;
        // The loader marks result runs without coverage as failed, so none is dropped here.
        let values: Vec<f64> = with_result.iter().filter_map(|r| r.coverage).collect();
        if !complete {
            exclusions.push(Exclusion {
                project: proj_name(g.project),
                algorithm: alg_name(g.algorithm),
                results: values.len(),
                reason: incomplete_reason(rs, exp),
            });
        }
        cells.insert((g.project, g.algorithm), Cell { range: g.range.clone(), values, complete });
    }
    for &p in &project_ids {
        for &a in &alg_ids {
            if !cells.contains_key(&(p, a)) {
                exclusions.push(Exclusion {
                    project: proj_name(p),
                    algorithm: alg_name(a),
                    results: 0,
                    reason: "no runs".into(),
                });
            }
        }
    }
    exclusions.sort_by(|x, y| (&x.project, &x.algorithm).cmp(&(&y.project, &y.algorithm)));

    // Coverage per algorithm (projects are the unit: per-project means).
    let mut coverage = Vec::new();
    for &a in &alg_ids {
        let mut per_project = Vec::new();
        let (mut runs_ok, mut runs_limit, mut runs_not_ok, mut full_projects) = (0, 0, 0, 0);
        for &p in &project_ids {
            let Some(c) = cells.get(&(p, a)) else { continue };
            runs_ok += c.values.len();
            runs_limit += runs[c.range.clone()].iter().filter(|r| r.is_limit()).count();
            runs_not_ok += c.range.len() - c.values.len();
            if let Some(m) = stats::mean(&c.values) {
                per_project.push(m);
                if c.values.iter().all(|&v| v == 1.0) {
                    full_projects += 1;
                }
            }
        }
        coverage.push(CoverageRow {
            algorithm: alg_name(a),
            projects: per_project.len(),
            runs_ok,
            runs_limit,
            runs_not_ok,
            mean: stats::mean(&per_project),
            median: stats::median(&per_project),
            full_projects,
            per_project,
        });
    }

    // Comparisons.
    let pairs: Vec<(String, String)> = if options.compare.is_empty() {
        let names: Vec<String> = alg_ids.iter().map(|&a| alg_name(a)).collect();
        let mut v = Vec::new();
        for i in 0..names.len() {
            for j in i + 1..names.len() {
                v.push((names[i].clone(), names[j].clone()));
            }
        }
        v
    } else {
        options.compare.clone()
    };
    let alg_id = |n: &str| res.algorithms.iter().position(|x| x == n).map(|i| i as u32);
    let mut comparisons = Vec::new();
    let mut skipped_comparisons = Vec::new();
    let mut compared = Vec::new();
    for (a, b) in &pairs {
        let (Some(ia), Some(ib)) = (alg_id(a), alg_id(b)) else { continue };
        if !alg_ids.contains(&ia) || !alg_ids.contains(&ib) {
            skipped_comparisons.push(format!("{a} vs {b}"));
            continue;
        }
        comparisons.push(compare(options, &cells, &project_ids, ia, ib, a, b, &res.projects)?);
        compared.push((ia, ib));
    }

    // Time to full coverage.
    let source = if has_to_full {
        FullCoverageSource::Column
    } else if res.timeline.is_some() {
        FullCoverageSource::Timeline
    } else {
        FullCoverageSource::CoverageOnly
    };
    let mut full_coverage = Vec::new();
    for &a in &alg_ids {
        let mut times = Vec::new();
        let (mut runs_ok, mut reached) = (0, 0);
        for &p in &project_ids {
            let Some(c) = cells.get(&(p, a)) else { continue };
            for (i, r) in runs[c.range.clone()].iter().enumerate().filter(|(_, r)| r.has_result()) {
                runs_ok += 1;
                let t = match source {
                    FullCoverageSource::Column => r.steps_to_full_coverage,
                    FullCoverageSource::Timeline => timeline_full_at(res, c.range.start + i, r),
                    FullCoverageSource::CoverageOnly => None,
                };
                let hit = match source {
                    FullCoverageSource::CoverageOnly => r.coverage == Some(1.0),
                    _ => t.is_some(),
                };
                if hit {
                    reached += 1;
                }
                if let Some(t) = t {
                    times.push(t as f64);
                }
            }
        }
        full_coverage.push(FullCoverageRow {
            algorithm: alg_name(a),
            runs_ok,
            reached,
            mean_steps: stats::mean(&times),
            median_steps: stats::median(&times),
        });
    }

    let suite_size = suite_sizes(res, &cells, &project_ids, &alg_ids, &pairs);
    let (mutation, operators) = mutation(res, &cells, &project_ids, &alg_ids);

    // Project sizes: the largest total_targets among successful runs.
    let mut sizes = Vec::new();
    let mut size_of: BTreeMap<u32, u64> = BTreeMap::new();
    for &p in &project_ids {
        let t = alg_ids
            .iter()
            .filter_map(|&a| cells.get(&(p, a)))
            .flat_map(|c| runs[c.range.clone()].iter().filter(|r| r.has_result()).filter_map(|r| r.total_targets))
            .max();
        if let Some(t) = t {
            sizes.push((proj_name(p), t));
            size_of.insert(p, t);
        }
    }
    let mut correlations = Vec::new();
    if !size_of.is_empty() {
        for &a in &alg_ids {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            for (&p, &t) in &size_of {
                if let Some(m) = cells.get(&(p, a)).and_then(|c| stats::mean(&c.values)) {
                    x.push(t as f64);
                    y.push(m);
                }
            }
            correlations.push(CorrelationRow { algorithm: alg_name(a), pearson: stats::pearson(&x, &y) });
        }
    }

    // Coverage over time.
    let mut curve_list = Vec::new();
    if let Some(tl) = &res.timeline {
        for &a in &alg_ids {
            let project_runs: Vec<Vec<usize>> = project_ids
                .iter()
                .filter_map(|&p| cells.get(&(p, a)))
                .map(|c| c.range.clone().filter(|&i| runs[i].has_result() && tl.has(i)).collect::<Vec<_>>())
                .filter(|v: &Vec<usize>| !v.is_empty())
                .collect();
            if let Some(c) = curves::curve(res, tl, &alg_name(a), &project_runs, options.grid, grid_end) {
                curve_list.push(c);
            }
        }
    }

    let sequence = sequence::analyze(res, options, &cells, &project_ids, &alg_ids, &compared)?;

    Ok(DatasetAnalysis {
        name: name.to_string(),
        algorithms: alg_ids.iter().map(|&a| alg_name(a)).collect(),
        projects: project_ids.len(),
        statuses,
        coverage,
        comparisons,
        skipped_comparisons,
        exclusions,
        full_coverage,
        full_coverage_source: source,
        suite_size,
        mutation,
        operators,
        sizes,
        correlations,
        curves: curve_list,
        sequence,
    })
}

/// Human-readable reason why a cell is incomplete: failed and missing seeds (at most 5 shown).
fn incomplete_reason(rs: &[Run], expected: &BTreeSet<u64>) -> String {
    let mut parts = Vec::new();
    let failed: Vec<&Run> = rs.iter().filter(|r| !r.has_result()).collect();
    for r in failed.iter().take(5) {
        let err: String = r.error.chars().take(80).collect();
        parts.push(if err.is_empty() {
            format!("seed {}: {}", r.seed, r.status)
        } else {
            format!("seed {}: {} ({err})", r.seed, r.status)
        });
    }
    if failed.len() > 5 {
        parts.push(format!("{} more failed", failed.len() - 5));
    }
    let present: BTreeSet<u64> = rs.iter().map(|r| r.seed).collect();
    let missing: Vec<String> = expected.difference(&present).map(|s| s.to_string()).collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(5).map(String::as_str).collect();
        let more = if missing.len() > 5 { format!(" and {} more", missing.len() - 5) } else { String::new() };
        parts.push(format!("missing seed(s) {}{more}", shown.join(", ")));
    }
    parts.join("; ")
}

/// First timeline step where every target is covered.
fn timeline_full_at(res: &Results, i: usize, r: &Run) -> Option<u64> {
    let tl = res.timeline.as_ref()?;
    let total = r.total_targets.or_else(|| tl.total.get(tl.offsets[i]).map(|&t| t as u64)).filter(|&t| t > 0)?;
    tl.points(i).find(|&(_, c)| c as u64 >= total).map(|(s, _)| s)
}

/// Table 6 row "A vs B" over the projects' cells (any measure: coverage, or a sequence
/// criterion).
#[allow(clippy::too_many_arguments)]
pub(crate) fn compare(
    options: &Options,
    cells: &BTreeMap<(u32, u32), Cell>,
    projects: &BTreeSet<u32>,
    ia: u32,
    ib: u32,
    a: &str,
    b: &str,
    names: &[String],
) -> Result<Comparison, AnalysisError> {
    let mut rows = Vec::new();
    let mut excluded = Vec::new();
    let enters = |c: &&Cell| match options.incomplete {
        Incomplete::Exclude => c.complete,
        Incomplete::Compare => c.values.len() >= MIN_RUNS_COMPARED,
    };
    for &p in projects {
        let (ca, cb) = (cells.get(&(p, ia)), cells.get(&(p, ib)));
        if ca.is_none() && cb.is_none() {
            continue; // the project is not part of this comparison at all
        }
        let (Some(ca), Some(cb)) = (ca.filter(enters), cb.filter(enters)) else {
            let n = |c: Option<&Cell>| c.map_or(0, |c| c.values.len());
            excluded.push(ExcludedProject { project: names[p as usize].clone(), n_a: n(ca), n_b: n(cb) });
            continue;
        };
        let mw = stats::mann_whitney(&ca.values, &cb.values, options.p_method)
            .map_err(|e| AnalysisError::Options(format!("{a} vs {b} on {}: {e}", names[p as usize])))?;
        rows.push(ProjectComparison {
            project: names[p as usize].clone(),
            mean_a: stats::mean(&ca.values).unwrap_or(f64::NAN),
            mean_b: stats::mean(&cb.values).unwrap_or(f64::NAN),
            counts: mw.counts,
            p: mw.p,
            p_used: mw.p,
            magnitude: options.thresholds.magnitude(&mw.counts),
        });
    }
    if options.holm {
        let adj = stats::holm(&rows.iter().map(|r| r.p).collect::<Vec<_>>());
        for (r, p) in rows.iter_mut().zip(adj) {
            r.p_used = p;
        }
    }
    let (mut sig_better, mut better, mut equal, mut worse, mut sig_worse) = (0, 0, 0, 0, 0);
    for r in &rows {
        let sig = r.p_used < options.alpha;
        match r.counts.a12_vs_half() {
            Ordering::Greater => {
                better += 1;
                sig_better += usize::from(sig);
            }
            Ordering::Equal => equal += 1,
            Ordering::Less => {
                worse += 1;
                sig_worse += usize::from(sig);
            }
        }
    }
    let a12s: Vec<f64> = rows.iter().map(|r| r.counts.a12()).collect();
    Ok(Comparison {
        a: a.to_string(),
        b: b.to_string(),
        mean_a12: stats::mean(&a12s),
        projects: rows,
        excluded,
        sig_better,
        better,
        equal,
        worse,
        sig_worse,
    })
}

fn suite_sizes(
    res: &Results,
    cells: &BTreeMap<(u32, u32), Cell>,
    projects: &BTreeSet<u32>,
    algs: &BTreeSet<u32>,
    pairs: &[(String, String)],
) -> SuiteSize {
    let runs = &res.runs;
    // Projects where all algorithms are complete and every successful run has the same coverage.
    let equal: Vec<u32> = projects
        .iter()
        .copied()
        .filter(|&p| {
            let cs: Vec<&Cell> = algs.iter().filter_map(|&a| cells.get(&(p, a))).collect();
            if cs.len() != algs.len() || cs.iter().any(|c| !c.complete || c.values.is_empty()) {
                return false;
            }
            let first = cs[0].values[0];
            cs.iter().all(|c| c.values.iter().all(|&v| v == first))
        })
        .collect();
    let per_project = |p: u32, a: u32, f: fn(&Run) -> Option<u64>| -> Option<f64> {
        let c = cells.get(&(p, a))?;
        let v: Option<Vec<f64>> =
            runs[c.range.clone()].iter().filter(|r| r.has_result()).map(|r| f(r).map(|x| x as f64)).collect();
        stats::mean(&v?)
    };
    let tests = |r: &Run| r.tests_after_min;
    let events = |r: &Run| r.events_after_min;
    let mut rows = Vec::new();
    for &a in algs {
        let t: Vec<f64> = equal.iter().filter_map(|&p| per_project(p, a, tests)).collect();
        let e: Vec<f64> = equal.iter().filter_map(|&p| per_project(p, a, events)).collect();
        rows.push(SuiteSizeRow {
            algorithm: res.algorithms[a as usize].clone(),
            mean_tests: stats::mean(&t),
            median_tests: stats::median(&t),
            mean_events: stats::mean(&e),
            median_events: stats::median(&e),
        });
    }
    let mut comparisons = Vec::new();
    let has_events = runs.iter().any(|r| r.events_after_min.is_some());
    let (measure, f): (&'static str, fn(&Run) -> Option<u64>) =
        if has_events { ("events", events) } else { ("tests", tests) };
    for (a, b) in pairs {
        let (Some(ia), Some(ib)) = (
            res.algorithms.iter().position(|x| x == a).map(|i| i as u32),
            res.algorithms.iter().position(|x| x == b).map(|i| i as u32),
        ) else {
            continue;
        };
        if !algs.contains(&ia) || !algs.contains(&ib) {
            continue;
        }
        let values = |p: u32, al: u32| -> Option<Vec<f64>> {
            let c = cells.get(&(p, al))?;
            runs[c.range.clone()].iter().filter(|r| r.has_result()).map(|r| f(r).map(|x| x as f64)).collect()
        };
        let mut a12s = Vec::new();
        let (mut larger, mut eq, mut smaller) = (0, 0, 0);
        for &p in &equal {
            let (Some(va), Some(vb)) = (values(p, ia), values(p, ib)) else { continue };
            let Ok(c) = PairCounts::new(&va, &vb) else { continue };
            a12s.push(c.a12());
            match c.a12_vs_half() {
                Ordering::Greater => larger += 1,
                Ordering::Equal => eq += 1,
                Ordering::Less => smaller += 1,
            }
        }
        comparisons.push(SizeComparison {
            a: a.clone(),
            b: b.clone(),
            measure,
            projects: a12s.len(),
            mean_a12: stats::mean(&a12s),
            larger,
            equal: eq,
            smaller,
        });
    }
    SuiteSize { projects: equal.len(), rows, comparisons }
}

/// Verdicts of one run from the runs columns (the contract's summary), or from `mutants`.
fn run_verdicts(res: &Results, i: usize) -> Option<Verdicts> {
    let r = &res.runs[i];
    if let (Some(g), Some(k)) = (r.mutants, r.mutants_killed) {
        if g == 0 {
            return None; // mutation analysis off
        }
        let excluded = r.mutants_excluded.unwrap_or(0);
        let timeout = r.mutants_timeout.unwrap_or(0);
        let survived = g.saturating_sub(k + excluded + timeout);
        return Some(Verdicts { killed: k, survived, timeout, excluded });
    }
    let m = res.mutants.as_ref()?;
    let mut v = Verdicts::default();
    let mut any = false;
    for (_, c) in m.counts.range((i as u32, 0)..(i as u32 + 1, 0)) {
        v.add(c);
        any = true;
    }
    any.then_some(v)
}

/// The strata of run `i` (one per operator it has verdicts for), or one stratum from the
/// runs columns when there is no `mutants` table.
fn run_strata(res: &Results, i: usize) -> Vec<(Option<usize>, Stratum)> {
    let stratum = |v: &Verdicts, population: u64| Stratum {
        population: population.max(v.total()),
        sampled: v.total(),
        killed: v.killed,
        excluded: v.excluded,
    };
    match &res.mutants {
        Some(m) => m
            .counts
            .range((i as u32, 0)..(i as u32 + 1, 0))
            .map(|(&(r, op), v)| (Some(op), stratum(v, m.strata.get(&(r, op)).copied().unwrap_or(0))))
            .collect(),
        None => run_verdicts(res, i).map(|v| vec![(None, stratum(&v, 0))]).unwrap_or_default(),
    }
}

/// Mutation score of run `i` (the pooled estimate over its strata, exact when every mutant
/// was analysed), as the per-project means of [`MutationRow`] use it.
pub(crate) fn run_score(res: &Results, i: usize) -> Option<f64> {
    let strata: Vec<Stratum> = run_strata(res, i).into_iter().map(|(_, s)| s).collect();
    estimate::pooled(&strata).map(|e| e.score)
}

fn mutation(
    res: &Results,
    cells: &BTreeMap<(u32, u32), Cell>,
    projects: &BTreeSet<u32>,
    algs: &BTreeSet<u32>,
) -> (Vec<MutationRow>, Vec<OperatorRow>) {
    let runs = &res.runs;
    let n_ops = res.mutants.as_ref().map_or(0, |m| m.operators.len());
    let mut rows = Vec::new();
    let mut ops = Vec::new();
    for &a in algs {
        let mut total = Verdicts::default();
        let mut n = 0;
        let mut all = Vec::new();
        let mut project_scores = Vec::new();
        let mut per_op: Vec<(Verdicts, Vec<Stratum>, Vec<f64>)> = vec![Default::default(); n_ops];
        for &p in projects {
            let Some(c) = cells.get(&(p, a)) else { continue };
            let mut scores = Vec::new();
            let mut op_scores: Vec<Vec<f64>> = vec![Vec::new(); n_ops];
            for i in c.range.clone().filter(|&i| runs[i].has_result()) {
                let strata = run_strata(res, i);
                if strata.is_empty() {
                    continue;
                }
                if let Some(v) = run_verdicts(res, i) {
                    total.add(&v);
                }
                n += 1;
                let plain: Vec<Stratum> = strata.iter().map(|(_, s)| *s).collect();
                if let Some(e) = estimate::pooled(&plain) {
                    scores.push(e.score);
                }
                all.extend(plain);
                if let Some(m) = &res.mutants {
                    for ((_, op), v) in m.counts.range((i as u32, 0)..(i as u32 + 1, 0)) {
                        per_op[*op].0.add(v);
                    }
                }
                for (op, s) in strata {
                    if let Some(op) = op {
                        per_op[op].1.push(s);
                        if let Some(e) = estimate::pooled(&[s]) {
                            op_scores[op].push(e.score);
                        }
                    }
                }
            }
            if let Some(s) = stats::mean(&scores) {
                project_scores.push(s);
            }
            for (op, sc) in op_scores.iter().enumerate() {
                if let Some(s) = stats::mean(sc) {
                    per_op[op].2.push(s);
                }
            }
        }
        if n > 0 {
            rows.push(MutationRow {
                algorithm: res.algorithms[a as usize].clone(),
                runs: n,
                verdicts: total,
                pooled: estimate::pooled(&all),
                mean_project_score: stats::mean(&project_scores),
            });
        }
        if let Some(m) = &res.mutants {
            for (op, (v, strata, project)) in per_op.into_iter().enumerate() {
                if v.total() == 0 {
                    continue;
                }
                ops.push(OperatorRow {
                    algorithm: res.algorithms[a as usize].clone(),
                    operator: m.operators[op].clone(),
                    verdicts: v,
                    pooled: estimate::pooled(&strata),
                    mean_project_score: stats::mean(&project),
                });
            }
        }
    }
    (rows, ops)
}
