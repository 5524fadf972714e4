//! The configuration of a test run (experiment kind `test`, docs/testing.md): what
//! [`crate::RunSpec::config_json`] carries when the run is (project, suite, seed) instead of
//! (project, algorithm, seed). The coordinator writes it and the worker reads it, so its JSON
//! form lives here, once.
//!
//! The suite itself travels like a project: by content hash, fetched with `FetchProject` and
//! cached by the worker, so that a suite of a few MiB is not repeated in every run's spec (nor
//! in the store and `runs.csv`, which keep `config_json`).

use serde::{Deserialize, Serialize};

/// The `kind` of a test run's configuration.
pub const KIND: &str = "test";

/// A test run's configuration. Fields are declared in key order, so the JSON is canonical
/// (it is part of the run's identity); the options of `clowder test` are left out of the JSON
/// while they have their defaults, so the identities of runs without them stay as they were.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestRunConfig {
    /// Every test on a freshly loaded project (`clowder test --fresh-tests`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub fresh_tests: bool,
    /// Heap of the suite's JavaScript, MiB (`--js-memory-mb`); absent: the runner's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub js_memory_mb: Option<u64>,
    /// Always [`KIND`].
    pub kind: String,
    /// Steps a test may run before it ends as a timeout (`fail`).
    pub max_steps: u64,
    /// The suite's file name (`FruitCatchingTest.js`): names it in messages and stack traces.
    pub suite: String,
    /// blake3 of the suite file's bytes (hex): how the worker fetches and checks it.
    pub suite_hash: String,
    /// The template project of an Itch test plan (its file name), fetched like the suite;
    /// absent (and left out of the JSON, so older run identities stay): the project is its
    /// own template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// blake3 of the template's bytes (hex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_hash: Option<String>,
    /// The maths library of Whisker's browser by name (`--whisker-maths`); absent: the
    /// `whisker` profile's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whisker_maths: Option<String>,
    /// `speak` as in a Whisker without the synthesis service (`--whisker-offline-speech`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub whisker_offline_speech: bool,
    /// Real milliseconds a step of the modelled Whisker machine takes (`--whisker-wall-ms`);
    /// absent: the virtual clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whisker_wall_ms: Option<f64>,
}

/// Whether a suite file is a Neatest dynamic suite (networks in Whisker's JSON format) rather
/// than JavaScript: by its name, as `clowder test` tells them apart (`.json`).
pub fn is_dynamic_suite(file_name: &str) -> bool {
    file_name.to_ascii_lowercase().ends_with(".json")
}

fn given(options: &[(bool, &'static str)]) -> Vec<&'static str> {
    options.iter().filter(|(set, _)| *set).map(|(_, name)| *name).collect()
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl TestRunConfig {
    /// A configuration of kind [`KIND`].
    pub fn new(suite: &str, suite_hash: &str, max_steps: u64) -> Self {
        Self {
            kind: KIND.to_string(),
            max_steps,
            suite: suite.to_string(),
            suite_hash: suite_hash.to_string(),
            template: None,
            template_hash: None,
            fresh_tests: false,
            js_memory_mb: None,
            whisker_maths: None,
            whisker_offline_speech: false,
            whisker_wall_ms: None,
        }
    }

    /// The same configuration with an Itch plan's template project (file name and hash).
    pub fn with_template(mut self, file_name: &str, hash: &str) -> Self {
        self.template = Some(file_name.to_string());
        self.template_hash = Some(hash.to_string());
        self
    }

    /// The options of Whisker suites given (its machine and `fresh_tests`): an Itch plan,
    /// which runs in Itch's judge, takes none of them.
    pub fn whisker_options(&self) -> Vec<&'static str> {
        given(&[
            (self.whisker_wall_ms.is_some(), "whisker_wall_ms"),
            (self.whisker_offline_speech, "whisker_offline_speech"),
            (self.whisker_maths.is_some(), "whisker_maths"),
            (self.fresh_tests, "fresh_tests"),
        ])
    }

    /// The options of JavaScript suites given: a dynamic suite (networks) takes none of them.
    pub fn javascript_options(&self) -> Vec<&'static str> {
        given(&[(self.fresh_tests, "fresh_tests"), (self.js_memory_mb.is_some(), "js_memory_mb")])
    }

    /// The canonical JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The test configuration in `config_json`: `None` when it is not one (a generation run),
    /// `Some(Err)` when it says `"kind":"test"` but is malformed.
    pub fn parse(config_json: &str) -> Option<Result<Self, String>> {
        #[derive(Deserialize)]
        struct Kind {
            kind: Option<String>,
        }
        let kind: Kind = serde_json::from_str(config_json).ok()?;
        if kind.kind.as_deref() != Some(KIND) {
            return None;
        }
        Some(serde_json::from_str(config_json).map_err(|e| format!("bad test run configuration {config_json}: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_canonically_and_ignores_generation_configs() {
        let c = TestRunConfig::new("FruitCatchingTest.js", "ab", 18_000);
        let j = c.to_json();
        assert_eq!(j, r#"{"kind":"test","max_steps":18000,"suite":"FruitCatchingTest.js","suite_hash":"ab"}"#);
        assert_eq!(TestRunConfig::parse(&j), Some(Ok(c)));
        assert_eq!(TestRunConfig::parse(r#"{"algorithm":"random","params":{}}"#), None);
        assert_eq!(TestRunConfig::parse("not json"), None);
        assert!(matches!(TestRunConfig::parse(r#"{"kind":"test","suite":"x"}"#), Some(Err(_))));
        let t = TestRunConfig::new("plan.js", "ab", 9).with_template("t.sb3", "cd");
        assert_eq!(
            t.to_json(),
            r#"{"kind":"test","max_steps":9,"suite":"plan.js","suite_hash":"ab","template":"t.sb3","template_hash":"cd"}"#
        );
        assert_eq!(TestRunConfig::parse(&t.to_json()), Some(Ok(t)));
        let machine = TestRunConfig {
            fresh_tests: true,
            js_memory_mb: Some(512),
            whisker_maths: Some("glibc".into()),
            whisker_offline_speech: true,
            whisker_wall_ms: Some(12.5),
            ..TestRunConfig::new("s.js", "ab", 9)
        };
        assert_eq!(
            machine.to_json(),
            r#"{"fresh_tests":true,"js_memory_mb":512,"kind":"test","max_steps":9,"suite":"s.js","suite_hash":"ab","whisker_maths":"glibc","whisker_offline_speech":true,"whisker_wall_ms":12.5}"#
        );
        assert_eq!(TestRunConfig::parse(&machine.to_json()), Some(Ok(machine.clone())));
        let whisker = ["whisker_wall_ms", "whisker_offline_speech", "whisker_maths", "fresh_tests"];
        assert_eq!(machine.whisker_options(), whisker);
        assert_eq!(machine.javascript_options(), ["fresh_tests", "js_memory_mb"]);
        let plain = TestRunConfig::new("s.js", "ab", 9).with_template("t.sb3", "cd");
        assert!(plain.whisker_options().is_empty() && plain.javascript_options().is_empty());
    }
}
