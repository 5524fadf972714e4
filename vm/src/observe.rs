//! Observing a running VM from outside: the target properties testgen's
//! regression assertions read (Whisker paper Table 4), and a fresh copy of a
//! project for editing (mutation analysis). Read-only: nothing here changes
//! what the program does next (touching queries only fill geometry caches).

use crate::Vm;
use crate::engine::{TargetId, V};
use crate::program::Program;
use crate::project::Project;
use crate::value::Value;

impl Vm {
    /// Volume (%) of a live target.
    pub fn volume(&self, id: TargetId) -> Option<f64> {
        self.st.target(id).map(|t| t.volume)
    }

    /// Graphic effects of a live target: color, fisheye, whirl, pixelate,
    /// mosaic, brightness, ghost.
    pub fn effects(&self, id: TargetId) -> Option<[f64; 7]> {
        self.st.target(id).map(|t| t.effects)
    }

    /// The bubble of a live target: `(think, text)`; `None` when it shows none.
    pub fn bubble(&self, id: TargetId) -> Option<(bool, &str)> {
        let b = self.st.target(id)?.bubble.as_ref()?;
        (!b.text.is_empty()).then_some((b.think, &*b.text))
    }

    /// Layer of a live target: its index in the layer order, stage 0, then
    /// back to front. Under the `whisker` profile, its index in the renderer's draw list, as
    /// Whisker's `layerOrder` reads it (the pen layer and say/think bubbles count).
    pub fn layer(&self, id: TargetId) -> Option<usize> {
        match &self.st.targets.draw {
            Some(d) if self.st.target(id).is_some_and(|t| !t.is_stage) => d.layer_order(id),
            _ => self.st.targets.exec.iter().position(|&t| t == id),
        }
    }

    /// Scalar variables of a live target, `(name, value)`: declared ones in
    /// declaration order, then the ones created at run time.
    pub fn scalar_variables(&self, id: TargetId) -> Vec<(&str, Value)> {
        self.slots(id, false).into_iter().map(|(name, slot)| (name, self.slot_value(id, slot))).collect()
    }

    /// The scalar variables of a live target that hold JS numbers, in the order of
    /// [`Vm::scalar_variables`], as `f(key, name, value)`: what feature extraction reads every
    /// step, without building the list or copying a value. `key` names the variable's
    /// declaration: within one VM, equal keys have equal names.
    pub fn numeric_variables(&self, id: TargetId, mut f: impl FnMut(u64, &str, f64)) {
        let Some(t) = self.st.target(id) else { return };
        self.for_each_slot(id, false, |key, name, slot| {
            if let Some(V::Num(n)) = t.vars.get(slot) {
                f(key, name, n.get());
            }
        });
    }

    /// Lists of a live target, `(name, length)`, in the same order.
    pub fn list_lengths(&self, id: TargetId) -> Vec<(&str, usize)> {
        let Some(t) = self.st.target(id) else { return Vec::new() };
        self.slots(id, true).into_iter().map(|(name, slot)| (name, t.lists.get(slot).map_or(0, Vec::len))).collect()
    }

    /// Whether a live target touches any instance of sprite `sprite` (index in
    /// `Project::targets`), as `touching (sprite)?` answers. An observation (the renderer's
    /// state stays as it was) unless [`Vm::set_driver_queries_leave_mips`] is on.
    pub fn touching_sprite(&mut self, id: TargetId, sprite: usize) -> bool {
        let prog: &Program = &self.prog;
        let scene = crate::geometry::render_scene!(prog, self.st);
        self.st.geometry.set_observing(!self.driver_mips);
        let answer = self.st.geometry.touching_sprite(&scene, id, sprite);
        self.st.geometry.set_observing(false);
        answer
    }

    /// Whisker's colour search for drag events: the first grid point, walking out from a live
    /// target's position over the stage, where everything else drawn shows `rgb`; `known`
    /// (where the colour was found before) is tried first. `None` without geometry.
    pub fn find_color(&mut self, id: TargetId, rgb: [u8; 3], known: Option<(i64, i64)>) -> Option<(i64, i64)> {
        let prog: &Program = &self.prog;
        let scene = crate::geometry::render_scene!(prog, self.st);
        self.st.geometry.find_color(&scene, id, rgb, known)
    }

    /// The same search over a live target's own costume, within its bounds.
    pub fn find_own_color(&mut self, id: TargetId, rgb: [u8; 3], known: Option<(i64, i64)>) -> Option<(i64, i64)> {
        let prog: &Program = &self.prog;
        let scene = crate::geometry::render_scene!(prog, self.st);
        self.st.geometry.find_own_color(&scene, id, rgb, known)
    }

    /// Whisker's `findColorWithinRadius` (Neatest's colour features): the first point on rings
    /// around `start` (radius 1, then every `resolution` units below `max_radius`, 36 angles
    /// each) where everything drawn shows `rgb`. `None` without geometry.
    pub fn find_color_within_radius(
        &mut self,
        rgb: [u8; 3],
        start: (f64, f64),
        resolution: f64,
        max_radius: f64,
    ) -> Option<(f64, f64)> {
        let prog: &Program = &self.prog;
        let scene = crate::geometry::render_scene!(prog, self.st);
        self.st.geometry.find_color_radial(&scene, rgb, start, resolution, max_radius)
    }

    /// Native size of a live target's current costume (`renderer.getCurrentSkinSize`), when the
    /// geometry knows it.
    pub fn costume_size(&self, id: TargetId) -> Option<(f64, f64)> {
        let t = self.st.target(id)?;
        self.st.geometry.costume_size(t.def as usize, t.costume)
    }

    /// Whether a live target touches the stage edge, as `touching edge?` answers.
    /// An observation unless [`Vm::set_driver_queries_leave_mips`] is on: then, as Whisker's
    /// `isTouchingEdge`, it leaves the sprite's convex hull in the renderer like the program's
    /// `touching edge?`, which can narrow its later `touching` answers.
    pub fn touching_edge(&mut self, id: TargetId) -> bool {
        let prog: &Program = &self.prog;
        let scene = crate::geometry::render_scene!(prog, self.st);
        self.st.geometry.set_observing(!self.driver_mips);
        let answer = self.st.geometry.touching_edge(&scene, id);
        self.st.geometry.set_observing(false);
        answer
    }

    fn slots(&self, id: TargetId, lists: bool) -> Vec<(&str, usize)> {
        let mut out = Vec::new();
        self.for_each_slot(id, lists, |_, name, slot| out.push((name, slot)));
        out
    }

    /// Calls `f(key, name, slot)` for each scalar variable (or, with `lists`, each list) of a
    /// live target: declared ones in declaration order, then the ones created at run time.
    /// `key` names the declaration (equal keys, equal names within one VM).
    fn for_each_slot<'s>(&'s self, id: TargetId, lists: bool, mut f: impl FnMut(u64, &'s str, usize)) {
        let Some(t) = self.st.target(id) else { return };
        let def = self.prog.def(t.def);
        for (s, v) in def.vars.iter().enumerate() {
            if v.is_list == lists {
                f(u64::from(t.def) << 32 | s as u64, &v.name, s);
            }
        }
        for &(d, is_list, slot) in &t.dyn_vars {
            if is_list == lists
                && let Some(dv) = self.prog.dyn_vars.get(d as usize)
            {
                f(1 << 63 | u64::from(d), &dv.name, slot as usize);
            }
        }
    }

    fn slot_value(&self, id: TargetId, slot: usize) -> Value {
        let v = self.st.target(id).and_then(|t| t.vars.get(slot)).unwrap_or(&V::Undef);
        self.prog_value(v)
    }
}

impl Project {
    /// A copy of the project without its compiled program, for editing: the
    /// VM compiles the copy afresh on first use (a plain `clone` would keep
    /// running the original's program). Decoded costumes stay shared.
    pub fn clone_for_edit(&self) -> Project {
        let mut p = self.clone();
        p.compiled = Default::default();
        p
    }
}
