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
use clowder_testgen::mutation::{self, Operator, OperatorSummary};
use clowder_testgen::{Algorithm, AlgorithmConfig, Budget, MutationMode, RunOptions};

/// Arguments of `clowder mutate`.
#[derive(clap::Args, Debug)]
pub struct MutateArgs {
    /// Project files (`.sb3` or `project.json`).
    #[arg(required = true)]
    pub projects: Vec<PathBuf>,
    /// Search algorithm generating the suites: random, mosa, mio or neatest.
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
    /// Only write each project's mutants (all, or the `--sample`) as project files into
    /// DIR/<project>/ (`<mutant id>.sb3`, the original's assets unchanged) with a
    /// `mutants.csv`, for other tools to run; no analysis.
    #[arg(long, value_name = "DIR", conflicts_with = "list")]
    pub write_mutants: Option<PathBuf>,
    /// Write `mutants.csv` (one row per verdict) and `summary.csv` into this folder.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Analyse this hand-written Whisker suite (JavaScript) instead of a generated one.
    #[arg(long)]
    pub suite: Option<PathBuf>,
    /// Mutants judged at once (default: available cores); the verdicts do not depend on it.
    #[arg(long)]
    pub workers: Option<usize>,
    /// Stop judging once the analysis' work reaches N work units (about nanoseconds; studies
    /// use the run's work cap): the mutants are then judged in a seeded random order, and
    /// those left are reported as unjudged. Default: none, every mutant.
    #[arg(long, value_name = "N")]
    pub work_cap: Option<u64>,
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

/// Work units per CPU-second, as calibrated over the corpora (docs/vm.md "Work cap": median
/// 0.97 CPU-s per 10⁹ units, spread within a factor of 3): turns the plan's work into the
/// time stated before the analysis starts. An estimate, and printed as one.
const UNITS_PER_CPU_SECOND: f64 = 1e9;

/// The plan of a project's analysis up front, then a progress line on stderr every few
/// seconds (verdicts so far, killed, work done against the expected work).
struct ProgressLine {
    name: String,
    workers: usize,
    plan: mutation::analysis::Plan,
    killed: usize,
    work: u64,
    started: Instant,
    last: Instant,
}

impl ProgressLine {
    fn new(name: &str, workers: usize) -> Self {
        let now = Instant::now();
        ProgressLine {
            name: name.to_string(),
            workers,
            plan: mutation::analysis::Plan::default(),
            killed: 0,
            work: 0,
            started: now,
            last: now,
        }
    }

    fn see(&mut self, p: &mutation::analysis::Progress) {
        use mutation::analysis::Progress;
        match p {
            Progress::Plan(plan) => {
                self.plan = *plan;
                self.started = Instant::now();
                let cpu = |units: u64| units as f64 / UNITS_PER_CPU_SECOND;
                let w = self.workers as f64;
                eprintln!(
                    "{}: {} mutants, {} reached by a test (built and replayed; the other {} pass exactly as the \
                     original, no replay). Expected {:.1}·10⁹ work units ≈ {} CPU ({} wall on {} workers), at \
                     most {:.1}·10⁹ ≈ {} wall",
                    self.name,
                    plan.mutants,
                    plan.replayed,
                    plan.mutants - plan.replayed,
                    plan.expected_work as f64 / 1e9,
                    human_s(cpu(plan.expected_work)),
                    human_s(cpu(plan.expected_work) / w),
                    self.workers,
                    plan.bound_work as f64 / 1e9,
                    human_s(cpu(plan.bound_work) / w),
                );
            }
            Progress::Judged { done, verdict, work } => {
                self.work = self.work.saturating_add(*work);
                if verdict.verdict == mutation::Verdict::Killed {
                    self.killed += 1;
                }
                let now = Instant::now();
                if now.duration_since(self.last).as_secs() >= 10 || *done == self.plan.mutants {
                    self.last = now;
                    eprintln!(
                        "{}: {done}/{} mutants judged, {} killed, {:.1}/{:.1}·10⁹ expected work units, {} elapsed",
                        self.name,
                        self.plan.mutants,
                        self.killed,
                        self.work as f64 / 1e9,
                        self.plan.expected_work as f64 / 1e9,
                        human_s(now.duration_since(self.started).as_secs_f64())
                    );
                }
            }
        }
    }
}

/// Seconds as `12.3 s`, `4.5 min` or `1.2 h`.
fn human_s(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.1} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
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
        if let Some(dir) = &args.write_mutants {
            let chosen = mutation::select(&mutation::enumerate(&project), mode, args.seed);
            let n = super::mutate_write::write(path, &name, &project, &chosen, dir)?;
            println!("{name}: {n} of {} mutants written to {}", chosen.len(), dir.join(&name).display());
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
                let project = Arc::new(project);
                let prepared = clowder_testgen::Prepared::new(&project);
                // The suite first (as a run with mutation analysis generates it, assertions
                // included), then the analysis with a plan up front and progress.
                let outcome = clowder_testgen::generate_prepared_with(
                    Arc::clone(&project),
                    &prepared,
                    &cfg,
                    args.seed,
                    Budget::Steps(args.budget_steps),
                    &RunOptions { mutation: MutationMode::Off, ..RunOptions::default() },
                    &mut |_| {},
                )?;
                eprintln!(
                    "{name}: suite of {} tests generated (coverage {:.4}, {:.1} s); replaying it on the original",
                    outcome.suite.len(),
                    outcome.coverage,
                    started.elapsed().as_secs_f64()
                );
                let mut shown = ProgressLine::new(&name, workers);
                let analysed = clowder_testgen::analyse_suite_parallel(
                    project,
                    &prepared,
                    &cfg,
                    args.seed,
                    &outcome.suite,
                    mode,
                    args.work_cap.filter(|&n| n > 0),
                    workers,
                    &mut |p| shown.see(p),
                )?;
                let Some((report, meter)) = analysed else { bail!("no mutation report") };
                let assertions: usize = outcome.suite.iter().flat_map(|t| &t.assertions).map(Vec::len).sum();
                println!(
                    "{name}: coverage {:.4}, {} tests, {} events, {} assertions, {} mutants ({} enumerated), {} excluded \
                     tests, score {}, {} replay steps, {:.2} s (analysis {:.2}·10⁹ work units, {} workers)",
                    outcome.coverage,
                    outcome.suite.len(),
                    outcome.events_after_min,
                    assertions,
                    report.total.generated,
                    report.enumerated,
                    report.excluded_tests,
                    pct(report.score()),
                    report.steps,
                    started.elapsed().as_secs_f64(),
                    meter.total() as f64 / 1e9,
                    workers
                );
                if report.unjudged > 0 {
                    println!(
                        "{name}: the work cap left {} of {} mutants unjudged (those judged are a seeded random \
                         subset; per-operator scores are estimates)",
                        report.unjudged,
                        report.unjudged + report.total.generated
                    );
                }
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
    if args.list || args.write_mutants.is_some() {
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
