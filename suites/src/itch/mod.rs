//! Itch test plans (scratch-ed/itch) on clowder's VM.
//!
//! A plan is a JavaScript file with `beforeExecution(e)` (static checks of the submission
//! against the template), `duringExecution(e)` (a scheduler of inputs and waits) and
//! `afterExecution(e)` (assertions on the log). [`run_plan`] runs one on a submission in
//! the `default` profile (scratch-vm's semantics with geometry and pen) on virtual time, in
//! the same QuickJS realm as Whisker suites (`crate::engine`) with the Itch glue of
//! `js/itch/*.js`, and returns Itch's partial feedback stream (version 2), its full format
//! and one row per test. Itch seeds `Math.random` with the fixed string `itch-judge`;
//! clowder draws it from the run's seeded stream (the VM's, which the project shares, as in
//! Itch), so a plan run twice with one seed gives the same bytes.

mod blocks;
mod feedback;
mod native;
mod project_json;

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use clowder_vm::{Profile, Project, Vm, VmOptions};
use rquickjs::{CatchResultExt, Function, Module, Object, Value};
use serde_json::Value as J;

pub use feedback::{ItchTest, STATUSES, dodona, full_format, overall_status};

use crate::engine::{self, Engine};
use crate::{Limits, MAX_SUITE_BYTES, Status, SuiteError, TestInfo, TestRow, seeding};

/// The Itch glue, evaluated after `driver.js` (virtual time, seeded `Math.random`).
const ITCH_JS: [(&str, &str); 5] = [
    ("clowder:itch/base.js", include_str!("../js/itch/base.js")),
    ("clowder:itch/log.js", include_str!("../js/itch/log.js")),
    ("clowder:itch/patterns.js", include_str!("../js/itch/patterns.js")),
    ("clowder:itch/actions.js", include_str!("../js/itch/actions.js")),
    ("clowder:itch/scheduler.js", include_str!("../js/itch/scheduler.js")),
];

/// Receives each partial update (one JSON text) as the plan emits it.
pub type Sink = Box<dyn FnMut(&str)>;

/// The three entry points an Itch plan defines.
const ENTRY_POINTS: [&str; 3] = ["beforeExecution", "duringExecution", "afterExecution"];

/// Whether `source` is an Itch test plan: it defines one of the three entry functions
/// (`function duringExecution(e)`, `export function …`, or `duringExecution = …`) and does
/// not export a Whisker test list.
pub fn is_itch_plan(source: &str) -> bool {
    let whisker = source.contains("module.exports") || source.contains("export default");
    let defines = source.lines().any(|l| {
        let l = l.trim_start().trim_start_matches("export ").trim_start_matches("async ");
        ENTRY_POINTS.iter().any(|f| {
            l.strip_prefix("function ")
                .and_then(|r| r.trim_start().strip_prefix(f))
                .is_some_and(|r| r.trim_start().starts_with('('))
                || l.strip_prefix(f).is_some_and(|r| r.trim_start().starts_with('='))
        })
    });
    defines && !whisker
}

/// A loaded Itch plan.
#[derive(Debug, Clone)]
pub struct ItchPlan {
    name: String,
    source: String,
}

impl ItchPlan {
    /// Reads a plan file (at most [`MAX_SUITE_BYTES`], UTF-8).
    pub fn load(path: &Path) -> Result<ItchPlan, SuiteError> {
        let meta = std::fs::metadata(path).map_err(|e| SuiteError::Io(format!("{}: {e}", path.display())))?;
        if meta.len() > MAX_SUITE_BYTES {
            return Err(SuiteError::Io(format!("{}: more than {MAX_SUITE_BYTES} bytes", path.display())));
        }
        let bytes = std::fs::read(path).map_err(|e| SuiteError::Io(format!("{}: {e}", path.display())))?;
        let source = String::from_utf8(bytes).map_err(|_| SuiteError::Io(format!("{}: not UTF-8", path.display())))?;
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        ItchPlan::from_source(&name, &source)
    }

    /// A plan given as text; it must be recognised as one ([`is_itch_plan`]).
    pub fn from_source(name: &str, source: &str) -> Result<ItchPlan, SuiteError> {
        if !is_itch_plan(source) {
            return Err(SuiteError::Suite(format!(
                "{name}: not an Itch test plan (no beforeExecution, duringExecution or afterExecution)"
            )));
        }
        Ok(ItchPlan { name: name.to_string(), source: source.to_string() })
    }

    /// The plan's file name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// The result of a plan on one submission.
#[derive(Debug, Clone)]
pub struct ItchResult {
    /// Itch's partial updates (version 2), in order; the judgement is always closed.
    pub updates: Vec<J>,
    /// The full format of the same judgement.
    pub full: J,
    /// Every test, flattened.
    pub tests: Vec<ItchTest>,
    /// The overall status.
    pub status: String,
    /// VM steps the run took.
    pub steps: u64,
}

impl ItchResult {
    /// The judgement of a submission that does not load: `wrong`, with the loader's message
    /// (a student's broken file is a failing submission, not an error of the plan).
    pub fn unloadable(message: &str) -> ItchResult {
        let updates = vec![
            serde_json::json!({"command": "start-judgement", "version": 2}),
            serde_json::json!({"command": "append-message", "message": format!("the project could not be loaded: {message}")}),
            serde_json::json!({"command": "escalate-status", "status": "wrong"}),
            serde_json::json!({"command": "close-judgement"}),
        ];
        let (full, tests) = full_format(&updates);
        let status = overall_status(&full, &tests);
        ItchResult { updates, full, tests, status, steps: 0 }
    }

    /// How many tests ended with `status`.
    pub fn count(&self, status: &str) -> usize {
        self.tests.iter().filter(|t| t.status == status).count()
    }

    /// One row per test for `tests.csv` and TAP (`correct` is a pass, `wrong` and `time
    /// limit exceeded` fails, the error statuses errors), then a row `judgement` when the
    /// judgement itself was escalated (a plan error, a timeout, a project that does not
    /// load). The messages go into the first row's log, the run's steps into its `steps` (one
    /// run for every test).
    pub fn rows(&self, project: &str) -> Vec<TestRow> {
        let mut rows: Vec<TestRow> = self
            .tests
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let info = TestInfo {
                    name: t.name.clone(),
                    description: String::new(),
                    categories: if t.groups.is_empty() { Vec::new() } else { vec![t.groups.join(" / ")] },
                    skip: false,
                    timeout: None,
                    note: None,
                };
                let mut row = TestRow::new(project, i, &info);
                row.status = match t.status.as_str() {
                    "correct" => Status::Pass,
                    "wrong" | "time limit exceeded" => Status::Fail,
                    _ => Status::Error,
                };
                row.timed_out = t.status == "time limit exceeded";
                row.message = if row.status == Status::Pass { String::new() } else { t.message.clone() };
                // One run for all tests: its steps are counted once, on the first row.
                row.steps = if i == 0 { self.steps } else { 0 };
                row
            })
            .collect();
        // Messages anywhere in the judgement (escalations append theirs where they happen).
        let messages: Vec<String> = self
            .updates
            .iter()
            .filter(|u| u.get("command").and_then(J::as_str) == Some("append-message"))
            .filter_map(|u| u.get("message").and_then(J::as_str).map(str::to_string))
            .collect();
        if let Some(first) = rows.first_mut() {
            first.log = messages.clone();
        }
        // An escalated judgement (a plan error, a timeout, an unanswered question, a project
        // that does not load) is a verdict of its own, after the tests it let run.
        if let Some(status) = self.full.get("status").and_then(J::as_str).filter(|s| *s != "correct") {
            let info = TestInfo {
                name: "judgement".into(),
                description: String::new(),
                categories: Vec::new(),
                skip: false,
                timeout: None,
                note: None,
            };
            let mut row = TestRow::new(project, rows.len(), &info);
            row.status =
                if status == "wrong" || status == "time limit exceeded" { Status::Fail } else { Status::Error };
            row.timed_out = status == "time limit exceeded";
            row.message = format!("{status}: {}", messages.join("; "));
            row.steps = if rows.is_empty() { self.steps } else { 0 };
            rows.push(row);
        }
        rows
    }
}

/// The VM options of plan runs: scratch-vm's semantics with geometry and pen (`default`),
/// moves, SAY events and the instrumentation (started hats, condition counts) recorded.
fn vm_options() -> VmOptions {
    VmOptions {
        profile: Profile::Default,
        record_say: true,
        record_moves: true,
        instrument: true,
        ..VmOptions::default()
    }
}

/// Runs `plan` on `submission` against `template` with `seed`. `sink` receives each
/// partial update (one JSON text) as the plan emits it. Never fails: problems of the plan
/// or the run are statuses of the judgement.
pub fn run_plan(
    plan: &ItchPlan,
    template: &Arc<Project>,
    submission: &Arc<Project>,
    seed: u64,
    limits: &Limits,
    sink: Option<Sink>,
) -> ItchResult {
    let state = Rc::new(RefCell::new(native::ItchState {
        sink,
        template_json: project_json::project_json(template),
        submission_json: project_json::project_json(submission),
        ..native::ItchState::default()
    }));
    let scripts: Vec<(&str, &str)> = std::iter::once(engine::DRIVER_JS[0]).chain(ITCH_JS).collect();
    let st = Rc::clone(&state);
    let engine = Engine::with_scripts(Some(Arc::clone(submission)), vm_options(), limits, &scripts, move |ctx, s| {
        native::install(ctx, s, &st)
    });
    let (outcome, steps) = match engine {
        Ok(engine) => {
            {
                let mut s = engine.session.borrow_mut();
                s.begin_test(seed, 0, limits.steps_per_test, limits.work_per_test, None);
                // A VM whose geometry reports the pen's calls (Itch proxies the renderer).
                let opts = VmOptions { seed: seeding::vm_seed(seed), ..vm_options() };
                let geometry = native::RecordingGeometry::new(
                    clowder_vm::geometry::for_project(submission),
                    Rc::clone(&state.borrow().pen),
                );
                s.vm = Some(Vm::with_geometry(Arc::clone(submission), opts, Box::new(geometry)));
            }
            let outcome = execute(&engine, plan);
            let steps = engine.session.borrow().vm.as_ref().map_or(0, Vm::steps);
            let outcome = match outcome {
                Err(_) if engine.exhausted() => Err((
                    "testplan error",
                    format!("the plan's JavaScript ran more than {} ticks (an endless loop?)", engine.budget_ticks()),
                )),
                o => o,
            };
            (outcome, steps)
        }
        Err(e) => (Err(("internal error", e.to_string())), 0),
    };
    finish(&state, outcome, steps)
}

/// Evaluates the plan and runs it; `Err((status, message))` when it could not finish.
fn execute(engine: &Engine, plan: &ItchPlan) -> Result<(), (&'static str, String)> {
    engine.with_ctx(|ctx| {
        let err = |e: &rquickjs::CaughtError<'_>| ("testplan error", format!("{}: {}", plan.name, engine::describe(e)));
        if engine::is_es_module(&plan.source) {
            let module = Module::declare(ctx.clone(), plan.name.as_str(), plan.source.as_str())
                .catch(&ctx)
                .map_err(|e| err(&e))?;
            let (module, promise) = module.eval().catch(&ctx).map_err(|e| err(&e))?;
            while ctx.execute_pending_job() {}
            promise.finish::<Value>().catch(&ctx).map_err(|e| err(&e))?;
            let ns: Object = module.namespace().catch(&ctx).map_err(|e| err(&e))?;
            for f in ENTRY_POINTS {
                let v: Value = ns.get(f).catch(&ctx).map_err(|e| err(&e))?;
                if v.is_function() {
                    ctx.globals().set(f, v).map_err(|e| ("internal error", e.to_string()))?;
                }
            }
        } else {
            let _: Value = engine::eval_value(&ctx, &plan.name, &plan.source)
                .map_err(|m| ("testplan error", format!("{}: {m}", plan.name)))?;
        }
        let runner: Object = ctx.globals().get("__itchRunner").map_err(|e| ("internal error", e.to_string()))?;
        let run: Function = runner.get("run").map_err(|e| ("internal error", e.to_string()))?;
        run.call::<_, Value>(()).catch(&ctx).map_err(|e| ("internal error", engine::describe(&e)))?;
        Ok(())
    })
}

/// Closes the stream if the run stopped early and builds the result.
fn finish(state: &Rc<RefCell<native::ItchState>>, outcome: Result<(), (&str, String)>, steps: u64) -> ItchResult {
    let mut st = state.borrow_mut();
    let mut updates: Vec<J> = st.updates.iter().map(|l| serde_json::from_str(l).unwrap_or(J::Null)).collect();
    let mut tracker = feedback::Tracker::default();
    updates.iter().for_each(|u| tracker.feed(u));
    let closing = match outcome {
        Err((status, message)) => tracker.closing(status, &message),
        Ok(()) if st.dropped > 0 => tracker.closing(
            "testplan error",
            &format!(
                "{} updates of the feedback were left out: malformed, or beyond {} bytes",
                st.dropped,
                native::MAX_FEEDBACK_BYTES
            ),
        ),
        Ok(()) => tracker.closing("internal error", "the plan's run ended without closing its judgement"),
    };
    for u in closing {
        let line = u.to_string();
        if let Some(sink) = st.sink.as_mut() {
            sink(&line);
        }
        updates.push(u);
    }
    let (full, tests) = full_format(&updates);
    let status = overall_status(&full, &tests);
    ItchResult { updates, full, tests, status, steps }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_are_told_from_whisker_suites() {
        assert!(is_itch_plan("/** @param {Evaluation} e */\nfunction duringExecution(e) {\n  e.scheduler.end();\n}"));
        assert!(is_itch_plan("export function afterExecution (e) {}"));
        assert!(is_itch_plan("beforeExecution = function (e) {};"));
        assert!(!is_itch_plan("module.exports = [{test: async t => { /* duringExecution */ }}];"));
        assert!(!is_itch_plan("function duringExecutionHelper(e) {}"));
        assert!(ItchPlan::from_source("x.js", "const a = 1;").is_err());
    }
}
