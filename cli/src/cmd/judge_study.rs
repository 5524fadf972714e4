//! `clowder judge-study RESULTS --seeds 11 --out FILE.csv`: every Neatest run's dynamic suite
//! judges the project's mutants and the original program (the Neatest paper's Table 5: mutants
//! killed, and false positives on the unchanged program).
//!
//! Per Neatest run and judging seed, as `clowder test SUITE --reference ORIGINAL` does: the
//! suite is prepared on the original (minimised, each network's reference activations recorded
//! over `--trace-seeds` seeds drawn from the judging seed), then the original and every selected
//! mutant are played on the judging seed. A program fails when a network meets an event it has
//! no output for or has surprising activations; a failing original is a false positive. The
//! mutants are the ones `clowder mutate` makes (all, or a seeded sample per operator); none is
//! skipped. The study's store is only read; what is judged is kept in `OUT.journal` as it
//! finishes, so a stopped call resumes and a later one judges only new runs. Rows: `run_id, project, seed, judge_seed, program,
//! operator, verdict, failing_networks, networks`.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::bail;
use clowder_testgen::MutationMode;
use clowder_testgen::mutation::{self, Mutant};
use clowder_testgen::neatest::replay::{Reference, ReplayOptions, ReplayRow, judge, prepare_suite};
use clowder_testgen::neatest::{DynamicSuite, VersionHint};
use clowder_vm::project::{LoadLimits, Project};

use super::journal::{Journal, Rows};
use super::replay_study::{Job, load_jobs};
use super::test_dynamic::parse_seeds;

/// Arguments of `clowder judge-study`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The study, the judging seeds, the CSV to write and the parallel jobs, as replay-study's.
    #[command(flatten)]
    pub study: super::replay_study::Args,
    /// Judge at most N mutants per operator (chosen with the run's seed, as the study's own
    /// mutation analysis with `{ sample = N }` chooses them) instead of all.
    #[arg(long)]
    pub sample: Option<u32>,
    /// Seeds each network plays on the original to record its reference activations (the
    /// surprise oracle needs at least 30).
    #[arg(long, default_value_t = 100)]
    pub trace_seeds: u32,
}

/// One program judged.
struct Row {
    judge_seed: u64,
    /// `original` or the mutant's id.
    program: String,
    operator: &'static str,
    failing: usize,
    networks: usize,
}

/// Runs `clowder judge-study`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let seeds = parse_seeds(&args.study.seeds)?;
    let mode = match args.sample {
        None => MutationMode::All,
        Some(0) => bail!("--sample 0 judges no mutant: leave it out to judge all"),
        Some(n) => MutationMode::SamplePerOperator(n),
    };
    if !(1..=10_000).contains(&args.trace_seeds) {
        bail!("--trace-seeds must be in 1..=10000");
    }
    let jobs: Vec<Job> = load_jobs(&args.study.results)?.into_iter().filter(|j| !j.dynamic_json.is_empty()).collect();
    if jobs.is_empty() {
        bail!("{}: no finished Neatest run (no dynamic suite stored)", args.study.results.display());
    }
    let work: Vec<(&Job, u64)> = jobs.iter().flat_map(|j| seeds.iter().map(move |&s| (j, s))).collect();
    let key = |(job, seed): &(&Job, u64)| format!("{}/{seed}", job.run_id);
    // Every option that changes a suite's rows; the judging seed is in each item's key.
    let header = format!(
        "judge-study engine={} sample={} trace_seeds={}",
        clowder_vm::ENGINE_VERSION,
        args.sample.map_or_else(|| "all".to_string(), |n| n.to_string()),
        args.trace_seeds
    );
    let mut journal = Journal::open(&args.study.out, &header)?;
    let todo: Vec<(&Job, u64)> = work.iter().filter(|w| journal.get(&key(w)).is_none()).copied().collect();
    let workers =
        args.study.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get));
    eprintln!(
        "judging with {} Neatest runs' suites on {} seeds with {workers} jobs: {} suites (run × seed), {} of them \
         done earlier ({})",
        jobs.len(),
        seeds.len(),
        work.len(),
        work.len() - todo.len(),
        super::journal::path_for(&args.study.out).display()
    );
    // A run whose suite cannot be judged (a project file gone, a suite that does not load) is
    // reported and the others are still written; it is tried again on the next call.
    let errors = super::journal::run_items(
        &mut journal,
        &todo,
        workers,
        "suites judged (run × seed)",
        key,
        |(job, seed)| format!("run {} ({}), seed {seed}", job.run_id, job.project),
        |(job, seed)| judge_run(job, *seed, mode, args.trace_seeds).map(|rows| records(job, *seed, rows)),
    )?;
    let rows: Vec<&Vec<String>> = work.iter().filter_map(|w| journal.get(&key(w))).flatten().collect();
    super::journal::write_csv(
        &args.study.out,
        &clowder_schema::JUDGED.columns.iter().map(|c| c.name).collect::<Vec<_>>(),
        rows.iter().copied(),
    )?;
    let (mut killed, mut mutants, mut false_pos, mut originals) = (0u64, 0u64, 0u64, 0u64);
    for r in &rows {
        let fail = r.get(6).is_some_and(|v| v == "fail");
        if r.get(4).is_some_and(|p| p == "original") {
            originals += 1;
            false_pos += u64::from(fail);
        } else {
            mutants += 1;
            killed += u64::from(fail);
        }
    }
    let pct = |a: u64, b: u64| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
    println!("mutants killed: {killed}/{mutants} ({:.2}%)", pct(killed, mutants));
    println!("false positives: {false_pos}/{originals} originals judged faulty ({:.2}%)", pct(false_pos, originals));
    Ok(super::journal::report_failures("judge-study", &errors, work.len(), "suites (run × seed)", &args.study.out))
}

/// One judged suite's CSV rows.
fn records(job: &Job, judge_seed: u64, rows: Vec<Row>) -> Rows {
    rows.into_iter()
        .map(|r| {
            debug_assert_eq!(r.judge_seed, judge_seed);
            let fail = r.failing > 0;
            vec![
                job.run_id.clone(),
                job.project.clone(),
                job.seed.to_string(),
                r.judge_seed.to_string(),
                r.program,
                r.operator.to_string(),
                (if fail { "fail" } else { "pass" }).to_string(),
                r.failing.to_string(),
                r.networks.to_string(),
            ]
        })
        .collect()
}

/// Judges the original and the selected mutants with one run's dynamic suite on `seed`.
fn judge_run(job: &Job, seed: u64, mode: MutationMode, trace_seeds: u32) -> Result<Vec<Row>, String> {
    let bytes = std::fs::read(&job.path).map_err(|e| format!("{}: {e}", job.path.display()))?;
    let original: Arc<Project> =
        Arc::new(clowder_vm::project::load(&bytes, &job.file_name, &LoadLimits::default()).map_err(|e| e.to_string())?);
    let suite =
        DynamicSuite::from_json(&job.dynamic_json, VersionHint::Auto).map_err(|e| format!("dynamic suite: {e}"))?;
    let opts = ReplayOptions {
        reference: Some(Reference { project: Arc::clone(&original), seeds: trace_seeds }),
        ..ReplayOptions::default()
    };
    let prepared = prepare_suite(Arc::clone(&original), &suite, seed, &opts)?;
    let failing = |rows: &[ReplayRow]| rows.iter().filter(|r| r.verdict == "fail").count();
    let mut out = Vec::new();
    let rows = judge(Arc::clone(&original), &prepared, &opts)?;
    out.push(Row {
        judge_seed: seed,
        program: "original".into(),
        operator: "",
        failing: failing(&rows),
        networks: rows.len(),
    });
    let chosen: Vec<Mutant> = mutation::select(&mutation::enumerate(&original), mode, job.seed);
    for m in chosen {
        let Ok(p) = mutation::mutate(&original, &m) else {
            // A mutant that does not fit the program (`MisfitMutant`) is not a program: the
            // static analysis leaves it out too.
            continue;
        };
        let rows = judge(Arc::new(p), &prepared, &opts).map_err(|e| format!("mutant {}: {e}", m.id))?;
        out.push(Row {
            judge_seed: seed,
            program: m.id.clone(),
            operator: m.operator.name(),
            failing: failing(&rows),
            networks: rows.len(),
        });
    }
    Ok(out)
}
