//! The geometry seam: everything that needs costume pixels or a renderer goes
//! through [`Geometry`], so the headless profile (no renderer) and the
//! pixel-accurate geometry layer are interchangeable.
//!
//! The interpreter asks a [`Geometry`] the questions scratch-vm asks
//! scratch-render: touching a sprite (any of its clones) / the edge / the mouse
//! pointer / a colour, colour touching colour, bounds (for `if on edge,
//! bounce`), fencing of position changes, the costume size that clamps `set
//! size`, which target is under a point (clicks), and distances for branch
//! distances. Pen drawing (lines, points, stamps, clear) goes through it too, so
//! colour sensing can see the pen layer. The pen *state* (down, colour, size)
//! lives in the VM.
//!
//! Every method has a default implementing the headless semantics (scratch-vm
//! without renderer): touching is false, nothing is fenced, no bounds, no size
//! limits, pen drawing does nothing. [`NoGeometry`] is exactly those defaults.
//!
//! Queries get a [`Scene`]: a read-only view of the live targets in layer order
//! (back to front, as scratch-vm's `executableTargets`), with each target's
//! render state ([`TargetView`]). Implementations receive the project when they
//! are created ([`for_project`]) and may keep decoded costumes there (the
//! project's `geometry_data` slot caches per-project data across VMs).

// The CPU renderer (helper `geometry`, issue 7): costume decoding, silhouettes,
// transforms and scratch-render's queries; `cpu` puts it behind the trait below.
pub mod aaa;
pub(crate) mod accel;
pub mod cost;
pub mod cpu;
pub mod distance;
pub mod drawable;
pub mod effects;
pub mod hull;
pub mod key_cells;
pub mod pen;
pub mod query;
#[cfg(test)]
mod radial_tests;
pub mod rect;
pub mod render;
pub mod silhouette;
pub mod skin;
pub mod svg;
pub mod svg_blend;
pub mod svg_raster;

use std::any::Any;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::{Arc, OnceLock};

use crate::engine::{Target, TargetId};
use crate::program::{Program, ROT_NAMES};
use crate::project::Project;

pub use rect::Rect;

/// What a renderer needs to know about one target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TargetView<'a> {
    /// Index of the sprite in `Project::targets`.
    pub sprite: usize,
    /// Sprite name (clones share it).
    pub name: &'a str,
    /// Whether this is the stage.
    pub is_stage: bool,
    /// Whether this is the original sprite (not a clone).
    pub is_original: bool,
    /// Costume index into `Project::targets[sprite].costumes` (-1 when it has none).
    pub costume: i64,
    /// Position x.
    pub x: f64,
    /// Position y.
    pub y: f64,
    /// Direction in degrees (-179..180).
    pub direction: f64,
    /// Size in percent.
    pub size: f64,
    /// `all around`, `left-right` or `don't rotate`.
    pub rotation_style: &'static str,
    /// Visibility.
    pub visible: bool,
    /// Graphic effects: color, fisheye, whirl, pixelate, mosaic, brightness, ghost.
    pub effects: [f64; 7],
    /// Draggable flag (nothing is ever being dragged in the VM).
    pub draggable: bool,
}

/// A read-only view of the live targets for geometry queries.
pub struct Scene<'a> {
    prog: &'a Program,
    targets: &'a [(u32, Option<Target>)],
    exec: &'a [TargetId],
    changes: Option<Changes<'a>>,
}

/// What changed in the VM since a geometry last looked, so that it can bring a kept scene up
/// to date without checking every target on every query (projects with hundreds of clones ask
/// hundreds of questions per frame).
#[derive(Debug, Clone, Copy)]
pub struct Changes<'a> {
    /// Slots of targets handed out mutably, oldest first; entry `k` has absolute number `base + k`.
    pub log: &'a [u32],
    /// Absolute number of `log[0]`.
    pub base: u64,
    /// Changes whenever targets are created or disposed or the layer order changes.
    pub layers: u64,
    /// Changes whenever targets are created or disposed (a query that does not depend on
    /// the layer order can leave a reordering for later while this stays).
    pub targets: u64,
}

/// The [`Scene`] of a VM state (`render_scene!(prog, st)`), with its change log; a macro so that
/// it borrows only the fields it reads and `st.geometry` stays free to be borrowed mutably.
macro_rules! render_scene {
    ($prog:expr, $st:expr) => {
        $crate::geometry::Scene::new($prog, &$st.targets.slots, &$st.targets.exec).with_changes(
            $crate::geometry::Changes {
                log: &$st.targets.render_log,
                base: $st.targets.render_log_base,
                layers: $st.targets.layer_epoch,
                targets: $st.targets.target_epoch,
            },
        )
    };
}
pub(crate) use render_scene;

impl<'a> Scene<'a> {
    pub(crate) fn new(prog: &'a Program, targets: &'a [(u32, Option<Target>)], exec: &'a [TargetId]) -> Self {
        Scene { prog, targets, exec, changes: None }
    }

    /// The same view, with the VM's change log.
    pub(crate) fn with_changes(mut self, changes: Changes<'a>) -> Self {
        self.changes = Some(changes);
        self
    }

    /// The change log, when the VM keeps one.
    pub fn changes(&self) -> Option<Changes<'a>> {
        self.changes
    }

    /// Live targets in layer order, back (stage) to front.
    pub fn layer_order(&self) -> &'a [TargetId] {
        self.exec
    }

    /// The render state of a live target.
    pub fn target(&self, id: TargetId) -> Option<TargetView<'a>> {
        let t = self.raw(id)?;
        let def = self.prog.def(t.def);
        // What the renderer shows (see `Target::render_pose`), which only Whisker's reset
        // between tests makes differ from the fields.
        let (direction, size, rotation) = t.render_pose();
        Some(TargetView {
            sprite: t.def as usize,
            name: self.prog.lit_str(def.name),
            is_stage: t.is_stage,
            is_original: t.is_original,
            costume: t.render_costume(),
            x: t.x,
            y: t.y,
            direction,
            size,
            rotation_style: ROT_NAMES.get(rotation as usize).copied().unwrap_or("all around"),
            visible: t.render_visible(),
            effects: t.effects,
            draggable: t.draggable,
        })
    }

    /// The live target itself (what [`Scene::target`] views), without building the view:
    /// geometry checks every target on every query, so this must be cheap.
    pub(crate) fn raw(&self, id: TargetId) -> Option<&'a Target> {
        let (g, t) = self.targets.get(id.slot as usize)?;
        t.as_ref().filter(|_| *g == id.gn)
    }

    /// The live target in a slot, whatever its generation (a frame looks at every target the
    /// change log names).
    pub(crate) fn raw_slot(&self, slot: u32) -> Option<&'a Target> {
        self.targets.get(slot as usize)?.1.as_ref()
    }

    /// All live targets of a sprite (original and clones), back to front.
    pub fn instances_of(&self, sprite: usize) -> impl Iterator<Item = TargetId> + '_ {
        self.exec.iter().copied().filter(move |&id| self.raw(id).is_some_and(|t| t.def as usize == sprite))
    }
}

impl Clone for Box<dyn Geometry> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// Answers the renderer's questions for the interpreter. The defaults are the
/// headless semantics (no renderer).
pub trait Geometry {
    /// Short label for results: `none`, `approximate` or `exact`.
    fn mode(&self) -> &'static str;

    /// A copy of this geometry with everything it keeps (pen layer, MIPs created, caches), for
    /// [`crate::Vm`]'s `Clone`: a cloned VM answers every later question as the original would.
    fn clone_box(&self) -> Box<dyn Geometry>;

    /// Roughly how many 8-byte words [`Geometry::clone_box`] copies (kept pixels and caches),
    /// for the work a VM's clone is charged.
    fn clone_words(&self) -> u64 {
        0
    }

    /// `touching (sprite)`: `me` touches any visible instance of `sprite` other than itself.
    fn touching_sprite(&mut self, _scene: &Scene, _me: TargetId, _sprite: usize) -> bool {
        false
    }
    /// `touching edge`.
    fn touching_edge(&mut self, _scene: &Scene, _me: TargetId) -> bool {
        false
    }
    /// `touching mouse-pointer` (stage coordinates of the pointer).
    fn touching_point(&mut self, _scene: &Scene, _me: TargetId, _x: f64, _y: f64) -> bool {
        false
    }
    /// `touching color` (what is drawn below `me`, pen layer included).
    fn touching_color(&mut self, _scene: &Scene, _me: TargetId, _rgb: [u8; 3]) -> bool {
        false
    }
    /// `color (target) is touching (mask)`: pixels of `me` in `mask` colour over `target` colour.
    fn color_touching_color(&mut self, _scene: &Scene, _me: TargetId, _target: [u8; 3], _mask: [u8; 3]) -> bool {
        false
    }
    /// Bounds of `me` as drawn (`getBounds`), `None` without renderer.
    fn bounds(&mut self, _scene: &Scene, _me: TargetId) -> Option<Rect> {
        None
    }
    /// Whether position changes are fenced (kept on stage).
    fn fences(&self) -> bool {
        false
    }
    /// `getFencedPositionOfDrawable`: where `me` ends up when asked to move to (x, y).
    fn fenced_position(&mut self, _scene: &Scene, _me: TargetId, x: f64, y: f64) -> (f64, f64) {
        (x, y)
    }
    /// Size of a costume in stage units at 100 % (`getCurrentSkinSize`), for `set size` limits.
    fn costume_size(&self, _sprite: usize, _costume: i64) -> Option<(f64, f64)> {
        None
    }
    /// The front-most visible target under a stage point (`renderer.pick`), for clicks.
    fn pick(&mut self, _scene: &Scene, _x: f64, _y: f64) -> Option<TargetId> {
        None
    }
    /// Distance from `me` to the nearest instance of `sprite`, for branch distances. The
    /// interpreter asks only right after `touching_sprite` answered false for the same scene
    /// (as for the edge and the point below), so implementations need not test touching again.
    fn sprite_distance(&mut self, _scene: &Scene, _me: TargetId, _sprite: usize) -> Option<f64> {
        None
    }
    /// Distance from `me` to the stage edge (asked when not touching it).
    fn edge_distance(&mut self, _scene: &Scene, _me: TargetId) -> Option<f64> {
        None
    }
    /// Distance from `me` to a point (asked when not touching it).
    fn point_distance(&mut self, _scene: &Scene, _me: TargetId, _x: f64, _y: f64) -> Option<f64> {
        None
    }
    /// Colour distance for `touching color`, asked right after `touching_color` answered false
    /// for the same colour and scene (implementations need not test touching again), as
    /// `min(distance, below)`: a caller that cannot use a distance at or above `below` lets the
    /// search stop there (`f64::INFINITY`: the whole distance).
    fn color_distance(&mut self, _scene: &Scene, _me: TargetId, _rgb: [u8; 3], _below: f64) -> Option<f64> {
        None
    }
    /// Whisker's colour search for its drag events (`ScratchEventExtractor._findColorOnCanvas`):
    /// the first point of the grid walk from `me`'s position over the stage where the other
    /// visible drawables show `rgb`, after `known` (where the colour was found before), which
    /// is tried first. `None`: nowhere, or no renderer.
    fn find_color(
        &mut self,
        _scene: &Scene,
        _me: TargetId,
        _rgb: [u8; 3],
        _known: Option<(i64, i64)>,
    ) -> Option<(i64, i64)> {
        None
    }
    /// Whisker's `findColorWithinRadius` over everything drawn (see
    /// [`distance::radial_find_color`]); `None` without geometry.
    fn find_color_radial(
        &mut self,
        _scene: &Scene,
        _rgb: [u8; 3],
        _start: (f64, f64),
        _resolution: f64,
        _max_radius: f64,
    ) -> Option<(f64, f64)> {
        None
    }
    /// The same search over `me`'s own costume within its bounds (`_findColorOnSprite`).
    fn find_own_color(
        &mut self,
        _scene: &Scene,
        _me: TargetId,
        _rgb: [u8; 3],
        _known: Option<(i64, i64)>,
    ) -> Option<(i64, i64)> {
        None
    }
    /// Geometry work done so far by this VM's queries, in machine-independent units (rows
    /// searched, pixels tested or composited, colour-search points); part of a run's work count.
    fn work(&self) -> u64 {
        0
    }
    /// Clears the pen layer.
    fn pen_clear(&mut self) {}
    /// A pen dot (pen down) of diameter `size`, colour RGBA in 0..1.
    fn pen_point(&mut self, _rgba: [f64; 4], _size: f64, _x: f64, _y: f64) {}
    /// A pen line from (x0, y0) to (x1, y1).
    fn pen_line(&mut self, _rgba: [f64; 4], _size: f64, _x0: f64, _y0: f64, _x1: f64, _y1: f64) {}
    /// Stamps `me` onto the pen layer.
    fn pen_stamp(&mut self, _scene: &Scene, _me: TargetId) {}
    /// Keep the SVG MIPs that frames and the program's queries create, as a live renderer
    /// does (the `whisker` profile; see [`render::SilhouetteFloors`]); otherwise every query
    /// starts from a fresh renderer.
    fn keep_mips(&mut self, _on: bool) {}
    /// Forgets the MIPs created so far (scratch-render's `resetMIPs` on every skin): a fresh
    /// renderer's silhouettes from the next frame or query on.
    fn reset_mips(&mut self) {}
    /// The MIPs kept so far (`None` when this geometry keeps none), for
    /// [`Geometry::restore_mips`].
    fn kept_mips(&self) -> Option<render::SilhouetteFloors> {
        None
    }
    /// Puts back the MIPs [`Geometry::kept_mips`] returned: the queries asked since then
    /// leave no trace (a recorder trying a query the runner may not ask).
    fn restore_mips(&mut self, _mips: render::SilhouetteFloors) {}
    /// The renderer drew a frame (scratch-vm's `_step` ends with `renderer.draw()`): every
    /// visible drawable's texture at its scale.
    fn frame_drawn(&mut self, _scene: &Scene) {}
    /// The convex hulls the live renderer holds (`(target, its hull epoch and silhouette
    /// level when computed)`), part of the VM state's fingerprint; `None` when this geometry
    /// keeps none.
    fn kept_hulls(&self) -> Option<&[(TargetId, u32, Option<i32>)]> {
        None
    }
    /// While on, queries come from outside the program (instrumentation, assertions, test
    /// drivers) and leave the renderer's state as it was, so observing a run never changes it.
    fn set_observing(&mut self, _on: bool) {}
}

/// No renderer: touching is always false, nothing is fenced (the `headless` profile).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoGeometry;

impl Geometry for NoGeometry {
    fn clone_box(&self) -> Box<dyn Geometry> {
        Box::new(*self)
    }

    fn mode(&self) -> &'static str {
        "none"
    }
}

/// Per-project data of a geometry implementation (decoded costumes), built once
/// and shared by every VM of the project (`Project::geometry_data`).
#[derive(Clone, Default)]
pub struct GeometryCache(pub OnceLock<Arc<dyn Any + Send + Sync + RefUnwindSafe + UnwindSafe>>);

impl std::fmt::Debug for GeometryCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() { "GeometryCache(built)" } else { "GeometryCache(empty)" })
    }
}

/// The geometry the `default` and `whisker` profiles use for a project: the CPU
/// renderer ([`cpu::CpuGeometry`]), `exact` or, when some costume has no usable
/// pixels, `approximate`.
pub fn for_project(project: &Arc<Project>) -> Box<dyn Geometry> {
    Box::new(cpu::CpuGeometry::for_project(project))
}
