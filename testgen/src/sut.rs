//! The system under test: the one place where test generation talks to the VM.
//!
//! Everything test generation needs from a running program goes through
//! [`Sut`]: inputs, a step, state for dynamic event extraction, and the trace
//! for the fitness function. When the VM grows instrumentation (branch
//! distances, thread tops, drag), only this file changes.
//!
//! The VM runs with its test-generation instrumentation on
//! (`VmOptions::instrument`): branch distances of conditions and `repeat`
//! come from it, remaining time of time-based blocks from
//! `Vm::waiting_blocks`, running scripts from `Vm::active_scripts`.
//! Remaining approximation: touching, colours and sizes come from the VM's
//! geometry (`none`, `approximate` or `exact`, see [`Sut::geometry`]); without
//! geometry nothing touches and no colour is found.

use std::collections::BTreeMap;
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
    /// Whisker's `cloneID` (0 for the original; see `clowder_vm::Target::clone_id`).
    pub clone_id: u32,
    /// Position.
    pub x: f64,
    /// Position.
    pub y: f64,
    /// Visible?
    pub visible: bool,
    /// The stage?
    pub is_stage: bool,
}

/// One VM instance running one test (a clone continues as the original would).
#[derive(Clone)]
pub struct Sut {
    vm: Vm,
    mouse: (f64, f64),
    mouse_down: bool,
    hangs: u64,
    /// Per measured slot, the minimum remaining fraction of its time-based block waited in so
    /// far (`INFINITY`: not waited in), and the slots waited in, in the order first seen. A
    /// list searched per waiting block was a quarter of the CPU of a project with 120 sprites
    /// (`401095511`).
    waits: Vec<f64>,
    waited: Vec<usize>,
    /// Whisker's `_knownColors`: where each colour (by its text) was last found, tried first by
    /// the next search for it. Kept per test execution (a fresh `Sut`), not per run as in
    /// Whisker's extractor: a replay then decodes its events the same way whatever ran before
    /// it, and parallel replays (mutants, selection pools) stay deterministic.
    known_colors: BTreeMap<String, (i64, i64)>,
}

impl Sut {
    /// A fresh VM for `project` in `profile` whose project randomness is seeded with `seed`.
    pub fn new(project: Arc<Project>, seed: u64, profile: Profile) -> Self {
        Self::with_instrumentation(project, seed, profile, true)
    }

    /// A fresh VM as [`Sut::new`], with or without the test-generation instrumentation.
    /// Without it nothing is traced (no coverage, no branch distances: no colour searches
    /// for false `touching color` conditions) and execution is the same: for replays that
    /// only observe states (mutation analysis).
    pub fn with_instrumentation(project: Arc<Project>, seed: u64, profile: Profile, instrument: bool) -> Self {
        Self::with_options(project, VmOptions { seed, profile, instrument, ..VmOptions::default() })
    }

    /// A fresh VM with any options.
    pub fn with_options(project: Arc<Project>, opts: VmOptions) -> Self {
        let vm = Vm::new(project, opts);
        Self {
            vm,
            mouse: (0.0, 0.0),
            mouse_down: false,
            hangs: 0,
            waits: Vec::new(),
            waited: Vec::new(),
            known_colors: BTreeMap::new(),
        }
    }

    /// Clicks the green flag.
    pub fn green_flag(&mut self) {
        self.vm.green_flag();
        // Whisker's `greenFlag()` starts the hats at once (scratch-vm `startHats`), so the
        // event extraction before the first step already sees the green-flag scripts active.
        self.vm.apply_inputs();
    }

    /// What an exported test's prologue does to Whisker's cache of sprite wrappers, which
    /// starts empty at every test: it wraps every target (`getSprite` wraps them all), and
    /// from then on the VM wraps each clone as it is made. So the test's reads go through
    /// the wrappers Whisker hands out (a clone whose id repeats its original's reads the
    /// original, [`Vm::whisker_wrapper_target`]) and a clone of a sprite whose pen is down
    /// draws nothing, as in Whisker.
    pub fn whisker_prologue(&mut self) {
        self.vm.whisker_wrappers_reset();
        for id in self.vm.runtime_targets() {
            self.vm.whisker_wrap(id);
        }
    }

    /// Runs one step.
    pub fn step(&mut self) {
        if self.vm.step() == StepOutcome::Hang {
            self.hangs += 1;
        }
    }

    /// Work the VM did so far (block executions and geometry; see `Vm::work`).
    pub fn work(&self) -> u64 {
        self.vm.work()
    }

    /// [`Sut::work`] in parts: block executions, reporter evaluations, geometry, scheduler,
    /// and the geometry's work for branch distances ([`clowder_vm::Vm::work_parts`]).
    pub fn work_parts(&self) -> [u64; 5] {
        self.vm.work_parts()
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

    /// Posts the mouse at (x, y) with the button `down`, as a test driver does: a change of
    /// the button clicks the target drawn there (see `Vm::mouse_post`).
    pub fn mouse_post(&mut self, x: f64, y: f64, down: bool) {
        self.mouse = (x, y);
        self.mouse_down = down;
        self.vm.mouse_post(x, y, down);
    }

    /// The mouse as the VM holds it now (rounded position, button).
    pub fn vm_mouse(&self) -> (f64, f64, bool) {
        self.vm.mouse()
    }

    /// Answers a pending `ask`.
    pub fn answer(&mut self, text: &str) {
        self.vm.answer_text(text);
    }

    /// Sets the virtual loudness (−1: none).
    pub fn set_loudness(&mut self, v: f64) {
        self.vm.set_loudness(v);
    }

    /// Drags a sprite to `(x, y)` (takes effect at the next step, as a drag does).
    pub fn drag(&mut self, id: TargetId, x: f64, y: f64) {
        self.vm.drag(id, x, y);
    }

    /// Threads still running after the last step.
    pub fn live_threads(&self) -> usize {
        self.vm.live_threads()
    }

    /// `(target, script top)` of every running thread, sorted (deterministic lookups).
    pub fn active_scripts(&self) -> Option<Vec<(TargetId, BlockIdx)>> {
        let mut v = self.vm.active_scripts();
        v.sort_unstable();
        v.dedup();
        Some(v)
    }

    /// Whether a hat of `top` started during the last step (broadcast, backdrop
    /// and clone hats count as active then).
    pub fn started_last_step(&self, top: BlockIdx) -> bool {
        self.vm.instrument().is_some_and(|i| i.started_last_step().contains(&top))
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
                clone_id: t.clone_id,
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

    /// The target Whisker's `dragSprite` moves for sprite `def` and `cloneID` `id` (0: the
    /// original): the oldest live clone with that id.
    pub fn find_by_clone_id(&self, def: usize, id: u32) -> Option<TargetId> {
        if id == 0 {
            return self.find(def, 0);
        }
        self.targets().into_iter().filter(|t| t.def == def && t.clone != 0 && t.clone_id == id).map(|t| t.id).next()
    }

    /// A question of `ask and wait` is waiting for an answer.
    pub fn question_pending(&self) -> bool {
        self.vm.question_pending()
    }

    /// Mouse position and button.
    pub fn mouse(&self) -> (f64, f64, bool) {
        (self.mouse.0, self.mouse.1, self.mouse_down)
    }

    /// Whether target `id` touches the stage edge (false without geometry).
    pub fn touching_edge(&mut self, id: TargetId) -> bool {
        self.vm.touching_edge(id)
    }

    /// Whether target `id` touches sprite `name` (false without geometry).
    pub fn touching_sprite(&mut self, id: TargetId, name: &str) -> bool {
        match self.vm.project().targets.iter().position(|t| t.name == name && !t.is_stage) {
            Some(def) => self.vm.touching_sprite(id, def),
            None => false,
        }
    }

    /// Width and height of target `id`'s bounds, when the geometry knows them.
    pub fn size(&mut self, id: TargetId) -> Option<(f64, f64)> {
        self.vm.bounds(id).map(|r| (r.right - r.left, r.top - r.bottom))
    }

    /// Where colour `text` (`rgb`) is drawn: by everything but target `id`, searched outwards
    /// from it, or (`own`) on `id`'s own costume (Whisker's `_fuzzyFindColor`): the known point
    /// if it still shows the colour, else a search; the result becomes the known point (a miss
    /// forgets it). `None` without geometry.
    pub fn find_color(&mut self, id: TargetId, text: &str, rgb: [u8; 3], own: bool) -> Option<(i64, i64)> {
        let known = self.known_colors.get(text).copied();
        let found = if own { self.vm.find_own_color(id, rgb, known) } else { self.vm.find_color(id, rgb, known) };
        match found {
            Some(p) => {
                self.known_colors.insert(text.to_string(), p);
            }
            None => {
                self.known_colors.remove(text);
            }
        }
        found
    }

    /// Whether target `id` touches colour `rgb` (false without geometry).
    pub fn touching_color(&mut self, id: TargetId, rgb: [u8; 3]) -> bool {
        self.vm.touching_color(id, rgb)
    }

    /// `colorIsTouchingColor(color, mask)` of target `id` (false without geometry).
    pub fn color_touching_color(&mut self, id: TargetId, color: [u8; 3], mask: [u8; 3]) -> bool {
        self.vm.color_touching_color(id, color, mask)
    }

    /// Executed-block bits so far.
    pub fn executed_bits(&self) -> &[u64] {
        self.vm.executed_bits()
    }

    /// Records the remaining time (as a fraction of the duration) of every
    /// time-based block a thread waits in now; `timed_slots` maps block index to
    /// measured slot (see [`crate::fitness::FitnessModel::timed_slots`]). Called
    /// after every step, so the trace keeps the minimum over the execution: a
    /// `stop all` or the end of the test can end a wait that was nearly over.
    pub fn track_waits(&mut self, timed_slots: &[u32]) {
        for w in self.vm.waiting_blocks() {
            let Some(&s) = timed_slots.get(w.block as usize) else { continue };
            if s == u32::MAX {
                continue;
            }
            let frac = if w.duration_ms > 0.0 { (w.remaining_ms / w.duration_ms).clamp(0.0, 1.0) } else { 0.0 };
            let s = s as usize;
            if s >= self.waits.len() {
                self.waits.resize(s + 1, f64::INFINITY);
            }
            let m = &mut self.waits[s];
            // A fraction is never infinite (clamped, or NaN), so `INFINITY` marks a first visit.
            if *m == f64::INFINITY {
                self.waited.push(s);
                *m = frac;
            } else {
                *m = m.min(frac);
            }
        }
    }

    /// Copies the execution trace into `tr` (`measured` lists the blocks of its
    /// distance slots): executed blocks; for conditions and `repeat` the VM's
    /// minimum branch distances `[to true, to false]`; for a time-based block a
    /// thread waited in, the smallest `[remaining time / duration, 0]` seen by
    /// [`Sut::track_waits`] and now (its "true" edge is completing). Blocks the
    /// VM did not measure keep `INFINITY`. `measured_slot` is each block's slot in `measured`
    /// (`u32::MAX`: none), so that many waiting threads cost linear time.
    pub fn fill_trace(&self, measured: &[BlockIdx], measured_slot: &[u32], tr: &mut Trace) {
        let bits = self.vm.executed_bits();
        tr.executed.clear();
        tr.executed.extend_from_slice(bits);
        let conds = self.vm.instrument().map(|i| i.conditions()).unwrap_or(&[]);
        for (d, b) in tr.dist.iter_mut().zip(measured) {
            *d = match conds.get(*b as usize) {
                Some(c) => [c.min_to_true, c.min_to_false],
                None => [f64::INFINITY; 2],
            };
        }
        for w in self.vm.waiting_blocks() {
            if let Some(&s) = measured_slot.get(w.block as usize)
                && s != u32::MAX
            {
                let s = s as usize;
                let frac = if w.duration_ms > 0.0 { (w.remaining_ms / w.duration_ms).clamp(0.0, 1.0) } else { 0.0 };
                tr.record(s, [frac, 0.0]);
            }
        }
        for &s in &self.waited {
            if let Some(&frac) = self.waits.get(s) {
                tr.record(s, [frac, 0.0]);
            }
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
