//! Test runs (experiment kind `test`, docs/testing.md): a hand-written Whisker suite (or an
//! Itch test plan, the project being its own template, or a Neatest dynamic suite replayed)
//! on the run's project with the run's seed, the same function `clowder test` calls
//! ([`clowder_suites::run_project`]). The suite reaches the worker like a project, by content
//! hash into the project cache ([`suite_path`]).
//!
//! Test verdicts are data, not run failures: a run whose suite ran is `ok` whatever its tests
//! say (a project that does not load fails every test, as a broken submission does); only a
//! suite that cannot be used (it does not parse, exports no tests) makes the run an `error`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clowder_proto::test_run::TestRunConfig;
use clowder_proto::{RunResult, RunSpec, RunStatus, TestVerdict};
use clowder_suites::{BetweenTests, Limits, ProjectResult, Status, Suite, itch};
use clowder_vm::LoadLimits;

use crate::exec::failure;

/// Where the worker's cache keeps the suite of a test run whose project is cached at
/// `project_path`: the same folder, named by the suite's hash ([`crate::cache::ProjectCache`]).
pub fn suite_path(project_path: &Path, cfg: &TestRunConfig) -> PathBuf {
    project_path.with_file_name(format!("{}.js", cfg.suite_hash))
}

/// Where the cache keeps the template of an Itch plan's test run (named as the cache names
/// projects: hash and the file's extension), if the run has one.
pub fn template_path(project_path: &Path, cfg: &TestRunConfig) -> Option<PathBuf> {
    let (name, hash) = (cfg.template.as_ref()?, cfg.template_hash.as_ref()?);
    let ext = if name.to_ascii_lowercase().ends_with(".sb3") { "sb3" } else { "json" };
    Some(project_path.with_file_name(format!("{hash}.{ext}")))
}

/// Runs a test run whose project file (checked against its hash) is `bytes`; `template_file`
/// is the cached template of an Itch plan's run.
pub fn run(
    spec: &RunSpec,
    cfg: &TestRunConfig,
    bytes: &[u8],
    suite_file: &Path,
    template_file: Option<&Path>,
) -> RunResult {
    let source = match std::fs::read(suite_file) {
        Ok(b) if blake3::hash(&b).to_hex().as_str() == cfg.suite_hash => b,
        Ok(_) => {
            return failure(RunStatus::InfraFailure, format!("cached suite {} does not match its hash", cfg.suite));
        }
        Err(e) => return failure(RunStatus::InfraFailure, format!("reading cached suite {}: {e}", cfg.suite)),
    };
    let Ok(source) = String::from_utf8(source) else {
        return failure(RunStatus::Error, format!("suite {}: not UTF-8", cfg.suite));
    };
    if clowder_proto::test_run::is_dynamic_suite(&cfg.suite) {
        return run_dynamic(spec, cfg, bytes, &source);
    }
    if itch::is_itch_plan(&source) {
        let template = match (template_file, &cfg.template_hash) {
            (Some(path), Some(hash)) => match std::fs::read(path) {
                Ok(b) if blake3::hash(&b).to_hex().as_str() == hash => Some(b),
                Ok(_) => {
                    return failure(
                        RunStatus::InfraFailure,
                        format!("cached template of {} does not match its hash", cfg.suite),
                    );
                }
                Err(e) => {
                    return failure(
                        RunStatus::InfraFailure,
                        format!("reading the cached template of {}: {e}", cfg.suite),
                    );
                }
            },
            _ => None,
        };
        return run_itch(spec, cfg, bytes, &source, template.as_deref());
    }
    let suite = match Suite::from_source(&cfg.suite, &source) {
        Ok(s) => s,
        Err(e) => return failure(RunStatus::Error, format!("suite {}: {e}", cfg.suite)),
    };
    let name = if spec.file_name.is_empty() { spec.project_name.clone() } else { spec.file_name.clone() };
    let limits = match limits(cfg) {
        Ok(l) => l,
        Err(e) => return failure(RunStatus::Error, format!("suite {}: {e}", cfg.suite)),
    };
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        match clowder_vm::project::load(bytes, &name, &LoadLimits::default()) {
            Ok(p) => clowder_suites::run_project(&suite, &Arc::new(p), &spec.project_name, spec.seed, &limits),
            Err(e) => ProjectResult::unloadable(&suite, &spec.project_name, spec.seed, &e.to_string()),
        }
    }));
    match ran {
        Ok(r) => to_result(&r),
        Err(p) => {
            failure(RunStatus::Error, format!("internal error (panic): {}", crate::exec::panic_message(p.as_ref())))
        }
    }
}

/// An Itch test plan on the run's project against `template` (absent: the project is its own
/// template, as Itch's VPW plans run): one verdict per Itch test (`correct` a pass, `wrong`
/// and `time limit exceeded` fails, plan errors errors). A template that does not load is the
/// run's error (it is the experiment's, not the submission's).
fn run_itch(spec: &RunSpec, cfg: &TestRunConfig, bytes: &[u8], source: &str, template: Option<&[u8]>) -> RunResult {
    let plan = match itch::ItchPlan::from_source(&cfg.suite, source) {
        Ok(p) => p,
        Err(e) => return failure(RunStatus::Error, format!("plan {}: {e}", cfg.suite)),
    };
    let name = if spec.file_name.is_empty() { spec.project_name.clone() } else { spec.file_name.clone() };
    // The coordinator refuses these for Itch plans; a run that has them anyway asks for
    // something Itch's judge does not do.
    if !cfg.whisker_options().is_empty() {
        return failure(RunStatus::Error, format!("plan {}: an Itch plan takes no Whisker options", cfg.suite));
    }
    let limits = match limits(cfg) {
        Ok(l) => l,
        Err(e) => return failure(RunStatus::Error, format!("plan {}: {e}", cfg.suite)),
    };
    let template = match (template, &cfg.template) {
        (Some(b), Some(t)) => match clowder_vm::project::load(b, t, &LoadLimits::default()) {
            Ok(p) => Some(Arc::new(p)),
            Err(e) => return failure(RunStatus::Error, format!("template {t} of {}: {e}", cfg.suite)),
        },
        _ => None,
    };
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let result = match clowder_vm::project::load(bytes, &name, &LoadLimits::default()) {
            Ok(p) => {
                let p = Arc::new(p);
                itch::run_plan(&plan, template.as_ref().unwrap_or(&p), &p, spec.seed, &limits, None)
            }
            Err(e) => itch::ItchResult::unloadable(&e.to_string()),
        };
        let rows = result.rows(&spec.project_name);
        ProjectResult { project: spec.project_name.clone(), suite: cfg.suite.clone(), seed: spec.seed, rows }
    }));
    match ran {
        Ok(r) => to_result(&r),
        Err(p) => {
            failure(RunStatus::Error, format!("internal error (panic): {}", crate::exec::panic_message(p.as_ref())))
        }
    }
}

/// A dynamic suite replayed on the run's project with the run's seed, as `clowder test
/// SUITE.json PROJECT --seeds SEED` replays it: one verdict per network kept after Whisker's
/// minimisation (`pass`: without a reference program the networks only play), its message the
/// statements it covered; the run's `covered`/`total_targets` are the statements the suite
/// covered and the program's statements (as `clowder replay-study` reports them), not tests.
fn run_dynamic(spec: &RunSpec, cfg: &TestRunConfig, bytes: &[u8], source: &str) -> RunResult {
    use clowder_testgen::neatest::replay::{ReplayOptions, replay_suite};
    use clowder_testgen::neatest::{DynamicSuite, VersionHint};
    let suite = match DynamicSuite::from_json(source, VersionHint::Auto) {
        Ok(s) => s,
        Err(e) => return failure(RunStatus::Error, format!("dynamic suite {}: {e}", cfg.suite)),
    };
    // The coordinator refuses these for dynamic suites: they are options of JavaScript suites.
    if !cfg.javascript_options().is_empty() || cfg.template.is_some() {
        return failure(
            RunStatus::Error,
            format!("dynamic suite {}: fresh_tests, js_memory_mb and templates are for JavaScript suites", cfg.suite),
        );
    }
    let limits = match limits(cfg) {
        Ok(l) => l,
        Err(e) => return failure(RunStatus::Error, format!("dynamic suite {}: {e}", cfg.suite)),
    };
    let opts = ReplayOptions {
        whisker_wall_ms: limits.whisker_wall_ms,
        whisker_offline_speech: limits.whisker_offline_speech,
        whisker_maths: limits.whisker_maths,
        ..ReplayOptions::default()
    };
    let name = if spec.file_name.is_empty() { spec.project_name.clone() } else { spec.file_name.clone() };
    let project = match clowder_vm::project::load(bytes, &name, &LoadLimits::default()) {
        Ok(p) => Arc::new(p),
        Err(e) => return failure(RunStatus::ProjectRejected, e.to_string()),
    };
    let ran =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| replay_suite(project, &suite, spec.seed, &opts)));
    let rows = match ran {
        Ok(Ok(rows)) => rows,
        Ok(Err(e)) => return failure(RunStatus::Error, format!("dynamic suite {}: {e}", cfg.suite)),
        Err(p) => {
            return failure(
                RunStatus::Error,
                format!("internal error (panic): {}", crate::exec::panic_message(p.as_ref())),
            );
        }
    };
    let tests = rows
        .iter()
        .map(|r| TestVerdict {
            index: u32::try_from(r.network + 1).unwrap_or(u32::MAX),
            test: format!("network {}", r.network_id),
            status: r.verdict.to_string(),
            message: format!(
                "covered {} of {} statements ({} with the networks before it), {} events",
                r.covered_statements, r.total_statements, r.suite_covered, r.events
            ),
            steps: r.steps,
        })
        .collect();
    let covered = rows.last().map_or(0, |r| r.suite_covered);
    let total = rows.first().map_or(0, |r| r.total_statements);
    verdicts_result(tests, covered, total)
}

/// The runner's limits and options for a test run, as `clowder test` builds them from its
/// flags; the run's configuration comes from outside, so it is checked as they are.
fn limits(cfg: &TestRunConfig) -> Result<Limits, String> {
    let d = Limits::default();
    Ok(Limits {
        steps_per_test: cfg.max_steps.max(1),
        js_memory_bytes: match cfg.js_memory_mb {
            Some(mb) => Limits::check_js_memory_mb(mb).map_err(|e| format!("js_memory_mb {e}"))?,
            None => d.js_memory_bytes,
        },
        between_tests: if cfg.fresh_tests { BetweenTests::Fresh } else { BetweenTests::Whisker },
        whisker_wall_ms: cfg
            .whisker_wall_ms
            .map(clowder_vm::VmOptions::check_whisker_wall_ms)
            .transpose()
            .map_err(|e| format!("whisker_wall_ms {e}"))?,
        whisker_offline_speech: cfg.whisker_offline_speech,
        whisker_maths: cfg
            .whisker_maths
            .as_deref()
            .map(clowder_vm::util::mathlib::MathLib::parse_name)
            .transpose()
            .map_err(|e| format!("whisker_maths: {e}"))?,
        ..d
    })
}

/// The wire result of a suite run: one verdict per test; `covered` / `total_targets` /
/// `coverage` are the passing tests, the tests and their ratio; `steps` the VM steps of all
/// tests, `executions` the tests run. The digest covers every verdict.
pub fn to_result(r: &ProjectResult) -> RunResult {
    let tests: Vec<TestVerdict> = r
        .rows
        .iter()
        .map(|row| TestVerdict {
            index: u32::try_from(row.index).unwrap_or(u32::MAX),
            test: row.test.clone(),
            status: row.status.as_str().to_string(),
            message: row.message.clone(),
            steps: row.steps,
        })
        .collect();
    let pass = r.count(Status::Pass);
    let total = tests.len();
    verdicts_result(tests, pass, total)
}

/// A test run's result from its verdicts: `covered` of `total` targets (tests passed of tests,
/// or a dynamic suite's statements), the steps of all verdicts, a digest over every verdict.
fn verdicts_result(tests: Vec<TestVerdict>, covered: usize, total: usize) -> RunResult {
    let mut h = blake3::Hasher::new();
    for t in &tests {
        for part in [&t.index.to_string(), &t.test, &t.status, &t.message, &t.steps.to_string()] {
            h.update(part.as_bytes());
            h.update(b"\0");
        }
    }
    let executions = tests.len() as u64;
    let total = u32::try_from(total).unwrap_or(u32::MAX);
    let covered = u32::try_from(covered).unwrap_or(u32::MAX);
    RunResult {
        status: RunStatus::Ok as i32,
        coverage: if total == 0 { 0.0 } else { f64::from(covered) / f64::from(total) },
        covered,
        total_targets: total,
        steps: tests.iter().map(|t| t.steps).sum(),
        executions,
        digest: h.finalize().to_hex().to_string(),
        reproducible: true,
        tests,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUITE: &str = r#"
const pass = async function (t) { t.greenFlag(); await t.runForSteps(3); };
const failing = async function (t) { t.assert.equal(1, 2, 'one is not two'); };
const assuming = async function (t) { t.assume.ok(false, 'no such sprite'); };
module.exports = [
  { test: pass, name: 'runs', description: '', categories: [] },
  { test: failing, name: 'fails', description: '', categories: [] },
  { test: assuming, name: 'assumes', description: '', categories: [] },
];
"#;

    fn spec(file_name: &str) -> RunSpec {
        RunSpec { project_name: "p".into(), file_name: file_name.into(), seed: 3, ..Default::default() }
    }

    #[test]
    fn verdicts_are_data_and_a_broken_suite_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let suite = dir.path().join("s.js");
        std::fs::write(&suite, SUITE).unwrap();
        let cfg = TestRunConfig::new("s.js", blake3::hash(SUITE.as_bytes()).to_hex().as_str(), 100);
        let project = include_bytes!("../../datasets/smoke/counter.json");
        let r = run(&spec("p.json"), &cfg, project, &suite, None);
        assert_eq!(r.status, RunStatus::Ok as i32, "{}", r.error);
        let verdicts: Vec<(&str, &str)> = r.tests.iter().map(|t| (t.test.as_str(), t.status.as_str())).collect();
        assert_eq!(verdicts, [("runs", "pass"), ("fails", "fail"), ("assumes", "skip")], "{:?}", r.tests);
        assert_eq!((r.covered, r.total_targets, r.executions), (1, 3, 3));
        assert_eq!(run(&spec("p.json"), &cfg, project, &suite, None).digest, r.digest, "same inputs, same digest");
        // A submission that does not load fails every test; the run is still ok.
        let broken = run(&spec("p.json"), &cfg, b"{not json", &suite, None);
        assert_eq!(broken.status, RunStatus::Ok as i32);
        assert!(broken.tests.iter().all(|t| t.status == "fail" && t.message.contains("could not be loaded")));
        assert_ne!(broken.digest, r.digest);
        // A suite that does not parse is the run's error; a cache mismatch is infrastructure.
        std::fs::write(&suite, "module.exports = [").unwrap();
        let bad = TestRunConfig::new("s.js", blake3::hash(b"module.exports = [").to_hex().as_str(), 100);
        let e = run(&spec("p.json"), &bad, project, &suite, None);
        assert_eq!(e.status, RunStatus::Error as i32);
        assert!(e.error.contains("s.js"), "{}", e.error);
        assert_eq!(run(&spec("p.json"), &cfg, project, &suite, None).status, RunStatus::InfraFailure as i32);
    }

    /// A run's options come from outside: they reach the runner as `clowder test`'s flags do,
    /// and values its flags refuse are the run's error, not a panic or a silent default.
    #[test]
    fn a_runs_options_become_the_runners_and_bad_ones_are_errors() {
        let base = TestRunConfig::new("s.js", "h", 100);
        let d = limits(&base).expect("defaults");
        assert_eq!((d.between_tests, d.whisker_wall_ms, d.whisker_maths), (BetweenTests::Whisker, None, None));
        let set = TestRunConfig {
            fresh_tests: true,
            js_memory_mb: Some(64),
            whisker_maths: Some("node".into()),
            whisker_offline_speech: true,
            whisker_wall_ms: Some(8.5),
            ..base.clone()
        };
        let l = limits(&set).expect("valid options");
        assert_eq!((l.between_tests, l.js_memory_bytes, l.whisker_wall_ms), (BetweenTests::Fresh, 64 << 20, Some(8.5)));
        assert_eq!((l.whisker_maths, l.whisker_offline_speech), (Some(clowder_vm::util::mathlib::MathLib::Node), true));
        for (bad, needle) in [
            (TestRunConfig { whisker_wall_ms: Some(f64::NAN), ..base.clone() }, "whisker_wall_ms"),
            (TestRunConfig { whisker_maths: Some("v8".into()), ..base.clone() }, "unknown maths library"),
            (TestRunConfig { js_memory_mb: Some(1 << 40), ..base.clone() }, "js_memory_mb"),
        ] {
            assert!(limits(&bad).unwrap_err().contains(needle), "{needle}");
        }
        // An Itch plan's run with Whisker options is refused, not run without them.
        let plan = "function afterExecution(e) { e.out.test('t').acceptIf(true); }\n";
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plan.js");
        std::fs::write(&file, plan).unwrap();
        let cfg = TestRunConfig {
            whisker_offline_speech: true,
            ..TestRunConfig::new("plan.js", blake3::hash(plan.as_bytes()).to_hex().as_str(), 100)
        };
        let project = include_bytes!("../../datasets/smoke/counter.json");
        let r = run(&spec("p.json"), &cfg, project, &file, None);
        assert_eq!(r.status, RunStatus::Error as i32);
        assert!(r.error.contains("takes no Whisker options"), "{}", r.error);
    }

    #[test]
    fn itch_plans_run_with_the_project_as_template() {
        let plan = "function beforeExecution(e) {\n  e.out.test('has a stage').acceptIf(e.log.submission.stage !== undefined);\n}\n\
                    function afterExecution(e) {\n  e.out.test('no sprite called Nobody').acceptIf(e.log.last.findSprite('Nobody') === undefined);\n  e.out.test('fails').acceptIf(false);\n}\n";
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plan.js");
        std::fs::write(&file, plan).unwrap();
        let cfg = TestRunConfig::new("plan.js", blake3::hash(plan.as_bytes()).to_hex().as_str(), 100);
        let project = include_bytes!("../../datasets/smoke/counter.json");
        let r = run(&spec("p.json"), &cfg, project, &file, None);
        assert_eq!(r.status, RunStatus::Ok as i32, "{}", r.error);
        let verdicts: Vec<(&str, &str)> = r.tests.iter().map(|t| (t.test.as_str(), t.status.as_str())).collect();
        assert_eq!(verdicts, [("has a stage", "pass"), ("no sprite called Nobody", "pass"), ("fails", "fail")]);
        assert_eq!(run(&spec("p.json"), &cfg, project, &file, None).digest, r.digest);
        // With a template: the plan's static checks compare the project against it.
        let check = "function beforeExecution(e) {\n  e.out.test('same stage').acceptIf(e.log.template.stage.name === e.log.submission.stage.name);\n  e.out.test('template has no sprites').acceptIf(e.log.template.sprites.length === 0);\n}\n";
        std::fs::write(&file, check).unwrap();
        // The template: the project's stage alone.
        let mut t: serde_json::Value = serde_json::from_slice(project).unwrap();
        t["targets"].as_array_mut().unwrap().retain(|t| t["isStage"] == true);
        let template = serde_json::to_vec(&t).unwrap();
        let template = template.as_slice();
        let tfile = dir.path().join("t.json");
        std::fs::write(&tfile, template).unwrap();
        let cfg = TestRunConfig::new("plan.js", blake3::hash(check.as_bytes()).to_hex().as_str(), 100)
            .with_template("t.json", blake3::hash(template).to_hex().as_str());
        let r = run(&spec("p.json"), &cfg, project, &file, Some(&tfile));
        let verdicts: Vec<(&str, &str)> = r.tests.iter().map(|t| (t.test.as_str(), t.status.as_str())).collect();
        assert_eq!(verdicts, [("same stage", "pass"), ("template has no sprites", "pass")], "{}", r.error);
        assert_eq!(
            template_path(Path::new("/c/x.json"), &cfg),
            Some(PathBuf::from(format!("/c/{}.json", blake3::hash(template).to_hex())))
        );
    }
}
