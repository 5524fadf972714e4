//! `clowder select-study PROJECTS... --out DIR`: the suite-selection study of issue 20 (the
//! paper's Tables III and IV on Scratch programs), see `docs/selection.md`.
//!
//! Per project: a pool of random tests with the kill matrix of all its mutants
//! (`clowder_testgen::selection::build_pool`), then suites of each size selected under each
//! ranking by the GA, the best of 1 000 and unranked, `R` times each (`run_study`). Every
//! output but `times.csv` / `times.md` is a function of the projects and the options, so two
//! runs with the same arguments write identical files.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use clowder_testgen::config::{Algorithm, AlgorithmConfig};
use clowder_testgen::mutation::MutationMode;
use clowder_testgen::selection::{
    ClassRisk, GaParams, PoolOptions, PoolProgress, ProjectStudy, Ranking, StudyOptions, build_pool, class_risks,
    run_study,
};
use clowder_testgen::{DEFAULT_WORK_CAP, Prepared};

use super::mutate::csv_field;
use super::select_tables;

/// Arguments of `clowder select-study`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Project files (`.sb3` or `project.json`); names (file stems) must be distinct.
    #[arg(required = true)]
    pub projects: Vec<PathBuf>,
    /// Output folder (created; must not exist or be empty).
    #[arg(long)]
    pub out: PathBuf,
    /// Random tests in each project's pool.
    #[arg(long, default_value_t = 1000)]
    pub pool: usize,
    /// Suite sizes n.
    #[arg(long, value_delimiter = ',', default_values_t = [5usize, 10, 20])]
    pub sizes: Vec<usize>,
    /// Repetitions R of every (ranking, method, n).
    #[arg(long, default_value_t = 100)]
    pub repetitions: u32,
    /// Seed of the pools (tests, VM runs) and of every selection.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Random suites of the "best of" method.
    #[arg(long, default_value_t = 1000)]
    pub best_of: u32,
    /// The GA's generation limit.
    #[arg(long, default_value_t = 300)]
    pub generations: u32,
    /// Rankings: statements, kh2, kh3, win2, win3.
    #[arg(long, value_delimiter = ',', default_value = "statements,kh2,kh3,win2,win3")]
    pub rankings: Vec<String>,
    /// Longest pool test: initial lengths are drawn from [2, max-events) events (Whisker: 20).
    #[arg(long, default_value_t = 20)]
    pub max_events: u32,
    /// At most N mutants per operator (a seeded sample) instead of all.
    #[arg(long)]
    pub sample: Option<u32>,
    /// VM work cap of a pool's generation and of its assertions (each), in work units.
    #[arg(long, default_value_t = DEFAULT_WORK_CAP / 2)]
    pub work_cap: u64,
    /// Threads replaying mutants (default: available cores); results do not depend on it.
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// What the report needs of one project (the pool's tests are dropped once studied).
pub struct ProjectOut {
    /// File stem.
    pub name: String,
    /// Pool tests.
    pub tests: usize,
    /// Events over all pool tests.
    pub events: u64,
    /// The pool's alphabet, as text.
    pub symbols: Vec<String>,
    /// Coverage targets of the project, and those some pool test covers.
    pub targets: (u32, usize),
    /// Per mutant: id, operator, judged, killing pool tests, runaway replays.
    pub mutants: Vec<(String, &'static str, bool, u32, u32)>,
    /// VM steps: generation, assertions, kill matrix.
    pub steps: [u64; 3],
    /// The study.
    pub study: ProjectStudy,
    /// Per-class evidence of the t = 2 sequence rankings.
    pub classes: Vec<(Ranking, Vec<ClassRisk>)>,
    /// Seconds to build the pool and to run the selections.
    pub seconds: (f64, f64),
}

/// Limits on the options (they size the work and the memory).
const MAX_POOL: usize = 100_000;
const MAX_REPETITIONS: u32 = 100_000;

fn check(args: &Args) -> anyhow::Result<(Vec<Ranking>, StudyOptions, PoolOptions)> {
    if !(1..=MAX_POOL).contains(&args.pool) {
        bail!("--pool must be in 1..={MAX_POOL}");
    }
    if args.sizes.is_empty() || args.sizes.iter().any(|&n| n == 0 || n > args.pool) {
        bail!("--sizes must be between 1 and the pool size ({})", args.pool);
    }
    if !(1..=MAX_REPETITIONS).contains(&args.repetitions) {
        bail!("--repetitions must be in 1..={MAX_REPETITIONS}");
    }
    if !(1..=1_000_000).contains(&args.best_of) || !(1..=100_000).contains(&args.generations) {
        bail!("--best-of must be in 1..=1000000 and --generations in 1..=100000");
    }
    let mut rankings = Vec::new();
    for r in &args.rankings {
        let Some(r) = Ranking::parse(r) else {
            bail!("unknown ranking {r:?}: expected statements, kh2, kh3, win2 or win3")
        };
        if !rankings.contains(&r) {
            rankings.push(r);
        }
    }
    let mut config = AlgorithmConfig::new(Algorithm::Random);
    config.params.insert("max_events".into(), serde_json::json!(args.max_events));
    config.validate().map_err(|e| anyhow::anyhow!("--max-events: {e}"))?;
    let mutants = match args.sample {
        Some(0) => bail!("--sample must be positive"),
        Some(n) => MutationMode::SamplePerOperator(n),
        None => MutationMode::All,
    };
    let threads = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let study = StudyOptions {
        sizes: args.sizes.clone(),
        repetitions: args.repetitions,
        best_of: args.best_of,
        ga: GaParams { generations: args.generations, ..GaParams::default() },
        seed: args.seed,
        rankings: rankings.clone(),
    };
    let pool = PoolOptions { size: args.pool, seed: args.seed, config, work_cap: args.work_cap, mutants, threads };
    Ok((rankings, study, pool))
}

/// Runs `clowder select-study`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (_, study_opts, pool_opts) = check(&args)?;
    let mut names: Vec<String> = Vec::new();
    for p in &args.projects {
        let name = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        if name.is_empty() || names.contains(&name) {
            bail!("{}: project names (file stems) must be distinct and non-empty", p.display());
        }
        names.push(name);
    }
    if args.out.exists() && std::fs::read_dir(&args.out).map(|mut d| d.next().is_some()).unwrap_or(true) {
        bail!("{} exists and is not empty: choose a new output folder", args.out.display());
    }
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let mut outs = Vec::new();
    let mut failed = String::from("project,error\n");
    let mut failures = 0;
    for (path, name) in args.projects.iter().zip(names) {
        match study_project(path, &name, &pool_opts, &study_opts) {
            Ok(o) => {
                eprintln!(
                    "select-study: {name}: {} tests, |Σ| = {}, {} mutants ({} detectable), pool {:.0} s, selection {:.0} s",
                    o.tests,
                    o.symbols.len(),
                    o.mutants.len(),
                    o.mutants.iter().filter(|m| m.3 > 0).count(),
                    o.seconds.0,
                    o.seconds.1
                );
                outs.push(o);
            }
            Err(e) => {
                failures += 1;
                eprintln!("select-study: {name}: {e:#}");
                let _ = writeln!(failed, "{},{}", csv_field(&name), csv_field(&format!("{e:#}")));
            }
        }
    }
    write_all(&args.out, &args, &study_opts, &outs, &failed)?;
    eprintln!("select-study: wrote {} ({} projects, {failures} failed)", args.out.display(), outs.len());
    Ok(if failures > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn study_project(path: &Path, name: &str, pool_opts: &PoolOptions, opts: &StudyOptions) -> anyhow::Result<ProjectOut> {
    let project = clowder_vm::Project::load_path(path, &clowder_vm::LoadLimits::default())
        .with_context(|| format!("loading {}", path.display()))?;
    let project = Arc::new(project);
    let prepared = Prepared::new(&project);
    let started = Instant::now();
    let progress = |p: PoolProgress| {
        if let PoolProgress::Mutants(done, all) = p
            && (done % 10 == 0 || done == all)
        {
            eprintln!("select-study: {name}: {done}/{all} mutants replayed, {:.0} s", started.elapsed().as_secs_f64());
        }
    };
    let pool = build_pool(Arc::clone(&project), &prepared, pool_opts, &progress)?;
    let pool_secs = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let study = run_study(&pool, opts);
    let study_secs = started.elapsed().as_secs_f64();
    let covered: std::collections::BTreeSet<u32> = pool.statements.iter().flatten().copied().collect();
    let classes = [Ranking::Kh2, Ranking::Win2].into_iter().map(|r| (r, class_risks(&pool, r))).collect();
    Ok(ProjectOut {
        name: name.to_string(),
        tests: pool.tests.len(),
        events: pool.tests.iter().map(|t| t.events.len() as u64).sum(),
        symbols: pool.alphabet.symbols().iter().map(ToString::to_string).collect(),
        targets: (pool.targets, covered.len()),
        mutants: pool
            .mutants
            .iter()
            .map(|m| (m.id.clone(), m.operator.name(), m.judged, m.killed_by.len() as u32, m.ran_away))
            .collect(),
        steps: [pool.steps.generation, pool.steps.assertions, pool.steps.kill_matrix],
        study,
        classes,
        seconds: (pool_secs, study_secs),
    })
}

fn write(out: &Path, file: &str, text: &str) -> anyhow::Result<()> {
    let p = out.join(file);
    std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
}

fn write_all(out: &Path, args: &Args, opts: &StudyOptions, outs: &[ProjectOut], failed: &str) -> anyhow::Result<()> {
    let f = |v: f64| clowder_analysis::table::float_csv(v);
    let mut pools = String::from(
        "project,tests,events,alphabet,symbols,targets,targets_covered,mutants,judged,detectable,rare,\
         generation_steps,assertion_steps,kill_matrix_steps\n",
    );
    let mut mutants = String::from("project,mutant_id,operator,judged,killers,kill_rate,ran_away\n");
    let mut cells = String::from(
        "project,ranking,method,n,repetitions,mutants,detection,detection_rare,detection_common,rank_max,rank_mean,\
         universe,total,generations_mean\n",
    );
    let mut caught = String::from("project,mutant_id,ranking,method,n,caught\n");
    let mut risk = String::from("project,ranking,n,generation,risk,variance\n");
    let mut classes = String::from("project,ranking,class,hits,failures,passes,risk,variance\n");
    let mut times = String::from("project,ranking,method,n,seconds,ms_per_suite\n");
    let mut pool_times = String::from("project,pool_seconds,selection_seconds\n");
    let r = f64::from(opts.repetitions);
    for o in outs {
        let name = csv_field(&o.name);
        let rates = select_tables::kill_rates(o);
        let judged = o.mutants.iter().filter(|m| m.2).count();
        let detectable = rates.iter().filter(|x| x.is_some_and(|q| q > 0.0)).count();
        let rare = rates.iter().filter(|x| x.is_some_and(|q| q > 0.0 && q < select_tables::RARE)).count();
        let _ = writeln!(
            pools,
            "{name},{},{},{},{},{},{},{},{judged},{detectable},{rare},{},{},{}",
            o.tests,
            o.events,
            o.symbols.len(),
            csv_field(&o.symbols.join(" ")),
            o.targets.0,
            o.targets.1,
            o.mutants.len(),
            o.steps[0],
            o.steps[1],
            o.steps[2]
        );
        for (m, q) in o.mutants.iter().zip(&rates) {
            let _ = writeln!(
                mutants,
                "{name},{},{},{},{},{},{}",
                csv_field(&m.0),
                m.1,
                m.2,
                m.3,
                q.map(f).unwrap_or_default(),
                m.4
            );
        }
        for (c, secs) in o.study.cells.iter().zip(&o.study.seconds) {
            let d = select_tables::detection(o, c, opts.repetitions);
            let opt = |v: Option<f64>| v.map(f).unwrap_or_default();
            let (universe, total) = o.study.universe.iter().find(|u| u.0 == c.ranking).map_or((0, 0), |u| (u.1, u.2));
            let _ = writeln!(
                cells,
                "{name},{},{},{},{},{},{},{},{},{},{},{universe},{total},{}",
                c.ranking.name(),
                c.method.name(),
                c.n,
                opts.repetitions,
                d.mutants,
                opt(d.all),
                opt(d.rare),
                opt(d.common),
                c.rank_max,
                f(c.rank_sum as f64 / r),
                f(c.generations as f64 / r)
            );
            for ((m, &k), q) in o.mutants.iter().zip(&c.caught).zip(&rates) {
                if q.is_some_and(|q| q > 0.0) {
                    let _ = writeln!(
                        caught,
                        "{name},{},{},{},{},{k}",
                        csv_field(&m.0),
                        c.ranking.name(),
                        c.method.name(),
                        c.n
                    );
                }
            }
            let _ = writeln!(
                times,
                "{name},{},{},{},{},{}",
                c.ranking.name(),
                c.method.name(),
                c.n,
                f(*secs),
                f(secs * 1000.0 / r)
            );
        }
        for p in &o.study.risk {
            let _ =
                writeln!(risk, "{name},{},{},{},{},{}", p.ranking.name(), p.n, p.generation, f(p.risk), f(p.variance));
        }
        for (rk, list) in &o.classes {
            for c in list {
                let label: Vec<&str> =
                    c.symbols.iter().map(|&s| o.symbols.get(s as usize).map_or("?", String::as_str)).collect();
                let _ = writeln!(
                    classes,
                    "{name},{},{},{},{},{},{},{}",
                    rk.name(),
                    csv_field(&label.join(" ")),
                    c.hits,
                    c.evidence.failures,
                    c.evidence.passes,
                    f(c.estimate.mean),
                    f(c.estimate.variance)
                );
            }
        }
        let _ = writeln!(pool_times, "{name},{},{}", f(o.seconds.0), f(o.seconds.1));
    }
    for (file, text) in [
        ("pools.csv", &pools),
        ("mutants.csv", &mutants),
        ("cells.csv", &cells),
        ("caught.csv", &caught),
        ("risk.csv", &risk),
        ("classes.csv", &classes),
        ("failed.csv", &failed.to_string()),
    ] {
        write(out, file, text)?;
    }
    let summary = select_tables::summary(outs, opts);
    write(out, "summary.csv", &summary.csv())?;
    write(out, "tables.md", &select_tables::tables_md(outs, opts, &settings(args), &summary))?;
    select_tables::risk_plots(outs, opts, out)?;
    // Wall-clock times: the only output that differs between identical runs.
    write(out, "times.csv", &times)?;
    write(out, "pool_times.csv", &pool_times)?;
    write(out, "times.md", &select_tables::times_md(outs, opts))?;
    Ok(())
}

/// The options, as the report states them.
fn settings(args: &Args) -> String {
    format!(
        "pool {} tests (lengths 2..{} events), n ∈ {{{}}}, R = {}, seed {}, best of {}, GA ≤ {} generations, \
         mutants: {}",
        args.pool,
        args.max_events,
        args.sizes.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
        args.repetitions,
        args.seed,
        args.best_of,
        args.generations,
        args.sample.map_or("all".to_string(), |n| format!("≤ {n} per operator"))
    )
}
