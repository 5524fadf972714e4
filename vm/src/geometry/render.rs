//! The CPU renderer: scratch-render's collision, bounds, fencing, picking and
//! colour queries over a [`Scene`] of drawables.
//!
//! Every query starts from the renderer state in [`Scene::floors`]: SVG silhouettes are the
//! largest MIP level created so far for their skin or requested by the query's own calls
//! (`SVGSkin.createMIP` only ever upgrades a silhouette). With no floors (what the render
//! oracle's `ORACLE_RESET=question` answers, and the `default` profile) that is a fresh
//! renderer; the `whisker` profile keeps the MIPs its frames and queries created
//! ([`super::cpu`]), as Whisker's live renderer does. Convex hulls are recomputed, so
//! `getFastBounds` is the rough AABB.

use std::borrow::Cow;
use std::sync::Arc;

use super::Rect;
use super::distance::MatchArea;
use super::drawable::{Placement, Xform};
use super::effects::{Effects, bit};
use super::hull;
use super::silhouette::{Silhouette, color_key, colors_match};
use super::skin::{Mip, Skin};
use crate::util::math::{ceil_f64, floor_f64, u8_clamp};

/// Stage width in Scratch units.
pub const STAGE_WIDTH: f64 = 480.0;
/// Stage height in Scratch units.
pub const STAGE_HEIGHT: f64 = 360.0;
/// `FENCE_WIDTH`: how much of a sprite must stay on the stage.
pub const FENCE_WIDTH: f64 = 15.0;
/// Above this many pixels × drawables, `isTouchingColor` finishes on the GPU.
pub const CPU_TOUCHING_COLOR_PIXELS: f64 = 4e4;
/// The renderer's clear colour (what shows through transparent backdrops).
pub const BACKGROUND: [u8; 3] = [255, 255, 255];

/// One drawable of a scene.
#[derive(Debug, Clone)]
pub struct Drawable {
    /// Its current skin (costume or pen layer).
    pub skin: Arc<Skin>,
    /// Position, rendered direction and scale.
    pub placement: Placement,
    /// Visibility.
    pub visible: bool,
    /// Graphic effects.
    pub effects: Effects,
}

/// Per SVG skin, the largest MIP level scratch-render has created for it so far
/// (`SVGSkin._largestMIPScale`): its silhouette is that MIP until a larger one is created.
/// Keyed by the skin's address, which its costume set keeps alive; nothing iterates it in an
/// order that could reach a result.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SilhouetteFloors(Vec<(usize, i32)>);

impl SilhouetteFloors {
    /// The level of `skin`'s silhouette, if a MIP was created for it.
    pub fn level(&self, skin: &Arc<Skin>) -> Option<i32> {
        let key = skin_key(skin);
        self.0.iter().find(|(k, _)| *k == key).map(|&(_, l)| l)
    }

    /// A MIP of `skin` at `level` was created (bitmaps have one silhouette: ignored).
    pub fn raise(&mut self, skin: &Arc<Skin>, level: i32) {
        if skin.is_svg() {
            raise(&mut self.0, skin_key(skin), level);
        }
    }

    /// Every (skin key, level).
    pub(crate) fn entries(&self) -> &[(usize, i32)] {
        &self.0
    }

    /// Raises the floors to `levels` ((skin key, level) of SVG skins).
    pub(crate) fn raise_all(&mut self, levels: &[(usize, i32)]) {
        for &(k, l) in levels {
            raise(&mut self.0, k, l);
        }
    }
}

/// `levels[key] := max(levels[key], level)`.
fn raise(levels: &mut Vec<(usize, i32)>, key: usize, level: i32) {
    match levels.iter_mut().find(|(k, _)| *k == key) {
        Some((_, l)) => *l = (*l).max(level),
        None => levels.push((key, level)),
    }
}

/// Moves `v[a]` to place `b`, the items in between shifting one place towards `a` (both in
/// range: the callers check).
pub(crate) fn move_item<T>(v: &mut [T], a: usize, b: usize) {
    match a < b {
        true => v[a..=b].rotate_left(1),
        false => v[b..=a].rotate_right(1),
    }
}

/// A skin's identity in level lists: its address.
pub(crate) fn skin_key(skin: &Arc<Skin>) -> usize {
    Arc::as_ptr(skin) as usize
}

/// Drawables back to front: the stage first, then the pen layer (if any), then sprites in layer order.
#[derive(Debug, Clone, Default)]
pub struct Scene {
    /// The drawables.
    pub drawables: Vec<Drawable>,
    /// MIPs created before the queries now asked (none: a fresh renderer).
    pub floors: SilhouetteFloors,
    /// Transforms computed ahead of queries ([`Scene::new`], [`Scene::refresh_transforms`]), each
    /// with the exact inputs (bit patterns) it came from: a query uses one only while its
    /// drawable still has those inputs, so editing `drawables` can never make an answer stale.
    xforms: Vec<Option<CachedXform>>,
    /// Scratch list of [`Scene::rearrange`].
    spare_xforms: Vec<Option<CachedXform>>,
}

/// A precomputed transform and the bits of the inputs it is a function of.
#[derive(Debug, Clone, Copy)]
struct CachedXform {
    key: [u64; 9],
    xf: Xform,
}

/// The last transform [`Scene::loose_xform`] computed.
#[derive(Debug, Clone, Copy, Default)]
pub struct LooseXform(Option<CachedXform>);

/// A drawable standing in for a query on a scene otherwise out of date, with the transform a
/// refresh would give it ([`Scene::stand_in`], [`Scene::with_stand_in`]).
#[derive(Clone)]
pub struct StandIn {
    d: Drawable,
    xf: CachedXform,
}

/// Everything `Xform::new` reads, as exact bit patterns (so -0.0 ≠ 0.0 and NaN = NaN).
fn xform_key(d: &Drawable) -> [u64; 9] {
    key_of(&d.placement, &d.skin)
}

/// [`xform_key`] of a drawable of `skin` at placement `p`.
fn key_of(p: &Placement, skin: &Skin) -> [u64; 9] {
    let [w, h] = skin.size();
    let [cx, cy] = skin.rotation_center();
    [p.x, p.y, p.direction, p.scale[0], p.scale[1], w, h, cx, cy].map(f64::to_bits)
}

/// Whether two transform keys (of equal length) hold the same bit patterns, compared without
/// a `memcmp` call: this runs once per drawable and query, and per stand-in.
fn same_bits(a: &[u64], b: &[u64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The transform of a drawable of `skin` at `p` (whose [`xform_key`] is `key`), from the one
/// kept for its position.
fn transform_from(old: Option<&CachedXform>, key: &[u64; 9], p: &Placement, skin: &Skin) -> Xform {
    match old {
        // Only the position changed (the first two inputs): no trigonometry.
        Some(old) if same_bits(&old.key[2..], &key[2..]) => old.xf.moved_to(p),
        _ => Xform::new(p, skin.size(), skin.rotation_center()),
    }
}

impl Scene {
    /// A scene of `drawables` with every transform computed once up front.
    pub fn new(drawables: Vec<Drawable>) -> Self {
        let mut s =
            Scene { drawables, floors: SilhouetteFloors::default(), xforms: Vec::new(), spare_xforms: Vec::new() };
        s.refresh_transforms();
        s
    }

    /// Recomputes the precomputed transforms of drawables whose inputs changed since the last
    /// call (or since [`Scene::new`]); unchanged ones keep theirs, so a scene kept across queries
    /// pays the trigonometry only for what moved.
    pub fn refresh_transforms(&mut self) {
        self.xforms.resize(self.drawables.len(), None);
        for i in 0..self.drawables.len() {
            self.refresh_transform(i);
        }
    }

    /// [`Scene::refresh_transforms`] for the drawables at `positions` only (the others are
    /// known unchanged); the list of transforms follows the list of drawables.
    pub fn refresh_transforms_of(&mut self, positions: &[usize]) {
        self.xforms.resize(self.drawables.len(), None);
        for &i in positions {
            self.refresh_transform(i);
        }
    }

    /// Replaces the drawables by `drawables`, where `from[i]` is the old position of new
    /// drawable `i` when it is the same drawable: its precomputed transform moves with it.
    /// A new drawable starts from the transform at its position (kept if its inputs match,
    /// cheaply moved if only its position differs: see [`Scene::refresh_transforms_of`]).
    /// Returns the old drawables' list, emptied (its space can be reused).
    pub fn rearrange(&mut self, drawables: Vec<Drawable>, from: &[Option<usize>]) -> Vec<Drawable> {
        let mut old = std::mem::replace(&mut self.xforms, std::mem::take(&mut self.spare_xforms));
        self.xforms.clear();
        self.xforms.extend(from.iter().enumerate().map(|(i, f)| old.get(f.unwrap_or(i)).copied().flatten()));
        self.xforms.resize(drawables.len(), None);
        // The old transforms' list becomes the next rearrangement's (no allocation per call).
        old.clear();
        self.spare_xforms = old;
        let mut gone = std::mem::replace(&mut self.drawables, drawables);
        gone.clear();
        gone
    }

    /// `d` made ready to stand in for the drawable at `i` (or for a new one past the end): its
    /// transform is moved from `like`'s (an earlier stand-in) or from the one kept at `i` when
    /// only the position differs, else computed.
    pub fn stand_in(&self, i: usize, d: Drawable, like: Option<&StandIn>) -> StandIn {
        let key = xform_key(&d);
        let xf = self.xform_like(i, &key, &d.placement, &d.skin, like.map(|l| &l.xf));
        StandIn { d, xf: CachedXform { key, xf } }
    }

    /// The transform of a drawable of `skin` at `p` that the scene does not show (a new
    /// clone being fenced), from `memo`'s (the last one computed so) when only the position
    /// differs; `memo` then keeps it.
    pub fn loose_xform(&self, p: &Placement, skin: &Skin, memo: &mut LooseXform) -> Xform {
        let key = key_of(p, skin);
        let xf = self.xform_like(usize::MAX, &key, p, skin, memo.0.as_ref());
        memo.0 = Some(CachedXform { key, xf });
        xf
    }

    /// The transform for inputs `key` (of `p` and `skin`): `like`'s or the one kept at `i`
    /// when equal, moved when only the position differs, else computed.
    fn xform_like(&self, i: usize, key: &[u64; 9], p: &Placement, skin: &Skin, like: Option<&CachedXform>) -> Xform {
        match like {
            Some(c) if same_bits(&c.key, key) => c.xf,
            Some(c) if same_bits(&c.key[2..], &key[2..]) => c.xf.moved_to(p),
            _ => transform_from(self.xforms.get(i).and_then(Option::as_ref), key, p, skin),
        }
    }

    /// `f(self, i)` with `s` standing in for the drawable at `i` (after the last one when `i`
    /// is past the end); then everything is put back. For queries that read only the
    /// stand-in itself.
    pub fn with_stand_in<R>(&mut self, i: usize, s: &mut StandIn, f: impl FnOnce(&Scene, usize) -> R) -> R {
        let n = self.drawables.len();
        self.xforms.resize(n, None);
        let c = Some(s.xf);
        if i >= n {
            self.drawables.push(s.d.clone());
            self.xforms.push(c);
            let answer = f(self, n);
            self.drawables.truncate(n);
            self.xforms.truncate(n);
            answer
        } else {
            std::mem::swap(&mut self.drawables[i], &mut s.d);
            let kept = std::mem::replace(&mut self.xforms[i], c);
            let answer = f(self, i);
            std::mem::swap(&mut self.drawables[i], &mut s.d);
            self.xforms[i] = kept;
            answer
        }
    }

    /// Moves the drawable at `a` to `b` with its precomputed transform; those in between
    /// shift by one place towards `a` (a layer change). Nothing when either is out of range.
    pub fn move_drawable(&mut self, a: usize, b: usize) {
        if a.max(b) >= self.drawables.len() {
            return;
        }
        self.xforms.resize(self.drawables.len(), None);
        move_item(&mut self.drawables, a, b);
        move_item(&mut self.xforms, a, b);
    }

    /// Takes drawable `i` out, the last one taking its place with its precomputed transform.
    pub fn swap_remove(&mut self, i: usize) {
        if i >= self.drawables.len() {
            return;
        }
        self.xforms.resize(self.drawables.len(), None);
        self.drawables.swap_remove(i);
        self.xforms.swap_remove(i);
    }

    /// Recomputes drawable `i`'s precomputed transform if its inputs changed.
    fn refresh_transform(&mut self, i: usize) {
        if let (Some(d), Some(c)) = (self.drawables.get(i), self.xforms.get_mut(i)) {
            let key = xform_key(d);
            if c.as_ref().is_none_or(|old| old.key != key) {
                *c = Some(CachedXform { key, xf: transform_from(c.as_ref(), &key, &d.placement, &d.skin) });
            }
        }
    }

    /// The transform a drawable of `skin` at `p` would have at position `i`, from the
    /// transform kept there (what [`Scene::refresh_transform`] would compute; the scene is not
    /// changed).
    pub fn xform_at(&self, i: usize, p: &Placement, skin: &Skin) -> Xform {
        let key = key_of(p, skin);
        match self.xforms.get(i).and_then(Option::as_ref) {
            Some(old) if old.key == key => old.xf,
            old => transform_from(old, &key, p, skin),
        }
    }

    /// Drawable `i`'s transform: the precomputed one while its inputs are unchanged, else
    /// computed now. `None` for a position without drawable.
    pub fn xform(&self, i: usize) -> Option<Xform> {
        let d = self.drawables.get(i)?;
        Some(self.cached_xform(i).unwrap_or_else(|| Xform::new(&d.placement, d.skin.size(), d.skin.rotation_center())))
    }

    /// The precomputed transform of drawable `i`, if it is still valid.
    fn cached_xform(&self, i: usize) -> Option<Xform> {
        self.cached_xform_ref(i).copied()
    }

    /// [`Scene::cached_xform`] without the copy: callers that read a few fields of the
    /// 144-byte transform do not pay for copying it (and reading the copy back).
    fn cached_xform_ref(&self, i: usize) -> Option<&Xform> {
        let c = self.xforms.get(i)?.as_ref()?;
        let key = xform_key(&self.drawables[i]);
        same_bits(&c.key, &key).then_some(&c.xf)
    }
}

/// `getFencedPositionOfDrawable` for a drawable with transform `xf` ([`Scene::fenced`]).
pub fn fence(xf: &Xform, x: f64, y: f64) -> [f64; 2] {
    let pos = xf.position;
    let (dx, dy) = (x - pos[0], y - pos[1]);
    let aabb = xf.aabb();
    let inset = floor_f64(aabb.width().min(aabb.height()) / 2.0);
    let (mut fx, mut fy) = (x, y);
    let sx = STAGE_WIDTH / 2.0 - FENCE_WIDTH.min(inset);
    if aabb.right + dx < -sx {
        fx = ceil_f64(pos[0] - (sx + aabb.right));
    } else if aabb.left + dx > sx {
        fx = floor_f64(pos[0] + (sx - aabb.left));
    }
    let sy = STAGE_HEIGHT / 2.0 - FENCE_WIDTH.min(inset);
    if aabb.top + dy < -sy {
        fy = ceil_f64(pos[1] - (sy + aabb.top));
    } else if aabb.bottom + dy > sy {
        fy = floor_f64(pos[1] + (sy - aabb.bottom));
    }
    [fx, fy]
}

/// Per-query renderer state: transforms not precomputed and the MIP level requested per skin.
struct Ctx<'a> {
    s: &'a Scene,
    /// Drawables whose precomputed transform this query checked and uses (one bit each: a
    /// query allocates n/64 words rather than a transform per drawable).
    checked: Vec<u64>,
    /// Transforms this query computed itself (drawables edited since the precomputation).
    own_xf: Vec<(usize, Xform)>,
    /// Per SVG skin (by [`skin_key`]), the level of its silhouette: the floor, raised by
    /// the query's requests (the scene's floors, borrowed until a request raises one).
    levels: Cow<'a, [(usize, i32)]>,
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
    fn new(s: &'a Scene) -> Self {
        Ctx { s, checked: Vec::new(), own_xf: Vec::new(), levels: Cow::Borrowed(&s.floors.0), mips: MipMemo::default() }
    }

    fn d(&self, i: usize) -> &'a Drawable {
        &self.s.drawables[i]
    }

    fn xf(&mut self, i: usize) -> Xform {
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
    fn update_cpu(&mut self, i: usize) {
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
    fn mip(&mut self, i: usize) -> &Mip {
        self.mip_of(i)
    }

    /// [`Ctx::mip`] borrowed for the scene's lifetime (the levels must be settled: a later
    /// request would not reach this borrow).
    fn mip_of(&mut self, i: usize) -> &'a Mip {
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
    fn is_touching(&mut self, i: usize, x: f64, y: f64) -> bool {
        let [u, v] = self.local(i, x, y);
        let nearest = self.use_nearest(i);
        let mip = self.mip(i);
        if nearest { mip.silhouette.is_touching_nearest(u, v) } else { mip.silhouette.is_touching_linear(u, v) }
    }

    /// Whether compositing `ids` over white can give a colour matching `color` at some point;
    /// false only when provably not (every silhouette fully opaque or transparent, no colour
    /// effects, the colour in no [`Palette`](super::silhouette::Palette) and not white), so a
    /// pixel search for it would find nothing. Call it after every MIP level is requested.
    fn may_composite(&mut self, ids: &[usize], color: [u8; 3]) -> bool {
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
    fn sample_color4b(&mut self, i: usize, x: f64, y: f64, effect_mask: u32) -> [u8; 4] {
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
    fn sample_box(&mut self, i: usize) -> Rect {
        sample_box_of(&self.xf(i))
    }

    /// `RenderWebGL.sampleColor3b`: the colour the renderer composites at a point from `drawables`
    /// (topmost first); `boxes[k]` is [`Ctx::sample_box`] of `drawables[k]`, so drawables far from
    /// the point cost a comparison instead of a transform.
    fn sample_color3b(&mut self, x: f64, y: f64, drawables: &[usize], boxes: &[Rect]) -> [u8; 3] {
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

    fn aabb(&mut self, i: usize) -> Rect {
        self.xf(i).aabb()
    }

    /// `_touchingBounds`: the drawable's rough box clamped to the stage, snapped out to integers.
    fn touching_bounds(&mut self, i: usize) -> Option<Rect> {
        self.get_texture_100(i);
        touching_bounds_of(&self.xf(i))
    }

    /// `_candidatesTouching`: visible candidates (topmost first) whose snapped box meets `me`'s.
    fn candidates_touching(&mut self, me: usize, candidates: &[usize]) -> Vec<(usize, Rect)> {
        let Some(bounds) = self.touching_bounds(me) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for &id in candidates.iter().rev() {
            if id == me || !self.d(id).visible {
                continue;
            }
            self.update_cpu(id);
            let mut cb = self.aabb(id);
            cb.snap_to_int();
            if bounds.intersects(&cb) {
                out.push((id, bounds.intersect(&cb)));
            }
        }
        out
    }

    /// Hull points of drawable `i` on its skin's pixel grid (empty when invisible or sizeless).
    fn hull(&mut self, i: usize) -> Vec<[f64; 2]> {
        let d = self.d(i);
        let size = d.skin.size();
        if !d.visible || size[0] == 0.0 || size[1] == 0.0 {
            return Vec::new();
        }
        self.update_cpu(i);
        let mip = self.mip(i);
        if d.effects.changes_shape() {
            hull::hull_points(&mip.silhouette, size, Some((&d.effects, size)))
        } else {
            mip.hull(size).to_vec()
        }
    }

    fn transformed_hull(&mut self, i: usize) -> Vec<[f64; 2]> {
        let points = self.hull(i);
        if points.is_empty() {
            return Vec::new();
        }
        let xf = self.xf(i);
        xf.transform_hull(&points, self.d(i).skin.size())
    }
}

/// `sampleColor3b`'s blend, topmost texel first: each premultiplied colour added under the
/// alpha the texels above left, white behind them all.
pub(crate) struct Blend {
    dst: [u8; 3],
    alpha: f64,
}

impl Blend {
    pub(crate) fn new() -> Self {
        Blend { dst: [0; 3], alpha: 1.0 }
    }

    /// Whether nothing further below can show.
    pub(crate) fn done(&self) -> bool {
        self.alpha == 0.0
    }

    /// The composite when `c` is opaque and nothing is above it: exactly what adding it and
    /// finishing would give, without the arithmetic.
    #[inline]
    pub(crate) fn over_nothing(&self, c: [u8; 4]) -> Option<[u8; 3]> {
        (c[3] == 255 && self.alpha == 1.0).then_some([c[0], c[1], c[2]])
    }

    /// Adds texel `c` (premultiplied RGBA) below those added so far.
    #[inline]
    pub(crate) fn add(&mut self, c: [u8; 4]) {
        for (d, &v) in self.dst.iter_mut().zip(&c) {
            *d = u8_clamp(*d as f64 + v as f64 * self.alpha);
        }
        self.alpha *= 1.0 - c[3] as f64 / 255.0;
    }

    /// The composite: what is left of the alpha shows white.
    pub(crate) fn finish(self) -> [u8; 3] {
        self.dst.map(|v| u8_clamp(v as f64 + self.alpha * 255.0))
    }
}

/// Samples composited colours of a fixed set of drawables (transforms computed once).
pub struct ColorSampler<'a> {
    ctx: Ctx<'a>,
    ids: Vec<usize>,
    /// Per drawable of `ids`, what sampling it reads, fetched once: colour searches sample
    /// hundreds of points per query, and fetching (and copying) a transform per point and
    /// drawable was most of a sample's cost.
    layers: Vec<SampleLayer<'a>>,
}

/// One drawable as [`ColorSampler::sample`] reads it.
struct SampleLayer<'a> {
    xf: Xform,
    sil: &'a Silhouette,
    effects: &'a Effects,
    size: [f64; 2],
    sbox: Rect,
}

impl<'a> ColorSampler<'a> {
    /// A sampler of `ids` (topmost first) whose transforms and levels `ctx` has settled.
    fn new(mut ctx: Ctx<'a>, ids: Vec<usize>) -> Self {
        let layers = ids
            .iter()
            .map(|&i| {
                let d = ctx.d(i);
                let sil = &ctx.mip_of(i).silhouette;
                let sbox = ctx.sample_box(i);
                SampleLayer { xf: ctx.xf(i), sil, effects: &d.effects, size: d.skin.size(), sbox }
            })
            .collect();
        ColorSampler { ctx, ids, layers }
    }

    /// `sampleColor3b` at a stage point: [`Ctx::sample_color3b`] over the prepared layers.
    pub fn sample(&mut self, x: f64, y: f64) -> [u8; 3] {
        let mut blend = Blend::new();
        for l in &self.layers {
            if blend.done() {
                break;
            }
            let b = &l.sbox;
            if x < b.left || x > b.right || y < b.bottom || y > b.top {
                continue;
            }
            let e = l.effects;
            let [u, v] = if e.enabled != 0 { l.xf.local_with_effects(x, y, e, l.size) } else { l.xf.local(x, y) };
            if u < 0.0 || v < 0.0 || u > 1.0 || v > 1.0 {
                continue;
            }
            let c = l.sil.color_at_nearest(u, v);
            let c = if e.enabled == 0 { c } else { e.transform_color(c, !0) };
            // A transparent texel adds nothing (the blend would give the same).
            if c == [0; 4] {
                continue;
            }
            if let Some(done) = blend.over_nothing(c) {
                return done;
            }
            blend.add(c);
        }
        blend.finish()
    }

    /// `sampleColor3b` as [`Ctx::sample_color3b`] computes it, fetching per point and drawable:
    /// the reference for [`ColorSampler::sample`].
    #[cfg(test)]
    pub(crate) fn sample_reference(&mut self, x: f64, y: f64) -> [u8; 3] {
        let boxes: Vec<Rect> = self.layers.iter().map(|l| l.sbox).collect();
        self.ctx.sample_color3b(x, y, &self.ids, &boxes)
    }

    /// The same sampler without the per-drawable boxes (every drawable transformed at every point).
    #[cfg(test)]
    pub(crate) fn without_boxes(mut self) -> Self {
        self.layers.iter_mut().for_each(|l| l.sbox = Rect::UNBOUNDED);
        self
    }

    /// False when no point can sample a colour matching `color` (then a search for it is futile).
    pub fn may_show(&mut self, color: [u8; 3]) -> bool {
        self.ctx.may_composite(&self.ids, color)
    }

    /// Stage boxes outside which no point samples a colour matching `color`; `None` when any
    /// point may (the colour matches the white background). One box per drawable that can
    /// show the colour somewhere: for a drawable without effects whose texels are known
    /// ([`Mip::texel_boxes`]), around its texels that are opaque in the colour or blend; for
    /// the others, their whole [`Ctx::sample_box`].
    ///
    /// Exact: at a point outside every box, each drawable is transparent (adds nothing) or
    /// opaque in another colour (hides everything below), so the composite is the colour of
    /// the topmost opaque texel there, or white: no match.
    pub fn match_boxes(&mut self, color: [u8; 3]) -> Option<Vec<Rect>> {
        Some(self.areas(color, false)?.into_iter().map(|a| a.rect).collect())
    }

    /// [`ColorSampler::match_boxes`], each box with the cells inside it where its drawable can
    /// show `color` when they are known (large drawables without effects that stay put, such
    /// as backdrops: see [`Mip::key_cells`]), or else, for drawables without effects, the
    /// transform and texture to look up the texel a point samples. Exact as the boxes are:
    /// outside every box, or inside boxes only where their drawables cannot show the colour
    /// (cell or texel), no point samples a colour matching `color`.
    pub fn match_areas(&mut self, color: [u8; 3]) -> Option<Vec<MatchArea<'a>>> {
        self.areas(color, true)
    }

    /// The match boxes, with cells or texel probes when `detail` is set.
    fn areas(&mut self, color: [u8; 3], detail: bool) -> Option<Vec<MatchArea<'a>>> {
        if colors_match(color, BACKGROUND) {
            return None;
        }
        let key = color_key(color);
        let mut out = Vec::new();
        for (&i, l) in self.ids.iter().zip(&self.layers) {
            let mip = self.ctx.mip(i);
            if l.effects.invisible() {
                continue;
            }
            if let Some(rect) = match_box(l.effects.enabled, &l.xf, mip, l.sbox, key) {
                let wanted = detail && l.effects.enabled == 0 && rect.width() * rect.height() >= KEY_CELLS_MIN_AREA;
                let cells = if wanted { mip.key_cells(&l.xf, key) } else { None };
                // Without cells, a drawable without effects is looked up at the one texel a
                // point samples (a moving fruit: most points of its box are transparent).
                let probe = (detail && cells.is_none() && l.effects.enabled == 0).then_some((l.xf, l.sil));
                out.push(MatchArea { rect, cells, probe });
            }
        }
        Some(out)
    }
}

/// Drawables whose match box is smaller than this (in square stage pixels) get no
/// [`KeyCells`]: a search samples few of their points anyway.
const KEY_CELLS_MIN_AREA: f64 = 64.0 * 64.0;

/// [`match_box`], in several boxes where the rendition knows where its ink is
/// ([`Mip::ink_boxes`]: the pen layer, whose one box would be the stage): appends to `out` the
/// stage boxes outside which the drawable cannot make a composite show colour `key`.
pub(crate) fn match_rects(effects: &Effects, xf: &Xform, mip: &Mip, whole: Rect, key: usize, out: &mut Vec<Rect>) {
    // Fully ghosted: transparent everywhere.
    if effects.invisible() {
        return;
    }
    if let Some(ink) = mip.ink_boxes()
        && effects.enabled == 0
        && xf.m.iter().chain(&xf.inv).all(|v| v.is_finite())
    {
        let s = &mip.silhouette;
        for &t in ink {
            let r = texels_on_stage(xf, [s.width(), s.height()], t).intersect(&whole);
            if r.left <= r.right && r.bottom <= r.top {
                out.push(r);
            }
        }
        return;
    }
    out.extend(match_box(effects.enabled, xf, mip, whole, key));
}

/// One drawable's share of [`ColorSampler::match_boxes`]: the stage box outside which it
/// cannot make a composite show colour `key` (`None`: nowhere). `effects` are its enabled
/// effect bits, `mip` the rendition it is sampled at, `whole` its [`sample_box_of`].
pub(crate) fn match_box(effects: u32, xf: &Xform, mip: &Mip, whole: Rect, key: usize) -> Option<Rect> {
    if effects != 0 || !xf.m.iter().chain(&xf.inv).all(|v| v.is_finite()) {
        return Some(whole);
    }
    let Some(t) = mip.texel_box_for_key(key) else {
        return Some(whole);
    };
    let t = t?;
    let s = &mip.silhouette;
    // Outside `whole` the drawable is skipped anyway.
    Some(texels_on_stage(xf, [s.width(), s.height()], t).intersect(&whole))
}

/// A stage box holding every point where a drawable with (finite) transform `xf` samples a texel
/// of `t` in a silhouette of `size` texels (`Silhouette::color_at_nearest` at the texture
/// coordinates `Xform::local` gives), or `Rect::UNBOUNDED` when no useful box can be given.
///
/// Texel column `x` is sampled where `⌊u·(w − 1)⌋ = x`, so the columns of `t` cover
/// `u ∈ [x0/(w − 1), (x1 + 1)/(w − 1)] ∩ [0, 1]` (all of `[0, 1]` for `w = 1`); likewise rows
/// and `v`. That texture rectangle's corners are mapped to the stage by the model matrix
/// (`Xform::local` inverts it: `p = 0.5 − u`, `q = v − 0.5`), and the box of the corners is grown
/// by a margin that bounds how far the single-precision inverse (its rounded entries, the
/// rounded result, the snap of `|u| < 1e-6` to 0, the product `u·(w − 1)`) can place a stage
/// point from where the exact inverse would, for points on the stage (|x| + |y| ≤ 420).
pub(crate) fn texels_on_stage(xf: &Xform, size: [u32; 2], t: super::silhouette::TexelBox) -> Rect {
    let range = |lo: u32, hi: u32, n: u32| -> (f64, f64) {
        if n <= 1 {
            return (0.0, 1.0);
        }
        let d = f64::from(n - 1);
        ((f64::from(lo) / d).clamp(0.0, 1.0), ((f64::from(hi) + 1.0) / d).clamp(0.0, 1.0))
    };
    let (u0, u1) = range(t.x0, t.x1, size[0]);
    let (v0, v1) = range(t.y0, t.y1, size[1]);
    let m = &xf.m;
    let i = &xf.inv;
    let mut b = Rect { left: f64::INFINITY, right: f64::NEG_INFINITY, bottom: f64::INFINITY, top: f64::NEG_INFINITY };
    for (u, v) in [(u0, v0), (u0, v1), (u1, v0), (u1, v1)] {
        let (p, q) = (0.5 - u, v - 0.5);
        let (x, y) = (p * m[0] + q * m[2] + m[4], p * m[1] + q * m[3] + m[5]);
        b.left = b.left.min(x);
        b.right = b.right.max(x);
        b.bottom = b.bottom.min(y);
        b.top = b.top.max(y);
    }
    // Texture units per stage unit, the translation's share, and stage units per texture unit.
    let inv_lin = i[0].abs() + i[1].abs() + i[2].abs() + i[3].abs();
    let inv_t = i[4].abs() + i[5].abs() + (m[4].abs() + m[5].abs()) * inv_lin;
    let fwd_lin = m[0].abs() + m[1].abs() + m[2].abs() + m[3].abs();
    // Single-precision rounding is below 6e-8 relative: 1e-6 leaves a wide safety factor.
    let texture_error = 1e-5 + 1e-6 * (inv_lin * 420.0 + inv_t + 1.0);
    let margin = 1.0 + fwd_lin * texture_error;
    let grown = Rect { left: b.left - margin, right: b.right + margin, bottom: b.bottom - margin, top: b.top + margin };
    if [grown.left, grown.right, grown.bottom, grown.top].iter().all(|v| v.is_finite()) {
        grown
    } else {
        Rect::UNBOUNDED
    }
}

/// A drawable's own colours (see [`Scene::own_colors`]).
pub struct OwnColors<'a> {
    /// The drawable's transform, silhouette, effects and skin size, fetched once: a stamp
    /// reads them at every pixel, and the scene does not change during it.
    xf: Xform,
    sil: &'a Silhouette,
    effects: &'a Effects,
    size: [f64; 2],
    /// Texel colour → its colour under the drawable's effects (see [`ColorMemo`]).
    memo: ColorMemo,
}

/// Texel colour → its colour under one set of effects, direct-mapped: a stamp reads every
/// pixel of one costume under one effect, and costumes have few colours, so the colour
/// transform (RGB → HSV → RGB per pixel) is done once per colour instead. Kept between stamps
/// (see [`Scene::own_colors_with`]): a sprite stamping its costume again and again under the
/// same effect (a flower's petals) transforms each colour once. Each layer of a colour
/// query's composite keeps one too: a recoloured backdrop put every composited pixel through
/// the transform, a sixth of a colour-sensing game's CPU (`402104589`).
#[derive(Debug, Clone, Default)]
pub struct ColorMemo {
    /// The effects the entries were computed under.
    effects: Option<Effects>,
    slots: Vec<Option<([u8; 4], [u8; 4])>>,
}

/// Entries of a [`ColorMemo`].
const MEMO: usize = 256;

impl ColorMemo {
    /// An empty memo for colours under `effects`.
    pub(crate) fn for_effects(effects: &Effects) -> ColorMemo {
        let mut m = ColorMemo::default();
        m.keep_for(effects);
        m
    }

    /// Forgets every entry unless they were computed under `effects`.
    fn keep_for(&mut self, effects: &Effects) {
        if self.effects != Some(*effects) || self.slots.len() != MEMO {
            self.slots.clear();
            self.slots.resize(MEMO, None);
            self.effects = Some(*effects);
        }
    }

    /// `effects.transform_color(c, !0)`, remembered; `effects` must be those the memo is kept
    /// for ([`ColorMemo::for_effects`], [`Scene::own_colors_with`]).
    #[inline]
    pub(crate) fn transform(&mut self, effects: &Effects, c: [u8; 4]) -> [u8; 4] {
        if c[3] == 0 {
            return c;
        }
        let slot = (usize::from(c[0]) * 7 + usize::from(c[1]) * 13 + usize::from(c[2]) * 31 + usize::from(c[3])) % MEMO;
        match self.slots.get(slot) {
            Some(Some((k, out))) if *k == c => *out,
            _ => {
                let out = effects.transform_color(c, !0);
                if let Some(s) = self.slots.get_mut(slot) {
                    *s = Some((c, out));
                }
                out
            }
        }
    }
}

impl OwnColors<'_> {
    /// See [`Xform::inside_span`]: outside it, [`OwnColors::at`] is transparent.
    pub fn inside_span(&self, y: f64) -> Option<(f64, f64)> {
        self.xf.inside_span(y)
    }

    /// `sampleColor4b` of the drawable at a stage point, premultiplied.
    pub fn at(&mut self, x: f64, y: f64) -> [u8; 4] {
        let e = self.effects;
        let [u, v] = if e.enabled != 0 { self.xf.local_with_effects(x, y, e, self.size) } else { self.xf.local(x, y) };
        if u < 0.0 || v < 0.0 || u > 1.0 || v > 1.0 {
            return [0; 4];
        }
        let c = self.sil.color_at_nearest(u, v);
        if e.enabled == 0 {
            return c;
        }
        self.memo.transform(e, c)
    }

    /// The memo, to be given to the next [`Scene::own_colors_with`].
    pub fn into_memo(self) -> ColorMemo {
        self.memo
    }
}

/// How a skin is sampled for collisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// Bitmaps: always nearest neighbour.
    Nearest,
    /// SVGs: nearest only at ~100 % and right angles without shape effects, else bilinear footprint.
    Svg,
    /// The pen layer: nearest when not scaled down.
    Pen,
}

/// Whether collisions sample drawable `d` nearest-neighbour (`isTouchingNearest`) rather than
/// with the bilinear footprint (`isTouchingLinear`), as `Drawable.isTouching` decides.
pub(crate) fn uses_nearest(d: &Drawable) -> bool {
    let scale = d.placement.render_scale();
    match d.skin.sampling() {
        Sampling::Nearest => true,
        Sampling::Pen => scale[0].max(scale[1]) >= 100.0,
        Sampling::Svg => {
            if d.effects.enabled & bit::SHAPE != 0 || d.placement.direction % 90.0 != 0.0 {
                return false;
            }
            let near = |s: f64| s.abs() > 99.0 && s.abs() < 101.0;
            near(scale[0]) && near(scale[1])
        }
    }
}

/// `_touchingBounds` of a drawable with transform `xf`: its rough box clamped to the stage,
/// snapped out to integers; `None` when that leaves nothing.
pub(crate) fn touching_bounds_of(xf: &Xform) -> Option<Rect> {
    let mut b = xf.aabb();
    b.clamp(-STAGE_WIDTH / 2.0, STAGE_WIDTH / 2.0, -STAGE_HEIGHT / 2.0, STAGE_HEIGHT / 2.0);
    b.snap_to_int();
    if b.width() == 0.0 || b.height() == 0.0 { None } else { Some(b) }
}

/// A box outside which a drawable with transform `xf` samples transparent: its AABB grown by a
/// unit, far more than the single-precision inverse transform can be off by. Unbounded when the
/// transform is not finite (NaN texture coordinates sample a pixel anywhere).
pub(crate) fn sample_box_of(xf: &Xform) -> Rect {
    if xf.m.iter().chain(&xf.inv).all(|v| v.is_finite()) {
        let b = xf.aabb();
        Rect { left: b.left - 1.0, right: b.right + 1.0, bottom: b.bottom - 1.0, top: b.top + 1.0 }
    } else {
        Rect::UNBOUNDED
    }
}

/// `isTouchingEdge` of drawable bounds `b`: do they reach past a stage edge?
pub(crate) fn touches_edge(b: &Rect) -> bool {
    b.left < -STAGE_WIDTH / 2.0
        || b.right > STAGE_WIDTH / 2.0
        || b.top > STAGE_HEIGHT / 2.0
        || b.bottom < -STAGE_HEIGHT / 2.0
}

/// The client-space 1×1 touch box of `pick`/`drawableTouching` for a point in Scratch coordinates.
fn point_bounds(x: f64, y: f64) -> (f64, f64) {
    let client_x = x + STAGE_WIDTH / 2.0;
    let client_y = STAGE_HEIGHT / 2.0 - y;
    ((-STAGE_WIDTH / 2.0 + client_x).floor(), (STAGE_HEIGHT / 2.0 - client_y).ceil())
}

/// `colorMatches` of a drawable's own colour against a `color is touching` mask colour (6 bits
/// per channel), never for a transparent pixel.
pub(crate) fn mask_matches(a: [u8; 4], b: [u8; 3]) -> bool {
    a[3] > 0
        && (a[0] & 0b1111_1100) == (b[0] & 0b1111_1100)
        && (a[1] & 0b1111_1100) == (b[1] & 0b1111_1100)
        && (a[2] & 0b1111_1100) == (b[2] & 0b1111_1100)
}

impl Scene {
    /// `isTouchingDrawables(me, candidates)`: do the silhouettes share a stage pixel?
    /// Invisible drawables never touch.
    pub fn touching_drawables(&self, me: usize, candidates: &[usize]) -> bool {
        let mut ctx = Ctx::new(self);
        // `candidates_touching` skips invisible candidates itself.
        let cands = ctx.candidates_touching(me, candidates);
        if cands.is_empty() || !self.drawables[me].visible {
            return false;
        }
        let mut bounds = cands[0].1;
        for (_, r) in &cands[1..] {
            bounds = bounds.union(r);
        }
        ctx.update_cpu(me);
        let mut x = bounds.left;
        while x <= bounds.right {
            let mut y = bounds.bottom;
            while y <= bounds.top {
                if ctx.is_touching(me, x, y) && cands.iter().any(|&(c, _)| ctx.is_touching(c, x, y)) {
                    return true;
                }
                y += 1.0;
            }
            x += 1.0;
        }
        false
    }

    /// `drawableTouching`: is the drawable opaque at the stage pixel under the point? Ignores visibility.
    pub fn touching_point(&self, me: usize, x: f64, y: f64) -> bool {
        let (px, py) = point_bounds(x, y);
        if !px.is_finite() || !py.is_finite() {
            return false;
        }
        let mut ctx = Ctx::new(self);
        ctx.update_cpu(me);
        ctx.is_touching(me, px, py)
    }

    /// `getBounds`: the tight box of the convex hull, or the rough AABB when the hull is empty
    /// (invisible drawable, empty costume).
    pub fn bounds(&self, me: usize) -> Rect {
        let mut ctx = Ctx::new(self);
        let points = ctx.transformed_hull(me);
        Rect::from_points(points).unwrap_or_else(|| ctx.aabb(me))
    }

    /// `getBoundsForBubble`: the box of the hull points within 8 px of the top. The renderer
    /// throws for an empty hull; so does this (with its message).
    pub fn bounds_for_bubble(&self, me: usize) -> Result<Rect, &'static str> {
        let mut ctx = Ctx::new(self);
        let points = ctx.transformed_hull(me);
        if points.is_empty() {
            return Err("Needs updated convex hull points before bubble bounds calculation.");
        }
        let max_y = points.iter().map(|p| p[1]).fold(f64::NEG_INFINITY, f64::max);
        let top = points.into_iter().filter(|p| p[1] > max_y - 8.0);
        Rect::from_points(top).ok_or("Needs updated convex hull points before bubble bounds calculation.")
    }

    /// `isTouchingEdge`: do the bounds reach past a stage edge?
    pub fn touching_edge(&self, me: usize) -> bool {
        touches_edge(&self.bounds(me))
    }

    /// `getFencedPositionOfDrawable`: where `setXY(x, y)` really puts the drawable so that
    /// at least 15 px (or half its size) stays on the stage. Uses the rough AABB.
    pub fn fenced(&self, me: usize, x: f64, y: f64) -> [f64; 2] {
        // The kept transform is read in place: a copy read back right away stalls (issue 36).
        match self.cached_xform_ref(me) {
            Some(xf) => fence(xf, x, y),
            None => self.xform(me).map_or([x, y], |xf| fence(&xf, x, y)),
        }
    }

    /// `pick`: the topmost visible, not fully ghosted drawable opaque at the point, if any.
    pub fn pick(&self, x: f64, y: f64) -> Option<usize> {
        let (px, py) = point_bounds(x, y);
        if !px.is_finite() || !py.is_finite() {
            return None;
        }
        let point = Rect::new(px, px, py, py);
        let mut ctx = Ctx::new(self);
        let mut cands = Vec::new();
        for i in 0..self.drawables.len() {
            let d = &self.drawables[i];
            if d.visible && d.effects.ghost != 0.0 && ctx.aabb(i).intersects(&point) {
                ctx.update_cpu(i);
                cands.push(i);
            }
        }
        cands.into_iter().rev().find(|&i| ctx.is_touching(i, px, py))
    }

    /// `isTouchingColor(me, color, mask)`: is `color` drawn (by the other visible drawables,
    /// over the white background) at a pixel where `me` is opaque — or, with a mask, where
    /// `me` has the mask colour? Works for invisible drawables too.
    pub fn touching_color(&self, me: usize, color: [u8; 3], mask: Option<[u8; 3]>) -> bool {
        let mut ctx = Ctx::new(self);
        let visible: Vec<usize> = (0..self.drawables.len()).filter(|&i| self.drawables[i].visible).collect();
        let cands = ctx.candidates_touching(me, &visible);
        let bounds = if colors_match(color, BACKGROUND) {
            match ctx.touching_bounds(me) {
                Some(b) => b,
                None => return false,
            }
        } else if cands.is_empty() {
            return false;
        } else {
            let mut b = cands[0].1;
            for (_, r) in &cands[1..] {
                b = b.union(r);
            }
            b
        };
        let ids: Vec<usize> = cands.iter().map(|c| c.0).collect();
        ctx.update_cpu(me);
        if !ctx.may_composite(&ids, color) {
            return false;
        }
        let boxes: Vec<Rect> = ids.iter().map(|&i| ctx.sample_box(i)).collect();
        let mut y = bounds.bottom;
        while y <= bounds.top {
            let mut x = bounds.left;
            while x <= bounds.right {
                let hit = match mask {
                    Some(m) => mask_matches(ctx.sample_color4b(me, x, y, !bit::GHOST), m),
                    None => ctx.is_touching(me, x, y),
                };
                if hit && colors_match(ctx.sample_color3b(x, y, &ids, &boxes), color) {
                    return true;
                }
                x += 1.0;
            }
            y += 1.0;
        }
        false
    }

    /// The colour the renderer composites at a stage point from every visible drawable except
    /// `exclude` (Whisker's colour search samples like this).
    pub fn sample_color(&self, x: f64, y: f64, exclude: Option<usize>) -> [u8; 3] {
        self.color_sampler(exclude).sample(x, y)
    }

    /// A sampler of composited colours (every visible drawable but `exclude`, over white).
    pub fn color_sampler(&self, exclude: Option<usize>) -> ColorSampler<'_> {
        let mut ctx = Ctx::new(self);
        let ids: Vec<usize> =
            (0..self.drawables.len()).rev().filter(|&i| Some(i) != exclude && self.drawables[i].visible).collect();
        for &i in &ids {
            ctx.update_cpu(i);
        }
        ColorSampler::new(ctx, ids)
    }

    /// A sampler of drawable `me`'s own colours alone (over white, as Whisker samples a sprite).
    pub fn own_color_sampler(&self, me: usize) -> ColorSampler<'_> {
        let mut ctx = Ctx::new(self);
        ctx.update_cpu(me);
        ColorSampler::new(ctx, vec![me])
    }

    /// `_touchingBounds` of a drawable: its rough box clamped to the stage and snapped out
    /// to integers; `None` when that leaves nothing (what `penStamp` draws into).
    pub fn stamp_bounds(&self, me: usize) -> Option<Rect> {
        Ctx::new(self).touching_bounds(me)
    }

    /// The colour of drawable `me` alone at a stage point, premultiplied (`sampleColor4b`).
    pub fn sample_own_color(&self, me: usize, x: f64, y: f64) -> [u8; 4] {
        self.own_colors(me).at(x, y)
    }

    /// [`Scene::sample_own_color`] at many points (the renderer's state prepared once). The
    /// MIP is the one for the drawable's scale whatever the floors: a stamp draws the texture
    /// `getTexture(scale)` returns, not the silhouette.
    pub fn own_colors(&self, me: usize) -> OwnColors<'_> {
        self.own_colors_with(me, ColorMemo::default())
    }

    /// [`Scene::own_colors`] with the colour memo of an earlier one (its entries are kept when
    /// the effects are the same).
    pub fn own_colors_with(&self, me: usize, mut memo: ColorMemo) -> OwnColors<'_> {
        let mut ctx = Ctx::new(self);
        ctx.levels = Cow::Borrowed(&[]);
        ctx.update_cpu(me);
        // Level 0 (no levels requested): the mip is settled, so its borrow lasts the scene's.
        let (xf, d) = (ctx.xf(me), ctx.d(me));
        memo.keep_for(&d.effects);
        OwnColors { xf, sil: &ctx.mip_of(me).silhouette, effects: &d.effects, size: d.skin.size(), memo }
    }
}
