//! The report folder: `report.md` with tables and images, CSV and LaTeX tables, plots, and
//! the coverage-over-time exports.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::AnalysisError;
use crate::compute::{Analysis, Comparison, DatasetAnalysis, FullCoverageSource};
use crate::curves::{self, Grid, GridUnit, STEPS_PER_SECOND};
use crate::load::Results;
use crate::plots::{self, BarPlot, BoxPlot, Histogram, LinePlot, Series};
use crate::sequence::{self, SequenceTables};
use crate::stats::{PMethod, Thresholds};
use crate::table::{Cell, Table, csv_quote, float_csv};

/// What to write besides the tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOptions {
    /// Title of the report (e.g. the experiment name).
    pub title: String,
    /// Draw plots (PNG + SVG).
    pub plots: bool,
    /// Write per-run wide timelines (Whisker per-second columns, Pynguin `CoverageTimeline_T*`).
    pub per_run_timelines: bool,
}

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

fn comparison_label(c: &Comparison) -> String {
    format!("{} vs {}", c.a, c.b)
}

/// A Table-6 row after its dataset (and criterion) cells: label, A, B, mean Â12, magnitude,
/// counts, projects compared and excluded.
pub(crate) fn comparison_cells(c: &Comparison, th: Thresholds) -> Vec<Cell> {
    vec![
        Cell::text(comparison_label(c)),
        Cell::text(&c.a),
        Cell::text(&c.b),
        Cell::opt(c.mean_a12, 2),
        Cell::text(c.mean_a12.map(|a| th.magnitude_of(a).label()).unwrap_or("–")),
        Cell::int(c.sig_better as u64),
        Cell::int(c.better as u64),
        Cell::int(c.equal as u64),
        Cell::int(c.worse as u64),
        Cell::int(c.sig_worse as u64),
        Cell::int(c.projects.len() as u64),
        Cell::int(c.excluded.len() as u64),
    ]
}

/// Builds every table.
pub fn tables(an: &Analysis) -> Tables {
    let mut coverage = Table::new(
        "coverage",
        "Coverage per algorithm: mean and median over projects of each project's mean coverage (%).",
        &[
            ("Dataset", "dataset"),
            ("Algorithm", "algorithm"),
            ("Projects", "projects"),
            ("Runs ok", "runs_ok"),
            ("Runs not ok (failed or unfinished)", "runs_not_ok"),
            ("Mean %", "mean_coverage"),
            ("Median %", "median_coverage"),
            ("Projects at 100 %", "projects_full"),
        ],
    );
    let mut table6 = Table::new(
        "table6",
        "Pairwise comparison of coverage (Whisker Table 6): mean Â12 and the number of projects where the first \
         algorithm is significantly better, better, equal, worse and significantly worse.",
        &[
            ("Dataset", "dataset"),
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
        &[
            ("Dataset", "dataset"),
            ("Algorithm", "algorithm"),
            ("Runs", "runs"),
            ("Mutants", "mutants"),
            ("Killed", "killed"),
            ("Excluded", "excluded"),
            ("Timeout", "timeout"),
            ("Kind", "kind"),
            ("Pooled score %", "score"),
            ("95 % low", "score_low"),
            ("95 % high", "score_high"),
            ("Mean of projects %", "mean_project_score"),
        ],
    );
    let mut mutation_operators = Table::new(
        "mutation_operators",
        "Mutation score per operator: pooled over all runs' mutants of the operator (estimate and 95 % interval \
         when sampled), and the mean over projects of the per-project mean run score.",
        &[
            ("Dataset", "dataset"),
            ("Algorithm", "algorithm"),
            ("Operator", "operator"),
            ("Mutants", "mutants"),
            ("Killed", "killed"),
            ("Excluded", "excluded"),
            ("Timeout", "timeout"),
            ("Kind", "kind"),
            ("Pooled score %", "score"),
            ("95 % low", "score_low"),
            ("95 % high", "score_high"),
            ("Mean of projects %", "mean_project_score"),
        ],
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
            coverage.push(vec![
                ds(),
                Cell::text(&r.algorithm),
                Cell::int(r.projects as u64),
                Cell::int(r.runs_ok as u64),
                Cell::int(r.runs_not_ok as u64),
                Cell::opt_pct(r.mean),
                Cell::opt_pct(r.median),
                Cell::int(r.full_projects as u64),
            ]);
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
        let estimate_cells = |e: &Option<crate::estimate::Estimate>| {
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
        for r in &d.mutation {
            let v = &r.verdicts;
            let mut row = vec![
                ds(),
                Cell::text(&r.algorithm),
                Cell::int(r.runs as u64),
                Cell::int(v.total()),
                Cell::int(v.killed),
                Cell::int(v.excluded),
                Cell::int(v.timeout),
            ];
            row.extend(estimate_cells(&r.pooled));
            row.push(Cell::opt_pct(r.mean_project_score));
            mutation.push(row);
        }
        for r in &d.operators {
            let v = &r.verdicts;
            let mut row = vec![
                ds(),
                Cell::text(&r.algorithm),
                Cell::text(&r.operator),
                Cell::int(v.total()),
                Cell::int(v.killed),
                Cell::int(v.excluded),
                Cell::int(v.timeout),
            ];
            row.extend(estimate_cells(&r.pooled));
            row.push(Cell::opt_pct(r.mean_project_score));
            mutation_operators.push(row);
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
        ops.sort_by_key(|o| {
            (crate::load::OPERATORS.iter().position(|x| x == o).unwrap_or(crate::load::OPERATORS.len()), o.to_string())
        });
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

/// The headline tables for the terminal: coverage and Table 6.
pub fn headline(an: &Analysis) -> String {
    let t = tables(an);
    let mut s = String::new();
    let _ = writeln!(s, "Coverage (mean/median over projects of per-project mean coverage, %)");
    s.push_str(&t.coverage.plain());
    if !t.table6.rows.is_empty() {
        let _ = writeln!(
            s,
            "\nPairwise comparison (Â12 exact; Mann-Whitney U two-sided, {}, α = {}{}; --incomplete {})",
            short_method(an.options.p_method),
            an.options.alpha,
            if an.options.holm { ", Holm-adjusted" } else { "" },
            an.options.incomplete.name()
        );
        s.push_str(&t.table6.plain());
    }
    if !t.limit_runs.rows.is_empty() {
        let _ = writeln!(s, "\n{LIMIT_RULE}");
        s.push_str(&t.limit_runs.plain());
    }
    s
}

/// How `limit` runs are treated, stated in every report.
const LIMIT_RULE: &str = "Runs with status `limit` (ended deterministically by the per-run work cap) count as \
results like `ok` runs everywhere, under either `--incomplete` rule: their coverage is the deterministic outcome \
under the study's budget plus the cap.";

fn short_method(m: PMethod) -> &'static str {
    match m {
        PMethod::Asymptotic => "normal approximation with tie and continuity correction",
        PMethod::Exact => "exact permutation p",
    }
}

/// File-name-safe version of a dataset name (unique within the analysis).
fn file_stems(an: &Analysis) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, d) in an.datasets.iter().enumerate() {
        let mut s: String = d
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_' { c } else { '_' })
            .take(60)
            .collect();
        if s.is_empty() || out.contains(&s) {
            s = format!("{s}-{i}");
        }
        out.push(s);
    }
    out
}

fn write_file(path: &Path, content: &[u8]) -> Result<(), AnalysisError> {
    std::fs::write(path, content)
        .map_err(|e| AnalysisError::Output { path: path.display().to_string(), msg: e.to_string() })
}

/// Writes the report folder; returns the files written (relative to `out`), sorted.
pub fn write(an: &Analysis, res: &Results, out: &Path, wo: &WriteOptions) -> Result<Vec<PathBuf>, AnalysisError> {
    let mk = |p: &Path| {
        std::fs::create_dir_all(p)
            .map_err(|e| AnalysisError::Output { path: p.display().to_string(), msg: e.to_string() })
    };
    mk(out)?;
    let mut written: Vec<PathBuf> = Vec::new();
    let t = tables(an);
    let mut csv_tables = vec![
        &t.coverage,
        &t.table6,
        &t.pairs,
        &t.excluded,
        &t.full_coverage,
        &t.suite_size,
        &t.suite_size_a12,
        &t.mutation,
        &t.mutation_operators,
        &t.mutation_operators_wide,
        &t.size_correlation,
    ];
    // Only studies with capped runs get this file, so other reports keep their file list.
    if !t.limit_runs.rows.is_empty() {
        csv_tables.push(&t.limit_runs);
    }
    // Likewise only studies whose runs carry sequence coverage get its tables.
    let seq = &t.sequence;
    let has_seq = !seq.coverage.rows.is_empty();
    if has_seq {
        csv_tables.extend([&seq.coverage, &seq.table6, &seq.correlation]);
    }
    for table in csv_tables {
        let name = format!("{}.csv", table.name);
        write_file(&out.join(&name), table.csv().as_bytes())?;
        written.push(name.into());
    }
    let mut tex_tables =
        vec![&t.coverage, &t.table6, &t.full_coverage, &t.suite_size, &t.mutation, &t.mutation_operators_wide];
    if has_seq {
        tex_tables.extend([&seq.coverage, &seq.table6]);
    }
    for table in tex_tables {
        let name = format!("{}.tex", table.name);
        write_file(&out.join(&name), table.latex().as_bytes())?;
        written.push(name.into());
    }
    if an.datasets.iter().any(|d| !d.curves.is_empty()) {
        write_file(&out.join("coverage_over_time.csv"), coverage_over_time_csv(an).as_bytes())?;
        written.push("coverage_over_time.csv".into());
    }
    let sizes = project_sizes_csv(an);
    write_file(&out.join("project_sizes.csv"), sizes.as_bytes())?;
    written.push("project_sizes.csv".into());
    if wo.per_run_timelines {
        if let Some(files) = per_run_timelines(an, res, out)? {
            written.extend(files);
        }
    }
    let stems = file_stems(an);
    let mut images: Vec<Vec<(String, String)>> = vec![Vec::new(); an.datasets.len()];
    if wo.plots {
        mk(&out.join("img"))?;
        for (i, d) in an.datasets.iter().enumerate() {
            for (kind, caption, stem) in draw_dataset(an, d, &out.join("img"), &stems[i])? {
                written.push(format!("img/{stem}.png").into());
                written.push(format!("img/{stem}.svg").into());
                images[i].push((kind, format!("![{caption}](img/{stem}.png)")));
            }
        }
    }
    let md = markdown(an, res, &t, &images, wo);
    write_file(&out.join("report.md"), md.as_bytes())?;
    written.push("report.md".into());
    written.sort();
    Ok(written)
}

fn coverage_over_time_csv(an: &Analysis) -> String {
    let mut s = String::from("dataset,algorithm,steps,seconds,mean,ci_low,ci_high,projects,runs\n");
    for d in &an.datasets {
        for c in &d.curves {
            for p in &c.points {
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{},{},{},{}",
                    csv_quote(&d.name),
                    csv_quote(&c.algorithm),
                    p.steps,
                    float_csv(p.steps as f64 / STEPS_PER_SECOND as f64),
                    float_csv(p.mean),
                    float_csv(p.lo),
                    float_csv(p.hi),
                    c.projects,
                    c.runs
                );
            }
        }
    }
    s
}

fn project_sizes_csv(an: &Analysis) -> String {
    let mut s = String::from("dataset,project,total_targets\n");
    for d in &an.datasets {
        for (p, t) in &d.sizes {
            let _ = writeln!(s, "{},{},{t}", csv_quote(&d.name), csv_quote(p));
        }
    }
    s
}

/// Whisker-style (`0,1000,2000,…` ms columns, one per Scratch second) and Pynguin-style
/// (`CoverageTimeline_T1..Tn`, one per grid interval) per-run coverage timelines, streamed.
fn per_run_timelines(an: &Analysis, res: &Results, out: &Path) -> Result<Option<Vec<PathBuf>>, AnalysisError> {
    let Some(tl) = &res.timeline else { return Ok(None) };
    let end = an.grid_end;
    let per_second = Grid { unit: GridUnit::Seconds, step: STEPS_PER_SECOND };
    let seconds = per_second.len(end);
    let grid = an.options.grid;
    let intervals = grid.len(end) - 1;
    let ioerr =
        |p: &Path, e: std::io::Error| AnalysisError::Output { path: p.display().to_string(), msg: e.to_string() };
    let wpath = out.join("timeline_whisker.csv");
    let ppath = out.join("timeline_pynguin.csv");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&wpath).map_err(|e| ioerr(&wpath, e))?);
    let mut p = std::io::BufWriter::new(std::fs::File::create(&ppath).map_err(|e| ioerr(&ppath, e))?);
    let mut head = String::from(
        "projectName,configName,seed,dataset,fitnessFunctionCount,coveredFitnessFunctionCount,bestCoverage,\
         minimizedTests,minimizedEvents,timeToReachFullCoverage",
    );
    for k in 0..seconds {
        let _ = write!(head, ",{}", k * 1000);
    }
    head.push('\n');
    w.write_all(head.as_bytes()).map_err(|e| ioerr(&wpath, e))?;
    let mut head = String::from("TargetModule,ConfigurationId,RandomSeed,Dataset,Coverage");
    for k in 1..=intervals {
        let _ = write!(head, ",CoverageTimeline_T{k}");
    }
    head.push('\n');
    p.write_all(head.as_bytes()).map_err(|e| ioerr(&ppath, e))?;
    let mut sec_vals = vec![0.0; seconds];
    let mut grid_vals = vec![0.0; intervals + 1];
    let opt = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
    for (i, r) in res.runs.iter().enumerate() {
        if !r.has_result() || !tl.has(i) {
            continue;
        }
        let Some(total) = curves::total_of(res, tl, i) else { continue };
        curves::run_on_grid(tl, i, total, per_second, &mut sec_vals);
        curves::run_on_grid(tl, i, total, grid, &mut grid_vals);
        let (proj, alg, ds) = (
            &res.projects[r.project as usize],
            &res.algorithms[r.algorithm as usize],
            &res.datasets[r.dataset as usize],
        );
        let full_ms = tl
            .points(i)
            .find(|&(_, c)| c as u64 >= total)
            .map(|(s, _)| float_csv(s as f64 * 1000.0 / STEPS_PER_SECOND as f64))
            .unwrap_or_default();
        let mut line = format!(
            "{},{},{},{},{},{},{},{},{},{}",
            csv_quote(proj),
            csv_quote(alg),
            r.seed,
            csv_quote(ds),
            total,
            opt(r.covered),
            r.coverage.map(float_csv).unwrap_or_default(),
            opt(r.tests_after_min),
            opt(r.events_after_min),
            full_ms
        );
        for v in &sec_vals {
            line.push(',');
            line.push_str(&float_csv(*v));
        }
        line.push('\n');
        w.write_all(line.as_bytes()).map_err(|e| ioerr(&wpath, e))?;
        let mut line = format!(
            "{},{},{},{},{}",
            csv_quote(proj),
            csv_quote(alg),
            r.seed,
            csv_quote(ds),
            r.coverage.map(float_csv).unwrap_or_default()
        );
        for v in &grid_vals[1..] {
            line.push(',');
            line.push_str(&float_csv(*v));
        }
        line.push('\n');
        p.write_all(line.as_bytes()).map_err(|e| ioerr(&ppath, e))?;
    }
    w.flush().map_err(|e| ioerr(&wpath, e))?;
    p.flush().map_err(|e| ioerr(&ppath, e))?;
    Ok(Some(vec!["timeline_pynguin.csv".into(), "timeline_whisker.csv".into()]))
}

/// Draws the plots of one dataset; returns (section, caption, file stem) per plot.
fn draw_dataset(
    an: &Analysis,
    d: &DatasetAnalysis,
    dir: &Path,
    stem: &str,
) -> Result<Vec<(String, String, String)>, AnalysisError> {
    let mut out = Vec::new();
    let grid = an.options.grid;
    if !d.curves.is_empty() {
        let x_end = grid.axis(an.grid_end);
        let series = d
            .curves
            .iter()
            .map(|c| Series {
                name: c.algorithm.clone(),
                points: c.points.iter().map(|p| (grid.axis(p.steps), p.mean * 100.0)).collect(),
                band: c
                    .points
                    .iter()
                    .filter(|p| p.lo.is_finite())
                    .map(|p| (grid.axis(p.steps), (p.lo * 100.0).max(0.0), (p.hi * 100.0).min(100.0)))
                    .collect(),
            })
            .collect();
        let plot = LinePlot {
            title: format!("Mean coverage over time — {}", d.name),
            x_label: grid.axis_label().into(),
            y_label: "coverage (%), band: 95 % CI over projects".into(),
            x_range: (0.0, x_end),
            y_range: (0.0, 100.0),
            series,
        };
        let s = format!("coverage_over_time_{stem}");
        plots::render(&plot, &dir.join(&s))?;
        out.push(("time".into(), format!("Coverage over time, {}", d.name), s));
    }
    if d.coverage.iter().any(|c| !c.per_project.is_empty()) {
        let plot = BoxPlot {
            title: format!("Coverage per project — {}", d.name),
            x_label: "algorithm".into(),
            y_label: "mean coverage per project (%)".into(),
            // Zoom to the data (in steps of 10 %) so small differences near 100 % stay visible.
            y_range: {
                let min = d.coverage.iter().flat_map(|c| &c.per_project).fold(1.0f64, |a, &b| a.min(b)) * 100.0;
                (((min - 5.0) / 10.0).floor().max(0.0) * 10.0, 101.0)
            },
            boxes: d
                .coverage
                .iter()
                .map(|c| (c.algorithm.clone(), c.per_project.iter().map(|v| v * 100.0).collect()))
                .collect(),
            reference: None,
        };
        let s = format!("coverage_boxplot_{stem}");
        plots::render(&plot, &dir.join(&s))?;
        out.push(("coverage".into(), format!("Coverage per project, {}", d.name), s));
    }
    if d.comparisons.iter().any(|c| !c.projects.is_empty()) {
        let plot = BoxPlot {
            title: format!("Â12 per project — {}", d.name),
            x_label: "comparison (A vs B; Â12 > 0.5: A better)".into(),
            y_label: "Â12".into(),
            y_range: (0.0, 1.0),
            boxes: d
                .comparisons
                .iter()
                .map(|c| (comparison_label(c), c.projects.iter().map(|p| p.counts.a12()).collect()))
                .collect(),
            reference: Some(0.5),
        };
        let s = format!("a12_{stem}");
        plots::render(&plot, &dir.join(&s))?;
        out.push(("a12".into(), format!("Â12 distribution, {}", d.name), s));
    }
    if !d.operators.is_empty() {
        let mut ops: Vec<String> = Vec::new();
        for r in &d.operators {
            if !ops.contains(&r.operator) {
                ops.push(r.operator.clone());
            }
        }
        // Keep the report order of operators (rows come per algorithm in that order).
        ops.sort_by_key(|o| {
            (crate::load::OPERATORS.iter().position(|x| x == o).unwrap_or(crate::load::OPERATORS.len()), o.clone())
        });
        let series = d
            .algorithms
            .iter()
            .map(|a| {
                let vals = ops
                    .iter()
                    .map(|o| {
                        d.operators
                            .iter()
                            .find(|r| &r.algorithm == a && &r.operator == o)
                            .and_then(|r| r.verdicts.score())
                            .map(|s| s * 100.0)
                    })
                    .collect();
                (a.clone(), vals)
            })
            .collect();
        let plot = BarPlot {
            title: format!("Mutation score per operator — {}", d.name),
            x_label: "mutation operator".into(),
            y_label: "killed / (generated − excluded) (%)".into(),
            y_range: (0.0, 105.0),
            categories: ops,
            series,
        };
        let s = format!("mutation_operators_{stem}");
        plots::render(&plot, &dir.join(&s))?;
        out.push(("mutation".into(), format!("Mutation score per operator, {}", d.name), s));
    }
    if !d.sizes.is_empty() {
        let values: Vec<f64> = d.sizes.iter().map(|(_, t)| *t as f64).collect();
        let plot = Histogram::from_values(
            &format!("Project size — {}", d.name),
            "targets (statements) per project",
            &values,
            20,
        );
        let s = format!("project_sizes_{stem}");
        plots::render(&plot, &dir.join(&s))?;
        out.push(("size".into(), format!("Project sizes, {}", d.name), s));
    }
    Ok(out)
}

fn markdown(an: &Analysis, res: &Results, t: &Tables, images: &[Vec<(String, String)>], wo: &WriteOptions) -> String {
    let o = &an.options;
    let mut s = String::new();
    let img = |kind: &str| -> String {
        let mut x = String::new();
        for imgs in images {
            for (k, link) in imgs {
                if k == kind {
                    let _ = writeln!(x, "{link}\n");
                }
            }
        }
        x
    };
    let _ = writeln!(s, "# Analysis report: {}\n", wo.title);
    let _ = writeln!(s, "Written by `clowder analyze`. All CSV files hold full-precision values; `.tex` files are");
    let _ = writeln!(s, "booktabs tables (`\\usepackage{{booktabs}}`).\n");

    let _ = writeln!(s, "## Inputs\n");
    for f in &res.files {
        let _ = writeln!(s, "- `{}`: {} rows", f.name, f.rows);
    }
    let _ = writeln!(
        s,
        "- {} dataset(s), {} project(s), {} algorithm configuration(s): {}",
        res.datasets.len(),
        res.projects.len(),
        res.algorithms.len(),
        res.algorithms.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ")
    );
    for d in &an.datasets {
        let st: Vec<String> = d.statuses.iter().map(|(k, v)| format!("{v} {k}")).collect();
        let _ = writeln!(s, "- dataset `{}`: {} projects; runs: {}", d.name, d.projects, st.join(", "));
    }
    for n in &res.notes {
        let _ = writeln!(s, "- note: {n}");
    }
    s.push('\n');

    let _ = writeln!(s, "## Conventions\n");
    let _ = writeln!(
        s,
        "- **Unit of analysis**: the project. Coverage summaries first average each project's runs with a result \
         (one per seed), then take the mean and median over projects."
    );
    let _ = writeln!(
        s,
        "- **Â12** (Vargha-Delaney): in \"A vs B\", A is the first sample. Â12 = P(A > B) + ½·P(A = B), counted \
         exactly over all pairs of runs (ties detected with `==` count one half). **Equal** means Â12 is exactly 0.5."
    );
    let _ = writeln!(
        s,
        "- **Mann-Whitney U**: U of A, two-sided p-value, {}. When all values are tied the test is not significant \
         (p = 1). Significant means p < α = {}{}.",
        o.p_method.name(),
        o.alpha,
        if o.holm {
            "; p-values are Holm-adjusted within each comparison (dataset, A vs B) across its projects"
        } else {
            "; p-values are not adjusted for multiple comparisons"
        }
    );
    let _ = writeln!(
        s,
        "- **Table 6** (as in the Whisker paper): **Better** = projects with Â12 > 0.5, **Sig better** = those of \
         them with p < α; **Equal** = Â12 = 0.5; **Worse** = Â12 < 0.5, **Sig worse** = those of them with p < α. \
         Better + Equal + Worse = projects compared. The Â12 column is the mean over compared projects."
    );
    let _ = writeln!(
        s,
        "- **Incomplete repetitions**: {}; cells lacking a result for some seed, and why, are in `excluded.csv`.",
        o.incomplete.describe()
    );
    let _ = writeln!(s, "- **`limit` runs**: {LIMIT_RULE}");
    let _ = writeln!(s, "- **Magnitude** of Â12: {}.", o.thresholds.describe());
    if an.grid_end > 0 {
        let _ = writeln!(
            s,
            "- **Coverage over time**: each run's coverage at a grid time is its covered count at the last change \
             point at or before that time, over its total targets; after the run's last point the final value \
             carries forward. Grid: every {} step(s) ({}) up to {} steps. Curves are the mean over projects of \
             each project's mean over runs; the band is the 95 % confidence interval of that mean (Student t over \
             projects).",
            o.grid.step,
            match o.grid.unit {
                GridUnit::Seconds => format!("{} Scratch s", float_csv(o.grid.step as f64 / STEPS_PER_SECOND as f64)),
                GridUnit::Steps => "VM steps".into(),
            },
            an.grid_end
        );
    }
    let _ = writeln!(s, "- **Time**: 30 VM steps are one Scratch second.");
    let _ = writeln!(
        s,
        "- **Box plots**: box = quartiles, black line = median, whiskers = the most extreme values within 1.5 IQR \
         of the box, ▲ = mean, ○ = outliers.\n"
    );

    let _ = writeln!(s, "## Coverage\n");
    s.push_str(&t.coverage.markdown());
    s.push('\n');
    s.push_str(&img("coverage"));

    let _ = writeln!(s, "## Pairwise comparison (Table 6)\n");
    if t.table6.rows.is_empty() {
        let _ = writeln!(s, "No comparison: fewer than two algorithms per dataset.\n");
    } else {
        s.push_str(&t.table6.markdown());
        s.push('\n');
        for d in &an.datasets {
            for c in &d.skipped_comparisons {
                let _ = writeln!(s, "- `{}`: {c} not compared (an algorithm has no runs there)", d.name);
            }
        }
        let _ = writeln!(
            s,
            "Excluded: projects left out under `--incomplete {}` (see Conventions). Per-project values (n A, n B, \
             U, Â12, p, magnitude, verdict): `pairs.csv`.\n",
            o.incomplete.name()
        );
        s.push_str(&img("a12"));
    }
    if !t.limit_runs.rows.is_empty() {
        let _ = writeln!(s, "### Runs ended by the work cap\n");
        let _ = writeln!(s, "Runs with status `limit`, counted as results (see Conventions); also `limit_runs.csv`.\n");
        s.push_str(&t.limit_runs.markdown());
        s.push('\n');
    }
    if !t.excluded.rows.is_empty() {
        let _ = writeln!(s, "### Incomplete repetitions\n");
        let mut shown = t.excluded.clone();
        let total = shown.rows.len();
        shown.rows.truncate(20);
        s.push_str(&shown.markdown());
        if total > 20 {
            let _ = writeln!(s, "\n… {} more in `excluded.csv`.", total - 20);
        }
        s.push('\n');
    }

    let _ = writeln!(s, "## Coverage over time\n");
    if an.datasets.iter().all(|d| d.curves.is_empty()) {
        let _ = writeln!(s, "Not available (needs `timeline.csv`).\n");
    } else {
        s.push_str(&img("time"));
        let _ = writeln!(s, "Values on the grid: `coverage_over_time.csv`.");
        if wo.per_run_timelines {
            let _ = writeln!(
                s,
                "Per-run timelines: `timeline_whisker.csv` (Whisker's columns with one column per Scratch second, \
                 headed by milliseconds `0,1000,…`; the value at second k is the coverage reached at step 30·k, \
                 not rounded to the nearest second as Whisker's wall clock does) and `timeline_pynguin.csv` \
                 (`CoverageTimeline_T1..Tn`, Tk = coverage at the end of the k-th grid interval)."
            );
        } else {
            let _ = writeln!(
                s,
                "Per-run timelines (Whisker per-second columns, Pynguin `CoverageTimeline_T1..Tn`) are written with \
                 `--per-run-timelines`."
            );
        }
        s.push('\n');
    }

    let _ = writeln!(s, "## Time to full coverage\n");
    let src = an.datasets.first().map(|d| d.full_coverage_source).unwrap_or(FullCoverageSource::CoverageOnly);
    let _ = writeln!(
        s,
        "{}\n",
        match src {
            FullCoverageSource::Column => "From `steps_to_full_coverage`; times are over the runs that reached 100 %.",
            FullCoverageSource::Timeline =>
                "From the timeline (first change point with every target covered); times are over the runs that \
                 reached 100 %.",
            FullCoverageSource::CoverageOnly =>
                "Only whether 100 % was reached (no `steps_to_full_coverage` column and no timeline, so no times).",
        }
    );
    s.push_str(&t.full_coverage.markdown());
    s.push('\n');

    let _ = writeln!(s, "## Test-suite size on projects with equal coverage\n");
    if !an.has_tests && !an.has_events {
        let _ = writeln!(s, "Not available (runs has neither `tests_after_min` nor `events_after_min`).\n");
    } else {
        let _ = writeln!(
            s,
            "Projects where every run (`ok` or `limit`) of every algorithm reaches exactly the same coverage and every \
             algorithm has complete repetitions. Whisker counts events (after minimisation).\n"
        );
        s.push_str(&t.suite_size.markdown());
        s.push('\n');
        if !t.suite_size_a12.rows.is_empty() {
            s.push_str(&t.suite_size_a12.markdown());
            s.push('\n');
        }
    }

    let _ = writeln!(s, "## Mutation analysis\n");
    if t.mutation.rows.is_empty() {
        let _ = writeln!(s, "No mutation data (mutation analysis off, or the columns/files are absent).\n");
    } else {
        s.push_str(&t.mutation.markdown());
        s.push('\n');
        if t.mutation_operators.rows.is_empty() {
            let _ = writeln!(s, "Per-operator scores need `mutants.csv`.\n");
        } else {
            s.push_str(&t.mutation_operators_wide.markdown());
            let _ = writeln!(
                s,
                "\nCounts per operator (generated, killed, excluded, timeout): `mutation_operators.csv`.\n"
            );
            s.push_str(&img("mutation"));
        }
    }

    sequence::markdown_section(&mut s, an, &t.sequence);

    let _ = writeln!(s, "## Project size\n");
    if an.datasets.iter().all(|d| d.sizes.is_empty()) {
        let _ = writeln!(s, "Not available (needs `total_targets`).\n");
    } else {
        s.push_str(&img("size"));
        s.push_str(&t.size_correlation.markdown());
        let _ = writeln!(s, "\nSizes per project: `project_sizes.csv`.\n");
    }
    s
}
