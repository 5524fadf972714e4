//! Driving a VM from a test driver (hand-written Whisker suites, `clowder-suites`): the
//! queries and direct changes Whisker's test driver makes between steps that the step
//! inputs of [`Vm`] do not cover. Whisker posts its inputs to scratch-vm at once
//! (`postIOData`), reads sprites through the renderer and sets positions with
//! `RenderedTarget.setXY`; these methods give the same between-step access.
//!
//! Nothing here runs during a step, and nothing here is used by the generator, so the
//! results of generation runs do not depend on it.

use crate::Vm;
use crate::engine::target::Stale;
use crate::engine::{TargetId, V};
use crate::program::{Program, ROT_NAMES};
use crate::rng::ProjectRng;
use crate::value::Value;

/// What a target looks like at one moment: enough to put it back there for a query (the
/// stage's pose matters for its backdrop and effects only).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    /// The target.
    pub target: TargetId,
    /// Position x.
    pub x: f64,
    /// Position y.
    pub y: f64,
    /// Direction.
    pub direction: f64,
    /// Size in percent.
    pub size: f64,
    /// Costume index.
    pub costume: i64,
    /// Visibility.
    pub visible: bool,
    /// Graphic effects (colour, fisheye, whirl, pixelate, mosaic, brightness, ghost).
    pub effects: [f64; 7],
    /// What the renderer showed where it lagged behind the fields (Whisker's reset between
    /// tests): a move's callbacks see the drawable as it was at the move, and the program
    /// may hand the fields to the renderer later in the same step.
    shown: Option<Stale>,
}

/// A target moved during a step (`RenderedTarget.EVENT_TARGET_MOVED`): the target and its
/// position before the move. Recorded when [`crate::VmOptions::record_moves`] is on; with
/// [`Vm::record_move_scenes`] on, also the pose of every live target (the stage too) right after the move.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveEvent {
    /// The target that moved (or was told to move: scratch-vm emits the event even when
    /// the position stays the same).
    pub target: TargetId,
    /// Its x before the move.
    pub old_x: f64,
    /// Its y before the move.
    pub old_y: f64,
    /// Its x after the move (fenced).
    pub x: f64,
    /// Its y after the move.
    pub y: f64,
    /// Whether it was visible then.
    pub visible: bool,
    /// Every live sprite's pose right after the move (empty unless scenes are recorded).
    pub scene: Vec<Pose>,
    /// Position among the step's move and listener events ([`crate::ListenerEvent`]).
    pub seq: u64,
}

impl crate::engine::State {
    pub(crate) fn poses(&self) -> Vec<Pose> {
        self.targets.runtime_order.iter().filter_map(|&id| self.pose_of(id)).collect()
    }

    /// The pose of one live target.
    pub(crate) fn pose_of(&self, id: TargetId) -> Option<Pose> {
        let t = self.target(id)?;
        Some(Pose {
            target: id,
            x: t.x,
            y: t.y,
            direction: t.direction,
            size: t.size,
            costume: t.costume,
            visible: t.visible,
            effects: t.effects,
            shown: t.stale.as_deref().copied(),
        })
    }
}

impl TargetId {
    /// A number naming this target for code outside the VM (a test driver's handle):
    /// `generation << 21 | slot`, exact in an f64 while the slot is below 2^21 and the
    /// generation below 2^32. [`TargetId::from_handle`] inverts it; a forged handle names
    /// no live target.
    pub fn to_handle(self) -> u64 {
        (u64::from(self.gn) << 21) | u64::from(self.slot)
    }

    /// The id a [`TargetId::to_handle`] number names (any number gives some id).
    pub fn from_handle(h: u64) -> TargetId {
        TargetId { slot: (h & 0x1F_FFFF) as u32, gn: (h >> 21) as u32 }
    }
}

impl Vm {
    /// Keys down now (Scratch key names), in the order they went down.
    pub fn keys_down(&self) -> Vec<String> {
        self.st.io.keys.iter().map(|k| k.to_string()).collect()
    }

    /// Applies the inputs queued since the last step now instead of at the start of the
    /// next step, as scratch-vm's `postIOData` does when Whisker posts an input between
    /// steps: key state, mouse state and started hats are visible at once.
    pub fn apply_inputs(&mut self) {
        self.st.apply_pending(&self.prog);
    }

    /// Takes the move events recorded since the last call (needs `VmOptions::record_moves`).
    pub fn take_moves(&mut self) -> Vec<MoveEvent> {
        self.st.observe.move_log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Threads the last step's tick counted: those still running after it plus those that
    /// finished in it (scratch-vm's argument to `_emitProjectRunStatus`, which decides
    /// `PROJECT_RUN_START`/`STOP`). 0 before the first step.
    pub fn last_step_threads(&self) -> usize {
        self.st.threads.tick_threads
    }

    /// Whisker's passage from one test of a file to the next (see `engine/restore.rs`): ends
    /// the previous test as Whisker's `end()` does unless its driver already did (`stop all`
    /// and one step), then assigns what `loadSaveState` restores from `initial`, a VM of the
    /// same project that has not run, and resets what a test starts without (steps, clocks,
    /// inputs, the random stream). What Whisker does not restore stays: layers, rotation
    /// styles, the pen, the renderer's copy of the restored looks.
    pub fn whisker_next_test(&mut self, initial: &Vm, ended: bool) {
        if !ended {
            self.stop_all();
            self.apply_inputs();
            self.step();
        }
        self.st.whisker_restore(&self.prog, &initial.st);
    }

    /// `RenderedTarget.setEffect` of effect `index` (color, fisheye, whirl, pixelate, mosaic,
    /// brightness, ghost), clamped as the looks blocks clamp it; other indices do nothing.
    pub fn set_effect(&mut self, id: TargetId, index: usize, value: f64) {
        let Ok(e) = u8::try_from(index) else { return };
        if index >= 7 || !value.is_finite() {
            return;
        }
        let v = crate::blocks::looks::clamp_effect(e, value);
        if let Some(t) = self.st.target_mut(id) {
            t.effects[index] = v;
            if crate::blocks::looks::is_shape_effect(e) {
                t.hull_dirty();
            }
        }
    }

    /// `RenderedTarget.goToFront` (`front`) or `goToBack` of a sprite, as a test driver calls it.
    pub fn go_front_back(&mut self, id: TargetId, front: bool) {
        self.st.go_front_back(id, front);
    }

    /// Drops every SVG skin's MIPs, as scratch-render's `SVGSkin.resetMIPs` on all skins: the
    /// next frame and query make them again, so collision silhouettes are those of a fresh
    /// renderer (what an exported suite's prologue asks for; a no-op without geometry).
    pub fn reset_mips(&mut self) {
        self.st.geometry.reset_mips();
    }

    /// Empties scratch-vm's cache of compiled blocks (`Blocks.resetCache` on every target):
    /// a reporter held in two input slots reports to the holder whose cached form was built
    /// last, and the forms are built again in the order blocks run from now on, as after a
    /// fresh load (what an exported suite's prologue asks for on such a project; a no-op on
    /// the others, where the cache is invisible).
    pub fn reset_block_cache(&mut self) {
        if let Some(info) = self.prog.shared.as_deref() {
            self.st.shared = Some(Box::new(crate::engine::shared::SharedState::new(info)));
        }
    }

    /// Whether this VM's renderer keeps state between queries (MIPs, convex hulls), as
    /// Whisker's live renderer does: the `whisker` profile.
    pub fn renderer_keeps_state(&self) -> bool {
        self.st.geometry.kept_hulls().is_some()
    }

    /// The renderer's kept MIPs now, to be put back by [`Vm::restore_mips`] (`None` when the
    /// profile keeps none: nothing to restore).
    pub fn mips_checkpoint(&self) -> Option<crate::geometry::render::SilhouetteFloors> {
        self.st.geometry.kept_mips()
    }

    /// Puts back the MIPs of [`Vm::mips_checkpoint`]: the queries asked in between leave no
    /// trace (the recorder of exported assertions tries each touching check the way the
    /// runner asks it and keeps its MIPs only when the check is exported).
    pub fn restore_mips(&mut self, mips: Option<crate::geometry::render::SilhouetteFloors>) {
        if let Some(m) = mips {
            self.st.geometry.restore_mips(m);
        }
    }

    /// Restarts the project-visible random stream from the JavaScript number `seed`
    /// (Whisker's `seedScratch`): the profile's own generator, as at load.
    pub fn reseed(&mut self, seed: f64) {
        self.st.rng = ProjectRng::for_js_seed(self.st.opts.profile, seed);
    }

    /// Draws the next number of the project-visible random stream for a test's own
    /// `Math.random`: Whisker replaces the page's one global `Math.random` with its seeded
    /// stream, so the test code and the project (and scratch-vm's internal ids) share it.
    pub fn math_random(&mut self) -> f64 {
        self.st.random()
    }

    /// How many PROJECT_STOP_ALL events happened so far (green flag, stop sign, `stop all`):
    /// Whisker's Neatest ends a playthrough on the first one after its green flag.
    pub fn stop_all_count(&self) -> u64 {
        self.st.observe.stop_alls
    }

    /// Targets in `runtime.targets` order: originals in load order, then clones by creation.
    pub fn runtime_targets(&self) -> Vec<TargetId> {
        self.st.targets.runtime_order.iter().copied().filter(|&id| self.st.target(id).is_some()).collect()
    }

    /// Whether key `key` (a Scratch or DOM key name) is down, as `key (key) pressed?` reads it.
    pub fn is_key_down(&self, key: &str) -> bool {
        let k = crate::io::keyboard::normalize_key(key);
        if k == "any" {
            return !self.st.io.keys.is_empty();
        }
        self.st.io.keys.iter().any(|x| **x == *k)
    }

    /// Rotation style of a live target: `all around`, `left-right` or `don't rotate`.
    pub fn rotation_style(&self, id: TargetId) -> Option<&'static str> {
        self.st.target(id).map(|t| ROT_NAMES.get(t.rotation_style as usize).copied().unwrap_or(ROT_NAMES[0]))
    }

    /// The raw bubble state of a live target: `None` before it ever spoke, else
    /// `(think, text)` with an empty text once the bubble was cleared (looks' custom state).
    pub fn bubble_state(&self, id: TargetId) -> Option<(bool, &str)> {
        let b = self.st.target(id)?.bubble.as_ref()?;
        Some((b.think, &*b.text))
    }

    /// Items of list `name` of a live target (its own lists only), as JS values.
    pub fn list_items(&self, id: TargetId, name: &str) -> Option<Vec<Value>> {
        let t = self.st.target(id)?;
        let slot = self.var_slot(id, name, true)?;
        Some(t.lists.get(slot)?.iter().map(|v| self.prog_value(v)).collect())
    }

    /// Names of the lists of a live target (declared, then created at run time).
    pub fn list_names(&self, id: TargetId) -> Vec<&str> {
        self.list_lengths(id).into_iter().map(|(n, _)| n).collect()
    }

    /// Sets scalar variable `name` of a live target (its own variables only). Returns
    /// whether the variable exists.
    pub fn set_variable(&mut self, id: TargetId, name: &str, value: &Value) -> bool {
        let Some(slot) = self.var_slot(id, name, false) else { return false };
        let v = match value {
            Value::Num(n) => V::num(*n),
            Value::Bool(b) => V::bool(*b),
            Value::Str(s) => V::Str(crate::engine::value::JsStr::from(&**s)),
            Value::Undefined => V::Undef,
            Value::Null => V::Null,
        };
        match self.st.target_mut(id).and_then(|t| t.vars.get_mut(slot)) {
            Some(x) => {
                *x = v;
                true
            }
            None => false,
        }
    }

    /// `RenderedTarget.setXY(x, y)` from outside: fenced by the geometry, pen lines follow,
    /// a move event is recorded. With `force` it is a drag instead (`setXY(x, y, true)`:
    /// fenced, no pen line).
    pub fn set_position(&mut self, id: TargetId, x: f64, y: f64, force: bool) {
        if force {
            self.st.drag_to(&self.prog, id, x, y);
        } else {
            self.st.set_xy(&self.prog, id, x, y);
        }
    }

    /// Whether move events carry the scene (every sprite's pose) right after the move: a
    /// test driver whose move callbacks ask questions turns it on for the steps it needs.
    pub fn record_move_scenes(&mut self, on: bool) {
        self.st.observe.move_scenes = on;
    }

    /// The pose of every live target (the stage too), in `runtime.targets` order.
    pub fn poses(&self) -> Vec<Pose> {
        self.st.poses()
    }

    /// Puts a target back into a recorded pose, without fencing, pen or event: a test
    /// driver replays a step's moves to its callbacks this way and then restores the step's
    /// end state.
    pub fn place(&mut self, pose: &Pose) {
        let Some(t) = self.st.target_mut(pose.target) else { return };
        // A step can switch the backdrop or change effects after a move: a query in the
        // move's callback sees them as they were then.
        t.costume = pose.costume;
        t.effects = pose.effects;
        t.stale = pose.shown.map(Box::new);
        if !t.is_stage {
            t.x = pose.x;
            t.y = pose.y;
            t.direction = pose.direction;
            t.size = pose.size;
            t.visible = pose.visible;
        }
    }

    /// `RenderedTarget.setVisible`.
    pub fn set_visible(&mut self, id: TargetId, visible: bool) {
        self.st.set_visible(id, visible);
    }

    /// `RenderedTarget.setSize` (clamped to the costume like the renderer does).
    pub fn set_size(&mut self, id: TargetId, size: f64) {
        self.st.set_size(&self.prog, id, size);
    }

    /// `RenderedTarget.setDirection`.
    pub fn set_direction(&mut self, id: TargetId, direction: f64) {
        self.st.set_direction(id, direction);
    }

    /// A Whisker test driver's `Sprites` starts empty (`VMWrapper.start` at every test): from
    /// now on the VM mirrors which targets it has wrapped, and the clones it wraps as they are
    /// made ([`Vm::whisker_wrap`]).
    pub fn whisker_wrappers_reset(&mut self) {
        self.st.whisker_wrapped = Some(std::collections::BTreeMap::new());
    }

    /// Whisker's `wrapTarget` made a new wrapper for target `id`: its
    /// `target.removeAllListeners()` takes the pen's listener away, so a sprite whose pen is
    /// down stops drawing until its next `pen up` and `pen down` (the say bubble's listener,
    /// which only places the bubble, goes too). Nothing for a target whose id and sprite
    /// already have a wrapper, or before [`Vm::whisker_wrappers_reset`].
    pub fn whisker_wrap(&mut self, id: TargetId) {
        self.st.whisker_wrap(id);
    }

    /// The live target whose fields Whisker's wrapper of target `id` reads: the cached wrapper
    /// of `id`'s Whisker id when it belongs to the same sprite, which for a clone whose id
    /// repeats its original's (Whisker seeds the stream again before every test) is the
    /// original's wrapper; else `id` itself (also before [`Vm::whisker_wrappers_reset`], and
    /// when the cached wrapper's target is gone: its last fields are not kept here).
    pub fn whisker_wrapper_target(&self, id: TargetId) -> TargetId {
        let Some(t) = self.st.target(id) else { return id };
        let cached = self.st.whisker_wrapped.as_ref().and_then(|w| w.get(&t.uid_draw));
        match cached {
            Some(&(def, other)) if def == t.def && self.st.target(other).is_some() => other,
            _ => id,
        }
    }

    /// An assignment to a sprite's `direction` field, as Whisker's `loadSaveState` makes:
    /// not wrapped, and not handed to the renderer, which keeps showing the pose it had.
    pub fn assign_direction(&mut self, id: TargetId, direction: f64) {
        let Some(t) = self.st.target_mut(id) else { return };
        if t.is_stage || !direction.is_finite() {
            return;
        }
        let shown = t.render_pose();
        t.direction = direction;
        if shown != (t.direction, t.size, t.rotation_style) {
            t.stale.get_or_insert_with(Default::default).pose = Some(shown);
        }
    }

    /// `RenderedTarget.updateAllDrawableProperties`: the renderer shows the target's fields
    /// again (costume, direction and scale, visibility, effects; a new effect value marks a
    /// shape-changing effect's hull dirty, and every effect is set).
    pub fn update_all_drawable_properties(&mut self, id: TargetId) {
        let Some(t) = self.st.target_mut(id) else { return };
        t.costume_rendered();
        t.pose_rendered();
        t.visibility_rendered();
        t.hull_dirty();
        self.st.visual_change(id, true);
    }

    /// `RenderedTarget.setCostume` (index rounded and wrapped into range).
    pub fn set_costume(&mut self, id: TargetId, index: f64) {
        self.st.set_costume_index(&self.prog, id, index);
    }

    /// Whether the touching queries of this driver (`touching_sprite`, `touching_color`,
    /// `color_touching_color`) leave the MIPs they create in the renderer, as the program's
    /// own queries do in the `whisker` profile. Off (the default), they are observations that
    /// leave the renderer as it was. On is what the real Whisker does for a hand-written
    /// suite: its sprite wrapper asks the live renderer (`isTouchingDrawables` makes the
    /// asking skin's 100 % MIP, which only ever upgrades its silhouette), so a test that asks
    /// `isTouchingSprite` changes the program's later answers. The generator never turns it on.
    pub fn set_driver_queries_leave_mips(&mut self, on: bool) {
        self.driver_mips = on;
    }

    /// Whether a live target touches colour `rgb`, as `touching color?` answers. An
    /// observation unless [`Vm::set_driver_queries_leave_mips`] is on.
    pub fn touching_color(&mut self, id: TargetId, rgb: [u8; 3]) -> bool {
        let prog: &Program = &self.prog;
        let scene = crate::geometry::render_scene!(prog, self.st);
        self.st.geometry.set_observing(!self.driver_mips);
        let answer = self.st.geometry.touching_color(&scene, id, rgb);
        self.st.geometry.set_observing(false);
        answer
    }

    /// Whether colour `color` of a live target touches colour `mask`, as `color is touching
    /// color?` answers. An observation unless [`Vm::set_driver_queries_leave_mips`] is on.
    pub fn color_touching_color(&mut self, id: TargetId, color: [u8; 3], mask: [u8; 3]) -> bool {
        let prog: &Program = &self.prog;
        let scene = crate::geometry::render_scene!(prog, self.st);
        self.st.geometry.set_observing(!self.driver_mips);
        let answer = self.st.geometry.color_touching_color(&scene, id, color, mask);
        self.st.geometry.set_observing(false);
        answer
    }

    /// Whether a live target touches the mouse pointer, as `touching mouse-pointer?` answers.
    pub fn touching_mouse(&mut self, id: TargetId) -> bool {
        let prog: &Program = &self.prog;
        let (x, y) = (self.st.io.mouse_x, self.st.io.mouse_y);
        let scene = crate::geometry::render_scene!(prog, self.st);
        self.st.geometry.touching_point(&scene, id, x, y)
    }

    /// Slot of the own variable (or list) `name` of a live target.
    fn var_slot(&self, id: TargetId, name: &str, list: bool) -> Option<usize> {
        let t = self.st.target(id)?;
        let def = self.prog.def(t.def);
        if let Some(s) = def.vars.iter().position(|v| v.is_list == list && &*v.name == name) {
            return Some(s);
        }
        t.dyn_vars.iter().find_map(|&(d, is_list, slot)| {
            (is_list == list && self.prog.dyn_vars.get(d as usize).is_some_and(|dv| &*dv.name == name))
                .then_some(slot as usize)
        })
    }
}
