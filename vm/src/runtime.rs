//! The runtime: live targets, threads and the one-tick-per-step scheduler.
//!
//! The structure mirrors scratch-vm's `Runtime`, `Sequencer` and `Thread` so
//! that its step semantics (see the fidelity oracle's README) carry over one to
//! one: threads hold a stack of frames, a block may yield (run again next tick),
//! start a branch, or finish; loops yield at the end of every iteration unless
//! in warp mode; promises returned by blocks resolve at the microtask
//! checkpoints of a step.
//!
//! Order of operations in step k (fidelity README): (1) clock := now(k);
//! (2) fire due virtual timers; (3) apply the inputs queued since the last
//! step; (4) drain microtasks; (5) `_step`: remove killed threads, start
//! edge-activated hats (they still see `currentMSecs = now(k-1)`), one tick
//! over all threads with `currentMSecs = now(k)`; (6) drain microtasks.

use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

use crate::geometry::{Geometry, NoGeometry};
use crate::instrument::Instrument;
use crate::program::{self, Cmd, Const, HatKind, NONE, Program};
use crate::project::{BlockIdx, Project};
use crate::rng::ProjectRng;
use crate::value::Value;

/// Milliseconds per step: the compatibility (30 fps) frame, as a double.
pub const STEP_MS: f64 = 1000.0 / 30.0;

/// Most clones alive at once (scratch-vm's limit).
pub const MAX_CLONES: u32 = 300;

/// Most frames on one thread's stack; a deeper (runaway recursive) thread ends the step as a hang.
pub const MAX_STACK_DEPTH: usize = 100_000;

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
    /// Record every move (`setXY`) for [`Vm::take_moves`] (test drivers' `onMoved`).
    pub record_moves: bool,
}

impl Default for VmOptions {
    fn default() -> Self {
        Self {
            profile: Profile::Headless,
            seed: 0,
            max_ops_per_step: 5_000_000,
            record_say: false,
            instrument: false,
            record_moves: false,
        }
    }
}

/// Identifies a live target (sprite, clone or stage). Stale ids (deleted clones) are never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TargetId {
    pub(crate) slot: u32,
    pub(crate) gn: u32,
}

/// A thread reference (slot in the thread slab plus generation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ThRef {
    pub slot: u32,
    pub gn: u32,
}

/// An internal value: like [`Value`], plus references to the program's literals.
#[derive(Debug, Clone)]
pub(crate) enum V {
    Num(f64),
    Bool(bool),
    Lit(u32),
    Str(Rc<str>),
    Undef,
    Null,
}

impl V {
    pub fn from_const(c: Const) -> V {
        match c {
            Const::Num(n) => V::Num(n),
            Const::Bool(b) => V::Bool(b),
            Const::Lit(l) => V::Lit(l),
            Const::Undef => V::Undef,
            Const::Null => V::Null,
        }
    }
}

/// Say/think bubble state (scratch-vm's `Scratch.looks` custom state).
#[derive(Debug, Clone)]
pub(crate) struct Bubble {
    pub think: bool,
    /// Formatted bubble text; empty = no bubble.
    pub text: Rc<str>,
    pub usage: u64,
}

/// Pen state of a target (scratch3_pen's custom state).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PenState {
    pub down: bool,
    pub color: f64,
    pub saturation: f64,
    pub brightness: f64,
    pub transparency: f64,
    pub shade: f64,
    pub size: f64,
    /// RGBA in 0..1 (`penAttributes.color4f`).
    pub rgba: [f64; 4],
}

impl Default for PenState {
    fn default() -> Self {
        PenState {
            down: false,
            color: 66.66,
            saturation: 100.0,
            brightness: 100.0,
            transparency: 0.0,
            shade: 50.0,
            size: 1.0,
            rgba: [0.0, 0.0, 1.0, 1.0],
        }
    }
}

/// A live sprite, clone or the stage (read-only outside the VM).
#[derive(Debug, Clone)]
pub struct Target {
    /// Index of its sprite in `Project::targets`.
    pub def: u32,
    /// Whether this is the stage.
    pub is_stage: bool,
    /// Whether this is the original (not a clone).
    pub is_original: bool,
    /// 0 for the original; the n-th clone of a sprite gets n.
    pub clone_index: u32,
    /// Whisker's `cloneID` (its scratch-vm's `cloneRecord`): how many clones of the sprite
    /// were alive right after this one was created; 0 for the original.
    pub clone_id: u32,
    /// Position x.
    pub x: f64,
    /// Position y.
    pub y: f64,
    /// Direction in degrees.
    pub direction: f64,
    /// Size in percent.
    pub size: f64,
    /// Visibility.
    pub visible: bool,
    /// Current costume index.
    pub costume: i64,
    pub(crate) rotation_style: u8,
    pub(crate) draggable: bool,
    pub(crate) volume: f64,
    pub(crate) effects: [f64; 7],
    pub(crate) bubble: Option<Bubble>,
    /// Variables and lists, parallel to the definition's declarations.
    pub(crate) vars: Vec<V>,
    pub(crate) lists: Vec<Vec<V>>,
    /// Variables created at run time (id, name, is_list, slot in vars/lists).
    pub(crate) dyn_vars: Vec<(u32, bool, u32)>,
    /// Edge-activated hat values by hat block.
    pub(crate) edge: Vec<(u32, bool)>,
    pub(crate) sound_effects: [f64; 2],
    pub(crate) pen: PenState,
    pub(crate) instrument: f64,
    pub(crate) voice: u8,
}

/// Scheduler status of a thread (scratch-vm's `Thread.STATUS_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Running,
    PromiseWait,
    Yield,
    YieldTick,
    Done,
}

/// A block's execution context on its frame (scratch-vm `stackFrame.executionContext`).
#[derive(Debug, Clone, Default)]
pub(crate) enum Ctx {
    #[default]
    None,
    /// `repeat` loop counter / `for each` index.
    Counter(f64),
    /// A stack timer: start time and duration (ms).
    Timer { start: f64, duration: f64 },
    /// Whisker's stack timer: the step count it started at and its duration in steps.
    StepTimer { offset: f64, duration: f64 },
    /// A glide in progress.
    Glide(Box<GlideCtx>),
    /// Threads started by `broadcast and wait` / `switch backdrop and wait`.
    Started(Vec<ThRef>),
    /// `procedures_call` has pushed its definition.
    Executed,
}

#[derive(Debug, Clone)]
pub(crate) struct GlideCtx {
    /// Start time (ms); under the `whisker` profile the step count.
    pub start: f64,
    /// Duration (s); under the `whisker` profile in steps.
    pub duration: f64,
    pub sx: f64,
    pub sy: f64,
    pub ex: f64,
    pub ey: f64,
}

/// Saved reporter values of a block waiting for a promise inside its inputs.
#[derive(Debug, Clone)]
pub(crate) struct Replay {
    pub values: Vec<V>,
    pub pending: usize,
    pub resolved: V,
}

/// One level of a thread's stack (scratch-vm `stack[i]` + `stackFrames[i]`).
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    /// Block on this level; `NONE` = a null entry (empty branch).
    pub block: u32,
    pub is_loop: bool,
    pub warp: bool,
    pub ctx: Ctx,
    pub params: Option<Vec<(u32, V)>>,
    pub replay: Option<Box<Replay>>,
}

impl Frame {
    fn new(block: u32, warp: bool) -> Frame {
        Frame { block, is_loop: false, warp, ctx: Ctx::None, params: None, replay: None }
    }
}

/// A running script.
#[derive(Debug, Clone)]
pub(crate) struct Thread {
    pub gn: u32,
    pub used: bool,
    pub target: TargetId,
    pub top: u32,
    pub stack: Vec<Frame>,
    pub status: Status,
    pub killed: bool,
    /// Index in `State::threads`, or [`NOT_LISTED`]: membership and position in O(1).
    pub list_pos: u32,
    /// In the list a tick iterates after a `stop all` (`State::orphans`).
    pub orphaned: bool,
}

/// `Thread::list_pos` of a thread that is not in `State::threads`.
const NOT_LISTED: u32 = u32::MAX;

impl Thread {
    /// `peekStack()`: top block (`NONE` for a null entry), `None` when empty.
    #[inline]
    pub fn peek(&self) -> Option<u32> {
        self.stack.last().map(|f| f.block)
    }
    /// `pushStack`: a new frame inheriting the warp mode of the one below.
    pub fn push(&mut self, block: u32) {
        let warp = self.stack.last().is_some_and(|f| f.warp);
        self.stack.push(Frame::new(block, warp));
    }
    /// `reuseStackForNextBlock`.
    #[inline]
    pub fn reuse_top(&mut self, next: u32) {
        if let Some(f) = self.stack.last_mut() {
            f.block = next;
            f.is_loop = false;
            f.ctx = Ctx::None;
            f.params = None;
            f.replay = None;
        }
    }
    /// `retireThread`.
    pub fn retire(&mut self) {
        self.stack.clear();
        self.status = Status::Done;
    }
    /// Live: non-empty stack and not done.
    pub fn live(&self) -> bool {
        !self.stack.is_empty() && self.status != Status::Done
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

/// An input applied at the start of the next step (fidelity README §7).
#[derive(Debug, Clone)]
pub(crate) enum PendingInput {
    GreenFlag,
    Stop,
    KeyDown(String),
    KeyUp(String),
    MouseMove(f64, f64),
    MouseButton(bool),
    MousePost(f64, f64, bool),
    Click(TargetId),
    ClickSprite(String, u32),
    Drag(TargetId, f64, f64),
    Answer(String),
    Loudness(f64),
    Broadcast(String),
}

/// What resumes a thread waiting for a promise.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Resume {
    /// The block itself returned the promise: move on to the next block.
    Advance,
    /// A reporter in the block's inputs returned it: run the block again.
    Reporter,
}

/// A virtual `setTimeout` (P8).
#[derive(Debug, Clone)]
pub(crate) struct VTimer {
    pub id: u64,
    pub created: f64,
    pub due: f64,
    pub seq: u64,
    pub kind: TimerKind,
}

#[derive(Debug, Clone)]
pub(crate) enum TimerKind {
    /// `say/think for secs` ended.
    Bubble { target: TargetId, usage: u64, think: bool, thread: ThRef },
    /// A sound played until done ended (profiles with sound durations).
    Sound { thread: ThRef },
    /// The Makey Makey "sequence completed" flag resets (100 ms after completion).
    MakeySequence { index: usize },
}

/// A pending `ask`.
#[derive(Debug, Clone)]
pub(crate) struct Question {
    pub text: Rc<str>,
    pub thread: ThRef,
    pub target: TargetId,
    pub was_visible: bool,
    pub was_stage: bool,
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

/// A JS exception scratch-vm would throw inside a step (P10).
#[derive(Debug, Clone)]
pub(crate) struct StepError(pub String);

/// Entries of [`State::render_log`] kept before it is emptied (then the geometry re-checks
/// every target once).
const RENDER_LOG_CAP: usize = 4096;

/// The mutable state of a VM (everything except the shared program).
pub(crate) struct State {
    pub opts: VmOptions,
    pub targets: Vec<(u32, Option<Target>)>,
    pub free_targets: Vec<u32>,
    /// `runtime.targets`: originals in load order, then clones by creation.
    pub rt_targets: Vec<TargetId>,
    /// `runtime.executableTargets`: back (stage) to front.
    pub exec: Vec<TargetId>,
    /// Slots of the targets handed out mutably ([`State::target_mut`]) since `render_log_base`
    /// entries were dropped: the geometry re-checks only these between queries (see
    /// [`crate::geometry::Changes`]). Bounded; a reader left behind checks everything.
    pub render_log: Vec<u32>,
    /// How many log entries were dropped before `render_log[0]`.
    pub render_log_base: u64,
    /// Bumped whenever targets are created or disposed or the layer order (`exec`) changes.
    pub layer_epoch: u64,
    pub clone_count: u32,
    pub clone_serial: Vec<u32>,
    pub slab: Vec<Thread>,
    pub free_slots: Vec<u32>,
    /// `runtime.threads`. Changed only through the `list_*` methods, which keep
    /// `Thread::list_pos` in step.
    pub threads: Vec<ThRef>,
    /// Per target slot: the target occupying it and the threads made for it that may still be
    /// listed. The scans of `startHats` and `stopForTarget` walk these instead of every thread,
    /// which a clone churning inside one warp step makes quadratic.
    by_target: Vec<(TargetId, Vec<ThRef>)>,
    /// The list the current tick iterates after a `stop all` replaced `runtime.threads`.
    pub orphans: Option<Vec<ThRef>>,
    pub in_tick: bool,
    pub active: Option<ThRef>,
    pub rng: ProjectRng,
    pub steps: u64,
    pub clock_now: f64,
    pub current_msecs: f64,
    pub timer_start: f64,
    /// Whisker's `runtime.stepTimer` (profile `whisker`).
    pub step_timer: f64,
    /// The renderer's sprite drawables with bubbles, for Whisker's `layerOrder` (profile
    /// `whisker` only).
    pub draw: Option<crate::whisker::DrawList>,
    pub keys: Vec<Rc<str>>,
    pub mouse_x: f64,
    pub mouse_y: f64,
    pub mouse_down: bool,
    pub answer: Rc<str>,
    pub loudness: f64,
    pub username: Rc<str>,
    pub counter: f64,
    pub questions: VecDeque<Question>,
    pub timers: Vec<VTimer>,
    pub timer_ids: u64,
    pub timer_seq: u64,
    pub last_bubble_timer: Option<u64>,
    pub microtasks: Vec<(ThRef, Resume)>,
    pub usage: u64,
    pub pending: Vec<PendingInput>,
    pub ops: u64,
    /// Block executions of the steps before the current one (with `ops`, the interpreter's
    /// part of [`Vm::work`]).
    pub ops_total: u64,
    /// Reporter evaluations so far (work only: the operation budget counts blocks, as
    /// scratch-vm does).
    pub evals: u64,
    pub hung: bool,
    pub error: Option<StepError>,
    pub executed: Vec<u64>,
    pub unknown: BTreeMap<String, u64>,
    pub stack: Vec<V>,
    pub geometry: Box<dyn Geometry>,
    pub say_log: Option<Vec<SayEvent>>,
    /// Moves since the last `Vm::take_moves` (`VmOptions::record_moves`).
    pub move_log: Option<Vec<crate::external::MoveEvent>>,
    /// Move events carry every sprite's pose (`Vm::record_move_scenes`).
    pub move_scenes: bool,
    /// Threads the last tick counted, running or finished (`Vm::last_step_threads`).
    pub tick_threads: usize,
    pub instrument: Option<Box<Instrument>>,
    pub sound_durations: bool,
    pub tempo: f64,
    pub video_state: u32,
    pub video_transparency: f64,
    pub tts_language: Option<Rc<str>>,
    pub stage_slot: u32,
    /// Branch distances of the condition just evaluated (instrumentation).
    pub cond_dist: Option<(f64, f64)>,
    /// Makey Makey: key sequences in use (upper-cased string, keys, completed).
    pub makey_sequences: Vec<(String, Vec<String>, bool)>,
    /// Makey Makey: recently pressed keys (first word, upper-cased).
    pub makey_buffer: VecDeque<String>,
    /// What each literal used as a `touching` menu value names, once resolved.
    pub touch_cache: Vec<Option<crate::blocks::sensing::Touch>>,
}

/// A deterministic Scratch VM instance running one project.
pub struct Vm {
    pub(crate) project: Arc<Project>,
    pub(crate) prog: Arc<Program>,
    pub(crate) st: State,
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
        Vm { project, prog, st }
    }

    /// A VM with an explicit geometry implementation (any profile).
    pub fn with_geometry(project: Arc<Project>, opts: VmOptions, geometry: Box<dyn Geometry>) -> Self {
        let prog = program_of(&project);
        let st = State::new(&prog, opts, geometry);
        Vm { project, prog, st }
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
        self.st.steps
    }

    /// Work done so far, in machine-independent units (`geometry::cost`): block executions
    /// and reporter evaluations plus the geometry's work (rows searched, pixels tested or
    /// composited, colour-search points, pen pixels). A run's work cap counts this, so a
    /// runaway run ends at the same point on every machine.
    pub fn work(&self) -> u64 {
        use crate::geometry::cost;
        (self.st.ops_total + self.st.ops) * cost::BLOCK + self.st.evals * cost::EVAL + self.st.geometry.work()
    }

    /// Virtual time at the start of step `k`, in ms (IEEE double, as the oracle).
    pub fn now(k: u64) -> f64 {
        k as f64 * STEP_MS
    }

    /// Whether block `idx` has executed since the VM was created.
    pub fn was_executed(&self, idx: BlockIdx) -> bool {
        self.st.executed.get(idx as usize / 64).is_some_and(|w| w & (1u64 << (idx % 64)) != 0)
    }

    /// Bitset of executed blocks (bit `i` of word `i / 64`, `i` = project block index).
    pub fn executed_bits(&self) -> &[u64] {
        &self.st.executed
    }

    /// Opcodes without an implementation that were executed, with counts.
    pub fn unknown_opcodes(&self) -> &BTreeMap<String, u64> {
        &self.st.unknown
    }

    /// Number of live non-monitor threads (the trace's `threads`).
    pub fn live_threads(&self) -> usize {
        self.st
            .threads
            .iter()
            .filter(|&&t| self.st.slab[t.slot as usize].live() && !self.st.slab[t.slot as usize].killed)
            .count()
    }

    /// The `answer` reporter.
    pub fn answer(&self) -> &str {
        &self.st.answer
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
        self.st.exec.iter().copied().find(|&id| {
            self.st.target(id).is_some_and(|t| {
                !t.is_stage && t.clone_index == clone_index && self.prog.lit_str(self.prog.def(t.def).name) == name
            })
        })
    }

    /// Live targets in execution order (front-most sprite first, stage last).
    pub fn targets_in_execution_order(&self) -> impl Iterator<Item = (TargetId, &Target)> + '_ {
        self.st.exec.iter().rev().filter_map(|&id| self.st.target(id).map(|t| (id, t)))
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
        self.st.say_log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The instrumentation data, when enabled.
    pub fn instrument(&self) -> Option<&Instrument> {
        self.st.instrument.as_deref()
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
            V::Num(n) => Value::Num(*n),
            V::Bool(b) => Value::Bool(*b),
            V::Lit(l) => Value::Str(Rc::from(self.prog.lit_str(*l))),
            V::Str(s) => Value::Str(s.clone()),
            V::Undef => Value::Undefined,
            V::Null => Value::Null,
        }
    }

    // ---------------------------------------------------------------- inputs
    // Inputs take effect at the start of the next step, after due timers fired
    // (fidelity README, order of operations), in call order.

    /// Green flag: stop everything, reset the timer, start "when flag clicked".
    pub fn green_flag(&mut self) {
        self.st.pending.push(PendingInput::GreenFlag);
    }

    /// The stop sign: kill all threads, delete clones, clear bubbles and effects.
    pub fn stop_all(&mut self) {
        self.st.pending.push(PendingInput::Stop);
    }

    /// A key goes down (Scratch or DOM key name): starts "when KEY pressed" and "when any key pressed".
    pub fn key_down(&mut self, key: &str) {
        self.st.pending.push(PendingInput::KeyDown(key.to_string()));
    }

    /// A key goes up.
    pub fn key_up(&mut self, key: &str) {
        self.st.pending.push(PendingInput::KeyUp(key.to_string()));
    }

    /// Mouse moves to stage coordinates (rounded and clamped like scratch-vm).
    pub fn mouse_move(&mut self, x: f64, y: f64) {
        self.st.pending.push(PendingInput::MouseMove(x, y));
    }

    /// Mouse button state (no click: clicks are [`Vm::click_target`]).
    pub fn mouse_button(&mut self, down: bool) {
        self.st.pending.push(PendingInput::MouseButton(down));
    }

    /// scratch-vm's `Mouse.postData` with a button state, as a test driver posts a click at
    /// stage point (x, y): the mouse moves there; if the button state changes (and the point
    /// is inside the stage), the target drawn at the point (else the stage) gets its click
    /// hats, on the way down, or on the way up if it is draggable.
    pub fn mouse_post(&mut self, x: f64, y: f64, down: bool) {
        self.st.pending.push(PendingInput::MousePost(x, y, down));
    }

    /// Click on a target (sprite, clone or stage): starts its click hats.
    pub fn click_target(&mut self, id: TargetId) {
        self.st.pending.push(PendingInput::Click(id));
    }

    /// Click on the sprite `name` with `clone_index` (0 = the original), resolved when the
    /// input is applied. Returns whether such a target exists now.
    pub fn click_sprite(&mut self, name: &str, clone_index: u32) -> bool {
        self.st.pending.push(PendingInput::ClickSprite(name.to_string(), clone_index));
        self.find_target(name, clone_index).is_some()
    }

    /// Click on the stage.
    pub fn click_stage(&mut self) {
        let s = self.st.stage();
        self.st.pending.push(PendingInput::Click(s));
    }

    /// Answer the oldest pending `ask`.
    pub fn answer_text(&mut self, text: &str) {
        self.st.pending.push(PendingInput::Answer(text.to_string()));
    }

    /// Set the virtual loudness (−1 = no microphone).
    pub fn set_loudness(&mut self, v: f64) {
        self.st.pending.push(PendingInput::Loudness(v));
    }

    /// Drag a sprite (or clone) to (x, y): the position a drag in the player sets
    /// (`postSpriteInfo` with `force`: fenced by the geometry, no pen line).
    pub fn drag(&mut self, id: TargetId, x: f64, y: f64) {
        self.st.pending.push(PendingInput::Drag(id, x, y));
    }

    /// Broadcast a message by name (case-insensitive), like the oracle's `broadcast` input.
    pub fn broadcast(&mut self, name: &str) {
        self.st.pending.push(PendingInput::Broadcast(name.to_string()));
    }

    /// Runs one step (fidelity README, order of operations).
    pub fn step(&mut self) -> StepOutcome {
        let out = self.st.step(&self.prog);
        if out == StepOutcome::Hang {
            // Nothing of the hung step survives: stop everything so later steps are quiet.
            self.st.stop_all(&self.prog);
            self.st.hung = false;
        }
        out
    }

    /// Time-based blocks threads are waiting in now (`wait`, `glide`, `say/think for
    /// secs`, music beats, `play sound until done` with sound durations), with the
    /// virtual time left (counted from the start of the next step) and their duration.
    pub fn waiting_blocks(&self) -> Vec<Waiting> {
        let st = &self.st;
        let prog = &*self.prog;
        let now = Vm::now(st.steps);
        let mut out = Vec::new();
        for &t in &st.threads {
            let th = st.th(t);
            if !th.live() || th.killed {
                continue;
            }
            let Some(f) = th.stack.last() else { continue };
            let Some(b) = prog.blocks.get(f.block as usize) else { continue };
            let steps = st.steps as f64;
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
                (Cmd::SayForSecs { .. } | Cmd::PlaySound { .. }, _) => match st.timers.iter().find(|x| match x.kind {
                    TimerKind::Bubble { thread, .. } | TimerKind::Sound { thread } => thread == t,
                    TimerKind::MakeySequence { .. } => false,
                }) {
                    Some(x) => (x.due - now, x.due - x.created),
                    None => continue,
                },
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
            .iter()
            .map(|&t| self.st.th(t))
            .filter(|th| th.live() && !th.killed)
            .map(|th| (th.target, th.top))
            .collect()
    }

    /// Whether an `ask` is waiting for an answer.
    pub fn question_pending(&self) -> bool {
        !self.st.questions.is_empty()
    }

    /// Bounds of a target as drawn, when the geometry knows them.
    pub fn bounds(&mut self, id: TargetId) -> Option<crate::geometry::Rect> {
        let scene = crate::geometry::render_scene!(&self.prog, self.st);
        self.st.geometry.bounds(&scene, id)
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
        (self.st.mouse_x, self.st.mouse_y, self.st.mouse_down)
    }

    /// The P10 error of the last step, if scratch-vm would have thrown in it.
    pub fn last_step_error(&self) -> Option<&str> {
        self.st.error.as_ref().map(|e| e.0.as_str())
    }
}

impl State {
    fn new(prog: &Program, opts: VmOptions, geometry: Box<dyn Geometry>) -> State {
        let n_defs = prog.defs.len();
        let mut st = State {
            rng: ProjectRng::new(opts.profile, opts.seed),
            say_log: if opts.record_say { Some(Vec::new()) } else { None },
            move_log: if opts.record_moves { Some(Vec::new()) } else { None },
            move_scenes: false,
            tick_threads: 0,
            instrument: if opts.instrument { Some(Box::new(Instrument::new(prog))) } else { None },
            sound_durations: opts.profile != Profile::Headless,
            opts,
            targets: Vec::with_capacity(n_defs),
            free_targets: Vec::new(),
            rt_targets: Vec::with_capacity(n_defs),
            exec: Vec::with_capacity(n_defs),
            render_log: Vec::new(),
            render_log_base: 0,
            layer_epoch: 0,
            clone_count: 0,
            clone_serial: vec![1; n_defs],
            slab: Vec::new(),
            free_slots: Vec::new(),
            threads: Vec::new(),
            by_target: Vec::new(),
            orphans: None,
            in_tick: false,
            active: None,
            steps: 0,
            clock_now: 0.0,
            current_msecs: 0.0,
            timer_start: 0.0,
            step_timer: 0.0,
            draw: None,
            keys: Vec::new(),
            mouse_x: 0.0,
            // The oracle posts the mouse at the stage centre: y = round(-360 * (0.5 - 0.5)) = -0.
            mouse_y: -0.0,
            mouse_down: false,
            answer: Rc::from(""),
            loudness: -1.0,
            username: Rc::from(""),
            counter: 0.0,
            questions: VecDeque::new(),
            timers: Vec::new(),
            timer_ids: 0,
            timer_seq: 0,
            last_bubble_timer: None,
            microtasks: Vec::new(),
            usage: 0,
            pending: Vec::new(),
            ops: 0,
            ops_total: 0,
            evals: 0,
            hung: false,
            error: None,
            executed: vec![0u64; prog.blocks.len().div_ceil(64)],
            unknown: BTreeMap::new(),
            stack: Vec::with_capacity(64),
            geometry,
            tempo: 60.0,
            video_state: 0,
            video_transparency: 50.0,
            tts_language: None,
            stage_slot: prog.stage,
            cond_dist: None,
            makey_sequences: Vec::new(),
            makey_buffer: VecDeque::new(),
            touch_cache: Vec::new(),
        };
        for (d, def) in prog.defs.iter().enumerate() {
            let mut vars = Vec::new();
            let mut lists = Vec::new();
            for v in &def.vars {
                if v.is_list {
                    vars.push(V::Undef);
                    lists.push(v.items.iter().map(|c| V::from_const(*c)).collect());
                } else {
                    vars.push(V::from_const(v.value));
                    lists.push(Vec::new());
                }
            }
            let t = Target {
                def: d as u32,
                is_stage: def.is_stage,
                is_original: true,
                clone_index: 0,
                clone_id: 0,
                x: def.x,
                y: def.y,
                direction: def.direction,
                size: def.size,
                visible: def.visible,
                costume: def.costume,
                rotation_style: def.rotation_style,
                draggable: def.draggable,
                volume: def.volume,
                effects: [0.0; 7],
                bubble: None,
                vars,
                lists,
                dyn_vars: Vec::new(),
                edge: Vec::new(),
                sound_effects: [0.0; 2],
                pen: PenState::default(),
                instrument: 0.0,
                voice: 0,
            };
            if def.is_stage {
                st.tempo = def.tempo;
                st.video_transparency = def.video_transparency;
                st.video_state = def.video_state;
            }
            st.targets.push((0, Some(t)));
            st.rt_targets.push(TargetId { slot: d as u32, gn: 0 });
        }
        st.exec = prog.layer_order.iter().map(|&d| TargetId { slot: d, gn: 0 }).collect();
        if st.whisker() {
            let stage = st.stage();
            let sprites = st.exec.iter().copied().filter(|&id| id != stage);
            st.draw = Some(crate::whisker::DrawList::new(sprites, prog.pen_loaded));
        }
        st
    }

    #[inline]
    pub fn target(&self, id: TargetId) -> Option<&Target> {
        match self.targets.get(id.slot as usize) {
            Some((g, Some(t))) if *g == id.gn => Some(t),
            _ => None,
        }
    }

    #[inline]
    pub fn target_mut(&mut self, id: TargetId) -> Option<&mut Target> {
        // Every change to a live target goes through here: log it for the geometry.
        if self.render_log.len() >= RENDER_LOG_CAP {
            self.render_log_base += self.render_log.len() as u64;
            self.render_log.clear();
        }
        self.render_log.push(id.slot);
        match self.targets.get_mut(id.slot as usize) {
            Some((g, Some(t))) if *g == id.gn => Some(t),
            _ => None,
        }
    }

    /// `runtime.getTargetForStage()` (the first stage in load order; never deleted).
    #[inline]
    pub fn stage(&self) -> TargetId {
        TargetId { slot: self.stage_slot, gn: 0 }
    }

    /// The `timer` reporter: the project timer, or Whisker's step timer.
    pub fn timer_value(&self) -> f64 {
        if self.whisker() { self.step_timer } else { self.clock_timer() }
    }

    /// The clock device's project timer (`when timer >` reads it, also under Whisker, whose
    /// fork left it on the real clock; here it is the virtual one).
    pub fn clock_timer(&self) -> f64 {
        (self.current_msecs - self.timer_start) / 1000.0
    }

    /// Whether the `whisker` profile's rules apply ([`crate::whisker`]).
    #[inline]
    pub fn whisker(&self) -> bool {
        self.opts.profile == Profile::Whisker
    }

    /// A `uid()` of scratch-vm: under Whisker it consumes the project's stream.
    pub fn uid_draws(&mut self) {
        if self.whisker() {
            for _ in 0..crate::whisker::UID_DRAWS {
                self.rng.next_f64();
            }
        }
    }

    #[inline]
    pub fn th(&self, t: ThRef) -> &Thread {
        &self.slab[t.slot as usize]
    }

    #[inline]
    pub fn thm(&mut self, t: ThRef) -> &mut Thread {
        &mut self.slab[t.slot as usize]
    }

    /// Whether `t` still names the thread object it was taken from.
    #[inline]
    pub fn th_valid(&self, t: ThRef) -> bool {
        self.slab.get(t.slot as usize).is_some_and(|x| x.used && x.gn == t.gn)
    }

    /// `runtime.threads.indexOf(thread) !== -1`.
    pub fn in_list(&self, t: ThRef) -> bool {
        self.th_valid(t) && self.th(t).list_pos != NOT_LISTED
    }

    /// `runtime.threads.push(thread)` of a new thread.
    fn list_push(&mut self, t: ThRef) {
        self.thm(t).list_pos = self.threads.len() as u32;
        self.threads.push(t);
    }

    /// `runtime.threads[pos] = thread` (a restarted script).
    fn list_replace(&mut self, pos: usize, t: ThRef) {
        if let Some(old) = self.threads.get(pos).copied() {
            self.thm(old).list_pos = NOT_LISTED;
            self.thm(t).list_pos = pos as u32;
            self.threads[pos] = t;
        }
    }

    /// `runtime.threads = runtime.threads.filter(keep)`.
    fn list_retain(&mut self, keep: fn(&Thread) -> bool) {
        let mut n = 0usize;
        for i in 0..self.threads.len() {
            let t = self.threads[i];
            let th = &mut self.slab[t.slot as usize];
            if keep(th) {
                th.list_pos = n as u32;
                self.threads[n] = t;
                n += 1;
            } else {
                th.list_pos = NOT_LISTED;
            }
        }
        self.threads.truncate(n);
    }

    /// Empties `runtime.threads`; with `to_orphans` the current tick keeps iterating the old list.
    fn list_clear(&mut self, to_orphans: bool) {
        for &t in &self.threads {
            let th = &mut self.slab[t.slot as usize];
            th.list_pos = NOT_LISTED;
            th.orphaned = to_orphans;
        }
        if to_orphans {
            self.orphans = Some(std::mem::take(&mut self.threads));
        } else {
            self.threads.clear();
        }
    }

    /// The end of a tick's iteration over the list a `stop all` replaced.
    fn drop_orphans(&mut self) {
        if let Some(o) = self.orphans.take() {
            for t in o {
                self.slab[t.slot as usize].orphaned = false;
            }
        }
    }

    /// The threads of `id` that are in `runtime.threads` or the orphaned list (plus, until the
    /// next [`State::prune_threads_of`], some that left them).
    fn threads_of(&self, id: TargetId) -> &[ThRef] {
        match self.by_target.get(id.slot as usize) {
            Some((owner, v)) if *owner == id => v,
            _ => &[],
        }
    }

    /// Drops index entries of `id` that can never be listed again: a thread that leaves
    /// `runtime.threads` (and the orphaned list) never comes back.
    fn prune_threads_of(&mut self, id: TargetId) {
        let slab = &self.slab;
        if let Some((owner, v)) = self.by_target.get_mut(id.slot as usize)
            && *owner == id
        {
            v.retain(|t| {
                let th = &slab[t.slot as usize];
                th.used && th.gn == t.gn && (th.list_pos != NOT_LISTED || th.orphaned)
            });
        }
    }

    /// `runtime.isWaitingThread(thread)`.
    pub fn is_waiting_thread(&self, t: ThRef) -> bool {
        if !self.in_list(t) {
            return true;
        }
        let th = self.th(t);
        th.status == Status::PromiseWait || th.status == Status::YieldTick || !th.live()
    }

    fn new_thread(&mut self, target: TargetId, top: u32) -> ThRef {
        let mut th = Thread {
            gn: 0,
            used: true,
            target,
            top,
            stack: Vec::with_capacity(4),
            status: Status::Running,
            killed: false,
            list_pos: NOT_LISTED,
            orphaned: false,
        };
        th.stack.push(Frame::new(top, false));
        let r = match self.free_slots.pop() {
            Some(slot) => {
                let gn = self.slab[slot as usize].gn.wrapping_add(1);
                th.gn = gn;
                // Reuse the frame allocation of the dead thread.
                let old = std::mem::take(&mut self.slab[slot as usize].stack);
                if old.capacity() > th.stack.capacity() {
                    let mut s = old;
                    s.clear();
                    s.push(Frame::new(top, false));
                    th.stack = s;
                }
                self.slab[slot as usize] = th;
                ThRef { slot, gn }
            }
            None => {
                self.slab.push(th);
                ThRef { slot: (self.slab.len() - 1) as u32, gn: 0 }
            }
        };
        let ts = target.slot as usize;
        if self.by_target.len() <= ts {
            self.by_target.resize_with(ts + 1, || (target, Vec::new()));
        }
        let entry = &mut self.by_target[ts];
        // A slot's previous occupant was disposed: its threads were stopped then, and no new
        // thread can start for it, so its entries are never needed again.
        if entry.0 != target {
            entry.0 = target;
            entry.1.clear();
        }
        entry.1.push(r);
        r
    }

    /// Frees thread objects no list, tick or reference can reach any more.
    fn sweep_threads(&mut self) {
        if self.slab.len() - self.free_slots.len() == self.threads.len() {
            return;
        }
        let mut keep = vec![false; self.slab.len()];
        for t in &self.threads {
            keep[t.slot as usize] = true;
        }
        for (i, th) in self.slab.iter_mut().enumerate() {
            if th.used && !keep[i] {
                th.used = false;
                th.stack.clear();
                self.free_slots.push(i as u32);
            }
        }
        let slab = &self.slab;
        for (_, v) in &mut self.by_target {
            v.retain(|t| slab[t.slot as usize].used && slab[t.slot as usize].gn == t.gn);
        }
    }

    /// Test builds check the bookkeeping the hat and stop scans rely on after every step:
    /// positions match the list, and every listed thread is indexed under its target.
    fn check_thread_index(&self) {
        if !cfg!(debug_assertions) {
            return;
        }
        for (i, &t) in self.threads.iter().enumerate() {
            let th = self.th(t);
            assert_eq!(th.list_pos as usize, i, "a thread's list position is stale");
            assert!(self.threads_of(th.target).contains(&t), "a listed thread is missing from its target's index");
        }
        let listed = self.slab.iter().filter(|th| th.used && th.list_pos != NOT_LISTED).count();
        assert_eq!(listed, self.threads.len(), "a thread outside the list claims a list position");
        assert!(self.orphans.is_none() && self.slab.iter().all(|th| !th.orphaned), "orphans outlived their tick");
    }

    /// Pending one-shot timers, plus the video-sensing frame loop (always re-armed).
    pub fn pending_timeouts(&self, prog: &Program) -> usize {
        self.timers.len() + usize::from(prog.video_loaded)
    }

    // ------------------------------------------------------------------ step

    pub fn step(&mut self, prog: &Program) -> StepOutcome {
        let k = self.steps;
        if let Some(ins) = &mut self.instrument {
            ins.new_step();
        }
        self.clock_now = k as f64 * STEP_MS;
        self.ops_total += self.ops;
        self.ops = 0;
        self.error = None;
        self.fire_timers(prog);
        self.apply_pending(prog);
        if !self.hung {
            self.runtime_step(prog);
            // The fork adds to its step timer at the end of `_step` (an exception skips it).
            if self.whisker() && !self.hung && self.error.is_none() {
                self.step_timer += crate::whisker::TIMER_INCREMENT;
            }
        }
        self.steps += 1;
        if self.hung {
            return StepOutcome::Hang;
        }
        self.drain_microtasks(prog);
        self.sweep_threads();
        self.check_thread_index();
        StepOutcome::Ran
    }

    /// Applies the queued inputs in call order, then drains microtasks.
    pub fn apply_pending(&mut self, prog: &Program) {
        let pending = std::mem::take(&mut self.pending);
        for inp in pending {
            self.apply_input(prog, inp);
            if self.hung {
                break;
            }
        }
        self.drain_microtasks(prog);
    }

    /// scratch-vm `Runtime._step`.
    fn runtime_step(&mut self, prog: &Program) {
        // Threads told to stop since the last step go first.
        self.list_retain(|th| !th.killed);
        if prog.has_edge_hats {
            // `for (hatType in this._hats)`: core hats, then extension hats in load order.
            for &k in &prog.edge_order {
                self.start_hats(prog, k, None, None);
                if self.hung {
                    return;
                }
            }
        }
        self.step_threads(prog);
    }

    /// scratch-vm `Sequencer.stepThreads` with exactly one tick.
    fn step_threads(&mut self, prog: &Program) {
        self.current_msecs = self.clock_now;
        self.tick_threads = 0;
        if self.threads.is_empty() {
            return;
        }
        self.in_tick = true;
        self.drop_orphans();
        let mut stopped = false;
        let mut i = 0usize;
        loop {
            let t = match &self.orphans {
                Some(o) => match o.get(i) {
                    Some(t) => *t,
                    None => break,
                },
                None => match self.threads.get(i) {
                    Some(t) => *t,
                    None => break,
                },
            };
            i += 1;
            {
                let th = self.th(t);
                if th.stack.is_empty() || th.status == Status::Done {
                    stopped = true;
                    continue;
                }
            }
            if self.th(t).status == Status::YieldTick {
                self.thm(t).status = Status::Running;
            }
            let st = self.th(t).status;
            if st == Status::Running || st == Status::Yield {
                self.active = Some(t);
                self.step_thread(prog, t);
                if self.hung || self.error.is_some() {
                    // The exception aborts the rest of the step (P10): no filtering.
                    self.in_tick = false;
                    self.drop_orphans();
                    return;
                }
            }
            let th = self.th(t);
            if th.stack.is_empty() || th.status == Status::Done {
                stopped = true;
            }
        }
        self.active = None;
        self.in_tick = false;
        self.drop_orphans();
        // Running and finished threads alike (scratch-vm adds `doneThreads` back).
        self.tick_threads = self.threads.len();
        if stopped {
            self.list_retain(Thread::live);
        }
    }

    /// scratch-vm `Sequencer.stepThread`.
    fn step_thread(&mut self, prog: &Program, t: ThRef) {
        if self.th(t).peek() == Some(NONE) {
            let th = self.thm(t);
            th.stack.pop();
            if th.stack.is_empty() {
                th.status = Status::Done;
                return;
            }
        }
        loop {
            let cur = match self.th(t).peek() {
                Some(b) if b != NONE => b,
                _ => return,
            };
            let mut warp = self.th(t).stack.last().is_some_and(|f| f.warp);
            crate::blocks::execute(self, prog, t);
            if self.hung || self.error.is_some() {
                return;
            }
            match self.th(t).status {
                Status::Yield => {
                    self.thm(t).status = Status::Running;
                    if warp {
                        continue;
                    }
                    return;
                }
                Status::PromiseWait | Status::YieldTick => return,
                _ => {}
            }
            let th = self.thm(t);
            if th.peek() == Some(cur) {
                let next = prog.blocks.get(cur as usize).map_or(NONE, |b| b.next);
                th.reuse_top(next);
            }
            loop {
                match th.peek() {
                    Some(b) if b != NONE => break,
                    _ => {}
                }
                th.stack.pop();
                let Some(f) = th.stack.last() else {
                    th.status = Status::Done;
                    return;
                };
                warp = f.warp;
                if f.is_loop {
                    if !warp {
                        return;
                    }
                    continue;
                }
                let b = f.block;
                let next = prog.blocks.get(b as usize).map_or(NONE, |x| x.next);
                th.reuse_top(next);
            }
            let _ = warp;
        }
    }

    /// Moves a thread whose block's promise resolved on to the next block
    /// (scratch-vm `handlePromise`'s continuation).
    fn resume_advance(&mut self, prog: &Program, t: ThRef) {
        let th = self.thm(t);
        th.status = Status::Running;
        let mut next;
        loop {
            let popped = th.stack.pop().map(|f| f.block);
            next = match popped {
                Some(b) if b != NONE => prog.blocks.get(b as usize).map_or(NONE, |x| x.next),
                _ => NONE,
            };
            if next != NONE {
                break;
            }
            match th.stack.last() {
                Some(f) if !f.is_loop => continue,
                _ => break,
            }
        }
        th.push(next);
    }

    pub fn drain_microtasks(&mut self, prog: &Program) {
        while !self.microtasks.is_empty() {
            let tasks = std::mem::take(&mut self.microtasks);
            for (t, r) in tasks {
                if !self.th_valid(t) {
                    continue;
                }
                match r {
                    Resume::Advance => {
                        if self.th(t).killed || self.th(t).stack.is_empty() {
                            self.thm(t).status = Status::Running;
                            continue;
                        }
                        self.resume_advance(prog, t);
                    }
                    Resume::Reporter => self.thm(t).status = Status::Running,
                }
            }
        }
    }

    // ---------------------------------------------------------------- timers

    pub fn add_timer(&mut self, delay: f64, kind: TimerKind) -> u64 {
        // Node/browser coercion of the delay.
        let d = if (1.0..=2147483647.0).contains(&delay) { delay } else { 1.0 };
        self.timer_ids += 1;
        self.timer_seq += 1;
        let id = self.timer_ids;
        self.timers.push(VTimer { id, created: self.clock_now, due: self.clock_now + d, seq: self.timer_seq, kind });
        id
    }

    fn fire_timers(&mut self, prog: &Program) {
        loop {
            let now = self.clock_now;
            let best = self
                .timers
                .iter()
                .enumerate()
                .filter(|(_, t)| t.due <= now)
                .min_by(|a, b| a.1.due.total_cmp(&b.1.due).then(a.1.seq.cmp(&b.1.seq)))
                .map(|(i, _)| i);
            let Some(i) = best else { return };
            let timer = self.timers.remove(i);
            match timer.kind {
                TimerKind::Bubble { target, usage, think, thread } => {
                    self.last_bubble_timer = None;
                    if self.target(target).and_then(|t| t.bubble.as_ref()).is_some_and(|b| b.usage == usage) {
                        self.update_bubble(prog, target, think, V::Lit(prog.lit_empty));
                    }
                    self.microtasks.push((thread, Resume::Advance));
                }
                TimerKind::Sound { thread } => self.microtasks.push((thread, Resume::Advance)),
                TimerKind::MakeySequence { index } => {
                    if let Some(s) = self.makey_sequences.get_mut(index) {
                        s.2 = false;
                    }
                }
            }
        }
    }

    // ---------------------------------------------------------------- inputs

    fn apply_input(&mut self, prog: &Program, inp: PendingInput) {
        match inp {
            PendingInput::GreenFlag => self.green_flag(prog),
            PendingInput::Stop => self.stop_all(prog),
            PendingInput::KeyDown(k) => {
                let key = scratch_key(&dom_key(&k));
                if key.is_empty() {
                    return;
                }
                let up = crate::value::js_to_upper(&key);
                self.start_hats(prog, HatKind::Key, Some(&up), None);
                self.start_hats(prog, HatKind::Key, Some("ANY"), None);
                if prog.makey_loaded {
                    self.makey_key_pressed(&key);
                }
                if !self.keys.iter().any(|x| **x == *key) {
                    self.keys.push(Rc::from(key.as_str()));
                }
            }
            PendingInput::KeyUp(k) => {
                let key = scratch_key(&dom_key(&k));
                if key.is_empty() {
                    return;
                }
                if let Some(i) = self.keys.iter().position(|x| **x == *key) {
                    self.keys.remove(i);
                }
            }
            PendingInput::MouseMove(x, y) => {
                let cx = x + 240.0;
                let cy = 180.0 - y;
                // scratch-vm ignores a falsy coordinate (0 or NaN after the offset).
                if cx != 0.0 && !cx.is_nan() {
                    self.mouse_x =
                        crate::value::js_round(crate::value::clamp(480.0 * ((cx / 480.0) - 0.5), -240.0, 240.0));
                }
                if cy != 0.0 && !cy.is_nan() {
                    self.mouse_y =
                        crate::value::js_round(crate::value::clamp(-360.0 * ((cy / 360.0) - 0.5), -180.0, 180.0));
                }
            }
            PendingInput::MouseButton(d) => self.mouse_down = d,
            PendingInput::MousePost(x, y, down) => {
                self.apply_input(prog, PendingInput::MouseMove(x, y));
                let before = self.mouse_down;
                self.mouse_down = down;
                let (cx, cy) = (x + 240.0, 180.0 - y);
                if before == down || !(cx > 0.0 && cx < 480.0 && cy > 0.0 && cy < 360.0) {
                    return;
                }
                let scene = crate::geometry::render_scene!(prog, self);
                let target = self.geometry.pick(&scene, x, y).unwrap_or_else(|| self.stage());
                // Draggable sprites are clicked on mouse up, the others on mouse down.
                let draggable = self.target(target).is_some_and(|t| t.draggable && !t.is_stage);
                if draggable != down {
                    self.start_hats(prog, HatKind::SpriteClicked, None, Some(target));
                    self.start_hats(prog, HatKind::StageClicked, None, Some(target));
                }
            }
            PendingInput::Click(id) => {
                if self.target(id).is_none() {
                    return;
                }
                self.start_hats(prog, HatKind::SpriteClicked, None, Some(id));
                self.start_hats(prog, HatKind::StageClicked, None, Some(id));
            }
            PendingInput::ClickSprite(name, clone) => {
                let found = self.exec.iter().copied().find(|&id| {
                    self.target(id).is_some_and(|t| {
                        !t.is_stage && t.clone_index == clone && prog.lit_str(prog.def(t.def).name) == name
                    })
                });
                if let Some(id) = found {
                    self.start_hats(prog, HatKind::SpriteClicked, None, Some(id));
                    self.start_hats(prog, HatKind::StageClicked, None, Some(id));
                }
            }
            PendingInput::Answer(text) => self.on_answer(prog, Rc::from(text.as_str())),
            PendingInput::Drag(id, x, y) => self.drag_to(prog, id, x, y),
            PendingInput::Loudness(v) => self.loudness = v,
            PendingInput::Broadcast(name) => {
                let stage = self.stage();
                let d = self.target(stage).map_or(prog.stage, |t| t.def);
                let lower = crate::value::js_to_lower(&name);
                let found = prog
                    .def(d)
                    .broadcasts
                    .iter()
                    .find(|(_, n)| crate::value::js_to_lower(n) == lower)
                    .map(|(_, n)| n.to_string());
                let up = crate::value::js_to_upper(found.as_deref().unwrap_or(&name));
                self.start_hats(prog, HatKind::Broadcast, Some(&up), None);
            }
        }
    }

    /// scratch-vm `Runtime.greenFlag`.
    pub fn green_flag(&mut self, prog: &Program) {
        self.stop_all(prog);
        // PROJECT_START: answer reset, sound effects cleared.
        self.answer = Rc::from("");
        for id in self.rt_targets.clone() {
            if let Some(t) = self.target_mut(id) {
                t.sound_effects = [0.0; 2];
            }
        }
        self.timer_start = self.current_msecs;
        for id in self.rt_targets.clone() {
            if let Some(t) = self.target_mut(id) {
                t.edge.clear();
                t.effects = [0.0; 7];
            }
        }
        self.start_hats(prog, HatKind::Flag, None, None);
    }

    /// scratch-vm `Runtime.stopAll`.
    pub fn stop_all(&mut self, prog: &Program) {
        // PROJECT_STOP_ALL: bubbles reset (and the last say-for-secs timer cleared),
        // questions dropped, sound effects cleared.
        for id in self.rt_targets.clone() {
            if let Some(t) = self.target_mut(id) {
                if let Some(b) = &mut t.bubble {
                    b.text = Rc::from("");
                }
                t.sound_effects = [0.0; 2];
            }
        }
        if let Some(id) = self.last_bubble_timer.take() {
            self.timers.retain(|t| t.id != id);
        }
        if let Some(d) = &mut self.draw {
            d.clear_bubbles();
        }
        self.questions.clear();
        self.makey_buffer.clear();
        // Dispose clones; every target clears its graphic effects.
        let all = self.rt_targets.clone();
        for id in all {
            let is_clone = match self.target_mut(id) {
                Some(t) => {
                    t.effects = [0.0; 7];
                    !t.is_original
                }
                None => false,
            };
            if is_clone {
                self.dispose_clone(prog, id);
            }
        }
        if let Some(a) = self.active {
            let th = self.thm(a);
            th.killed = true;
            th.retire();
        }
        // In a tick, the first `stop all` leaves the tick iterating the old list.
        let to_orphans = self.in_tick && self.orphans.is_none();
        self.list_clear(to_orphans);
    }

    // ------------------------------------------------------------------ hats

    /// scratch-vm `Runtime.startHats`. `field` is already upper-cased.
    pub fn start_hats(
        &mut self,
        prog: &Program,
        kind: HatKind,
        field: Option<&str>,
        only: Option<TargetId>,
    ) -> Vec<ThRef> {
        let mut started: Vec<ThRef> = Vec::new();
        let restart = kind.restarts();
        let n = match only {
            Some(_) => 1,
            None => self.exec.len(),
        };
        for k in 0..n {
            let tid = match only {
                Some(t) => t,
                None => match self.exec.get(n - 1 - k) {
                    Some(t) => *t,
                    None => continue,
                },
            };
            let Some(def) = self.target(tid).map(|t| t.def) else { continue };
            let scripts = &prog.def(def).hats[kind.index()];
            for s in scripts {
                if let Some(f) = field
                    && s.field.as_deref() != Some(f)
                {
                    continue;
                }
                let top = s.top;
                // The first listed thread of this script (the list position orders them).
                let mut first: Option<u32> = None;
                let mut running = false;
                self.prune_threads_of(tid);
                for &t in self.threads_of(tid) {
                    let th = &self.slab[t.slot as usize];
                    if th.top != top || th.list_pos == NOT_LISTED {
                        continue;
                    }
                    running |= th.status != Status::Done;
                    if first.is_none_or(|p| th.list_pos < p) {
                        first = Some(th.list_pos);
                    }
                }
                if restart {
                    if let Some(pos) = first {
                        let nt = self.new_thread(tid, top);
                        self.list_replace(pos as usize, nt);
                        started.push(nt);
                        continue;
                    }
                } else if running {
                    continue;
                }
                let nt = self.new_thread(tid, top);
                self.list_push(nt);
                started.push(nt);
            }
        }
        if let Some(ins) = &mut self.instrument {
            for &t in &started {
                ins.hat_started(self.slab[t.slot as usize].top);
            }
        }
        // Hats are executed right away (predicates of edge-activated hats), then the
        // threads move on to the block after the hat.
        for &t in &started {
            crate::blocks::execute(self, prog, t);
            let th = self.thm(t);
            let top = th.peek();
            if let Some(b) = top
                && b != NONE
            {
                let next = prog.blocks.get(b as usize).map_or(NONE, |x| x.next);
                th.reuse_top(next);
            }
        }
        started
    }

    // ---------------------------------------------------------------- clones

    /// `makeClone` + the create-clone block: a clone of `of` placed behind `behind`.
    pub fn create_clone(&mut self, prog: &Program, of: TargetId) -> Option<TargetId> {
        let src = self.target(of)?;
        if src.is_stage || self.clone_count >= MAX_CLONES {
            return None;
        }
        let def = src.def as usize;
        // `new RenderedTarget` takes a `uid()`.
        self.uid_draws();
        self.clone_count += 1;
        let serial = self.clone_serial.get(def).copied().unwrap_or(1);
        if let Some(s) = self.clone_serial.get_mut(def) {
            *s += 1;
        }
        let src = self.target(of)?;
        let clone_id = 1 + self
            .rt_targets
            .iter()
            .filter(|&&id| self.target(id).is_some_and(|t| t.def == src.def && !t.is_original))
            .count() as u32;
        let clone = Target {
            def: src.def,
            is_stage: false,
            is_original: false,
            clone_index: serial,
            clone_id,
            x: src.x,
            y: src.y,
            direction: src.direction,
            size: src.size,
            visible: src.visible,
            costume: src.costume,
            rotation_style: src.rotation_style,
            draggable: src.draggable,
            volume: 100.0,
            effects: src.effects,
            bubble: None,
            vars: src.vars.clone(),
            lists: src.lists.clone(),
            dyn_vars: src.dyn_vars.clone(),
            edge: src.edge.clone(),
            sound_effects: self.original_of(src.def).map_or([0.0; 2], |o| o.sound_effects),
            pen: self.original_of(src.def).map_or(PenState::default(), |o| o.pen),
            instrument: self.original_of(src.def).map_or(0.0, |o| o.instrument),
            voice: self.original_of(src.def).map_or(0, |o| o.voice),
        };
        let id = match self.free_targets.pop() {
            Some(slot) => {
                let e = &mut self.targets[slot as usize];
                e.0 = e.0.wrapping_add(1);
                e.1 = Some(clone);
                TargetId { slot, gn: e.0 }
            }
            None => {
                self.targets.push((0, Some(clone)));
                TargetId { slot: (self.targets.len() - 1) as u32, gn: 0 }
            }
        };
        // `initDrawable` starts "when I start as a clone" before the clone is added.
        self.start_hats(prog, HatKind::CloneStart, None, Some(id));
        self.rt_targets.push(id);
        self.exec.push(id);
        self.layer_epoch += 1;
        // goBehindOther(of)
        let pos = self.exec.iter().position(|&x| x == of).unwrap_or(0);
        self.set_executable_position(id, pos as f64);
        if let Some(d) = &mut self.draw {
            d.add_clone(id, of);
        }
        Some(id)
    }

    /// The original target of a sprite definition.
    fn original_of(&self, def: u32) -> Option<&Target> {
        self.targets.get(def as usize).and_then(|(_, t)| t.as_ref()).filter(|t| t.is_original && t.def == def)
    }

    /// `RenderedTarget.dispose` of a clone (also `control_delete_this_clone`).
    pub fn dispose_clone(&mut self, prog: &Program, id: TargetId) {
        let Some(t) = self.target(id) else { return };
        if t.is_original {
            return;
        }
        self.clone_count = self.clone_count.saturating_sub(1);
        self.stop_for_target(prog, id, None);
        self.exec.retain(|&x| x != id);
        if let Some(d) = &mut self.draw {
            d.remove(id);
        }
        self.layer_epoch += 1;
        self.rt_targets.retain(|&x| x != id);
        if let Some(e) = self.targets.get_mut(id.slot as usize) {
            e.1 = None;
            self.free_targets.push(id.slot);
        }
    }

    /// scratch-vm `Runtime.stopForTarget`.
    pub fn stop_for_target(&mut self, prog: &Program, id: TargetId, except: Option<ThRef>) {
        // STOP_FOR_TARGET: questions of the target are dropped.
        let asking = self.questions.front().is_some_and(|q| q.target == id);
        self.questions.retain(|q| q.target != id);
        if asking {
            self.emit_say(prog, id, false, V::Lit(prog.lit_empty));
            self.ask_next(prog);
        }
        // Threads the current tick iterates after a `stop all` are stopped too.
        self.prune_threads_of(id);
        let Some((_, ts)) = self.by_target.get(id.slot as usize).filter(|(owner, _)| *owner == id) else { return };
        for &t in ts {
            let th = &mut self.slab[t.slot as usize];
            if Some(t) != except {
                th.killed = true;
                th.retire();
            }
        }
    }

    /// `runtime.moveExecutable`.
    pub fn move_executable(&mut self, id: TargetId, delta: f64) {
        let Some(old) = self.exec.iter().position(|&x| x == id) else { return };
        self.layer_epoch += 1;
        self.exec.remove(old);
        let len = self.exec.len();
        let mut ni = old as f64 + delta;
        if ni > len as f64 {
            ni = len as f64;
        }
        if ni <= 0.0 {
            let stage_first = self.exec.first().is_some_and(|&x| self.target(x).is_some_and(|t| t.is_stage));
            ni = if len > 0 && stage_first { 1.0 } else { 0.0 };
        }
        let idx = crate::value::splice_index(ni, len);
        self.exec.insert(idx, id);
    }

    /// `runtime.setExecutablePosition`.
    pub fn set_executable_position(&mut self, id: TargetId, new_index: f64) {
        let Some(old) = self.exec.iter().position(|&x| x == id) else { return };
        self.move_executable(id, new_index - old as f64);
    }

    // ---------------------------------------------------------- bubbles, ask

    /// `runtime.emit('SAY', target, type, message)`: recorded, then the bubble is updated.
    pub fn emit_say(&mut self, prog: &Program, id: TargetId, think: bool, msg: V) {
        if self.say_log.is_some() {
            let text = self.to_string(prog, &msg).to_string();
            if let Some(log) = &mut self.say_log {
                log.push(SayEvent { target: id, kind: if think { "think" } else { "say" }, text });
            }
        }
        self.update_bubble(prog, id, think, msg);
    }

    /// Looks `_updateBubble`: formats the text and takes a new usage id.
    pub fn update_bubble(&mut self, prog: &Program, id: TargetId, think: bool, msg: V) {
        let text: Rc<str> = match &msg {
            V::Num(n) if n.abs() >= 0.01 && n % 1.0 != 0.0 => Rc::from(crate::value::to_fixed(*n, 2).as_str()),
            _ => {
                let s = self.to_string(prog, &msg);
                if crate::value::utf16_len(&s) > 330 {
                    Rc::from(crate::value::utf16_prefix(&s, 330).as_str())
                } else {
                    s
                }
            }
        };
        self.uid_draws();
        self.usage += 1;
        let usage = self.usage;
        if let Some(t) = self.target_mut(id) {
            t.bubble = Some(Bubble { think, text, usage });
        }
        self.render_bubble(id);
    }

    /// Looks `_renderBubble`: the bubble's drawable exists while the target is visible and
    /// has text (only the `whisker` profile keeps the renderer's draw list).
    pub fn render_bubble(&mut self, id: TargetId) {
        if self.draw.is_none() {
            return;
        }
        let shown = self.target(id).is_some_and(|t| t.visible && t.bubble.as_ref().is_some_and(|b| !b.text.is_empty()));
        if let Some(d) = &mut self.draw {
            d.bubble(id, shown);
        }
    }

    /// The ANSWER event: set `answer`, release the oldest question, ask the next.
    fn on_answer(&mut self, prog: &Program, text: Rc<str>) {
        self.answer = text;
        if let Some(q) = self.questions.pop_front() {
            if q.was_visible && !q.was_stage {
                self.emit_say(prog, q.target, false, V::Lit(prog.lit_empty));
            }
            self.microtasks.push((q.thread, Resume::Advance));
            self.ask_next(prog);
        }
    }

    pub fn ask_next(&mut self, prog: &Program) {
        if let Some(q) = self.questions.front()
            && q.was_visible
            && !q.was_stage
        {
            let (t, text) = (q.target, q.text.clone());
            self.emit_say(prog, t, false, V::Str(text));
        }
    }

    /// Makey Makey `keyPressed`: buffer the key and complete matching sequences.
    fn makey_key_pressed(&mut self, key: &str) {
        let first = key.split(' ').next().unwrap_or("");
        self.makey_buffer.push_back(crate::value::js_to_upper(first));
        if self.makey_buffer.len() > 100 {
            self.makey_buffer.pop_front();
        }
        let mut done = Vec::new();
        for (i, (_, arr, _)) in self.makey_sequences.iter().enumerate() {
            if self.makey_buffer.len() < arr.len() {
                continue;
            }
            let start = self.makey_buffer.len() - arr.len();
            if arr.iter().zip(self.makey_buffer.iter().skip(start)).all(|(a, b)| a == b) {
                done.push(i);
            }
        }
        for i in done {
            if let Some(s) = self.makey_sequences.get_mut(i) {
                s.2 = true;
            }
            self.add_timer(100.0, TimerKind::MakeySequence { index: i });
        }
    }

    /// Makey Makey's frame toggle (an interval flipping it at the start of every step from step 1).
    pub fn makey_frame_toggle(&self) -> bool {
        self.steps % 2 == 1
    }

    /// Marks block `b` executed.
    #[inline]
    pub fn mark(&mut self, b: u32) {
        if let Some(w) = self.executed.get_mut(b as usize / 64) {
            *w |= 1u64 << (b % 64);
        }
    }
}

/// The oracle's key-name mapping to DOM `KeyboardEvent.key` values.
fn dom_key(key: &str) -> String {
    match crate::value::js_to_lower(key).as_str() {
        "space" => " ".into(),
        "left arrow" => "ArrowLeft".into(),
        "right arrow" => "ArrowRight".into(),
        "up arrow" => "ArrowUp".into(),
        "down arrow" => "ArrowDown".into(),
        "enter" => "Enter".into(),
        _ => key.to_string(),
    }
}

/// scratch-vm `Keyboard._keyStringToScratchKey`: "" for ignored keys.
fn scratch_key(k: &str) -> String {
    match k {
        " " => "space".into(),
        "ArrowLeft" | "Left" => "left arrow".into(),
        "ArrowUp" | "Up" => "up arrow".into(),
        "ArrowRight" | "Right" => "right arrow".into(),
        "ArrowDown" | "Down" => "down arrow".into(),
        "Enter" => "enter".into(),
        _ if crate::value::utf16_len(k) > 1 => String::new(),
        _ => crate::value::js_to_upper(k),
    }
}

/// Scratch key names: letters upper-cased, DOM names mapped (kept for callers of the old API).
pub fn normalize_key(key: &str) -> String {
    let k = scratch_key(&dom_key(key));
    if k.is_empty() { key.to_string() } else { k }
}
