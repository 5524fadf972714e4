//! The geometry of the `default` and `whisker` profiles: the CPU renderer
//! ([`render`](super::render)) behind the interpreter's [`Geometry`] trait.
//!
//! Each question builds the renderer's scene from the live targets (stage, then the pen
//! layer once a pen block has used it, then sprites and clones in layer order) and asks
//! it; costumes come from the project's [`CostumeSet`], decoded when first shown or
//! measured and shared by every VM and clone (a project with hundreds of costumes decodes
//! only those its runs use). The mode is `approximate` when some costume's asset is missing
//! (JSON-only projects), or once this VM has shown or measured a costume without usable
//! pixels (broken assets, SVG text); else `exact`.

use std::sync::Arc;

use super::accel::{Accel, Candidates, PenChange};
use super::distance;
use super::drawable::{Placement, RotationStyle, Xform};
use super::effects::Effects;
use super::pen::{PenAttributes, PenLayer};
use super::render::{self, Drawable, LooseXform, Scene as RenderScene, SilhouetteFloors, StandIn};
use super::silhouette::colors_match;
use super::skin::CostumeSet;
use super::{Geometry, Rect, Scene, TargetView};
use crate::engine::{Target, TargetId};
use crate::project::Project;

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
}

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

    /// Brings the kept scene up to date with the live targets: the stage, then the pen layer
    /// once a pen block has used it, then sprites and clones in layer order. A drawable whose
    /// inputs are bit-identical to those of the one already at its position is kept as is
    /// (with its transform); only the others are rebuilt. The pen layer's pixels are brought
    /// up to date only `with_pen` (queries that read them: colours, picking): a sprite drawing
    /// every frame would otherwise copy the whole layer before each of its fencing queries.
    ///
    /// Only queries `with_pen` depend on the layer order (colours, picking); the others
    /// (touching sprites, edges and points, bounds, fencing, distances) leave a reordering of
    /// the same targets for the next query that does (a clone swarm whose members go to the
    /// front and move, each frame, would otherwise reorder the scene before every move).
    fn sync(&mut self, s: &Scene<'_>, with_pen: bool) {
        let before = self.work + self.accel.work();
        self.lazy_work = 0;
        self.changed.clear();
        self.rearranged = None;
        let last_layers = self.synced.map(|l| l.layers);
        let sync = self.sync_changes(s, with_pen);
        let fast = sync.is_some();
        let order_left = sync == Some(true);
        if !fast {
            // Drawables the change log rebuilt before the fast sync gave up are not kept: the
            // accelerated data has not seen them.
            for p in std::mem::take(&mut self.changed) {
                if let Some(k) = self.keys.get_mut(p) {
                    *k = None;
                }
            }
            self.sync_all(s, with_pen);
            // Counted here, not in `sync_all`: test builds run that again as a check.
            self.work += super::cost::MOVE * self.scene.drawables.len() as u64;
        } else if cfg!(debug_assertions) && order_left {
            self.check_kept(s);
        } else if cfg!(debug_assertions) {
            // Test builds check the log against a full sync: it must find nothing left to do.
            let (rebuilt, len) = (self.changed.len(), self.scene.drawables.len());
            let arranged = self.rearranged.take();
            self.sync_all(s, with_pen);
            assert_eq!(
                (self.changed.len(), self.scene.drawables.len(), self.rearranged.is_some()),
                (rebuilt, len, false),
                "the change log missed a target change"
            );
            self.rearranged = arranged;
        }
        let mut pen_drawn = false;
        if let (true, true, Some(pos)) = (with_pen, self.pen_layer, self.pen_pos) {
            let skin = self.pen.skin();
            if self.scene.drawables.get(pos).is_some_and(|d| !Arc::ptr_eq(&d.skin, &skin)) {
                let d = Drawable { skin, placement: STAGE_PLACEMENT, visible: true, effects: Effects::default() };
                self.put(pos, d, None, None);
                pen_drawn = true;
            }
        }
        // Only rebuilt drawables can have stale transforms (and a stale one would only be
        // recomputed per query: every use checks its inputs).
        self.scene.refresh_transforms_of(&self.changed);
        // The pen box is taken only when the pen drawable gets the new pixels: until then the
        // kept composites still show the old ones.
        let pen_box = if pen_drawn { self.pen.take_changes().stage_boxes() } else { None };
        let pen = self.pen_pos.map(|pos| PenChange { pos, dirty: pen_box });
        let keys = &self.keys;
        let sprite_of = |pos: usize| keys.get(pos).copied().flatten().map(|k| k.sprite as u32);
        let rearranged = self.rearranged.is_some();
        match self.rearranged.take() {
            Some(from) => {
                // Moves and rebuilds come from the arrangement; only the pen layer's new
                // pixels remain.
                self.accel.rearrange(&self.scene, &from, &sprite_of);
                let pen_pos: &[usize] = match (pen_drawn, self.pen_pos) {
                    (true, Some(p)) => &[p],
                    _ => &[],
                };
                self.accel.refresh(&self.scene, pen_pos, pen, &sprite_of);
                self.spare.from = from;
            }
            None => self.accel.refresh(&self.scene, &self.changed, pen, &sprite_of),
        }
        // Test builds check every rearrangement's result (the paths that move kept data).
        if cfg!(debug_assertions) && rearranged {
            self.accel.check(&self.scene, &sprite_of);
        }
        self.sync_work = (self.work + self.accel.work()).saturating_sub(before);
        self.synced = s.changes().map(|c| Synced {
            layers: match (order_left, last_layers) {
                (true, Some(l)) => l,
                _ => c.layers,
            },
            targets: c.targets,
            seen: c.base + c.log.len() as u64,
            pen_layer: self.pen_layer,
        });
    }

    /// Appends the drawables of live targets the kept scene does not show (new clones) at its
    /// end, for a query that does not depend on the order.
    fn append_new(&mut self, s: &Scene<'_>) {
        for &id in s.layer_order() {
            if self.index(id).is_some() {
                continue;
            }
            let Some(key) = s.raw(id).and_then(Key::of) else { continue };
            let Some(d) = s.target(id).and_then(|view| self.drawable(&view, &key)) else { continue };
            let pos = self.scene.drawables.len();
            self.put(pos, d, Some(key), Some(id));
            let slot = id.slot as usize;
            if slot >= self.slot_pos.len() {
                self.slot_pos.resize(slot + 1, None);
            }
            self.slot_pos[slot] = Some((id.gn, pos));
        }
    }

    /// Takes the drawables of deleted targets out of the kept scene, each hole filled by the
    /// last drawable, for a query that does not depend on the order; records the arrangement
    /// for the accelerated data (drawables it has not seen, appended or rebuilt since the
    /// last sync, are rebuilt there).
    fn remove_gone(&mut self, s: &Scene<'_>) {
        let mut gone = std::mem::take(&mut self.spare.seq);
        gone.clear();
        gone.extend(self.ids.iter().enumerate().filter_map(|(p, id)| id.filter(|&id| s.raw(id).is_none()).map(|_| p)));
        if gone.is_empty() {
            self.spare.seq = gone;
            return;
        }
        let seen = self.accel.len();
        let mut from = std::mem::take(&mut self.spare.from);
        from.clear();
        from.extend((0..self.scene.drawables.len()).map(Some));
        // Highest first: the last drawable is then never one still to be taken out.
        for &p in gone.iter().rev() {
            if let Some(Some(id)) = self.ids.get(p)
                && let Some(sp) = self.slot_pos.get_mut(id.slot as usize)
                && *sp == Some((id.gn, p))
            {
                *sp = None;
            }
            self.scene.swap_remove(p);
            self.keys.swap_remove(p);
            self.ids.swap_remove(p);
            from.swap_remove(p);
            if let Some(Some(id)) = self.ids.get(p)
                && let Some(sp) = self.slot_pos.get_mut(id.slot as usize)
            {
                *sp = Some((id.gn, p));
            }
        }
        self.spare.seq = gone;
        // Appended or rebuilt since the last sync: new to the accelerated data.
        let rebuilt = std::mem::take(&mut self.changed);
        for (p, f) in from.iter_mut().enumerate() {
            if f.is_some_and(|o| o >= seen || rebuilt.contains(&o)) {
                *f = None;
            }
            if f.is_none() {
                self.changed.push(p);
            }
        }
        self.rearranged = Some(from);
    }

    /// Test builds' check of a sync that left the layer order for later: every live target
    /// that has a drawable has its up-to-date one in the kept scene, and nothing else is there.
    fn check_kept(&self, s: &Scene<'_>) {
        let mut shown = 0;
        for &id in s.layer_order() {
            let key = s.raw(id).and_then(Key::of);
            match self.index(id) {
                Some(p) => {
                    assert_eq!(self.keys.get(p), Some(&key), "the change log missed a change of {id:?}");
                    shown += 1;
                }
                None => assert!(
                    key.is_none_or(|k| s.target(id).and_then(|v| self.drawable(&v, &k)).is_none()),
                    "target {id:?} is missing from the kept scene"
                ),
            }
        }
        assert_eq!(shown, self.ids.iter().flatten().count(), "the kept scene shows a deleted target");
    }

    /// Brings the scene up to date from the VM's change log alone: re-checks only the targets
    /// handed out mutably since the last sync. `None` (having changed nothing that a full sync
    /// would not redo) when that cannot be trusted: no log, a different layer order or set of
    /// targets, log entries dropped, the pen layer changed, or a target gaining or losing its
    /// drawable (positions would shift). `Some(true)` when a reordering was left for later
    /// (not `ordered`, and the same targets).
    fn sync_changes(&mut self, s: &Scene<'_>, ordered: bool) -> Option<bool> {
        let (Some(c), Some(last)) = (s.changes(), self.synced) else { return None };
        let end = c.base + c.log.len() as u64;
        if last.pen_layer != self.pen_layer || last.seen < c.base || last.seen > end {
            return None;
        }
        // A layer change that left the order of the drawn targets as it was ("go to front" of
        // the front sprite, every frame) needs no rearrangement; one that moved one target
        // (any "go to front" or "go back") moves its drawable and those it passed.
        let (moved, left) = match (c.layers != last.layers, ordered, c.targets != last.targets) {
            (false, ..) => (None, false),
            (true, false, false) => (None, true),
            // New clones go at the end, deleted ones leave a hole the last drawable fills: the
            // next ordered query puts them in their places.
            (true, false, true) => {
                self.append_new(s);
                (None, true)
            }
            (true, true, _) => (self.layer_move(s)?, false),
        };
        let targets_changed = left && c.targets != last.targets;
        let fresh = c.log.get((last.seen - c.base) as usize..)?;
        for &slot in fresh {
            let (gn, pos) = self.slot_pos.get(slot as usize).copied().flatten()?;
            let id = TargetId { slot, gn };
            let Some(t) = s.raw(id) else {
                // Deleted: taken out below.
                if targets_changed {
                    continue;
                }
                return None;
            };
            let key = Key::of(t)?;
            if self.keys.get(pos) == Some(&Some(key)) {
                continue;
            }
            let d = s.target(id).and_then(|view| self.drawable(&view, &key))?;
            self.put(pos, d, Some(key), Some(id));
        }
        if let Some((a, b)) = moved {
            self.move_drawable(a, b);
        }
        if targets_changed {
            self.remove_gone(s);
        }
        Some(left)
    }

    /// How the live targets that have drawables are ordered, in layer order, against the
    /// kept scene: `Some(None)` as kept, `Some(Some((a, b)))` as kept but for the drawable at
    /// `a`, now at `b`; `None` otherwise (a new clone, a deleted one, several moves). A kept
    /// target losing its drawable shows in the change log, which
    /// [`CpuGeometry::sync_changes`] checks.
    fn layer_move(&mut self, s: &Scene<'_>) -> Option<Option<(usize, usize)>> {
        let mut seq = std::mem::take(&mut self.spare.seq);
        seq.clear();
        for &id in s.layer_order() {
            match self.index(id) {
                Some(o) => seq.push(o),
                // Not in the kept scene: fine unless it should be (a new clone).
                None if s.raw(id).and_then(Key::of).is_some() => {
                    self.spare.seq = seq;
                    return None;
                }
                None => {}
            }
        }
        // Kept order: every position but the pen layer's, ascending.
        let pen = self.pen_pos;
        let kept = |k: usize| if pen.is_some_and(|p| k >= p) { k + 1 } else { k };
        let n = self.ids.len() - usize::from(pen.is_some());
        let differ = |k: &usize| seq.get(*k) != Some(&kept(*k));
        let answer = match ((0..n).find(differ), (0..n).rev().find(differ)) {
            _ if seq.len() != n => None,
            (None, _) | (_, None) => Some(None),
            (Some(i), Some(j)) => {
                let (lo, hi) = (kept(i), kept(j));
                // One drawable moved up from `lo` to `hi`, or down from `hi` to `lo`; the others
                // in between kept their order (and the pen layer is not among them).
                let contiguous = hi - lo == j - i;
                let up = seq[j] == lo && (i..j).all(|k| seq[k] == kept(k + 1));
                let down = seq[i] == hi && (i + 1..=j).all(|k| seq[k] == kept(k - 1));
                match (contiguous, up, down) {
                    (true, true, _) => Some(Some((lo, hi))),
                    (true, _, true) => Some(Some((hi, lo))),
                    _ => None,
                }
            }
        };
        self.spare.seq = seq;
        answer
    }

    /// Moves the drawable at `a` to `b` (the ones in between shift by one place towards `a`),
    /// with its inputs and target, and records the arrangement for the accelerated data, as a
    /// full sync would: a drawable rebuilt at its old place is rebuilt at its new one.
    fn move_drawable(&mut self, a: usize, b: usize) {
        let (lo, hi) = (a.min(b), a.max(b));
        let len = self.scene.drawables.len();
        if hi >= len || self.keys.len() != len || self.ids.len() != len {
            return;
        }
        render::move_item(&mut self.keys, a, b);
        render::move_item(&mut self.ids, a, b);
        self.scene.move_drawable(a, b);
        // Where each position's drawable was.
        let mut from = std::mem::take(&mut self.spare.from);
        from.clear();
        from.extend((0..len).map(Some));
        for (p, f) in from.iter_mut().enumerate().take(hi + 1).skip(lo) {
            *f = Some(match (p == b, a < b) {
                (true, _) => a,
                (false, true) => p + 1,
                (false, false) => p - 1,
            });
        }
        for c in &mut self.changed {
            let p = match *c {
                o if o == a => b,
                o if (lo..=hi).contains(&o) && a < b => o - 1,
                o if (lo..=hi).contains(&o) => o + 1,
                o => o,
            };
            from[p] = None;
            *c = p;
        }
        for p in lo..=hi {
            if let Some(Some(id)) = self.ids.get(p)
                && let Some(sp) = self.slot_pos.get_mut(id.slot as usize)
            {
                *sp = Some((id.gn, p));
            }
        }
        // Charged as the full sync this replaces is (`sync`): the same work, whichever path.
        self.work += super::cost::MOVE * len as u64;
        self.rearranged = Some(from);
    }

    /// The full sync: every target, in layer order (the pen layer keeps its drawable, whose
    /// pixels [`CpuGeometry::sync`] brings up to date when asked to). A drawable whose inputs
    /// are unchanged keeps its data wherever it moved (a layer change shifts every drawable
    /// above it); `rearranged` records where each came from when any moved.
    fn sync_all(&mut self, s: &Scene<'_>, with_pen: bool) {
        let order = s.layer_order();
        // The lists are the last sync's, reused: a clone swarm re-syncs at most queries.
        let spare = &mut self.spare;
        let mut from = std::mem::take(&mut spare.from);
        let mut drawables = std::mem::take(&mut spare.drawables);
        let mut keys = std::mem::take(&mut spare.keys);
        let mut ids = std::mem::take(&mut spare.ids);
        let mut old = std::mem::take(&mut spare.old);
        from.clear();
        drawables.clear();
        keys.clear();
        ids.clear();
        let old_len = self.scene.drawables.len();
        let old_pen = self.pen_pos.filter(|&o| o < old_len && self.keys.get(o) == Some(&None));
        self.pen_pos = None;
        // Kept drawables move to their new places (no reference counting per drawable).
        old.clear();
        old.extend(self.scene.drawables.drain(..).map(Some));
        for (k, &id) in order.iter().enumerate() {
            if let Some(key) = s.raw(id).and_then(Key::of) {
                // Where this target's drawable was, if it is unchanged.
                let kept = self.index(id).filter(|&o| self.keys.get(o) == Some(&Some(key)));
                let d = match kept.and_then(|o| old.get_mut(o).and_then(Option::take)) {
                    Some(d) => Some(d),
                    None => s.target(id).and_then(|view| self.drawable(&view, &key)),
                };
                if let Some(d) = d {
                    drawables.push(d);
                    keys.push(Some(key));
                    ids.push(Some(id));
                    from.push(kept);
                }
            }
            if k == 0 && self.pen_layer {
                let kept = old_pen.and_then(|o| old.get_mut(o).and_then(Option::take).map(|d| (o, d)));
                let (o, d) = match kept {
                    Some((o, d)) => (Some(o), d),
                    None => {
                        // Queries that read no pen pixels do not draw what is recorded.
                        let skin = if with_pen { self.pen.skin() } else { self.pen.placeholder_skin() };
                        let d =
                            Drawable { skin, placement: STAGE_PLACEMENT, visible: true, effects: Effects::default() };
                        (None, d)
                    }
                };
                self.pen_pos = Some(drawables.len());
                drawables.push(d);
                keys.push(None);
                ids.push(None);
                from.push(o);
            }
        }
        old.clear();
        self.changed.extend(from.iter().enumerate().filter(|(_, f)| f.is_none()).map(|(p, _)| p));
        let in_place = from.iter().enumerate().all(|(p, f)| f.is_none_or(|o| o == p));
        let spare = &mut self.spare;
        spare.drawables = self.scene.rearrange(drawables, &from);
        spare.keys = std::mem::replace(&mut self.keys, keys);
        spare.ids = std::mem::replace(&mut self.ids, ids);
        spare.old = old;
        // In place, the rebuilt positions (and a longer or shorter scene) are all there is to
        // bring up to date.
        if in_place {
            spare.from = from;
            self.rearranged = None;
        } else {
            self.rearranged = Some(from);
        }
        // Target slot → drawable position, for O(1) `index` (touching a sprite looks up every clone).
        self.slot_pos.iter_mut().for_each(|p| *p = None);
        for (pos, id) in self.ids.iter().enumerate() {
            if let Some(id) = id {
                let slot = id.slot as usize;
                if slot >= self.slot_pos.len() {
                    self.slot_pos.resize(slot + 1, None);
                }
                self.slot_pos[slot] = Some((id.gn, pos));
            }
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

    /// The up-to-date scene (pen pixels excepted), and the index of `me` in it.
    fn scene_with(&mut self, s: &Scene<'_>, me: TargetId) -> Option<usize> {
        self.work += super::cost::QUERY;
        self.sync(s, false);
        self.index(me)
    }

    /// [`CpuGeometry::scene_with`] for queries that read the pen layer's pixels.
    fn scene_with_pen(&mut self, s: &Scene<'_>, me: TargetId) -> Option<usize> {
        self.sync(s, true);
        self.index(me)
    }

    /// Whether the VM changed nothing the kept scene shows since the last sync: no target
    /// handed out mutably, created, disposed or moved between layers.
    fn kept_is_current(&self, s: &Scene<'_>) -> bool {
        match (s.changes(), self.synced) {
            (Some(c), Some(last)) => {
                last.seen == c.base + c.log.len() as u64
                    && last.layers == c.layers
                    && last.targets == c.targets
                    && last.pen_layer == self.pen_layer
            }
            _ => false,
        }
    }

    /// Answers a query that reads nothing but the asker's own drawable (touching the edge or
    /// a point, bounds, fencing a new clone), mostly without bringing the rest of the scene up
    /// to date: `kept(self, position)` where the kept scene shows the asker as it is now, else
    /// `fresh(scene, position)` on the kept scene with the asker's drawable as it is now
    /// standing in for the query alone. A clone swarm whose members each move and then ask
    /// `touching edge?` would otherwise rebuild the changed drawables and their accelerated
    /// data before every question, and the whole scene after every clone created or deleted
    /// (`402092991`). Lazy answers are rationed ([`CpuGeometry::lazy`]): where questions
    /// come faster than changes (many targets asking after one step), one sync is cheaper.
    /// `None` where a synced scene would show no drawable for the asker.
    fn own_query<R: PartialEq + std::fmt::Debug>(
        &mut self,
        s: &Scene<'_>,
        me: TargetId,
        kept: impl Fn(&mut Self, usize) -> R,
        fresh: impl FnOnce(&RenderScene, usize) -> R,
    ) -> Option<R> {
        let pos = self.index(me);
        if self.kept_is_current(s) {
            self.work += super::cost::QUERY;
            return pos.map(|i| kept(self, i));
        }
        let answer = self.own_query_changed(s, me, pos, &kept, fresh);
        if cfg!(debug_assertions) {
            // Test builds check the answer against a copy that brings the whole scene up to date.
            let mut synced = self.clone();
            let expected = synced.scene_with(s, me).map(|i| kept(&mut synced, i));
            assert_eq!(answer, expected, "a query on {me:?}'s own drawable differs from one after a sync");
        }
        answer
    }

    /// [`CpuGeometry::own_query`] when the VM changed something since the last sync.
    fn own_query_changed<R>(
        &mut self,
        s: &Scene<'_>,
        me: TargetId,
        pos: Option<usize>,
        kept: &impl Fn(&mut Self, usize) -> R,
        fresh: impl FnOnce(&RenderScene, usize) -> R,
    ) -> Option<R> {
        // A sync shows no drawable for a target without a key or a costume skin.
        let Some(key) = s.raw(me).and_then(Key::of) else { return self.scene_with(s, me).map(|i| kept(self, i)) };
        if let Some(i) = pos
            && self.keys.get(i) == Some(&Some(key))
        {
            self.work += super::cost::QUERY;
            return Some(kept(self, i));
        }
        // With the same targets as at the last sync, a sync only rebuilds the changed drawables
        // (and a `touching color` after `if on edge, bounce` would do it anyway).
        let same_targets = matches!((s.changes(), self.synced), (Some(c), Some(last)) if c.targets == last.targets);
        if same_targets {
            return self.scene_with(s, me).map(|i| kept(self, i));
        }
        // The same target asking again, unchanged, finds its stand-in ready.
        if !matches!(&self.stand_in, Some(o) if o.me == me && o.key == key) {
            let d = match self.lazy() {
                true => s.target(me).and_then(|view| self.drawable(&view, &key)),
                false => None,
            };
            let Some(d) = d else { return self.scene_with(s, me).map(|i| kept(self, i)) };
            let like = self.stand_in.as_ref().map(|l| &l.standing);
            let standing = self.scene.stand_in(pos.unwrap_or(usize::MAX), d, like);
            self.stand_in = Some(OwnStandIn { me, key, standing });
        }
        let own = self.stand_in.as_mut()?;
        self.work += super::cost::QUERY;
        Some(self.scene.with_stand_in(pos.unwrap_or(usize::MAX), &mut own.standing, fresh))
    }

    /// Whether to answer one more question lazily (a stand-in, a loose transform) instead of
    /// bringing the kept scene up to date: each is charged as a rebuilt drawable, until the
    /// lazy answers since the last sync cost [`LAZY_SYNCS`] times what that sync (or a full
    /// sync of the scene) did. Static clones asking every frame, each a stand-in until a sync,
    /// then get one sync; a swarm that changes between its questions gets one per few
    /// scenes' worth of questions.
    fn lazy(&mut self) -> bool {
        let full = super::cost::MOVE * self.scene.drawables.len() as u64 + super::cost::REFRESH;
        if self.lazy_work >= LAZY_SYNCS * full.max(self.sync_work) {
            return false;
        }
        self.lazy_work += super::cost::REFRESH;
        self.work += super::cost::REFRESH;
        true
    }

    /// The bounds of the drawable at `i`, kept with the accelerated data.
    fn kept_bounds(&mut self, i: usize) -> Rect {
        let b = self.accel.bounds(&self.scene, i);
        if cfg!(debug_assertions) {
            assert_eq!(b, self.scene.bounds(i), "bounds of {i}");
        }
        b
    }

    /// [`Geometry::fenced_position`] of a mover the kept scene does not show (a new clone):
    /// from its transform alone while [`CpuGeometry::lazy`] allows, else after a sync.
    fn fenced_loose(&mut self, scene: &Scene<'_>, me: TargetId, x: f64, y: f64) -> (f64, f64) {
        let Some(key) = scene.raw(me).and_then(Key::of) else { return self.fenced_after_sync(scene, me, x, y) };
        if !self.lazy() {
            return self.fenced_after_sync(scene, me, x, y);
        }
        let Some(xf) = self.current_xform(scene, me, &key, None) else {
            return self.fenced_after_sync(scene, me, x, y);
        };
        self.work += super::cost::QUERY;
        let [fx, fy] = render::fence(&xf, x, y);
        (fx, fy)
    }

    /// The transform target `me` (with inputs `key`) has now, moved from the one kept at `at`
    /// (or, for a target the kept scene does not show, from the last loose one) when only its
    /// position changed; `None` without a costume skin.
    fn current_xform(&mut self, scene: &Scene<'_>, me: TargetId, key: &Key, at: Option<usize>) -> Option<Xform> {
        let (view, skin) = (scene.target(me)?, self.costumes.skin_ref(key.sprite, key.costume)?);
        if skin.approximate().is_some() {
            self.approximate.set(true);
        }
        let p = placement_of(&view, key);
        let xf = match at {
            Some(i) => self.scene.xform_at(i, &p, skin),
            None => self.scene.loose_xform(&p, skin, &mut self.loose),
        };
        if cfg!(debug_assertions) {
            // Test builds check the transform against one computed from scratch.
            let fresh = Xform::new(&p, skin.size(), skin.rotation_center());
            assert_eq!(format!("{xf:?}"), format!("{fresh:?}"), "fencing {me:?}");
        }
        Some(xf)
    }

    /// [`Geometry::fenced_position`] with the whole scene brought up to date first (a mover
    /// the kept scene does not show yet).
    fn fenced_after_sync(&mut self, scene: &Scene<'_>, me: TargetId, x: f64, y: f64) -> (f64, f64) {
        match self.scene_with(scene, me) {
            Some(i) => {
                let [fx, fy] = self.scene.fenced(i, x, y);
                (fx, fy)
            }
            None => (x, y),
        }
    }

    fn index(&self, id: TargetId) -> Option<usize> {
        match self.slot_pos.get(id.slot as usize).copied().flatten() {
            Some((gn, pos)) if gn == id.gn => Some(pos),
            _ => None,
        }
    }
}

/// The project's costume set, created on first use and kept in the project's cache slot.
pub fn costume_set(project: &Arc<Project>) -> Arc<CostumeSet> {
    let any = project.geometry_data.0.get_or_init(|| CostumeSet::new(project.clone()));
    // Dropping the unwind-safety markers is a plain coercion; `downcast` needs `dyn Any + Send + Sync`.
    let any: Arc<dyn std::any::Any + Send + Sync> = any.clone();
    match any.downcast::<CostumeSet>() {
        // A cloned project shares the slot but not the set's (weak) project link: the set
        // serves the copy when the copy's costumes are the original's (an edited copy such as
        // a mutant, `Project::clone_for_edit`), so a mutant's VMs do not decode every costume
        // again (each one did before: most of a costume-heavy project's mutation analysis).
        Ok(c) if c.project().is_some_and(|p| Arc::ptr_eq(&p, project) || same_costumes(&p, project)) => c,
        // Someone else's data, or a copy with other costumes: decode privately.
        _ => CostumeSet::new(project.clone()),
    }
}

/// Whether `b` has `a`'s costumes: the same costumes per target (asset, format, centre,
/// resolution) backed by assets of the same sizes. Assets are named by their content's md5,
/// and a copy's assets are the original's unless someone replaced one in place, which the
/// size check catches in practice; nothing in clowder edits assets.
fn same_costumes(a: &Project, b: &Project) -> bool {
    let same = |x: &crate::project::Costume, y: &crate::project::Costume| {
        x.md5ext == y.md5ext
            && x.data_format == y.data_format
            && x.rotation_center_x.to_bits() == y.rotation_center_x.to_bits()
            && x.rotation_center_y.to_bits() == y.rotation_center_y.to_bits()
            && x.has_rotation_center == y.has_rotation_center
            && x.bitmap_resolution.to_bits() == y.bitmap_resolution.to_bits()
            && a.assets.get(&x.md5ext).map(Vec::len) == b.assets.get(&y.md5ext).map(Vec::len)
    };
    a.targets.len() == b.targets.len()
        && a.targets.iter().zip(&b.targets).all(|(s, t)| {
            s.costumes.len() == t.costumes.len() && s.costumes.iter().zip(&t.costumes).all(|(x, y)| same(x, y))
        })
}

impl Geometry for CpuGeometry {
    fn clone_box(&self) -> Box<dyn Geometry> {
        Box::new(self.clone())
    }

    fn clone_words(&self) -> u64 {
        let scene = (self.scene.drawables.len() + self.keys.len() + self.ids.len() + self.slot_pos.len()) as u64 * 8;
        self.pen.heap_words() + self.accel.heap_words() + scene
    }

    fn mode(&self) -> &'static str {
        if self.approximate.get() { "approximate" } else { "exact" }
    }

    fn touching_sprite(&mut self, scene: &Scene, me: TargetId, sprite: usize) -> bool {
        let Some(i) = self.scene_with(scene, me) else { return false };
        let answer = self.accel.touching_drawables(&self.scene, i, Candidates::Sprite(sprite as u32));
        if cfg!(debug_assertions) {
            // Test builds check every accelerated answer against the reference renderer.
            let mut cands = std::mem::take(&mut self.cands);
            cands.clear();
            cands.extend(scene.instances_of(sprite).filter_map(|t| self.index(t)));
            assert_eq!(answer, self.scene.touching_drawables(i, &cands), "touching sprite {sprite} from {i}");
            self.cands = cands;
        }
        self.keep_query_mips(i);
        answer
    }

    fn touching_edge(&mut self, scene: &Scene, me: TargetId) -> bool {
        self.own_query(
            scene,
            me,
            |g, i| render::touches_edge(&g.kept_bounds(i)),
            |s, i| render::touches_edge(&s.bounds(i)),
        )
        .unwrap_or(false)
    }

    fn touching_point(&mut self, scene: &Scene, me: TargetId, x: f64, y: f64) -> bool {
        self.own_query(scene, me, |g, i| g.scene.touching_point(i, x, y), |s, i| s.touching_point(i, x, y))
            .unwrap_or(false)
    }

    fn touching_color(&mut self, scene: &Scene, me: TargetId, rgb: [u8; 3]) -> bool {
        self.scene_with_pen(scene, me).is_some_and(|i| {
            let answer = self.accelerated_touching_color(i, rgb, None);
            self.keep_query_mips(i);
            answer
        })
    }

    fn color_touching_color(&mut self, scene: &Scene, me: TargetId, target: [u8; 3], mask: [u8; 3]) -> bool {
        self.scene_with_pen(scene, me).is_some_and(|i| {
            let answer = self.accelerated_touching_color(i, target, Some(mask));
            self.keep_query_mips(i);
            answer
        })
    }

    fn bounds(&mut self, scene: &Scene, me: TargetId) -> Option<Rect> {
        self.own_query(scene, me, |g, i| g.kept_bounds(i), |s, i| s.bounds(i))
    }

    fn fences(&self) -> bool {
        true
    }

    fn fenced_position(&mut self, scene: &Scene, me: TargetId, x: f64, y: f64) -> (f64, f64) {
        // Fencing reads only the mover's own transform. Where the kept scene has the mover, its
        // drawable is taken from the target as it is now, and the rest of the scene (with the
        // accelerated data) is left for the next query that looks at it: a sprite moving step
        // by step in a warp loop would otherwise rebuild its data twice per step, once for
        // each move and once for the `touching` question after it (`ball-physics-scroll`).
        let Some(i) = self.index(me) else { return self.fenced_loose(scene, me, x, y) };
        // `None`: the kept transform is the mover's (nothing changed since the last sync, the
        // move after a `touching` question, or at least not the mover).
        let changed = if self.kept_is_current(scene) {
            None
        } else {
            let Some(key) = scene.raw(me).and_then(Key::of) else { return self.fenced_after_sync(scene, me, x, y) };
            match self.keys.get(i) == Some(&Some(key)) {
                true => None,
                false => match self.current_xform(scene, me, &key, Some(i)) {
                    Some(xf) => Some(xf),
                    None => return self.fenced_after_sync(scene, me, x, y),
                },
            }
        };
        self.work += super::cost::QUERY;
        let [fx, fy] = match changed {
            Some(xf) => render::fence(&xf, x, y),
            None => self.scene.fenced(i, x, y),
        };
        (fx, fy)
    }

    fn costume_size(&self, sprite: usize, costume: i64) -> Option<(f64, f64)> {
        let skin = self.costumes.skin(sprite, usize::try_from(costume).ok()?)?;
        if skin.approximate().is_some() {
            self.approximate.set(true);
        }
        let [w, h] = skin.size();
        Some((w, h))
    }

    fn pick(&mut self, scene: &Scene, x: f64, y: f64) -> Option<TargetId> {
        self.sync(scene, true);
        // The pen layer belongs to no target: a click on it is a click on the stage.
        let stage = scene.layer_order().first().copied();
        self.scene.pick(x, y).and_then(|i| self.ids.get(i).copied().flatten().or(stage))
    }

    fn sprite_distance(&mut self, scene: &Scene, me: TargetId, sprite: usize) -> Option<f64> {
        let m = scene.target(me)?;
        scene
            .instances_of(sprite)
            .filter(|&t| t != me)
            .filter_map(|t| scene.target(t))
            .map(|o| distance::centre_distance(m.x, m.y, o.x, o.y))
            .min_by(f64::total_cmp)
    }

    fn edge_distance(&mut self, scene: &Scene, me: TargetId) -> Option<f64> {
        let m = scene.target(me)?;
        Some(distance::edge_distance(m.x, m.y).max(0.0))
    }

    fn point_distance(&mut self, scene: &Scene, me: TargetId, x: f64, y: f64) -> Option<f64> {
        let m = scene.target(me)?;
        Some(distance::centre_distance(m.x, m.y, x, y))
    }

    fn color_distance(&mut self, scene: &Scene, me: TargetId, rgb: [u8; 3], below: f64) -> Option<f64> {
        let i = self.scene_with_pen(scene, me)?;
        let d = self.accel.color_distance(&self.scene, i, rgb, below);
        if cfg!(debug_assertions) {
            // Test builds check every accelerated search against the reference.
            let fresh = distance::touching_color_distance(&self.scene, i, rgb).min(below);
            assert_eq!(d.to_bits(), fresh.to_bits(), "an accelerated colour search differs from the reference");
        }
        Some(d)
    }

    fn find_color(
        &mut self,
        scene: &Scene,
        me: TargetId,
        rgb: [u8; 3],
        known: Option<(i64, i64)>,
    ) -> Option<(i64, i64)> {
        let i = self.scene_with_pen(scene, me)?;
        let p = self.scene.drawables.get(i)?.placement;
        let mut samples = self.scene.color_sampler(Some(i));
        let matches =
            |s: &mut render::ColorSampler<'_>, (x, y): (i64, i64)| colors_match(rgb, s.sample(x as f64, y as f64));
        if let Some(k) = known
            && matches(&mut samples, k)
        {
            return Some(k);
        }
        if !samples.may_show(rgb) {
            return None;
        }
        let layers = self.scene.drawables.len();
        let Some(reach) = distance::stage_reach((p.x, p.y)) else {
            // A start off the stage: Whisker's point numbers may collide; walk as it does.
            let mut visited = 0u64;
            let found = distance::fuzzy_find_color((p.x, p.y), &distance::stage_bounds(), rgb, |x, y| {
                visited += 1;
                samples.sample(x, y)
            });
            self.work += super::cost::sample_walk(layers) * visited;
            return found.found;
        };
        // The walk, sampled only where some drawable can show the colour (the same answer as
        // sampling every point).
        let boxes = samples.match_boxes(rgb);
        let origin = (p.x.trunc() as i32, p.y.trunc() as i32);
        let walk = distance::stage_walk_in(reach, origin, boxes.as_deref(), None, &mut self.walk, |x, y| {
            colors_match(rgb, samples.sample(f64::from(x), f64::from(y)))
        });
        let sample = super::cost::FILL + super::cost::LAYER * layers as u64;
        self.work += (super::cost::WALK + sample) * walk.visited + super::cost::MASK_CELL * walk.marked;
        let found = walk.found.map(|(x, y)| (i64::from(x), i64::from(y)));
        if cfg!(debug_assertions) {
            // Test builds check every pruned search against Whisker's whole walk.
            let whole =
                distance::fuzzy_find_color((p.x, p.y), &distance::stage_bounds(), rgb, |x, y| samples.sample(x, y));
            assert_eq!(found, whole.found, "a pruned colour search differs from the whole walk");
        }
        found
    }

    fn find_color_radial(
        &mut self,
        scene: &Scene,
        rgb: [u8; 3],
        start: (f64, f64),
        resolution: f64,
        max_radius: f64,
    ) -> Option<(f64, f64)> {
        self.work += super::cost::QUERY;
        self.sync(scene, true);
        let mut samples = self.scene.color_sampler(None);
        if !samples.may_show(rgb) {
            return None;
        }
        // Only where some drawable can show the colour (the same answer, fewer samples).
        let areas = samples.match_areas(rgb);
        let (found, sampled) =
            distance::radial_find_color_among(start, resolution, max_radius, rgb, areas.as_deref(), |x, y| {
                samples.sample(x, y)
            });
        self.work += super::cost::sample_walk(self.scene.drawables.len()) * sampled;
        found
    }

    fn find_own_color(
        &mut self,
        scene: &Scene,
        me: TargetId,
        rgb: [u8; 3],
        known: Option<(i64, i64)>,
    ) -> Option<(i64, i64)> {
        let i = self.scene_with(scene, me)?;
        let p = self.scene.drawables.get(i)?.placement;
        let bounds = self.scene.bounds(i);
        let mut own = self.scene.own_color_sampler(i);
        if let Some((x, y)) = known
            && colors_match(rgb, own.sample(x as f64, y as f64))
        {
            return Some((x, y));
        }
        if !own.may_show(rgb) {
            return None;
        }
        let mut visited = 0u64;
        let found = distance::fuzzy_find_color((p.x, p.y), &bounds, rgb, |x, y| {
            visited += 1;
            own.sample(x, y)
        });
        self.work += super::cost::sample_walk(1) * visited;
        found.found
    }

    fn work(&self) -> u64 {
        self.accel.work() + self.pen.work() + self.work
    }

    fn pen_clear(&mut self) {
        self.pen_layer = true;
        self.pen.clear();
    }

    fn pen_point(&mut self, rgba: [f64; 4], size: f64, x: f64, y: f64) {
        self.pen_layer = true;
        self.pen.draw_point(&PenAttributes { color4f: rgba, diameter: size }, x, y);
    }

    fn pen_line(&mut self, rgba: [f64; 4], size: f64, x0: f64, y0: f64, x1: f64, y1: f64) {
        self.pen_layer = true;
        self.pen.draw_line(&PenAttributes { color4f: rgba, diameter: size }, x0, y0, x1, y1);
    }

    fn pen_stamp(&mut self, scene: &Scene, me: TargetId) {
        self.pen_layer = true;
        if let Some(i) = self.scene_with(scene, me) {
            self.pen.stamp(&self.scene, i);
        }
    }

    fn keep_mips(&mut self, on: bool) {
        self.keep_mips = on;
    }

    fn set_observing(&mut self, on: bool) {
        self.observing = on;
    }

    fn reset_mips(&mut self) {
        self.scene.floors = Default::default();
        // The next frame draws every visible target anew.
        self.drawn = None;
    }

    fn kept_mips(&self) -> Option<SilhouetteFloors> {
        self.keep_mips.then(|| self.scene.floors.clone())
    }

    fn restore_mips(&mut self, mips: SilhouetteFloors) {
        if self.keep_mips {
            self.scene.floors = mips;
        }
    }

    fn frame_drawn(&mut self, scene: &Scene) {
        if !self.keep_mips {
            return;
        }
        // Only targets changed since the last frame can have a new texture; the whole scene
        // when the log cannot tell (first frame, targets created or deleted, entries dropped).
        let fresh = match (scene.changes(), self.drawn) {
            (Some(c), Some(last)) if c.layers == last.layers && last.seen >= c.base => {
                c.log.get((last.seen - c.base) as usize..)
            }
            _ => None,
        };
        match fresh {
            Some(slots) => {
                for &slot in slots {
                    if let Some(t) = scene.raw_slot(slot) {
                        self.draw_target(t);
                    }
                }
            }
            None => {
                for &id in scene.layer_order() {
                    if let Some(t) = scene.raw(id) {
                        self.draw_target(t);
                    }
                }
            }
        }
        self.drawn = scene.changes().map(|c| Synced {
            layers: c.layers,
            targets: c.targets,
            seen: c.base + c.log.len() as u64,
            pen_layer: self.pen_layer,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project_with_costume(md5ext: &str) -> Project {
        let json = format!(
            r#"{{"targets": [{{"isStage": true, "name": "Stage", "variables": {{}}, "lists": {{}},
                "broadcasts": {{}}, "blocks": {{}}, "comments": {{}}, "currentCostume": 0,
                "costumes": [{{"assetId": "a", "dataFormat": "svg", "md5ext": "{md5ext}", "name": "c",
                               "rotationCenterX": 5, "rotationCenterY": 5}}],
                "sounds": [], "volume": 100, "layerOrder": 0}}],
              "monitors": [], "extensions": [], "meta": {{"semver": "3.0.0"}}}}"#
        );
        let mut p = crate::project::load(json.as_bytes(), "p.json", &crate::LoadLimits::default()).expect("loads");
        let svg =
            br#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>"#;
        p.assets.insert(md5ext.to_string(), svg.to_vec());
        p
    }

    /// An edited copy (a mutant) uses the original's decoded costumes instead of decoding them
    /// for every VM; a copy with other costumes does not.
    #[test]
    fn edited_copies_share_the_decoded_costumes() {
        let original = Arc::new(project_with_costume("a.svg"));
        let set = costume_set(&original);
        assert!(Arc::ptr_eq(&set, &costume_set(&original)), "cached in the project");
        let copy = Arc::new(original.clone_for_edit());
        assert!(Arc::ptr_eq(&set, &costume_set(&copy)), "the copy shares the original's set");
        let mut other = original.clone_for_edit();
        other.targets[0].costumes[0].rotation_center_x = 6.0;
        let other = Arc::new(other);
        assert!(!Arc::ptr_eq(&set, &costume_set(&other)), "other costumes are decoded privately");
        // Without the original, a copy decodes privately (its set would have no costumes to read).
        drop(set);
        drop(original);
        assert!(costume_set(&copy).project().is_some_and(|p| Arc::ptr_eq(&p, &copy)));
    }

    /// The index table reads rotation styles exactly as parsing a target view's name does.
    #[test]
    fn rotation_table_matches_parsing_the_names() {
        for (i, name) in crate::program::ROT_NAMES.iter().enumerate() {
            assert_eq!(ROTATIONS[i], RotationStyle::parse(name), "{name}");
        }
        assert_eq!(ROTATIONS.len(), crate::program::ROT_NAMES.len());
    }
}
