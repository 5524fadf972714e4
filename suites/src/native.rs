//! The `__native` object: the VM as the JavaScript driver (`js/driver.js`, `js/wrapper.js`)
//! sees it. Targets are numbers ([`TargetId::to_handle`]); every function takes what JS
//! passes and answers `undefined` for a target that no longer exists, so a suite can never
//! reach the VM in a state it does not expect.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use clowder_vm::project::Input;
use clowder_vm::rng::SplitMix64;
use clowder_vm::runtime::STEP_MS;
use clowder_vm::{ListenerEvent, ListenerKind, MoveEvent, Pose, Project, StepOutcome, TargetId, Value, Vm, VmOptions};
use rquickjs::prelude::Func;
use rquickjs::{Ctx, IntoJs, Object};

use crate::seeding;

/// Why a test stopped before it finished by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    /// It reached its step limit (Whisker: the test timeout).
    Steps,
    /// The VM did its work cap (a runaway project).
    Work,
}

/// The state the bindings share: the current test's VM and the run's random streams.
pub(crate) struct Session {
    /// The project tests run on (`None` while a suite is only listed).
    pub project: Option<Arc<Project>>,
    pub vm_opts: VmOptions,
    pub vm: Option<Vm>,
    pub math_rng: SplitMix64,
    pub driver_rng: seeding::WhiskerRandomness,
    /// Steps a test may run (its own `timeout` or the run's limit).
    pub step_limit: u64,
    /// Work units a test may use ([`Vm::work`]).
    pub work_limit: u64,
    /// Set when the test reached a limit; the test's verdict is then that limit.
    pub limited: Option<Limit>,
    /// [`Vm::work`] when the test began (a VM carried over from earlier tests has done some).
    work_base: u64,
    /// Tells the interrupt handler to end the test's JavaScript (set with `limited`).
    stop: Rc<Cell<bool>>,
    /// Steps that hit the VM's operation budget (each is stopped, as in scratch-vm's hang).
    pub hangs: u64,
    /// The last step's moves, its end poses, and what a replay put in place.
    moves: Vec<MoveEvent>,
    end: Vec<Pose>,
    placed: Vec<Pose>,
    /// The last step's other listener events (bubbles, variables, visual changes), in order.
    heard: Vec<ListenerEvent>,
}

impl Session {
    pub(crate) fn new(project: Option<Arc<Project>>, vm_opts: VmOptions, stop: Rc<Cell<bool>>) -> Self {
        Session {
            project,
            vm_opts,
            vm: None,
            math_rng: seeding::stream(0),
            driver_rng: seeding::WhiskerRandomness::new(0.0),
            step_limit: 0,
            work_limit: 0,
            limited: None,
            work_base: 0,
            stop,
            hangs: 0,
            moves: Vec::new(),
            end: Vec::new(),
            placed: Vec::new(),
            heard: Vec::new(),
        }
    }

    /// Fresh streams for test `index` of a run with `seed`, on a fresh VM or, when the tests
    /// of a file share one as in Whisker, on the earlier tests' VM (`carried`: it, and
    /// whether the previous test's driver ended it), reset as Whisker resets it.
    pub(crate) fn begin_test(
        &mut self,
        seed: u64,
        index: usize,
        step_limit: u64,
        work_limit: u64,
        carried: Option<(Vm, bool)>,
    ) {
        let opts = VmOptions { seed: seeding::vm_seed(seed), ..self.vm_opts.clone() };
        self.vm = self.project.as_ref().map(|p| {
            let fresh = Vm::new(Arc::clone(p), opts);
            let mut vm = match carried {
                Some((mut vm, ended)) => {
                    vm.whisker_next_test(&fresh, ended);
                    vm
                }
                None => fresh,
            };
            // A Whisker test's own touching queries ask the live renderer, so the MIPs they
            // make change what the program sees afterwards (as in the real Whisker).
            vm.set_driver_queries_leave_mips(true);
            vm
        });
        self.work_base = self.vm.as_ref().map_or(0, Vm::work);
        self.math_rng = seeding::stream(seeding::math_random_seed(seed, index));
        self.driver_rng = seeding::WhiskerRandomness::new(seed as f64);
        self.step_limit = step_limit;
        self.work_limit = work_limit;
        self.limited = None;
        self.stop.set(false);
        self.hangs = 0;
        self.moves.clear();
        self.end.clear();
        self.placed.clear();
        self.heard.clear();
        // What the reset between tests did is not heard by the new test's listeners.
        self.drop_events();
    }

    /// Forgets the events the VM recorded since they were last taken: sent while no listener
    /// was registered, they reach nobody.
    fn drop_events(&mut self) {
        if let Some(vm) = self.vm.as_mut() {
            vm.take_moves();
            vm.take_listener_events();
        }
    }

    /// Puts the world as it was right after move `i` of the last step: every sprite's pose
    /// when scenes were recorded, else the moved sprite's position and visibility.
    fn show_move(&mut self, i: usize) {
        let Some(vm) = self.vm.as_mut() else { return };
        let Some(m) = self.moves.get(i) else { return };
        let poses: Vec<Pose> = if m.scene.is_empty() {
            let Some(mut p) = self.end.iter().find(|p| p.target == m.target).copied() else { return };
            p.x = m.x;
            p.y = m.y;
            p.visible = m.visible;
            vec![p]
        } else {
            m.scene.clone()
        };
        for p in &poses {
            vm.place(p);
        }
        self.placed = poses;
    }

    /// Puts listener event `i`'s target as it was at that event.
    fn show_heard(&mut self, i: usize) {
        let Some(vm) = self.vm.as_mut() else { return };
        let Some(p) = self.heard.get(i).and_then(|e| e.pose) else { return };
        if self.end.is_empty() {
            self.end = vm.poses();
        }
        vm.place(&p);
        self.placed = vec![p];
    }

    /// Back to the end of the step, except for what a callback changed itself.
    fn show_end(&mut self) {
        let Some(vm) = self.vm.as_mut() else { return };
        let now: Vec<Pose> = vm.poses();
        for p in std::mem::take(&mut self.placed) {
            let untouched = now.contains(&p);
            if let Some(end) = self.end.iter().find(|e| e.target == p.target)
                && untouched
            {
                vm.place(end);
            }
        }
    }

    /// Takes the events the VM recorded (a step's, or a driver call's) for the listeners.
    fn collect(&mut self) {
        let Some(vm) = self.vm.as_mut() else { return };
        self.moves = vm.take_moves();
        self.end = if self.moves.is_empty() { Vec::new() } else { vm.poses() };
        self.placed.clear();
        self.heard = vm.take_listener_events();
    }

    /// One VM step: 0 ran, 1 hit the operation budget, 2 the test is at a limit (no step).
    fn step(&mut self) -> u8 {
        if self.limited.is_some() {
            return 2;
        }
        let Some(vm) = self.vm.as_mut() else { return 2 };
        if vm.steps() >= self.step_limit {
            self.limited = Some(Limit::Steps);
            self.stop.set(true);
            return 2;
        }
        if vm.work().saturating_sub(self.work_base) >= self.work_limit {
            self.limited = Some(Limit::Work);
            self.stop.set(true);
            return 2;
        }
        let out = vm.step();
        self.collect();
        if out == StepOutcome::Hang {
            self.hangs += 1;
            1
        } else {
            0
        }
    }
}

/// A JS value built on the Rust side.
#[derive(Debug, Clone)]
enum Js {
    Undef,
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
}

impl From<Value> for Js {
    fn from(v: Value) -> Js {
        match v {
            Value::Num(n) => Js::Num(n),
            Value::Bool(b) => Js::Bool(b),
            Value::Str(s) => Js::Str(s.to_string()),
            Value::Undefined => Js::Undef,
            Value::Null => Js::Null,
        }
    }
}

impl<'js> IntoJs<'js> for Js {
    fn into_js(self, ctx: &Ctx<'js>) -> rquickjs::Result<rquickjs::Value<'js>> {
        match self {
            Js::Undef => Ok(rquickjs::Value::new_undefined(ctx.clone())),
            Js::Null => Ok(rquickjs::Value::new_null(ctx.clone())),
            Js::Bool(b) => b.into_js(ctx),
            Js::Num(n) => n.into_js(ctx),
            Js::Str(s) => s.into_js(ctx),
        }
    }
}

fn handle(id: TargetId) -> f64 {
    id.to_handle() as f64
}

/// The id a JS handle names (non-integral or negative numbers name no live target).
fn id_of(h: f64) -> TargetId {
    if h.is_finite() && h >= 0.0 && h.fract() == 0.0 && h < 9.007_199_254_740_992e15 {
        TargetId::from_handle(h as u64)
    } else {
        TargetId::from_handle(u64::MAX)
    }
}

fn byte(v: f64) -> u8 {
    if v.is_finite() { v.clamp(0.0, 255.0) as u8 } else { 0 }
}

type Shared = Rc<RefCell<Session>>;

/// Reads the current VM (`None` between tests).
fn with_vm<R>(s: &Shared, f: impl FnOnce(&Vm) -> Option<R>) -> Option<R> {
    let s = s.borrow();
    s.vm.as_ref().and_then(f)
}

/// Changes the current VM.
fn with_vm_mut<R>(s: &Shared, f: impl FnOnce(&mut Vm) -> R) -> Option<R> {
    let mut s = s.borrow_mut();
    s.vm.as_mut().map(f)
}

/// Posts an input and applies it at once (Whisker's `postIOData` between steps).
fn post(s: &Shared, f: impl FnOnce(&mut Vm)) {
    with_vm_mut(s, |vm| {
        f(vm);
        vm.apply_inputs();
    });
}

/// Installs `__native` on the context's global object.
pub(crate) fn install(ctx: &Ctx<'_>, shared: &Shared) -> rquickjs::Result<()> {
    let n = Object::new(ctx.clone())?;
    install_run(&n, shared)?;
    install_targets(&n, shared)?;
    install_looks(&n, shared)?;
    install_variables(&n, shared)?;
    install_inputs(&n, shared)?;
    ctx.globals().set("__native", n)?;
    Ok(())
}

fn install_run(n: &Object<'_>, shared: &Shared) -> rquickjs::Result<()> {
    let s = Rc::clone(shared);
    // Whisker's one global seeded `Math.random`: the VM's stream whenever there is a VM.
    n.set(
        "mathRandom",
        Func::from(move || {
            let mut b = s.borrow_mut();
            match b.vm.as_mut() {
                Some(vm) => vm.math_random(),
                None => b.math_rng.next_f64(),
            }
        }),
    )?;
    let s = Rc::clone(shared);
    n.set("driverRandom", Func::from(move || s.borrow_mut().driver_rng.next_f64()))?;
    let s = Rc::clone(shared);
    n.set("elapsedMs", Func::from(move || with_vm(&s, |vm| Some(vm.steps() as f64 * STEP_MS)).unwrap_or(0.0)))?;
    let s = Rc::clone(shared);
    n.set("steps", Func::from(move || with_vm(&s, |vm| Some(vm.steps() as f64)).unwrap_or(0.0)))?;
    let s = Rc::clone(shared);
    n.set("step", Func::from(move || s.borrow_mut().step()))?;
    let s = Rc::clone(shared);
    n.set("stepLimit", Func::from(move || s.borrow().step_limit as f64))?;
    let s = Rc::clone(shared);
    n.set("threads", Func::from(move || with_vm(&s, |vm| Some(vm.last_step_threads() as f64)).unwrap_or(0.0)))?;
    // [target, old x, old y] per move of the last step.
    let s = Rc::clone(shared);
    n.set(
        "moves",
        Func::from(move || {
            s.borrow().moves.iter().flat_map(|m| [handle(m.target), m.old_x, m.old_y, m.seq as f64]).collect::<Vec<_>>()
        }),
    )?;
    let s = Rc::clone(shared);
    n.set("showMove", Func::from(move |i: f64| s.borrow_mut().show_move(i as usize)))?;
    let s = Rc::clone(shared);
    n.set("showEnd", Func::from(move || s.borrow_mut().show_end()))?;
    let s = Rc::clone(shared);
    n.set("showHeard", Func::from(move |i: f64| s.borrow_mut().show_heard(i as usize)))?;
    let s = Rc::clone(shared);
    n.set(
        "recordScenes",
        Func::from(move |on: bool| {
            with_vm_mut(&s, |vm| vm.record_move_scenes(on));
        }),
    )?;
    let s = Rc::clone(shared);
    // The step's bubble, variable and visual events as [seq, kind, handle, text or name]
    // quadruples (kind 0: a bubble, 1: a variable, 2: a visual change).
    n.set(
        "heard",
        Func::from(move || {
            let mut out = Vec::new();
            for e in &s.borrow().heard {
                let (kind, text) = match &e.kind {
                    ListenerKind::Bubble(t) => (0.0, t.clone()),
                    ListenerKind::Variable(n) => (1.0, n.clone()),
                    ListenerKind::Visual => (2.0, String::new()),
                };
                out.extend([Js::Num(e.seq as f64), Js::Num(kind), Js::Num(handle(e.target)), Js::Str(text)]);
            }
            out
        }),
    )?;
    // Whisker's end(): stop all, then one raw `_step` (not counted as a test step).
    let s = Rc::clone(shared);
    n.set(
        "endStep",
        Func::from(move || {
            with_vm_mut(&s, |vm| {
                vm.apply_inputs();
                vm.step();
            });
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "seedScratch",
        Func::from(move |seed: String| {
            let seed = seeding::scratch_seed(&seed);
            s.borrow_mut().driver_rng = seeding::WhiskerRandomness::new(seed);
            with_vm_mut(&s, |vm| vm.reseed(seed));
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "seedScratchNumber",
        Func::from(move |seed: f64| {
            s.borrow_mut().driver_rng = seeding::WhiskerRandomness::new(seed);
            with_vm_mut(&s, |vm| vm.reseed(seed));
        }),
    )?;
    let s = Rc::clone(shared);
    n.set("inputHints", Func::from(move || input_hints(&s)))?;
    Ok(())
}

fn install_targets(n: &Object<'_>, shared: &Shared) -> rquickjs::Result<()> {
    let s = Rc::clone(shared);
    n.set(
        "targets",
        Func::from(move || with_vm(&s, |vm| Some(vm.runtime_targets().into_iter().map(handle).collect::<Vec<_>>()))),
    )?;
    let s = Rc::clone(shared);
    n.set("stage", Func::from(move || with_vm(&s, |vm| Some(handle(vm.stage_id())))))?;
    let s = Rc::clone(shared);
    n.set("find", Func::from(move |name: String| with_vm(&s, |vm| vm.find_target(&name, 0).map(handle))))?;
    let s = Rc::clone(shared);
    n.set(
        "instances",
        Func::from(move |h: f64| {
            with_vm(&s, |vm| {
                let def = vm.target(id_of(h))?.def;
                Some(
                    vm.runtime_targets()
                        .into_iter()
                        .filter(|&id| vm.target(id).is_some_and(|t| t.def == def))
                        .map(handle)
                        .collect::<Vec<_>>(),
                )
            })
            .unwrap_or_default()
        }),
    )?;
    let s = Rc::clone(shared);
    n.set("exists", Func::from(move |h: f64| with_vm(&s, |vm| vm.target(id_of(h)).map(|_| true)).unwrap_or(false)))?;
    let s = Rc::clone(shared);
    n.set("name", Func::from(move |h: f64| with_vm(&s, |vm| vm.target_name(id_of(h)).map(str::to_string))))?;
    let s = Rc::clone(shared);
    n.set("isStage", Func::from(move |h: f64| with_vm(&s, |vm| vm.target(id_of(h)).map(|t| t.is_stage))))?;
    let s = Rc::clone(shared);
    n.set("uidDraw", Func::from(move |h: f64| with_vm(&s, |vm| vm.target(id_of(h)).map(|t| t.uid_draw as f64))))?;
    let s = Rc::clone(shared);
    n.set("isOriginal", Func::from(move |h: f64| with_vm(&s, |vm| vm.target(id_of(h)).map(|t| t.is_original))))?;
    let s = Rc::clone(shared);
    n.set(
        "num",
        Func::from(move |h: f64, k: f64| {
            with_vm(&s, |vm| {
                let id = id_of(h);
                let t = vm.target(id)?;
                Some(match k as u8 {
                    0 => t.x,
                    1 => t.y,
                    2 => t.direction,
                    3 => t.size,
                    4 => t.costume as f64,
                    5 => vm.volume(id)?,
                    6 => vm.layer(id)? as f64,
                    // Whisker's `cloneID` (0 for the original, which Whisker gives `null`).
                    7 => f64::from(t.clone_id),
                    _ => return None,
                })
            })
        }),
    )?;
    let s = Rc::clone(shared);
    n.set("visible", Func::from(move |h: f64| with_vm(&s, |vm| vm.target(id_of(h)).map(|t| t.visible))))?;
    let s = Rc::clone(shared);
    n.set("effects", Func::from(move |h: f64| with_vm(&s, |vm| vm.effects(id_of(h)).map(|e| e.to_vec()))))?;
    let s = Rc::clone(shared);
    n.set("rotationStyle", Func::from(move |h: f64| with_vm(&s, |vm| vm.rotation_style(id_of(h)))))?;
    let s = Rc::clone(shared);
    n.set(
        "bounds",
        Func::from(move |h: f64| {
            with_vm_mut(&s, |vm| vm.bounds(id_of(h)).map(|r| vec![r.left, r.right, r.top, r.bottom])).flatten()
        }),
    )?;
    let s = Rc::clone(shared);
    n.set("pick", Func::from(move |x: f64, y: f64| with_vm_mut(&s, |vm| handle(vm.pick(x, y)))))?;
    Ok(())
}

fn install_looks(n: &Object<'_>, shared: &Shared) -> rquickjs::Result<()> {
    let s = Rc::clone(shared);
    n.set(
        "costumeNames",
        Func::from(move |h: f64| {
            with_vm(&s, |vm| {
                let def = vm.target(id_of(h))?.def as usize;
                Some(vm.project().targets.get(def)?.costumes.iter().map(|c| c.name.clone()).collect::<Vec<_>>())
            })
            .unwrap_or_default()
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "costumeName",
        Func::from(move |h: f64, i: f64| {
            with_vm(&s, |vm| {
                let def = vm.target(id_of(h))?.def as usize;
                let i = usize::try_from(i as i64).ok()?;
                Some(vm.project().targets.get(def)?.costumes.get(i)?.name.clone())
            })
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "sayText",
        Func::from(move |h: f64| {
            with_vm(&s, |vm| {
                let id = id_of(h);
                vm.target(id)?;
                Some(match vm.bubble_state(id) {
                    Some((_, text)) => Js::Str(text.to_string()),
                    None => Js::Null,
                })
            })
            .unwrap_or(Js::Undef)
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "touchingMouse",
        Func::from(move |h: f64| with_vm_mut(&s, |vm| vm.touching_mouse(id_of(h))).unwrap_or(false)),
    )?;
    let s = Rc::clone(shared);
    n.set("touchingEdge", Func::from(move |h: f64| with_vm_mut(&s, |vm| vm.touching_edge(id_of(h))).unwrap_or(false)))?;
    let s = Rc::clone(shared);
    n.set(
        "touchingSprite",
        Func::from(move |h: f64, name: String| {
            with_vm_mut(&s, |vm| {
                let sprite = vm.project().targets.iter().position(|t| !t.is_stage && t.name == name);
                sprite.is_some_and(|i| vm.touching_sprite(id_of(h), i))
            })
            .unwrap_or(false)
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "touchingColor",
        Func::from(move |h: f64, r: f64, g: f64, b: f64| {
            with_vm_mut(&s, |vm| vm.touching_color(id_of(h), [byte(r), byte(g), byte(b)])).unwrap_or(false)
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "colorTouchingColor",
        Func::from(move |h: f64, r: f64, g: f64, b: f64, r2: f64, g2: f64, b2: f64| {
            with_vm_mut(&s, |vm| {
                vm.color_touching_color(id_of(h), [byte(r), byte(g), byte(b)], [byte(r2), byte(g2), byte(b2)])
            })
            .unwrap_or(false)
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "setXY",
        Func::from(move |h: f64, x: f64, y: f64, force: bool| {
            with_vm_mut(&s, |vm| vm.set_position(id_of(h), x, y, force));
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "resetMips",
        Func::from(move || {
            with_vm_mut(&s, |vm| vm.reset_mips());
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "resetBlockCache",
        Func::from(move || {
            with_vm_mut(&s, |vm| vm.reset_block_cache());
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "goFrontBack",
        Func::from(move |h: f64, front: bool| {
            with_vm_mut(&s, |vm| vm.go_front_back(id_of(h), front));
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "setEffect",
        Func::from(move |h: f64, i: f64, v: f64| {
            with_vm_mut(&s, |vm| vm.set_effect(id_of(h), i as usize, v));
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "setVisible",
        Func::from(move |h: f64, v: bool| {
            with_vm_mut(&s, |vm| vm.set_visible(id_of(h), v));
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "setSize",
        Func::from(move |h: f64, v: f64| {
            with_vm_mut(&s, |vm| vm.set_size(id_of(h), v));
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "setDirection",
        Func::from(move |h: f64, v: f64| {
            with_vm_mut(&s, |vm| vm.set_direction(id_of(h), v));
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "assignDirection",
        Func::from(move |h: f64, v: f64| {
            with_vm_mut(&s, |vm| vm.assign_direction(id_of(h), v));
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "whiskerWrap",
        Func::from(move |h: f64| {
            with_vm_mut(&s, |vm| vm.whisker_wrap(id_of(h)));
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "whiskerWrappersReset",
        Func::from(move || {
            with_vm_mut(&s, |vm| vm.whisker_wrappers_reset());
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "updateAllDrawableProperties",
        Func::from(move |h: f64| {
            with_vm_mut(&s, |vm| vm.update_all_drawable_properties(id_of(h)));
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "setCostume",
        Func::from(move |h: f64, v: f64| {
            with_vm_mut(&s, |vm| vm.set_costume(id_of(h), v));
        }),
    )?;
    Ok(())
}

fn install_variables(n: &Object<'_>, shared: &Shared) -> rquickjs::Result<()> {
    let s = Rc::clone(shared);
    n.set(
        "varNames",
        Func::from(move |h: f64, lists: bool| {
            with_vm(&s, |vm| {
                let id = id_of(h);
                vm.target(id)?;
                let names: Vec<String> = if lists {
                    vm.list_names(id).into_iter().map(str::to_string).collect()
                } else {
                    vm.scalar_variables(id).into_iter().map(|(n, _)| n.to_string()).collect()
                };
                Some(names)
            })
            .unwrap_or_default()
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "varValue",
        Func::from(move |h: f64, name: String| {
            with_vm(&s, |vm| {
                vm.scalar_variables(id_of(h)).into_iter().find(|(n, _)| *n == name).map(|(_, v)| Js::from(v))
            })
            .unwrap_or(Js::Undef)
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "listItems",
        Func::from(move |h: f64, name: String| {
            with_vm(&s, |vm| vm.list_items(id_of(h), &name).map(|l| l.into_iter().map(Js::from).collect::<Vec<_>>()))
        }),
    )?;
    let s = Rc::clone(shared);
    n.set(
        "setVar",
        Func::from(move |h: f64, name: String, is_num: bool, num: f64, text: String| {
            let v = if is_num { Value::Num(num) } else { Value::Str(text.as_str().into()) };
            with_vm_mut(&s, |vm| vm.set_variable(id_of(h), &name, &v)).unwrap_or(false)
        }),
    )?;
    let s = Rc::clone(shared);
    n.set("answerValue", Func::from(move || with_vm(&s, |vm| Some(vm.answer().to_string())).unwrap_or_default()))?;
    let s = Rc::clone(shared);
    n.set("questionPending", Func::from(move || with_vm(&s, |vm| Some(vm.question_pending())).unwrap_or(false)))?;
    Ok(())
}

fn install_inputs(n: &Object<'_>, shared: &Shared) -> rquickjs::Result<()> {
    let s = Rc::clone(shared);
    n.set("keyDown", Func::from(move |k: String| post(&s, |vm| vm.key_down(&k))))?;
    let s = Rc::clone(shared);
    n.set("keyUp", Func::from(move |k: String| post(&s, |vm| vm.key_up(&k))))?;
    let s = Rc::clone(shared);
    n.set(
        "releaseAllKeys",
        Func::from(move || {
            post(&s, |vm| {
                for k in vm.keys_down() {
                    vm.key_up(&k);
                }
            })
        }),
    )?;
    let s = Rc::clone(shared);
    n.set("isKeyDown", Func::from(move |k: String| with_vm(&s, |vm| Some(vm.is_key_down(&k))).unwrap_or(false)))?;
    let s = Rc::clone(shared);
    n.set("mouseMove", Func::from(move |x: f64, y: f64| post(&s, |vm| vm.mouse_move(x, y))))?;
    let s = Rc::clone(shared);
    n.set("mouseButton", Func::from(move |d: bool| post(&s, |vm| vm.mouse_button(d))))?;
    let s = Rc::clone(shared);
    n.set("mouseDown", Func::from(move || with_vm(&s, |vm| Some(vm.mouse().2)).unwrap_or(false)))?;
    let s = Rc::clone(shared);
    n.set(
        "mousePos",
        Func::from(move || with_vm(&s, |vm| Some(vec![vm.mouse().0, vm.mouse().1])).unwrap_or_default()),
    )?;
    let s = Rc::clone(shared);
    n.set("click", Func::from(move |h: f64| post(&s, |vm| vm.click_target(id_of(h)))))?;
    let s = Rc::clone(shared);
    n.set("answer", Func::from(move |text: String| post(&s, |vm| vm.answer_text(&text))))?;
    let s = Rc::clone(shared);
    n.set("loudness", Func::from(move |v: f64| post(&s, |vm| vm.set_loudness(v))))?;
    let s = Rc::clone(shared);
    n.set("greenFlag", Func::from(move || post(&s, Vm::green_flag)))?;
    // The events a driver call sent (the green flag's cleared effects), for its listeners now.
    let s = Rc::clone(shared);
    n.set("collectEvents", Func::from(move || s.borrow_mut().collect()))?;
    // The green flag of a test's start is sent before the test can listen.
    let s = Rc::clone(shared);
    n.set("dropEvents", Func::from(move || s.borrow_mut().drop_events()))?;
    let s = Rc::clone(shared);
    n.set("stopAll", Func::from(move || post(&s, Vm::stop_all)))?;
    Ok(())
}

/// What `detectRandomInputs` looks for, block by block: `[target, kind, value]` with the
/// kinds `key` (value: the key), `mouse`, `click`, `stageClick`, `mouseDown`, `touchMouse`,
/// `ask` and `answer` (value: the literal an answer is compared with).
fn input_hints(s: &Shared) -> Vec<Js> {
    let s = s.borrow();
    let Some(vm) = s.vm.as_ref() else { return Vec::new() };
    let project = vm.project();
    let mut out = Vec::new();
    for id in vm.runtime_targets() {
        let Some(t) = vm.target(id) else { continue };
        if !t.is_original {
            continue;
        }
        for b in project.blocks.iter().filter(|b| b.target == t.def) {
            let field = |name: &str| b.field(name).map(|f| f.value.clone());
            let is_mouse = |name: &str| field(name).as_deref() == Some("_mouse_");
            let (kind, value) = match b.opcode.as_str() {
                "event_whenkeypressed" | "sensing_keyoptions" => {
                    ("key", field("KEY_OPTION").map_or(Js::Undef, Js::Str))
                }
                "sensing_mousex" | "sensing_mousey" => ("mouse", Js::Undef),
                "sensing_distancetomenu" if is_mouse("DISTANCETOMENU") => ("mouse", Js::Undef),
                "motion_pointtowards_menu" if is_mouse("TOWARDS") => ("mouse", Js::Undef),
                "event_whenthisspriteclicked" => ("click", Js::Undef),
                "event_whenstageclicked" => ("stageClick", Js::Undef),
                "sensing_mousedown" => ("mouseDown", Js::Undef),
                "sensing_touchingobjectmenu" if is_mouse("TOUCHINGOBJECTMENU") => ("touchMouse", Js::Undef),
                "sensing_askandwait" => ("ask", Js::Undef),
                "operator_equals" => match answer_literal(project, b) {
                    Some(text) => ("answer", Js::Str(text)),
                    None => continue,
                },
                _ => continue,
            };
            out.extend([Js::Num(handle(id)), Js::Str(kind.to_string()), value]);
        }
    }
    out
}

/// The literal an `operator_equals` compares `answer` with, if it does.
fn answer_literal(project: &Project, b: &clowder_vm::project::Block) -> Option<String> {
    let is_answer = |i: Option<&Input>| match i {
        Some(Input::Block(x)) => project.blocks.get(*x as usize).is_some_and(|x| x.opcode == "sensing_answer"),
        _ => false,
    };
    let literal = |i: Option<&Input>| match i {
        Some(Input::Lit(l)) => Some(l.to_js_string()),
        _ => None,
    };
    let (a, c) = (b.input("OPERAND1"), b.input("OPERAND2"));
    if is_answer(a) {
        literal(c)
    } else if is_answer(c) {
        literal(a)
    } else {
        None
    }
}
