//! Event-sequence coverage of the suites (issue 20; the criteria are defined in
//! `docs/testgen.md` "Sequence coverage", the columns in `docs/exports.md`): per algorithm the
//! mean of each criterion, Table 6 on each criterion, and how each criterion of the final suite
//! correlates with the mutation score, next to statement coverage.
//!
//! Units as everywhere in the analysis: a project's value is the mean over its runs, an
//! algorithm's the mean over projects; comparisons are per project over seeds (Â12 and
//! Mann-Whitney, [`crate::compute`]'s Table 6 with the same `--incomplete` rule).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::AnalysisError;
use crate::compute::{self, Analysis, Cell, Comparison, Options};
use crate::load::{Results, Run, SEQ_METRICS};
use crate::report::comparison_cells;
use crate::stats::{self, Pearson};
use crate::table::{self, Table};

/// Display names of [`SEQ_METRICS`], in the same order.
pub const SEQ_LABELS: [&str; 8] = [
    "K-H t=2",
    "K-H t=3",
    "Window t=2",
    "Window t=3",
    "K-H t=2 unmin",
    "K-H t=3 unmin",
    "Window t=2 unmin",
    "Window t=3 unmin",
];

/// The criteria correlated with the mutation score: statement coverage and the sequence
/// criteria of the final suite (the suite that mutation analysis runs; the unminimised
/// suite's values describe another suite).
pub const CRITERIA: [&str; 5] = ["coverage", "seq_kh2", "seq_kh3", "seq_win2", "seq_win3"];

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
    /// One of [`CRITERIA`].
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
            comparisons.push(compute::compare(options, &metric_cells, projects, ia, ib, &a, &b, &res.projects)?);
        }
        table6.push(CriterionComparisons { metric, comparisons });
    }
    let mut correlations = Vec::new();
    for &a in algs {
        for criterion in CRITERIA {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            for &p in projects {
                let Some(c) = cells.get(&(p, a)) else { continue };
                let both: Vec<(f64, f64)> = results(c)
                    .filter_map(|i| Some((value(&runs[i], criterion)?, compute::run_score(res, i)?)))
                    .collect();
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

/// The report's sequence tables: mean coverage per criterion, Table 6 per criterion, and
/// the correlations with the mutation score.
pub struct SequenceTables {
    /// Mean sequence coverage per dataset and algorithm.
    pub coverage: Table,
    /// Table 6 on each criterion.
    pub table6: Table,
    /// Criterion vs mutation score.
    pub correlation: Table,
}

/// Builds the sequence tables of an analysis (rows only for datasets with sequence values).
pub fn tables(an: &Analysis) -> SequenceTables {
    let mut columns =
        vec![("Dataset", "dataset"), ("Algorithm", "algorithm"), ("Projects", "projects"), ("Runs", "runs")];
    columns.extend(SEQ_LABELS.iter().zip(SEQ_METRICS).map(|(&l, m)| (l, m)));
    let mut coverage = Table::new(
        "sequence_coverage",
        "Event-sequence coverage per algorithm (%): Kuhn-Higdon t-way (ordered t-tuples of distinct events as a \
         subsequence) and window (length-t words contiguously) coverage of the final suite, then of the suite \
         before minimisation; mean over projects of each project's mean.",
        &columns,
    );
    let mut table6 = Table::new(
        "sequence_table6",
        "Pairwise comparison of each sequence-coverage criterion (Table 6 on the criterion instead of coverage).",
        &[
            ("Dataset", "dataset"),
            ("Criterion", "criterion"),
            ("Comparison", "comparison"),
            ("", "a"),
            ("", "b"),
            ("Â12", "mean_a12"),
            ("Magnitude", "magnitude"),
            ("Sig better", "sig_better"),
            ("Better", "better"),
            ("Equal", "equal"),
            ("Worse", "worse"),
            ("Sig worse", "sig_worse"),
            ("Projects", "projects_compared"),
            ("Excluded", "projects_excluded"),
        ],
    );
    let mut correlation = Table::new(
        "mutation_correlation",
        "Pearson correlation of each criterion of the final suite with the mutation score, over projects (per-project \
         means of the runs that have both).",
        &[
            ("Dataset", "dataset"),
            ("Algorithm", "algorithm"),
            ("Criterion", "criterion"),
            ("Projects", "projects"),
            ("r", "r"),
            ("p", "p"),
        ],
    );
    let label = |m: &str| {
        SEQ_METRICS
            .iter()
            .position(|x| *x == m)
            .map_or_else(|| "Statement coverage".to_string(), |k| SEQ_LABELS[k].into())
    };
    for d in &an.datasets {
        let Some(s) = &d.sequence else { continue };
        let ds = || table::Cell::text(&d.name);
        for r in &s.rows {
            let mut row = vec![
                ds(),
                table::Cell::text(&r.algorithm),
                table::Cell::int(r.projects as u64),
                table::Cell::int(r.runs as u64),
            ];
            row.extend(r.means.iter().map(|&m| table::Cell::opt_pct(m)));
            coverage.push(row);
        }
        for t in &s.table6 {
            for c in &t.comparisons {
                let mut row = vec![ds(), table::Cell::text(label(t.metric))];
                row.extend(comparison_cells(c, an.options.thresholds));
                table6.push(row);
            }
        }
        for c in &s.correlations {
            let mut row = vec![ds(), table::Cell::text(&c.algorithm), table::Cell::text(label(c.criterion))];
            row.extend(match &c.pearson {
                Some(p) => [table::Cell::int(p.n as u64), table::Cell::num(p.r, 3), table::Cell::p(p.p)],
                None => [table::Cell::na(), table::Cell::na(), table::Cell::na()],
            });
            correlation.push(row);
        }
    }
    SequenceTables { coverage, table6, correlation }
}

/// The "Event-sequence coverage" section of `report.md`.
pub(crate) fn markdown_section(s: &mut String, an: &Analysis, t: &SequenceTables) {
    let _ = writeln!(s, "## Event-sequence coverage\n");
    if t.coverage.rows.is_empty() {
        let _ = writeln!(s, "Not available (no `seq_*` values in `runs`: results made before sequence coverage).\n");
        return;
    }
    s.push_str(&t.coverage.markdown());
    let _ = writeln!(
        s,
        "\nΣ is each run's event alphabet (the events its search tried, with their parameters; docs/testgen.md): a \
         run's values are relative to its own Σ.\n"
    );
    if !t.table6.rows.is_empty() {
        let _ = writeln!(s, "### Pairwise comparison per criterion (Table 6)\n");
        s.push_str(&t.table6.markdown());
        let _ = writeln!(s, "\nSame conventions as Table 6 (`--incomplete {}`).\n", an.options.incomplete.name());
    }
    let _ = writeln!(s, "### Correlation with the mutation score\n");
    if t.correlation.rows.is_empty() {
        let _ = writeln!(s, "No mutation data.\n");
    } else {
        s.push_str(&t.correlation.markdown());
        s.push('\n');
    }
}
