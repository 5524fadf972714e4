//! The stroke of a circle, an ellipse or a rounded rectangle as Skia outlines it.
//!
//! Chromium strokes these shapes' conics themselves (`SkPathStroker::conicTo`): each conic's
//! offset curves, outside and inside, are approximated by quadratics found by evaluating the
//! conic and its tangent, halving the parameter range until a quadratic is within a quarter of
//! a device pixel (scaled by the transform's `resScale`). usvg's cubic arcs offset by
//! tiny-skia, or the edge builder's quadratics offset instead, give other outlines whose faint
//! edge pixels differ (a stroked rounded corner had alpha 13 and 20 in Chromium and 0 here).
//! This module follows that algorithm in single precision, as Skia computes, for the closed
//! contours of [`Shape`]: every join there is smooth, so no join adds anything (miter and
//! round joins add nothing at a straight angle; a bevel join's zero-area notch is left out).

use resvg::tiny_skia::{Path, PathBuilder, Transform};

use super::conics::{Pt, Seg, Shape, WEIGHT};
use crate::geometry::aaa::unit_quad_roots;

/// The user-space outline of `shape`'s stroke of width `width` (not a hairline, not dashed),
/// for a device transform whose resolution scale is `res_scale`: the outer contour and the
/// inner one reversed, filled with the non-zero rule. `None` for a degenerate stroke.
pub(super) fn stroke_outline(shape: &Shape, width: f32, res_scale: f32) -> Option<Path> {
    let radius = width * 0.5;
    if !(radius > 0.0 && radius.is_finite() && res_scale.is_finite() && res_scale > 0.0) {
        return None;
    }
    let (start, segs) = shape.contour();
    let inv = 1.0 / (res_scale * 4.0);
    let mut s = Stroker {
        radius,
        res_scale,
        inv_res_scale: inv,
        inv_res_scale_sq: inv * inv,
        outer: PathBuilder::new(),
        inner_start: (0.0, 0.0),
        inner: Vec::new(),
        prev: start,
        first: true,
        depth: 0,
    };
    for seg in segs {
        match seg {
            Seg::Line(p) => s.line_to(p),
            Seg::Conic(c, p) => s.conic_to(c, p),
        }
    }
    if s.first {
        return None;
    }
    // `finishContour(close)`: the outer contour closes; the inner one, reversed, is a contour
    // of its own.
    s.outer.close();
    let last = s.inner.last().map_or(s.inner_start, |q| q.end());
    s.outer.move_to(last.0, last.1);
    for (i, q) in s.inner.iter().enumerate().rev() {
        let to = if i == 0 { s.inner_start } else { s.inner[i - 1].end() };
        match *q {
            Out::Line(_) => s.outer.line_to(to.0, to.1),
            Out::Quad(c, _) => s.outer.quad_to(c.0, c.1, to.0, to.1),
        }
    }
    s.outer.close();
    s.outer.finish()
}

/// The stroke outline of `path` under `ts` in device space, when `path` is one of the
/// [`Shape`]s: stroked in user space, then mapped, as Skia does.
pub(super) fn device_stroke(path: &Path, width: f32, ts: Transform) -> Option<Path> {
    let shape = Shape::of(path)?;
    let res = resvg::tiny_skia::PathStroker::compute_resolution_scale(&ts);
    stroke_outline(&shape, width, res)?.transform(ts)
}

/// A segment of the inner contour as it is built (reversed at the end).
#[derive(Debug, Clone, Copy)]
enum Out {
    Line(Pt),
    Quad(Pt, Pt),
}

impl Out {
    fn end(&self) -> Pt {
        match *self {
            Out::Line(p) | Out::Quad(_, p) => p,
        }
    }
}

/// Which side a ray goes to (`SkPathStroker::StrokeType`: outer 1, inner −1).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    Outer,
    Inner,
}

/// `SkQuadConstruct`: the quadratic being fitted to one side over `[start_t, end_t]`.
#[derive(Debug, Clone, Copy, Default)]
struct Construct {
    quad: [Pt; 3],
    /// The stroke's direction at the start and end, scaled to the radius.
    tangent_start: Pt,
    tangent_end: Pt,
    start_t: f32,
    mid_t: f32,
    end_t: f32,
    start_set: bool,
    end_set: bool,
}

impl Construct {
    fn init(&mut self, start: f32, end: f32) {
        self.start_t = start;
        self.mid_t = (start + end) * 0.5;
        self.end_t = end;
        self.start_set = false;
        self.end_set = false;
    }

    /// `initWithStart` (`first`) or `initWithEnd`: the first or second half of this range,
    /// sharing this one's end point and tangent on its outer side. (Skia goes on when a range
    /// no longer halves; the recursion limit ends it.)
    fn half(&self, first: bool) -> Construct {
        let mut h = Construct::default();
        if first {
            h.init(self.start_t, self.mid_t);
            h.quad[0] = self.quad[0];
            h.tangent_start = self.tangent_start;
            h.start_set = true;
        } else {
            h.init(self.mid_t, self.end_t);
            h.quad[2] = self.quad[2];
            h.tangent_end = self.tangent_end;
            h.end_set = true;
        }
        h
    }
}

/// What one fitting attempt found (`SkPathStroker::ResultType`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fit {
    Split,
    Degenerate,
    Quad,
}

/// Conic halvings allowed (`kRecursiveLimits[kConic_RecursiveLimit]`).
const RECURSION_LIMIT: u32 = 33;

struct Stroker {
    radius: f32,
    res_scale: f32,
    inv_res_scale: f32,
    inv_res_scale_sq: f32,
    outer: PathBuilder,
    inner_start: Pt,
    inner: Vec<Out>,
    prev: Pt,
    /// No segment yet: the next one starts both contours.
    first: bool,
    depth: u32,
}

impl Stroker {
    /// `preJoinTo`: the unit normal towards `to` scaled to the radius; starts the contours at
    /// the first segment (a smooth join adds nothing later).
    fn pre_join(&mut self, to: Pt) -> Option<Pt> {
        let d = ((to.0 - self.prev.0) * self.res_scale, (to.1 - self.prev.1) * self.res_scale);
        let unit = set_length(d, 1.0)?;
        let normal = (unit.1 * self.radius, -unit.0 * self.radius);
        if self.first {
            self.first = false;
            self.outer.move_to(self.prev.0 + normal.0, self.prev.1 + normal.1);
            self.inner_start = (self.prev.0 - normal.0, self.prev.1 - normal.1);
        }
        Some(normal)
    }

    fn line_to(&mut self, p: Pt) {
        let tiny = 1.0 / 4096.0 * self.inv_res_scale;
        if (p.0 - self.prev.0).abs() <= tiny && (p.1 - self.prev.1).abs() <= tiny {
            return;
        }
        let Some(n) = self.pre_join(p) else { return };
        self.outer.line_to(p.0 + n.0, p.1 + n.1);
        self.inner.push(Out::Line((p.0 - n.0, p.1 - n.1)));
        self.prev = p;
    }

    fn conic_to(&mut self, c: Pt, p: Pt) {
        let conic = [self.prev, c, p];
        if degenerate(sub(c, self.prev)) || degenerate(sub(p, c)) {
            // Not reached by an oval or a rounded rectangle: their conics have corners.
            self.line_to(p);
            return;
        }
        if self.pre_join(c).is_none() {
            self.line_to(p);
            return;
        }
        for side in [Side::Outer, Side::Inner] {
            let mut q = Construct::default();
            q.init(0.0, 1.0);
            self.conic_stroke(&conic, side, &mut q);
        }
        self.prev = p;
    }

    /// `conicStroke`: fits a quadratic to `side` of the conic over `q`'s range, halving it
    /// until one is close enough.
    fn conic_stroke(&mut self, conic: &[Pt; 3], side: Side, q: &mut Construct) -> bool {
        match self.compare_quad_conic(conic, side, q) {
            Fit::Quad => {
                self.push(side, Some(q.quad[1]), q.quad[2]);
                return true;
            }
            Fit::Degenerate => {
                self.push(side, None, q.quad[2]);
                return true;
            }
            Fit::Split => {}
        }
        self.depth += 1;
        if self.depth > RECURSION_LIMIT {
            return false;
        }
        for first in [true, false] {
            if !self.conic_stroke(conic, side, &mut q.half(first)) {
                return false;
            }
        }
        self.depth -= 1;
        true
    }

    fn push(&mut self, side: Side, ctrl: Option<Pt>, end: Pt) {
        match (side, ctrl) {
            (Side::Outer, Some(c)) => self.outer.quad_to(c.0, c.1, end.0, end.1),
            (Side::Outer, None) => self.outer.line_to(end.0, end.1),
            (Side::Inner, Some(c)) => self.inner.push(Out::Quad(c, end)),
            (Side::Inner, None) => self.inner.push(Out::Line(end)),
        }
    }

    /// `compareQuadConic`.
    fn compare_quad_conic(&self, conic: &[Pt; 3], side: Side, q: &mut Construct) -> Fit {
        if !q.start_set {
            let (_, on, tangent) = self.perp_ray(conic, q.start_t, side);
            q.quad[0] = on;
            q.tangent_start = tangent;
            q.start_set = true;
        }
        if !q.end_set {
            let (_, on, tangent) = self.perp_ray(conic, q.end_t, side);
            q.quad[2] = on;
            q.tangent_end = tangent;
            q.end_set = true;
        }
        let fit = self.intersect_ray(q);
        if fit != Fit::Quad {
            return fit;
        }
        let (mid_on_curve, mid_on_stroke, _) = self.perp_ray(conic, q.mid_t, side);
        self.close_enough(q, [mid_on_stroke, mid_on_curve])
    }

    /// `conicPerpRay`/`setRayPts`: the conic's point at `t`, the point `radius` away on
    /// `side`, and the tangent there scaled to the radius (Skia keeps it as a vector).
    fn perp_ray(&self, conic: &[Pt; 3], t: f32, side: Side) -> (Pt, Pt, Pt) {
        let pt = conic_eval(conic, t);
        let mut d = conic_tangent(conic, t);
        if d == (0.0, 0.0) {
            d = sub(conic[2], conic[0]);
        }
        let d = set_length(d, self.radius).unwrap_or((self.radius, 0.0));
        let flip = if side == Side::Outer { 1.0 } else { -1.0 };
        let on = (pt.0 + flip * d.1, pt.1 - flip * d.0);
        (pt, on, d)
    }

    /// `intersectRay` (control point kind): the quadratic's control point where the tangents
    /// at its ends meet.
    fn intersect_ray(&self, q: &mut Construct) -> Fit {
        let (start, end) = (q.quad[0], q.quad[2]);
        let (a, b) = (q.tangent_start, q.tangent_end);
        let denom = cross(a, b);
        if denom == 0.0 || !denom.is_finite() {
            return Fit::Degenerate;
        }
        let ab0 = sub(start, end);
        let mut numer_a = cross(b, ab0);
        let numer_b = cross(a, ab0);
        if (numer_a >= 0.0) == (numer_b >= 0.0) {
            // The control point would lie outside the ends: a line if they are close.
            let d1 = pt_to_tangent_line(start, end, b);
            let d2 = pt_to_tangent_line(end, start, a);
            return if d1.max(d2) <= self.inv_res_scale_sq { Fit::Degenerate } else { Fit::Split };
        }
        numer_a /= denom;
        if numer_a > numer_a - 1.0 {
            q.quad[1] = (start.0 + a.0 * numer_a, start.1 + a.1 * numer_a);
            return Fit::Quad;
        }
        Fit::Degenerate
    }

    /// `strokeCloseEnough`: is the quadratic's midpoint (or where the ray from the conic's
    /// middle meets it) within the tolerance of the offset point?
    fn close_enough(&self, q: &Construct, ray: [Pt; 2]) -> Fit {
        let stroke = q.quad;
        let mid = quad_eval(&stroke, 0.5);
        if within(ray[0], mid, self.inv_res_scale) {
            return if sharp_angle(&q.quad) { Fit::Split } else { Fit::Quad };
        }
        if !self.in_quad_bounds(&stroke, ray[0]) {
            return Fit::Split;
        }
        let Some(t) = intersect_quad_ray(ray, &stroke) else { return Fit::Split };
        let hit = quad_eval(&stroke, t);
        let error = self.inv_res_scale * (1.0 - (t - 0.5).abs() * 2.0);
        if within(ray[0], hit, error) {
            return if sharp_angle(&q.quad) { Fit::Split } else { Fit::Quad };
        }
        Fit::Split
    }

    /// `ptInQuadBounds`.
    fn in_quad_bounds(&self, quad: &[Pt; 3], p: Pt) -> bool {
        let e = self.inv_res_scale;
        let (xs, ys) = (quad.map(|q| q.0), quad.map(|q| q.1));
        let min = |v: [f32; 3]| v[0].min(v[1]).min(v[2]);
        let max = |v: [f32; 3]| v[0].max(v[1]).max(v[2]);
        !(p.0 + e < min(xs) || p.0 - e > max(xs) || p.1 + e < min(ys) || p.1 - e > max(ys))
    }
}

fn sub(a: Pt, b: Pt) -> Pt {
    (a.0 - b.0, a.1 - b.1)
}

fn cross(a: Pt, b: Pt) -> f32 {
    a.0 * b.1 - a.1 * b.0
}

fn dot(a: Pt, b: Pt) -> f32 {
    a.0 * b.0 + a.1 * b.1
}

fn dist_sq(a: Pt, b: Pt) -> f32 {
    let d = sub(a, b);
    dot(d, d)
}

fn within(a: Pt, b: Pt, limit: f32) -> bool {
    dist_sq(a, b) <= limit * limit
}

/// `SkPoint::setLength`: scaled in double precision, as Skia does; `None` for a zero or
/// non-finite result.
fn set_length(v: Pt, length: f32) -> Option<Pt> {
    let (x, y) = (f64::from(v.0), f64::from(v.1));
    let scale = f64::from(length) / (x * x + y * y).sqrt();
    let (x, y) = ((x * scale) as f32, (y * scale) as f32);
    (x.is_finite() && y.is_finite() && (x != 0.0 || y != 0.0)).then_some((x, y))
}

/// `degenerate_vector`: a vector that gives no direction (zero or not finite).
fn degenerate(v: Pt) -> bool {
    !(v.0.is_finite() && v.1.is_finite() && (v.0 != 0.0 || v.1 != 0.0))
}

/// `pt_to_tangent_line`: the squared distance from `p` to the segment from `start` along
/// `tangent` (its start when the foot lies beyond it).
fn pt_to_tangent_line(p: Pt, start: Pt, tangent: Pt) -> f32 {
    let t = dot(tangent, sub(p, start)) / dot(tangent, tangent);
    if (0.0..=1.0).contains(&t) {
        dist_sq((start.0 + tangent.0 * t, start.1 + tangent.1 * t), p)
    } else {
        dist_sq(p, start)
    }
}

/// `sharp_angle`: does the quadratic turn back on itself?
fn sharp_angle(q: &[Pt; 3]) -> bool {
    let mut smaller = sub(q[1], q[0]);
    let mut larger = sub(q[1], q[2]);
    let (s, l) = (dot(smaller, smaller), dot(larger, larger));
    let mut larger_len = l;
    if s > l {
        std::mem::swap(&mut smaller, &mut larger);
        larger_len = s;
    }
    match set_length(smaller, larger_len) {
        Some(v) => dot(v, larger) > 0.0,
        None => false,
    }
}

/// `SkConicCoeff::eval`: the conic's point at `t`.
fn conic_eval(p: &[Pt; 3], t: f32) -> Pt {
    let w = WEIGHT;
    let one = |a: f32, b: f32, c: f32| {
        let bw = b * w;
        let (qa, qb, qc) = (c - 2.0 * bw + a, 2.0 * (bw - a), a);
        (qa * t + qb) * t + qc
    };
    let db = 2.0 * (w - 1.0);
    let denom = (-db * t + db) * t + 1.0;
    (one(p[0].0, p[1].0, p[2].0) / denom, one(p[0].1, p[1].1, p[2].1) / denom)
}

/// `SkConic::evalTangentAt`: the direction of the conic at `t` (not normalised).
fn conic_tangent(p: &[Pt; 3], t: f32) -> Pt {
    if (t == 0.0 && p[0] == p[1]) || (t == 1.0 && p[1] == p[2]) {
        return sub(p[2], p[0]);
    }
    let w = WEIGHT;
    let one = |a: f32, b: f32, c: f32| {
        let (p20, p10) = (c - a, b - a);
        let cc = w * p10;
        let aa = w * p20 - p20;
        let bb = p20 - cc - cc;
        (aa * t + bb) * t + cc
    };
    (one(p[0].0, p[1].0, p[2].0), one(p[0].1, p[1].1, p[2].1))
}

/// `SkEvalQuadAt`.
fn quad_eval(q: &[Pt; 3], t: f32) -> Pt {
    let one = |a: f32, b: f32, c: f32| {
        let (qa, qb) = (c - 2.0 * b + a, 2.0 * (b - a));
        (qa * t + qb) * t + a
    };
    (one(q[0].0, q[1].0, q[2].0), one(q[0].1, q[1].1, q[2].1))
}

/// `intersect_quad_ray`: the one parameter in (0, 1) where the line through `ray` crosses
/// the quadratic, if there is exactly one.
fn intersect_quad_ray(ray: [Pt; 2], q: &[Pt; 3]) -> Option<f32> {
    let v = sub(ray[1], ray[0]);
    let r = q.map(|p| (p.1 - ray[0].1) * v.0 - (p.0 - ray[0].0) * v.1);
    let (mut a, mut b, c) = (r[2], r[1], r[0]);
    a += c - 2.0 * b;
    b -= c;
    let roots = unit_quad_roots(a, 2.0 * b, c);
    match roots.as_slice() {
        [t] => Some(*t),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use resvg::tiny_skia::{PathSegment, Rect};

    fn radius_range(p: &Path, cx: f32, cy: f32) -> (f32, f32) {
        // Points on the quadratics (ends and midpoints), by distance from the centre.
        let mut at = (0.0, 0.0);
        let (mut lo, mut hi) = (f32::INFINITY, 0.0f32);
        let mut see = |x: f32, y: f32| {
            let d = ((x - cx).powi(2) + (y - cy).powi(2)).sqrt();
            lo = lo.min(d);
            hi = hi.max(d);
        };
        for s in p.segments() {
            match s {
                PathSegment::MoveTo(q) | PathSegment::LineTo(q) => {
                    see(q.x, q.y);
                    at = (q.x, q.y);
                }
                PathSegment::QuadTo(c, q) => {
                    let m = quad_eval(&[at, (c.x, c.y), (q.x, q.y)], 0.5);
                    see(m.0, m.1);
                    see(q.x, q.y);
                    at = (q.x, q.y);
                }
                _ => {}
            }
        }
        (lo, hi)
    }

    #[test]
    fn a_circles_stroke_is_two_rings_of_quadratics_within_the_tolerance() {
        let circle = Shape::Oval(Rect::from_ltrb(10.0, 10.0, 30.0, 30.0).unwrap());
        let out = stroke_outline(&circle, 4.0, 1.0).unwrap();
        let contours = out.segments().filter(|s| matches!(s, PathSegment::MoveTo(_))).count();
        assert_eq!(contours, 2);
        // Radius 10 ± 2; every point of the quadratics within a quarter pixel of the rings.
        let (lo, hi) = radius_range(&out, 20.0, 20.0);
        assert!(lo > 8.0 - 0.25 && hi < 12.0 + 0.25, "{lo} {hi}");
        assert!(lo < 8.0 + 0.05 && hi > 12.0 - 0.05, "{lo} {hi}");
        // A finer device resolution needs more quadratics.
        let fine = stroke_outline(&circle, 4.0, 8.0).unwrap();
        let quads = |p: &Path| p.segments().filter(|s| matches!(s, PathSegment::QuadTo(..))).count();
        assert!(quads(&fine) > quads(&out), "{} vs {}", quads(&fine), quads(&out));
    }

    #[test]
    fn a_rounded_rectangles_stroke_keeps_straight_sides() {
        let rr = Shape::RoundRect(Rect::from_ltrb(0.0, 0.0, 40.0, 20.0).unwrap(), 5.0, 5.0);
        let out = stroke_outline(&rr, 2.0, 1.0).unwrap();
        // The outer left side runs at x = −1 from y = 15 up to y = 5, the inner one at x = 1.
        let lines: Vec<(f32, f32)> = out
            .segments()
            .filter_map(|s| if let PathSegment::LineTo(p) = s { Some((p.x, p.y)) } else { None })
            .collect();
        assert!(lines.contains(&(-1.0, 5.0)), "{lines:?}");
        assert!(lines.contains(&(1.0, 15.0)), "{lines:?}");
        let b = out.bounds();
        assert_eq!((b.left(), b.top(), b.right(), b.bottom()), (-1.0, -1.0, 41.0, 21.0));
    }

    #[test]
    fn degenerate_strokes_give_nothing() {
        let circle = Shape::Oval(Rect::from_ltrb(10.0, 10.0, 30.0, 30.0).unwrap());
        assert!(stroke_outline(&circle, 0.0, 1.0).is_none());
        assert!(stroke_outline(&circle, f32::NAN, 1.0).is_none());
        assert!(stroke_outline(&circle, 2.0, 0.0).is_none());
    }
}
