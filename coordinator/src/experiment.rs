//! Experiment specifications (TOML) and their expansion into runs.
//!
//! ```toml
//! name = "smoke"
//! dataset = "../datasets/smoke"     # folder of projects, relative to this file
//! seeds = 3                          # 1..=3; or [1, 5, 9]; or { from = 21, to = 30 }
//! budget = { steps = 3000 }          # or { executions = 100 }, { evaluations = N }, { seconds = S }
//!                                    # plus an optional work cap per run phase:
//!                                    # { steps = 3000, work = 20000000000 } (0 = no cap;
//!                                    # absent = the engine's default cap)
//! mutation = "on"                    # mutation analysis: "off" (default), "on", or { sample = N }
//! output = "results"                 # results go to <output>/<name>/
//!
//! [[algorithms]]
//! name = "random"                    # label in results
//! algorithm = "random"               # random | mosa | mio | neatest
//! params = { max_events = 20 }
//!
//! [[algorithms]]                     # Whisker's own configuration file as the base
//! name = "mio-study"
//! whisker_config = "$CLOWDER_CORPORA/whisker-configs/mio.json"
//!
//! [[algorithms]]                     # a sweep: one configuration per combination
//! name = "mosa"
//! sweep = { population_size = [10, 30, 50], crossover_probability = [0.5, 0.7] }
//!
//! [limits]                           # optional; resource limits per run (not part of run identity)
//! memory_mb = 2048                   # default 4096
//! cpu_seconds = 600                  # CPU time per run (an infrastructure guard); default 3600, 0 = none
//! ```

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clowder_testgen::{Algorithm, AlgorithmConfig, Budget};
use serde::Deserialize;

pub mod command;

/// An error in an experiment file.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The file cannot be read.
    #[error("{path}: {msg}")]
    Io {
        /// File path.
        path: String,
        /// What went wrong.
        msg: String,
    },
    /// The TOML is invalid or has unknown keys (the message names key and line).
    #[error("{path}: {msg}")]
    Parse {
        /// File path.
        path: String,
        /// The parser's message, with line and column.
        msg: String,
    },
    /// The spec parses but is inconsistent.
    #[error("{path}: {msg}")]
    Invalid {
        /// File path.
        path: String,
        /// What is wrong.
        msg: String,
    },
}

/// Seeds as written: a count, a list, or a range.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Seeds {
    /// Seeds 1..=n.
    Count(u64),
    /// Exactly these seeds.
    List(Vec<u64>),
    /// Seeds from..=to.
    Range {
        /// First seed.
        from: u64,
        /// Last seed (inclusive).
        to: u64,
    },
}

impl Seeds {
    /// The seeds in ascending order, without duplicates.
    pub fn expand(&self) -> Vec<u64> {
        let set: BTreeSet<u64> = match self {
            Seeds::Count(n) => (1..=*n).collect(),
            Seeds::List(v) => v.iter().copied().collect(),
            Seeds::Range { from, to } => (*from..=*to).collect(),
        };
        set.into_iter().collect()
    }
}

/// Budget as written in the file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetSpec {
    /// VM steps (the default unit).
    pub steps: Option<u64>,
    /// Test executions.
    pub executions: Option<u64>,
    /// Fitness evaluations.
    pub evaluations: Option<u64>,
    /// Wall-clock seconds (results are marked non-reproducible).
    pub seconds: Option<u64>,
    /// Work cap of each phase of a run in VM work units (block executions plus geometry work):
    /// a run that reaches it ends deterministically with status `limit` and its partial
    /// result. Absent: the engine's default cap; 0: no cap. It changes results, so when it is
    /// set it is part of the run identity.
    pub work: Option<u64>,
}

/// Mutation analysis of each run's final suite, as written in the file:
/// `"off"` (default), `"on"` (every first-order mutant) or `{ sample = N }`
/// (at most N mutants per operator, drawn with the run's seed).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum MutationSpec {
    /// `"on"` or `"off"`.
    Switch(String),
    /// `{ sample = N }`: at most N mutants per operator.
    Sample(MutationSample),
}

/// `{ sample = N }` of [`MutationSpec`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MutationSample {
    /// Mutants per operator.
    pub sample: u64,
}

impl Default for MutationSpec {
    fn default() -> Self {
        MutationSpec::Switch("off".into())
    }
}

/// Validated mutation-analysis setting of an experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// No mutation analysis.
    Off,
    /// Every first-order mutant.
    All,
    /// At most this many mutants per operator (seeded by the run's seed).
    SamplePerOperator(u64),
}

impl Mutation {
    /// The setting as a run spec carries it to the worker (`off`, `on`, `sample:N`).
    pub fn run_spec(self) -> String {
        match self {
            Mutation::Off => "off".to_string(),
            Mutation::All => "on".to_string(),
            Mutation::SamplePerOperator(n) => format!("sample:{n}"),
        }
    }
}

impl MutationSpec {
    /// The validated setting.
    pub fn resolve(&self) -> Result<Mutation, String> {
        match self {
            MutationSpec::Switch(s) if s == "off" => Ok(Mutation::Off),
            MutationSpec::Switch(s) if s == "on" => Ok(Mutation::All),
            MutationSpec::Switch(s) => Err(format!("mutation = {s:?}: expected \"on\", \"off\" or {{ sample = N }}")),
            MutationSpec::Sample(MutationSample { sample: 0 }) => Err("mutation.sample must be positive".into()),
            MutationSpec::Sample(MutationSample { sample }) => Ok(Mutation::SamplePerOperator(*sample)),
        }
    }
}

/// One algorithm entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlgorithmSpec {
    /// Label in results (unique within the experiment).
    pub name: String,
    /// Which search (`random`, `mosa`, `mio`); defaults to `name`.
    pub algorithm: Option<String>,
    /// Parameters.
    #[serde(default)]
    pub params: toml::Table,
    /// Parameter grid: each key maps to a list of values; the entry expands to
    /// one configuration per combination, named `name[k1=v1,k2=v2]`.
    #[serde(default)]
    pub sweep: toml::Table,
    /// A Whisker JSON configuration (e.g. the study's `mio.json`), relative to
    /// this file or `$CLOWDER_CORPORA/…`: its algorithm and parameters are the
    /// base that `params` and `sweep` override.
    #[serde(default)]
    pub whisker_config: Option<String>,
}

/// Resource limits per run. They are not part of a run's identity: memory is exceeded
/// deterministically (the run fails with `error`), and the CPU time limit is an
/// infrastructure guard (a run it stops is an `infra_failure`, never a result).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    /// Memory per run in MiB (cgroup memory limit or `RLIMIT_AS` on the worker).
    #[serde(default = "default_memory_mb")]
    pub memory_mb: u64,
    /// CPU time per run in seconds (`RLIMIT_CPU` of the run process), 0 for none. Unlike the
    /// memory limit this depends on the machine, so a run stopped by it is an infrastructure
    /// failure (tried once more, then recorded with a reason saying so), never a result; it
    /// exists so that one runaway run cannot hold a slot of a long study forever. Runaway runs
    /// end deterministically by the work cap (`budget.work`).
    #[serde(default = "default_cpu_seconds")]
    pub cpu_seconds: u64,
}

/// Default CPU time limit per run: one hour (runs of the Whisker-style studies take seconds).
pub const DEFAULT_CPU_SECONDS: u64 = 3600;

fn default_cpu_seconds() -> u64 {
    DEFAULT_CPU_SECONDS
}

/// Default memory limit per run: 4 GiB.
pub const DEFAULT_MEMORY_MB: u64 = 4096;

fn default_memory_mb() -> u64 {
    DEFAULT_MEMORY_MB
}

impl Default for LimitsSpec {
    fn default() -> Self {
        Self { memory_mb: DEFAULT_MEMORY_MB, cpu_seconds: DEFAULT_CPU_SECONDS }
    }
}

/// An experiment file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSpec {
    /// Experiment name: results go to `<output>/<name>/`.
    pub name: String,
    /// Optional description.
    #[serde(default)]
    pub description: String,
    /// Folder of projects (or one project), relative to the experiment file.
    pub dataset: String,
    /// What a run does: `"generate"` (the default: test generation with `algorithms`) or
    /// `"test"` (hand-written suites, `suites`; [`crate::grading`]).
    #[serde(default)]
    pub kind: Option<String>,
    /// Algorithm entries.
    #[serde(default)]
    pub algorithms: Vec<AlgorithmSpec>,
    /// Suite entries of a `kind = "test"` experiment.
    #[serde(default)]
    pub suites: Vec<crate::grading::SuiteSpec>,
    /// Seeds.
    pub seeds: Seeds,
    /// Budget per run (of a test experiment: `{ steps = N }` per test, optional).
    #[serde(default)]
    pub budget: BudgetSpec,
    /// Mutation analysis of the final suites (default off).
    #[serde(default)]
    pub mutation: MutationSpec,
    /// Output folder (default `results`, relative to the working directory).
    #[serde(default = "default_output")]
    pub output: String,
    /// Resource limits per run.
    #[serde(default)]
    pub limits: LimitsSpec,
    /// An external generator as the engine (`[engine] kind = "command"`, docs/engines.md);
    /// absent: clowder's own.
    #[serde(default)]
    pub engine: Option<command::EngineSpec>,
}

fn default_output() -> String {
    "results".into()
}

/// A parsed, validated experiment with paths resolved.
#[derive(Debug, Clone)]
pub struct Experiment {
    /// The spec as written.
    pub spec: ExperimentSpec,
    /// Resolved dataset path.
    pub dataset_path: PathBuf,
    /// Resolved results folder (`<output>/<name>`).
    pub results_dir: PathBuf,
    /// Algorithm entries with validated configurations.
    pub algorithms: Vec<(String, AlgorithmConfig)>,
    /// Suites of a `kind = "test"` experiment (then `algorithms` is empty).
    pub suites: Vec<crate::grading::SuiteEntry>,
    /// Budget per run.
    pub budget: Budget,
    /// Seeds.
    pub seeds: Vec<u64>,
    /// The file's text as read (stored with the study for provenance).
    pub source: String,
    /// The command engine, when the file has one (then `algorithms` is empty).
    pub command: Option<command::CommandEngine>,
}

/// Replaces a leading `$CLOWDER_CORPORA` / `${CLOWDER_CORPORA}` with the
/// variable's value (default `../shared/corpora`).
pub fn expand_corpora(p: &str) -> String {
    for prefix in ["${CLOWDER_CORPORA}", "$CLOWDER_CORPORA"] {
        if let Some(rest) = p.strip_prefix(prefix) {
            let base = std::env::var("CLOWDER_CORPORA").unwrap_or_else(|_| "../shared/corpora".into());
            return format!("{base}{rest}");
        }
    }
    p.to_string()
}

impl Experiment {
    /// Reads and validates an experiment file.
    pub fn load(path: &Path) -> Result<Self, SpecError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| SpecError::Io { path: path.display().to_string(), msg: e.to_string() })?;
        Self::parse(&text, path)
    }

    /// Parses experiment text; `path` resolves relative paths and names errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, SpecError> {
        let p = path.display().to_string();
        let spec: ExperimentSpec =
            toml::from_str(text).map_err(|e| SpecError::Parse { path: p.clone(), msg: e.to_string() })?;
        let invalid = |msg: String| SpecError::Invalid { path: p.clone(), msg };
        if spec.name.is_empty() || spec.name.contains(['/', '\\']) || spec.name.starts_with('.') {
            return Err(invalid(format!("name {:?} must be non-empty and usable as a folder name", spec.name)));
        }
        // `Path::parent` of a bare file name is "", which is no directory to run in.
        let base_dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let tests = crate::grading::parse(&spec, base_dir).map_err(&invalid)?;
        if spec.algorithms.is_empty() && tests.is_none() {
            return Err(invalid("no [[algorithms]] entries".into()));
        }
        let mut names = BTreeSet::new();
        let mut algorithms = Vec::new();
        let command = match &spec.engine {
            Some(e) => Some(command::resolve(e, &spec, base_dir).map_err(&invalid)?),
            None => None,
        };
        for a in spec.algorithms.iter().filter(|_| command.is_none()) {
            let (kind, base_params) = match &a.whisker_config {
                Some(rel) => {
                    let expanded = expand_corpora(rel);
                    let file = if Path::new(&expanded).is_absolute() || &expanded != rel {
                        PathBuf::from(expanded)
                    } else {
                        base_dir.join(rel)
                    };
                    let w = clowder_testgen::whisker_config::load(&file)
                        .map_err(|e| invalid(format!("algorithm {:?}: {e}", a.name)))?;
                    if let Some(alg) = &a.algorithm
                        && Algorithm::parse(alg).ok() != Some(w.config.algorithm)
                    {
                        return Err(invalid(format!(
                            "algorithm {:?}: `algorithm = {alg:?}` contradicts the Whisker configuration's {}",
                            a.name,
                            w.config.algorithm.name()
                        )));
                    }
                    (w.config.algorithm, w.config.params)
                }
                None => (
                    Algorithm::parse(a.algorithm.as_deref().unwrap_or(&a.name))
                        .map_err(|e| invalid(format!("algorithm {:?}: {e}", a.name)))?,
                    Default::default(),
                ),
            };
            for (label, table) in sweep_grid(a).map_err(|e| invalid(format!("algorithm {:?}: {e}", a.name)))? {
                if !names.insert(label.clone()) {
                    return Err(invalid(format!("algorithm name {label:?} is used twice")));
                }
                let mut params = base_params.clone();
                for (k, v) in &table {
                    let j = serde_json::to_value(v)
                        .map_err(|e| invalid(format!("algorithm {label:?}: parameter {k}: {e}")))?;
                    params.insert(k.clone(), j);
                }
                let cfg = AlgorithmConfig { algorithm: kind, params };
                cfg.validate().map_err(|e| invalid(format!("algorithm {label:?}: {e}")))?;
                algorithms.push((label, cfg));
            }
        }
        let b = &spec.budget;
        let budget = match (b.steps, b.executions, b.evaluations, b.seconds) {
            _ if tests.is_some() => tests.as_ref().map_or(Budget::Steps(0), |t| t.budget),
            (Some(s), None, None, None) => Budget::Steps(s),
            (None, Some(e), None, None) => Budget::Executions(e),
            (None, None, Some(e), None) => Budget::Evaluations(e),
            (None, None, None, Some(s)) => Budget::Seconds(s),
            _ => {
                return Err(invalid(
                    "budget needs exactly one of `steps`, `executions`, `evaluations` or `seconds`".into(),
                ));
            }
        };
        if budget.amount() == 0 {
            return Err(invalid("budget must be positive".into()));
        }
        let seeds = spec.seeds.expand();
        if seeds.is_empty() {
            return Err(invalid("no seeds".into()));
        }
        spec.mutation.resolve().map_err(&invalid)?;
        let base = path.parent().unwrap_or(Path::new("."));
        let ds = expand_corpora(&spec.dataset);
        let dataset_path =
            if Path::new(&ds).is_absolute() || ds != spec.dataset { PathBuf::from(ds) } else { base.join(ds) };
        let results_dir = PathBuf::from(&spec.output).join(&spec.name);
        if spec.limits.memory_mb == 0 {
            return Err(invalid("limits.memory_mb must be positive".into()));
        }
        let suites = tests.map(|t| t.suites).unwrap_or_default();
        Ok(Self {
            spec,
            dataset_path,
            results_dir,
            algorithms,
            suites,
            budget,
            seeds,
            source: text.to_string(),
            command,
        })
    }
}

impl Experiment {
    /// Configurations compared (algorithm entries with sweeps expanded; of either engine).
    pub fn configuration_count(&self) -> usize {
        self.command.as_ref().map_or(self.algorithms.len(), |c| c.configs.len())
    }

    /// The mutation-analysis setting (validated when the file was parsed).
    pub fn mutation(&self) -> Mutation {
        self.spec.mutation.resolve().unwrap_or(Mutation::Off)
    }

    /// The work cap as the experiment sets it: `None` when `budget.work` is absent (the
    /// engine's default applies), `Some(0)` for no cap.
    pub fn work_cap(&self) -> Option<u64> {
        self.spec.budget.work
    }

    /// The work cap as a run spec carries it to the worker ([`clowder_proto::RunSpec::work_cap`]):
    /// 0 for the engine's default, [`clowder_proto::NO_WORK_CAP`] for none.
    pub fn work_cap_spec(&self) -> u64 {
        match self.work_cap() {
            None => 0,
            Some(0) => clowder_proto::NO_WORK_CAP,
            Some(n) => n,
        }
    }
}

/// Expands an entry's `sweep` grid (keys in sorted order) over its `params`.
/// Without a sweep this is the entry itself.
fn sweep_grid(a: &AlgorithmSpec) -> Result<Vec<(String, toml::Table)>, String> {
    let mut grid: Vec<(String, toml::Table)> = vec![(String::new(), a.params.clone())];
    // toml::Table iterates in sorted key order, so labels are canonical.
    for (key, values) in &a.sweep {
        if a.params.contains_key(key) {
            return Err(format!("{key} is in both params and sweep"));
        }
        let toml::Value::Array(values) = values else {
            return Err(format!("sweep {key} must be a list of values"));
        };
        if values.is_empty() {
            return Err(format!("sweep {key} is empty"));
        }
        let mut next = Vec::with_capacity(grid.len() * values.len());
        for (label, table) in &grid {
            for v in values {
                let mut t = table.clone();
                t.insert(key.clone(), v.clone());
                let sep = if label.is_empty() { "" } else { "," };
                // A name shows as itself (`whisker_maths=glibc`), like numbers and booleans.
                let shown = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                next.push((format!("{label}{sep}{key}={shown}"), t));
            }
        }
        grid = next;
    }
    Ok(grid
        .into_iter()
        .map(|(label, t)| (if label.is_empty() { a.name.clone() } else { format!("{}[{label}]", a.name) }, t))
        .collect())
}

/// One run: (project, algorithm configuration, seed) with a budget.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Run identity (hex): hash of project, configuration, seed, budget, engine.
    pub run_id: String,
    /// Dataset name (the dataset folder's name).
    pub dataset: String,
    /// Project name (for results).
    pub project: String,
    /// Project content hash.
    pub project_hash: String,
    /// Algorithm entry name.
    pub algorithm: String,
    /// Normalised configuration JSON.
    pub config_json: String,
    /// Seed.
    pub seed: u64,
    /// Budget.
    pub budget: Budget,
}

impl Run {
    /// The run of project `p` of `exp` under configuration `algorithm` (`config_json`, what
    /// the worker gets) at `seed`; `identity` is what names it besides project, seed, budget
    /// and `engine`.
    pub fn of(
        exp: &Experiment,
        p: &clowder_datasets::ProjectFile,
        algorithm: &str,
        config_json: &str,
        identity: &str,
        seed: u64,
        engine: &str,
    ) -> Self {
        Run {
            run_id: run_id(&p.content_hash, identity, seed, exp.budget, engine),
            dataset: dataset_name(&exp.dataset_path),
            project: p.name.clone(),
            project_hash: p.content_hash.clone(),
            algorithm: algorithm.to_string(),
            config_json: config_json.to_string(),
            seed,
            budget: exp.budget,
        }
    }
}

/// The identity of a run (DESIGN §5).
pub fn run_id(project_hash: &str, config_json: &str, seed: u64, budget: Budget, engine: &str) -> String {
    let mut h = blake3::Hasher::new();
    for part in [project_hash, config_json, &seed.to_string(), budget.unit(), &budget.amount().to_string(), engine] {
        h.update(part.as_bytes());
        h.update(b"\0");
    }
    h.finalize().to_hex()[..32].to_string()
}

/// The name of a dataset: its folder's name (for a single project file, the
/// name of the folder holding it).
pub fn dataset_name(path: &Path) -> String {
    let p = if path.is_file() { path.parent().unwrap_or(path) } else { path };
    let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    p.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| "dataset".into())
}

/// Expands an experiment over its dataset's projects: projects × algorithms × seeds,
/// in that (deterministic) order.
pub fn expand(exp: &Experiment, projects: &[clowder_datasets::ProjectFile]) -> Vec<Run> {
    if let Some(c) = &exp.command {
        return command::expand(exp, c, projects);
    }
    if !exp.suites.is_empty() {
        return crate::grading::expand(exp, projects);
    }
    let engine = clowder_vm::ENGINE_VERSION;
    // Mutation analysis changes a run's result (its verdicts are in the digest),
    // so it is part of the identity; "off" adds nothing (ids stay as before).
    let mutation = match exp.mutation() {
        Mutation::Off => String::new(),
        Mutation::All => "\0mutation=on".to_string(),
        Mutation::SamplePerOperator(n) => format!("\0mutation=sample:{n}"),
    };
    // So does the work cap; only an explicit one is named (the default is the engine's and
    // changes with ENGINE_VERSION), so experiments without `budget.work` keep their ids.
    let work = exp.work_cap().map_or_else(String::new, |n| format!("\0work={n}"));
    let mut runs = Vec::with_capacity(projects.len() * exp.algorithms.len() * exp.seeds.len());
    for p in projects {
        for (name, cfg) in &exp.algorithms {
            let config_json = cfg.normalized_json();
            let identity = format!("{config_json}{mutation}{work}");
            for &seed in &exp.seeds {
                runs.push(Run::of(exp, p, name, &config_json, &identity, seed, engine));
            }
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "t"
dataset = "."
seeds = [3, 1, 3]
budget = { steps = 100 }

[[algorithms]]
name = "random"
params = { max_events = 5 }
"#;

    #[test]
    fn whisker_configuration_as_base() {
        let dir = tempfile::tempdir().unwrap();
        let json = r#"{"algorithm": "mosa", "populationSize": 50, "crossover": {"operator": "singlePointRelative",
            "probability": 0.7}, "localSearch": [{"type": "Reduction", "probability": 0.3}]}"#;
        std::fs::write(dir.path().join("w.json"), json).unwrap();
        let text = GOOD.replace("name = \"random\"\n", "name = \"w\"\nwhisker_config = \"w.json\"\n");
        let e = Experiment::parse(&text, &dir.path().join("exp.toml")).unwrap();
        let cfg = &e.algorithms[0].1;
        assert_eq!(cfg.algorithm, Algorithm::Mosa);
        assert_eq!(cfg.params["population_size"], serde_json::json!(50));
        assert_eq!(cfg.params["extension_probability"], serde_json::json!(0.0));
        assert_eq!(cfg.params["max_events"], serde_json::json!(5), "params override the file");
        let bad = text.replace("whisker_config", "algorithm = \"mio\"\nwhisker_config");
        assert!(Experiment::parse(&bad, &dir.path().join("exp.toml")).is_err());
    }

    #[test]
    fn parses_and_dedups_seeds() {
        let e = Experiment::parse(GOOD, Path::new("x/exp.toml")).unwrap();
        assert_eq!(e.seeds, vec![1, 3]);
        assert_eq!(e.budget, Budget::Steps(100));
        assert_eq!(e.dataset_path, Path::new("x/."));
    }

    #[test]
    fn mutation_switch() {
        let e = Experiment::parse(GOOD, Path::new("exp.toml")).unwrap();
        assert_eq!(e.mutation(), Mutation::Off, "off unless asked for");
        let with =
            |line: &str| GOOD.replace("budget = { steps = 100 }", &format!("budget = {{ steps = 100 }}\n{line}"));
        let on = Experiment::parse(&with("mutation = \"on\""), Path::new("exp.toml")).unwrap();
        assert_eq!(on.mutation(), Mutation::All);
        let off = Experiment::parse(&with("mutation = \"off\""), Path::new("exp.toml")).unwrap();
        assert_eq!(off.mutation(), Mutation::Off);
        let sample = Experiment::parse(&with("mutation = { sample = 25 }"), Path::new("exp.toml")).unwrap();
        assert_eq!(sample.mutation(), Mutation::SamplePerOperator(25));
        for bad in [
            "mutation = \"yes\"",
            "mutation = { sample = 0 }",
            "mutation = { samples = 3 }",
            "mutation = { sample = 3, x = 1 }",
            "mutation = 5",
        ] {
            assert!(Experiment::parse(&with(bad), Path::new("exp.toml")).is_err(), "{bad} must be rejected");
        }
    }

    #[test]
    fn unknown_key_names_key_and_line() {
        let bad = GOOD.replace("seeds = [3, 1, 3]", "seeds = [3, 1, 3]\nbudgte = 5");
        let err = Experiment::parse(&bad, Path::new("exp.toml")).unwrap_err().to_string();
        assert!(err.contains("budgte"), "{err}");
        assert!(err.contains("line 5"), "{err}");
    }

    #[test]
    fn sweep_expands_to_the_grid() {
        let text = GOOD.replace(
            "params = { max_events = 5 }",
            "algorithm = \"mosa\"\nsweep = { population_size = [10, 30, 50], crossover_probability = [0.5, 0.9] }",
        );
        let e = Experiment::parse(&text, Path::new("exp.toml")).unwrap();
        let names: Vec<&str> = e.algorithms.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names.len(), 6);
        assert_eq!(names[0], "random[crossover_probability=0.5,population_size=10]");
        assert_eq!(e.algorithms[5].1.params["population_size"], serde_json::json!(50));
    }

    #[test]
    fn a_maths_library_is_a_name_and_can_be_swept() {
        let text = GOOD.replace("params = { max_events = 5 }", "sweep = { whisker_maths = [\"chromium\", \"glibc\"] }");
        let e = Experiment::parse(&text, Path::new("exp.toml")).unwrap();
        let names: Vec<&str> = e.algorithms.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["random[whisker_maths=chromium]", "random[whisker_maths=glibc]"]);
        assert_eq!(e.algorithms[1].1.params["whisker_maths"], serde_json::json!("glibc"));
        let bad = GOOD.replace("params = { max_events = 5 }", "params = { whisker_maths = \"v8\" }");
        let err = Experiment::parse(&bad, Path::new("exp.toml")).unwrap_err().to_string();
        assert!(err.contains("unknown maths library \"v8\""), "{err}");
    }

    #[test]
    fn limits_default_and_parse() {
        let e = Experiment::parse(GOOD, Path::new("exp.toml")).unwrap();
        assert_eq!(e.spec.limits.memory_mb, DEFAULT_MEMORY_MB);
        let e = Experiment::parse(&format!("{GOOD}\n[limits]\nmemory_mb = 512\n"), Path::new("exp.toml")).unwrap();
        assert_eq!(e.spec.limits.memory_mb, 512);
        assert_eq!(e.spec.limits.cpu_seconds, DEFAULT_CPU_SECONDS);
        let e = Experiment::parse(&format!("{GOOD}\n[limits]\ncpu_seconds = 0\n"), Path::new("exp.toml")).unwrap();
        assert_eq!(e.spec.limits.cpu_seconds, 0, "0 means no CPU limit");
        let bad = Experiment::parse(&format!("{GOOD}\n[limits]\nmemory = 512\n"), Path::new("exp.toml"));
        assert!(bad.unwrap_err().to_string().contains("memory"));
    }

    #[test]
    fn unknown_parameter_is_an_error() {
        let bad = GOOD.replace("max_events", "max_eventz");
        let err = Experiment::parse(&bad, Path::new("exp.toml")).unwrap_err().to_string();
        assert!(err.contains("max_eventz"), "{err}");
    }

    #[test]
    fn an_explicit_work_cap_is_part_of_the_run_identity_and_an_absent_one_is_not() {
        let projects = [clowder_datasets::ProjectFile {
            name: "p".into(),
            path: PathBuf::from("p.json"),
            content_hash: "h".into(),
            size: 1,
        }];
        let with = |budget: &str| {
            let text = GOOD.replace("budget = { steps = 100 }", budget);
            Experiment::parse(&text, Path::new("exp.toml")).unwrap()
        };
        let ids = |e: &Experiment| expand(e, &projects).into_iter().map(|r| r.run_id).collect::<Vec<_>>();
        let absent = with("budget = { steps = 100 }");
        assert_eq!(absent.work_cap(), None);
        assert_eq!(absent.work_cap_spec(), 0, "the worker applies the engine's default");
        // Without `work` the id is exactly what it was before the work cap existed.
        let cfg = absent.algorithms[0].1.normalized_json();
        let before: Vec<String> =
            [1, 3].iter().map(|&s| run_id("h", &cfg, s, Budget::Steps(100), clowder_vm::ENGINE_VERSION)).collect();
        assert_eq!(ids(&absent), before);
        let capped = with("budget = { steps = 100, work = 200000 }");
        assert_eq!(capped.budget, Budget::Steps(100), "the cap is not a budget unit");
        assert_eq!((capped.work_cap(), capped.work_cap_spec()), (Some(200_000), 200_000));
        let uncapped = with("budget = { steps = 100, work = 0 }");
        assert_eq!((uncapped.work_cap(), uncapped.work_cap_spec()), (Some(0), clowder_proto::NO_WORK_CAP));
        let other = with("budget = { work = 300000, steps = 100 }");
        let all = [ids(&absent), ids(&capped), ids(&uncapped), ids(&other)];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert!(a.iter().all(|x| !b.contains(x)), "every explicit cap gives other ids: {a:?} {b:?}");
            }
        }
        assert_eq!(ids(&capped), ids(&with("budget = { steps = 100, work = 200000 }")), "stable");
        // Unknown keys in the budget still name the key; a cap alone is no budget.
        let err = Experiment::parse(&GOOD.replace("steps = 100", "steps = 100, wrok = 5"), Path::new("exp.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("wrok"), "{err}");
        assert!(Experiment::parse(&GOOD.replace("steps = 100", "work = 5"), Path::new("exp.toml")).is_err());
    }

    #[test]
    fn run_ids_depend_on_every_part() {
        let a = run_id("h", "{}", 1, Budget::Steps(10), "e");
        assert_ne!(a, run_id("h2", "{}", 1, Budget::Steps(10), "e"));
        assert_ne!(a, run_id("h", "{\"x\":1}", 1, Budget::Steps(10), "e"));
        assert_ne!(a, run_id("h", "{}", 2, Budget::Steps(10), "e"));
        assert_ne!(a, run_id("h", "{}", 1, Budget::Steps(11), "e"));
        assert_ne!(a, run_id("h", "{}", 1, Budget::Executions(10), "e"));
        assert_ne!(a, run_id("h", "{}", 1, Budget::Steps(10), "f"));
        assert_eq!(a, run_id("h", "{}", 1, Budget::Steps(10), "e"));
    }
}
