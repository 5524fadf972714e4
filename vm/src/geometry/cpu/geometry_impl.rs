//! The interpreter's [`Geometry`] questions answered by the CPU renderer over the kept scene,
//! through the accelerated queries (checked against the reference in test builds).

use super::{CpuGeometry, Key, Synced};
use crate::engine::TargetId;
use crate::geometry::accel::Candidates;
use crate::geometry::cost;
use crate::geometry::distance;
use crate::geometry::pen::PenAttributes;
use crate::geometry::render::{self, SilhouetteFloors};
use crate::geometry::silhouette::colors_match;
use crate::geometry::{Geometry, Rect, Scene};

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
        let answer = answer && self.touching_with_hulls(scene, i, sprite);
        self.keep_query_mips(i);
        answer
    }

    fn touching_edge(&mut self, scene: &Scene, me: TargetId) -> bool {
        if let Some(b) = self.kept_hull_bounds(scene, me) {
            return render::touches_edge(&b);
        }
        let answer = self
            .own_query(
                scene,
                me,
                |g, i| render::touches_edge(&g.kept_bounds(i)),
                |s, i| render::touches_edge(&s.bounds(i)),
            )
            .unwrap_or(false);
        self.note_hull(scene, me);
        answer
    }

    fn touching_point(&mut self, scene: &Scene, me: TargetId, x: f64, y: f64) -> bool {
        self.own_query(scene, me, |g, i| g.scene.touching_point(i, x, y), |s, i| s.touching_point(i, x, y))
            .unwrap_or(false)
    }

    fn touching_color(&mut self, scene: &Scene, me: TargetId, rgb: [u8; 3]) -> bool {
        self.scene_with_pen(scene, me).is_some_and(|i| {
            let answer = self.accelerated_touching_color(i, rgb, None) && self.color_with_hulls(scene, i, rgb, None);
            self.keep_query_mips(i);
            answer
        })
    }

    fn color_touching_color(&mut self, scene: &Scene, me: TargetId, target: [u8; 3], mask: [u8; 3]) -> bool {
        self.scene_with_pen(scene, me).is_some_and(|i| {
            let answer = self.accelerated_touching_color(i, target, Some(mask))
                && self.color_with_hulls(scene, i, target, Some(mask));
            self.keep_query_mips(i);
            answer
        })
    }

    fn bounds(&mut self, scene: &Scene, me: TargetId) -> Option<Rect> {
        if let Some(b) = self.kept_hull_bounds(scene, me) {
            return Some(b);
        }
        let answer = self.own_query(scene, me, |g, i| g.kept_bounds(i), |s, i| s.bounds(i));
        self.note_hull(scene, me);
        answer
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
        self.work += cost::QUERY;
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
            self.work += cost::sample_walk(layers) * visited;
            return found.found;
        };
        // The walk, sampled only where some drawable can show the colour (the same answer as
        // sampling every point).
        let boxes = samples.match_boxes(rgb);
        let origin = (p.x.trunc() as i32, p.y.trunc() as i32);
        let walk = distance::stage_walk_in(reach, origin, boxes.as_deref(), None, &mut self.walk, |x, y| {
            colors_match(rgb, samples.sample(f64::from(x), f64::from(y)))
        });
        let sample = cost::FILL + cost::LAYER * layers as u64;
        self.work += (cost::WALK + sample) * walk.visited + cost::MASK_CELL * walk.marked;
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
        self.work += cost::QUERY;
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
        self.work += cost::sample_walk(self.scene.drawables.len()) * sampled;
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
        self.work += cost::sample_walk(1) * visited;
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
        // The exported prologue marks every hull dirty with the MIPs.
        self.hulls.clear();
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

    fn kept_hulls(&self) -> Option<&[(TargetId, u32, Option<i32>)]> {
        self.keep_mips.then_some(self.hulls.as_slice())
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
