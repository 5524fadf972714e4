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
//! ```
//!
//! The suite file (and a template) is read and hashed when the experiment is loaded; its hash
//! is part of the run identity and the worker fetches it by that hash like a project. A suite
//! file may be a Whisker suite or an Itch test plan; the worker tells them apart.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clowder_proto::test_run::TestRunConfig;
use clowder_testgen::Budget;
use serde::Deserialize;

use crate::experiment::{Experiment, ExperimentSpec, Mutation, Run, expand_corpora};
use crate::table::ProjectSource;

/// Largest suite file (bytes); the worker's suite loader has the same limit
/// (`clowder_suites::MAX_SUITE_BYTES`, which says why it is this large).
pub const MAX_SUITE_BYTES: u64 = 32 << 20;

/// Default steps per test: 600 000 ms of Scratch time, Whisker's per-test timeout in its
/// mutation runs (the suites crate's default).
pub const DEFAULT_STEPS_PER_TEST: u64 = 18_000;

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
}

impl SuiteEntry {
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
        if std::str::from_utf8(&bytes).is_err() {
            return Err(format!("suite {name:?}: {} is not UTF-8", path.display()));
        }
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
        });
    }
    Ok(Some(TestSpec { suites, budget: Budget::Steps(steps) }))
}

/// Runs of a test experiment: suites × their projects × seeds, in that (deterministic) order.
pub fn expand(exp: &Experiment, projects: &[clowder_datasets::ProjectFile]) -> Vec<Run> {
    let engine = clowder_vm::ENGINE_VERSION;
    let mut runs = Vec::new();
    for s in &exp.suites {
        let mut config = TestRunConfig::new(&s.file_name, &s.hash, exp.budget.amount());
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
