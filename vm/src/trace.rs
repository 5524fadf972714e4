//! The fidelity oracle's JSONL trace: one record per step (the state after the
//! step), then an end record. `clowder vm trace` prints it; `compare.py` of the
//! oracle compares it with scratch-vm's.
//!
//! Format (fidelity README, "Trace format"): targets in execution order
//! (front-most sprite first, stage last), numbers JSON cannot hold tagged as
//! `{"$num":"NaN"}` etc., variables and lists keyed by name (a repeated name is
//! keyed `name#id`) and sorted by UTF-16 code units, `threads` = live
//! non-monitor threads, `timer` and `answer` as the blocks read them.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::Value as Json;

use crate::engine::V;
use crate::program::{EFFECT_NAMES, ROT_NAMES};
use crate::project::Project;
use crate::value::{compare_utf16, number_to_js_string, write_number};
use crate::vm::{StepOutcome, Vm, VmOptions};

/// Trace keys of one kind of variable (key, slot), and the keys taken so far.
type Keyed = (Vec<(String, usize)>, BTreeSet<String>);

/// One scheduled input of an input file.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceInput {
    /// Step at whose start it is applied.
    pub step: u64,
    /// What it does.
    pub kind: InputKind,
}

/// The input kinds of the oracle's input files (fidelity README §7).
#[derive(Debug, Clone, PartialEq)]
pub enum InputKind {
    /// `vm.greenFlag()`.
    GreenFlag,
    /// `vm.stopAll()`.
    Stop,
    /// A key goes down.
    KeyDown(String),
    /// A key goes up.
    KeyUp(String),
    /// The mouse moves (stage coordinates).
    MouseMove(f64, f64),
    /// The mouse button goes down.
    MouseDown,
    /// The mouse button goes up.
    MouseUp,
    /// A click on a sprite (by name and clone index).
    ClickSprite(String, u32),
    /// A click on the stage.
    ClickStage,
    /// An answer to the oldest pending question.
    Answer(String),
    /// The virtual loudness from now on.
    Loudness(f64),
    /// A broadcast by name.
    Broadcast(String),
    /// A test driver's drag: the sprite (by name and clone index) set to a position, fenced
    /// (Whisker's `dragSprite`; not an input of the reference scratch-vm's oracle).
    Drag(String, u32, f64, f64),
}

/// A clone index field: 0 when absent, `u32::MAX` (no such clone) when not a count.
fn clone_index(v: Option<&Json>) -> u32 {
    let c = match v {
        None | Some(Json::Null) => 0.0,
        c => js_number_of(c),
    };
    if c.is_finite() && c >= 0.0 && c.fract() == 0.0 && c <= f64::from(u32::MAX) { c as u32 } else { u32::MAX }
}

/// JS `String(v)` of a JSON value (as the oracle coerces input fields).
fn js_string_of(v: Option<&Json>) -> String {
    match v {
        None => "undefined".into(),
        Some(Json::Null) => "null".into(),
        Some(Json::String(s)) => s.clone(),
        Some(Json::Bool(b)) => b.to_string(),
        Some(Json::Number(n)) => number_to_js_string(n.as_f64().unwrap_or(f64::NAN)),
        Some(Json::Array(a)) => a
            .iter()
            .map(|x| if x.is_null() { String::new() } else { js_string_of(Some(x)) })
            .collect::<Vec<_>>()
            .join(","),
        Some(Json::Object(_)) => "[object Object]".into(),
    }
}

/// JS `Number(v)` of a JSON value.
fn js_number_of(v: Option<&Json>) -> f64 {
    match v {
        None => f64::NAN,
        Some(Json::Null) => 0.0,
        Some(Json::Bool(b)) => f64::from(u8::from(*b)),
        Some(Json::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(Json::String(s)) => crate::value::js_string_to_number(s),
        Some(Json::Array(_)) => crate::value::js_string_to_number(&js_string_of(v)),
        Some(Json::Object(_)) => f64::NAN,
    }
}

/// Parses an input file (a JSON array of `{"step": k, "kind": ..., ...}`),
/// stably sorted by step, validated like the oracle.
pub fn parse_inputs(text: &str) -> Result<Vec<TraceInput>, String> {
    let json: Json = serde_json::from_str(text).map_err(|e| format!("inputs: not JSON: {e}"))?;
    let Json::Array(items) = json else { return Err("inputs file must contain a JSON array".into()) };
    let mut out = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        let Json::Object(o) = it else { return Err(format!("input #{i} is not an object")) };
        let step = js_number_of(o.get("step"));
        if !(step.is_finite() && step.fract() == 0.0 && step >= 0.0) {
            return Err(format!("input #{i}: bad step {}", js_string_of(o.get("step"))));
        }
        let kind = match o.get("kind").and_then(Json::as_str) {
            Some("greenflag") => InputKind::GreenFlag,
            Some("stop") => InputKind::Stop,
            Some("key_down") => InputKind::KeyDown(js_string_of(o.get("key"))),
            Some("key_up") => InputKind::KeyUp(js_string_of(o.get("key"))),
            Some("mouse_move") => InputKind::MouseMove(js_number_of(o.get("x")), js_number_of(o.get("y"))),
            Some("mouse_down") => InputKind::MouseDown,
            Some("mouse_up") => InputKind::MouseUp,
            Some("click_sprite") => InputKind::ClickSprite(js_string_of(o.get("sprite")), clone_index(o.get("clone"))),
            Some("drag") => InputKind::Drag(
                js_string_of(o.get("sprite")),
                clone_index(o.get("clone")),
                js_number_of(o.get("x")),
                js_number_of(o.get("y")),
            ),
            Some("click_stage") => InputKind::ClickStage,
            Some("answer") => InputKind::Answer(match o.get("text") {
                None => String::new(),
                t => js_string_of(t),
            }),
            Some("loudness") => InputKind::Loudness(js_number_of(o.get("value"))),
            Some("broadcast") => InputKind::Broadcast(js_string_of(o.get("name"))),
            _ => return Err(format!("input #{i}: unknown kind {}", js_string_of(o.get("kind")))),
        };
        out.push(TraceInput { step: step as u64, kind });
    }
    out.sort_by_key(|x| x.step);
    Ok(out)
}

/// Options of a trace run.
#[derive(Debug, Clone)]
pub struct TraceOptions {
    /// Steps to run at most.
    pub steps: u64,
    /// SplitMix64 seed.
    pub seed: u64,
    /// Inputs; `None` = the green flag at step 0.
    pub inputs: Option<Vec<TraceInput>>,
    /// Hang guard: block executions allowed in one step.
    pub max_ops: u64,
    /// Never end early.
    pub run_all: bool,
    /// Run with the instrumentation on (it must not change the trace).
    pub instrument: bool,
    /// Semantics profile (the oracle's is `headless`; `whisker` traces compare with Whisker).
    pub profile: crate::Profile,
    /// Profile `whisker` only: real milliseconds a Whisker step takes, for the blocks it times
    /// on the wall clock ([`VmOptions::whisker_wall_ms`]); `None`: the virtual clock.
    pub whisker_wall_ms: Option<f64>,
    /// Profile `whisker` only: `speak` as on a machine without Scratch's synthesis service
    /// ([`VmOptions::whisker_offline_speech`]).
    pub whisker_offline_speech: bool,
    /// Profile `whisker` only: the browser's maths library ([`VmOptions::whisker_maths`]).
    pub whisker_maths: Option<crate::util::mathlib::MathLib>,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            steps: 300,
            seed: 0,
            inputs: None,
            max_ops: 5_000_000,
            run_all: false,
            instrument: false,
            profile: crate::Profile::Headless,
            whisker_wall_ms: None,
            whisker_offline_speech: false,
            whisker_maths: None,
        }
    }
}

/// The end record fields.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceEnd {
    /// `steps_done`, `all_threads_finished`, `hang` or `load_error`.
    pub reason: &'static str,
    /// Number of step records.
    pub steps: u64,
    /// Step that hung.
    pub hang_step: Option<u64>,
    /// Steps with a scratch-vm exception (P10).
    pub errors: u64,
    /// Inputs that found no target.
    pub warnings: Vec<String>,
}

fn end_record(seed: u64, end: &TraceEnd, error: Option<&str>, ops: Option<u64>) -> String {
    let mut s = format!(
        r#"{{"end":true,"seed":"{seed}","spec":"fidelity-1","vm":"scratch-vm@5.0.300","reason":"{}","steps":{}"#,
        end.reason, end.steps
    );
    if let Some(h) = end.hang_step {
        let _ = write!(s, r#","hang_step":{h}"#);
    }
    if let Some(o) = ops {
        let _ = write!(s, r#","ops":{o}"#);
    }
    if let Some(e) = error {
        s.push_str(",\"error\":");
        json_str(&mut s, e);
    }
    if end.errors > 0 {
        let _ = write!(s, r#","errors":{}"#, end.errors);
    }
    if !end.warnings.is_empty() {
        s.push_str(",\"warnings\":[");
        for (i, w) in end.warnings.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            json_str(&mut s, w);
        }
        s.push(']');
    }
    s.push_str("}\n");
    s
}

/// The end record of a project that could not be loaded.
pub fn load_error_record(seed: u64, error: &str) -> String {
    let end = TraceEnd { reason: "load_error", steps: 0, hang_step: None, errors: 0, warnings: Vec::new() };
    end_record(seed, &end, Some(error), None)
}

impl Vm {
    /// Sends one input of a trace's input script (as the oracle does); false when a click
    /// names no such sprite or clone.
    pub fn apply_input(&mut self, kind: &InputKind) -> bool {
        match kind {
            InputKind::GreenFlag => self.green_flag(),
            InputKind::Stop => self.stop_all(),
            InputKind::KeyDown(key) => self.key_down(key),
            InputKind::KeyUp(key) => self.key_up(key),
            InputKind::MouseMove(x, y) => self.mouse_move(*x, *y),
            InputKind::MouseDown => self.mouse_button(true),
            InputKind::MouseUp => self.mouse_button(false),
            InputKind::ClickSprite(name, clone) => return self.click_sprite(name, *clone),
            InputKind::ClickStage => self.click_stage(),
            InputKind::Answer(t) => self.answer_text(t),
            InputKind::Loudness(v) => self.set_loudness(*v),
            InputKind::Broadcast(n) => self.broadcast(n),
            InputKind::Drag(name, clone, x, y) => {
                let Some(id) = self.find_target(name, *clone) else { return false };
                self.drag(id, *x, *y);
            }
        }
        true
    }
}

/// Runs a project under the oracle's rules and writes the trace to `out`.
pub fn write_trace(
    project: Arc<Project>,
    opts: &TraceOptions,
    out: &mut dyn std::io::Write,
) -> std::io::Result<TraceEnd> {
    let prog = crate::vm::program_of(&project);
    if let Some(ext) = prog.unloadable_extensions.first() {
        // scratch-vm cannot load extensions it does not know: the project fails to load.
        out.write_all(
            load_error_record(opts.seed, &format!("extension {ext:?} is not a built-in extension")).as_bytes(),
        )?;
        return Ok(TraceEnd { reason: "load_error", steps: 0, hang_step: None, errors: 0, warnings: Vec::new() });
    }
    let vm_opts = VmOptions {
        seed: opts.seed,
        max_ops_per_step: opts.max_ops,
        instrument: opts.instrument,
        profile: opts.profile,
        whisker_wall_ms: opts.whisker_wall_ms,
        whisker_offline_speech: opts.whisker_offline_speech,
        whisker_maths: opts.whisker_maths,
        ..VmOptions::default()
    };
    let mut vm = Vm::new(project, vm_opts);
    let inputs = opts.inputs.clone().unwrap_or_else(|| vec![TraceInput { step: 0, kind: InputKind::GreenFlag }]);
    let mut cursor = 0usize;
    let mut end = TraceEnd { reason: "steps_done", steps: 0, hang_step: None, errors: 0, warnings: Vec::new() };
    let mut buf = String::with_capacity(4096);
    for k in 0..opts.steps {
        while cursor < inputs.len() && inputs[cursor].step == k {
            let inp = &inputs[cursor];
            cursor += 1;
            if !vm.apply_input(&inp.kind)
                && let InputKind::ClickSprite(name, clone) = &inp.kind
            {
                end.warnings.push(format!(
                    "step {k}: click_sprite: no sprite {} clone {clone}",
                    serde_json::to_string(name).unwrap_or_default()
                ));
            }
        }
        while cursor < inputs.len() && inputs[cursor].step < k {
            cursor += 1;
        }
        if vm.step() == StepOutcome::Hang {
            end.reason = "hang";
            end.hang_step = Some(k);
            end.steps = k;
            let ops = vm.st.budget.ops;
            out.write_all(buf.as_bytes())?;
            out.write_all(end_record(opts.seed, &end, None, Some(ops)).as_bytes())?;
            return Ok(end);
        }
        if vm.last_step_error().is_some() {
            end.errors += 1;
        }
        vm.write_step_record(k, &mut buf);
        end.steps = k + 1;
        if buf.len() > 1 << 16 {
            out.write_all(buf.as_bytes())?;
            buf.clear();
        }
        if !opts.run_all && cursor >= inputs.len() && vm.is_quiescent() {
            end.reason = "all_threads_finished";
            break;
        }
    }
    out.write_all(buf.as_bytes())?;
    out.write_all(end_record(opts.seed, &end, None, None).as_bytes())?;
    Ok(end)
}

/// Appends a JSON string literal exactly as `JSON.stringify` writes it.
pub fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A number as the oracle encodes it (tagged when JSON cannot hold it).
fn json_num(out: &mut String, n: f64) {
    if n.is_nan() {
        out.push_str(r#"{"$num":"NaN"}"#);
    } else if n == f64::INFINITY {
        out.push_str(r#"{"$num":"Infinity"}"#);
    } else if n == f64::NEG_INFINITY {
        out.push_str(r#"{"$num":"-Infinity"}"#);
    } else if n == 0.0 && n.is_sign_negative() {
        out.push_str(r#"{"$num":"-0"}"#);
    } else {
        write_number(out, n);
    }
}

impl Vm {
    fn json_value(&self, out: &mut String, v: &V) {
        match v {
            V::Num(n) => json_num(out, n.get()),
            V::True => out.push_str("true"),
            V::False => out.push_str("false"),
            V::Lit(l) => json_str(out, self.prog.lit_str(l.id())),
            V::Str(s) => json_str(out, s),
            V::Undef => out.push_str(r#"{"$type":"undefined"}"#),
            V::Null => out.push_str("null"),
        }
    }

    /// Appends the trace record of step `step` (the current state) and a newline.
    pub fn write_step_record(&self, step: u64, out: &mut String) {
        let st = &self.st;
        let prog = &*self.prog;
        let _ = write!(out, r#"{{"step":{step},"targets":["#);
        let n = st.targets.exec.len();
        for (i, &id) in st.targets.exec.iter().enumerate().rev() {
            let Some(t) = st.target(id) else { continue };
            if i + 1 != n {
                out.push(',');
            }
            let def = prog.def(t.def);
            out.push_str(r#"{"name":"#);
            json_str(out, prog.lit_str(def.name));
            let _ = write!(out, r#","isStage":{},"cloneIndex":{},"x":"#, t.is_stage, t.clone_index);
            json_num(out, t.x);
            out.push_str(r#","y":"#);
            json_num(out, t.y);
            out.push_str(r#","direction":"#);
            json_num(out, t.direction);
            out.push_str(r#","size":"#);
            json_num(out, t.size);
            let _ = write!(
                out,
                r#","visible":{},"rotationStyle":"{}","draggable":{},"costume":{{"index":{},"name":"#,
                t.visible,
                ROT_NAMES.get(t.rotation_style as usize).copied().unwrap_or("all around"),
                t.draggable,
                t.costume
            );
            match usize::try_from(t.costume).ok().and_then(|c| def.costumes.get(c)) {
                Some(c) => json_str(out, prog.lit_str(c.name)),
                None => out.push_str("null"),
            }
            let _ = write!(out, r#"}},"layer":{i},"volume":"#);
            json_num(out, t.volume);
            out.push_str(r#","effects":{"#);
            for (e, name) in EFFECT_NAMES.iter().enumerate() {
                if e > 0 {
                    out.push(',');
                }
                let _ = write!(out, r#""{name}":"#);
                json_num(out, t.effects[e]);
            }
            out.push_str(r#"},"bubble":"#);
            match &t.bubble {
                Some(b) if !b.text.is_empty() => {
                    let _ = write!(out, r#"{{"type":"{}","text":"#, if b.think { "think" } else { "say" });
                    json_str(out, &b.text);
                    out.push('}');
                }
                _ => out.push_str("null"),
            }
            // Variables and lists: declared (in declaration order), then created at run time.
            // Per kind (variables, lists): entries, and the keys taken so far as a set, so
            // that many variables cost linear time.
            let mut kinds: [Keyed; 2] = Default::default();
            let mut add = |is_list: bool, name: &str, id: &str, slot: usize| {
                let (entries, taken) = &mut kinds[usize::from(is_list)];
                let key = if taken.contains(name) { format!("{name}#{id}") } else { name.to_string() };
                taken.insert(key.clone());
                entries.push((key, slot));
            };
            for (slot, v) in def.vars.iter().enumerate() {
                add(v.is_list, &v.name, &v.id, slot);
            }
            for &(d, is_list, slot) in &t.dyn_vars {
                let dv = &prog.dyn_vars[d as usize];
                add(is_list, &dv.name, &dv.id, slot as usize);
            }
            let [(mut scalars, _), (mut lists, _)] = kinds;
            scalars.sort_by(|a, b| compare_utf16(&a.0, &b.0));
            lists.sort_by(|a, b| compare_utf16(&a.0, &b.0));
            out.push_str(r#","variables":{"#);
            for (j, (k, slot)) in scalars.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                json_str(out, k);
                out.push(':');
                self.json_value(out, t.vars.get(*slot).unwrap_or(&V::Undef));
            }
            out.push_str(r#"},"lists":{"#);
            for (j, (k, slot)) in lists.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                json_str(out, k);
                out.push_str(":[");
                if let Some(items) = t.lists.get(*slot) {
                    for (m, x) in items.iter().enumerate() {
                        if m > 0 {
                            out.push(',');
                        }
                        self.json_value(out, x);
                    }
                }
                out.push(']');
            }
            out.push_str("}}");
        }
        let _ = write!(out, r#"],"threads":{},"timer":"#, self.live_threads());
        json_num(out, self.st.timer_value());
        out.push_str(r#","answer":"#);
        json_str(out, &self.st.ask.answer);
        if let Some(e) = &self.st.budget.error {
            out.push_str(r#","error":"#);
            json_str(out, &e.0);
        }
        out.push_str("}\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_validated_and_sorted() {
        let i = parse_inputs(r#"[{"step":5,"kind":"key_down","key":"a"},{"step":0,"kind":"greenflag"},{"step":5,"kind":"answer","text":42}]"#)
            .unwrap_or_default();
        assert_eq!(i.len(), 3);
        assert_eq!(i[0].kind, InputKind::GreenFlag);
        assert_eq!(i[1].kind, InputKind::KeyDown("a".into()));
        assert_eq!(i[2].kind, InputKind::Answer("42".into()));
        assert!(parse_inputs(r#"[{"step":-1,"kind":"stop"}]"#).is_err());
        assert!(parse_inputs(r#"[{"step":1,"kind":"jump"}]"#).is_err());
        assert!(parse_inputs(r#"{}"#).is_err());
    }

    #[test]
    fn json_strings_like_js() {
        let mut s = String::new();
        json_str(&mut s, "a\"b\\\n\u{1}é\u{2028}");
        assert_eq!(s, "\"a\\\"b\\\\\\n\\u0001é\u{2028}\"");
        let mut n = String::new();
        json_num(&mut n, -0.0);
        assert_eq!(n, r#"{"$num":"-0"}"#);
    }
}
