//! The configuration of a run of an external command-line generator (engine kind `command`,
//! docs/engines.md), as the coordinator puts it into [`crate::RunSpec::config_json`] and the
//! worker reads it back. Carried as JSON so that the protobuf contract stays unchanged.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The value of [`CommandConfig::engine`] that marks a command run.
pub const COMMAND_ENGINE: &str = "command";

/// Built-in result parsers.
pub const PARSERS: [&str; 2] = [PARSER_PYNGUIN, PARSER_JSON_LAST_LINE];
/// Pynguin's `statistics.csv` (`Coverage`, `CoverageTimeline_T*`, `MutationScore`).
pub const PARSER_PYNGUIN: &str = "pynguin";
/// One JSON object on the last non-empty line of the tool's stdout.
pub const PARSER_JSON_LAST_LINE: &str = "json-last-line";

/// One configuration of a command engine, fully resolved except for the per-run placeholders.
/// Keys serialise in a fixed order (struct order, maps sorted), so the JSON is canonical.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandConfig {
    /// Always [`COMMAND_ENGINE`].
    pub engine: String,
    /// Free text naming the tool and its version (part of the run identity).
    pub tool: String,
    /// Program and arguments, with `{placeholders}`.
    pub command: Vec<String>,
    /// Extra environment variables (values may hold placeholders).
    pub env: BTreeMap<String, String>,
    /// Result parser, one of [`PARSERS`].
    pub parser: String,
    /// File the parser reads (placeholders allowed); empty: the parser's default source.
    pub result_file: String,
    /// Seconds between two timeline columns of the tool (Pynguin's `--timeline-interval`).
    pub timeline_interval: f64,
    /// Wall-time limit of a run in seconds.
    pub wall_seconds: u64,
    /// The tool gives the same result for the same seed: results are reproducible and
    /// second completions are compared by digest.
    pub deterministic: bool,
    /// The configuration's parameters (`{name}` placeholders), as strings.
    pub params: BTreeMap<String, String>,
    /// Study-wide placeholders (`experiment_dir`, `results`): absolute paths on the
    /// coordinator's machine; not part of the run identity.
    pub vars: BTreeMap<String, String>,
}

impl CommandConfig {
    /// The configuration of a run spec's `config_json`, if the run is a command run.
    /// `Err` when it says it is one but does not parse.
    pub fn from_config_json(json: &str) -> Option<Result<Self, String>> {
        // Cheap test first: testgen configurations never carry an `engine` key.
        let value: serde_json::Value = serde_json::from_str(json).ok()?;
        if value.get("engine").and_then(|e| e.as_str()) != Some(COMMAND_ENGINE) {
            return None;
        }
        Some(serde_json::from_value(value).map_err(|e| format!("bad command configuration: {e}")))
    }

    /// Canonical JSON of the configuration.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The part of the configuration that identifies runs: everything except the machine's
    /// paths and the wall-time limit (limits are not part of a run's identity).
    pub fn identity_json(&self) -> String {
        let mut c = self.clone();
        c.vars.clear();
        c.wall_seconds = 0;
        c.to_json()
    }
}

/// Placeholders a worker fills in for each run (see docs/engines.md).
pub const RUN_PLACEHOLDERS: [&str; 9] =
    ["subject", "subject_dir", "module", "seed", "budget", "budget_unit", "out", "workdir", "run_id"];

/// Replaces every `{name}` in `template` by `lookup(name)`; `{{` and `}}` stand for literal
/// braces. An unknown name, an unclosed `{` or a lone `}` is an error naming it.
pub fn substitute(template: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(t) = tail.strip_prefix("{{") {
            out.push('{');
            rest = t;
        } else if let Some(t) = tail.strip_prefix("}}") {
            out.push('}');
            rest = t;
        } else if tail.starts_with('}') {
            return Err(format!("{template:?}: lone `}}` (write `}}}}` for a literal brace)"));
        } else {
            let end = tail.find('}').ok_or_else(|| format!("{template:?}: unclosed `{{`"))?;
            let name = &tail[1..end];
            let value = lookup(name).ok_or_else(|| format!("{template:?}: unknown placeholder {{{name}}}"))?;
            out.push_str(&value);
            rest = &tail[end + 1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_detection() {
        let c = CommandConfig {
            engine: COMMAND_ENGINE.into(),
            tool: "t 1".into(),
            command: vec!["x".into(), "{seed}".into()],
            env: BTreeMap::new(),
            parser: PARSER_JSON_LAST_LINE.into(),
            result_file: String::new(),
            timeline_interval: 1.0,
            wall_seconds: 10,
            deterministic: false,
            params: BTreeMap::new(),
            vars: [("results".to_string(), "/r".to_string())].into(),
        };
        let back = CommandConfig::from_config_json(&c.to_json()).unwrap().unwrap();
        assert_eq!(back, c);
        assert!(CommandConfig::from_config_json(r#"{"algorithm":"random","params":{}}"#).is_none());
        assert!(CommandConfig::from_config_json(r#"{"engine":"command"}"#).unwrap().is_err());
        let moved = CommandConfig { vars: BTreeMap::new(), wall_seconds: 99, ..c.clone() };
        assert_eq!(moved.identity_json(), c.identity_json(), "paths and limits are not identity");
    }

    #[test]
    fn placeholders_are_substituted_and_unknown_ones_named() {
        let lookup = |n: &str| (n == "seed").then(|| "7".to_string());
        assert_eq!(substitute("--seed={seed} {{x}}", &lookup).unwrap(), "--seed=7 {x}");
        assert!(substitute("{sede}", &lookup).unwrap_err().contains("{sede}"));
        assert!(substitute("{seed", &lookup).unwrap_err().contains("unclosed"));
        assert!(substitute("a}b", &lookup).unwrap_err().contains("lone"));
    }
}
