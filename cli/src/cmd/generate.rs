//! `clowder gen PROJECT`: one test-generation run, printed and optionally saved.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use clowder_testgen::{Algorithm, AlgorithmConfig, Budget};

/// Arguments of `clowder gen`.
#[derive(clap::Args, Debug)]
pub struct GenArgs {
    /// Project file (`.sb3` or `project.json`).
    pub project: PathBuf,
    /// Search algorithm: random, mosa, mio or neatest (default: the config file's, else mio).
    #[arg(long)]
    pub algorithm: Option<String>,
    /// Run seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Budget in VM steps (30 per Scratch second). Default: the config file's
    /// fixed time, else 180000 (the Whisker study's 10 minutes at acceleration 10).
    #[arg(long, conflicts_with_all = ["budget_executions", "budget_evaluations", "budget_seconds"])]
    pub budget_steps: Option<u64>,
    /// Budget in test executions.
    #[arg(long, conflicts_with_all = ["budget_evaluations", "budget_seconds"])]
    pub budget_executions: Option<u64>,
    /// Budget in fitness evaluations.
    #[arg(long, conflicts_with = "budget_seconds")]
    pub budget_evaluations: Option<u64>,
    /// Budget in wall-clock seconds (results are not reproducible).
    #[arg(long)]
    pub budget_seconds: Option<u64>,
    /// A Whisker configuration file (e.g. the study's `mio.json`).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Parameter override `name=value` (repeatable), e.g. `--param population_size=50` or
    /// `--param whisker_maths=glibc`.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Write result.json, suite.json, tests.js and timeline.csv into this folder (Neatest:
    /// suite.json is the dynamic suite in Whisker's format, static.json the static one).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// List the targets the run did not cover (sprite, block id, opcode).
    #[arg(long)]
    pub uncovered: bool,
    /// Work cap of the search in work units (about nanoseconds; minimisation and
    /// assertions may use what the search left plus a quarter each), 0 for none; default: the engine's for the budget
    /// (`clowder_testgen::default_work_cap`), as studies use.
    #[arg(long)]
    pub work_cap: Option<u64>,
}

/// Runs `clowder gen`.
pub fn run(args: GenArgs) -> anyhow::Result<ExitCode> {
    let (mut cfg, config_steps) = match &args.config {
        Some(path) => {
            let w = clowder_testgen::whisker_config::load(path).map_err(anyhow::Error::msg)?;
            (w.config, w.budget_steps)
        }
        None => (AlgorithmConfig::new(Algorithm::Mio), None),
    };
    if let Some(name) = &args.algorithm {
        let a = Algorithm::parse(name).map_err(anyhow::Error::msg)?;
        if args.config.is_some() && a != cfg.algorithm {
            bail!("--algorithm {} contradicts the config file's algorithm {}", a.name(), cfg.algorithm.name());
        }
        cfg.algorithm = a;
    }
    for kv in &args.params {
        let Some((k, v)) = kv.split_once('=') else { bail!("--param {kv:?}: expected NAME=VALUE") };
        // A bare word is a name (`--param whisker_maths=glibc`); which keys take names,
        // numbers or booleans is the configuration's to check.
        let value: serde_json::Value =
            serde_json::from_str(v.trim()).unwrap_or_else(|_| serde_json::Value::String(v.trim().to_string()));
        cfg.params.insert(k.trim().to_string(), value);
    }
    cfg.validate().map_err(anyhow::Error::msg)?;
    let budget = match (args.budget_steps, args.budget_executions, args.budget_evaluations, args.budget_seconds) {
        (Some(n), ..) => Budget::Steps(n),
        (_, Some(n), ..) => Budget::Executions(n),
        (_, _, Some(n), _) => Budget::Evaluations(n),
        (_, _, _, Some(n)) => Budget::Seconds(n),
        _ => Budget::Steps(config_steps.unwrap_or(180_000)),
    };
    if budget.amount() == 0 {
        bail!("the budget must be positive");
    }
    let project = clowder_vm::Project::load_path(&args.project, &clowder_vm::LoadLimits::default())
        .with_context(|| format!("loading {}", args.project.display()))?;
    let project = Arc::new(project);
    let started = Instant::now();
    let work_cap = args.work_cap.unwrap_or_else(|| clowder_testgen::default_work_cap(budget));
    let opts = clowder_testgen::RunOptions { work_cap, ..Default::default() };
    let outcome = clowder_testgen::generate_with(Arc::clone(&project), &cfg, args.seed, budget, &opts, &mut |_| {})?;
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{} {} seed {}: coverage {:.4} ({}/{}), {} steps, {} executions, {} evaluations, suite {} tests / {} events \
         (before minimisation {} / {}), full coverage at {}, {:.2} s",
        args.project.display(),
        cfg.algorithm.name(),
        args.seed,
        outcome.coverage,
        outcome.covered,
        outcome.total_targets,
        outcome.steps,
        outcome.executions,
        outcome.evaluations,
        outcome.tests_after_min,
        outcome.events_after_min,
        outcome.tests_before_min,
        outcome.events_before_min,
        outcome.steps_to_full_coverage.map_or("-".to_string(), |s| format!("step {s}")),
        secs
    );
    if let Some(r) = outcome.reliable_covered {
        println!("reliable coverage {r}/{} (statements covered on every stable_count seeds)", outcome.total_targets);
    }
    println!("digest {}", outcome.digest);
    match &outcome.limit {
        Some(phase) => println!("work {} (limit: the work cap of {work_cap} ended the {phase})", outcome.work),
        None => println!("work {}", outcome.work),
    }
    if !outcome.unknown_opcodes.is_empty() {
        let list: Vec<String> = outcome.unknown_opcodes.iter().map(|(k, v)| format!("{k}={v}")).collect();
        println!("unimplemented opcodes: {}", list.join(" "));
    }
    if args.uncovered {
        let covered: std::collections::BTreeSet<u32> = outcome.first_covered.iter().map(|(b, _)| *b).collect();
        for b in clowder_testgen::targets::statement_targets(&project) {
            if !covered.contains(&b) {
                let block = project.block(b);
                let sprite = project.targets.get(block.target as usize).map_or("?", |t| t.name.as_str());
                println!("uncovered {sprite} {} {}", block.id, block.opcode);
            }
        }
    }
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let write = |name: &str, text: String| -> anyhow::Result<()> {
            let p = dir.join(name);
            std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
        };
        let meta = serde_json::json!({
            "project": args.project.display().to_string(),
            "project_hash": project.content_hash,
            "config": cfg,
            "seed": args.seed,
            "budget": budget,
            "engine_version": clowder_vm::ENGINE_VERSION,
            "outcome": outcome,
        });
        write("result.json", serde_json::to_string_pretty(&meta)?)?;
        match &outcome.dynamic_suite {
            Some(dynamic) => {
                write("suite.json", dynamic.clone())?;
                write("static.json", serde_json::to_string_pretty(&outcome.suite)?)?;
            }
            None => write("suite.json", serde_json::to_string_pretty(&outcome.suite)?)?,
        }
        let restore = clowder_testgen::export::Restore::of(&project);
        write(
            "tests.js",
            clowder_testgen::export::whisker_js(&outcome.suite, cfg.algorithm.name(), args.seed, &restore),
        )?;
        let mut csv = String::from("steps,executions,covered,total_targets\n");
        for p in &outcome.timeline {
            csv.push_str(&format!("{},{},{},{}\n", p.steps, p.executions, p.covered, outcome.total_targets));
        }
        write("timeline.csv", csv)?;
    }
    Ok(ExitCode::SUCCESS)
}
