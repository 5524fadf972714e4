//! One JavaScript realm per test: QuickJS with its limits, the driver, the suite, and the
//! loop that drives a test's promise to its end on virtual time.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use clowder_vm::{Project, VmOptions};
use rquickjs::{CatchResultExt, CaughtError, Context, Ctx, Function, Module, Object, Promise, Runtime, Value};
use serde::Deserialize;

use crate::native::{self, Limit, Session};
use crate::{Limits, SuiteError, TestInfo};

/// The driver, evaluated in this order before the suite (each file names what it takes from
/// the ones before).
pub(crate) const DRIVER_JS: [(&str, &str); 4] = [
    ("clowder:driver.js", include_str!("js/driver.js")),
    ("clowder:sprites.js", include_str!("js/sprites.js")),
    ("clowder:callbacks.js", include_str!("js/callbacks.js")),
    ("clowder:wrapper.js", include_str!("js/wrapper.js")),
];

/// QuickJS polls its interrupt handler every 10 000 "ticks" (calls and backward jumps).
const TICKS_PER_POLL: u64 = 10_000;

/// What one test ended with, as the JavaScript side reported it.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct JsResult {
    pub status: Option<String>,
    pub error: Option<JsError>,
    #[serde(default)]
    pub log: Vec<String>,
    #[serde(default)]
    pub steps: Option<f64>,
    /// What the driver's wrapper hands to the next test of the file (`VMWrapper.carry`).
    #[serde(default)]
    pub carry: Option<serde_json::Value>,
}

/// An error or failed assertion, with the fields Whisker's TAP output shows.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct JsError {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub message: String,
    pub actual: Option<String>,
    pub expected: Option<String>,
    pub operator: Option<String>,
    pub constraint: Option<String>,
    pub stack: Option<String>,
}

/// How a test ended, before it becomes a row.
#[derive(Debug, Clone)]
pub(crate) enum Ending {
    /// The test's promise settled; `result` says how.
    Settled(JsResult),
    /// The test reached a limit of the run (steps or the VM's work).
    Limited(Limit, JsResult),
    /// The suite's JavaScript ran over its budget (an endless loop without steps).
    Budget,
    /// The engine failed: out of memory, a rejected promise outside the test, no way on.
    Failed(String),
}

/// A QuickJS runtime with the limits of untrusted code and the driver installed.
pub(crate) struct Engine {
    // Field order: the context must go before the runtime.
    ctx: Context,
    _rt: Runtime,
    pub(crate) session: Rc<RefCell<Session>>,
    polls: Rc<Cell<u64>>,
    exhausted: Rc<Cell<bool>>,
    /// Interrupts the realm's JavaScript (shared with the session, which sets it at a limit).
    stop: Rc<Cell<bool>>,
    max_polls: u64,
    /// The realm's heap limit, bytes (for the message when it runs out).
    memory_limit: usize,
}

/// What [`describe`] says when QuickJS fails without an exception value: it could not even
/// allocate the error object, which in practice means the heap limit was reached.
const NO_EXCEPTION: &str = "the JavaScript engine stopped without an exception value";

impl Engine {
    /// A fresh realm for `project` (or none, to list a suite's tests) with the driver loaded.
    pub(crate) fn new(
        project: Option<Arc<Project>>,
        vm_opts: VmOptions,
        limits: &Limits,
    ) -> Result<Engine, SuiteError> {
        Engine::with_scripts(project, vm_opts, limits, &DRIVER_JS, |_, _| Ok(()))
    }

    /// A fresh realm with `scripts` evaluated in order after `install` put its bindings
    /// beside `__native` (Itch plans use their own glue on the same VM bindings).
    pub(crate) fn with_scripts(
        project: Option<Arc<Project>>,
        vm_opts: VmOptions,
        limits: &Limits,
        scripts: &[(&str, &str)],
        install: impl FnOnce(&Ctx<'_>, &Rc<RefCell<Session>>) -> rquickjs::Result<()>,
    ) -> Result<Engine, SuiteError> {
        let rt = Runtime::new().map_err(|e| SuiteError::Engine(e.to_string()))?;
        rt.set_memory_limit(limits.js_memory_bytes);
        rt.set_max_stack_size(limits.js_stack_bytes);
        let polls = Rc::new(Cell::new(0u64));
        let exhausted = Rc::new(Cell::new(false));
        let stop = Rc::new(Cell::new(false));
        let max_polls = limits.js_ticks.div_ceil(TICKS_PER_POLL).max(1);
        {
            let polls = Rc::clone(&polls);
            let exhausted = Rc::clone(&exhausted);
            let stop = Rc::clone(&stop);
            // Counted, not timed: the same suite stops at the same instruction on every machine.
            // A test at its step limit stops too (a suite may catch the timeout and go on).
            rt.set_interrupt_handler(Some(Box::new(move || {
                polls.set(polls.get() + 1);
                if polls.get() > max_polls {
                    exhausted.set(true);
                }
                exhausted.get() || stop.get()
            })));
        }
        let ctx = Context::full(&rt).map_err(|e| SuiteError::Engine(e.to_string()))?;
        let session = Rc::new(RefCell::new(Session::new(project, vm_opts, Rc::clone(&stop))));
        let engine =
            Engine { ctx, _rt: rt, session, polls, exhausted, stop, max_polls, memory_limit: limits.js_memory_bytes };
        engine.ctx.with(|ctx| -> Result<(), SuiteError> {
            native::install(&ctx, &engine.session).map_err(|e| SuiteError::Engine(e.to_string()))?;
            install(&ctx, &engine.session).map_err(|e| SuiteError::Engine(e.to_string()))?;
            for &(name, src) in scripts {
                eval_script(&ctx, name, src).map_err(|m| SuiteError::Engine(format!("{name}: {m}")))?;
            }
            Ok(())
        })?;
        Ok(engine)
    }

    /// Runs `f` in the realm's context.
    pub(crate) fn with_ctx<R>(&self, f: impl FnOnce(Ctx<'_>) -> R) -> R {
        self.ctx.with(f)
    }

    /// Whether the JavaScript budget ran out (every later call is interrupted too).
    pub(crate) fn exhausted(&self) -> bool {
        self.exhausted.get()
    }

    /// The JavaScript budget in ticks.
    pub(crate) fn budget_ticks(&self) -> u64 {
        self.max_polls * TICKS_PER_POLL
    }

    /// Evaluates the suite and keeps its tests; returns what the runner needs of them.
    pub(crate) fn load_suite(&self, name: &str, source: &str) -> Result<Vec<TestInfo>, SuiteError> {
        let out = self.ctx.with(|ctx| -> Result<String, String> {
            let (exported, scope) = if is_es_module(source) {
                let module = Module::declare(ctx.clone(), name, source).catch(&ctx).map_err(|e| describe(&e))?;
                let (module, promise) = module.eval().catch(&ctx).map_err(|e| describe(&e))?;
                while ctx.execute_pending_job() {}
                promise.finish::<Value>().catch(&ctx).map_err(|e| describe(&e))?;
                let ns = module.namespace().catch(&ctx).map_err(|e| describe(&e))?;
                let exported = ns.get::<_, Value>("default").catch(&ctx).map_err(|e| describe(&e))?;
                (exported, Value::new_undefined(ctx.clone()))
            } else {
                // CommonJS as Whisker's files are written; the wrapper sits on the first line
                // so that line numbers in errors are the file's. It returns a function that
                // evaluates source in the file's top-level scope, for the servant's rewrite of
                // each test (`servantForm` in wrapper.js).
                let wrapped = format!(
                    "(function (module, exports, require) {{{source}\n;return function (__clowderSource) {{ return eval(__clowderSource); }};\n}})",
                );
                let f: Function = eval_value(&ctx, name, &wrapped)?;
                let module = Object::new(ctx.clone()).map_err(|e| e.to_string())?;
                let exports = Object::new(ctx.clone()).map_err(|e| e.to_string())?;
                module.set("exports", exports.clone()).map_err(|e| e.to_string())?;
                let require: Function = eval_value(
                    &ctx,
                    "clowder:require",
                    "(name => { throw new Error(`require(${JSON.stringify(name)}): a suite runs without modules`); })",
                )?;
                let scope =
                    f.call::<_, Value>((module.clone(), exports, require)).catch(&ctx).map_err(|e| describe(&e))?;
                (module.get::<_, Value>("exports").map_err(|e| e.to_string())?, scope)
            };
            let runner: Object = ctx.globals().get("__clowderRunner").map_err(|e| e.to_string())?;
            let load: Function = runner.get("load").map_err(|e| e.to_string())?;
            let tests: Value = load.call((exported, scope)).catch(&ctx).map_err(|e| describe(&e))?;
            ctx.globals().set("__clowderTests", tests.clone()).map_err(|e| e.to_string())?;
            let describe_fn: Function = runner.get("describe").map_err(|e| e.to_string())?;
            describe_fn.call::<_, String>((tests,)).catch(&ctx).map_err(|e| describe(&e))
        });
        if self.exhausted.get() {
            return Err(SuiteError::Suite(format!(
                "{name}: loading the suite ran over the JavaScript budget ({} ticks)",
                self.max_polls * TICKS_PER_POLL
            )));
        }
        let json = out.map_err(|m| SuiteError::Suite(format!("{name}: {m}")))?;
        serde_json::from_str(&json).map_err(|e| SuiteError::Suite(format!("{name}: test list: {e}")))
    }

    /// Runs test `index` on a fresh VM or on `carried` (see [`crate::native::Session::begin_test`]):
    /// starts it and drives its promise to the end.
    pub(crate) fn run_test(
        &self,
        seed: u64,
        index: usize,
        step_limit: u64,
        work_limit: u64,
        carried: Option<(clowder_vm::Vm, bool)>,
        wrapper: Option<&serde_json::Value>,
    ) -> Ending {
        self.session.borrow_mut().begin_test(seed, index, step_limit, work_limit, carried);
        self.polls.set(0);
        let ending = self.ctx.with(|ctx| drive(&ctx, index, wrapper));
        // What the test left queued (an un-awaited run, handlers of a promise it dropped)
        // runs out now, interrupted, on this test's VM: in a realm that goes on to the next
        // test it would otherwise act on that test's VM.
        self.stop.set(true);
        self.ctx.with(|ctx| while ctx.execute_pending_job() {});
        let limited = self.session.borrow().limited;
        if self.exhausted.get() && limited.is_none() {
            return Ending::Budget;
        }
        match (limited, ending) {
            (Some(l), Ok(r)) => Ending::Limited(l, r),
            (Some(l), Err(_)) => Ending::Limited(l, JsResult::default()),
            (None, Ok(r)) => Ending::Settled(r),
            (None, Err(m)) if m == NO_EXCEPTION => Ending::Failed(format!(
                "{m}: most likely the suite's JavaScript ran out of memory (a test file's realm may use {} MiB; \
                 `clowder test --js-memory-mb` raises it), e.g. a test that keeps large values every step",
                self.memory_limit >> 20
            )),
            (None, Err(m)) => Ending::Failed(m),
        }
    }
}

/// Starts the test and runs jobs and virtual timers until its promise settles.
fn drive(ctx: &Ctx<'_>, index: usize, wrapper: Option<&serde_json::Value>) -> Result<JsResult, String> {
    let runner: Object = ctx.globals().get("__clowderRunner").map_err(|e| e.to_string())?;
    let tests: Value = ctx.globals().get("__clowderTests").map_err(|e| e.to_string())?;
    let start: Function = runner.get("start").map_err(|e| e.to_string())?;
    let fire: Function = runner.get("fireNextTimer").map_err(|e| e.to_string())?;
    let carried: Value = match wrapper {
        Some(w) => ctx.json_parse(w.to_string()).catch(ctx).map_err(|e| describe(&e))?,
        None => Value::new_undefined(ctx.clone()),
    };
    let promise: Promise = start.call((tests, index, carried)).catch(ctx).map_err(|e| describe(&e))?;
    loop {
        while ctx.execute_pending_job() {}
        match promise.result::<Value>() {
            Some(Ok(v)) => {
                // The result holds the test's log: the one place a realm near its heap limit
                // fails without an exception value.
                let json = ctx.json_stringify(v).map_err(engine_error)?;
                let json = json.map(|s| s.to_string()).transpose().map_err(engine_error)?.unwrap_or_default();
                return serde_json::from_str(&json).map_err(|e| format!("test result: {e}"));
            }
            Some(Err(e)) => {
                let e = CaughtError::from_error(ctx, e);
                return Err(describe(&e));
            }
            None => {}
        }
        // Nothing left to run now: the next virtual timer, if any, moves time on.
        let fired: bool = fire.call(()).catch(ctx).map_err(|e| describe(&e))?;
        if !fired {
            return Err("the test waits for a promise that nothing will resolve (no step, no timer left)".into());
        }
    }
}

/// An engine error as text ([`NO_EXCEPTION`] when QuickJS has no exception value to give).
fn engine_error(e: rquickjs::Error) -> String {
    match e {
        rquickjs::Error::Exception => NO_EXCEPTION.to_string(),
        e => e.to_string(),
    }
}

fn eval_script(ctx: &Ctx<'_>, name: &str, src: &str) -> Result<(), String> {
    let _: Value = eval_value(ctx, name, src)?;
    Ok(())
}

pub(crate) fn eval_value<'js, V: rquickjs::FromJs<'js>>(ctx: &Ctx<'js>, name: &str, src: &str) -> Result<V, String> {
    let mut opts = rquickjs::context::EvalOptions::default();
    opts.global = true;
    opts.strict = false;
    opts.filename = Some(name.to_string());
    ctx.eval_with_options::<V, _>(src, opts).catch(ctx).map_err(|e| describe(&e))
}

/// A suite that uses `import` or `export` at the start of a line is an ES module.
pub(crate) fn is_es_module(source: &str) -> bool {
    source.lines().any(|l| {
        let l = l.trim_start();
        ["export ", "export{", "import ", "import{"].iter().any(|p| l.starts_with(p))
    })
}

/// `Name: message (file:line:column)` of a caught exception.
pub(crate) fn describe(e: &CaughtError<'_>) -> String {
    match e {
        CaughtError::Exception(ex) => {
            let msg = ex.message().unwrap_or_default();
            let name: String = ex.get::<_, Option<String>>("name").ok().flatten().unwrap_or_else(|| "Error".into());
            let at = ex.stack().and_then(|s| first_frame(&s));
            match at {
                Some(at) => format!("{name}: {msg} ({at})"),
                None => format!("{name}: {msg}"),
            }
        }
        CaughtError::Value(v) => format!("thrown value: {v:?}"),
        CaughtError::Error(rquickjs::Error::Exception) => NO_EXCEPTION.to_string(),
        CaughtError::Error(e) => e.to_string(),
    }
}

/// `file:line:column` of the first frame of a QuickJS stack (`    at f (file:3:5)`).
fn first_frame(stack: &str) -> Option<String> {
    let line = stack.lines().map(str::trim).find(|l| l.starts_with("at "))?;
    let inner = match (line.rfind('('), line.rfind(')')) {
        (Some(a), Some(b)) if a < b => &line[a + 1..b],
        _ => line.trim_start_matches("at ").trim(),
    };
    (!inner.is_empty()).then(|| inner.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_are_told_from_commonjs() {
        assert!(is_es_module("const a = 1;\nexport default [];"));
        assert!(!is_es_module("module.exports = [];\n// export later"));
    }

    #[test]
    fn first_frames_name_file_line_and_column() {
        assert_eq!(first_frame("Error: x\n    at f (suite.js:3:5)\n    at <eval>"), Some("suite.js:3:5".into()));
        assert_eq!(first_frame("    at suite.js:9:1"), Some("suite.js:9:1".into()));
        assert_eq!(first_frame("no frames"), None);
    }
}
