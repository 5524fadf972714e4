//! Engine kind `command`: an external command-line generator (Pynguin, …) as the engine of a
//! study (docs/engines.md). The experiment file's `[engine]` table names the command template,
//! its environment and the parser of its results; each `[[algorithms]]` entry is one
//! configuration whose `params` fill `{name}` placeholders. Runs are (subject, configuration,
//! seed) like ours, and travel to workers as a [`CommandConfig`] in `config_json`.
//!
//! ```toml
//! [engine]
//! kind = "command"
//! tool = "pynguin 0.48.0"               # names the tool and version: part of the run identity
//! command = ["{results}/venv/bin/pynguin", "--module-name", "{module}", "--seed", "{seed}"]
//! env = { PYNGUIN_DANGER_AWARE = "1" }
//! parser = "pynguin"                    # or "json-last-line"
//! result_file = "{out}/statistics.csv"  # default for pynguin; none for json-last-line (stdout)
//! timeline_interval = 1.0               # seconds between the tool's timeline columns
//! wall_seconds = 120                    # wall-time limit per run (default 3 × budget + 60 s)
//! setup = "pynguin-setup.sh"            # run before the study (installs the tool)
//! deterministic = false                 # true: results are reproducible, compared by digest
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clowder_proto::command::{self as wire, COMMAND_ENGINE, CommandConfig};
use clowder_testgen::Budget;
use serde::Deserialize;

use super::{Experiment, ExperimentSpec, Run};

/// The engine version in the identity of command runs: they do not depend on clowder's VM.
pub const COMMAND_ENGINE_VERSION: &str = "command/1";

/// The `[engine]` table as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineSpec {
    /// Engine kind: `command`.
    pub kind: String,
    /// Tool name and version (free text, part of the run identity).
    #[serde(default)]
    pub tool: String,
    /// Program and arguments with placeholders.
    pub command: Vec<String>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Result parser.
    pub parser: String,
    /// File the parser reads; default per parser.
    #[serde(default)]
    pub result_file: Option<String>,
    /// Seconds between timeline columns (default 1).
    #[serde(default)]
    pub timeline_interval: Option<f64>,
    /// Wall-time limit per run, seconds.
    #[serde(default)]
    pub wall_seconds: Option<u64>,
    /// Set-up script, relative to the experiment file, run before the study.
    #[serde(default)]
    pub setup: Option<String>,
    /// The tool is deterministic for a given seed.
    #[serde(default)]
    pub deterministic: bool,
}

/// A validated command engine.
#[derive(Debug, Clone)]
pub struct CommandEngine {
    /// One configuration per algorithm entry (sweeps expanded): label and configuration
    /// without the study-wide `vars` (filled in at expansion).
    pub configs: Vec<(String, CommandConfig)>,
    /// Absolute path of the set-up script, if any.
    pub setup: Option<PathBuf>,
    /// Folder of the experiment file (the `{experiment_dir}` placeholder).
    pub experiment_dir: PathBuf,
}

/// Placeholders filled in for the whole study.
const STUDY_PLACEHOLDERS: [&str; 2] = ["experiment_dir", "results"];

/// Validates the `[engine]` table and the algorithm entries against it.
pub(super) fn resolve(engine: &EngineSpec, spec: &ExperimentSpec, base_dir: &Path) -> Result<CommandEngine, String> {
    if engine.kind != COMMAND_ENGINE {
        return Err(format!("engine.kind = {:?}: the only engine kind is \"command\"", engine.kind));
    }
    if engine.command.is_empty() || engine.command[0].trim().is_empty() {
        return Err("engine.command must name a program".into());
    }
    if !wire::PARSERS.contains(&engine.parser.as_str()) {
        return Err(format!("engine.parser = {:?}: expected one of {}", engine.parser, wire::PARSERS.join(", ")));
    }
    let interval = engine.timeline_interval.unwrap_or(1.0);
    if !(interval.is_finite() && interval > 0.0) {
        return Err("engine.timeline_interval must be a positive number of seconds".into());
    }
    if spec.mutation.resolve()? != super::Mutation::Off {
        return Err("mutation analysis is clowder's own; a command engine reports its tool's mutation score".into());
    }
    if spec.budget.work.is_some() {
        return Err("budget.work is a VM work cap; command engines have engine.wall_seconds".into());
    }
    let budget_seconds = spec.budget.seconds.unwrap_or(0);
    let wall_seconds = engine.wall_seconds.unwrap_or(if budget_seconds > 0 { 3 * budget_seconds + 60 } else { 3600 });
    if wall_seconds == 0 {
        return Err("engine.wall_seconds must be positive".into());
    }
    let result_file = match (&engine.result_file, engine.parser.as_str()) {
        (Some(f), _) => f.clone(),
        (None, wire::PARSER_PYNGUIN) => "{out}/statistics.csv".into(),
        (None, _) => String::new(),
    };
    let setup = engine.setup.as_ref().map(|s| base_dir.join(s));
    if let Some(s) = &setup
        && !s.is_file()
    {
        return Err(format!("engine.setup: {} is not a file", s.display()));
    }
    let mut configs = Vec::new();
    let mut names = BTreeSet::new();
    for a in &spec.algorithms {
        if a.algorithm.is_some() || a.whisker_config.is_some() {
            return Err(format!(
                "algorithm {:?}: `algorithm` and `whisker_config` are for clowder's own engine; \
                 a command engine's configuration is its `params`",
                a.name
            ));
        }
        for (label, table) in super::sweep_grid(a).map_err(|e| format!("algorithm {:?}: {e}", a.name))? {
            if !names.insert(label.clone()) {
                return Err(format!("algorithm name {label:?} is used twice"));
            }
            let mut params = BTreeMap::new();
            for (k, v) in &table {
                let text = match v {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => v.to_string(),
                    _ => return Err(format!("algorithm {label:?}: parameter {k} must be a string, number or boolean")),
                };
                params.insert(k.clone(), text);
            }
            let cfg = CommandConfig {
                engine: COMMAND_ENGINE.into(),
                tool: engine.tool.clone(),
                command: engine.command.clone(),
                env: engine.env.clone(),
                parser: engine.parser.clone(),
                result_file: result_file.clone(),
                timeline_interval: interval,
                wall_seconds,
                deterministic: engine.deterministic,
                params,
                vars: BTreeMap::new(),
            };
            check_placeholders(&cfg).map_err(|e| format!("algorithm {label:?}: {e}"))?;
            configs.push((label, cfg));
        }
    }
    Ok(CommandEngine { configs, setup, experiment_dir: base_dir.to_path_buf() })
}

/// Every placeholder of the command, environment and result file must be known: a run
/// placeholder, a study placeholder or one of the configuration's parameters.
fn check_placeholders(cfg: &CommandConfig) -> Result<(), String> {
    let known = |n: &str| {
        (wire::RUN_PLACEHOLDERS.contains(&n) || STUDY_PLACEHOLDERS.contains(&n) || cfg.params.contains_key(n))
            .then(String::new)
    };
    let env = cfg.env.iter().map(|(k, v)| (format!("engine.env.{k}"), v));
    let cmd = cfg.command.iter().enumerate().map(|(i, c)| (format!("engine.command[{i}]"), c));
    for (what, text) in cmd.chain(env).chain(std::iter::once(("engine.result_file".to_string(), &cfg.result_file))) {
        wire::substitute(text, &known).map_err(|e| format!("{what}: {e}"))?;
    }
    Ok(())
}

/// Runs of a command engine: subjects × configurations × seeds, in that order. The identity
/// is the subject's hash, the configuration without paths and limits, the seed, the budget
/// and [`COMMAND_ENGINE_VERSION`].
pub(super) fn expand(exp: &Experiment, engine: &CommandEngine, projects: &[clowder_datasets::ProjectFile]) -> Vec<Run> {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()).to_string_lossy().to_string();
    let vars: BTreeMap<String, String> =
        [("experiment_dir".to_string(), abs(&engine.experiment_dir)), ("results".to_string(), abs(&exp.results_dir))]
            .into();
    let mut runs = Vec::with_capacity(projects.len() * engine.configs.len() * exp.seeds.len());
    for p in projects {
        for (name, cfg) in &engine.configs {
            let identity = cfg.identity_json();
            let config_json = CommandConfig { vars: vars.clone(), ..cfg.clone() }.to_json();
            for &seed in &exp.seeds {
                runs.push(Run::of(exp, p, name, &config_json, &identity, seed, COMMAND_ENGINE_VERSION));
            }
        }
    }
    runs
}

/// The amount of a budget as the `{budget}` placeholder shows it.
pub fn budget_text(b: Budget) -> String {
    b.amount().to_string()
}

/// Runs the engine's set-up script (if any) before the study: `CLOWDER_RESULTS` and
/// `CLOWDER_EXPERIMENT_DIR` in its environment (absolute), the experiment's folder as working
/// directory, its output in `<results>/setup.log`. Scripts are expected to be idempotent
/// (they run again when a study is resumed). Returns a one-line summary.
pub fn run_setup(exp: &Experiment) -> Result<Option<String>, String> {
    let Some(engine) = &exp.command else { return Ok(None) };
    let Some(script) = &engine.setup else { return Ok(None) };
    let results = std::path::absolute(&exp.results_dir).map_err(|e| format!("{}: {e}", exp.results_dir.display()))?;
    std::fs::create_dir_all(&results).map_err(|e| format!("{}: {e}", results.display()))?;
    let log_path = results.join("setup.log");
    let log = std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let log2 = log.try_clone().map_err(|e| format!("{}: {e}", log_path.display()))?;
    let script = std::path::absolute(script).map_err(|e| format!("{}: {e}", script.display()))?;
    let dir = std::path::absolute(&engine.experiment_dir).unwrap_or_else(|_| engine.experiment_dir.clone());
    let t0 = std::time::Instant::now();
    let status = std::process::Command::new(&script)
        .current_dir(&dir)
        .env("CLOWDER_RESULTS", &results)
        .env("CLOWDER_EXPERIMENT_DIR", &dir)
        .stdin(std::process::Stdio::null())
        .stdout(log)
        .stderr(log2)
        .status()
        .map_err(|e| format!("set-up script {}: {e}", script.display()))?;
    if !status.success() {
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(15).collect::<Vec<_>>().into_iter().rev().collect();
        return Err(format!(
            "set-up script {} failed ({status}); last lines of {}:\n{}",
            script.display(),
            log_path.display(),
            tail.join("\n")
        ));
    }
    Ok(Some(format!(
        "set-up {} done in {:.1} s (log: {})",
        script.display(),
        t0.elapsed().as_secs_f64(),
        log_path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = r#"
name = "c"
dataset = "."
seeds = 2
budget = { seconds = 10 }

[engine]
kind = "command"
tool = "fake 1"
command = ["{experiment_dir}/tool.sh", "{subject}", "--seed", "{seed}", "--algo", "{algo}", "--t", "{budget}"]
parser = "json-last-line"

[[algorithms]]
name = "a"
params = { algo = "A" }

[[algorithms]]
name = "b"
params = { algo = "B" }
"#;

    #[test]
    fn command_engine_parses_and_expands_with_stable_ids() {
        let e = Experiment::parse(CMD, Path::new("x/exp.toml")).unwrap();
        let c = e.command.as_ref().unwrap();
        assert_eq!(c.configs.len(), 2);
        assert_eq!(c.configs[0].1.wall_seconds, 90, "3 × budget + 60 by default");
        assert_eq!(c.configs[1].1.params["algo"], "B");
        let projects = [clowder_datasets::ProjectFile {
            name: "m".into(),
            path: PathBuf::from("m.py"),
            content_hash: "h".into(),
            size: 1,
        }];
        let runs = super::super::expand(&e, &projects);
        assert_eq!(runs.len(), 4);
        let cfg = CommandConfig::from_config_json(&runs[0].config_json).unwrap().unwrap();
        assert!(cfg.vars["results"].ends_with("results/c"), "{:?}", cfg.vars);
        // Elsewhere (other results folder, other wall limit): the same runs.
        let mut moved =
            Experiment::parse(&CMD.replace("kind", "wall_seconds = 5\nkind"), Path::new("y/exp.toml")).unwrap();
        moved.results_dir = PathBuf::from("/elsewhere/c");
        let ids = |r: &[Run]| r.iter().map(|r| r.run_id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&runs), ids(&super::super::expand(&moved, &projects)));
        let other = Experiment::parse(&CMD.replace("fake 1", "fake 2"), Path::new("x/exp.toml")).unwrap();
        assert!(ids(&super::super::expand(&other, &projects)).iter().all(|i| !ids(&runs).contains(i)));
    }

    #[test]
    fn a_bare_experiment_file_name_runs_its_tool_from_the_current_folder() {
        // `clowder run exp.toml` from the experiment's own folder: the parent of a bare name is
        // "", which is not a folder a set-up script can run in.
        let e = Experiment::parse(CMD, Path::new("exp.toml")).unwrap();
        assert_eq!(e.command.as_ref().unwrap().experiment_dir, Path::new("."));
    }

    #[test]
    fn command_engine_errors_name_the_problem() {
        for (from, to, want) in [
            ("{algo}", "{algorithm}", "unknown placeholder {algorithm}"),
            ("\"json-last-line\"", "\"xml\"", "engine.parser"),
            ("kind = \"command\"", "kind = \"docker\"", "engine.kind"),
            ("name = \"b\"\n", "name = \"b\"\nalgorithm = \"mio\"\n", "`algorithm`"),
            ("seconds = 10 }", "seconds = 10, work = 5 }", "budget.work"),
            ("kind = \"command\"", "kind = \"command\"\ncomand = []", "comand"),
            ("kind = \"command\"", "kind = \"command\"\nsetup = \"missing.sh\"", "missing.sh"),
        ] {
            let text = CMD.replacen(from, to, 1);
            let err = Experiment::parse(&text, Path::new("x/exp.toml")).unwrap_err().to_string();
            assert!(err.contains(want), "{from} → {to}: {err}");
        }
    }
}
