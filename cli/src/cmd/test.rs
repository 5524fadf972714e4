//! `clowder test SUITE.js PROJECT…`: runs a hand-written Whisker test suite on each
//! project (grading); a `.json` suite is a Neatest dynamic suite, replayed by
//! [`super::test_dynamic`]. Prints Whisker's TAP13 per project; `--out DIR` writes `tests.csv`
//! (project, test, status, message, steps), `tap/<project>.tap` and
//! `feedback/<project>.json` (Itch-style judgement → group → test). Projects run on
//! `--workers` threads; the output is the same for any number of them. An Itch test plan
//! (a file defining `beforeExecution`/`duringExecution`/`afterExecution`) is run by
//! [`super::test_itch`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use clowder_suites::{BetweenTests, Limits, ProjectResult, Status, Suite};

/// Arguments of `clowder test`.
#[derive(clap::Args, Debug)]
pub struct TestArgs {
    /// The suite: a Whisker test file (JavaScript exporting a list of tests), or a Neatest
    /// dynamic suite (`.json`: neural networks in Whisker's format) to replay.
    pub suite: PathBuf,
    /// Project files (`.sb3` or `project.json`).
    #[arg(required = true)]
    pub projects: Vec<PathBuf>,
    /// Run seed (the VM's random stream, `Math.random` in the suite, random inputs).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Seeds to replay a dynamic suite on, e.g. `1-10` or `1,3,5` (default: `--seed`).
    #[arg(long)]
    pub seeds: Option<String>,
    /// Dynamic suites: judge the projects against this original program (e.g. the projects
    /// are its mutants): the networks' reference activations are recorded on it, and a network
    /// that meets new events or surprising activations fails.
    #[arg(long)]
    pub reference: Option<PathBuf>,
    /// Dynamic suites with `--reference`: seeds each network plays on the original to record
    /// its reference activations (the surprise oracle needs at least 30).
    #[arg(long, default_value_t = 100)]
    pub trace_seeds: u32,
    /// Write tests.csv, tap/ and feedback/ (dynamic suites: dynamic.csv) into this folder.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Projects run at once (default: available cores).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Steps a test may run before it ends as a timeout (18000 = Whisker's 600 000 ms).
    #[arg(long, default_value_t = Limits::default().steps_per_test)]
    pub max_steps: u64,
    /// Heap a test file's JavaScript may use, MiB (16 to 16384): everything a suite keeps,
    /// its tests' logs included.
    #[arg(long, default_value_t = Limits::default().js_memory_bytes >> 20)]
    pub js_memory_mb: usize,
    /// Run every test on a freshly loaded project with the suite evaluated anew. By default
    /// the tests of a file share one VM and the suite's module-level state as in the real
    /// Whisker, which resets positions, looks and variables between tests but not layers,
    /// rotation styles, the pen or the renderer's copy of the looks, so a test's verdict can
    /// depend on the tests before it (as it does in Whisker).
    #[arg(long)]
    pub fresh_tests: bool,
    /// Model a Whisker machine on which every step takes exactly this many real
    /// milliseconds, for the blocks Whisker times on its wall clock (music beats and the
    /// `when timer >` hat); default: the virtual clock. Verdicts that change with it depend on
    /// how fast Whisker's machine steps. Dynamic suites: also the suite's wall-clock timeout,
    /// `timeout / MS` steps (default: a machine that keeps up with acceleration 10, 3.33 ms).
    #[arg(long, value_name = "MS", value_parser = super::common::whisker_wall_ms)]
    pub whisker_wall_ms: Option<f64>,
    /// Run `speak` as Whisker does on a machine that cannot reach Scratch's synthesis
    /// service: the block never ends. Default: it ends at once, as in scratch-vm.
    #[arg(long)]
    pub whisker_offline_speech: bool,
    /// The maths library of the browser Whisker runs in, which decides the last bits of
    /// `move`, `point towards`, `mathop` and `^`: `chromium` (the default: Chromium 148 on
    /// Linux, fdlibm but for sin, cos and pow), `glibc` (Chromium 156 on Linux: every
    /// function glibc's) or `node` (fdlibm throughout, as Node 20).
    /// `scripts/maths-vs-chromium.py` tells which one a machine's Chromium uses.
    #[arg(long, value_name = "LIB", value_parser = super::common::whisker_maths)]
    pub whisker_maths: Option<clowder_vm::util::mathlib::MathLib>,
    /// Print one summary line per project instead of the TAP text.
    #[arg(long)]
    pub summary: bool,
    /// Itch plans: the template project the submissions started from (default: each
    /// submission is its own template).
    #[arg(long)]
    pub template: Option<PathBuf>,
    /// Itch plans: the format of `feedback/<project>.ndjson`, `itch` (Itch's partial
    /// output) or `dodona` (Dodona's partial format).
    #[arg(long, default_value = "itch")]
    pub format: String,
}

/// Refuses the flags in `flags` that were given (`(given, flag)`) with one error saying what
/// the suite is and what those flags are for, instead of ignoring them.
pub(crate) fn refuse_flags(flags: &[(bool, &str)], suite: &str, for_what: &str) -> anyhow::Result<()> {
    let given: Vec<&str> = flags.iter().filter(|(g, _)| *g).map(|(_, f)| *f).collect();
    if !given.is_empty() {
        bail!("{suite} does not take {}: {for_what}", given.join(", "));
    }
    Ok(())
}

/// `--js-memory-mb` in bytes, checked (JavaScript suites and Itch plans both take it).
pub(crate) fn js_memory_bytes(args: &TestArgs) -> anyhow::Result<usize> {
    Limits::check_js_memory_mb(args.js_memory_mb as u64).map_err(|e| anyhow::anyhow!("--js-memory-mb {e}"))
}

/// Labels for the projects: file stems, made unique in argument order.
pub(crate) fn labels(paths: &[PathBuf]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(paths.len());
    for p in paths {
        let stem = p.file_stem().map_or_else(|| "project".to_string(), |s| s.to_string_lossy().into_owned());
        let stem = if stem == "project" {
            // `…/NAME/project.json`: the folder names the project.
            p.parent().and_then(Path::file_name).map_or(stem.clone(), |s| s.to_string_lossy().into_owned())
        } else {
            stem
        };
        let mut label = stem.clone();
        let mut n = 2;
        while out.contains(&label) {
            label = format!("{stem}-{n}");
            n += 1;
        }
        out.push(label);
    }
    out
}

/// Runs the suite on one project file (a file that does not load fails every test).
pub(crate) fn run_one(suite: &Suite, path: &Path, label: &str, seed: u64, limits: &Limits) -> ProjectResult {
    match clowder_vm::Project::load_path(path, &clowder_vm::LoadLimits::default()) {
        Ok(p) => clowder_suites::run_project(suite, &Arc::new(p), label, seed, limits),
        Err(e) => ProjectResult::unloadable(suite, label, seed, &e.to_string()),
    }
}

/// Runs `clowder test`.
pub fn run(args: TestArgs) -> anyhow::Result<ExitCode> {
    if args.max_steps == 0 {
        bail!("--max-steps must be positive");
    }
    if args.suite.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
        return super::test_dynamic::run(&args);
    }
    if super::test_itch::is_plan(&args.suite) {
        return super::test_itch::run(&args);
    }
    if args.template.is_some() || args.format != "itch" {
        bail!("--template and --format are for Itch test plans");
    }
    if args.seeds.is_some() || args.reference.is_some() {
        bail!("--seeds and --reference are for dynamic suites (.json); a JavaScript suite takes --seed");
    }
    let suite = Suite::load(&args.suite)?;
    // What the real Whisker would refuse is said once, not in every verdict.
    let notes: std::collections::BTreeSet<&str> = suite.tests().iter().filter_map(|t| t.note.as_deref()).collect();
    for note in notes {
        eprintln!("warning: {}: {note}", args.suite.display());
    }
    let between_tests = if args.fresh_tests { BetweenTests::Fresh } else { BetweenTests::Whisker };
    let js_memory_bytes = js_memory_bytes(&args)?;
    let limits = Limits {
        steps_per_test: args.max_steps,
        between_tests,
        whisker_wall_ms: args.whisker_wall_ms,
        whisker_offline_speech: args.whisker_offline_speech,
        whisker_maths: args.whisker_maths,
        js_memory_bytes,
        ..Limits::default()
    };
    let workers =
        args.workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get)).max(1);
    let labels = labels(&args.projects);
    let jobs: Vec<(&PathBuf, &String)> = args.projects.iter().zip(&labels).collect();
    let results =
        clowder_suites::parallel::map(&jobs, workers, |(path, label)| run_one(&suite, path, label, args.seed, &limits));
    for r in &results {
        if args.summary {
            println!(
                "{}: pass {} fail {} error {} skip {}",
                r.project,
                r.count(Status::Pass),
                r.count(Status::Fail),
                r.count(Status::Error),
                r.count(Status::Skip)
            );
        } else {
            print!("{}", r.tap());
        }
    }
    let count = |s| results.iter().map(|r| r.count(s)).sum::<usize>();
    eprintln!(
        "{} tests on {} projects: pass {} fail {} error {} skip {}",
        suite.tests().len(),
        results.len(),
        count(Status::Pass),
        count(Status::Fail),
        count(Status::Error),
        count(Status::Skip)
    );
    if let Some(dir) = &args.out {
        write_out(dir, &results)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn write_out(dir: &Path, results: &[ProjectResult]) -> anyhow::Result<()> {
    for sub in ["tap", "feedback"] {
        std::fs::create_dir_all(dir.join(sub)).with_context(|| format!("creating {}", dir.join(sub).display()))?;
    }
    let csv = std::fs::File::create(dir.join("tests.csv")).context("creating tests.csv")?;
    clowder_suites::report::write_csv(std::io::BufWriter::new(csv), results).context("writing tests.csv")?;
    for r in results {
        let tap = dir.join("tap").join(format!("{}.tap", r.project));
        std::fs::write(&tap, r.tap()).with_context(|| format!("writing {}", tap.display()))?;
        let json = dir.join("feedback").join(format!("{}.json", r.project));
        let text = serde_json::to_string_pretty(&r.feedback()).context("feedback JSON")?;
        std::fs::write(&json, text + "\n").with_context(|| format!("writing {}", json.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_stems_made_unique_and_folders_for_project_json() {
        let paths: Vec<PathBuf> =
            ["a/Pong.sb3", "b/Pong.sb3", "c/123/project.json"].iter().map(PathBuf::from).collect();
        assert_eq!(labels(&paths), ["Pong", "Pong-2", "123"]);
    }
}
