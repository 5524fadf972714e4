//! The runtime: live targets, threads and the one-tick-per-step scheduler.
//!
//! The structure mirrors scratch-vm's `Runtime`, `Sequencer` and `Thread` so
//! that its step semantics (see the fidelity README) carry over one to one:
//! threads hold a stack of frames, a block may yield (run again next tick),
//! start a branch, or finish; loops yield at the end of every iteration unless
//! in warp mode.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::blocks;
use crate::geometry::{Geometry, NoGeometry};
use crate::project::{BlockIdx, Lit, Project};
use crate::rng::SplitMix64;
use crate::value::Value;

/// Milliseconds per step: the compatibility (30 fps) frame, as a double.
pub const STEP_MS: f64 = 1000.0 / 30.0;

/// Which semantics a VM instance follows (DESIGN §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Profile {
    /// scratch-vm without renderer or audio; what the fidelity oracle runs.
    #[default]
    Headless,
    /// Headless plus geometry, sound durations and pen (studies).
    Default,
    /// Default with Whisker's timer increment of 0.075 s per step.
    Whisker,
}

/// Options of one VM instance.
#[derive(Debug, Clone)]
pub struct VmOptions {
    /// Semantics profile.
    pub profile: Profile,
    /// SplitMix64 seed for project-visible randomness.
    pub seed: u64,
    /// Block executions allowed in one step before it is declared a hang.
    pub max_ops_per_step: u64,
}

impl Default for VmOptions {
    fn default() -> Self {
        Self { profile: Profile::Headless, seed: 0, max_ops_per_step: 5_000_000 }
    }
}

/// Identifies a live target (sprite, clone or stage).
pub type TargetId = u32;

/// Say/think bubble state.
#[derive(Debug, Clone, PartialEq)]
pub struct Bubble {
    /// `say` or `think`.
    pub kind: &'static str,
    /// The bubble text.
    pub text: String,
}

/// A live sprite, clone or the stage.
#[derive(Debug, Clone)]
pub struct Target {
    /// Index of the sprite's definition in [`Project::targets`].
    pub def: u32,
    /// Whether this is the stage.
    pub is_stage: bool,
    /// 0 for originals; the n-th clone of a sprite gets n.
    pub clone_index: u32,
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
    pub costume: usize,
    /// Rotation style.
    pub rotation_style: String,
    /// Draggable flag.
    pub draggable: bool,
    /// Volume.
    pub volume: f64,
    /// Graphic effects: color, fisheye, whirl, pixelate, mosaic, brightness, ghost.
    pub effects: [f64; 7],
    /// Current bubble.
    pub bubble: Option<Bubble>,
    /// Scalar variables, parallel to the definition's `variables`.
    pub variables: Vec<Value>,
    /// Lists, parallel to the definition's `lists`.
    pub lists: Vec<Vec<Value>>,
    /// False once deleted (clone slots are reused).
    pub alive: bool,
}

/// Scheduler status of a thread (scratch-vm's `Thread.STATUS_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Runnable.
    Running,
    /// Yielded: the current block runs again next tick.
    Yield,
    /// Waits for the next tick before running at all.
    YieldTick,
    /// Waiting for something outside (answer to `ask`).
    PromiseWait,
    /// Finished.
    Done,
}

/// One level of a thread's stack (scratch-vm `_StackFrame`).
#[derive(Debug, Clone, Default)]
pub struct Frame {
    /// The block this level is at; `None` = the end of a substack.
    pub block: Option<BlockIdx>,
    /// The block at this level is a loop (set when it starts its branch).
    pub is_loop: bool,
    /// Warp mode (run without screen refresh).
    pub warp: bool,
    /// `repeat` counter.
    pub loop_counter: Option<i64>,
    /// Stack timer: start time and duration in ms.
    pub timer: Option<(f64, f64)>,
    /// Threads started by `broadcast and wait`.
    pub waiting_for: Option<Vec<u32>>,
    /// Procedure arguments (name → value) visible from this frame down.
    pub params: Option<Vec<(String, Value)>>,
}

/// A running script.
#[derive(Debug, Clone)]
pub struct Thread {
    /// Target it runs on.
    pub target: TargetId,
    /// The script's top block (hat).
    pub top: BlockIdx,
    /// Call/branch stack.
    pub stack: Vec<Frame>,
    /// Scheduler status.
    pub status: Status,
    /// Unique id, stable for the life of the VM.
    pub id: u32,
}

/// What one step ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepOutcome {
    /// The step ran normally.
    Ran,
    /// The step exceeded the operation budget; all threads were stopped.
    Hang,
}

/// A deterministic Scratch VM instance running one project.
pub struct Vm {
    pub(crate) project: Arc<Project>,
    pub(crate) opts: VmOptions,
    pub(crate) targets: Vec<Target>,
    /// Execution order: index 0 is the back (stage), last is the front-most sprite.
    pub(crate) exec_order: Vec<TargetId>,
    pub(crate) threads: Vec<Thread>,
    pub(crate) next_thread_id: u32,
    pub(crate) rng: SplitMix64,
    pub(crate) steps: u64,
    pub(crate) current_msecs: f64,
    pub(crate) timer_start: f64,
    pub(crate) keys_down: BTreeSet<String>,
    pub(crate) mouse: (f64, f64, bool),
    pub(crate) answer: String,
    pub(crate) loudness: f64,
    pub(crate) ops_this_step: u64,
    pub(crate) hung: bool,
    pub(crate) executed: Vec<u64>,
    pub(crate) clone_counters: Vec<u32>,
    pub(crate) clone_count: usize,
    pub(crate) geometry: Box<dyn Geometry>,
    pub(crate) unknown_opcodes: std::collections::BTreeMap<String, u64>,
}

/// Most clones alive at once (scratch-vm's limit).
pub const MAX_CLONES: usize = 300;

fn lit_value(l: &Lit) -> Value {
    match l {
        Lit::Num(n) => Value::Num(*n),
        Lit::Str(s) => Value::from(s.as_str()),
        Lit::Bool(b) => Value::Bool(*b),
        Lit::Null => Value::from("null"),
    }
}

impl Vm {
    /// A VM at step 0 with the project in its initial state (no script running).
    pub fn new(project: Arc<Project>, opts: VmOptions) -> Self {
        let mut targets = Vec::with_capacity(project.targets.len());
        for (i, t) in project.targets.iter().enumerate() {
            targets.push(Target {
                def: i as u32,
                is_stage: t.is_stage,
                clone_index: 0,
                x: t.x,
                y: t.y,
                direction: t.direction,
                size: t.size,
                visible: t.visible,
                costume: t.current_costume,
                rotation_style: t.rotation_style.clone(),
                draggable: t.draggable,
                volume: t.volume,
                effects: [0.0; 7],
                bubble: None,
                variables: t.variables.iter().map(|v| lit_value(&v.value)).collect(),
                lists: t.lists.iter().map(|l| l.items.iter().map(lit_value).collect()).collect(),
                alive: true,
            });
        }
        // Execution order is layer order: stage at the back, then by layerOrder.
        let mut exec_order: Vec<TargetId> = (0..targets.len() as u32).collect();
        exec_order.sort_by_key(|&i| {
            let t = &project.targets[i as usize];
            (!t.is_stage, t.layer_order, i)
        });
        let executed = vec![0u64; project.blocks.len().div_ceil(64)];
        let n_defs = project.targets.len();
        Self {
            rng: SplitMix64::new(opts.seed),
            project,
            opts,
            targets,
            exec_order,
            threads: Vec::new(),
            next_thread_id: 0,
            steps: 0,
            current_msecs: 0.0,
            timer_start: 0.0,
            keys_down: BTreeSet::new(),
            mouse: (0.0, 0.0, false),
            answer: String::new(),
            loudness: -1.0,
            ops_this_step: 0,
            hung: false,
            executed,
            clone_counters: vec![0; n_defs],
            clone_count: 0,
            geometry: Box::new(NoGeometry),
            unknown_opcodes: std::collections::BTreeMap::new(),
        }
    }

    /// Which geometry backs touching/fencing: `none`, `approximate` or `exact`.
    pub fn geometry_mode(&self) -> &'static str {
        self.geometry.mode()
    }

    /// The project this VM runs.
    pub fn project(&self) -> &Arc<Project> {
        &self.project
    }

    /// Steps executed so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Virtual time at the start of step `k`, in ms (IEEE double, as the oracle).
    pub fn now(k: u64) -> f64 {
        k as f64 * STEP_MS
    }

    /// Live targets in execution order (front-most sprite first, stage last).
    pub fn targets_in_execution_order(&self) -> impl Iterator<Item = (TargetId, &Target)> {
        self.exec_order.iter().rev().map(|&id| (id, &self.targets[id as usize]))
    }

    /// Layer of a target (index in execution order; stage 0).
    pub fn layer_of(&self, id: TargetId) -> usize {
        self.exec_order.iter().position(|&t| t == id).unwrap_or(0)
    }

    /// The target with this id.
    pub fn target(&self, id: TargetId) -> Option<&Target> {
        self.targets.get(id as usize).filter(|t| t.alive)
    }

    /// Number of live threads.
    pub fn live_threads(&self) -> usize {
        self.threads.iter().filter(|t| t.status != Status::Done).count()
    }

    /// The `answer` reporter.
    pub fn answer(&self) -> &str {
        &self.answer
    }

    /// Project timer in seconds, as the `timer` block reads it.
    pub fn timer_secs(&self) -> f64 {
        (self.current_msecs - self.timer_start) / 1000.0
    }

    /// Whether block `idx` has executed since the VM was created.
    pub fn was_executed(&self, idx: BlockIdx) -> bool {
        self.executed.get(idx as usize / 64).is_some_and(|w| w & (1u64 << (idx % 64)) != 0)
    }

    /// Bitset of executed blocks (bit `i` of word `i / 64`).
    pub fn executed_bits(&self) -> &[u64] {
        &self.executed
    }

    pub(crate) fn mark_executed(&mut self, idx: BlockIdx) {
        if let Some(w) = self.executed.get_mut(idx as usize / 64) {
            *w |= 1u64 << (idx % 64);
        }
    }

    // ---------------------------------------------------------------- inputs

    /// Green flag: stop everything, reset the timer, start "when flag clicked".
    pub fn green_flag(&mut self) {
        self.stop_all();
        self.timer_start = self.current_msecs;
        self.start_hats("event_whenflagclicked", None, None);
    }

    /// The stop sign: kill all threads, delete clones, clear bubbles.
    pub fn stop_all(&mut self) {
        for t in &mut self.threads {
            t.status = Status::Done;
        }
        self.threads.clear();
        let clones: Vec<TargetId> =
            self.exec_order.iter().copied().filter(|&id| self.targets[id as usize].clone_index != 0).collect();
        for id in clones {
            self.delete_target(id);
        }
        for t in &mut self.targets {
            t.bubble = None;
        }
    }

    /// A key goes down: starts "when KEY pressed" and "when any key pressed".
    pub fn key_down(&mut self, key: &str) {
        let key = normalize_key(key);
        self.keys_down.insert(key.clone());
        self.start_hats("event_whenkeypressed", Some(("KEY_OPTION", &key)), None);
        self.start_hats("event_whenkeypressed", Some(("KEY_OPTION", "any")), None);
    }

    /// A key goes up.
    pub fn key_up(&mut self, key: &str) {
        let key = normalize_key(key);
        self.keys_down.remove(&key);
    }

    /// Mouse moves to stage coordinates (rounded and clamped like scratch-vm).
    pub fn mouse_move(&mut self, x: f64, y: f64) {
        self.mouse.0 = x.clamp(-240.0, 240.0).round();
        self.mouse.1 = y.clamp(-180.0, 180.0).round();
    }

    /// Mouse button state.
    pub fn mouse_button(&mut self, down: bool) {
        self.mouse.2 = down;
    }

    /// Click on a target (sprite, clone or stage): starts its click hats.
    pub fn click_target(&mut self, id: TargetId) {
        if self.target(id).is_none() {
            return;
        }
        self.start_hats("event_whenthisspriteclicked", None, Some(id));
        self.start_hats("event_whenstageclicked", None, Some(id));
    }

    /// Click on the stage.
    pub fn click_stage(&mut self) {
        let stage = self.stage_id();
        self.click_target(stage);
    }

    /// Answer a pending `ask`.
    pub fn answer_text(&mut self, text: &str) {
        self.answer = text.to_string();
    }

    /// Set the virtual loudness (−1 = no microphone).
    pub fn set_loudness(&mut self, v: f64) {
        self.loudness = v;
    }

    /// The stage's target id.
    pub fn stage_id(&self) -> TargetId {
        self.exec_order.first().copied().unwrap_or(0)
    }

    /// The live target of sprite `name` with `clone_index`.
    pub fn find_target(&self, name: &str, clone_index: u32) -> Option<TargetId> {
        self.exec_order.iter().copied().find(|&id| {
            let t = &self.targets[id as usize];
            t.alive && t.clone_index == clone_index && self.project.targets[t.def as usize].name == name
        })
    }

    // ------------------------------------------------------------- scheduling

    /// Starts the scripts whose hat is `opcode` (and whose field matches).
    /// Returns the ids of the started (or restarted) threads.
    pub(crate) fn start_hats(&mut self, opcode: &str, field: Option<(&str, &str)>, only: Option<TargetId>) -> Vec<u32> {
        let restart = matches!(
            opcode,
            "event_whenflagclicked"
                | "event_whenthisspriteclicked"
                | "event_whenstageclicked"
                | "event_whenbroadcastreceived"
        );
        let mut started = Vec::new();
        let order: Vec<TargetId> = match only {
            Some(t) => vec![t],
            None => self.exec_order.iter().rev().copied().collect(),
        };
        let project = Arc::clone(&self.project);
        for tid in order {
            let def = self.targets[tid as usize].def as usize;
            for &top in &project.targets[def].scripts {
                let b = project.block(top);
                if b.opcode != opcode {
                    continue;
                }
                if let Some((fname, want)) = field {
                    let Some(f) = b.field(fname) else { continue };
                    if !f.value.eq_ignore_ascii_case(want) {
                        continue;
                    }
                }
                if let Some(existing) =
                    self.threads.iter_mut().find(|t| t.top == top && t.target == tid && t.status != Status::Done)
                {
                    if restart {
                        existing.stack = vec![Frame { block: Some(top), ..Frame::default() }];
                        existing.status = Status::Running;
                        started.push(existing.id);
                    }
                    continue;
                }
                let id = self.next_thread_id;
                self.next_thread_id += 1;
                self.threads.push(Thread {
                    target: tid,
                    top,
                    stack: vec![Frame { block: Some(top), ..Frame::default() }],
                    status: Status::Running,
                    id,
                });
                started.push(id);
            }
        }
        started
    }

    /// Runs one step: exactly one tick over all threads (fidelity README, step 5).
    pub fn step(&mut self) -> StepOutcome {
        let k = self.steps;
        // Threads finished or killed since the last step are removed first.
        self.threads.retain(|t| t.status != Status::Done);
        self.current_msecs = Self::now(k);
        self.ops_this_step = 0;
        let mut i = 0;
        while i < self.threads.len() {
            match self.threads[i].status {
                Status::YieldTick => self.threads[i].status = Status::Running,
                Status::Running | Status::Yield => {
                    self.step_thread(i);
                    if self.hung {
                        break;
                    }
                }
                Status::PromiseWait | Status::Done => {}
            }
            i += 1;
        }
        self.steps += 1;
        if self.hung {
            self.hung = false;
            self.stop_all();
            return StepOutcome::Hang;
        }
        StepOutcome::Ran
    }

    /// scratch-vm `Sequencer.stepThread`.
    fn step_thread(&mut self, ti: usize) {
        loop {
            // Unwind finished substacks (scratch-vm's `while (!thread.peekStack())`).
            let (block, warp) = loop {
                match self.threads[ti].stack.last() {
                    None => {
                        self.threads[ti].status = Status::Done;
                        return;
                    }
                    Some(f) => match f.block {
                        Some(b) => break (b, f.warp),
                        None => {
                            if !self.pop_to_parent(ti) {
                                return;
                            }
                        }
                    },
                }
            };
            let depth = self.threads[ti].stack.len();
            self.ops_this_step += 1;
            if self.ops_this_step > self.opts.max_ops_per_step {
                self.hung = true;
                return;
            }
            blocks::execute(self, ti, block);
            let th = &mut self.threads[ti];
            match th.status {
                Status::Yield => {
                    th.status = Status::Running;
                    if warp {
                        continue;
                    }
                    return;
                }
                Status::PromiseWait | Status::YieldTick | Status::Done => return,
                Status::Running => {}
            }
            // The block neither branched nor jumped: move on to the next block.
            if th.stack.len() == depth && th.stack.last().and_then(|f| f.block) == Some(block) {
                let next = self.project.block(block).next;
                if let Some(f) = self.threads[ti].stack.last_mut() {
                    reuse_frame(f, next);
                }
            }
        }
    }

    /// Pops a finished level. Returns false when the thread must stop for this tick.
    fn pop_to_parent(&mut self, ti: usize) -> bool {
        let project = Arc::clone(&self.project);
        let th = &mut self.threads[ti];
        th.stack.pop();
        let Some(parent) = th.stack.last_mut() else {
            th.status = Status::Done;
            return false;
        };
        if parent.is_loop {
            // A loop iteration ended: yield unless in warp mode; the loop block runs again.
            return parent.warp;
        }
        let next = parent.block.and_then(|b| project.block(b).next);
        reuse_frame(parent, next);
        true
    }

    /// Pushes a branch (substack) of the current block onto thread `ti`.
    pub(crate) fn start_branch(&mut self, ti: usize, first: Option<BlockIdx>, is_loop: bool) {
        let th = &mut self.threads[ti];
        let warp = th.stack.last().is_some_and(|f| f.warp);
        if let Some(f) = th.stack.last_mut() {
            f.is_loop = is_loop;
        }
        th.stack.push(Frame { block: first, warp, ..Frame::default() });
    }

    // ----------------------------------------------------------------- clones

    /// Creates a clone of `of` behind it; returns its id, or None at the limit.
    pub(crate) fn create_clone(&mut self, of: TargetId) -> Option<TargetId> {
        let src = self.targets.get(of as usize)?;
        if src.is_stage || !src.alive || self.clone_count >= MAX_CLONES {
            return None;
        }
        let def = src.def as usize;
        self.clone_counters[def] += 1;
        let mut clone = src.clone();
        clone.clone_index = self.clone_counters[def];
        clone.bubble = None;
        let id = match self.targets.iter().position(|t| !t.alive) {
            Some(free) => {
                self.targets[free] = clone;
                free as TargetId
            }
            None => {
                self.targets.push(clone);
                (self.targets.len() - 1) as TargetId
            }
        };
        self.clone_count += 1;
        let pos = self.exec_order.iter().position(|&t| t == of).unwrap_or(0);
        self.exec_order.insert(pos, id);
        Some(id)
    }

    /// Deletes a clone: removes it from the layer order and stops its threads.
    pub(crate) fn delete_target(&mut self, id: TargetId) {
        let Some(t) = self.targets.get_mut(id as usize) else { return };
        if t.clone_index == 0 || !t.alive {
            return;
        }
        t.alive = false;
        self.clone_count = self.clone_count.saturating_sub(1);
        self.exec_order.retain(|&x| x != id);
        for th in &mut self.threads {
            if th.target == id {
                th.status = Status::Done;
            }
        }
    }
}

/// scratch-vm `_StackFrame.reuse`: the level moves on to `next` with fresh state.
fn reuse_frame(f: &mut Frame, next: Option<BlockIdx>) {
    f.block = next;
    f.is_loop = false;
    f.loop_counter = None;
    f.timer = None;
    f.waiting_for = None;
}

/// Scratch key names: letters upper-cased, DOM names mapped.
pub fn normalize_key(key: &str) -> String {
    match key {
        " " | "Space" => "space".into(),
        "ArrowLeft" => "left arrow".into(),
        "ArrowRight" => "right arrow".into(),
        "ArrowUp" => "up arrow".into(),
        "ArrowDown" => "down arrow".into(),
        "Enter" => "enter".into(),
        k if k.chars().count() == 1 => k.to_uppercase(),
        k => k.to_string(),
    }
}
