//! Per-query renderer state ([`Ctx`]): the transforms a query uses, the MIP levels it
//! requests and the MIPs it reads, and scratch-render's per-drawable steps over them
//! (`updateCPURenderAttributes`, `isTouching`, `sampleColor4b`, `_candidatesTouching`, ...).

use std::borrow::Cow;
use std::sync::Arc;

use super::sampling::Blend;
use super::{
    BACKGROUND, Drawable, STAGE_HEIGHT, STAGE_WIDTH, Scene, sample_box_of, skin_key, touching_bounds_of, uses_nearest,
};
use crate::geometry::Rect;
use crate::geometry::drawable::Xform;
use crate::geometry::effects::bit;
use crate::geometry::hull;
use crate::geometry::silhouette::{color_key, colors_match};
use crate::geometry::skin::{Mip, Skin};

/// Per-query renderer state: transforms not precomputed and the MIP level requested per skin.
pub(super) struct Ctx<'a> {
    s: &'a Scene,
    /// Drawables whose precomputed transform this query checked and uses (one bit each: a
    /// query allocates n/64 words rather than a transform per drawable).
    checked: Vec<u64>,
    /// Transforms this query computed itself (drawables edited since the precomputation).
    own_xf: Vec<(usize, Xform)>,
    /// Per SVG skin (by [`skin_key`]), the level of its silhouette: the floor, raised by
    /// the query's requests (the scene's floors, borrowed until a request raises one).
    pub(super) levels: Cow<'a, [(usize, i32)]>,
    /// MIPs fetched during this query, borrowed from the skins.
    mips: MipMemo<'a>,
}

/// Drawables a query keeps in a list before it keeps a slot per drawable.
const FEW_MIPS: usize = 4;

/// [`Ctx::mips`]: the MIPs of the first few drawables a query reads in a list, then one slot
/// per drawable. A slot per drawable for every query cost each clone of a swarm asking about
/// itself (`touching edge?`, its bounds) an allocation the size of the scene (`402092991`).
#[derive(Default)]
struct MipMemo<'a> {
    /// The one asked for last: per-pixel loops ask for the same drawable again and again.
    last: Option<(usize, &'a Mip)>,
    few: [(usize, Option<&'a Mip>); FEW_MIPS],
    /// Entries of `few` in use.
    n: usize,
    /// One slot per drawable, once more than [`FEW_MIPS`] were read (else empty).
    all: Vec<Option<&'a Mip>>,
}

impl<'a> MipMemo<'a> {
    /// Forgets every MIP (a level changed).
    fn clear(&mut self) {
        self.last = None;
        self.n = 0;
        self.all.iter_mut().for_each(|m| *m = None);
    }

    /// The MIP of drawable `i` (of `len`), fetched by `fetch` the first time.
    fn get(&mut self, i: usize, len: usize, fetch: impl FnOnce() -> &'a Mip) -> &'a Mip {
        if let Some((j, m)) = self.last
            && j == i
        {
            return m;
        }
        let m = self.get_kept(i, len, fetch);
        self.last = Some((i, m));
        m
    }

    /// [`MipMemo::get`] past the last one asked for.
    fn get_kept(&mut self, i: usize, len: usize, fetch: impl FnOnce() -> &'a Mip) -> &'a Mip {
        if !self.all.is_empty() {
            return match self.all.get_mut(i) {
                Some(slot) => slot.get_or_insert_with(fetch),
                None => fetch(),
            };
        }
        if let Some((_, Some(m))) = self.few[..self.n].iter().find(|(j, _)| *j == i) {
            return m;
        }
        let m = fetch();
        if self.n < FEW_MIPS {
            self.few[self.n] = (i, Some(m));
            self.n += 1;
        } else {
            self.all.resize(len.max(i + 1), None);
            for &(j, mip) in &self.few {
                if let Some(slot) = self.all.get_mut(j) {
                    *slot = mip;
                }
            }
            if let Some(slot) = self.all.get_mut(i) {
                *slot = Some(m);
            }
        }
        m
    }
}

impl<'a> Ctx<'a> {
    pub(super) fn new(s: &'a Scene) -> Self {
        Ctx { s, checked: Vec::new(), own_xf: Vec::new(), levels: Cow::Borrowed(&s.floors.0), mips: MipMemo::default() }
    }

    pub(super) fn d(&self, i: usize) -> &'a Drawable {
        &self.s.drawables[i]
    }

    pub(super) fn xf(&mut self, i: usize) -> Xform {
        let (w, bit) = (i / 64, 1u64 << (i % 64));
        if self.checked.get(w).is_some_and(|b| b & bit != 0)
            && let Some(Some(c)) = self.s.xforms.get(i)
        {
            return c.xf;
        }
        if let Some((_, x)) = self.own_xf.iter().find(|(j, _)| *j == i) {
            return *x;
        }
        // Validated once per drawable and query, then trusted: per-pixel loops call this.
        if let Some(x) = self.s.cached_xform(i) {
            if self.checked.is_empty() {
                self.checked.resize(self.s.drawables.len().div_ceil(64), 0);
            }
            if let Some(b) = self.checked.get_mut(w) {
                *b |= bit;
            }
            return x;
        }
        let d = self.d(i);
        let x = Xform::new(&d.placement, d.skin.size(), d.skin.rotation_center());
        self.own_xf.push((i, x));
        x
    }

    fn request_level(&mut self, skin: &Arc<Skin>, level: i32) {
        let key = skin_key(skin);
        match self.levels.iter().position(|(k, _)| *k == key) {
            Some(p) => {
                if self.levels.get(p).is_some_and(|&(_, l)| level > l) {
                    if let Some((_, l)) = self.levels.to_mut().get_mut(p) {
                        *l = level;
                    }
                    self.mips.clear();
                }
            }
            None => {
                self.levels.to_mut().push((key, level));
                self.mips.clear();
            }
        }
    }

    /// `Drawable.updateCPURenderAttributes`: the transform, and the skin's MIP for the drawable's scale.
    pub(super) fn update_cpu(&mut self, i: usize) {
        self.xf(i);
        let d = self.d(i);
        let level = d.skin.mip_level(d.placement.render_scale());
        self.request_level(&d.skin, level);
    }

    /// `skin.getTexture([100, 100])`, which `_touchingBounds` calls.
    fn get_texture_100(&mut self, i: usize) {
        let d = self.d(i);
        let level = d.skin.mip_level([100.0, 100.0]);
        self.request_level(&d.skin, level);
    }

    /// The MIP of drawable `i` at its skin's requested level, memoised; borrowed, because
    /// per-pixel loops call this (no reference-count traffic per pixel).
    pub(super) fn mip(&mut self, i: usize) -> &Mip {
        self.mip_of(i)
    }

    /// [`Ctx::mip`] borrowed for the scene's lifetime (the levels must be settled: a later
    /// request would not reach this borrow).
    pub(super) fn mip_of(&mut self, i: usize) -> &'a Mip {
        let d = self.d(i);
        let levels = &self.levels;
        self.mips.get(i, self.s.drawables.len(), || {
            let key = skin_key(&d.skin);
            let level = levels.iter().find(|(k, _)| *k == key).map(|(_, l)| *l).unwrap_or(0);
            d.skin.mip_ref(level)
        })
    }

    fn use_nearest(&self, i: usize) -> bool {
        uses_nearest(self.d(i))
    }

    fn local(&mut self, i: usize, x: f64, y: f64) -> [f64; 2] {
        let xf = self.xf(i);
        let d = self.d(i);
        if d.effects.enabled != 0 { xf.local_with_effects(x, y, &d.effects, d.skin.size()) } else { xf.local(x, y) }
    }

    /// `drawable.isTouching(point)` (after `update_cpu`).
    pub(super) fn is_touching(&mut self, i: usize, x: f64, y: f64) -> bool {
        let [u, v] = self.local(i, x, y);
        let nearest = self.use_nearest(i);
        let mip = self.mip(i);
        if nearest { mip.silhouette.is_touching_nearest(u, v) } else { mip.silhouette.is_touching_linear(u, v) }
    }

    /// Whether compositing `ids` over white can give a colour matching `color` at some point;
    /// false only when provably not (every silhouette fully opaque or transparent, no colour
    /// effects, the colour in no [`Palette`](crate::geometry::silhouette::Palette) and not white), so a
    /// pixel search for it would find nothing. Call it after every MIP level is requested.
    pub(super) fn may_composite(&mut self, ids: &[usize], color: [u8; 3]) -> bool {
        if colors_match(color, BACKGROUND) {
            return true;
        }
        let key = color_key(color);
        for &i in ids {
            if self.d(i).effects.enabled & (bit::COLOR | bit::BRIGHTNESS | bit::GHOST) != 0
                || self.mip(i).palette().may_show(key)
            {
                return true;
            }
        }
        false
    }

    /// `Drawable.sampleColor4b`: premultiplied colour of drawable `i` at a world point.
    pub(super) fn sample_color4b(&mut self, i: usize, x: f64, y: f64, effect_mask: u32) -> [u8; 4] {
        let [u, v] = self.local(i, x, y);
        if u < 0.0 || v < 0.0 || u > 1.0 || v > 1.0 {
            return [0; 4];
        }
        let c = self.mip(i).silhouette.color_at_nearest(u, v);
        let e = &self.d(i).effects;
        if e.enabled == 0 { c } else { e.transform_color(c, effect_mask) }
    }

    /// A box outside which drawable `i` samples transparent: its AABB grown by a unit, far more
    /// than the single-precision inverse transform can be off by. Unbounded when the transform
    /// is not finite (NaN texture coordinates sample a pixel anywhere).
    pub(super) fn sample_box(&mut self, i: usize) -> Rect {
        sample_box_of(&self.xf(i))
    }

    /// `RenderWebGL.sampleColor3b`: the colour the renderer composites at a point from `drawables`
    /// (topmost first); `boxes[k]` is [`Ctx::sample_box`] of `drawables[k]`, so drawables far from
    /// the point cost a comparison instead of a transform.
    pub(super) fn sample_color3b(&mut self, x: f64, y: f64, drawables: &[usize], boxes: &[Rect]) -> [u8; 3] {
        let mut blend = Blend::new();
        for (&i, b) in drawables.iter().zip(boxes) {
            if blend.done() {
                break;
            }
            if x < b.left || x > b.right || y < b.bottom || y > b.top {
                // Transparent here: adds nothing and leaves the blend alpha as it is.
                continue;
            }
            blend.add(self.sample_color4b(i, x, y, !0));
        }
        blend.finish()
    }

    pub(super) fn aabb(&mut self, i: usize) -> Rect {
        self.xf(i).aabb()
    }

    /// `_touchingBounds`: the drawable's rough box clamped to the stage, snapped out to integers.
    pub(super) fn touching_bounds(&mut self, i: usize) -> Option<Rect> {
        self.get_texture_100(i);
        match self.hull_box(i) {
            Some(mut b) => {
                b.clamp(-STAGE_WIDTH / 2.0, STAGE_WIDTH / 2.0, -STAGE_HEIGHT / 2.0, STAGE_HEIGHT / 2.0);
                b.snap_to_int();
                (b.width() != 0.0 && b.height() != 0.0).then_some(b)
            }
            None => touching_bounds_of(&self.xf(i)),
        }
    }

    /// `getFastBounds` when the renderer holds drawable `i`'s convex hull: the hull's box.
    fn hull_box(&self, i: usize) -> Option<Rect> {
        self.s.hull_bounds.iter().find(|(j, _)| *j == i).map(|&(_, b)| b)
    }

    /// `_candidatesTouching`: visible candidates (topmost first) whose snapped box meets `me`'s.
    pub(super) fn candidates_touching(&mut self, me: usize, candidates: &[usize]) -> Vec<(usize, Rect)> {
        let Some(bounds) = self.touching_bounds(me) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for &id in candidates.iter().rev() {
            if id == me || !self.d(id).visible {
                continue;
            }
            self.update_cpu(id);
            let mut cb = match self.hull_box(id) {
                Some(b) => b,
                None => self.aabb(id),
            };
            cb.snap_to_int();
            if bounds.intersects(&cb) {
                out.push((id, bounds.intersect(&cb)));
            }
        }
        out
    }

    /// Hull points of drawable `i` on its skin's pixel grid (empty when invisible or sizeless),
    /// from the silhouette its skin has now, or from the MIP at `level` (a hull the renderer
    /// computed from it and kept).
    fn hull(&mut self, i: usize, level: Option<i32>) -> Vec<[f64; 2]> {
        let d = self.d(i);
        let size = d.skin.size();
        if !d.visible || size[0] == 0.0 || size[1] == 0.0 {
            return Vec::new();
        }
        let mip = match level {
            Some(level) => d.skin.mip_ref(level),
            None => {
                self.update_cpu(i);
                self.mip(i)
            }
        };
        if d.effects.changes_shape() {
            hull::hull_points(&mip.silhouette, size, Some((&d.effects, size)))
        } else {
            mip.hull(size).to_vec()
        }
    }

    /// `Rect::from_points` of [`Ctx::transformed_hull`], reading the kept hull in place instead
    /// of copying it and collecting its transformed points (a swarm's `touching edge?` asks
    /// this of every clone every frame).
    pub(super) fn transformed_hull_box(&mut self, i: usize, level: Option<i32>) -> Option<Rect> {
        let d = self.d(i);
        if d.effects.changes_shape() {
            return Rect::from_points(self.transformed_hull(i, level));
        }
        let size = d.skin.size();
        if !d.visible || size[0] == 0.0 || size[1] == 0.0 {
            return None;
        }
        // As `hull`: the asked level's MIP, else the one the drawable renders at.
        let mip = match level {
            Some(level) => d.skin.mip_ref(level),
            None => {
                self.update_cpu(i);
                self.mip_of(i)
            }
        };
        let points = mip.hull(size);
        if points.is_empty() {
            return None;
        }
        let xf = self.xf(i);
        Rect::from_points(xf.hull_points(points, size))
    }

    pub(super) fn transformed_hull(&mut self, i: usize, level: Option<i32>) -> Vec<[f64; 2]> {
        let points = self.hull(i, level);
        if points.is_empty() {
            return Vec::new();
        }
        let xf = self.xf(i);
        xf.transform_hull(&points, self.d(i).skin.size())
    }
}
