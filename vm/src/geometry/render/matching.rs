//! Match boxes: where on the stage a drawable can make a composite show a colour, from the
//! texels of its rendition that have that colour (colour searches sample only inside them).

use crate::geometry::Rect;
use crate::geometry::drawable::Xform;
use crate::geometry::effects::Effects;
use crate::geometry::skin::Mip;

/// Drawables whose match box is smaller than this (in square stage pixels) get no
/// [`KeyCells`]: a search samples few of their points anyway.
pub(super) const KEY_CELLS_MIN_AREA: f64 = 64.0 * 64.0;

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
///
/// [`ColorSampler::match_boxes`]: super::ColorSampler::match_boxes
/// [`sample_box_of`]: super::sample_box_of
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
pub(crate) fn texels_on_stage(xf: &Xform, size: [u32; 2], t: crate::geometry::silhouette::TexelBox) -> Rect {
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
