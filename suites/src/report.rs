//! Results of a suite run: rows (`tests.csv`), Whisker's TAP13 text and Itch-style
//! hierarchical JSON feedback (judgement → group → test).

use std::io::Write;

use clowder_vm::value::number_to_js_string;
use serde::Serialize;
use serde_json::{Value, json};

use crate::TestInfo;
use crate::engine::JsError;

/// A test's verdict, as Whisker's test runner names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The test ran to its end.
    Pass,
    /// An assertion failed (or a constraint, or the test timed out).
    Fail,
    /// The test threw something that is not an assertion: a bug in the suite, a driver
    /// method that does not exist, an endless loop in JavaScript.
    Error,
    /// An assumption did not hold (a sprite not found), or the suite skips the test.
    Skip,
}

impl Status {
    /// `pass`, `fail`, `error` or `skip`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Error => "error",
            Status::Skip => "skip",
        }
    }
}

/// One (project, test) result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestRow {
    /// The project's label.
    pub project: String,
    /// 1-based position in the suite.
    pub index: usize,
    /// The test's name.
    pub test: String,
    /// Its first category (groups the JSON feedback).
    pub category: Option<String>,
    /// The verdict.
    pub status: Status,
    /// The assertion's or error's message (empty for a pass).
    pub message: String,
    /// VM steps the test ran.
    pub steps: u64,
    /// Error or assertion name (`AssertionError`, `TypeError`, …).
    pub error_name: Option<String>,
    /// The failed assertion's actual value (as JavaScript source text).
    pub actual: Option<String>,
    /// Its expected value.
    pub expected: Option<String>,
    /// Its operator (`==`, `<`, `ok`, …).
    pub operator: Option<String>,
    /// The failed constraint's name.
    pub constraint: Option<String>,
    /// What the test logged with `t.log`.
    pub log: Vec<String>,
    /// The test ended at a limit (its step limit or the VM's work cap), not by itself.
    pub timed_out: bool,
}

impl TestRow {
    pub(crate) fn new(project: &str, index: usize, info: &TestInfo) -> TestRow {
        TestRow {
            project: project.to_string(),
            index: index + 1,
            test: if info.name.is_empty() { format!("test {}", index + 1) } else { info.name.clone() },
            category: info.categories.first().cloned(),
            status: Status::Error,
            message: String::new(),
            steps: 0,
            error_name: None,
            actual: None,
            expected: None,
            operator: None,
            constraint: None,
            log: Vec::new(),
            timed_out: false,
        }
    }

    pub(crate) fn set_error(&mut self, e: &JsError) {
        let assertion = e.actual.is_some() || e.expected.is_some();
        self.message = if assertion {
            e.message.clone()
        } else {
            // Errors name their kind and where they happened in the suite.
            let at = e.stack.as_deref().and_then(first_frame);
            match at {
                Some(at) => format!("{}: {} ({at})", e.name, e.message),
                None => format!("{}: {}", e.name, e.message),
            }
        };
        if let Some(c) = &e.constraint {
            self.message = format!("constraint {c}: {}", self.message);
        }
        self.error_name = Some(e.name.clone());
        self.actual = e.actual.clone();
        self.expected = e.expected.clone();
        self.operator = e.operator.clone();
        self.constraint = e.constraint.clone();
    }
}

fn first_frame(stack: &str) -> Option<String> {
    let line = stack.lines().map(str::trim).find(|l| l.starts_with("at ") && !l.contains("clowder:"))?;
    let inner = match (line.rfind('('), line.rfind(')')) {
        (Some(a), Some(b)) if a < b => &line[a + 1..b],
        _ => line.trim_start_matches("at ").trim(),
    };
    (!inner.is_empty()).then(|| inner.to_string())
}

/// A number of milliseconds as JavaScript prints it.
pub(crate) fn ms(v: f64) -> String {
    number_to_js_string(v)
}

/// The rows of one suite run on one project.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectResult {
    /// The project's label.
    pub project: String,
    /// The suite's file name.
    pub suite: String,
    /// The run's seed.
    pub seed: u64,
    /// One row per test, in suite order.
    pub rows: Vec<TestRow>,
}

impl ProjectResult {
    /// Every test `fail`s with `message`: a project that could not be loaded (a student's
    /// broken file is a failing submission, not an error of the suite).
    pub fn unloadable(suite: &crate::Suite, project: &str, seed: u64, message: &str) -> ProjectResult {
        let rows = suite
            .tests()
            .iter()
            .enumerate()
            .map(|(i, info)| {
                let mut row = TestRow::new(project, i, info);
                row.status = Status::Fail;
                row.message = format!("the project could not be loaded: {message}");
                row
            })
            .collect();
        ProjectResult { project: project.to_string(), suite: suite.name().to_string(), seed, rows }
    }

    /// How many tests ended with `status`.
    pub fn count(&self, status: Status) -> usize {
        self.rows.iter().filter(|r| r.status == status).count()
    }

    /// Whisker's TAP13 output: `ok`/`not ok` per test with a YAML block for the others
    /// (severity, error name, message, actual, expected, operator, log).
    pub fn tap(&self) -> String {
        let mut out = String::new();
        out.push_str("TAP version 13\n");
        out.push_str(&format!("# suite {} on {} (seed {})\n", self.suite, self.project, self.seed));
        let n = self.rows.len();
        out.push_str(&format!("{}..{}\n", usize::from(n > 0), n));
        for r in &self.rows {
            let ok = if r.status == Status::Pass { "ok" } else { "not ok" };
            let name = if r.test.is_empty() { String::new() } else { format!(" - {}", tap_description(&r.test)) };
            let directive = if r.status == Status::Skip { " # SKIP" } else { "" };
            out.push_str(&format!("{ok} {}{name}{directive}\n", r.index));
            let mut yaml = Vec::new();
            if r.status != Status::Pass {
                yaml.push(format!("severity: {}", r.status.as_str()));
                yaml.push("error:".to_string());
                yaml.push(format!("  name: {}", quote(r.error_name.as_deref().unwrap_or("Error"))));
                yaml.push(format!("  message: {}", quote(&r.message)));
                for (k, v) in [
                    ("actual", &r.actual),
                    ("expected", &r.expected),
                    ("operator", &r.operator),
                    ("constraint", &r.constraint),
                ] {
                    if let Some(v) = v {
                        yaml.push(format!("  {k}: {}", quote(v)));
                    }
                }
            }
            if !r.log.is_empty() {
                yaml.push("log:".to_string());
                yaml.extend(r.log.iter().map(|l| format!("  - {}", quote(l))));
            }
            if !yaml.is_empty() {
                out.push_str("  ---\n");
                for l in yaml {
                    out.push_str("  ");
                    out.push_str(&l);
                    out.push('\n');
                }
                out.push_str("  ...\n");
            }
        }
        out.push_str(&format!(
            "# pass {} fail {} error {} skip {}\n",
            self.count(Status::Pass),
            self.count(Status::Fail),
            self.count(Status::Error),
            self.count(Status::Skip)
        ));
        out
    }

    /// Itch-style feedback in full mode: a judgement with groups (the tests' first category,
    /// else the suite) of tests, each `correct`, `wrong`, `skipped` or `runtime error`.
    pub fn feedback(&self) -> Value {
        let mut groups: Vec<(String, Vec<Value>)> = Vec::new();
        for r in &self.rows {
            let group = r.category.clone().unwrap_or_else(|| self.suite.clone());
            let test = json!({
                "name": r.test,
                "index": r.index,
                "status": itch_status(r.status),
                "verdict": r.status.as_str(),
                "feedback": r.message,
                "actual": r.actual,
                "expected": r.expected,
                "steps": r.steps,
            });
            match groups.iter_mut().find(|(g, _)| *g == group) {
                Some((_, tests)) => tests.push(test),
                None => groups.push((group, vec![test])),
            }
        }
        let correct = self.rows.iter().all(|r| r.status == Status::Pass);
        json!({
            "version": 2,
            "judgement": {
                "project": self.project,
                "suite": self.suite,
                "seed": self.seed,
                "status": if correct { "correct" } else { "wrong" },
                "summary": {
                    "pass": self.count(Status::Pass),
                    "fail": self.count(Status::Fail),
                    "error": self.count(Status::Error),
                    "skip": self.count(Status::Skip),
                },
                "groups": groups.into_iter().map(|(name, tests)| {
                    let failed = tests.iter().any(|t| t["status"] != "correct");
                    json!({"name": name, "visibility": if failed { "visible" } else { "summary" }, "tests": tests})
                }).collect::<Vec<_>>(),
            }
        })
    }
}

fn itch_status(s: Status) -> &'static str {
    match s {
        Status::Pass => "correct",
        Status::Fail => "wrong",
        Status::Skip => "skipped",
        Status::Error => "runtime error",
    }
}

/// A test's name as one TAP description: a TAP line ends at a line break, and a name can be
/// a whole function's source (`servantForm` in wrapper.js), so its lines are joined.
fn tap_description(name: &str) -> String {
    if !name.contains(['\r', '\n']) {
        return name.to_string();
    }
    name.split(['\r', '\n']).map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

/// A YAML double-quoted scalar (JSON string syntax, which YAML reads the same).
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// Header of `tests.csv`.
pub const CSV_HEADER: [&str; 5] = ["project", "test", "status", "message", "steps"];

/// Writes `tests.csv`: one row per (project, test), in the order given.
pub fn write_csv<W: Write>(out: W, results: &[ProjectResult]) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(CSV_HEADER)?;
    for p in results {
        for r in &p.rows {
            w.write_record([
                r.project.as_str(),
                r.test.as_str(),
                r.status.as_str(),
                r.message.as_str(),
                &r.steps.to_string(),
            ])?;
        }
    }
    w.flush()
}
