//! The VM facade (scratch-vm's `virtual-machine.js`): one [`Vm`] runs one loaded project step
//! by step. Inputs are queued and applied at the start of the next step (fidelity README,
//! order of operations); queries read the live state. Everything else is the engine's
//! ([`crate::engine`]).

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use crate::engine::{Ctx, PendingInput, STEP_MS, State, Target, TargetId, TimerKind, V};
use crate::geometry::{Geometry, NoGeometry};
use crate::instrument::Instrument;
use crate::program::{self, Cmd, Program};
use crate::project::{BlockIdx, Project};
use crate::value::Value;

/// Which semantics a VM instance follows (DESIGN §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Profile {
    /// scratch-vm without renderer or audio; what the fidelity oracle runs.
    #[default]
    Headless,
    /// Headless plus geometry, sound durations and pen (studies).
    Default,
    /// Default with the semantics of Whisker's scratch-vm fork ([`crate::whisker`]):
    /// `seed-random` for every draw including internal ids, time counted in steps at
    /// acceleration 10, the step timer.
    Whisker,
}

/// Options of one VM instance.
#[derive(Debug, Clone)]
pub struct VmOptions {
    /// Semantics profile.
    pub profile: Profile,
    /// Seed of project-visible randomness: SplitMix64's state, or (profile `whisker`) the
    /// test seed that keys `seed-random` as Whisker's `-se` does.
    pub seed: u64,
    /// Block executions allowed in one step before it is declared a hang.
    pub max_ops_per_step: u64,
    /// Record every SAY event (say, think, ask bubbles) for [`Vm::take_say_events`].
    pub record_say: bool,
    /// Turn on the instrumentation for test generation (see [`crate::instrument`]).
    pub instrument: bool,
    /// With [`VmOptions::instrument`]: whether the branch distances are measured exactly or
    /// only as zero or not ([`crate::instrument::Distances`]; execution is the same).
    pub distances: crate::instrument::Distances,
    /// Record every move (`setXY`) for [`Vm::take_moves`] (test drivers' `onMoved`).
    pub record_moves: bool,
    /// Record the other events Whisker's listeners get inside a step, in order, for
    /// [`Vm::take_listener_events`]: `SAY` and `DELETE_SAY_OR_THINK` (`onSayOrThink`),
    /// `CHANGE_VARIABLE` (`onVariableChange`) and the targets' visual changes.
    pub record_listeners: bool,
    /// Profile `whisker` only: real milliseconds one of Whisker's steps takes, for the blocks
    /// Whisker times on the wall clock (music beats, notes and rests, whose timer reads the
    /// unaccelerated clock, and `when timer >`, whose project timer is real time × 10).
    /// `None` (the default): the profile's deterministic model, the virtual clock. Assertion
    /// generation varies it to find checks that would depend on how fast Whisker steps.
    pub whisker_wall_ms: Option<f64>,
    /// Profile `whisker` only: text to speech as Whisker's fork runs it on a machine that
    /// cannot reach Scratch's synthesis service: `speak` never ends (the fork yields until its
    /// cache has the sound). `false` (the default): the request fails and the block ends at
    /// the next promise checkpoint, as in scratch-vm.
    pub whisker_offline_speech: bool,
    /// Profile `whisker` only: the browser's maths library, which decides the last bits of
    /// `move`, `point towards`, `mathop` and `^` (see [`crate::util::mathlib`]). `None` (the
    /// default): the profile's, [`crate::util::mathlib::MathLib::Chromium`].
    pub whisker_maths: Option<crate::util::mathlib::MathLib>,
    /// Skip the rest of a warp loop's spin once it provably changes nothing (the hang guard
    /// still trips on the same step; see `engine/fixpoint.rs`). On by default; off
    /// only to check that skipping changes nothing but the work done.
    pub skip_fixed_loops: bool,
}

impl Default for VmOptions {
    fn default() -> Self {
        Self {
            profile: Profile::Headless,
            seed: 0,
            max_ops_per_step: 5_000_000,
            record_say: false,
            instrument: false,
            distances: crate::instrument::Distances::Exact,
            record_moves: false,
            record_listeners: false,
            whisker_wall_ms: None,
            whisker_offline_speech: false,
            whisker_maths: None,
            skip_fixed_loops: true,
        }
    }
}

impl VmOptions {
    /// Checks a [`VmOptions::whisker_wall_ms`] given from outside: 0.1 to 10 000 real ms per
    /// step (from a machine 33 times faster than acceleration 10 needs to one that takes 10 s
    /// a step), so that every way of setting it refuses the same values.
    pub fn check_whisker_wall_ms(ms: f64) -> Result<f64, String> {
        if ms.is_finite() && (0.1..=10_000.0).contains(&ms) {
            Ok(ms)
        } else {
            Err(format!("must be between 0.1 and 10000 milliseconds, not {ms}"))
        }
    }
}

/// What one step ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepOutcome {
    /// The step ran normally.
    Ran,
    /// The step exceeded the operation budget; all threads were stopped.
    Hang,
}

/// A time-based block a thread is waiting in (see [`Vm::waiting_blocks`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Waiting {
    /// The block.
    pub block: BlockIdx,
    /// The target whose thread waits.
    pub target: TargetId,
    /// Virtual time left, in ms (from the start of the next step).
    pub remaining_ms: f64,
    /// Total duration, in ms.
    pub duration_ms: f64,
}

/// One SAY event (say, think, ask bubbles), for the say protocol.
#[derive(Debug, Clone)]
pub struct SayEvent {
    /// The target that spoke.
    pub target: TargetId,
    /// `say` or `think`.
    pub kind: &'static str,
    /// `String(message)` before bubble formatting.
    pub text: String,
}

/// An event one of Whisker's runtime listeners gets in the middle of a step (recorded with
/// [`VmOptions::record_listeners`]). `seq` orders it among these and the step's
/// [`crate::MoveEvent`]s, as the listeners are called.
#[derive(Debug, Clone, PartialEq)]
pub struct ListenerEvent {
    /// Position in the step's events (shared with move events).
    pub seq: u64,
    /// The target it concerns (for a variable, the target whose block changed it).
    pub target: TargetId,
    /// What happened.
    pub kind: ListenerKind,
    /// The target's pose right then (bubbles and visual changes): what a listener reads.
    pub pose: Option<crate::Pose>,
}

/// The kinds of [`ListenerEvent`].
#[derive(Debug, Clone, PartialEq)]
pub enum ListenerKind {
    /// `SAY` (a say, think or ask bubble set) or `DELETE_SAY_OR_THINK` (a bubble set to the
    /// empty text, by a block or when `say for secs` ends): the target's bubble text right
    /// after, which is what `sayText` reads in the listener.
    Bubble(String),
    /// `CHANGE_VARIABLE`: a `set` or `change` block ran on the variable of this name (even
    /// when the value stays the same).
    Variable(String),
    /// The target's `EVENT_TARGET_VISUAL_CHANGE` (`onVisualChange`, `onSpriteVisualChange`):
    /// sent by every change of direction, size, effect, costume or rotation style of a visible
    /// target (also when nothing changes), every `show`/`hide`, and a visible clone's deletion.
    Visual,
}

/// A deterministic Scratch VM instance running one project.
#[derive(Clone)]
pub struct Vm {
    pub(crate) project: Arc<Project>,
    pub(crate) prog: Arc<Program>,
    pub(crate) st: State,
    /// Whether a test driver's touching queries leave the MIPs they create in the renderer
    /// ([`Vm::set_driver_queries_leave_mips`]).
    pub(crate) driver_mips: bool,
}

/// The compiled program of a project (compiled once, shared by all its VMs).
pub(crate) fn program_of(project: &Project) -> Arc<Program> {
    Arc::clone(project.compiled.get_or_init(|| Arc::new(program::compile(project))))
}

impl Vm {
    /// A VM at step 0 with the project in its initial state (no script running).
    pub fn new(project: Arc<Project>, opts: VmOptions) -> Self {
        let prog = program_of(&project);
        let geometry: Box<dyn Geometry> = match opts.profile {
            Profile::Headless => Box::new(NoGeometry),
            Profile::Default | Profile::Whisker => crate::geometry::for_project(&project),
        };
        let st = State::new(&prog, opts, geometry);
        Vm { project, prog, st, driver_mips: false }
    }

    /// A VM with an explicit geometry implementation (any profile).
    pub fn with_geometry(project: Arc<Project>, opts: VmOptions, geometry: Box<dyn Geometry>) -> Self {
        let prog = program_of(&project);
        let st = State::new(&prog, opts, geometry);
        Vm { project, prog, st, driver_mips: false }
    }

    /// Which geometry backs touching/fencing: `none`, `approximate` or `exact`.
    pub fn geometry_mode(&self) -> &'static str {
        self.st.geometry.mode()
    }

    /// The project this VM runs.
    pub fn project(&self) -> &Arc<Project> {
        &self.project
    }

    /// Steps executed so far.
    pub fn steps(&self) -> u64 {
        self.st.clock.steps
    }

    /// Work done so far, in machine-independent units (`geometry::cost`): block executions
    /// and reporter evaluations plus the geometry's work (rows searched, pixels tested or
    /// composited, colour-search points, pen pixels). A run's work cap counts this, so a
    /// runaway run ends at the same point on every machine.
    pub fn work(&self) -> u64 {
        self.work_parts().iter().sum()
    }

    /// [`Vm::work`] in its parts: block executions, reporter evaluations (with the random
    /// draws they make), geometry, the scheduler (steps and thread resumptions), and the
    /// geometry's work for branch distances (instrumentation: the test generator's fitness
    /// work, not the program's; the third part excludes it).
    pub fn work_parts(&self) -> [u64; 5] {
        use crate::geometry::cost;
        let b = &self.st.budget;
        [
            (b.ops_total + b.ops).saturating_sub(b.skipped) * cost::BLOCK,
            b.rich * cost::EVAL
                + b.evals.saturating_sub(b.consts + b.rich) * cost::EVAL_LIGHT
                + b.consts * cost::CONST
                + b.draws * cost::RANDOM,
            self.st.geometry.work().saturating_sub(b.distance),
            self.st.clock.steps * cost::STEP + b.resumes * cost::RESUME,
            b.distance,
        ]
    }

    /// Operations done so far: block executions, evaluations of reporters other than
    /// constants, and random draws (the same on any VM whose trace agrees; `clowder bench vm`
    /// divides time by it).
    pub fn operations(&self) -> u64 {
        let b = &self.st.budget;
        (b.ops_total + b.ops).saturating_sub(b.skipped) + b.evals.saturating_sub(b.consts) + b.draws
    }

    /// The work of cloning this VM (`Clone` copies its whole state: targets with their
    /// variables and lists, threads, coverage, the geometry's pen layer and caches), in the
    /// units of [`Vm::work`]: a function of the state's sizes, so deterministic.
    pub fn clone_work(&self) -> u64 {
        use crate::geometry::cost;
        let st = &self.st;
        let mut words =
            st.targets.slots.len() as u64 * 2 + st.targets.exec.len() as u64 + st.targets.render_log.len() as u64 / 2;
        for t in st.targets.slots.iter().filter_map(|(_, t)| t.as_ref()) {
            // The fixed fields, then values (two words each) and list items.
            words += 24 + 2 * (t.vars.len() + t.edge.len()) as u64;
            words += t.lists.iter().map(|l| 3 + 2 * l.len() as u64).sum::<u64>();
        }
        words += st.threads.slab.iter().map(|t| 6 + 8 * t.stack.len() as u64).sum::<u64>();
        words += st.threads.list.len() as u64 + st.stack.len() as u64 * 2;
        words += st.observe.executed.len() as u64;
        if st.observe.instrument.is_some() {
            // Per block: a condition's statistics, a loop's count, a hat's starts.
            words += self.prog.blocks.len() as u64 * 6;
        }
        words += st.geometry.clone_words();
        cost::CLONE + words * cost::CLONE_WORD
    }

    /// Virtual time at the start of step `k`, in ms (IEEE double, as the oracle).
    pub fn now(k: u64) -> f64 {
        k as f64 * STEP_MS
    }

    /// Whether block `idx` has executed since the VM was created.
    pub fn was_executed(&self, idx: BlockIdx) -> bool {
        self.st.observe.executed.get(idx as usize / 64).is_some_and(|w| w & (1u64 << (idx % 64)) != 0)
    }

    /// Bitset of executed blocks (bit `i` of word `i / 64`, `i` = project block index).
    pub fn executed_bits(&self) -> &[u64] {
        &self.st.observe.executed
    }

    /// Opcodes without an implementation that were executed, with counts.
    pub fn unknown_opcodes(&self) -> &BTreeMap<String, u64> {
        &self.st.observe.unknown
    }

    /// Number of live non-monitor threads (the trace's `threads`).
    pub fn live_threads(&self) -> usize {
        self.st
            .threads
            .list
            .iter()
            .filter(|&&t| self.st.threads.slab[t.slot as usize].live() && !self.st.threads.slab[t.slot as usize].killed)
            .count()
    }

    /// The `answer` reporter.
    pub fn answer(&self) -> &str {
        &self.st.ask.answer
    }

    /// Project timer in seconds, as the `timer` block reads it.
    pub fn timer_secs(&self) -> f64 {
        self.st.timer_value()
    }

    /// The stage's target id.
    pub fn stage_id(&self) -> TargetId {
        self.st.stage()
    }

    /// The live target of sprite `name` with `clone_index` (0 = the original).
    pub fn find_target(&self, name: &str, clone_index: u32) -> Option<TargetId> {
        self.st.targets.exec.iter().copied().find(|&id| {
            self.st.target(id).is_some_and(|t| {
                !t.is_stage && t.clone_index == clone_index && self.prog.lit_str(self.prog.def(t.def).name) == name
            })
        })
    }

    /// Live targets in execution order (front-most sprite first, stage last).
    pub fn targets_in_execution_order(&self) -> impl Iterator<Item = (TargetId, &Target)> + '_ {
        self.st.targets.exec.iter().rev().filter_map(|&id| self.st.target(id).map(|t| (id, t)))
    }

    /// The live target `id`.
    pub fn target(&self, id: TargetId) -> Option<&Target> {
        self.st.target(id)
    }

    /// Sprite name of a target.
    pub fn target_name(&self, id: TargetId) -> Option<&str> {
        self.st.target(id).map(|t| self.prog.lit_str(self.prog.def(t.def).name))
    }

    /// Takes the SAY events recorded since the last call (needs `VmOptions::record_say`).
    pub fn take_say_events(&mut self) -> Vec<SayEvent> {
        self.st.observe.say_log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Takes the listener events recorded since the last call (needs
    /// `VmOptions::record_listeners`).
    pub fn take_listener_events(&mut self) -> Vec<ListenerEvent> {
        self.st.observe.listener_log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The instrumentation data, when enabled.
    pub fn instrument(&self) -> Option<&Instrument> {
        self.st.observe.instrument.as_deref()
    }

    /// Whether nothing can happen any more without new input: no live thread, no
    /// pending timer, no edge-activated hat (the oracle's early-end rule minus inputs).
    pub fn is_quiescent(&self) -> bool {
        self.live_threads() == 0 && self.st.pending_timeouts(&self.prog) == 0 && !self.prog.has_edge_hats
    }

    /// The value of variable `name` of a target (scalars), as JS holds it.
    pub fn variable(&self, id: TargetId, name: &str) -> Option<Value> {
        let t = self.st.target(id)?;
        let def = self.prog.def(t.def);
        let i = def.vars.iter().filter(|v| !v.is_list).position(|v| &*v.name == name)?;
        let slot = def.vars.iter().enumerate().filter(|(_, v)| !v.is_list).nth(i).map(|(s, _)| s)?;
        t.vars.get(slot).map(|v| self.prog_value(v))
    }

    pub(crate) fn prog_value(&self, v: &V) -> Value {
        match v {
            V::Num(n) => Value::Num(n.get()),
            V::True => Value::Bool(true),
            V::False => Value::Bool(false),
            V::Lit(l) => Value::Str(Rc::from(self.prog.lit_str(l.id()))),
            V::Str(s) => Value::Str(Rc::from(s.as_str())),
            V::Undef => Value::Undefined,
            V::Null => Value::Null,
        }
    }

    // ---------------------------------------------------------------- inputs
    // Inputs take effect at the start of the next step, after due timers fired
    // (fidelity README, order of operations), in call order.

    /// Green flag: stop everything, reset the timer, start "when flag clicked".
    pub fn green_flag(&mut self) {
        self.st.io.pending.push(PendingInput::GreenFlag);
    }

    /// The stop sign: kill all threads, delete clones, clear bubbles and effects.
    pub fn stop_all(&mut self) {
        self.st.io.pending.push(PendingInput::Stop);
    }

    /// A key goes down (Scratch or DOM key name): starts "when KEY pressed" and "when any key pressed".
    pub fn key_down(&mut self, key: &str) {
        self.st.io.pending.push(PendingInput::KeyDown(key.to_string()));
    }

    /// A key goes up.
    pub fn key_up(&mut self, key: &str) {
        self.st.io.pending.push(PendingInput::KeyUp(key.to_string()));
    }

    /// Mouse moves to stage coordinates (rounded and clamped like scratch-vm).
    pub fn mouse_move(&mut self, x: f64, y: f64) {
        self.st.io.pending.push(PendingInput::MouseMove(x, y));
    }

    /// Mouse button state (no click: clicks are [`Vm::click_target`]).
    pub fn mouse_button(&mut self, down: bool) {
        self.st.io.pending.push(PendingInput::MouseButton(down));
    }

    /// scratch-vm's `Mouse.postData` with a button state, as a test driver posts a click at
    /// stage point (x, y): the mouse moves there; if the button state changes (and the point
    /// is inside the stage), the target drawn at the point (else the stage) gets its click
    /// hats, on the way down, or on the way up if it is draggable.
    pub fn mouse_post(&mut self, x: f64, y: f64, down: bool) {
        self.st.io.pending.push(PendingInput::MousePost(x, y, down));
    }

    /// Click on a target (sprite, clone or stage): starts its click hats.
    pub fn click_target(&mut self, id: TargetId) {
        self.st.io.pending.push(PendingInput::Click(id));
    }

    /// Click on the sprite `name` with `clone_index` (0 = the original), resolved when the
    /// input is applied. Returns whether such a target exists now.
    pub fn click_sprite(&mut self, name: &str, clone_index: u32) -> bool {
        self.st.io.pending.push(PendingInput::ClickSprite(name.to_string(), clone_index));
        self.find_target(name, clone_index).is_some()
    }

    /// Click on the stage.
    pub fn click_stage(&mut self) {
        let s = self.st.stage();
        self.st.io.pending.push(PendingInput::Click(s));
    }

    /// Answer the oldest pending `ask`.
    pub fn answer_text(&mut self, text: &str) {
        self.st.io.pending.push(PendingInput::Answer(text.to_string()));
    }

    /// Set the virtual loudness (−1 = no microphone).
    pub fn set_loudness(&mut self, v: f64) {
        self.st.io.pending.push(PendingInput::Loudness(v));
    }

    /// Drag a sprite (or clone) to (x, y): the position a drag in the player sets
    /// (`postSpriteInfo` with `force`: fenced by the geometry, no pen line).
    pub fn drag(&mut self, id: TargetId, x: f64, y: f64) {
        self.st.io.pending.push(PendingInput::Drag(id, x, y));
    }

    /// Broadcast a message by name (case-insensitive), like the oracle's `broadcast` input.
    pub fn broadcast(&mut self, name: &str) {
        self.st.io.pending.push(PendingInput::Broadcast(name.to_string()));
    }

    /// Runs one step (fidelity README, order of operations).
    pub fn step(&mut self) -> StepOutcome {
        let out = self.st.step(&self.prog);
        if out == StepOutcome::Hang {
            // Nothing of the hung step survives: stop everything so later steps are quiet.
            self.st.stop_all(&self.prog);
            self.st.budget.hung = false;
        }
        out
    }

    /// Time-based blocks threads are waiting in now (`wait`, `glide`, `say/think for
    /// secs`, music beats, `play sound until done` with sound durations), with the
    /// virtual time left (counted from the start of the next step) and their duration.
    pub fn waiting_blocks(&self) -> Vec<Waiting> {
        let st = &self.st;
        let prog = &*self.prog;
        let now = Vm::now(st.clock.steps);
        let mut out = Vec::new();
        for &t in &st.threads.list {
            let th = st.th(t);
            if !th.live() || th.killed {
                continue;
            }
            let Some(f) = th.stack.last() else { continue };
            let Some(b) = prog.blocks.get(f.block as usize) else { continue };
            let steps = st.clock.steps as f64;
            let (remaining, duration) = match (&b.cmd, &f.ctx) {
                // Whisker's step timers and glides count steps: report them in virtual ms.
                (_, Ctx::StepTimer { offset, duration }) => {
                    ((duration - (steps - offset)) * STEP_MS, duration * STEP_MS)
                }
                (Cmd::Glide | Cmd::GlideTo, Ctx::Glide(g)) if st.whisker() => {
                    ((g.duration - (steps - g.start)) * STEP_MS, g.duration * STEP_MS)
                }
                (Cmd::Wait, Ctx::Timer { start, duration }) => (duration - (now - start), *duration),
                (Cmd::MusicDrum | Cmd::MusicRest | Cmd::MusicNote, Ctx::Timer { start, duration }) => {
                    (duration * 1000.0 - (now - start), duration * 1000.0)
                }
                (Cmd::Glide | Cmd::GlideTo, Ctx::Glide(g)) => {
                    (g.duration * 1000.0 - (now - g.start), g.duration * 1000.0)
                }
                (Cmd::SayForSecs { .. } | Cmd::PlaySound { .. }, _) => {
                    match st.timers.list.iter().find(|x| match x.kind {
                        TimerKind::Bubble { thread, .. } | TimerKind::Sound { thread } => thread == t,
                        TimerKind::MakeySequence { .. } => false,
                    }) {
                        Some(x) => (x.due - now, x.due - x.created),
                        None => continue,
                    }
                }
                _ => continue,
            };
            out.push(Waiting {
                block: f.block,
                target: th.target,
                remaining_ms: remaining.max(0.0),
                duration_ms: duration,
            });
        }
        out
    }

    /// (target, top block) of every live script.
    pub fn active_scripts(&self) -> Vec<(TargetId, BlockIdx)> {
        self.st
            .threads
            .list
            .iter()
            .map(|&t| self.st.th(t))
            .filter(|th| th.live() && !th.killed)
            .map(|th| (th.target, th.top))
            .collect()
    }

    /// Whether an `ask` is waiting for an answer.
    pub fn question_pending(&self) -> bool {
        !self.st.ask.questions.is_empty()
    }

    /// Bounds of a target as drawn, when the geometry knows them (an observation: the
    /// renderer's state stays as it was).
    pub fn bounds(&mut self, id: TargetId) -> Option<crate::geometry::Rect> {
        let scene = crate::geometry::render_scene!(&self.prog, self.st);
        self.st.geometry.set_observing(true);
        let answer = self.st.geometry.bounds(&scene, id);
        self.st.geometry.set_observing(false);
        answer
    }

    /// The target a click at stage point (x, y) reaches: the topmost visible sprite whose
    /// costume is opaque there, else the stage (scratch-vm `Mouse._pickTarget`).
    pub fn pick(&mut self, x: f64, y: f64) -> TargetId {
        let scene = crate::geometry::render_scene!(&self.prog, self.st);
        let stage = self.st.stage();
        self.st.geometry.pick(&scene, x, y).unwrap_or(stage)
    }

    /// The mouse position and button as the sensing blocks read them.
    pub fn mouse(&self) -> (f64, f64, bool) {
        (self.st.io.mouse_x, self.st.io.mouse_y, self.st.io.mouse_down)
    }

    /// The P10 error of the last step, if scratch-vm would have thrown in it.
    pub fn last_step_error(&self) -> Option<&str> {
        self.st.budget.error.as_ref().map(|e| e.0.as_str())
    }
}
