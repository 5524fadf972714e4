//! Test experiments (`kind = "test"`): hand-written Whisker suites graded at scale. A run is
//! (project, suite, seed); the worker runs the suite on the project with the run's seed
//! (docs/testing.md) and reports one verdict per test, exported as `tests.csv`.
//!
//! ```toml
//! name = "grading"
//! kind = "test"
//! dataset = "$CLOWDER_CORPORA/whisker-rq1"
//! seeds = 10
//! budget = { steps = 18000 }         # optional: steps per test (default 18000, Whisker's 600 s)
//!
//! [[suites]]
//! name = "FruitCatching"             # label in results (default: the file's stem)
//! file = "$CLOWDER_WHISKER_EXAMPLES/FruitCatchingTest.js"
//! projects = ["FruitCatching"]       # optional: only these projects of the dataset
//! exclude = ["Pong"]                 # optional: not these
//! template = "start.sb3"             # optional, Itch test plans: the project students started
//!                                    # from (default: each project is its own template)
//! # optional, Whisker suites, as `clowder test`'s flags of the same names:
//! whisker_wall_ms = 20.0             # a Whisker machine whose steps take 20 real ms
//! whisker_offline_speech = true      # `speak` as in a Whisker without the synthesis service
//! whisker_maths = "glibc"            # the maths library of Whisker's browser
//! fresh_tests = true                 # every test on a freshly loaded project
//! js_memory_mb = 512                 # heap of the suite's JavaScript (also Itch plans)
//! ```
//!
//! The suite file (and a template) is read and hashed when the experiment is loaded; its hash
//! is part of the run identity and the worker fetches it by that hash like a project. A suite
//! file may be a Whisker suite, an Itch test plan or a Neatest dynamic suite (`.json`); the
//! worker tells them apart as this module does.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clowder_proto::test_run::TestRunConfig;
use clowder_testgen::Budget;
use serde::Deserialize;

use crate::experiment::{Experiment, ExperimentSpec, Mutation, Run, expand_corpora};
use crate::table::ProjectSource;

/// Largest suite file (bytes): the suite loader's limit, which says why it is this large.
pub use clowder_suites::MAX_SUITE_BYTES;

/// Default steps per test (the runner's: Whisker's 600 s).
pub use clowder_suites::DEFAULT_STEPS_PER_TEST;

/// One `[[suites]]` entry as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteSpec {
    /// Label in results (default: the file's stem).
    pub name: Option<String>,
    /// The suite file, relative to the experiment file, or `$CLOWDER_CORPORA/…`,
    /// `$CLOWDER_WHISKER_EXAMPLES/…`.
    pub file: String,
    /// Only these projects (by name) of the dataset; absent: all.
    pub projects: Option<Vec<String>>,
    /// Not these projects.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Itch test plans: the template project the submissions started from (a path like
    /// `file`); absent: each project is its own template.
    pub template: Option<String>,
    /// `clowder test --whisker-wall-ms`: real ms a step of the modelled Whisker machine takes.
    pub whisker_wall_ms: Option<f64>,
    /// `clowder test --whisker-offline-speech`.
    #[serde(default)]
    pub whisker_offline_speech: bool,
    /// `clowder test --whisker-maths`: `chromium`, `glibc` or `node`.
    pub whisker_maths: Option<String>,
    /// `clowder test --fresh-tests`.
    #[serde(default)]
    pub fresh_tests: bool,
    /// `clowder test --js-memory-mb`.
    pub js_memory_mb: Option<u64>,
}

/// What a suite file is (the worker tells them apart the same way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SuiteKind {
    /// A Whisker test file (JavaScript exporting tests).
    Whisker,
    /// An Itch test plan.
    Itch,
    /// A Neatest dynamic suite (`.json`: networks in Whisker's format).
    Dynamic,
}

impl SuiteSpec {
    /// The entry's options as a run carries them, checked as `clowder test` checks its flags
    /// for this kind of suite.
    fn options(&self, kind: SuiteKind) -> Result<TestRunConfig, String> {
        let config = TestRunConfig {
            fresh_tests: self.fresh_tests,
            js_memory_mb: self.js_memory_mb,
            whisker_maths: self.whisker_maths.clone(),
            whisker_offline_speech: self.whisker_offline_speech,
            whisker_wall_ms: self.whisker_wall_ms,
            ..TestRunConfig::new("", "", 0)
        };
        let (refused, what, for_what) = match kind {
            SuiteKind::Whisker => (Vec::new(), "", ""),
            SuiteKind::Itch => (config.whisker_options(), "an Itch plan (it runs in Itch's judge)", "Whisker suites"),
            SuiteKind::Dynamic => (config.javascript_options(), "a dynamic suite (.json)", "JavaScript suites"),
        };
        if !refused.is_empty() {
            return Err(format!("{what} does not take {}: they are for {for_what}", refused.join(", ")));
        }
        if let Some(ms) = self.whisker_wall_ms {
            clowder_vm::VmOptions::check_whisker_wall_ms(ms).map_err(|e| format!("whisker_wall_ms {e}"))?;
        }
        if let Some(m) = &self.whisker_maths {
            clowder_vm::util::mathlib::MathLib::parse_name(m).map_err(|e| format!("whisker_maths: {e}"))?;
        }
        if let Some(mb) = self.js_memory_mb {
            clowder_suites::Limits::check_js_memory_mb(mb).map_err(|e| format!("js_memory_mb {e}"))?;
        }
        Ok(config)
    }
}

/// A template project of an Itch plan, served to workers by hash like the suite.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateFile {
    /// The file.
    pub path: PathBuf,
    /// Its file name (its extension tells `.sb3` from `project.json`).
    pub file_name: String,
    /// blake3 of its bytes (hex).
    pub hash: String,
    /// Its size in bytes.
    pub size: u64,
}

/// A resolved suite entry.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteEntry {
    /// Label in results (the `algorithm` column).
    pub name: String,
    /// The file.
    pub path: PathBuf,
    /// Its file name.
    pub file_name: String,
    /// blake3 of its bytes (hex).
    pub hash: String,
    /// Its size in bytes.
    pub size: u64,
    /// Only these projects (absent: all).
    pub projects: Option<BTreeSet<String>>,
    /// Not these.
    pub exclude: BTreeSet<String>,
    /// The template of an Itch plan.
    pub template: Option<TemplateFile>,
    /// The entry's options (`clowder test`'s flags), in the form runs carry them: suite,
    /// hash and steps are filled in per run.
    pub options: TestRunConfig,
}

impl SuiteEntry {
    /// Whether the entry is a Neatest dynamic suite, which plays each network to the suite's
    /// own timeout: the experiment's steps per test do not apply to it.
    pub fn is_dynamic(&self) -> bool {
        clowder_proto::test_run::is_dynamic_suite(&self.file_name)
    }

    /// Whether the entry runs on the project called `name`.
    pub fn applies_to(&self, name: &str) -> bool {
        self.projects.as_ref().is_none_or(|p| p.contains(name)) && !self.exclude.contains(name)
    }
}

/// What a test experiment adds to [`Experiment`].
#[derive(Debug, Clone)]
pub struct TestSpec {
    /// The suites.
    pub suites: Vec<SuiteEntry>,
    /// Steps per test, as a run budget.
    pub budget: Budget,
}

/// Expands a leading `$CLOWDER_CORPORA` (default `../shared/corpora`) or
/// `$CLOWDER_WHISKER_EXAMPLES` (which must be set) in a path of the experiment file.
fn expand_path(p: &str, base: &Path) -> Result<PathBuf, String> {
    for prefix in ["${CLOWDER_WHISKER_EXAMPLES}", "$CLOWDER_WHISKER_EXAMPLES"] {
        if let Some(rest) = p.strip_prefix(prefix) {
            let dir = std::env::var("CLOWDER_WHISKER_EXAMPLES")
                .map_err(|_| format!("{p}: set CLOWDER_WHISKER_EXAMPLES to the folder of the suites"))?;
            return Ok(PathBuf::from(format!("{dir}{rest}")));
        }
    }
    let expanded = expand_corpora(p);
    Ok(if Path::new(&expanded).is_absolute() || expanded != p { PathBuf::from(expanded) } else { base.join(p) })
}

/// The test part of an experiment: `None` for a generation experiment, an error for an
/// inconsistent test experiment.
pub fn parse(spec: &ExperimentSpec, base: &Path) -> Result<Option<TestSpec>, String> {
    match spec.kind.as_deref() {
        None | Some("generate") => {
            if !spec.suites.is_empty() {
                return Err("[[suites]] need kind = \"test\"".into());
            }
            return Ok(None);
        }
        Some("test") => {}
        Some(k) => return Err(format!("kind = {k:?}: expected \"generate\" or \"test\"")),
    }
    if !spec.algorithms.is_empty() {
        return Err("a kind = \"test\" experiment has [[suites]], not [[algorithms]]".into());
    }
    if spec.suites.is_empty() {
        return Err("no [[suites]] entries".into());
    }
    if spec.mutation.resolve()? != Mutation::Off {
        return Err("mutation analysis of a test experiment is `clowder mutate --suite`, not `mutation`".into());
    }
    let b = &spec.budget;
    if b.executions.is_some() || b.evaluations.is_some() || b.seconds.is_some() || b.work.is_some() {
        return Err("the budget of a test experiment is `{ steps = N }` per test".into());
    }
    let steps = b.steps.unwrap_or(DEFAULT_STEPS_PER_TEST);
    if steps == 0 {
        return Err("budget.steps must be positive".into());
    }
    let mut names = BTreeSet::new();
    let mut suites = Vec::with_capacity(spec.suites.len());
    for s in &spec.suites {
        let path = expand_path(&s.file, base)?;
        let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let name = s.name.clone().unwrap_or_else(|| file_name.strip_suffix(".js").unwrap_or(&file_name).to_string());
        if name.is_empty() || !names.insert(name.clone()) {
            return Err(format!("suite name {name:?} is empty or used twice"));
        }
        let meta = std::fs::metadata(&path).map_err(|e| format!("suite {name:?}: {}: {e}", path.display()))?;
        if meta.len() > MAX_SUITE_BYTES {
            return Err(format!("suite {name:?}: {} has more than {MAX_SUITE_BYTES} bytes", path.display()));
        }
        let bytes = std::fs::read(&path).map_err(|e| format!("suite {name:?}: {}: {e}", path.display()))?;
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return Err(format!("suite {name:?}: {} is not UTF-8", path.display()));
        };
        let kind = if clowder_proto::test_run::is_dynamic_suite(&file_name) {
            // Checked here once, not by each run: networks in Whisker's format.
            clowder_testgen::neatest::DynamicSuite::from_json(text, clowder_testgen::neatest::VersionHint::Auto)
                .map_err(|e| format!("suite {name:?}: {} is no dynamic suite: {e}", path.display()))?;
            SuiteKind::Dynamic
        } else if clowder_suites::itch::is_itch_plan(text) {
            SuiteKind::Itch
        } else {
            SuiteKind::Whisker
        };
        if kind == SuiteKind::Dynamic && s.template.is_some() {
            return Err(format!("suite {name:?}: a dynamic suite has no template (that is for Itch plans)"));
        }
        let options = s.options(kind).map_err(|e| format!("suite {name:?}: {e}"))?;
        let template = match &s.template {
            None => None,
            Some(t) => {
                let path = expand_path(t, base)?;
                let max = clowder_vm::LoadLimits::default().max_file_bytes;
                let meta = std::fs::metadata(&path)
                    .map_err(|e| format!("suite {name:?}: template {}: {e}", path.display()))?;
                if meta.len() > max {
                    return Err(format!("suite {name:?}: template {} has more than {max} bytes", path.display()));
                }
                let bytes =
                    std::fs::read(&path).map_err(|e| format!("suite {name:?}: template {}: {e}", path.display()))?;
                Some(TemplateFile {
                    file_name: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                    hash: clowder_datasets::content_hash(&bytes),
                    size: bytes.len() as u64,
                    path: std::fs::canonicalize(&path).unwrap_or(path),
                })
            }
        };
        suites.push(SuiteEntry {
            name,
            hash: clowder_datasets::content_hash(&bytes),
            size: bytes.len() as u64,
            path: std::fs::canonicalize(&path).unwrap_or(path),
            file_name,
            projects: s.projects.as_ref().map(|p| p.iter().cloned().collect()),
            exclude: s.exclude.iter().cloned().collect(),
            template,
            options,
        });
    }
    Ok(Some(TestSpec { suites, budget: Budget::Steps(steps) }))
}

/// Runs of a test experiment: suites × their projects × seeds, in that (deterministic) order.
pub fn expand(exp: &Experiment, projects: &[clowder_datasets::ProjectFile]) -> Vec<Run> {
    let engine = clowder_vm::ENGINE_VERSION;
    let mut runs = Vec::new();
    for s in &exp.suites {
        let mut config = TestRunConfig {
            suite: s.file_name.clone(),
            suite_hash: s.hash.clone(),
            max_steps: exp.budget.amount(),
            ..s.options.clone()
        };
        if let Some(t) = &s.template {
            config = config.with_template(&t.file_name, &t.hash);
        }
        let config_json = config.to_json();
        for p in projects.iter().filter(|p| s.applies_to(&p.name)) {
            for &seed in &exp.seeds {
                runs.push(Run::of(exp, p, &s.name, &config_json, &config_json, seed, engine));
            }
        }
    }
    runs
}

/// Every suite entry runs on some project, and every project it names exists (a misspelt
/// name would silently drop runs).
pub fn check_projects(exp: &Experiment, projects: &[clowder_datasets::ProjectFile]) -> Result<(), String> {
    let known: BTreeSet<&str> = projects.iter().map(|p| p.name.as_str()).collect();
    for s in &exp.suites {
        let named = s.projects.iter().flatten().chain(&s.exclude);
        if let Some(missing) = named.into_iter().find(|n| !known.contains(n.as_str())) {
            return Err(format!(
                "suite {:?}: the dataset {} has no project {missing:?}",
                s.name,
                exp.dataset_path.display()
            ));
        }
        if !projects.iter().any(|p| s.applies_to(&p.name)) {
            return Err(format!("suite {:?} runs on no project of the dataset", s.name));
        }
    }
    Ok(())
}

/// Loads every Whisker suite of a test experiment as its runs will (it must evaluate and
/// export a list of tests), so that a broken suite is one error before the study starts
/// instead of an `error` in each of its runs. Returns, once per suite, what the real Whisker
/// would not run as written (its servant's notes, [`clowder_suites::TestInfo::note`]), for the
/// caller to show: `clowder test` prints the same warnings.
pub fn check_suites(exp: &Experiment) -> Result<Vec<String>, String> {
    let mut warnings = Vec::new();
    for s in &exp.suites {
        let bytes = std::fs::read(&s.path).map_err(|e| format!("suite {:?}: {}: {e}", s.name, s.path.display()))?;
        if clowder_datasets::content_hash(&bytes) != s.hash {
            return Err(format!("suite {:?}: {} changed since the experiment was loaded", s.name, s.path.display()));
        }
        let text = String::from_utf8(bytes).map_err(|_| format!("suite {:?}: not UTF-8", s.name))?;
        if clowder_proto::test_run::is_dynamic_suite(&s.file_name) || clowder_suites::itch::is_itch_plan(&text) {
            continue; // a dynamic suite was checked by `parse`; a plan is compiled by each run
        }
        let suite =
            clowder_suites::Suite::from_source(&s.file_name, &text).map_err(|e| format!("suite {:?}: {e}", s.name))?;
        let notes: BTreeSet<&str> = suite.tests().iter().filter_map(|t| t.note.as_deref()).collect();
        warnings.extend(notes.into_iter().map(|n| format!("suite {:?} ({}): {n}", s.name, s.file_name)));
    }
    Ok(warnings)
}

/// The suite files (and templates) workers fetch by hash (empty for a generation experiment).
pub fn sources(exp: &Experiment) -> Vec<(String, ProjectSource)> {
    let mut out = Vec::new();
    for s in &exp.suites {
        out.push((
            s.hash.clone(),
            ProjectSource { path: s.path.clone(), file_name: s.file_name.clone(), size: s.size },
        ));
        if let Some(t) = &s.template {
            out.push((
                t.hash.clone(),
                ProjectSource { path: t.path.clone(), file_name: t.file_name.clone(), size: t.size },
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    const SPEC: &str = r#"
name = "g"
kind = "test"
dataset = "."
seeds = 2

[[suites]]
file = "ATest.js"
projects = ["a", "b"]
exclude = ["b"]

[[suites]]
name = "other"
file = "BTest.js"
"#;

    #[test]
    fn suites_times_their_projects_times_seeds() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "ATest.js", "module.exports = [];");
        write(dir.path(), "BTest.js", "module.exports = [1];");
        let e = Experiment::parse(SPEC, &dir.path().join("g.toml")).unwrap();
        assert!(e.algorithms.is_empty());
        assert_eq!(e.budget, Budget::Steps(DEFAULT_STEPS_PER_TEST));
        let names: Vec<&str> = e.suites.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["ATest", "other"]);
        let projects: Vec<clowder_datasets::ProjectFile> = ["a", "b", "c"]
            .iter()
            .map(|n| clowder_datasets::ProjectFile {
                name: n.to_string(),
                path: PathBuf::from(format!("{n}.json")),
                content_hash: format!("h{n}"),
                size: 1,
            })
            .collect();
        let runs = crate::experiment::expand(&e, &projects);
        let keys: Vec<(&str, &str, u64)> =
            runs.iter().map(|r| (r.algorithm.as_str(), r.project.as_str(), r.seed)).collect();
        assert_eq!(
            keys,
            [
                ("ATest", "a", 1),
                ("ATest", "a", 2),
                ("other", "a", 1),
                ("other", "a", 2),
                ("other", "b", 1),
                ("other", "b", 2),
                ("other", "c", 1),
                ("other", "c", 2)
            ]
        );
        let cfg = TestRunConfig::parse(&runs[0].config_json).unwrap().unwrap();
        assert_eq!((cfg.suite.as_str(), cfg.max_steps), ("ATest.js", DEFAULT_STEPS_PER_TEST));
        assert_eq!(cfg.suite_hash, clowder_datasets::content_hash(b"module.exports = [];"));
        // The suite's content is part of the identity: an edited suite gives new runs.
        write(dir.path(), "ATest.js", "module.exports = [ ];");
        let edited = Experiment::parse(SPEC, &dir.path().join("g.toml")).unwrap();
        let again = crate::experiment::expand(&edited, &projects);
        assert_ne!(again[0].run_id, runs[0].run_id);
        assert_eq!(again[2].run_id, runs[2].run_id, "the other suite's runs keep their ids");
        assert_eq!(sources(&e).len(), 2);
        // An Itch plan's template travels like the suite and is part of the identity.
        write(dir.path(), "start.json", "{}");
        let with = SPEC.replace("name = \"other\"", "name = \"other\"\ntemplate = \"start.json\"");
        let t = Experiment::parse(&with, &dir.path().join("g.toml")).unwrap();
        let truns = crate::experiment::expand(&t, &projects);
        let tcfg = TestRunConfig::parse(&truns[2].config_json).unwrap().unwrap();
        assert_eq!(tcfg.template.as_deref(), Some("start.json"));
        assert_eq!(tcfg.template_hash, Some(clowder_datasets::content_hash(b"{}")));
        assert_ne!(truns[2].run_id, again[2].run_id);
        assert_eq!(truns[0].run_id, again[0].run_id, "suites without a template keep their ids");
        assert_eq!(sources(&t).len(), 3);
        assert_eq!(check_projects(&e, &projects), Ok(()));
        let err = check_projects(&e, &projects[1..]).unwrap_err();
        assert!(err.contains("no project \"a\""), "{err}");
    }

    #[test]
    fn inconsistent_test_experiments_are_rejected_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "ATest.js", "module.exports = [];");
        write(dir.path(), "BTest.js", "module.exports = [];");
        let path = dir.path().join("g.toml");
        let cases = [
            (SPEC.replace("kind = \"test\"", "kind = \"tests\""), "kind"),
            (SPEC.replace("kind = \"test\"\n", ""), "kind = \"test\""),
            (SPEC.replace("seeds = 2", "seeds = 2\nbudget = { seconds = 5 }"), "steps"),
            (SPEC.replace("seeds = 2", "seeds = 2\nbudget = { steps = 0 }"), "positive"),
            (SPEC.replace("seeds = 2", "seeds = 2\nmutation = \"on\""), "mutate"),
            (SPEC.replace("name = \"other\"", "name = \"ATest\""), "twice"),
            (SPEC.replace("BTest.js", "CTest.js"), "CTest.js"),
            (format!("{SPEC}\n[[algorithms]]\nname = \"random\"\n"), "algorithms"),
        ];
        for (text, needle) in cases {
            let err = Experiment::parse(&text, &path).unwrap_err().to_string();
            assert!(err.contains(needle), "{needle}: {err}");
        }
        let e = Experiment::parse(&SPEC.replace("seeds = 2", "seeds = 2\nbudget = { steps = 90 }"), &path).unwrap();
        assert_eq!(e.budget, Budget::Steps(90));
    }
}
