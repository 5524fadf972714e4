//! `clowder test SUITE.json PROJECT… --seeds 1-10`: replays a Neatest dynamic test suite (a
//! file of neural networks in Whisker's format, written by Whisker or by `clowder gen
//! --algorithm neatest`) on each project and seed. Every network plays the game as it would in
//! Whisker; `--out DIR` writes `dynamic.csv`, one row per (project, network, seed). With
//! `--reference ORIGINAL.sb3` the projects are judged against the original (Whisker's mutation
//! analysis of dynamic suites: reference activations recorded on the original, a network
//! fails on new events or surprising activations).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use clowder_testgen::neatest::replay::{
    PreparedSuite, Reference, ReplayOptions, ReplayRow, judge, prepare_suite, replay_suite,
};
use clowder_testgen::neatest::{DynamicSuite, VersionHint};

use super::test::{TestArgs, labels};

/// Parses `1-10`, `3` or `1,4,7-9` into seeds (at most 10 000).
pub(crate) fn parse_seeds(text: &str) -> anyhow::Result<Vec<u64>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let a: u64 = a.parse().with_context(|| format!("--seeds {text:?}: {a:?} is not a seed"))?;
        let b: u64 = b.parse().with_context(|| format!("--seeds {text:?}: {b:?} is not a seed"))?;
        if b < a {
            bail!("--seeds {text:?}: range {a}-{b} is empty");
        }
        if out.len() as u64 + (b - a) >= 10_000 {
            bail!("--seeds {text:?}: more than 10 000 seeds");
        }
        out.extend(a..=b);
    }
    if out.is_empty() {
        bail!("--seeds {text:?}: no seed");
    }
    Ok(out)
}

/// Flags of JavaScript suites and Itch plans mean nothing to a dynamic suite: say so instead of
/// ignoring them (a study run with `--max-steps` would otherwise measure something else).
fn reject_suite_flags(args: &TestArgs) -> anyhow::Result<()> {
    let defaults = clowder_suites::Limits::default();
    super::test::refuse_flags(
        &[
            (args.max_steps != defaults.steps_per_test, "--max-steps (a network plays until the suite's own timeout)"),
            (args.js_memory_mb != defaults.js_memory_bytes >> 20, "--js-memory-mb"),
            (args.fresh_tests, "--fresh-tests"),
            (args.template.is_some() || args.format != "itch", "--template and --format"),
        ],
        "a dynamic suite (.json)",
        "they are for JavaScript suites and Itch plans",
    )
}

/// Runs `clowder test` on a dynamic suite.
pub fn run(args: &TestArgs) -> anyhow::Result<ExitCode> {
    reject_suite_flags(args)?;
    let text = std::fs::read_to_string(&args.suite).with_context(|| format!("reading {}", args.suite.display()))?;
    let suite = DynamicSuite::from_json(&text, VersionHint::Auto)
        .with_context(|| format!("loading {}", args.suite.display()))?;
    let seeds = match &args.seeds {
        Some(s) => parse_seeds(s)?,
        None => vec![args.seed],
    };
    let mut opts = ReplayOptions {
        whisker_wall_ms: args.whisker_wall_ms,
        whisker_offline_speech: args.whisker_offline_speech,
        whisker_maths: args.whisker_maths,
        ..ReplayOptions::default()
    };
    if let Some(path) = &args.reference {
        if !(1..=10_000).contains(&args.trace_seeds) {
            bail!("--trace-seeds must be in 1..=10000");
        }
        let original = clowder_vm::Project::load_path(path, &clowder_vm::LoadLimits::default())
            .with_context(|| format!("loading the reference {}", path.display()))?;
        opts.reference = Some(Reference { project: Arc::new(original), seeds: args.trace_seeds });
    }
    let workers =
        args.workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get)).max(1);
    let labels = labels(&args.projects);
    let mut jobs = Vec::new();
    for (path, label) in args.projects.iter().zip(&labels) {
        for &seed in &seeds {
            jobs.push((path, label, seed));
        }
    }
    // Against a reference, the suite is prepared on the original once per seed (minimised,
    // reference activations recorded) and every project judged from that state.
    let prepared: Vec<(u64, PreparedSuite)> = match &opts.reference {
        Some(r) => {
            let made = clowder_suites::parallel::map(&seeds, workers, |&seed| {
                prepare_suite(Arc::clone(&r.project), &suite, seed, &opts).map(|p| (seed, p))
            });
            made.into_iter().collect::<Result<_, String>>().map_err(|e| anyhow::anyhow!("the reference: {e}"))?
        }
        None => Vec::new(),
    };
    let bar = crate::progress::Progress::new(jobs.len() as u64, "replays (project × seed)", false);
    let replay_one = |(path, label, seed): &(&PathBuf, &String, u64)| -> Result<(String, Vec<ReplayRow>), String> {
        let project = Arc::new(
            clowder_vm::Project::load_path(path, &clowder_vm::LoadLimits::default())
                .map_err(|e| format!("{}: {e}", path.display()))?,
        );
        let rows = match prepared.iter().find(|(s, _)| s == seed) {
            Some((_, p)) => judge(project, p, &opts),
            None => replay_suite(project, &suite, *seed, &opts),
        };
        rows.map(|rows| (label.to_string(), rows)).map_err(|e| format!("{}: {e}", path.display()))
    };
    let results = clowder_suites::parallel::map(&jobs, workers, |job| {
        let r = replay_one(job);
        bar.inc(1);
        r
    });
    bar.finish_and_clear();
    let mut rows: Vec<(String, ReplayRow)> = Vec::new();
    for r in results {
        match r {
            Ok((label, rs)) => rows.extend(rs.into_iter().map(|row| (label.clone(), row))),
            Err(e) => bail!("{e}"),
        }
    }
    for (label, r) in &rows {
        println!(
            "{label} network {} seed {}: {}/{} statements, {} events in {} steps, {} surprising, {}",
            r.network, r.seed, r.covered_statements, r.total_statements, r.events, r.steps, r.surprise_count, r.verdict
        );
    }
    if let Some(dir) = &args.out {
        write_csv(dir, &rows)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn write_csv(dir: &Path, rows: &[(String, ReplayRow)]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join("dynamic.csv");
    let file = std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    let mut w = csv::Writer::from_writer(std::io::BufWriter::new(file));
    w.write_record([
        "project",
        "network",
        "seed",
        "total_statements",
        "covered_statements",
        "events",
        "surprise_count",
        "verdict",
    ])?;
    for (label, r) in rows {
        w.write_record([
            label.clone(),
            r.network.to_string(),
            r.seed.to_string(),
            r.total_statements.to_string(),
            r.covered_statements.to_string(),
            r.events.to_string(),
            r.surprise_count.to_string(),
            r.verdict.to_string(),
        ])?;
    }
    w.flush()?;
    w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_lists() {
        assert_eq!(parse_seeds("1-3").unwrap(), [1, 2, 3]);
        assert_eq!(parse_seeds("5, 1-2").unwrap(), [5, 1, 2]);
        assert!(parse_seeds("3-1").is_err());
        assert!(parse_seeds("x").is_err());
        assert!(parse_seeds("1-20000").is_err());
    }
}
