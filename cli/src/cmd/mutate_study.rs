//! `clowder mutate-study RESULTS --out DIR`: mutation analysis as a follow-up job on the suites
//! a finished study stored (issue 8: "or as a follow-up job on the stored suite").
//!
//! Generation is most of a run's cost and does not depend on mutation analysis, so a study can
//! run with mutation analysis off and have it added afterwards: every `ok` or `limit` run's
//! stored suite (with its regression assertions; a `limit` run's suite is the partial one its
//! in-run analysis would have used too) is replayed on the project's mutants with the run's
//! configuration and seed, exactly as the run would have done with mutation analysis on
//! (`clowder_testgen::analyse_suite`; the verdicts are equal, see its test). The study's store
//! is only read. The output folder is a copy of the study's export (`runs`, `timeline`,
//! `provenance`) with the mutation columns of `runs` filled in, a `mutants` table and a
//! `mutation_failures` table, each as CSV and Parquet written by the exports' own writer
//! (`clowder_schema`), so `clowder analyze DIR` reports mutation scores per algorithm and
//! operator. Run digests are
//! left as the study recorded them (they describe the runs as executed, mutation off).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, bail};
use clowder_coordinator::store::{RunQuery, Store, StoredRun};
use clowder_testgen::mutation::MutationReport;
use clowder_testgen::{AlgorithmConfig, MutationMode, Prepared, Test};
use clowder_vm::project::{LoadLimits, Project};

/// Arguments of `clowder mutate-study`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Results folder of a finished study (`results/<name>`, with its export).
    pub results: PathBuf,
    /// Output folder (created; must not exist or be empty).
    #[arg(long)]
    pub out: PathBuf,
    /// Analyse at most N mutants per operator (seeded per run) instead of all.
    #[arg(long)]
    pub sample: Option<u32>,
    /// Parallel jobs (default: one per available core).
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// One stored run to analyse.
struct Job {
    run_id: String,
    hash: String,
    path: PathBuf,
    file_name: String,
    config_json: String,
    seed: u64,
}

/// What `runs.csv` and `mutants.csv` need of one run's analysis: kept per run until the end,
/// so it holds no suite and no mutant descriptions (a 60 000-run study has millions of rows).
struct Verdicts {
    generated: u32,
    killed: u32,
    excluded: u32,
    timeout: u32,
    score: Option<f64>,
    /// (mutant id, operator, block id, verdict, stratum size) in enumeration order.
    rows: Vec<(String, &'static str, String, &'static str, u32)>,
}

impl From<MutationReport> for Verdicts {
    fn from(r: MutationReport) -> Self {
        Verdicts {
            generated: r.total.generated,
            killed: r.total.killed,
            excluded: r.total.excluded,
            timeout: r.total.timeout,
            score: r.score(),
            rows: r
                .verdicts
                .iter()
                .map(|v| {
                    (
                        v.mutant_id.clone(),
                        v.operator.name(),
                        v.block_id.clone(),
                        v.verdict.as_str(),
                        r.stratum_size(v.operator),
                    )
                })
                .collect(),
        }
    }
}

/// What the analysis of one run gave.
enum Outcome {
    Report(Verdicts),
    /// Mutation analysis had nothing to do (no suite or no mutants).
    Nothing,
    Failed(String),
}

/// Runs `clowder mutate-study`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mode = match args.sample {
        Some(0) => bail!("--sample must be positive"),
        Some(n) => MutationMode::SamplePerOperator(n),
        None => MutationMode::All,
    };
    for f in ["runs.csv", "timeline.csv"] {
        if !args.results.join(f).is_file() {
            bail!("{} has no {f}: run `clowder export {}` first", args.results.display(), args.results.display());
        }
    }
    if args.out.exists() && std::fs::read_dir(&args.out).map(|mut d| d.next().is_some()).unwrap_or(true) {
        bail!("{} exists and is not empty: choose a new output folder", args.out.display());
    }
    let jobs = load_jobs(&args.results)?;
    let n = jobs.len();
    let threads = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    eprintln!(
        "mutate-study: {n} ok/limit runs of {}, {} on {threads} threads",
        args.results.display(),
        mode.as_string()
    );
    let results: Vec<Mutex<Option<Outcome>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                // Each thread reads the suites it needs from its own connection: a whole
                // study's suites never sit in memory at once.
                let store = Store::open_read_only(&args.results).map_err(|e| e.to_string());
                // Jobs are sorted by project: one loaded project and its analyses per thread.
                let mut cache: Option<(String, Arc<Project>, Prepared)> = None;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let out = match &store {
                        Ok(store) => match stored_suite(store, &job.run_id) {
                            Ok(suite) => analyse(job, &suite, mode, &mut cache),
                            Err(e) => Outcome::Failed(e),
                        },
                        Err(e) => Outcome::Failed(format!("opening the store: {e}")),
                    };
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(out);
                    }
                    let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if d % 200 == 0 || d == n {
                        let secs = started.elapsed().as_secs_f64();
                        eprintln!("mutate-study: {d}/{n} runs, {:.0} s, {:.1} runs/s", secs, d as f64 / secs.max(1e-9));
                    }
                }
            });
        }
    });
    let mut by_run: BTreeMap<String, Outcome> = BTreeMap::new();
    for (job, r) in jobs.iter().zip(results) {
        let out = r.into_inner().ok().flatten().unwrap_or_else(|| Outcome::Failed("not analysed".into()));
        by_run.insert(job.run_id.clone(), out);
    }
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let failed = write_outputs(&args.results, &args.out, &by_run, mode)?;
    for f in ["timeline.csv", "timeline.parquet", "provenance.csv", "provenance.parquet"] {
        let from = args.results.join(f);
        if from.is_file() {
            std::fs::copy(&from, args.out.join(f)).with_context(|| format!("copying {}", from.display()))?;
        }
    }
    eprintln!(
        "mutate-study: wrote {} ({} runs analysed, {failed} failed) in {:.0} s",
        args.out.display(),
        n - failed,
        started.elapsed().as_secs_f64()
    );
    Ok(if failed > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// The study's runs with a suite (`ok`, and `limit`: ended by the work cap with a partial
/// suite), sorted by project then run id.
fn load_jobs(results: &Path) -> anyhow::Result<Vec<Job>> {
    let store = Store::open_read_only(results)?;
    let projects = store.projects()?;
    let engine = clowder_vm::ENGINE_VERSION;
    let mut jobs = Vec::new();
    let q = RunQuery { generation: None, statuses: &["ok", "limit"], with_result: false };
    store.for_each_run(&q, |row: StoredRun| -> anyhow::Result<()> {
        let run = row.run;
        // Verdicts come from replays in this binary's VM: they are the run's only if the run
        // was made by the same engine.
        if row.engine_version != engine {
            bail!(
                "run {} was made by engine {}, this is {engine}: use the binary that ran the study",
                run.run_id,
                row.engine_version
            );
        }
        let Some(p) = projects.get(&run.project_hash) else {
            bail!("run {}: project {} not recorded in the store", run.run_id, run.project_hash)
        };
        jobs.push(Job {
            path: p.path.clone(),
            file_name: p.file_name.clone(),
            run_id: run.run_id,
            hash: run.project_hash,
            config_json: run.config_json,
            seed: run.seed,
        });
        Ok(())
    })?;
    // One project after the other: each thread keeps one loaded project (see `run`).
    jobs.sort_by(|a, b| (&a.hash, &a.run_id).cmp(&(&b.hash, &b.run_id)));
    Ok(jobs)
}

/// The suite an `ok` or `limit` run stored (JSON, with its regression assertions).
fn stored_suite(store: &Store, run_id: &str) -> Result<String, String> {
    let result = store.run_result(run_id).map_err(|e| format!("reading the stored result: {e}"))?;
    Ok(result.ok_or("finished but no stored result")?.suite_json)
}

fn analyse(
    job: &Job,
    suite_json: &str,
    mode: MutationMode,
    cache: &mut Option<(String, Arc<Project>, Prepared)>,
) -> Outcome {
    if cache.as_ref().is_none_or(|(h, _, _)| *h != job.hash) {
        *cache = None;
        let bytes = match std::fs::read(&job.path) {
            Ok(b) => b,
            Err(e) => return Outcome::Failed(format!("{}: {e}", job.path.display())),
        };
        if blake3::hash(&bytes).to_hex().as_str() != job.hash {
            return Outcome::Failed(format!("{} changed since the study", job.path.display()));
        }
        let project = match clowder_vm::project::load(&bytes, &job.file_name, &LoadLimits::default()) {
            Ok(p) => Arc::new(p),
            Err(e) => return Outcome::Failed(e.to_string()),
        };
        let prepared = Prepared::new(&project);
        *cache = Some((job.hash.clone(), project, prepared));
    }
    let Some((_, project, prepared)) = cache.as_ref() else { return Outcome::Failed("project not loaded".into()) };
    let cfg: AlgorithmConfig = match serde_json::from_str(&job.config_json) {
        Ok(c) => c,
        Err(e) => return Outcome::Failed(format!("bad configuration {}: {e}", job.config_json)),
    };
    let suite: Vec<Test> = match serde_json::from_str(suite_json) {
        Ok(s) => s,
        Err(e) => return Outcome::Failed(format!("stored suite does not parse: {e}")),
    };
    let analysed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        clowder_testgen::analyse_suite(Arc::clone(project), prepared, &cfg, job.seed, &suite, mode)
    }));
    match analysed {
        Ok(Ok(Some(r))) => Outcome::Report(r.into()),
        Ok(Ok(None)) => Outcome::Nothing,
        Ok(Err(e)) => Outcome::Failed(e.to_string()),
        Err(_) => Outcome::Failed("internal error (panic) in the mutation analysis".into()),
    }
}

/// `runs` with the mutation columns filled in, `mutants`, and `mutation_failures` (each as
/// CSV and Parquet, with the export's own tables and writer); returns the failed count.
fn write_outputs(
    results: &Path,
    out: &Path,
    by_run: &BTreeMap<String, Outcome>,
    mode: MutationMode,
) -> anyhow::Result<usize> {
    use clowder_schema::{CONTEXT, MUTANTS, MUTATION_FAILURES, RUNS, TableWriter, Value};
    let mut rd = csv::Reader::from_path(results.join("runs.csv")).context("reading runs.csv")?;
    let header = rd.headers()?.clone();
    let pos = |name: &str| header.iter().position(|h| h == name);
    // Where each export column is in the study's runs.csv (absent optional columns are null:
    // an export made before a column existed).
    let source: Vec<Option<usize>> = RUNS.columns.iter().map(|c| pos(c.name)).collect();
    for (c, p) in RUNS.columns.iter().zip(&source) {
        if p.is_none() && !c.nullable {
            bail!("runs.csv has no {} column", c.name);
        }
    }
    let at = |name: &str| RUNS.position(name).with_context(|| format!("no {name} column"));
    let [id, generated, killed, excluded, timeout, score] =
        ["run_id", "mutants", "mutants_killed", "mutants_excluded", "mutants_timeout", "mutation_score"].map(at);
    let (id, generated, killed, excluded, timeout, score) = (id?, generated?, killed?, excluded?, timeout?, score?);
    let context: Vec<usize> = CONTEXT.iter().map(|n| at(n)).collect::<Result<_, _>>()?;
    let mut runs = TableWriter::create(out, RUNS)?;
    let mut mutants = TableWriter::create(out, MUTANTS)?;
    // Runs whose analysis failed keep the study's (empty) mutation columns and are listed here.
    let mut failures = TableWriter::create(out, MUTATION_FAILURES)?;
    let mut failed = 0;
    for (line, rec) in rd.records().enumerate() {
        let rec = rec?;
        let mut row = Vec::with_capacity(RUNS.columns.len());
        for (c, p) in RUNS.columns.iter().zip(&source) {
            let field = p.and_then(|i| rec.get(i)).unwrap_or("");
            row.push(Value::parse(c.kind, field).with_context(|| format!("runs.csv line {}: {}", line + 2, c.name))?);
        }
        let run_id = match &row[id] {
            Value::Str(s) => s.clone(),
            _ => String::new(),
        };
        match by_run.get(&run_id) {
            Some(Outcome::Report(r)) => {
                row[generated] = r.generated.into();
                row[killed] = r.killed.into();
                row[excluded] = r.excluded.into();
                row[timeout] = r.timeout.into();
                row[score] = r.score.into();
                for (mutant_id, operator, block_id, verdict, stratum) in &r.rows {
                    let mut m: Vec<Value> = context.iter().map(|&k| row[k].clone()).collect();
                    m.extend([
                        mutant_id.as_str().into(),
                        (*operator).into(),
                        block_id.as_str().into(),
                        (*verdict).into(),
                        (*stratum).into(),
                    ]);
                    mutants.push(&m)?;
                }
            }
            Some(Outcome::Nothing) | None => {}
            Some(Outcome::Failed(e)) => {
                failed += 1;
                eprintln!("mutate-study: run {run_id}: mutation analysis ({}) failed: {e}", mode.as_string());
                failures.push(&[run_id.as_str().into(), e.as_str().into()])?;
            }
        }
        runs.push(&row)?;
    }
    runs.finish()?;
    mutants.finish()?;
    failures.finish()?;
    Ok(failed)
}
