//! Whisker's reset between the tests of one file. The real Whisker (emse22) runs a suite's
//! tests one after the other in one VM; before each it calls `VMWrapper.loadSaveState`
//! (`whisker-main/src/vm/vm-wrapper.js`), which deletes the clones and assigns every
//! original target's recorded fields: direction, size, costume, draggability, effects,
//! visibility, volume, variables and lists, and the position through `setXY(x, y, force)`.
//! Everything else stays as the previous test left it: the layer (and so execution) order,
//! rotation styles, the pen layer and pen states, instruments, voices and tempo, the renderer's
//! copy of the assigned looks (see [`super::target::Stale`]), MIPs, the answer,
//! `control_incr_counter`. Then `start()` clicks the green flag and the test seeds the random
//! stream again.

use super::State;
use super::target::Stale;
use crate::program::Program;
use crate::rng::ProjectRng;

impl State {
    /// `loadSaveState` with the loaded project's state `initial` (a VM of the same project
    /// that has not run), plus what `start()` resets that a fresh VM starts with: the step
    /// counter and clocks (Whisker's `stepsExecuted` and `stepTimer` are set to 0), the
    /// inputs, mouse and keyboard, and the project's random stream, seeded as at creation.
    pub(crate) fn whisker_restore(&mut self, prog: &Program, initial: &State) {
        // Clones: `stopForTarget` and `disposeTarget`.
        let clones: Vec<_> = self
            .targets
            .runtime_order
            .iter()
            .copied()
            .filter(|&id| self.target(id).is_some_and(|t| !t.is_original))
            .collect();
        for id in clones {
            self.dispose_clone(prog, id);
        }
        let originals: Vec<_> = self.targets.runtime_order.clone();
        for id in originals {
            let Some(init) = initial.targets.slots.get(id.slot as usize).and_then(|(_, t)| t.as_ref()) else {
                continue;
            };
            let Some(t) = self.target_mut(id) else { continue };
            if t.def != init.def {
                continue;
            }
            // What the drawable shows now; the assignments below do not reach it.
            let shown = (t.render_costume(), t.render_pose(), t.render_visible());
            t.direction = init.direction;
            t.size = init.size;
            t.costume = init.costume;
            t.draggable = init.draggable;
            t.effects = init.effects;
            t.visible = init.visible;
            t.volume = init.volume;
            t.vars.clone_from(&init.vars);
            t.lists.clone_from(&init.lists);
            t.dyn_vars.clone_from(&init.dyn_vars);
            let mut stale = Stale::default();
            if shown.0 != t.costume {
                stale.costume = Some(shown.0);
            }
            if shown.1 != (t.direction, t.size, t.rotation_style) {
                stale.pose = Some(shown.1);
            }
            if shown.2 != t.visible {
                stale.visible = Some(shown.2);
            }
            t.stale = (stale != Stale::default()).then(|| Box::new(stale));
            // `setXY(x, y, true)` of the saved position, the one in the project file (`initial`
            // holds it fenced): fenced by the renderer as it now is, no pen line.
            let (x, y) = prog.defs.get(init.def as usize).map_or((init.x, init.y), |d| (d.x, d.y));
            let is_stage = t.is_stage;
            if !is_stage {
                let (x, y) = self.fenced(prog, id, x, y);
                if let Some(t) = self.target_mut(id) {
                    t.x = x;
                    t.y = y;
                }
            }
        }
        self.ext.video_state = initial.ext.video_state;
        self.ext.video_transparency = initial.ext.video_transparency;
        self.clock = initial.clock.clone();
        self.timers = initial.timers.clone();
        self.microtasks.clear();
        self.io = initial.io.clone();
        self.rng = ProjectRng::new(self.opts.profile, self.opts.seed);
        self.uid_base = self.budget.draws;
    }
}
