//! `clowder mutate PROJECT…`: mutation analysis of generated suites (Whisker
//! RQ4) — generate a suite per project, replay it with its assertions on every
//! mutant, print mutation scores overall and per operator. `--suite SUITE.js`
//! analyses a hand-written Whisker suite instead (`docs/testing.md`). `--list` only
//! enumerates the mutants.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use clowder_analysis::estimate::{self, Stratum};
use clowder_testgen::mutation::{self, MutationReport, Operator, OperatorSummary};
use clowder_testgen::{Algorithm, AlgorithmConfig, Budget, MutationMode, RunOptions};

/// Arguments of `clowder mutate`.
#[derive(clap::Args, Debug)]
pub struct MutateArgs {
    /// Project files (`.sb3` or `project.json`).
    #[arg(required = true)]
    pub projects: Vec<PathBuf>,
    /// Search algorithm generating the suites: random, mosa or mio.
    #[arg(long, default_value = "mio")]
    pub algorithm: String,
    /// Run seed (generation, replays and sampling).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Generation budget in VM steps (the Whisker study's: 180000).
    #[arg(long, default_value_t = 180_000)]
    pub budget_steps: u64,
    /// Analyse at most N mutants per operator (seeded sample) instead of all.
    #[arg(long)]
    pub sample: Option<u32>,
    /// Only list each project's mutants (id, operator, block, change).
    #[arg(long)]
    pub list: bool,
    /// Write `mutants.csv` (one row per verdict) and `summary.csv` into this folder.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Analyse this hand-written Whisker suite (JavaScript) instead of a generated one.
    #[arg(long)]
    pub suite: Option<PathBuf>,
    /// Mutants replayed at once with `--suite` (default: available cores); the verdicts do
    /// not depend on it.
    #[arg(long)]
    pub workers: Option<usize>,
}

fn pct(s: Option<f64>) -> String {
    s.map_or("-".into(), |v| format!("{:.2} %", v * 100.0))
}

fn row(name: &str, s: &OperatorSummary, strata: &[Stratum], sampled: bool) -> String {
    let mut line = format!(
        "{name:<8} {:>9} {:>8} {:>9} {:>8} {:>9} {:>9}",
        s.generated,
        s.killed,
        s.survived,
        s.timeout,
        s.excluded,
        pct(s.score())
    );
    if sampled {
        // The plain ratio over-weights strata kept whole (small projects); the weighted
        // estimate is unbiased for the score over every mutant (analysis::estimate).
        let e = estimate::pooled(strata);
        let _ =
            write!(line, " {:>9}  [{}, {}]", pct(e.map(|e| e.score)), pct(e.map(|e| e.low)), pct(e.map(|e| e.high)));
    }
    line
}

fn header(sampled: bool) -> String {
    let mut h = format!(
        "{:<8} {:>9} {:>8} {:>9} {:>8} {:>9} {:>9}",
        "operator", "mutants", "killed", "survived", "timeout", "excluded", "score"
    );
    if sampled {
        let _ = write!(h, " {:>9}  95 % interval", "weighted");
    }
    h
}

/// A run's stratum of one operator: its enumerated mutants and the verdicts of those analysed.
fn stratum(s: &OperatorSummary) -> Stratum {
    Stratum {
        population: u64::from(s.enumerated),
        sampled: u64::from(s.generated),
        killed: u64::from(s.killed),
        excluded: u64::from(s.excluded),
    }
}

/// One CSV field, quoted when it needs to be.
pub(crate) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

/// Runs `clowder mutate`.
pub fn run(args: MutateArgs) -> anyhow::Result<ExitCode> {
    let algorithm = Algorithm::parse(&args.algorithm).map_err(anyhow::Error::msg)?;
    let cfg = AlgorithmConfig::new(algorithm);
    cfg.validate().map_err(anyhow::Error::msg)?;
    if args.budget_steps == 0 {
        bail!("the budget must be positive");
    }
    let mode = match args.sample {
        Some(0) => bail!("--sample must be positive"),
        Some(n) => MutationMode::SamplePerOperator(n),
        None => MutationMode::All,
    };
    let suite = args.suite.as_deref().map(clowder_suites::Suite::load).transpose()?;
    let workers =
        args.workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get)).max(1);
    let mut total = OperatorSummary::default();
    let mut per_op: Vec<OperatorSummary> =
        Operator::ALL.iter().map(|&o| OperatorSummary { operator: Some(o), ..Default::default() }).collect();
    let mut project_scores = Vec::new();
    // Per operator, one stratum per project (the weighted estimate of a sample).
    let mut strata: Vec<Vec<Stratum>> = vec![Vec::new(); Operator::ALL.len()];
    let mut verdict_csv = String::from("project,mutant_id,operator,block_id,detail,verdict,test,event\n");
    let mut summary_csv =
        String::from("project,operator,mutants,killed,survived,timeout,excluded,score,excluded_tests,tests,coverage\n");
    for path in &args.projects {
        let project = clowder_vm::Project::load_path(path, &clowder_vm::LoadLimits::default())
            .with_context(|| format!("loading {}", path.display()))?;
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        if args.list {
            for m in mutation::enumerate(&project) {
                println!("{name} {} {} {} {}", m.id, m.operator, m.block_id, m.detail);
            }
            continue;
        }
        let started = Instant::now();
        let (report, tests, coverage) = match &suite {
            Some(suite) => {
                let limits = clowder_suites::Limits::default();
                let m = clowder_suites::mutation::analyse(
                    suite,
                    &Arc::new(project),
                    &name,
                    args.seed,
                    &limits,
                    mode,
                    workers,
                );
                println!(
                    "{name}: suite {} ({} tests, {} pass on the original), {} mutants ({} enumerated), {} excluded \
                     tests, score {}, {:.2} s",
                    suite.name(),
                    suite.tests().len(),
                    m.original.count(clowder_suites::Status::Pass),
                    m.report.total.generated,
                    m.report.enumerated,
                    m.report.excluded_tests,
                    pct(m.report.score()),
                    started.elapsed().as_secs_f64()
                );
                (m.report, suite.tests().len(), String::new())
            }
            None => {
                let outcome = clowder_testgen::generate_with(
                    Arc::new(project),
                    &cfg,
                    args.seed,
                    Budget::Steps(args.budget_steps),
                    &RunOptions { mutation: mode, ..RunOptions::default() },
                    &mut |_| {},
                )?;
                let Some(report): Option<MutationReport> = outcome.mutation.clone() else {
                    bail!("no mutation report")
                };
                let assertions: usize = outcome.suite.iter().flat_map(|t| &t.assertions).map(Vec::len).sum();
                println!(
                    "{name}: coverage {:.4}, {} tests, {} events, {} assertions, {} mutants ({} enumerated), {} excluded \
                     tests, score {}, {} replay steps, {:.2} s",
                    outcome.coverage,
                    outcome.suite.len(),
                    outcome.events_after_min,
                    assertions,
                    report.total.generated,
                    report.enumerated,
                    report.excluded_tests,
                    pct(report.score()),
                    report.steps,
                    started.elapsed().as_secs_f64()
                );
                (report, outcome.suite.len(), outcome.coverage.to_string())
            }
        };
        for s in report.per_operator.iter().chain(std::iter::once(&report.total)) {
            let op = s.operator.map_or("all".to_string(), |o| o.name().to_string());
            let _ = writeln!(
                summary_csv,
                "{},{op},{},{},{},{},{},{},{},{},{}",
                csv_field(&name),
                s.generated,
                s.killed,
                s.survived,
                s.timeout,
                s.excluded,
                s.score().map_or(String::new(), |v| v.to_string()),
                report.excluded_tests,
                tests,
                coverage
            );
        }
        for v in &report.verdicts {
            let _ = writeln!(
                verdict_csv,
                "{},{},{},{},{},{},{},{}",
                csv_field(&name),
                v.mutant_id,
                v.operator,
                csv_field(&v.block_id),
                csv_field(&v.detail),
                v.verdict.as_str(),
                v.test.map_or(String::new(), |t| t.to_string()),
                v.event.map_or(String::new(), |e| e.to_string())
            );
        }
        // A sampled project's own score is weighted too (its operators' strata differ in size).
        let own: Vec<Stratum> = report.per_operator.iter().map(stratum).collect();
        let score = if args.sample.is_some() { estimate::pooled(&own).map(|e| e.score) } else { report.score() };
        if let Some(s) = score {
            project_scores.push(s);
        }
        for ((acc, st), s) in per_op.iter_mut().zip(&mut strata).zip(&report.per_operator) {
            st.push(stratum(s));
            acc.generated += s.generated;
            acc.killed += s.killed;
            acc.survived += s.survived;
            acc.timeout += s.timeout;
            acc.excluded += s.excluded;
        }
        total.generated += report.total.generated;
        total.killed += report.total.killed;
        total.survived += report.total.survived;
        total.timeout += report.total.timeout;
        total.excluded += report.total.excluded;
    }
    if args.list {
        return Ok(ExitCode::SUCCESS);
    }
    println!();
    match &suite {
        Some(suite) => println!(
            "{} projects, suite {} seed {}, mutation {}",
            args.projects.len(),
            suite.name(),
            args.seed,
            mode.as_string()
        ),
        None => println!(
            "{} projects, {} seed {}, {} steps, mutation {}",
            args.projects.len(),
            algorithm.name(),
            args.seed,
            args.budget_steps,
            mode.as_string()
        ),
    }
    let sampled = args.sample.is_some();
    println!("{}", header(sampled));
    for (s, st) in per_op.iter().zip(&strata) {
        println!("{}", row(s.operator.map_or("?", |o| o.name()), s, st, sampled));
    }
    let all: Vec<Stratum> = strata.concat();
    println!("{}", row("all", &total, &all, sampled));
    if sampled {
        println!(
            "score: analysed mutants pooled (biased towards projects whose mutants were all kept); \
             weighted: each verdict counts (its operator's mutants in the project) / (analysed), an \
             unbiased estimate of the score over every mutant, with its 95 % interval (docs/mutation.md)"
        );
    }
    if !project_scores.is_empty() {
        let mean = project_scores.iter().sum::<f64>() / project_scores.len() as f64;
        println!("mean of per-project scores: {:.2} % ({} projects)", mean * 100.0, project_scores.len());
    }
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        std::fs::write(dir.join("mutants.csv"), verdict_csv).context("writing mutants.csv")?;
        std::fs::write(dir.join("summary.csv"), summary_csv).context("writing summary.csv")?;
    }
    Ok(ExitCode::SUCCESS)
}
