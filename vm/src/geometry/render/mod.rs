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

// The scene's data types live here (their private fields are shared by the children); each
// child adds one concern: transforms, per-query state, queries, sampling, match boxes.
mod ctx;
mod matching;
mod own_colors;
mod queries;
mod sampling;
mod transform;

use std::sync::Arc;

use super::Rect;
use super::drawable::{Placement, Xform};
use super::effects::{Effects, bit};
use super::skin::Skin;

pub(crate) use matching::{match_rects, texels_on_stage};
pub use own_colors::{ColorMemo, OwnColors};
pub(crate) use sampling::Blend;
pub use sampling::ColorSampler;
pub use transform::fence;

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
    /// Drawables (by position) whose convex hull the live renderer holds, with the hull's box:
    /// their `getFastBounds` in touching queries (empty: every drawable's is its rough AABB,
    /// as in a fresh renderer).
    pub hull_bounds: Vec<(usize, Rect)>,
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
