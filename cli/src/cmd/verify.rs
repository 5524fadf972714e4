//! `clowder verify RESULTS [--runs N]`: re-executes N finished runs of a study
//! locally and checks that their status and digest reproduce (and, for Neatest runs, their
//! dynamic suite, which the digest does not cover).
//!
//! The selection is deterministic (runs ordered by a hash of their id), so two
//! invocations check the same runs; runs whose engine version differs from this
//! binary's, or whose project file is gone or changed, are skipped and counted.
//! Eligible are the runs with a deterministic final status: `ok`, `limit` (ended by the work
//! cap, which is the same on every machine), `error` and `project_rejected`. Runs stopped by the
//! CPU time limit are not (that infrastructure failure depends on the machine), nor are other
//! infrastructure failures.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clowder_coordinator::experiment::Experiment;
use clowder_coordinator::store::{RunQuery, Store, StoredRun};
use clowder_coordinator::table::status_name;
use clowder_proto::{Budget as PBudget, BudgetKind, RunSpec, RunStatus};
use clowder_testgen::Budget;

/// Arguments of `clowder verify`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Results folder of a study (`results/<name>`).
    pub results: PathBuf,
    /// How many runs to re-execute.
    #[arg(long, default_value_t = 10)]
    pub runs: usize,
    /// Only runs that recorded at most this much work (work units, about nanoseconds of CPU
    /// each): the sample stays deterministic and its cost bounded on a study of long runs.
    #[arg(long)]
    pub max_work: Option<u64>,
}

struct Candidate {
    key: String,
    run_id: String,
    project: String,
    algorithm: String,
    seed: u64,
    status: String,
    digest: String,
    /// The stored dynamic suite (Neatest), empty for other algorithms.
    dynamic: String,
    spec: RunSpec,
    engine: String,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = Store::open_read_only(&args.results)?;
    let projects = store.projects()?;
    // Each submission's mutation and work-cap settings: a run is re-executed as its generation
    // ran it (with mutation analysis on, the suite carries its assertions and so does the
    // digest; the work cap decides where a `limit` run ends).
    let mut setting_of: BTreeMap<u64, (String, u64)> = BTreeMap::new();
    for sub in store.submissions()? {
        let e = Experiment::parse(&sub.experiment_toml, &args.results.join("experiment.toml"))
            .map_err(|e| anyhow::anyhow!("submission {}: stored experiment does not parse: {e}", sub.generation))?;
        setting_of.insert(sub.generation, (e.mutation().run_spec(), e.work_cap_spec()));
    }
    let finished = ["ok", "limit", "error", "project_rejected", "infra_failure"];
    // Results are decoded (a corrupt row is reported, not verified) and dropped at once.
    let q = RunQuery { generation: None, statuses: &finished, with_result: true };
    let mut cands = Vec::new();
    let mut cpu_limited = 0usize;
    let mut too_long = 0usize;
    store.for_each_run(&q, |row: StoredRun| -> anyhow::Result<()> {
        let StoredRun { run, status, error, digest, engine_version, generation, result, .. } = row;
        // Stopped by the CPU time limit (an infrastructure failure; `error` in older stores): a
        // property of the machine, not of the run, and re-executing it without the limit would
        // take as long as the limit was meant to cut.
        if error.starts_with(clowder_proto::CPU_LIMIT_REASON) {
            cpu_limited += 1;
            return Ok(());
        }
        // Other infrastructure give-ups have no result to compare.
        if status == status_name(RunStatus::InfraFailure) {
            return Ok(());
        }
        if let (Some(max), Some(r)) = (args.max_work, &result)
            && r.work > max
        {
            too_long += 1;
            return Ok(());
        }
        let Some((mutation, work_cap)) = setting_of.get(&generation).cloned() else {
            anyhow::bail!("run {}: no submission {generation} in the store", run.run_id);
        };
        let kind = match run.budget {
            Budget::Steps(_) => BudgetKind::Steps,
            Budget::Executions(_) => BudgetKind::Executions,
            Budget::Evaluations(_) => BudgetKind::Evaluations,
            Budget::Seconds(_) => BudgetKind::Seconds,
        };
        let file_name = projects.get(&run.project_hash).map(|p| p.file_name.clone()).unwrap_or_default();
        cands.push(Candidate {
            key: blake3::hash(format!("clowder-verify\0{}", run.run_id).as_bytes()).to_hex().to_string(),
            spec: RunSpec {
                run_id: run.run_id.clone(),
                project_hash: run.project_hash,
                project_name: run.project.clone(),
                algorithm: run.algorithm.clone(),
                config_json: run.config_json,
                seed: run.seed,
                budget: Some(PBudget { kind: kind as i32, amount: run.budget.amount() }),
                file_name,
                mutation,
                work_cap,
                ..Default::default()
            },
            run_id: run.run_id,
            project: run.project,
            algorithm: run.algorithm,
            seed: run.seed,
            status,
            digest,
            dynamic: result.map(|r| r.dynamic_suite_json).unwrap_or_default(),
            engine: engine_version,
        });
        Ok(())
    })?;
    cands.sort_by(|a, b| a.key.cmp(&b.key));
    let engine = clowder_vm::ENGINE_VERSION;
    let (mut checked, mut mismatches, mut skipped) = (0usize, 0usize, 0usize);
    for c in &cands {
        if checked + mismatches >= args.runs {
            break;
        }
        let label = format!("{} {} seed {} (run {})", c.project, c.algorithm, c.seed, c.run_id);
        if c.engine != engine {
            println!("skip  {label}: recorded with engine {}, this is {engine}", c.engine);
            skipped += 1;
            continue;
        }
        // The store does not keep a test run's suite file (it is served from the experiment's
        // path while the study runs): `clowder test SUITE PROJECT --seed N` re-runs one.
        if clowder_proto::test_run::TestRunConfig::parse(&c.spec.config_json).is_some() {
            println!("skip  {label}: a test run (re-run it with `clowder test`)");
            skipped += 1;
            continue;
        }
        let Some(p) = projects.get(&c.spec.project_hash) else {
            println!("skip  {label}: project not recorded in the store");
            skipped += 1;
            continue;
        };
        let bytes = match std::fs::read(&p.path) {
            Ok(b) => b,
            Err(e) => {
                println!("skip  {label}: {}: {e}", p.path.display());
                skipped += 1;
                continue;
            }
        };
        if blake3::hash(&bytes).to_hex().as_str() != c.spec.project_hash {
            println!("skip  {label}: {} changed since the study", p.path.display());
            skipped += 1;
            continue;
        }
        let r = clowder_worker::exec::run_in_process(&c.spec, &p.path, &mut |_| {});
        let status = status_name(RunStatus::try_from(r.status).unwrap_or(RunStatus::Unspecified));
        if status == c.status && r.digest == c.digest && r.dynamic_suite_json == c.dynamic {
            let dynamic = if c.dynamic.is_empty() { "" } else { " (and its dynamic suite)" };
            println!("ok    {label}: {status} {}{dynamic}", c.digest);
            checked += 1;
        } else if status == c.status && r.digest == c.digest {
            println!("DIFF  {label}: same status and digest, another dynamic suite");
            mismatches += 1;
        } else {
            println!("DIFF  {label}: stored {} {}, now {status} {} {}", c.status, c.digest, r.digest, r.error);
            mismatches += 1;
        }
    }
    println!(
        "verify: {checked} reproduced, {mismatches} differ, {skipped} skipped ({} finished runs in the store{}{})",
        cands.len() + cpu_limited + too_long,
        if cpu_limited > 0 {
            format!(", {cpu_limited} stopped by the CPU time limit not eligible")
        } else {
            String::new()
        },
        if too_long > 0 { format!(", {too_long} above --max-work not eligible") } else { String::new() }
    );
    if mismatches > 0 {
        return Ok(ExitCode::FAILURE);
    }
    if checked == 0 && args.runs > 0 {
        eprintln!("verify: nothing could be re-executed");
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}
