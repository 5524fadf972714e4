//! Colour queries over the kept composites: `touching color`, `color is touching color`, and
//! Whisker's colour distance (a walk pruned to where the colour may show).

use std::rc::Rc;
use std::sync::Arc;

use super::composite::{Layer, Lazy};
use super::rows::{self, EMPTY, Row};
use super::sampler::Sampler;
use super::{Accel, Info, Levels, mask};
use crate::geometry::Rect;
use crate::geometry::cost;
use crate::geometry::distance;
use crate::geometry::effects::bit;
use crate::geometry::render::{BACKGROUND, ColorMemo, Scene, match_rects, skin_key};
use crate::geometry::silhouette::{color_key, colors_match};

impl Accel {
    /// Whether every drawable a composite without `me` may sample has a finite transform (else
    /// the reference answers: a NaN transform samples a texel anywhere).
    fn all_finite(&self, me: usize) -> bool {
        let me_counted = self.index.entry(me).is_some_and(|e| e.nonfinite());
        self.index.nonfinite() == usize::from(me_counted)
    }

    /// The pen layer's texel map (see `Sampler::texel_map`), computed once per transform.
    fn pen_map(&mut self, scene: &Scene) -> Option<Rc<Vec<u32>>> {
        let pos = self.infos.iter().position(|i| i.pen && i.visible && i.finite)?;
        let info = &self.infos[pos];
        let d = &scene.drawables[pos];
        if d.effects.changes_shape() {
            return None;
        }
        if let Some((xf, map)) = &self.pen_texels
            && *xf == info.xf
        {
            return Some(map.clone());
        }
        let map = Rc::new(Sampler::new(d, info.xf, d.skin.mip_ref(0), info.nearest).texel_map());
        self.work += cost::MAP_PIXEL * map.len() as u64;
        self.pen_texels = Some((info.xf, map.clone()));
        Some(map)
    }

    /// The composite leaving out `me`, brought to the query's levels; returns its index.
    fn prepare_composite(&mut self, scene: &Scene, me: usize, levels: &Levels) -> usize {
        let k = self.comp_for(me);
        let infos = &self.infos;
        for &(skin, level) in &levels.0 {
            self.comps[k].require_skin_level(skin, level, || {
                // Rare (a skin's level changed): forget every visible drawable of it.
                infos
                    .iter()
                    .enumerate()
                    .filter(|&(i, info)| info.visible && i != me && skin_key(&scene.drawables[i].skin) == skin)
                    .map(|(_, info)| info.sbox)
                    .collect()
            });
        }
        k
    }

    /// `isTouchingColor(me, color, mask)`, as [`Scene::touching_color`].
    pub(crate) fn touching_color(&mut self, scene: &Scene, me: usize, color: [u8; 3], mask: Option<[u8; 3]>) -> bool {
        self.work += cost::QUERY;
        self.asked.0.clear();
        let Some(mb) = self.infos.get(me).and_then(|i| i.tbounds) else { return false };
        let mut list = std::mem::take(&mut self.list);
        list.clear();
        let mut near = std::mem::take(&mut self.near);
        self.index.near(&mb, &mut near);
        for &c in &near {
            let ci = &self.infos[c];
            if c != me && mb.intersects(&ci.snapped) {
                list.push((c, mb.intersect(&ci.snapped)));
            }
        }
        self.work += cost::CANDIDATE * near.len() as u64;
        self.near = near;
        let answer = self.touching_color_in(scene, me, color, mask, mb, &list);
        self.list = list;
        answer
    }

    fn touching_color_in(
        &mut self,
        scene: &Scene,
        me: usize,
        color: [u8; 3],
        mask: Option<[u8; 3]>,
        mb: Rect,
        list: &[(usize, Rect)],
    ) -> bool {
        let bounds = if colors_match(color, BACKGROUND) {
            mb
        } else if list.is_empty() {
            return false;
        } else {
            let mut b = list[0].1;
            for (_, r) in &list[1..] {
                b = b.union(r);
            }
            b
        };
        if !self.infos[me].finite || !self.all_finite(me) {
            return scene.touching_color(me, color, mask);
        }
        let me_skin = &scene.drawables[me].skin;
        let mut levels = Levels::of_scene(scene, &self.index, me_skin, None);
        levels.request(me_skin, self.infos[me].l100);
        levels.request(me_skin, self.infos[me].own);
        let key = color_key(color);
        let may_show = colors_match(color, BACKGROUND)
            || list.iter().any(|&(c, _)| {
                let d = &scene.drawables[c];
                d.effects.enabled & (bit::COLOR | bit::BRIGHTNESS | bit::GHOST) != 0
                    || d.skin.mip_ref(levels.of(&d.skin)).palette().may_show(key)
            });
        if !may_show {
            self.asked = levels;
            return false;
        }
        // Only drawables whose boxes meet the query's can show at its pixels; only inside
        // their match boxes can the composite be the colour (see [`match_rects`]).
        let mut near = std::mem::take(&mut self.near);
        self.index.near(&bounds, &mut near);
        let infos = &self.infos;
        near.retain(|&i| i != me && infos[i].sbox.intersects(&bounds));
        near.sort_unstable_by(|a, b| b.cmp(a));
        let mut areas = std::mem::take(&mut self.match_boxes);
        areas.clear();
        let pruned = !colors_match(color, BACKGROUND);
        if pruned {
            for &i in &near {
                let d = &scene.drawables[i];
                let mip = d.skin.mip_ref(levels.of(&d.skin));
                match_rects(&d.effects, &infos[i].xf, mip, infos[i].sbox, key, &mut areas);
            }
            areas.retain(|a| a.intersects(&bounds));
            self.work += cost::CANDIDATE * near.len() as u64;
        }
        let (x0, x1) = (bounds.left as i32, bounds.right as i32);
        let (mut y0, mut y1) = (bounds.bottom as i32, bounds.top as i32);
        let cols = rows::range(x0, x1);
        // Per match box, its rows and its columns among the query's; none when one box holds
        // every pixel looked at (a recoloured backdrop), then nothing is pruned.
        let mut boxes = std::mem::take(&mut self.match_rows);
        boxes.clear();
        let holds_all = |a: &Rect| {
            a.left <= f64::from(x0) && f64::from(x1) <= a.right && a.bottom <= f64::from(y0) && f64::from(y1) <= a.top
        };
        if pruned && !areas.iter().any(holds_all) {
            let int = |v: f64| v.clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32;
            boxes.extend(areas.iter().map(|a| {
                let m = rows::range(int(a.left.ceil()), int(a.right.floor()));
                (int(a.bottom.ceil()), int(a.top.floor()), std::array::from_fn(|w| m[w] & cols[w]))
            }));
            // Only the rows some box meets.
            y0 = y0.max(boxes.iter().map(|b| b.0).min().unwrap_or(i32::MAX));
            y1 = y1.min(boxes.iter().map(|b| b.1).max().unwrap_or(i32::MIN));
        }
        let pruned = !boxes.is_empty();
        if y0 > y1 {
            self.near = near;
            self.match_boxes = areas;
            self.match_rows = boxes;
            self.asked = levels;
            return false;
        }
        let ci = self.prepare_composite(scene, me, &levels);
        let me_level = levels.of(&scene.drawables[me].skin);
        // `me`'s touching rows first: they come from its row cache, which `layers` below must
        // not be borrowed across.
        let mut touched = std::mem::take(&mut self.touched);
        touched.clear();
        if mask.is_none() {
            for y in y0..=y1 {
                touched.push(self.row(scene, me, me_level, y));
            }
        }
        let pen = self.pen_map(scene);
        let me_d = &scene.drawables[me];
        // `me`'s kept mask rows, out of its data while `layers` below borrows all of it.
        let mut kept = std::mem::take(&mut self.infos[me].mask);
        let infos = &self.infos;
        let me_sampler = Sampler::new(me_d, infos[me].xf, me_d.skin.mip_ref(me_level), infos[me].nearest);
        let mut masked = mask.map(|m| {
            let key = mask::Key {
                ver: infos[me].ver,
                level: me_level,
                nearest: infos[me].nearest,
                effects: me_d.effects,
                mask: m,
                lo: bounds.left as i32,
                hi: bounds.right as i32,
                bottom: bounds.bottom as i32,
                top: bounds.top as i32,
            };
            mask::MaskQuery::new(&mut kept, key)
        });
        // The columns of row `y` inside a match box (all of them when nothing was pruned).
        let may_match = |y: i32| -> Row {
            if !pruned {
                return cols;
            }
            let mut r = EMPTY;
            for (_, _, m) in boxes.iter().filter(|b| b.0 <= y && y <= b.1) {
                for w in 0..r.len() {
                    r[w] |= m[w];
                }
            }
            r
        };
        let mut layers =
            Lazy::new(|| layers_of(scene, infos, near.iter().copied(), &levels, pen.as_ref().map(|m| m.as_slice())));
        let mut work = 0u64;
        let mut hit = false;
        for (k, y) in (y0..=y1).enumerate() {
            work += cost::ROW_VISIT;
            let allowed = may_match(y);
            if rows::is_empty(&allowed) {
                continue;
            }
            let mine = match &mut masked {
                None => rows::and(&touched[k], &allowed),
                Some(q) => {
                    let (r, w) = q.row(&me_sampler, y);
                    work += w;
                    rows::and(&r, &allowed)
                }
            };
            if !rows::is_empty(&mine) && self.comps[ci].any_match(y, &mine, key, &mut layers) {
                hit = true;
                break;
            }
        }
        drop(layers);
        // `masked` borrowed `kept`; its last use is above.
        self.infos[me].mask = kept;
        self.near = near;
        self.match_boxes = areas;
        self.match_rows = boxes;
        self.touched = touched;
        self.work += work;
        self.asked = levels;
        hit
    }

    /// Whisker's branch distance of a false `touching color`, as
    /// [`distance::touching_color_distance`], or `below` when that is less: the walk stops at
    /// the first ring whose points are all at least `below` away.
    pub(crate) fn color_distance(&mut self, scene: &Scene, me: usize, color: [u8; 3], below: f64) -> f64 {
        self.work += cost::QUERY;
        if below <= 0.0 {
            // `min(distance, below)` whatever the distance (distances are non-negative).
            return below;
        }
        if self.infos.get(me).is_none() || !self.all_finite(me) {
            return self.uncached_color_distance(scene, me, color).min(below);
        }
        let me_skin = &scene.drawables[me].skin;
        let me_own = self.infos[me].visible.then_some(self.infos[me].own);
        let levels = Levels::of_scene(scene, &self.index, me_skin, me_own);
        let key = color_key(color);
        let me_fx = self.index.entry(me).is_some_and(|e| e.colour_effects());
        let may_show = colors_match(color, BACKGROUND)
            || self.index.colour_effects() > usize::from(me_fx)
            || self.index.skins().any(|(skin, _)| {
                let alone = Arc::ptr_eq(skin, me_skin) && self.index.level(skin, me_own).is_none();
                !alone && skin.mip_ref(levels.of(skin)).palette().may_show(key)
            });
        if !may_show {
            return below.min(1.0);
        }
        let p = scene.drawables[me].placement;
        let start = (p.x, p.y);
        let Some(reach) = distance::stage_reach(start) else {
            // A start off the stage: Whisker's point numbers may collide; walk as it does.
            return self.uncached_color_distance(scene, me, color).min(below);
        };
        let (x0, y0) = (start.0.trunc() as i32, start.1.trunc() as i32);
        // Only walk points where some drawable can show the colour are sampled (the same
        // answer: elsewhere the composite is another colour or white).
        let infos = &self.infos;
        let others = || (0..infos.len()).filter(|&i| i != me && infos[i].visible);
        let mut boxes = std::mem::take(&mut self.match_boxes);
        boxes.clear();
        let pruned = !colors_match(color, BACKGROUND);
        if pruned {
            for i in others() {
                let d = &scene.drawables[i];
                let mip = d.skin.mip_ref(levels.of(&d.skin));
                match_rects(&d.effects, &infos[i].xf, mip, infos[i].sbox, key, &mut boxes);
            }
        }
        self.work += cost::CANDIDATE * others().count() as u64;
        if pruned && boxes.is_empty() {
            self.match_boxes = boxes;
            return below.min(1.0);
        }
        let k = self.prepare_composite(scene, me, &levels);
        let pen = self.pen_map(scene);
        let infos = &self.infos;
        let all = (0..infos.len()).rev().filter(|&i| i != me && infos[i].visible);
        let mut layers = Lazy::new(|| layers_of(scene, infos, all, &levels, pen.as_ref().map(|m| m.as_slice())));
        let comp = &mut self.comps[k];
        let within = pruned.then_some(boxes.as_slice());
        let rings = distance::rings_below(below);
        let walk = distance::stage_walk_in(reach, (x0, y0), within, rings, &mut self.walk, |x, y| {
            colors_match(color, comp.get(x, y, &mut layers))
        });
        drop(layers);
        self.match_boxes = boxes;
        self.work += cost::WALK * walk.visited + cost::MASK_CELL * walk.marked;
        // Not found within `rings`: the colour is nowhere (1) or at least `below` away.
        walk.found.map_or(below.min(1.0), |(x, y)| {
            distance::found_distance(start, &distance::stage_bounds(), x as i64, y as i64).min(below)
        })
    }

    /// [`distance::touching_color_distance`] without the kept composites, its samples counted.
    fn uncached_color_distance(&mut self, scene: &Scene, me: usize, color: [u8; 3]) -> f64 {
        let (d, visited) = distance::touching_color_distance_counted(scene, me, color);
        self.work += visited * cost::sample_walk(scene.drawables.len());
        d
    }
}

/// A backdrop's colours at every stage pixel (before colour effects).
fn backdrop_colors(s: &Sampler<'_>) -> Vec<[u8; 4]> {
    let mut v = Vec::with_capacity(rows::ROWS * rows::COLS);
    for y in rows::Y0..=rows::Y1 {
        for x in rows::X0..=rows::X1 {
            v.push(s.color(x, y));
        }
    }
    v
}

/// A composite's layers: the drawables at `positions` (visible, topmost first), at `levels`.
fn layers_of<'a>(
    scene: &'a Scene,
    infos: &[Box<Info>],
    positions: impl Iterator<Item = usize>,
    levels: &Levels,
    pen: Option<&'a [u32]>,
) -> Vec<Layer<'a>> {
    positions
        .map(|i| {
            let d = &scene.drawables[i];
            let info = &infos[i];
            let mip = d.skin.mip_ref(levels.of(&d.skin));
            let sampler = Sampler::new(d, info.xf, mip, info.nearest);
            let plane = info.backdrop.then(|| mip.backdrop(&info.xf, || backdrop_colors(&sampler))).flatten();
            let texels = if info.pen && info.finite && !d.effects.changes_shape() { pen } else { None };
            let memo = (d.effects.enabled != 0).then(|| ColorMemo::for_effects(&d.effects));
            Layer { sbox: info.sbox, sampler, effects: &d.effects, plane, texels, memo }
        })
        .collect()
}
