//! The `__itch` object: what Itch's instrumented scratch-vm tells a test plan, from clowder's
//! public VM API. Itch proxies scratch-vm (thread retirement, `startHats`, every block
//! primitive, the renderer's pen and text-bubble calls); clowder gets the same facts after
//! each step: moves, SAY events, pen calls (through a [`Geometry`] that records them),
//! started hats, and block executions derived from the coverage bits, condition counts and
//! waiting blocks (`super::blocks`).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use clowder_vm::geometry::{Geometry, Rect, Scene};
use clowder_vm::{StepOutcome, TargetId, Value, Vm};
use rquickjs::prelude::Func;
use rquickjs::{Ctx, Object};
use serde_json::{Value as J, json};

use crate::native::Session;

/// Pen calls of the renderer since the last step: `[kind, r, g, b, a, size, x0, y0, x1, y1]`
/// with kind 0 line, 1 point, 2 clear.
#[derive(Debug, Default)]
pub(crate) struct PenLog {
    calls: Vec<[f64; 10]>,
}

/// A geometry that records pen calls and forwards everything to the real one.
pub(crate) struct RecordingGeometry {
    inner: Box<dyn Geometry>,
    log: Rc<RefCell<PenLog>>,
}

impl RecordingGeometry {
    pub(crate) fn new(inner: Box<dyn Geometry>, log: Rc<RefCell<PenLog>>) -> Self {
        RecordingGeometry { inner, log }
    }
}

impl Geometry for RecordingGeometry {
    fn mode(&self) -> &'static str {
        self.inner.mode()
    }
    // A clone records into the same log (nothing here clones a VM).
    fn clone_box(&self) -> Box<dyn Geometry> {
        Box::new(RecordingGeometry { inner: self.inner.clone_box(), log: Rc::clone(&self.log) })
    }
    fn touching_sprite(&mut self, s: &Scene, me: TargetId, sprite: usize) -> bool {
        self.inner.touching_sprite(s, me, sprite)
    }
    fn touching_edge(&mut self, s: &Scene, me: TargetId) -> bool {
        self.inner.touching_edge(s, me)
    }
    fn touching_point(&mut self, s: &Scene, me: TargetId, x: f64, y: f64) -> bool {
        self.inner.touching_point(s, me, x, y)
    }
    fn touching_color(&mut self, s: &Scene, me: TargetId, rgb: [u8; 3]) -> bool {
        self.inner.touching_color(s, me, rgb)
    }
    fn color_touching_color(&mut self, s: &Scene, me: TargetId, target: [u8; 3], mask: [u8; 3]) -> bool {
        self.inner.color_touching_color(s, me, target, mask)
    }
    fn bounds(&mut self, s: &Scene, me: TargetId) -> Option<Rect> {
        self.inner.bounds(s, me)
    }
    fn fences(&self) -> bool {
        self.inner.fences()
    }
    fn fenced_position(&mut self, s: &Scene, me: TargetId, x: f64, y: f64) -> (f64, f64) {
        self.inner.fenced_position(s, me, x, y)
    }
    fn costume_size(&self, sprite: usize, costume: i64) -> Option<(f64, f64)> {
        self.inner.costume_size(sprite, costume)
    }
    fn pick(&mut self, s: &Scene, x: f64, y: f64) -> Option<TargetId> {
        self.inner.pick(s, x, y)
    }
    fn sprite_distance(&mut self, s: &Scene, me: TargetId, sprite: usize) -> Option<f64> {
        self.inner.sprite_distance(s, me, sprite)
    }
    fn edge_distance(&mut self, s: &Scene, me: TargetId) -> Option<f64> {
        self.inner.edge_distance(s, me)
    }
    fn point_distance(&mut self, s: &Scene, me: TargetId, x: f64, y: f64) -> Option<f64> {
        self.inner.point_distance(s, me, x, y)
    }
    fn color_distance(&mut self, s: &Scene, me: TargetId, rgb: [u8; 3], below: f64) -> Option<f64> {
        self.inner.color_distance(s, me, rgb, below)
    }
    fn find_color(&mut self, s: &Scene, me: TargetId, rgb: [u8; 3], known: Option<(i64, i64)>) -> Option<(i64, i64)> {
        self.inner.find_color(s, me, rgb, known)
    }
    fn find_color_radial(
        &mut self,
        s: &Scene,
        rgb: [u8; 3],
        start: (f64, f64),
        resolution: f64,
        max_radius: f64,
    ) -> Option<(f64, f64)> {
        self.inner.find_color_radial(s, rgb, start, resolution, max_radius)
    }
    fn find_own_color(
        &mut self,
        s: &Scene,
        me: TargetId,
        rgb: [u8; 3],
        known: Option<(i64, i64)>,
    ) -> Option<(i64, i64)> {
        self.inner.find_own_color(s, me, rgb, known)
    }
    fn work(&self) -> u64 {
        self.inner.work()
    }
    fn pen_clear(&mut self) {
        self.log.borrow_mut().calls.push([2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        self.inner.pen_clear();
    }
    fn pen_point(&mut self, rgba: [f64; 4], size: f64, x: f64, y: f64) {
        self.log.borrow_mut().calls.push([1.0, rgba[0], rgba[1], rgba[2], rgba[3], size, x, y, x, y]);
        self.inner.pen_point(rgba, size, x, y);
    }
    fn pen_line(&mut self, rgba: [f64; 4], size: f64, x0: f64, y0: f64, x1: f64, y1: f64) {
        self.log.borrow_mut().calls.push([0.0, rgba[0], rgba[1], rgba[2], rgba[3], size, x0, y0, x1, y1]);
        self.inner.pen_line(rgba, size, x0, y0, x1, y1);
    }
    fn pen_stamp(&mut self, s: &Scene, me: TargetId) {
        self.inner.pen_stamp(s, me);
    }
    fn keep_mips(&mut self, on: bool) {
        self.inner.keep_mips(on);
    }
    fn reset_mips(&mut self) {
        self.inner.reset_mips();
    }
    fn kept_mips(&self) -> Option<clowder_vm::geometry::render::SilhouetteFloors> {
        self.inner.kept_mips()
    }
    fn restore_mips(&mut self, mips: clowder_vm::geometry::render::SilhouetteFloors) {
        self.inner.restore_mips(mips);
    }
    fn frame_drawn(&mut self, s: &Scene) {
        self.inner.frame_drawn(s);
    }
    fn set_observing(&mut self, on: bool) {
        self.inner.set_observing(on);
    }
}

/// What the Itch glue shares with the Rust side.
#[derive(Default)]
pub(crate) struct ItchState {
    pub pen: Rc<RefCell<PenLog>>,
    pub blocks: super::blocks::BlockTracker,
    /// The partial-format updates emitted so far, one JSON text each.
    pub updates: Vec<String>,
    /// Called with each update as it is emitted (streaming).
    pub sink: Option<super::Sink>,
    /// `project.json`-like texts of the template and the submission.
    pub template_json: String,
    pub submission_json: String,
    /// Set when a step could not run: 2 step limit, 3 work cap.
    pub limited: u8,
    /// Bytes of feedback emitted, and updates not kept (malformed, or over the limit).
    pub bytes: usize,
    pub dropped: u64,
}

/// Most feedback a plan may emit for one submission (bytes of partial updates).
pub(crate) const MAX_FEEDBACK_BYTES: usize = 64 << 20;

type Shared = Rc<RefCell<Session>>;
type Itch = Rc<RefCell<ItchState>>;

fn handle(id: TargetId) -> f64 {
    id.to_handle() as f64
}

fn js_value(v: Value) -> J {
    match v {
        Value::Num(n) if n.is_finite() => json!(n),
        Value::Num(n) => json!(clowder_vm::value::number_to_js_string(n)),
        Value::Bool(b) => json!(b),
        Value::Str(s) => json!(&*s),
        Value::Undefined | Value::Null => J::Null,
    }
}

/// Every live target's state as a snapshot records it (Itch's `vmTargetToScratchTarget`).
fn state_json(vm: &mut Vm) -> String {
    const EFFECTS: [&str; 7] = ["color", "fisheye", "whirl", "pixelate", "mosaic", "brightness", "ghost"];
    let mut out = Vec::new();
    for id in vm.runtime_targets() {
        let Some(t) = vm.target(id) else { continue };
        let (is_stage, original, x, y, dir, size, visible, costume, def) =
            (t.is_stage, t.is_original, t.x, t.y, t.direction, t.size, t.visible, t.costume, t.def);
        let name = vm.target_name(id).unwrap_or_default().to_string();
        let effects: serde_json::Map<String, J> = vm
            .effects(id)
            .map(|e| EFFECTS.iter().zip(e).map(|(n, v)| (n.to_string(), json!(v))).collect())
            .unwrap_or_default();
        let bubble =
            vm.bubble_state(id).map(|(think, text)| json!({"type": if think {"think"} else {"say"}, "text": text}));
        let mut vars: Vec<J> = vm
            .scalar_variables(id)
            .into_iter()
            .map(|(n, v)| json!({"name": n, "type": "", "value": js_value(v)}))
            .collect();
        for list in vm.list_names(id).into_iter().map(str::to_string).collect::<Vec<_>>() {
            let items: Vec<J> = vm.list_items(id, &list).unwrap_or_default().into_iter().map(js_value).collect();
            vars.push(json!({"name": list, "type": "list", "value": items}));
        }
        let volume = vm.volume(id).unwrap_or(100.0);
        let layer = vm.layer(id).unwrap_or(0);
        let rotation = vm.rotation_style(id).unwrap_or("all around");
        let draggable = vm.project().targets.get(def as usize).is_some_and(|d| d.draggable);
        let bounds = if is_stage {
            J::Null
        } else {
            vm.bounds(id)
                .map_or(J::Null, |r| json!({"left": r.left, "right": r.right, "top": r.top, "bottom": r.bottom}))
        };
        out.push(json!({
            "h": handle(id), "def": def, "name": name, "isStage": is_stage, "original": original, "x": x, "y": y,
            "direction": dir, "size": size, "visible": visible, "costume": costume, "volume": volume,
            "layer": layer, "rotationStyle": rotation, "draggable": draggable, "effects": effects,
            "bubble": bubble, "variables": vars, "bounds": bounds,
        }));
    }
    J::Array(out).to_string()
}

/// One VM step and what happened in it, as JSON for the glue.
fn step(s: &Shared, itch: &Itch) -> String {
    let mut sess = s.borrow_mut();
    let (step_limit, work_limit) = (sess.step_limit, sess.work_limit);
    let Some(vm) = sess.vm.as_mut() else { return json!({"code": 2}).to_string() };
    let mut st = itch.borrow_mut();
    if vm.steps() >= step_limit {
        st.limited = 2;
        return json!({"code": 2}).to_string();
    }
    if vm.work() >= work_limit {
        st.limited = 3;
        return json!({"code": 3}).to_string();
    }
    let outcome = vm.step();
    let name = |vm: &Vm, id: TargetId| vm.target_name(id).unwrap_or_default().to_string();
    let moves: Vec<J> = vm
        .take_moves()
        .into_iter()
        .map(|m| {
            let original = vm.target(m.target).is_some_and(|t| t.is_original);
            json!([name(vm, m.target), original, m.old_x, m.old_y, m.x, m.y, handle(m.target)])
        })
        .collect();
    let says: Vec<J> = vm
        .take_say_events()
        .into_iter()
        .map(|e| json!([name(vm, e.target), e.kind, e.text, handle(e.target)]))
        .collect();
    let pen: Vec<[f64; 10]> = std::mem::take(&mut st.pen.borrow_mut().calls);
    let blocks: Vec<(String, String)> = if st.blocks.on { st.blocks.events(vm) } else { Vec::new() };
    let project = vm.project();
    let broadcasts: Vec<String> = vm
        .instrument()
        .map(|ins| {
            ins.started_last_step()
                .iter()
                .filter_map(|&top| project.blocks.get(top as usize))
                .filter(|b| b.opcode == "event_whenbroadcastreceived")
                .filter_map(|b| b.field("BROADCAST_OPTION").map(|f| f.value.clone()))
                .collect()
        })
        .unwrap_or_default();
    json!({
        "code": u8::from(outcome == StepOutcome::Hang),
        "steps": vm.steps(),
        "threads": vm.last_step_threads(),
        "moves": moves, "says": says, "pen": pen, "blocks": blocks, "broadcasts": broadcasts,
        "question": vm.question_pending(),
    })
    .to_string()
}

/// Whether hat `b` answers the input `kind`/`arg`.
fn hat_matches(b: &clowder_vm::project::Block, kind: &str, arg: &str) -> bool {
    let field = |n: &str| b.field(n).map(|f| f.value.as_str());
    match kind {
        "flag" => b.opcode == "event_whenflagclicked",
        "click" => b.opcode == "event_whenthisspriteclicked" || b.opcode == "event_whenstageclicked",
        "broadcast" => {
            b.opcode == "event_whenbroadcastreceived"
                && field("BROADCAST_OPTION").is_some_and(|v| v.eq_ignore_ascii_case(arg))
        }
        "key" => {
            let key = clowder_vm::runtime::normalize_key(arg);
            b.opcode == "event_whenkeypressed"
                && field("KEY_OPTION").is_some_and(|v| v == "any" || clowder_vm::runtime::normalize_key(v) == key)
        }
        _ => false,
    }
}

/// Sends an input as Itch's scheduler does (`startHats` between steps) and returns the
/// scripts it started, `[target, top block]` flattened, for the sync wait.
fn start_hats(s: &Shared, kind: &str, arg: &str) -> Vec<f64> {
    let mut sess = s.borrow_mut();
    let Some(vm) = sess.vm.as_mut() else { return Vec::new() };
    let clicked = match kind {
        "flag" => {
            vm.green_flag();
            None
        }
        "click" => {
            let id = if arg == "Stage" { Some(vm.stage_id()) } else { vm.find_target(arg, 0) };
            match id {
                Some(id) => vm.click_target(id),
                None => return Vec::new(),
            }
            id
        }
        "broadcast" => {
            vm.broadcast(arg);
            None
        }
        "key" => {
            // A key press that starts the key hats without leaving the key down.
            vm.key_down(arg);
            vm.apply_inputs();
            vm.key_up(arg);
            None
        }
        _ => return Vec::new(),
    };
    vm.apply_inputs();
    let project = Arc::clone(vm.project());
    vm.active_scripts()
        .into_iter()
        .filter(|&(t, top)| {
            clicked.is_none_or(|c| c == t)
                && project.blocks.get(top as usize).is_some_and(|b| hat_matches(b, kind, arg))
        })
        .flat_map(|(t, top)| [handle(t), f64::from(top)])
        .collect()
}

/// Installs `__itch` on the context's global object.
pub(crate) fn install(ctx: &Ctx<'_>, shared: &Shared, itch: &Itch) -> rquickjs::Result<()> {
    let n = Object::new(ctx.clone())?;
    let i = Rc::clone(itch);
    n.set(
        "emit",
        Func::from(move |line: String| {
            let mut st = i.borrow_mut();
            // Only whole updates (a plan can reach `__itch` too), and a bounded stream.
            let update = !line.contains('\n')
                && serde_json::from_str::<J>(&line).is_ok_and(|u| u.get("command").is_some_and(J::is_string));
            st.bytes = st.bytes.saturating_add(line.len());
            if !update || st.bytes > MAX_FEEDBACK_BYTES {
                st.dropped += 1;
                return;
            }
            if let Some(sink) = st.sink.as_mut() {
                sink(&line);
            }
            st.updates.push(line);
        }),
    )?;
    let i = Rc::clone(itch);
    n.set(
        "project",
        Func::from(move |which: f64| {
            let st = i.borrow();
            if which == 0.0 { st.template_json.clone() } else { st.submission_json.clone() }
        }),
    )?;
    let s = Rc::clone(shared);
    n.set("state", Func::from(move || s.borrow_mut().vm.as_mut().map_or_else(|| "[]".to_string(), state_json)))?;
    let (s, i) = (Rc::clone(shared), Rc::clone(itch));
    n.set("step", Func::from(move || step(&s, &i)))?;
    let s = Rc::clone(shared);
    n.set("startHats", Func::from(move |kind: String, arg: String| start_hats(&s, &kind, &arg)))?;
    let s = Rc::clone(shared);
    n.set(
        "active",
        Func::from(move || {
            s.borrow()
                .vm
                .as_ref()
                .map(|vm| {
                    vm.active_scripts().into_iter().flat_map(|(t, b)| [handle(t), f64::from(b)]).collect::<Vec<f64>>()
                })
                .unwrap_or_default()
        }),
    )?;
    let i = Rc::clone(itch);
    n.set(
        "profile",
        Func::from(move |on: bool, only: Option<Vec<String>>| {
            let mut st = i.borrow_mut();
            st.blocks.on = on;
            st.blocks.only = only;
        }),
    )?;
    let s = Rc::clone(shared);
    n.set("now", Func::from(move || s.borrow().vm.as_ref().map_or(0.0, |vm| vm.steps() as f64)))?;
    ctx.globals().set("__itch", n)?;
    Ok(())
}
