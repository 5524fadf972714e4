//! The scene's transforms: computed once per change of a drawable's inputs and kept with
//! them, so that queries on a scene kept across frames pay the trigonometry only for what
//! moved; the scene's edits (rearrangements, stand-ins, layer moves) carry them along.

use super::{
    CachedXform, Drawable, FENCE_WIDTH, LooseXform, STAGE_HEIGHT, STAGE_WIDTH, Scene, SilhouetteFloors, StandIn,
    move_item,
};
use crate::geometry::drawable::{Placement, Xform};
use crate::geometry::skin::Skin;
use crate::util::math::{ceil_f64, floor_f64};

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
        let mut s = Scene {
            drawables,
            floors: SilhouetteFloors::default(),
            xforms: Vec::new(),
            spare_xforms: Vec::new(),
            hull_bounds: Vec::new(),
        };
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
    pub(super) fn cached_xform(&self, i: usize) -> Option<Xform> {
        self.cached_xform_ref(i).copied()
    }

    /// [`Scene::cached_xform`] without the copy: callers that read a few fields of the
    /// 144-byte transform do not pay for copying it (and reading the copy back).
    pub(super) fn cached_xform_ref(&self, i: usize) -> Option<&Xform> {
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
