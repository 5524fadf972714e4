//! `clowder test PLAN.js SUBMISSION… [--template T.sb3]`: runs an Itch test plan on each
//! submission ([`clowder_suites::itch`]). Prints a summary (or TAP) per submission;
//! `--out DIR` writes `feedback/<submission>.ndjson` (Itch's partial output, streamed as the
//! plan emits it, or Dodona's partial format with `--format dodona`),
//! `feedback/<submission>.json` (Itch's full format), `tests.csv` and `tap/`.

use std::cell::Cell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::Arc;

use anyhow::{Context, bail};
use clowder_suites::itch::{self, ItchPlan, ItchResult};
use clowder_suites::{Limits, ProjectResult};
use clowder_vm::{LoadLimits, Project};
use serde_json::Value as J;

use super::test::{TestArgs, labels};

/// Whether `path` is an Itch plan (a `.js` file defining one of the three entry points).
pub fn is_plan(path: &Path) -> bool {
    if !path.extension().is_some_and(|e| e.eq_ignore_ascii_case("js")) {
        return false;
    }
    let small = std::fs::metadata(path).is_ok_and(|m| m.len() <= clowder_suites::MAX_SUITE_BYTES);
    small && std::fs::read_to_string(path).is_ok_and(|s| itch::is_itch_plan(&s))
}

/// Runs the plan on one submission, streaming Itch's partial output to `stream` if given.
fn run_one(
    plan: &ItchPlan,
    template: Option<&Arc<Project>>,
    path: &Path,
    seed: u64,
    limits: &Limits,
    stream: Option<PathBuf>,
) -> (ItchResult, Option<String>) {
    let submission = match Project::load_path(path, &LoadLimits::default()) {
        Ok(p) => Arc::new(p),
        Err(e) => return (ItchResult::unloadable(&e.to_string()), None),
    };
    let failed = Rc::new(Cell::new(None::<String>));
    let sink: Option<itch::Sink> = stream.and_then(|p| match std::fs::File::create(&p) {
        Ok(f) => {
            let mut w = std::io::LineWriter::new(f);
            let failed = Rc::clone(&failed);
            Some(Box::new(move |line: &str| {
                if let Err(e) = writeln!(w, "{line}") {
                    failed.set(Some(format!("writing {}: {e}", p.display())));
                }
            }) as itch::Sink)
        }
        Err(e) => {
            failed.set(Some(format!("creating {}: {e}", p.display())));
            None
        }
    });
    let template = template.unwrap_or(&submission);
    let result = itch::run_plan(plan, template, &submission, seed, limits, sink);
    (result, failed.take())
}

/// Runs `clowder test` with an Itch plan.
pub fn run(args: &TestArgs) -> anyhow::Result<ExitCode> {
    if args.seeds.is_some() || args.reference.is_some() {
        bail!("--seeds and --reference are for dynamic suites (.json); an Itch plan takes --seed");
    }
    // Itch's judge is not Whisker: flags that model Whisker's machine would change nothing here.
    super::test::refuse_flags(
        &[
            (args.whisker_wall_ms.is_some(), "--whisker-wall-ms"),
            (args.whisker_offline_speech, "--whisker-offline-speech"),
            (args.whisker_maths.is_some(), "--whisker-maths"),
            (args.fresh_tests, "--fresh-tests"),
        ],
        "an Itch plan (it runs in Itch's judge)",
        "they are for Whisker suites",
    )?;
    let dodona = match args.format.as_str() {
        "itch" => false,
        "dodona" => true,
        other => bail!("--format {other}: expected itch or dodona"),
    };
    let plan = ItchPlan::load(&args.suite)?;
    let template = match &args.template {
        Some(t) => Some(Arc::new(
            Project::load_path(t, &LoadLimits::default())
                .with_context(|| format!("loading template {}", t.display()))?,
        )),
        None => None,
    };
    let limits = Limits {
        steps_per_test: args.max_steps,
        js_memory_bytes: super::test::js_memory_bytes(args)?,
        ..Limits::default()
    };
    let workers =
        args.workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get)).max(1);
    if let Some(dir) = &args.out {
        for sub in ["tap", "feedback"] {
            std::fs::create_dir_all(dir.join(sub)).with_context(|| format!("creating {}", dir.join(sub).display()))?;
        }
    }
    let labels = labels(&args.projects);
    let jobs: Vec<(&PathBuf, &String)> = args.projects.iter().zip(&labels).collect();
    let results = clowder_suites::parallel::map(&jobs, workers, |(path, label)| {
        let stream = args.out.as_ref().filter(|_| !dodona).map(|d| d.join("feedback").join(format!("{label}.ndjson")));
        run_one(&plan, template.as_ref(), path, args.seed, &limits, stream)
    });
    let mut projects = Vec::new();
    for ((result, failed), label) in results.iter().zip(&labels) {
        if let Some(e) = failed {
            bail!("{e}");
        }
        let rows = result.rows(label);
        let pr = ProjectResult { project: label.clone(), suite: plan.name().to_string(), seed: args.seed, rows };
        if args.summary {
            let counts: Vec<String> = itch::STATUSES
                .iter()
                .rev()
                .map(|s| (s, result.count(s)))
                .filter(|(_, n)| *n > 0)
                .map(|(s, n)| format!("{s} {n}"))
                .collect();
            println!("{label}: {} ({}; {} steps)", result.status, counts.join(", "), result.steps);
        } else {
            print!("{}", pr.tap());
        }
        projects.push(pr);
    }
    let total = |s: &str| results.iter().map(|(r, _)| r.count(s)).sum::<usize>();
    eprintln!(
        "{} submissions: correct {} wrong {} time limit exceeded {} testplan error {} internal error {}",
        results.len(),
        total("correct"),
        total("wrong"),
        total("time limit exceeded"),
        total("testplan error"),
        total("internal error")
    );
    if let Some(dir) = &args.out {
        write_out(dir, &projects, &results, &labels, dodona)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn write_out(
    dir: &Path,
    projects: &[ProjectResult],
    results: &[(ItchResult, Option<String>)],
    labels: &[String],
    dodona: bool,
) -> anyhow::Result<()> {
    let csv = std::fs::File::create(dir.join("tests.csv")).context("creating tests.csv")?;
    clowder_suites::report::write_csv(std::io::BufWriter::new(csv), projects).context("writing tests.csv")?;
    for ((pr, (result, _)), label) in projects.iter().zip(results).zip(labels) {
        let tap = dir.join("tap").join(format!("{label}.tap"));
        std::fs::write(&tap, pr.tap()).with_context(|| format!("writing {}", tap.display()))?;
        let full = dir.join("feedback").join(format!("{label}.json"));
        let text = serde_json::to_string_pretty(&result.full).context("feedback JSON")?;
        std::fs::write(&full, text + "\n").with_context(|| format!("writing {}", full.display()))?;
        let partial = dir.join("feedback").join(format!("{label}.ndjson"));
        let lines: Option<Vec<J>> = if dodona {
            Some(itch::dodona(&result.updates))
        } else if result.steps == 0 && result.tests.is_empty() && !partial.exists() {
            // A submission that did not load streamed nothing.
            Some(result.updates.clone())
        } else {
            None
        };
        if let Some(lines) = lines {
            let text: String = lines.iter().map(|u| format!("{u}\n")).collect();
            std::fs::write(&partial, text).with_context(|| format!("writing {}", partial.display()))?;
        }
    }
    Ok(())
}
