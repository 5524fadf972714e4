//! `clowder replay-study RESULTS --seeds 11-20 --out FILE.csv`: every finished run's suites
//! replayed on new seeds (the Neatest paper's Table 4: dynamic suites keep their coverage when
//! the game's randomness changes, static replays of the same tests lose some).
//!
//! Per run and replay seed: the static suite (the stored event sequences, every algorithm) and,
//! for Neatest runs, the dynamic suite (the stored networks, replayed as `clowder test` does);
//! the statements the suite covers together. The study's store is only read; what is replayed
//! is kept in `OUT.journal` as it finishes, so a stopped call resumes and a later one replays
//! only new runs. Rows:
//! `run_id, project, algorithm, seed, replay_seed, suite, covered, total`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::bail;
use clowder_coordinator::store::{RunQuery, Store, StoredRun};
use clowder_testgen::fitness::FitnessModel;
use clowder_testgen::neatest::replay::{ReplayOptions, replay_suite};
use clowder_testgen::neatest::{DynamicSuite, VersionHint};
use clowder_testgen::{AlgorithmConfig, Params, Test};
use clowder_vm::project::{LoadLimits, Project};

use super::journal::{Journal, Rows};
use super::test_dynamic::parse_seeds;

/// Arguments of `clowder replay-study` (and the first of `clowder judge-study`'s).
#[derive(clap::Args, Debug)]
// No argument group of its own: judge-study flattens it into its `Args`, whose group has the
// same name.
#[group(skip)]
pub struct Args {
    /// Results folder of a finished study (`results/<name>`).
    pub results: PathBuf,
    /// Seeds to replay (judge-study: to judge) on, e.g. `11-20`: seeds no run was generated with.
    #[arg(long)]
    pub seeds: String,
    /// The CSV to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Parallel jobs (default: one per available core).
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// One stored run (also `clowder judge-study`'s).
pub(crate) struct Job {
    pub(crate) run_id: String,
    pub(crate) project: String,
    pub(crate) path: PathBuf,
    pub(crate) file_name: String,
    pub(crate) algorithm: String,
    pub(crate) config_json: String,
    pub(crate) seed: u64,
    pub(crate) suite_json: String,
    pub(crate) dynamic_json: String,
}

/// One replay's coverage.
struct Row {
    replay_seed: u64,
    suite: &'static str,
    covered: usize,
    total: usize,
}

/// Runs `clowder replay-study`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let seeds = parse_seeds(&args.seeds)?;
    let jobs = load_jobs(&args.results)?;
    if jobs.is_empty() {
        bail!("{}: no finished run to replay", args.results.display());
    }
    let header = format!("replay-study engine={}", clowder_vm::ENGINE_VERSION);
    let mut journal = Journal::open(&args.out, &header)?;
    // An item is a run with all the seeds asked for: seeds are part of its key.
    let seed_list = seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    let key = |job: &Job| format!("{}/{seed_list}", job.run_id);
    let todo: Vec<&Job> = jobs.iter().filter(|j| journal.get(&key(j)).is_none()).collect();
    let workers = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get));
    eprintln!(
        "replaying {} runs on {} seeds with {workers} jobs, {} of them done earlier ({})",
        jobs.len(),
        seeds.len(),
        jobs.len() - todo.len(),
        super::journal::path_for(&args.out).display()
    );
    let errors = super::journal::run_items(
        &mut journal,
        &todo,
        workers,
        "runs replayed",
        |job| key(job),
        |job| format!("run {} ({})", job.run_id, job.project),
        |job| replay(job, &seeds).map(|rows| records(job, rows)),
    )?;
    let rows: Vec<&Vec<String>> = jobs.iter().filter_map(|j| journal.get(&key(j))).flatten().collect();
    super::journal::write_csv(
        &args.out,
        &clowder_schema::REPLAYS.columns.iter().map(|c| c.name).collect::<Vec<_>>(),
        rows.iter().copied(),
    )?;
    // Mean coverage per algorithm and suite kind, for the terminal.
    let mut means: std::collections::BTreeMap<(&str, &str), (f64, u32)> = Default::default();
    for r in &rows {
        let (Some(alg), Some(kind)) = (r.get(2), r.get(5)) else { continue };
        let num = |i: usize| r.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        let (covered, total) = (num(6), num(7));
        let m = means.entry((alg, kind)).or_insert((0.0, 0));
        m.0 += if total == 0.0 { 1.0 } else { covered / total };
        m.1 += 1;
    }
    println!("{:<24} {:<8} {:>10} {:>8}", "algorithm", "suite", "coverage", "replays");
    for ((alg, kind), (sum, n)) in means {
        println!("{alg:<24} {kind:<8} {:>9.2}% {n:>8}", 100.0 * sum / f64::from(n.max(1)));
    }
    Ok(super::journal::report_failures("replay-study", &errors, jobs.len(), "runs", &args.out))
}

/// One replayed run's CSV rows.
fn records(job: &Job, rows: Vec<Row>) -> Rows {
    rows.into_iter()
        .map(|r| {
            vec![
                job.run_id.clone(),
                job.project.clone(),
                job.algorithm.clone(),
                job.seed.to_string(),
                r.replay_seed.to_string(),
                r.suite.to_string(),
                r.covered.to_string(),
                r.total.to_string(),
            ]
        })
        .collect()
}

/// The study's finished (`ok` or `limit`) runs of this engine, by project and run id.
pub(crate) fn load_jobs(results: &Path) -> anyhow::Result<Vec<Job>> {
    let store = Store::open_read_only(results)?;
    let projects = store.projects()?;
    let engine = clowder_vm::ENGINE_VERSION;
    let mut jobs = Vec::new();
    let q = RunQuery { generation: None, statuses: &["ok", "limit"], with_result: true };
    store.for_each_run(&q, |row: StoredRun| -> anyhow::Result<()> {
        if row.engine_version != engine {
            bail!("run {} was made by engine {}, this is {engine}", row.run.run_id, row.engine_version);
        }
        let run = row.run;
        let Some(p) = projects.get(&run.project_hash) else {
            bail!("run {}: project {} not recorded in the store", run.run_id, run.project_hash)
        };
        let Some(result) = row.result else { return Ok(()) };
        jobs.push(Job {
            run_id: run.run_id,
            project: run.project,
            path: p.path.clone(),
            file_name: p.file_name.clone(),
            algorithm: run.algorithm,
            config_json: run.config_json,
            seed: run.seed,
            suite_json: result.suite_json,
            dynamic_json: result.dynamic_suite_json,
        });
        Ok(())
    })?;
    jobs.sort_by(|a, b| (&a.project, &a.run_id).cmp(&(&b.project, &b.run_id)));
    Ok(jobs)
}

fn replay(job: &Job, seeds: &[u64]) -> Result<Vec<Row>, String> {
    let bytes = std::fs::read(&job.path).map_err(|e| format!("{}: {e}", job.path.display()))?;
    let project: Arc<Project> =
        Arc::new(clowder_vm::project::load(&bytes, &job.file_name, &LoadLimits::default()).map_err(|e| e.to_string())?);
    let cfg: AlgorithmConfig = serde_json::from_str(&job.config_json).map_err(|e| format!("configuration: {e}"))?;
    let params = Params::from_config(&cfg)?;
    let suite: Vec<Test> = serde_json::from_str(&job.suite_json).map_err(|e| format!("stored suite: {e}"))?;
    let dynamic = if job.dynamic_json.is_empty() {
        None
    } else {
        Some(DynamicSuite::from_json(&job.dynamic_json, VersionHint::Auto).map_err(|e| format!("dynamic suite: {e}"))?)
    };
    let model = FitnessModel::new(&project);
    let total = model.len();
    let mut rows = Vec::new();
    for &s in seeds {
        let mut covered = vec![false; total];
        for t in &suite {
            let tr = clowder_testgen::execution::replay_once(Arc::clone(&project), &model, &params, s, &t.events);
            for (t, c) in covered.iter_mut().enumerate() {
                *c |= model.covers(t, &tr);
            }
        }
        rows.push(Row { replay_seed: s, suite: "static", covered: covered.iter().filter(|c| **c).count(), total });
        if let Some(d) = &dynamic {
            let r = replay_suite(Arc::clone(&project), d, s, &ReplayOptions::default())?;
            let covered = r.last().map_or(0, |r| r.suite_covered);
            rows.push(Row { replay_seed: s, suite: "dynamic", covered, total });
        }
    }
    Ok(rows)
}
