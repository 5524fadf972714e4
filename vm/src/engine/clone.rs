//! Clones (scratch-vm's `RenderedTarget.makeClone` and `dispose`): at most [`MAX_CLONES`]
//! alive, each behind its parent in the layer order.

use super::{State, Target, TargetId};
use crate::extensions::pen::PenState;
use crate::program::{HatKind, Program};

/// Most clones alive at once (scratch-vm's limit).
pub const MAX_CLONES: u32 = 300;

impl State {
    // ---------------------------------------------------------------- clones

    /// How many clones may be alive: scratch-vm's limit, and under the `whisker` profile the
    /// clones Whisker's repeated loads leave room for ([`crate::whisker::clone_allowance`]).
    fn max_clones(&self, prog: &Program) -> u32 {
        if self.whisker() {
            MAX_CLONES.saturating_add(crate::whisker::clone_allowance(prog.layer_order.len()))
        } else {
            MAX_CLONES
        }
    }

    /// `makeClone` + the create-clone block: a clone of `of` placed behind `behind`.
    pub(crate) fn create_clone(&mut self, prog: &Program, of: TargetId) -> Option<TargetId> {
        let src = self.target(of)?;
        if src.is_stage || self.targets.clone_count >= self.max_clones(prog) {
            return None;
        }
        let def = src.def as usize;
        // `new RenderedTarget` takes a `uid()`.
        let uid_draw = self.budget.draws - self.uid_base;
        self.uid_draws();
        self.targets.clone_count += 1;
        let serial = self.targets.clone_serial.get(def).copied().unwrap_or(1);
        if let Some(s) = self.targets.clone_serial.get_mut(def) {
            *s += 1;
        }
        let src = self.target(of)?;
        let clone_id = 1 + self
            .targets
            .runtime_order
            .iter()
            .filter(|&&id| self.target(id).is_some_and(|t| t.def == src.def && !t.is_original))
            .count() as u32;
        let clone = Target {
            def: src.def,
            is_stage: false,
            is_original: false,
            clone_index: serial,
            clone_id,
            uid_draw,
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
            // `_onTargetCreated` copies the original's pen and listens when it is down.
            pen: self.original_of(src.def).map_or(PenState::default(), |o| PenState { listening: o.pen.down, ..o.pen }),
            instrument: self.original_of(src.def).map_or(0.0, |o| o.instrument),
            voice: self.original_of(src.def).map_or(0, |o| o.voice),
            // `initDrawable` hands the clone's own fields to its new drawable.
            stale: None,
            move_trig: src.move_trig,
            // A new drawable: no hull yet (and a new id the geometry knows nothing of).
            hull_epoch: 0,
            // A new `RenderedTarget`: its `glidingStackFrame` is null.
            glide: 0,
        };
        let id = match self.targets.free.pop() {
            Some(slot) => {
                let e = &mut self.targets.slots[slot as usize];
                e.0 = e.0.wrapping_add(1);
                e.1 = Some(clone);
                TargetId { slot, gn: e.0 }
            }
            None => {
                self.targets.slots.push((0, Some(clone)));
                TargetId { slot: (self.targets.slots.len() - 1) as u32, gn: 0 }
            }
        };
        // Whisker's `onTargetCreated` wraps the clone at once, after the pen's listener.
        self.whisker_wrap(id);
        // `initDrawable` starts "when I start as a clone" before the clone is added.
        self.start_hats(prog, HatKind::CloneStart, None, Some(id));
        // `updateAllDrawableProperties`: a visual change, heard by the listeners Whisker put on
        // the clone when `targetWasCreated` wrapped it just before.
        self.visual_change(id, true);
        self.targets.runtime_order.push(id);
        self.targets.exec.push(id);
        self.targets.layer_epoch += 1;
        self.targets.target_epoch += 1;
        // goBehindOther(of)
        let pos = self.targets.exec.iter().position(|&x| x == of).unwrap_or(0);
        self.set_executable_position(id, pos as f64);
        if let Some(d) = &mut self.targets.draw {
            d.add_clone(id, of);
        }
        Some(id)
    }

    /// The original target of a sprite definition.
    pub(crate) fn original_of(&self, def: u32) -> Option<&Target> {
        self.targets.slots.get(def as usize).and_then(|(_, t)| t.as_ref()).filter(|t| t.is_original && t.def == def)
    }

    /// `RenderedTarget.dispose` of a clone (also `control_delete_this_clone`).
    pub(crate) fn dispose_clone(&mut self, prog: &Program, id: TargetId) {
        let Some(t) = self.target(id) else { return };
        if t.is_original {
            return;
        }
        self.visual_change(id, true);
        self.targets.clone_count = self.targets.clone_count.saturating_sub(1);
        self.stop_for_target(prog, id, None);
        self.targets.exec.retain(|&x| x != id);
        if let Some(d) = &mut self.targets.draw {
            d.remove(id);
        }
        self.targets.layer_epoch += 1;
        self.targets.target_epoch += 1;
        self.targets.runtime_order.retain(|&x| x != id);
        if let Some(e) = self.targets.slots.get_mut(id.slot as usize) {
            e.1 = None;
            self.targets.free.push(id.slot);
        }
    }
}
