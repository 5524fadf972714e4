//! Every table of the analysis report (coverage, Table 6, pairs, exclusions, time to full
//! coverage, suite sizes, mutation, size correlation, sequence coverage), built from an
//! [`Analysis`]; written as CSV, LaTeX and Markdown by the sibling modules.

use super::comparison::{COMPARISON_COLUMNS, comparison_cells};
use super::sequence::{self, SequenceTables};
use crate::compute::{Analysis, FullCoverageSource};
use crate::curves::STEPS_PER_SECOND;
use crate::estimate::Estimate;
use crate::load::{OPERATORS, Verdicts};
use crate::table::{Cell, Table};

/// The columns of a mutation-score row after its keys (overall and per operator).
const SCORE_COLUMNS: [(&str, &str); 9] = [
    ("Mutants", "mutants"),
    ("Killed", "killed"),
    ("Excluded", "excluded"),
    ("Timeout", "timeout"),
    ("Kind", "kind"),
    ("Pooled score %", "score"),
    ("95 % low", "score_low"),
    ("95 % high", "score_high"),
    ("Mean of projects %", "mean_project_score"),
];

/// All tables of an analysis (each covers every dataset, with a Dataset column).
pub struct Tables {
    /// Coverage per dataset and algorithm.
    pub coverage: Table,
    /// Table 6.
    pub table6: Table,
    /// Per-project comparison details (CSV only).
    pub pairs: Table,
    /// Excluded (project, algorithm) cells.
    pub excluded: Table,
    /// Runs ended by the per-run work cap, per dataset and algorithm (rows only for datasets
    /// that have any).
    pub limit_runs: Table,
    /// Time to full coverage.
    pub full_coverage: Table,
    /// Suite size on equal-coverage projects.
    pub suite_size: Table,
    /// Â12 of suite sizes.
    pub suite_size_a12: Table,
    /// Mutation scores.
    pub mutation: Table,
    /// Mutation per operator (long).
    pub mutation_operators: Table,
    /// Mutation score per operator, one column per algorithm (for reading).
    pub mutation_operators_wide: Table,
    /// Project size vs coverage.
    pub size_correlation: Table,
    /// Event-sequence coverage (rows only for datasets with sequence values).
    pub sequence: SequenceTables,
}

/// Builds every table.
pub fn tables(an: &Analysis) -> Tables {
    let mut coverage_cols = vec![
        ("Dataset", "dataset"),
        ("Algorithm", "algorithm"),
        ("Projects", "projects"),
        ("Runs ok", "runs_ok"),
        ("Runs not ok (failed or unfinished)", "runs_not_ok"),
        ("Mean %", "mean_coverage"),
        ("Median %", "median_coverage"),
        ("Projects at 100 %", "projects_full"),
    ];
    // Only studies with Neatest runs get the reliable-coverage column, so other reports keep
    // their columns.
    let has_reliable = an.datasets.iter().flat_map(|d| &d.coverage).any(|r| r.reliable_mean.is_some());
    if has_reliable {
        coverage_cols.push(("Reliable mean % (Neatest)", "reliable_mean_coverage"));
    }
    let coverage_caption = if has_reliable {
        "Coverage per algorithm: mean and median over projects of each project's mean coverage (%); for Neatest \
         also its reliable coverage (statements covered on stable_count seeds), mean over projects."
    } else {
        "Coverage per algorithm: mean and median over projects of each project's mean coverage (%)."
    };
    let mut coverage = Table::new("coverage", coverage_caption, &coverage_cols);
    let mut table6 = Table::new(
        "table6",
        "Pairwise comparison of coverage (Whisker Table 6): mean Â12 and the number of projects where the first \
         algorithm is significantly better, better, equal, worse and significantly worse.",
        &[[("Dataset", "dataset")].as_slice(), &COMPARISON_COLUMNS].concat(),
    );
    let mut pairs = Table::new(
        "pairs",
        "Per-project comparisons.",
        &[
            ("Dataset", "dataset"),
            ("A", "a"),
            ("B", "b"),
            ("Project", "project"),
            ("Mean A", "mean_a"),
            ("Mean B", "mean_b"),
            ("n A", "n_a"),
            ("n B", "n_b"),
            ("U", "u_a"),
            ("Â12", "a12"),
            ("p", "p"),
            ("p used", "p_used"),
            ("Magnitude", "magnitude"),
            ("Verdict", "verdict"),
        ],
    );
    let mut excluded = Table::new(
        "excluded",
        "Projects and algorithms without a result for every expected seed (Results: runs with status ok or limit).",
        &[
            ("Dataset", "dataset"),
            ("Project", "project"),
            ("Algorithm", "algorithm"),
            ("Results", "results"),
            ("Reason", "reason"),
        ],
    );
    let mut limit_runs = Table::new(
        "limit_runs",
        "Runs ended by the per-run work cap (status limit), counted as results.",
        &[
            ("Dataset", "dataset"),
            ("Algorithm", "algorithm"),
            ("Runs limit", "runs_limit"),
            ("Runs ok (incl. limit)", "runs_ok"),
        ],
    );
    let mut full_coverage = Table::new(
        "full_coverage",
        "Runs reaching 100 % coverage and the time they needed (over those runs).",
        &[
            ("Dataset", "dataset"),
            ("Algorithm", "algorithm"),
            ("Runs ok", "runs_ok"),
            ("Full coverage", "runs_full"),
            ("Share %", "share_full"),
            ("Mean steps", "mean_steps"),
            ("Median steps", "median_steps"),
            ("Mean s", "mean_seconds"),
            ("Median s", "median_seconds"),
        ],
    );
    let mut suite_size = Table::new(
        "suite_size",
        "Final (minimised) test-suite size on projects where every run of every algorithm reaches the same coverage \
         (mean and median over projects of the per-project mean).",
        &[
            ("Dataset", "dataset"),
            ("Algorithm", "algorithm"),
            ("Projects", "projects"),
            ("Mean tests", "mean_tests"),
            ("Median tests", "median_tests"),
            ("Mean events", "mean_events"),
            ("Median events", "median_events"),
        ],
    );
    let mut suite_size_a12 = Table::new(
        "suite_size_a12",
        "Â12 of suite sizes on those projects (smaller suites are better: Â12 < 0.5 means A's suites are smaller).",
        &[
            ("Dataset", "dataset"),
            ("Comparison", "comparison"),
            ("", "a"),
            ("", "b"),
            ("Measure", "measure"),
            ("Projects", "projects"),
            ("Â12", "mean_a12"),
            ("A larger", "a_larger"),
            ("Equal", "equal"),
            ("A smaller", "a_smaller"),
        ],
    );
    let mut mutation = Table::new(
        "mutation",
        "Mutation analysis: score = killed / (generated − excluded). \"Pooled\" is over all mutants of all runs \
         (the Whisker paper's headline aggregate); \"mean of projects\" is the mean over projects of the \
         per-project mean run score (the paper's per-project figure). When a run analysed a sample of its mutants, \
         each sampled verdict stands for the mutants of its (run, operator) stratum: the pooled score is then the \
         unbiased stratified estimate with its 95 % interval (\"kind\" says which), and the mutant counts are the \
         analysed ones.",
        &[[("Dataset", "dataset"), ("Algorithm", "algorithm"), ("Runs", "runs")].as_slice(), &SCORE_COLUMNS].concat(),
    );
    let mut mutation_operators = Table::new(
        "mutation_operators",
        "Mutation score per operator: pooled over all runs' mutants of the operator (estimate and 95 % interval \
         when sampled), and the mean over projects of the per-project mean run score.",
        &[[("Dataset", "dataset"), ("Algorithm", "algorithm"), ("Operator", "operator")].as_slice(), &SCORE_COLUMNS]
            .concat(),
    );
    let mut size_correlation = Table::new(
        "size_correlation",
        "Pearson correlation between project size (total targets) and the project's mean coverage.",
        &[("Dataset", "dataset"), ("Algorithm", "algorithm"), ("Projects", "projects"), ("r", "r"), ("p", "p")],
    );

    let th = an.options.thresholds;
    for d in &an.datasets {
        let ds = || Cell::text(&d.name);
        for r in &d.coverage {
            let mut row = vec![
                ds(),
                Cell::text(&r.algorithm),
                Cell::int(r.projects as u64),
                Cell::int(r.runs_ok as u64),
                Cell::int(r.runs_not_ok as u64),
                Cell::opt_pct(r.mean),
                Cell::opt_pct(r.median),
                Cell::int(r.full_projects as u64),
            ];
            if has_reliable {
                row.push(Cell::opt_pct(r.reliable_mean));
            }
            coverage.push(row);
        }
        for c in &d.comparisons {
            let mut row = vec![ds()];
            row.extend(comparison_cells(c, th));
            table6.push(row);
            for p in &c.projects {
                let sig = p.p_used < an.options.alpha;
                let verdict = match p.counts.a12_vs_half() {
                    std::cmp::Ordering::Greater if sig => "sig better",
                    std::cmp::Ordering::Greater => "better",
                    std::cmp::Ordering::Equal => "equal",
                    std::cmp::Ordering::Less if sig => "sig worse",
                    std::cmp::Ordering::Less => "worse",
                };
                pairs.push(vec![
                    ds(),
                    Cell::text(&c.a),
                    Cell::text(&c.b),
                    Cell::text(&p.project),
                    Cell::pct(p.mean_a),
                    Cell::pct(p.mean_b),
                    Cell::int(p.counts.n1),
                    Cell::int(p.counts.n2),
                    Cell::num(p.counts.u(), 1),
                    Cell::num(p.counts.a12(), 3),
                    Cell::p(p.p),
                    Cell::p(p.p_used),
                    Cell::text(p.magnitude.label()),
                    Cell::text(verdict),
                ]);
            }
        }
        for e in &d.exclusions {
            excluded.push(vec![
                ds(),
                Cell::text(&e.project),
                Cell::text(&e.algorithm),
                Cell::int(e.results as u64),
                Cell::text(&e.reason),
            ]);
        }
        if d.coverage.iter().any(|r| r.runs_limit > 0) {
            for r in &d.coverage {
                limit_runs.push(vec![
                    ds(),
                    Cell::text(&r.algorithm),
                    Cell::int(r.runs_limit as u64),
                    Cell::int(r.runs_ok as u64),
                ]);
            }
        }
        let timed = d.full_coverage_source != FullCoverageSource::CoverageOnly;
        for r in &d.full_coverage {
            let secs = |v: Option<f64>| v.map(|s| s / STEPS_PER_SECOND as f64);
            full_coverage.push(vec![
                ds(),
                Cell::text(&r.algorithm),
                Cell::int(r.runs_ok as u64),
                Cell::int(r.reached as u64),
                Cell::opt_pct((r.runs_ok > 0).then(|| r.reached as f64 / r.runs_ok as f64)),
                if timed { Cell::opt(r.mean_steps, 0) } else { Cell::na() },
                if timed { Cell::opt(r.median_steps, 0) } else { Cell::na() },
                if timed { Cell::opt(secs(r.mean_steps), 1) } else { Cell::na() },
                if timed { Cell::opt(secs(r.median_steps), 1) } else { Cell::na() },
            ]);
        }
        for r in &d.suite_size.rows {
            suite_size.push(vec![
                ds(),
                Cell::text(&r.algorithm),
                Cell::int(d.suite_size.projects as u64),
                Cell::opt(r.mean_tests, 2),
                Cell::opt(r.median_tests, 2),
                Cell::opt(r.mean_events, 2),
                Cell::opt(r.median_events, 2),
            ]);
        }
        for c in &d.suite_size.comparisons {
            suite_size_a12.push(vec![
                ds(),
                Cell::text(format!("{} vs {}", c.a, c.b)),
                Cell::text(&c.a),
                Cell::text(&c.b),
                Cell::text(c.measure),
                Cell::int(c.projects as u64),
                Cell::opt(c.mean_a12, 2),
                Cell::int(c.larger as u64),
                Cell::int(c.equal as u64),
                Cell::int(c.smaller as u64),
            ]);
        }
        let estimate_cells = |e: &Option<Estimate>| {
            let kind = match e {
                Some(e) if e.sampled => "estimate (sample)",
                Some(_) => "all mutants",
                None => "-",
            };
            vec![
                Cell::text(kind),
                Cell::opt_pct(e.map(|e| e.score)),
                Cell::opt_pct(e.map(|e| e.low)),
                Cell::opt_pct(e.map(|e| e.high)),
            ]
        };
        // One score row: its labels, then the verdict counts, the estimate and the project mean
        // (the same columns for the algorithm table and the per-operator one).
        let score_row = |labels: Vec<Cell>, v: &Verdicts, pooled: &Option<Estimate>, mean: Option<f64>| {
            let mut row = labels;
            row.extend([Cell::int(v.total()), Cell::int(v.killed), Cell::int(v.excluded), Cell::int(v.timeout)]);
            row.extend(estimate_cells(pooled));
            row.push(Cell::opt_pct(mean));
            row
        };
        for r in &d.mutation {
            let labels = vec![ds(), Cell::text(&r.algorithm), Cell::int(r.runs as u64)];
            mutation.push(score_row(labels, &r.verdicts, &r.pooled, r.mean_project_score));
        }
        for r in &d.operators {
            let labels = vec![ds(), Cell::text(&r.algorithm), Cell::text(&r.operator)];
            mutation_operators.push(score_row(labels, &r.verdicts, &r.pooled, r.mean_project_score));
        }
        for r in &d.correlations {
            size_correlation.push(match &r.pearson {
                Some(p) => vec![ds(), Cell::text(&r.algorithm), Cell::int(p.n as u64), Cell::num(p.r, 3), Cell::p(p.p)],
                None => vec![ds(), Cell::text(&r.algorithm), Cell::na(), Cell::na(), Cell::na()],
            });
        }
    }
    let mutation_operators_wide = operators_wide(an);
    Tables {
        mutation_operators_wide,
        coverage,
        table6,
        pairs,
        excluded,
        limit_runs,
        full_coverage,
        suite_size,
        suite_size_a12,
        mutation,
        mutation_operators,
        size_correlation,
        sequence: sequence::tables(an),
    }
}

/// Operators × algorithms table of pooled mutation scores (%).
fn operators_wide(an: &Analysis) -> Table {
    let mut algs: Vec<String> = Vec::new();
    for d in &an.datasets {
        for r in &d.operators {
            if !algs.contains(&r.algorithm) {
                algs.push(r.algorithm.clone());
            }
        }
    }
    algs.sort();
    let mut cols: Vec<(String, String)> =
        vec![("Dataset".into(), "dataset".into()), ("Operator".into(), "operator".into())];
    cols.extend(algs.iter().map(|a| (format!("{a} %"), a.clone())));
    let cols_ref: Vec<(&str, &str)> = cols.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let mut t = Table::new(
        "mutation_operators_wide",
        "Mutation score per operator and algorithm (%, pooled over all runs' mutants; the stratified estimate \
         when runs analysed samples).",
        &cols_ref,
    );
    for d in &an.datasets {
        let mut ops: Vec<&String> = Vec::new();
        for r in &d.operators {
            if !ops.contains(&&r.operator) {
                ops.push(&r.operator);
            }
        }
        ops.sort_by_key(|o| (OPERATORS.iter().position(|x| x == o).unwrap_or(OPERATORS.len()), o.to_string()));
        for op in ops {
            let mut row = vec![Cell::text(&d.name), Cell::text(op.as_str())];
            for a in &algs {
                let v = d
                    .operators
                    .iter()
                    .find(|r| &r.algorithm == a && &r.operator == op)
                    .and_then(|r| r.pooled.map(|e| e.score));
                row.push(Cell::opt_pct(v));
            }
            t.push(row);
        }
    }
    t
}
