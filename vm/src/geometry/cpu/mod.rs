//! The geometry of the `default` and `whisker` profiles: the CPU renderer
//! ([`render`](super::render)) behind the interpreter's [`Geometry`](super::Geometry) trait.
//!
//! Each question builds the renderer's scene from the live targets (stage, then the pen
//! layer once a pen block has used it, then sprites and clones in layer order) and asks
//! it; costumes come from the project's [`CostumeSet`], decoded when first shown or
//! measured and shared by every VM and clone (a project with hundreds of costumes decodes
//! only those its runs use). The mode is `approximate` when some costume's asset is missing
//! (JSON-only projects), or once this VM has shown or measured a costume without usable
//! pixels (broken assets, SVG text); else `exact`.

// The geometry's state and shared steps live here; each child adds one concern: syncing the
// kept scene, the change log's cheap rearrangements, lazy answers about the asker's own
// drawable, the `Geometry` trait, and sharing decoded costumes between VMs.
mod arrange;
mod costumes;
mod geometry_impl;
mod lazy;
mod sync;

use std::sync::Arc;

use super::TargetView;
use super::accel::Accel;
use super::cost;
use super::distance;
use super::drawable::{Placement, RotationStyle};
use super::effects::Effects;
use super::pen::PenLayer;
use super::render::{Drawable, LooseXform, Scene as RenderScene, StandIn};
use super::skin::CostumeSet;
use crate::engine::{Target, TargetId};
use crate::project::Project;

pub use costumes::costume_set;

/// The pixel geometry of one VM: shared costumes, its own pen layer.
#[derive(Clone)]
pub struct CpuGeometry {
    costumes: Arc<CostumeSet>,
    /// Set when an asset is missing or a costume this VM used is a stand-in (module docs);
    /// a cell because size questions (`&self`) use costumes too.
    approximate: std::cell::Cell<bool>,
    pen: PenLayer,
    /// scratch-vm creates the pen layer on the first pen block; before that it is no drawable.
    pen_layer: bool,
    /// The renderer's scene of the last query, kept so that the next query only rebuilds the
    /// drawables (and transforms) whose inputs changed; see [`CpuGeometry::sync`].
    scene: RenderScene,
    /// Per drawable of `scene`: the exact inputs it was built from (`None`: the pen layer).
    keys: Vec<Option<Key>>,
    /// Per drawable of `scene`: the target it shows (`None` for the pen layer).
    ids: Vec<Option<TargetId>>,
    /// Per target slot: the generation number and drawable position of the target shown there.
    slot_pos: Vec<Option<(u32, usize)>>,
    /// Positions rebuilt by the last [`CpuGeometry::sync`].
    changed: Vec<usize>,
    /// Set by a full sync that moved drawables: per position, where its drawable was
    /// (`None`: rebuilt); see [`Accel::rearrange`].
    rearranged: Option<Vec<Option<usize>>>,
    /// Scratch lists of [`CpuGeometry::sync_all`].
    spare: Spare,
    /// Where the pen layer is in `scene`, if it is there.
    pen_pos: Option<usize>,
    /// What the last sync saw of the VM's change log ([`super::Changes`]).
    synced: Option<Synced>,
    /// The accelerated queries' kept data (see [`super::accel`]).
    accel: Accel,
    /// Scratch space of colour walks.
    walk: distance::WalkScratch,
    /// Scratch list of candidate positions (test builds' reference checks).
    cands: Vec<usize>,
    /// The last drawable that stood in for its target's ([`CpuGeometry::own_query`]).
    stand_in: Option<OwnStandIn>,
    /// The last transform computed for fencing a target the kept scene does not show.
    loose: LooseXform,
    /// Work of stand-ins and loose transforms since the last sync ([`CpuGeometry::lazy`]).
    lazy_work: u64,
    /// Work the last sync did (its accelerated data's included).
    sync_work: u64,
    /// Work of the queries the accelerated ones do not count (fencing, bounds, points, picks).
    work: u64,
    /// Keep the MIPs frames and the program's queries create (`scene.floors`): the `whisker`
    /// profile's live renderer.
    keep_mips: bool,
    /// Queries come from an observer and must not change `scene.floors`.
    observing: bool,
    /// What the last frame saw of the VM's change log: frames look only at targets changed
    /// since (an unchanged target's texture was created by an earlier frame).
    drawn: Option<Synced>,
    /// The convex hulls the live renderer holds (`whisker` profile): targets whose hull the
    /// program's `getBounds` computed, with their [`Target::hull_epoch`] and the MIP level of
    /// the silhouette it came from (SVG skins) then. See [`CpuGeometry::hull_known`].
    hulls: Vec<(TargetId, u32, Option<i32>)>,
}

/// Hull records kept before the dead ones are dropped (clones come and go).
const HULL_RECORDS: usize = 256;

/// How many syncs' worth of work lazy answers may do between two syncs
/// ([`CpuGeometry::lazy`]).
const LAZY_SYNCS: u64 = 4;

/// The last drawable that stood in for its target's ([`CpuGeometry::own_query`]).
#[derive(Clone)]
struct OwnStandIn {
    me: TargetId,
    /// The inputs it was built from.
    key: Key,
    standing: StandIn,
}

/// Lists a full sync builds the new scene's data in, kept between syncs (a clone swarm can
/// re-sync the whole scene at every ordered query: allocating them each time cost more than
/// filling them).
#[derive(Default)]
struct Spare {
    from: Vec<Option<usize>>,
    seq: Vec<usize>,
    drawables: Vec<Drawable>,
    keys: Vec<Option<Key>>,
    ids: Vec<Option<TargetId>>,
    old: Vec<Option<Drawable>>,
}

/// Scratch space: a copy starts empty.
impl Clone for Spare {
    fn clone(&self) -> Self {
        Spare::default()
    }
}

/// The state of the VM's change log at the last sync.
#[derive(Debug, Clone, Copy)]
struct Synced {
    layers: u64,
    targets: u64,
    /// Absolute number of the first log entry not yet applied.
    seen: u64,
    pen_layer: bool,
}

/// Everything a target's drawable is a function of, compared bit for bit (so a kept drawable
/// is exactly the one a rebuild would give).
#[derive(Debug, Clone, Copy, Eq)]
struct Key {
    sprite: usize,
    costume: usize,
    is_stage: bool,
    x: u64,
    y: u64,
    direction: u64,
    size: u64,
    rotation: RotationStyle,
    visible: bool,
    effects: [u64; 7],
}

/// Field by field, the fields that change most often first, and without the `memcmp` call a
/// derived comparison makes for the effects array: every query compares every drawable's key.
impl PartialEq for Key {
    fn eq(&self, o: &Key) -> bool {
        let mut effects = 0;
        for (a, b) in self.effects.iter().zip(&o.effects) {
            effects |= a ^ b;
        }
        self.x == o.x
            && self.y == o.y
            && self.direction == o.direction
            && self.costume == o.costume
            && self.size == o.size
            && self.visible == o.visible
            && self.sprite == o.sprite
            && self.is_stage == o.is_stage
            && self.rotation == o.rotation
            && effects == 0
    }
}

/// `RotationStyle::parse` of each name of `program::ROT_NAMES`, by index (no string
/// comparisons per target and query).
const ROTATIONS: [RotationStyle; 3] = [RotationStyle::AllAround, RotationStyle::LeftRight, RotationStyle::DontRotate];

impl Key {
    /// The key of a live target, read straight from it (the same values [`TargetView`] shows).
    fn of(t: &Target) -> Option<Key> {
        let (direction, size, rotation) = t.render_pose();
        Some(Key {
            sprite: t.def as usize,
            costume: usize::try_from(t.render_costume()).ok()?,
            is_stage: t.is_stage,
            x: t.x.to_bits(),
            y: t.y.to_bits(),
            direction: direction.to_bits(),
            size: size.to_bits(),
            // An out-of-range index shows as "all around" in a view, which parses to this.
            rotation: ROTATIONS.get(rotation as usize).copied().unwrap_or(RotationStyle::AllAround),
            visible: t.render_visible(),
            effects: t.effects.map(f64::to_bits),
        })
    }
}

const STAGE_PLACEMENT: Placement = Placement { x: 0.0, y: 0.0, direction: 90.0, scale: [100.0, 100.0] };

/// Where the drawable of target `t` (with inputs `key`) is drawn.
fn placement_of(t: &TargetView<'_>, key: &Key) -> Placement {
    if key.is_stage { STAGE_PLACEMENT } else { Placement::from_target(t.x, t.y, t.direction, t.size, key.rotation) }
}

impl CpuGeometry {
    /// The geometry for `project`, reusing the costumes decoded for it by earlier VMs.
    pub fn for_project(project: &Arc<Project>) -> CpuGeometry {
        let costumes = costume_set(project);
        let approximate = std::cell::Cell::new(costumes.assets_missing());
        CpuGeometry {
            costumes,
            approximate,
            pen: PenLayer::new(),
            pen_layer: false,
            scene: RenderScene::default(),
            keys: Vec::new(),
            ids: Vec::new(),
            slot_pos: Vec::new(),
            changed: Vec::new(),
            rearranged: None,
            spare: Spare::default(),
            pen_pos: None,
            synced: None,
            accel: Accel::default(),
            walk: Default::default(),
            cands: Vec::new(),
            stand_in: None,
            loose: LooseXform::default(),
            lazy_work: 0,
            sync_work: 0,
            work: 0,
            keep_mips: false,
            observing: false,
            drawn: None,
            hulls: Vec::new(),
        }
    }

    /// After a program's `touching` or `touching color` query from drawable `i`: the MIPs it
    /// created (`_touchingBounds` asks `i`'s skin for its 100 % texture, then the query's
    /// silhouettes) stay, when this geometry keeps them.
    fn keep_query_mips(&mut self, i: usize) {
        if !self.keep_mips || self.observing {
            return;
        }
        if let Some(d) = self.scene.drawables.get(i) {
            self.scene.floors.raise(&d.skin, d.skin.mip_level([100.0, 100.0]));
        }
        self.scene.floors.raise_all(self.accel.asked().entries());
    }

    /// The program asked for `me`'s bounds (`touching edge?`, `if on edge, bounce`): the live
    /// renderer computed its convex hull, if it had none, and keeps it until a change marks it
    /// dirty ([`Target::hull_epoch`]). Only the `whisker` profile's renderer lives that long.
    fn note_hull(&mut self, scene: &super::Scene<'_>, me: TargetId) {
        if !self.keep_mips || self.observing {
            return;
        }
        let Some(t) = scene.raw(me) else { return };
        let epoch = t.hull_epoch;
        if let Some(p) = self.hulls.iter().position(|h| h.0 == me) {
            // Recomputed only when dirty: a kept hull keeps the level it was made at.
            if self.hulls.get(p).is_some_and(|h| h.1 != epoch) {
                let entry = (me, epoch, self.silhouette_level(t));
                if let Some(slot) = self.hulls.get_mut(p) {
                    *slot = entry;
                }
            }
            return;
        }
        if self.hulls.len() >= HULL_RECORDS {
            self.hulls.retain(|&(id, e, _)| scene.raw(id).is_some_and(|t| t.hull_epoch == e));
        }
        let level = self.silhouette_level(t);
        self.hulls.push((me, epoch, level));
    }

    /// The MIP level of the silhouette a query on live target `t` reads now (SVG skins): the
    /// largest created so far or the one its scale asks for (`updateCPURenderAttributes`).
    fn silhouette_level(&self, t: &Target) -> Option<i32> {
        let key = Key::of(t).filter(|k| !k.is_stage)?;
        let skin = self.costumes.skin(key.sprite, key.costume)?;
        if !skin.is_svg() {
            return None;
        }
        let (x, y, direction, size) = (t.x, t.y, f64::from_bits(key.direction), f64::from_bits(key.size));
        let asked = skin.mip_level(Placement::from_target(x, y, direction, size, key.rotation).render_scale());
        Some(self.scene.floors.level(&skin).map_or(asked, |floor| floor.max(asked)))
    }

    /// The level of the hull the live renderer keeps for `me`, where it differs from the
    /// silhouette's now: scratch-render computes a hull once, from the silhouette of that
    /// moment, and a larger MIP made later (a `touching` query asks for the 100 % texture)
    /// replaces the silhouette without marking the hull dirty. A small sprite that bounced
    /// before it first asked `touching` keeps the coarse hull of its first bounce.
    fn kept_hull_level(&self, scene: &super::Scene<'_>, me: TargetId) -> Option<i32> {
        if !self.keep_mips {
            return None;
        }
        let t = scene.raw(me)?;
        let level = self.hulls.iter().find(|h| h.0 == me && h.1 == t.hull_epoch)?.2?;
        (self.silhouette_level(t) != Some(level)).then_some(level)
    }

    /// `getBounds` of `me` from the hull the renderer keeps, where [`CpuGeometry::kept_hull_level`]
    /// says it is not the current silhouette's.
    fn kept_hull_bounds(&mut self, scene: &super::Scene<'_>, me: TargetId) -> Option<super::Rect> {
        let level = self.kept_hull_level(scene, me)?;
        let i = self.scene_with(scene, me)?;
        self.work += cost::QUERY;
        Some(self.scene.bounds_with_hull_of(i, level))
    }

    /// Whether the live renderer holds `me`'s convex hull, so that `getFastBounds` is the
    /// hull's box rather than the rough AABB: computed by the program's bounds queries since
    /// the last change that marked it dirty, or kept by a say/think bubble, which scratch-vm
    /// places from the hull whenever the sprite moves or changes.
    fn hull_known(&self, scene: &super::Scene<'_>, me: TargetId) -> bool {
        let Some(t) = scene.raw(me) else { return false };
        self.hulls.iter().any(|&(id, e, _)| id == me && e == t.hull_epoch)
            || (t.render_visible() && t.bubble.as_ref().is_some_and(|b| !b.text.is_empty()))
    }

    /// The boxes `getFastBounds` gives instead of the AABB for the drawables at `positions`
    /// whose hull the renderer holds: their hull's box (`getBounds`).
    fn hull_boxes(&mut self, scene: &super::Scene<'_>, positions: &[usize]) -> Vec<(usize, super::Rect)> {
        let mut out = Vec::new();
        for &pos in positions {
            let Some(Some(id)) = self.ids.get(pos).copied() else { continue };
            if self.hull_known(scene, id) {
                self.work += cost::QUERY;
                let b = match self.kept_hull_level(scene, id) {
                    Some(level) => self.scene.bounds_with_hull_of(pos, level),
                    None => self.scene.bounds(pos),
                };
                out.push((pos, b));
            }
        }
        out
    }

    /// A `touching (sprite)?` answer of `true` from drawable `i`, asked again as the live
    /// renderer answers when it holds convex hulls (`whisker` profile): `getFastBounds` is
    /// then the hull's box, snapped out to whole pixels, where it is otherwise the rough AABB.
    /// That only narrows the pixels searched, so only a `true` can change: a sprite whose hull
    /// a `touching edge?` computed no longer touches another by the faint fringe that linear
    /// sampling finds just outside its hull's box.
    fn touching_with_hulls(&mut self, scene: &super::Scene<'_>, i: usize, sprite: usize) -> bool {
        if !self.keep_mips {
            return true;
        }
        let cands: Vec<usize> = scene.instances_of(sprite).filter_map(|t| self.index(t)).collect();
        let mut positions = cands.clone();
        positions.push(i);
        let boxes = self.hull_boxes(scene, &positions);
        if boxes.is_empty() {
            return true;
        }
        self.work += cost::QUERY;
        self.scene.hull_bounds = boxes;
        let answer = self.scene.touching_drawables(i, &cands);
        self.scene.hull_bounds.clear();
        answer
    }

    /// [`CpuGeometry::touching_with_hulls`] for `touching color?` and `color is touching?`.
    fn color_with_hulls(&mut self, scene: &super::Scene<'_>, i: usize, rgb: [u8; 3], mask: Option<[u8; 3]>) -> bool {
        if !self.keep_mips {
            return true;
        }
        let positions: Vec<usize> = (0..self.scene.drawables.len()).collect();
        let boxes = self.hull_boxes(scene, &positions);
        if boxes.is_empty() {
            return true;
        }
        self.work += cost::QUERY;
        self.scene.hull_bounds = boxes;
        let answer = self.scene.touching_color(i, rgb, mask);
        self.scene.hull_bounds.clear();
        answer
    }

    /// The MIP a frame creates for target `t` (visible, with a costume): its skin's texture at
    /// the drawable's scale (the stage's is 100 %).
    fn draw_target(&mut self, t: &Target) {
        if !t.render_visible() {
            return;
        }
        let Some(costume) = usize::try_from(t.render_costume()).ok() else { return };
        let Some(skin) = self.costumes.skin_ref(t.def as usize, costume) else { return };
        if skin.approximate().is_some() {
            self.approximate.set(true);
        }
        if !skin.is_svg() {
            return;
        }
        let (direction, size, rotation) = t.render_pose();
        let size = if t.is_stage { 100.0 } else { size };
        let style = ROTATIONS.get(rotation as usize).copied().unwrap_or(RotationStyle::AllAround);
        let scale = Placement::from_target(t.x, t.y, direction, size, style).render_scale();
        let level = skin.mip_level(scale);
        self.scene.floors.raise(skin, level);
    }

    fn drawable(&self, t: &TargetView<'_>, key: &Key) -> Option<Drawable> {
        let skin = self.costumes.skin(key.sprite, key.costume)?;
        if skin.approximate().is_some() {
            self.approximate.set(true);
        }
        let placement = placement_of(t, key);
        Some(Drawable { skin, placement, visible: t.visible, effects: Effects::from_values(t.effects) })
    }

    /// Puts `d` (built from `key`, showing `id`) at position `pos` of the scene.
    fn put(&mut self, pos: usize, d: Drawable, key: Option<Key>, id: Option<TargetId>) {
        self.changed.push(pos);
        if pos < self.scene.drawables.len() {
            self.scene.drawables[pos] = d;
            self.keys[pos] = key;
            self.ids[pos] = id;
        } else {
            self.scene.drawables.push(d);
            self.keys.push(key);
            self.ids.push(id);
        }
    }

    /// `touching color` / `color is touching`, checked against the reference in test builds.
    fn accelerated_touching_color(&mut self, i: usize, rgb: [u8; 3], mask: Option<[u8; 3]>) -> bool {
        let answer = self.accel.touching_color(&self.scene, i, rgb, mask);
        if cfg!(debug_assertions) {
            assert_eq!(
                answer,
                self.scene.touching_color(i, rgb, mask),
                "touching colour {rgb:?} mask {mask:?} from {i}"
            );
        }
        answer
    }

    fn index(&self, id: TargetId) -> Option<usize> {
        match self.slot_pos.get(id.slot as usize).copied().flatten() {
            Some((gn, pos)) if gn == id.gn => Some(pos),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index table reads rotation styles exactly as parsing a target view's name does.
    #[test]
    fn rotation_table_matches_parsing_the_names() {
        for (i, name) in crate::program::ROT_NAMES.iter().enumerate() {
            assert_eq!(ROTATIONS[i], RotationStyle::parse(name), "{name}");
        }
        assert_eq!(ROTATIONS.len(), crate::program::ROT_NAMES.len());
    }
}
