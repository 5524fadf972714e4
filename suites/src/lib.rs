//! Hand-written Whisker test suites on clowder's VM: grading and test-suite studies.
//!
//! A suite is a JavaScript file as Whisker's (`se2p/whisker`, e.g.
//! `whisker-web/src/examples/FruitCatchingTest.js`): it exports a list of
//! `{test, name, description, categories}`, each test an async function of a test driver
//! `t`. [`run_project`] runs every test of a [`Suite`] on a project in the `whisker` profile
//! and returns one [`TestRow`] per test, Whisker's TAP13 text and Itch-style JSON feedback;
//! [`mutation`] runs a suite on every mutant of a project. [`itch`] runs Itch test plans
//! (scratch-ed/itch) in the same engine, with Itch's and Dodona's feedback formats.
//!
//! # Engine: QuickJS (rquickjs), not Boa
//!
//! Both run ES2020 with async/await and ES modules without Node or a browser. QuickJS
//! (`rquickjs`, the quickjs-ng engine, C built by the cc crate) was chosen because:
//!
//! * **Untrusted code ends deterministically.** QuickJS calls an interrupt handler every
//!   10 000 ticks (function calls and backward jumps); the handler counts polls, so a suite
//!   that loops forever stops at the same instruction on every machine. Boa (0.20) only
//!   limits loop iterations per loop and recursion depth: a loop of calls is not bounded.
//! * **Memory and stack limits** are runtime settings (`set_memory_limit`,
//!   `set_max_stack_size`); Boa has no memory limit.
//! * **Speed**: QuickJS's bytecode interpreter runs the driver's per-step callbacks several
//!   times faster than Boa's; the VM, not the JavaScript, dominates a suite's time.
//! * **Build time**: one C file set (about 1 min at `-O2` on one core) against Boa's large
//!   Rust crate graph (several minutes).
//!
//! Determinism beyond the interrupt budget: `Math.random`, `Date`, `performance.now` and the
//! timers are replaced by the driver (`js/driver.js`) with the run's seeded streams
//! ([`seeding`]) and the VM's virtual clock; nothing a suite can reach reads the machine.
//!
//! By default the tests of a file share one realm (the suite evaluated once) and one VM as in
//! the real Whisker, which resets only part of it between tests ([`BetweenTests::Whisker`]);
//! [`BetweenTests::Fresh`] gives every test a fresh realm and a freshly loaded project, so
//! that a verdict does not depend on the tests before it.

#![warn(missing_docs)]

mod engine;
pub mod itch;
pub mod mutation;
mod native;
pub mod parallel;
pub mod report;
pub mod seeding;

use std::path::Path;
use std::sync::Arc;

use clowder_vm::runtime::STEP_MS;
use clowder_vm::{Profile, Project, VmOptions};
use serde::{Deserialize, Serialize};

pub use report::{ProjectResult, Status, TestRow};

use engine::{Ending, Engine, JsResult};
use native::Limit;

/// Largest suite file read (bytes): Whisker's largest example is 50 KB, but clowder's own
/// exports of games that fill the clone limit check every clone after every event (5 MB for
/// 300 clones on an unseen game).
pub const MAX_SUITE_BYTES: u64 = 32 << 20;

/// Why a suite could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The file could not be read.
    #[error("{0}")]
    Io(String),
    /// The suite is not a valid Whisker suite: syntax error (with file, line and column), an
    /// exception while loading, no exported list of tests.
    #[error("{0}")]
    Suite(String),
    /// The JavaScript engine could not be set up.
    #[error("JavaScript engine: {0}")]
    Engine(String),
}

/// Limits of one test (all counted, none timed).
#[derive(Debug, Clone)]
pub struct Limits {
    /// VM steps a test may run before it ends as a timeout (`fail`, as Whisker's timeout).
    /// Default 18 000 steps = 600 000 ms of Scratch time, Whisker's per-test timeout.
    pub steps_per_test: u64,
    /// VM work units a test may use ([`clowder_vm::Vm::work`]): a runaway project ends the
    /// test as a `fail` at the same point on every machine.
    pub work_per_test: u64,
    /// JavaScript ticks (calls and backward jumps) a test may use; past it the test is an
    /// `error` (an endless loop in the suite). The default, 10^8, is about 3 s of JavaScript
    /// in a debug build and 10 to 20 times what the heaviest example test uses.
    pub js_ticks: u64,
    /// Heap of the JavaScript runtime, bytes.
    pub js_memory_bytes: usize,
    /// Native stack the JavaScript interpreter may use, bytes (deep recursion is a
    /// `RangeError`, an `error`).
    pub js_stack_bytes: usize,
    /// What a test starts from: the earlier tests' VM as Whisker resets it, or a fresh one.
    pub between_tests: BetweenTests,
    /// Real milliseconds a Whisker step takes, for the blocks Whisker times on its wall clock
    /// (music beats, `when timer >`; [`VmOptions::whisker_wall_ms`]); `None`, the default,
    /// runs them on the virtual clock. Not a limit: how the runner models Whisker's machine.
    pub whisker_wall_ms: Option<f64>,
    /// `speak` as Whisker runs it on a machine that cannot reach Scratch's synthesis service
    /// (it never ends; [`VmOptions::whisker_offline_speech`]). Not a limit either.
    pub whisker_offline_speech: bool,
    /// The maths library of the browser Whisker runs in ([`VmOptions::whisker_maths`]);
    /// `None`, the default, is the `whisker` profile's (Chromium 148 on Linux).
    pub whisker_maths: Option<clowder_vm::util::mathlib::MathLib>,
}

/// Default steps per test: 600 000 ms of Scratch time, Whisker's per-test timeout in its
/// mutation runs.
pub const DEFAULT_STEPS_PER_TEST: u64 = 18_000;

impl Limits {
    /// Checks a heap size for a suite's JavaScript given from outside (`--js-memory-mb`, a test
    /// experiment's `js_memory_mb`): 16 to 16 384 MiB. Returns it in bytes.
    pub fn check_js_memory_mb(mb: u64) -> Result<usize, String> {
        if (16..=16_384).contains(&mb) {
            usize::try_from(mb << 20).map_err(|_| format!("{mb} MiB do not fit this machine's address space"))
        } else {
            Err(format!("must be between 16 and 16384 (MiB), not {mb}"))
        }
    }
}

/// How the tests of a file meet the VM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BetweenTests {
    /// As the real Whisker (emse22): one VM for the whole file; before each test the clones
    /// are deleted and each sprite's position, direction, size, costume, visibility, effects
    /// and variables assigned back, while layers, rotation styles, the pen and the renderer's
    /// copy of those looks stay as the previous test left them (`vm/src/engine/restore.rs`);
    /// the suite is evaluated once, so its module-level state is shared too. The default:
    /// verdicts are the real Whisker's, including those that depend on the order of the tests.
    #[default]
    Whisker,
    /// Every test on a freshly loaded project, with the suite evaluated anew: a verdict does
    /// not depend on the tests before it.
    Fresh,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            steps_per_test: DEFAULT_STEPS_PER_TEST,
            work_per_test: clowder_testgen::default_work_cap(clowder_testgen::Budget::Steps(DEFAULT_STEPS_PER_TEST)),
            js_ticks: 100_000_000,
            js_memory_bytes: 256 << 20,
            js_stack_bytes: 512 << 10,
            between_tests: BetweenTests::Whisker,
            whisker_wall_ms: None,
            whisker_offline_speech: false,
            whisker_maths: None,
        }
    }
}

/// A test of a suite as the suite declares it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestInfo {
    /// `name` (empty when the suite gives none).
    pub name: String,
    /// `description`.
    pub description: String,
    /// `categories` (the first one groups the test in the JSON feedback).
    pub categories: Vec<String>,
    /// `skip: true`: reported as `skip` without running.
    pub skip: bool,
    /// The test's own `timeout` in ms, if it sets one.
    pub timeout: Option<f64>,
    /// Why the real Whisker would not run this test as written, if it would not (its servant
    /// rewrites test files: `servantForm` in `js/wrapper.js`); shown, not a verdict.
    #[serde(default)]
    pub note: Option<String>,
}

/// A loaded suite: its source and its tests.
#[derive(Debug, Clone)]
pub struct Suite {
    name: String,
    source: String,
    tests: Vec<TestInfo>,
}

impl Suite {
    /// Reads and checks a suite file (at most [`MAX_SUITE_BYTES`]).
    pub fn load(path: &Path) -> Result<Suite, SuiteError> {
        let meta = std::fs::metadata(path).map_err(|e| SuiteError::Io(format!("{}: {e}", path.display())))?;
        if meta.len() > MAX_SUITE_BYTES {
            return Err(SuiteError::Io(format!(
                "{}: {} bytes, more than a suite may have ({MAX_SUITE_BYTES})",
                path.display(),
                meta.len()
            )));
        }
        let bytes = std::fs::read(path).map_err(|e| SuiteError::Io(format!("{}: {e}", path.display())))?;
        let source = String::from_utf8(bytes).map_err(|_| SuiteError::Io(format!("{}: not UTF-8", path.display())))?;
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        Suite::from_source(&name, &source)
    }

    /// Checks a suite given as text: it must evaluate and export a list of tests.
    pub fn from_source(name: &str, source: &str) -> Result<Suite, SuiteError> {
        let engine = Engine::new(None, vm_options(), &Limits::default())?;
        let tests = engine.load_suite(name, source)?;
        Ok(Suite { name: name.to_string(), source: source.to_string(), tests })
    }

    /// The file name the suite was loaded from.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tests, in the suite's order.
    pub fn tests(&self) -> &[TestInfo] {
        &self.tests
    }
}

/// The VM options of suite runs: the `whisker` profile with the events Whisker's listeners
/// hear recorded (moves, bubbles, variable and visual changes).
fn vm_options() -> VmOptions {
    VmOptions { profile: Profile::Whisker, record_listeners: true, record_moves: true, ..VmOptions::default() }
}

/// Runs every test of `suite` on `project` with `seed`: one row per test, in suite order.
/// `project_name` labels the rows. The same inputs give the same rows on any machine.
pub fn run_project(
    suite: &Suite,
    project: &Arc<Project>,
    project_name: &str,
    seed: u64,
    limits: &Limits,
) -> ProjectResult {
    let mut run = FileRun::new(suite, project, project_name, seed, limits);
    let rows = (0..suite.tests.len()).map(|i| run.test(i)).collect();
    ProjectResult { project: project_name.to_string(), suite: suite.name.clone(), seed, rows }
}

/// Runs test `index` (0-based) of `suite` on `project`. Under [`BetweenTests::Whisker`] the
/// tests before it run first (their rows are dropped), since they decide what it starts from.
pub fn run_test(
    suite: &Suite,
    project: &Arc<Project>,
    project_name: &str,
    seed: u64,
    index: usize,
    limits: &Limits,
) -> TestRow {
    let mut run = FileRun::new(suite, project, project_name, seed, limits);
    if limits.between_tests == BetweenTests::Whisker {
        for i in 0..index.min(suite.tests.len()) {
            run.test(i);
        }
    }
    run.test(index)
}

/// The tests of one file on one project, in the order they are asked for, handing the VM
/// from each test to the next under [`BetweenTests::Whisker`].
pub(crate) struct FileRun<'a> {
    suite: &'a Suite,
    project: &'a Arc<Project>,
    project_name: &'a str,
    seed: u64,
    limits: &'a Limits,
    /// The last test's VM and whether its driver ended it (Whisker's `end()`).
    carried: Option<(clowder_vm::Vm, bool)>,
    /// What the driver's wrapper kept from the tests so far (`VMWrapper.carry` in `js/wrapper.js`).
    wrapper: Option<serde_json::Value>,
    /// The file's JavaScript realm under [`BetweenTests::Whisker`]: Whisker evaluates a test
    /// file once, so module-level variables and globals a test sets are seen by the next.
    engine: Option<Engine>,
}

impl<'a> FileRun<'a> {
    pub(crate) fn new(
        suite: &'a Suite,
        project: &'a Arc<Project>,
        project_name: &'a str,
        seed: u64,
        limits: &'a Limits,
    ) -> Self {
        FileRun { suite, project, project_name, seed, limits, carried: None, wrapper: None, engine: None }
    }

    /// Runs test `index` (0-based).
    pub(crate) fn test(&mut self, index: usize) -> TestRow {
        let (suite, limits) = (self.suite, self.limits);
        let info = suite.tests.get(index).cloned().unwrap_or(TestInfo {
            name: String::new(),
            description: String::new(),
            categories: Vec::new(),
            skip: false,
            timeout: None,
            note: None,
        });
        let mut row = TestRow::new(self.project_name, index, &info);
        if index >= suite.tests.len() {
            row.status = Status::Error;
            row.message = format!("the suite has no test {}", index + 1);
            return row;
        }
        if info.skip {
            // Whisker resets the VM before a skipped test too, and runs nothing: the next
            // test's reset gives the same state either way.
            row.status = Status::Skip;
            row.message = "skipped by the suite (skip: true)".into();
            return row;
        }
        let step_limit = match info.timeout {
            Some(ms) if ms > 0.0 && ms.is_finite() => limits.steps_per_test.min((ms / STEP_MS).ceil() as u64),
            _ => limits.steps_per_test,
        };
        let engine = match self.engine.take() {
            Some(e) => e,
            None => match Engine::new(
                Some(Arc::clone(self.project)),
                VmOptions {
                    whisker_wall_ms: limits.whisker_wall_ms,
                    whisker_offline_speech: limits.whisker_offline_speech,
                    whisker_maths: limits.whisker_maths,
                    ..vm_options()
                },
                limits,
            )
            .and_then(|e| e.load_suite(&suite.name, &suite.source).map(|_| e))
            {
                Ok(e) => e,
                Err(e) => {
                    row.status = Status::Error;
                    row.message = e.to_string();
                    return row;
                }
            },
        };
        let (carried, wrapper) = match limits.between_tests {
            BetweenTests::Whisker => (self.carried.take(), self.wrapper.as_ref()),
            BetweenTests::Fresh => (None, None),
        };
        let ending = engine.run_test(self.seed, index, step_limit, limits.work_per_test, carried, wrapper);
        let vm = engine.session.borrow_mut().vm.take();
        let vm_steps = vm.as_ref().map_or(0, |vm| vm.steps());
        // A settled test ran its driver's `end()`; one stopped by a limit or an exception did not.
        let ended = matches!(ending, Ending::Settled(_));
        if limits.between_tests == BetweenTests::Whisker {
            self.carried = vm.map(|vm| (vm, ended));
            // A test stopped before its end hands on nothing new; the wrapper's state from
            // before it is the nearest known (its steps are then not counted in the total).
            if let Ending::Settled(r) = &ending
                && r.carry.is_some()
            {
                self.wrapper.clone_from(&r.carry);
            }
            // The realm goes on to the next test unless it is spent: a test that ran out of
            // JavaScript budget leaves every later call interrupted, and an engine failure
            // (out of memory, say) leaves it in no known state. The next test then starts
            // from the suite evaluated anew, where Whisker's page would be stuck.
            if !matches!(ending, Ending::Budget | Ending::Failed(_)) {
                self.engine = Some(engine);
            }
        }
        apply_ending(&mut row, ending, step_limit, vm_steps, limits);
        row
    }
}

/// The row of a test from how it ended.
fn apply_ending(row: &mut TestRow, ending: Ending, step_limit: u64, vm_steps: u64, limits: &Limits) {
    let fill = |row: &mut TestRow, r: &JsResult| {
        row.log = r.log.clone();
        row.steps = r.steps.map_or(vm_steps, |s| if s.is_finite() && s >= 0.0 { s as u64 } else { vm_steps });
    };
    match ending {
        Ending::Settled(r) => {
            fill(row, &r);
            row.status = match r.status.as_deref() {
                Some("pass") => Status::Pass,
                Some("fail") | Some("timeout") => Status::Fail,
                Some("skip") => Status::Skip,
                _ => Status::Error,
            };
            if let Some(e) = &r.error {
                row.set_error(e);
            }
            // A test's own `timeout` (Whisker races it against the test) ends it as a fail.
            row.timed_out = r.status.as_deref() == Some("timeout");
        }
        Ending::Limited(limit, r) => {
            fill(row, &r);
            row.status = Status::Fail;
            row.timed_out = true;
            row.message = match limit {
                Limit::Steps => format!(
                    "Timeout: the test did not finish within {step_limit} steps ({} ms of Scratch time)",
                    crate::report::ms(step_limit as f64 * STEP_MS)
                ),
                Limit::Work => {
                    format!("the project reached the VM's work cap ({} units) in this test", limits.work_per_test)
                }
            };
        }
        Ending::Budget => {
            row.steps = vm_steps;
            row.status = Status::Error;
            row.message = format!(
                "the suite's JavaScript ran more than {} ticks in this test (an endless loop?)",
                limits.js_ticks
            );
        }
        Ending::Failed(m) => {
            row.steps = vm_steps;
            row.status = Status::Error;
            row.message = m;
        }
    }
}
