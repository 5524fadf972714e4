//! A drawable's transform, computed exactly as scratch-render's `Drawable`
//! computes it in `Float32Array`s: model matrix, its inverse, world → texture
//! coordinates, the rough AABB and the transformed hull points.

use super::Rect;
use super::effects::{Effects, bit};
use crate::util::jsmath::{cos, sin};
use crate::util::math::{f32r, js_round};

/// Where and how a drawable is drawn (the renderer's view of a target).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    /// Position as the VM sets it; the renderer rounds it (`Math.round`) into single precision.
    pub x: f64,
    /// See `x`.
    pub y: f64,
    /// Rendered direction in degrees (90 for "don't rotate" and "left-right").
    pub direction: f64,
    /// Rendered scale in percent; x is negative for a flipped "left-right" sprite.
    pub scale: [f64; 2],
}

impl Placement {
    /// A placement from a target's state and rotation style (`_getRenderedDirectionAndScale`).
    pub fn from_target(x: f64, y: f64, direction: f64, size: f64, style: RotationStyle) -> Self {
        let (direction, scale) = match style {
            RotationStyle::AllAround => (direction, [size, size]),
            RotationStyle::DontRotate => (90.0, [size, size]),
            RotationStyle::LeftRight => (90.0, [if direction < 0.0 { -size } else { size }, size]),
        };
        Placement { x, y, direction, scale }
    }

    /// The drawable position the renderer stores: `Math.round`, then single precision.
    pub fn render_position(&self) -> [f64; 2] {
        [f32r(js_round(self.x)), f32r(js_round(self.y))]
    }

    /// The scale as the renderer stores it (single precision).
    pub fn render_scale(&self) -> [f64; 2] {
        [f32r(self.scale[0]), f32r(self.scale[1])]
    }
}

/// A sprite's rotation style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RotationStyle {
    /// `all around`
    #[default]
    AllAround,
    /// `left-right`
    LeftRight,
    /// `don't rotate`
    DontRotate,
}

impl RotationStyle {
    /// Parses Scratch's rotation style names (unknown names rotate all around, as scratch-vm ignores them).
    pub fn parse(s: &str) -> Self {
        match s {
            "left-right" => RotationStyle::LeftRight,
            "don't rotate" => RotationStyle::DontRotate,
            _ => RotationStyle::AllAround,
        }
    }
}

/// The model matrix `[a, b, c, d, tx, ty]` (single-precision values) and its inverse.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Xform {
    /// `u_modelMatrix` elements 0, 1, 4, 5, 12, 13.
    pub m: [f64; 6],
    /// `_inverseMatrix` elements 0, 1, 4, 5, 12, 13.
    pub inv: [f64; 6],
    /// The drawable's stored position.
    pub position: [f64; 2],
    /// What the translation is computed from (see [`Xform::moved_to`]).
    rot: Rotation,
}

/// The rotation part of a transform: cosine, negated sine and the rotation-centre offset.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rotation {
    c: f64,
    neg_s: f64,
    adj: [f64; 2],
}

impl Xform {
    /// `Drawable._calculateTransform` + `updateMatrix` for a skin of nominal `skin_size`
    /// rotating about `center` (single precision).
    pub fn new(p: &Placement, skin_size: [f64; 2], center: [f64; 2]) -> Xform {
        let scale = p.render_scale();
        let rotation = (270.0 - p.direction) * std::f64::consts::PI / 180.0;
        let (c, s) = (f32r(cos(rotation)), f32r(sin(rotation)));
        let adj0 = f32r((center[0] - skin_size[0] / 2.0) * scale[0] / 100.0);
        // `* -1` in the original: the same as negation in IEEE arithmetic.
        let adj1 = f32r(-((center[1] - skin_size[1] / 2.0) * scale[1] / 100.0));
        let ss0 = f32r(skin_size[0] * scale[0] / 100.0);
        let ss1 = f32r(skin_size[1] * scale[1] / 100.0);
        let neg_s = -s;
        let a = f32r(ss0 * c);
        let b = f32r(ss0 * s);
        let cc = f32r(ss1 * neg_s);
        let d = f32r(ss1 * c);
        let rot = Rotation { c, neg_s, adj: [adj0, adj1] };
        Xform { m: [a, b, cc, d, 0.0, 0.0], inv: [0.0; 6], position: [0.0; 2], rot }.at(p.render_position())
    }

    /// The same transform with the drawable at render position `position` (only the
    /// translation and the parts of the inverse that depend on it are computed again: a
    /// sprite that moves without turning or resizing needs no trigonometry).
    pub fn moved_to(&self, p: &Placement) -> Xform {
        self.at(p.render_position())
    }

    fn at(mut self, position: [f64; 2]) -> Xform {
        let [a, b, cc, d, ..] = self.m;
        let Rotation { c, neg_s, adj: [adj0, adj1] } = self.rot;
        let s = -neg_s;
        let tx = f32r(c * adj0 + neg_s * adj1 + position[0]);
        let ty = f32r(s * adj0 + c * adj1 + position[1]);
        // twgl.m4.inverse of [a b 0 0; c d 0 0; 0 0 1 0; tx ty 0 1], with its operation order.
        let det = a * d + cc * -b;
        let k = 1.0 / det;
        self.inv = [
            f32r(k * d),
            f32r(k * -b),
            f32r(k * (0.0 - cc)),
            f32r(k * a),
            f32r(k * (cc * ty - tx * d)),
            f32r(k * (tx * b - a * ty)),
        ];
        self.m[4] = tx;
        self.m[5] = ty;
        self.position = position;
        self
    }

    /// `getLocalPosition`: texture coordinates `[u, v]` of world point `(x, y)`, before effects.
    #[inline]
    pub fn local(&self, x: f64, y: f64) -> [f64; 2] {
        let i = &self.inv;
        let mut u = f32r(0.5 - (x * i[0] + y * i[2] + i[4]));
        let mut v = f32r((x * i[1] + y * i[3] + i[5]) + 0.5);
        if u.abs() < 1e-6 {
            u = 0.0;
        }
        if v.abs() < 1e-6 {
            v = 0.0;
        }
        [u, v]
    }

    /// Stage x-range of row `y` outside which [`Xform::local`] is surely outside the unit
    /// square (so a stamp or colour read there sees nothing), `None` when all of the row is.
    /// Conservative: the bounds are widened far beyond the single-precision rounding and the
    /// snap to 0 that `local` applies, so only points that cannot be inside are excluded.
    pub fn inside_span(&self, y: f64) -> Option<(f64, f64)> {
        // Margin in texture units (local's errors are below 1e-6) and in stage pixels.
        const M: f64 = 1e-3;
        let i = &self.inv;
        if !i.iter().all(|v| v.is_finite()) || !y.is_finite() {
            return Some((f64::NEG_INFINITY, f64::INFINITY));
        }
        let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
        // u = 0.5 − (x·i0 + y·i2 + i4) and v = (x·i1 + y·i3 + i5) + 0.5 are inside [0, 1]
        // when their linear part x·k + c is inside [−0.5, 0.5].
        for (k, c) in [(i[0], y * i[2] + i[4]), (i[1], y * i[3] + i[5])] {
            let (a, b) = (-0.5 - M - c, 0.5 + M - c);
            if k.abs() < 1e-12 {
                if a > 0.0 || b < 0.0 {
                    return None;
                }
                continue;
            }
            let (x0, x1) = if k > 0.0 { (a / k, b / k) } else { (b / k, a / k) };
            lo = lo.max(x0 - 1.0);
            hi = hi.min(x1 + 1.0);
        }
        if lo > hi { None } else { Some((lo, hi)) }
    }

    /// `getLocalPosition` including the shape effects (applied only inside the texture).
    #[inline]
    pub fn local_with_effects(&self, x: f64, y: f64, effects: &Effects, skin_size: [f64; 2]) -> [f64; 2] {
        let p = self.local(x, y);
        // Only the shape effects move points (colour, brightness and ghost leave them).
        if effects.enabled & bit::SHAPE != 0 && (0.0..1.0).contains(&p[0]) && (0.0..1.0).contains(&p[1]) {
            effects.transform_point(p, skin_size)
        } else {
            p
        }
    }

    /// `getAABB`: the transformed unit square's bounding box.
    pub fn aabb(&self) -> Rect {
        let m = &self.m;
        let x = (0.5 * m[0]).abs() + (0.5 * m[2]).abs();
        let y = (0.5 * m[1]).abs() + (0.5 * m[3]).abs();
        Rect { left: -x + m[4], right: x + m[4], top: y + m[5], bottom: -y + m[5] }
    }

    /// `_getTransformedHullPoints`: hull points (skin pixel grid) in stage coordinates.
    pub fn transform_hull(&self, points: &[[f64; 2]], skin_size: [f64; 2]) -> Vec<[f64; 2]> {
        self.hull_points(points, skin_size).collect()
    }

    /// [`Xform::transform_hull`] as an iterator, for a box that needs no list of the points.
    pub fn hull_points<'p>(
        &'p self,
        points: &'p [[f64; 2]],
        skin_size: [f64; 2],
    ) -> impl Iterator<Item = [f64; 2]> + 'p {
        let half_x = 1.0 / skin_size[0] / 2.0;
        let half_y = 1.0 / skin_size[1] / 2.0;
        let m = &self.m;
        points.iter().map(move |p| {
            let px = f32r(0.5 + (-p[0] / skin_size[0]) - half_x);
            let py = f32r((p[1] / skin_size[1]) - 0.5 + half_y);
            [f32r(px * m[0] + py * m[2] + m[4]), f32r(px * m[1] + py * m[3] + m[5])]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unrotated_square_maps_corners() {
        // 100×100 skin centred, at (10, 20), direction 90, size 100.
        let p = Placement::from_target(10.0, 20.0, 90.0, 100.0, RotationStyle::AllAround);
        let x = Xform::new(&p, [100.0, 100.0], [50.0, 50.0]);
        let aabb = x.aabb();
        assert!((aabb.left - -40.0).abs() < 1e-4 && (aabb.right - 60.0).abs() < 1e-4);
        assert!((aabb.bottom - -30.0).abs() < 1e-4 && (aabb.top - 70.0).abs() < 1e-4);
        // The world point at the left edge, top: texture (0, 0) (x is flipped by the quad).
        let [u, v] = x.local(-39.0, 69.0);
        assert!((u - 0.01).abs() < 1e-5 && (v - 0.01).abs() < 1e-5, "{u} {v}");
    }

    #[test]
    fn left_right_flips_the_scale() {
        let p = Placement::from_target(0.0, 0.0, -90.0, 50.0, RotationStyle::LeftRight);
        assert_eq!(p.direction, 90.0);
        assert_eq!(p.scale, [-50.0, 50.0]);
        let p = Placement::from_target(0.0, 0.0, -90.0, 50.0, RotationStyle::DontRotate);
        assert_eq!((p.direction, p.scale), (90.0, [50.0, 50.0]));
    }

    /// Moving a transform gives exactly the transform computed afresh at the new place.
    #[test]
    fn moved_transforms_equal_fresh_ones() {
        let mut seed = 1u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as f64 / (1u64 << 31) as f64
        };
        for _ in 0..2000 {
            let style = RotationStyle::AllAround;
            let (dir, size) = (next() * 360.0 - 180.0, 1.0 + next() * 300.0);
            let p = Placement::from_target(next() * 600.0 - 300.0, next() * 400.0 - 200.0, dir, size, style);
            let q = Placement::from_target(next() * 600.0 - 300.0, next() * 400.0 - 200.0 + 0.5, dir, size, style);
            let (size, centre) = ([next() * 90.0 + 1.0, next() * 70.0 + 1.0], [next() * 50.0, next() * 40.0]);
            let moved = Xform::new(&p, size, centre).moved_to(&q);
            assert_eq!(moved, Xform::new(&q, size, centre));
        }
    }

    /// Every pixel centre whose local position is inside the texture lies in the row's span,
    /// for turned, flipped, tiny, huge and right-angled transforms (a stamp skips the rest).
    #[test]
    fn inside_spans_hold_every_pixel_inside_the_texture() {
        let mut rng = crate::rng::SplitMix64::new(7);
        let mut next = || rng.next_f64();
        let (mut inside, mut skipped) = (0u64, 0u64);
        for n in 0..400 {
            let style = if n % 5 == 0 { RotationStyle::LeftRight } else { RotationStyle::AllAround };
            let dir = if n % 4 == 0 { (next() * 4.0).floor() * 90.0 } else { next() * 360.0 - 180.0 };
            let size = [0.5, 3.0, 100.0, 250.0, 2000.0][n % 5] * (0.5 + next());
            let p = Placement::from_target(next() * 600.0 - 300.0, next() * 400.0 - 200.0, dir, size, style);
            let (skin, centre) = ([next() * 90.0 + 1.0, next() * 70.0 + 1.0], [next() * 50.0, next() * 40.0]);
            let xf = Xform::new(&p, skin, centre);
            for row in 0..360 {
                let y = 179.5 - row as f64;
                let span = xf.inside_span(y);
                for col in 0..480 {
                    let x = col as f64 - 239.5;
                    let [u, v] = xf.local(x, y);
                    let is_in = (0.0..=1.0).contains(&u) && (0.0..=1.0).contains(&v);
                    let in_span = span.is_some_and(|(lo, hi)| x >= lo && x <= hi);
                    assert!(!is_in || in_span, "{n}: ({x}, {y}) inside at ({u}, {v}), span {span:?}");
                    inside += u64::from(is_in);
                    skipped += u64::from(!in_span);
                }
            }
        }
        // The spans do exclude something (most of the stage for most transforms).
        assert!(inside > 100_000 && skipped > 40_000_000, "{inside} {skipped}");
    }

    #[test]
    fn positions_round_half_up() {
        let p = Placement::from_target(-2.5, 2.5, 90.0, 100.0, RotationStyle::AllAround);
        assert_eq!(p.render_position(), [-2.0, 3.0]);
    }
}
