//! Targets (scratch-vm's `RenderedTarget`): the live sprites, clones and the stage, and
//! their layer order (`runtime.executableTargets`).

use crate::util::mathlib::MathLib;
use std::collections::BTreeMap;
use std::rc::Rc;

use super::{State, V};
use crate::extensions::pen::PenState;

/// Identifies a live target (sprite, clone or stage). Stale ids (deleted clones) are never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TargetId {
    pub(crate) slot: u32,
    pub(crate) gn: u32,
}

/// Say/think bubble state (scratch-vm's `Scratch.looks` custom state).
#[derive(Debug, Clone)]
pub(crate) struct Bubble {
    pub think: bool,
    /// Formatted bubble text; empty = no bubble.
    pub text: Rc<str>,
    pub usage: u64,
}

impl Bubble {
    /// Looks' `DEFAULT_BUBBLE_STATE`, which `_getBubbleState` gives a target without one: a
    /// say bubble with no text and no usage.
    pub(crate) fn fresh() -> Bubble {
        Bubble { think: false, text: Rc::from(""), usage: 0 }
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
    /// Profile `whisker`: where in the project's random stream this target's `uid()` began,
    /// which decides its id there: Whisker loads the project from the test seed's stream (an
    /// original's draw is where the sb3 loader took its id, `DefInfo::uid_draw`) and seeds it
    /// again before every test, so a clone whose id starts at the same draw gets the same id
    /// as an original, and Whisker's sprite wrappers, cached by id, mix them up.
    pub uid_draw: u64,
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
    /// Variables created at run time.
    pub(crate) dyn_vars: CreatedVars,
    /// Edge-activated hat values by hat block.
    pub(crate) edge: Vec<(u32, bool)>,
    pub(crate) sound_effects: [f64; 2],
    pub(crate) pen: PenState,
    pub(crate) instrument: f64,
    pub(crate) voice: u8,
    /// What the renderer still shows of this target where it differs from the fields above
    /// (`None` almost always): see [`Stale`].
    pub(crate) stale: Option<Box<Stale>>,
    /// `move (n) steps`' cosine and sine for the direction it last moved in (the direction's
    /// bits, cos, sin): a sprite moves in one direction for many ticks, and the two were a
    /// third of the block's time. A pure function of the direction, so nothing else changes.
    pub(crate) move_trig: MoveTrig,
    /// Counts the changes that mark the renderer's convex hull of this target dirty (a new
    /// skin, a visibility change, a shape-changing effect set or cleared: scratch-render's
    /// `setConvexHullDirty`): the geometry knows a hull computed since as long as this is
    /// unchanged ([`crate::geometry::Geometry::touching_edge`]).
    pub(crate) hull_epoch: u32,
    /// Profile `whisker`: the serial of the last glide this target started (0: none), the
    /// fork's `glidingStackFrame`. A drag by the test driver moves that glide's start to the
    /// dragged position while it is still running ([`crate::blocks::motion`]).
    pub(crate) glide: u64,
}

/// The variables a target created at run time (a reference to an undeclared variable, as
/// scratch-vm's `lookupOrCreateVariable`), in creation order, with the first of each id key
/// and of each (name key, kind) indexed: a target that created many finds them in
/// logarithmic time.
#[derive(Debug, Clone, Default)]
pub(crate) struct CreatedVars {
    /// (dynamic reference in `Program::dyn_vars`, is_list, slot in vars/lists).
    list: Vec<(u32, bool, u32)>,
    by_id: BTreeMap<u32, u32>,
    by_name: BTreeMap<(u32, bool), u32>,
}

impl CreatedVars {
    /// Records a created variable: reference `d` with the keys of its id and name.
    pub(crate) fn push(&mut self, d: u32, is_list: bool, slot: u32, id_key: u32, name_key: u32) {
        self.list.push((d, is_list, slot));
        self.by_id.entry(id_key).or_insert(slot);
        self.by_name.entry((name_key, is_list)).or_insert(slot);
    }

    /// The slot of the first created with this id key.
    pub(crate) fn by_id(&self, id_key: u32) -> Option<u32> {
        self.by_id.get(&id_key).copied()
    }

    /// The slot of the first created with this name key and kind.
    pub(crate) fn by_name(&self, name_key: u32, is_list: bool) -> Option<u32> {
        self.by_name.get(&(name_key, is_list)).copied()
    }

    /// In creation order.
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, (u32, bool, u32)> {
        self.list.iter()
    }
}

impl<'a> IntoIterator for &'a CreatedVars {
    type Item = &'a (u32, bool, u32);
    type IntoIter = std::slice::Iter<'a, (u32, bool, u32)>;

    fn into_iter(self) -> Self::IntoIter {
        self.list.iter()
    }
}

/// See [`Target::move_trig`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct MoveTrig {
    dir_bits: u64,
    cos: f64,
    sin: f64,
}

impl MoveTrig {
    /// The values for `direction` (`MathUtil.degToRad(90 - direction)`, then `cos`, `sin`).
    /// Out of line: inlined, it made the hit path of `move` slower than no cache at all.
    #[inline(never)]
    pub(crate) fn of(direction: f64, maths: MathLib) -> MoveTrig {
        let r = crate::blocks::motion::deg_to_rad(90.0 - direction);
        let (sin, cos) = maths.sin_cos(r);
        MoveTrig { dir_bits: direction.to_bits(), cos, sin }
    }

    /// Cosine and sine for `direction`, computed again only when it changed.
    #[inline]
    pub(crate) fn get(&mut self, direction: f64, maths: MathLib) -> (f64, f64) {
        if self.dir_bits != direction.to_bits() {
            *self = MoveTrig::of(direction, maths);
        }
        (self.cos, self.sin)
    }
}

/// The renderer's copy of a target's look where the fields were assigned without telling it.
/// Only Whisker's reset between the tests of a file does that (emse22's `loadSaveState`
/// assigns `currentCostume`, `direction`, `size` and `visible`); the drawable keeps the
/// previous test's skin, direction and scale, or visibility until the program next sets the
/// costume, the direction, size or rotation style, or the visibility, which hands the fields
/// to the renderer again. Touching, colour, bounds, fencing and clicks see these.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Stale {
    /// The costume whose skin the drawable shows.
    pub costume: Option<i64>,
    /// Direction, size and rotation style the drawable's direction and scale were made from.
    pub pose: Option<(f64, f64, u8)>,
    /// The drawable's visibility.
    pub visible: Option<bool>,
}

impl Target {
    /// The costume the renderer shows.
    #[inline]
    pub(crate) fn render_costume(&self) -> i64 {
        self.stale.as_ref().and_then(|s| s.costume).unwrap_or(self.costume)
    }

    /// Direction, size and rotation style the renderer's direction and scale come from.
    #[inline]
    pub(crate) fn render_pose(&self) -> (f64, f64, u8) {
        self.stale.as_ref().and_then(|s| s.pose).unwrap_or((self.direction, self.size, self.rotation_style))
    }

    /// Whether the renderer draws this target.
    #[inline]
    pub(crate) fn render_visible(&self) -> bool {
        self.stale.as_ref().and_then(|s| s.visible).unwrap_or(self.visible)
    }

    /// The renderer's convex hull of this target is dirty from now on.
    pub(crate) fn hull_dirty(&mut self) {
        self.hull_epoch = self.hull_epoch.wrapping_add(1);
    }

    /// The program set the costume: the renderer shows it again.
    pub(crate) fn costume_rendered(&mut self) {
        if let Some(s) = &mut self.stale {
            s.costume = None;
            self.drop_empty_stale();
        }
    }

    /// The program set the direction, size or rotation style: the renderer's direction and
    /// scale follow the fields again.
    pub(crate) fn pose_rendered(&mut self) {
        if let Some(s) = &mut self.stale {
            s.pose = None;
            self.drop_empty_stale();
        }
    }

    /// The program set the visibility.
    pub(crate) fn visibility_rendered(&mut self) {
        if let Some(s) = &mut self.stale {
            s.visible = None;
            self.drop_empty_stale();
        }
    }

    fn drop_empty_stale(&mut self) {
        if self.stale.as_deref() == Some(&Stale::default()) {
            self.stale = None;
        }
    }
}

/// Entries of [`State::render_log`] kept before it is emptied (then the geometry re-checks
/// every target once).
const RENDER_LOG_CAP: usize = 4096;

impl State {
    #[inline]
    pub(crate) fn target(&self, id: TargetId) -> Option<&Target> {
        match self.targets.slots.get(id.slot as usize) {
            Some((g, Some(t))) if *g == id.gn => Some(t),
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn target_mut(&mut self, id: TargetId) -> Option<&mut Target> {
        // Every change to a live target goes through here: log it for the geometry.
        if self.targets.render_log.len() >= RENDER_LOG_CAP {
            self.targets.render_log_base += self.targets.render_log.len() as u64;
            self.targets.render_log.clear();
        }
        self.targets.render_log.push(id.slot);
        self.target_cache_mut(id)
    }

    /// A live target for a cache that changes nothing the geometry sees: not logged (a logged
    /// look-up counts as a change in the geometry's work).
    #[inline]
    pub(crate) fn target_cache_mut(&mut self, id: TargetId) -> Option<&mut Target> {
        match self.targets.slots.get_mut(id.slot as usize) {
            Some((g, Some(t))) if *g == id.gn => Some(t),
            _ => None,
        }
    }

    /// `runtime.getTargetForStage()` (the first stage in load order; never deleted).
    #[inline]
    pub(crate) fn stage(&self) -> TargetId {
        TargetId { slot: self.targets.stage_slot, gn: 0 }
    }

    /// `runtime.moveExecutable`.
    pub(crate) fn move_executable(&mut self, id: TargetId, delta: f64) {
        let Some(old) = self.targets.exec.iter().position(|&x| x == id) else { return };
        self.move_executable_from(old, delta);
    }

    /// [`Self::move_executable`] of the target at index `old` of the execution order.
    fn move_executable_from(&mut self, old: usize, delta: f64) {
        self.targets.layer_epoch += 1;
        // The order without the target, as scratch-vm's splice leaves it.
        let len = self.targets.exec.len() - 1;
        let mut ni = old as f64 + delta;
        if ni > len as f64 {
            ni = len as f64;
        }
        if ni <= 0.0 {
            let first = self.targets.exec.get(usize::from(old == 0)).copied();
            let stage_first = first.and_then(|x| self.target(x)).is_some_and(|t| t.is_stage);
            ni = if stage_first { 1.0 } else { 0.0 };
        }
        let idx = crate::value::splice_index(ni, len);
        // Removing and inserting at the same place changes nothing: a `go to front` of the
        // frontmost of hundreds of clones moves no memory.
        if idx != old {
            let id = self.targets.exec.remove(old);
            self.targets.exec.insert(idx, id);
        }
    }

    /// `runtime.setExecutablePosition`.
    pub(crate) fn set_executable_position(&mut self, id: TargetId, new_index: f64) {
        let Some(old) = self.targets.exec.iter().position(|&x| x == id) else { return };
        self.move_executable_from(old, new_index - old as f64);
    }
}

/// The live targets and their orders.
#[derive(Clone)]
pub(crate) struct Targets {
    /// Target slots (generation, target): sprites in load order first, then clones; a freed
    /// slot is reused with the next generation, so stale ids find nothing.
    pub slots: Vec<(u32, Option<Target>)>,
    /// Free slots.
    pub free: Vec<u32>,
    /// `runtime.targets`: originals in load order, then clones by creation.
    pub runtime_order: Vec<TargetId>,
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
    /// Bumped whenever targets are created or disposed.
    pub target_epoch: u64,
    /// Clones alive (at most [`super::MAX_CLONES`], more under the `whisker` profile).
    pub clone_count: u32,
    /// Per sprite: the clone index the next clone gets.
    pub clone_serial: Vec<u32>,
    /// Slot of the stage (the first stage in load order; never deleted).
    pub stage_slot: u32,
    /// The renderer's sprite drawables with bubbles, for Whisker's `layerOrder` (profile
    /// `whisker` only).
    pub draw: Option<crate::whisker::DrawList>,
}
