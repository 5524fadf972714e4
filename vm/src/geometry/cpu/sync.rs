//! Bringing the kept scene up to date with the live targets: from the VM's change log when
//! it can be trusted, else by a full sync that keeps every unchanged drawable (and its
//! accelerated data) wherever it moved.

use std::sync::Arc;

use super::{CpuGeometry, Key, STAGE_PLACEMENT, Synced};
use crate::engine::TargetId;
use crate::geometry::Scene;
use crate::geometry::accel::PenChange;
use crate::geometry::cost;
use crate::geometry::effects::Effects;
use crate::geometry::render::Drawable;

impl CpuGeometry {
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
    pub(super) fn sync(&mut self, s: &Scene<'_>, with_pen: bool) {
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
            self.work += cost::MOVE * self.scene.drawables.len() as u64;
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

    /// The up-to-date scene (pen pixels excepted), and the index of `me` in it.
    pub(super) fn scene_with(&mut self, s: &Scene<'_>, me: TargetId) -> Option<usize> {
        self.work += cost::QUERY;
        self.sync(s, false);
        self.index(me)
    }

    /// [`CpuGeometry::scene_with`] for queries that read the pen layer's pixels.
    pub(super) fn scene_with_pen(&mut self, s: &Scene<'_>, me: TargetId) -> Option<usize> {
        self.sync(s, true);
        self.index(me)
    }

    /// Whether the VM changed nothing the kept scene shows since the last sync: no target
    /// handed out mutably, created, disposed or moved between layers.
    pub(super) fn kept_is_current(&self, s: &Scene<'_>) -> bool {
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
}
