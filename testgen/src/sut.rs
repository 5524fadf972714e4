//! The system under test: the one place where test generation talks to the VM.
//!
//! Everything test generation needs from a running program goes through
//! [`Sut`]: inputs, a step, state for dynamic event extraction, and the trace
//! for the fitness function. When the VM grows instrumentation (branch
//! distances, thread tops, drag), only this file changes.
//!
//! With the current VM some answers are approximations, listed here:
//! * active scripts are unknown ([`Sut::active_scripts`] is `None`), so the
//!   extractor offers hat events of every script plus the sensing events of
//!   scripts that have started;
//! * no branch distances are measured, so the fitness function infers 0/1
//!   distances from where execution went;
//! * `ask` questions and touching are not visible (no TypeText events, no
//!   touching-based drags); dragging a sprite is a no-op.

use std::sync::Arc;

use clowder_vm::project::{BlockIdx, Project};
use clowder_vm::{Profile, StepOutcome, TargetId, Vm, VmOptions};

use crate::trace::Trace;

/// Stage width in Scratch units.
pub const STAGE_WIDTH: f64 = 480.0;
/// Stage height in Scratch units.
pub const STAGE_HEIGHT: f64 = 360.0;

/// A live target as event extraction sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetView {
    /// VM id.
    pub id: TargetId,
    /// Index of its sprite in `Project::targets`.
    pub def: usize,
    /// 0 for the original, n for the n-th clone of its sprite.
    pub clone: u32,
    /// Position.
    pub x: f64,
    /// Position.
    pub y: f64,
    /// Visible?
    pub visible: bool,
    /// The stage?
    pub is_stage: bool,
}

/// One VM instance running one test.
pub struct Sut {
    vm: Vm,
    mouse: (f64, f64),
    mouse_down: bool,
    hangs: u64,
}

impl Sut {
    /// A fresh VM for `project` whose project randomness is seeded with `seed`.
    pub fn new(project: Arc<Project>, seed: u64) -> Self {
        let vm = Vm::new(project, VmOptions { seed, profile: Profile::Default, ..VmOptions::default() });
        Self { vm, mouse: (0.0, 0.0), mouse_down: false, hangs: 0 }
    }

    /// Clicks the green flag.
    pub fn green_flag(&mut self) {
        self.vm.green_flag();
    }

    /// Runs one step.
    pub fn step(&mut self) {
        if self.vm.step() == StepOutcome::Hang {
            self.hangs += 1;
        }
    }

    /// Steps that exceeded the VM's operation budget (and were cut short) so far.
    pub fn hangs(&self) -> u64 {
        self.hangs
    }

    /// The VM, read-only (state observation for assertions).
    pub fn vm(&self) -> &Vm {
        &self.vm
    }

    /// The VM, for observation queries that need it mutably (touching fills
    /// geometry caches); not for sending inputs.
    pub fn vm_mut(&mut self) -> &mut Vm {
        &mut self.vm
    }

    /// Presses a key (Scratch key name).
    pub fn key_down(&mut self, key: &str) {
        self.vm.key_down(key);
    }

    /// Releases a key.
    pub fn key_up(&mut self, key: &str) {
        self.vm.key_up(key);
    }

    /// Clicks a sprite or clone.
    pub fn click(&mut self, id: TargetId) {
        self.vm.click_target(id);
    }

    /// Clicks the stage.
    pub fn click_stage(&mut self) {
        self.vm.click_stage();
    }

    /// Moves the mouse.
    pub fn mouse_move(&mut self, x: f64, y: f64) {
        self.mouse = (x, y);
        self.vm.mouse_move(x, y);
    }

    /// Sets the mouse button.
    pub fn mouse_button(&mut self, down: bool) {
        self.mouse_down = down;
        self.vm.mouse_button(down);
    }

    /// Answers a pending `ask`.
    pub fn answer(&mut self, text: &str) {
        self.vm.answer_text(text);
    }

    /// Sets the virtual loudness (−1: none).
    pub fn set_loudness(&mut self, v: f64) {
        self.vm.set_loudness(v);
    }

    /// Drags a sprite to `(x, y)`. Not supported by the current VM: no effect.
    pub fn drag(&mut self, _id: TargetId, _x: f64, _y: f64) {}

    /// Threads still running after the last step.
    pub fn live_threads(&self) -> usize {
        self.vm.live_threads()
    }

    /// `(target, script top)` of every running thread, when the VM can tell.
    pub fn active_scripts(&self) -> Option<Vec<(TargetId, BlockIdx)>> {
        None
    }

    /// Whether a hat of `top` started during the last step (broadcast, backdrop
    /// and clone hats count as active then), when the VM can tell.
    pub fn started_last_step(&self, _top: BlockIdx) -> bool {
        false
    }

    /// Live targets: originals in project order, then clones by sprite and number.
    pub fn targets(&self) -> Vec<TargetView> {
        let mut v: Vec<TargetView> = self
            .vm
            .targets_in_execution_order()
            .map(|(id, t)| TargetView {
                id,
                def: t.def as usize,
                clone: t.clone_index,
                x: t.x,
                y: t.y,
                visible: t.visible,
                is_stage: t.is_stage,
            })
            .collect();
        v.sort_by_key(|t| (t.clone != 0, t.def, t.clone));
        v
    }

    /// The live target of sprite `def` with clone number `clone`.
    pub fn find(&self, def: usize, clone: u32) -> Option<TargetId> {
        let name = &self.vm.project().targets.get(def)?.name;
        self.vm.find_target(name, clone)
    }

    /// A question of `ask and wait` is waiting for an answer. Not visible in the current VM.
    pub fn question_pending(&self) -> bool {
        false
    }

    /// Mouse position and button.
    pub fn mouse(&self) -> (f64, f64, bool) {
        (self.mouse.0, self.mouse.1, self.mouse_down)
    }

    /// Whether target `id` touches the stage edge (false without geometry).
    pub fn touching_edge(&self, _id: TargetId) -> bool {
        false
    }

    /// Whether target `id` touches sprite `name` (false without geometry).
    pub fn touching_sprite(&self, _id: TargetId, _name: &str) -> bool {
        false
    }

    /// Width and height of target `id`'s bounds, when the geometry knows them.
    pub fn size(&self, _id: TargetId) -> Option<(f64, f64)> {
        None
    }

    /// Where colour `rgb` is on the stage, when the geometry can tell.
    pub fn find_color(&self, _rgb: u32) -> Option<(f64, f64)> {
        None
    }

    /// Executed-block bits so far.
    pub fn executed_bits(&self) -> &[u64] {
        self.vm.executed_bits()
    }

    /// Copies the execution trace into `tr` (`measured` lists the blocks of its
    /// distance slots).
    pub fn fill_trace(&self, _measured: &[BlockIdx], tr: &mut Trace) {
        let bits = self.vm.executed_bits();
        tr.executed.clear();
        tr.executed.extend_from_slice(bits);
        for d in tr.dist.iter_mut() {
            *d = [f64::INFINITY; 2];
        }
    }

    /// `none`, `approximate` or `exact`.
    pub fn geometry(&self) -> &'static str {
        self.vm.geometry_mode()
    }

    /// Opcodes the VM did not implement, with counts.
    pub fn unknown_opcodes(&self) -> Vec<(String, u64)> {
        self.vm.unknown_opcodes().iter().map(|(k, v)| (k.clone(), *v)).collect()
    }
}
