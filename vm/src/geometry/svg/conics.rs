//! Circles, ellipses and rounded rectangles as the browser draws them.
//!
//! usvg turns `<circle>` and `<ellipse>`, and the corners of a `<rect>` with `rx`/`ry`, into
//! elliptical arcs made of cubic Béziers. Chromium instead builds them from conics of weight
//! √½ (Skia's `addOval` and `addRRect`), which Skia's edge builder cuts, in device space, into
//! `2^k` quadratics within 0.25 px (`SkAutoConicToQuads`; a small arc is a single quadratic
//! whose control point is its box's corner). The two outlines differ by a fraction of a pixel,
//! enough to move an edge pixel across the zero line, so such a shape's fill is redrawn as that
//! quadratic outline. (tiny-skia's `from_oval` cuts every conic at least once, unlike Skia.)
//!
//! Which paths are such shapes is told by id (`normalise` records the ids of `<circle>`,
//! `<ellipse>` and rounded `<rect>` elements): a path that traces an ellipse, as the paint
//! editor writes them, is drawn by Chromium as written, with cubics.

use resvg::tiny_skia::{Path, PathBuilder, PathSegment, Point, Rect, Transform};

/// How far (relative to the radius) a point may sit from the ellipse and still count as on it:
/// usvg's arc end points pass through single precision.
const ON_CURVE: f32 = 1e-4;

/// A shape Chromium builds from conics of weight √½, in user space.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Shape {
    /// `SkPath::addOval` of a box.
    Oval(Rect),
    /// `SkPath::addRRect` of a box with corner radii `rx`, `ry` (each at most half a side).
    RoundRect(Rect, f32, f32),
}

/// One segment of a [`Shape`]'s contour: a line or a conic of weight √½ (control, end).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Seg {
    Line(Pt),
    Conic(Pt, Pt),
}

/// The weight of every conic of an oval or rounded rectangle (`SK_ScalarRoot2Over2`).
pub(super) const WEIGHT: f32 = std::f32::consts::FRAC_1_SQRT_2;

impl Shape {
    /// The shape `path` is, when it is an ellipse or a rounded rectangle as usvg builds one.
    pub(super) fn of(path: &Path) -> Option<Shape> {
        if let Some(r) = ellipse_bounds(path) {
            return Some(Shape::Oval(r));
        }
        let (r, rx, ry) = round_rect(path)?;
        // `SkRRect::setRectXY` scales both radii down together when they do not fit, and
        // radii that fill half the box make an oval.
        let (w, h) = (r.width(), r.height());
        let scale = (w / (rx + rx)).min(h / (ry + ry)).min(1.0);
        let (rx, ry) = (rx * scale, ry * scale);
        let half = |v: f32, side: f32| (v - side * 0.5).abs() <= side * ON_CURVE;
        Some(if half(rx, w) && half(ry, h) { Shape::Oval(r) } else { Shape::RoundRect(r, rx, ry) })
    }

    /// The contour Skia builds (start point, then segments back to it), clockwise on screen:
    /// an oval from its rightmost point (`addOval`'s start index 1), a rounded rectangle from
    /// the lower end of its left side (`addRRect`'s start index 6), up that side first.
    pub(super) fn contour(&self) -> (Pt, Vec<Seg>) {
        match *self {
            Shape::Oval(b) => {
                let (l, t, r, bo) = (b.left(), b.top(), b.right(), b.bottom());
                let (cx, cy) = (l * 0.5 + r * 0.5, t * 0.5 + bo * 0.5);
                let segs = vec![
                    Seg::Conic((r, bo), (cx, bo)),
                    Seg::Conic((l, bo), (l, cy)),
                    Seg::Conic((l, t), (cx, t)),
                    Seg::Conic((r, t), (r, cy)),
                ];
                ((r, cy), segs)
            }
            Shape::RoundRect(b, rx, ry) => {
                let (l, t, r, bo) = (b.left(), b.top(), b.right(), b.bottom());
                let segs = vec![
                    Seg::Line((l, t + ry)),
                    Seg::Conic((l, t), (l + rx, t)),
                    Seg::Line((r - rx, t)),
                    Seg::Conic((r, t), (r, t + ry)),
                    Seg::Line((r, bo - ry)),
                    Seg::Conic((r, bo), (r - rx, bo)),
                    Seg::Line((l + rx, bo)),
                    Seg::Conic((l, bo), (l, bo - ry)),
                ];
                ((l, bo - ry), segs)
            }
        }
    }
}

/// The device-space outline Chromium fills for `path` under `ts`, when `path` is an ellipse or
/// a rounded rectangle as usvg builds one; `None` otherwise, and the path is drawn as it is.
/// Skia maps the conics to the device and cuts them there, so a rotated or skewed shape's
/// quadratics follow its device-space size.
/// With the outline, the bounds of its conics' device points (left, top, right, bottom).
pub(super) fn device_outline(path: &Path, ts: Transform) -> Option<(Path, [f32; 4])> {
    let (start, segs) = Shape::of(path)?.contour();
    let bounds = std::cell::Cell::new([f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY]);
    let dev = |p: Pt| {
        let q = map(ts, p.0, p.1);
        let [l, t, r, b] = bounds.get();
        bounds.set([l.min(q.x), t.min(q.y), r.max(q.x), b.max(q.y)]);
        (q.x, q.y)
    };
    let mut pb = PathBuilder::new();
    let mut at = dev(start);
    pb.move_to(at.0, at.1);
    for s in segs {
        match s {
            Seg::Line(p) => {
                at = dev(p);
                pb.line_to(at.0, at.1);
            }
            Seg::Conic(c, p) => {
                let end = dev(p);
                for [_, q1, q2] in conic_quads([at, dev(c), end], WEIGHT) {
                    pb.quad_to(q1.0, q1.1, q2.0, q2.1);
                }
                at = end;
            }
        }
    }
    pb.close();
    Some((pb.finish()?, bounds.get()))
}

/// Conic tolerance of Skia's edge builder, in device pixels.
const CONIC_TOLERANCE: f32 = 0.25;
/// Most halvings of one conic (`kMaxConicToQuadPOW2`).
const MAX_CONIC_POW2: u32 = 5;

/// The box and radii of the rounded rectangle `path` traces in usvg's form (`convert_rect`):
/// a move to the top edge's left end, then for each side a line and cubic arcs clockwise
/// (in y-down space) around the next corner, and a close. The box is read from the move and
/// line end points, which usvg computes exactly from the element's numbers.
fn round_rect(path: &Path) -> Option<(Rect, f32, f32)> {
    let mut segs = path.segments();
    let PathSegment::MoveTo(start) = segs.next()? else { return None };
    let mut lines = Vec::with_capacity(4);
    // Whether the last segment was a line (a corner's arcs must follow it) or an arc.
    let mut after_line = false;
    let mut closed = false;
    for s in segs {
        match s {
            PathSegment::LineTo(p) if !closed && !after_line => {
                lines.push(p);
                after_line = true;
            }
            PathSegment::CubicTo(..) if !closed && !lines.is_empty() => after_line = false,
            PathSegment::Close if !closed && !after_line => closed = true,
            _ => return None,
        }
    }
    let &[top_right, right_bottom, bottom_left, left_top] = lines.as_slice() else { return None };
    if !closed {
        return None;
    }
    let (l, t, r, b) = (left_top.x, start.y, right_bottom.x, bottom_left.y);
    let (rx, ry) = (start.x - l, left_top.y - t);
    let sides = top_right.y == t && r - top_right.x == rx && b - right_bottom.y == ry && bottom_left.x == start.x;
    if !(sides && rx > 0.0 && ry > 0.0) {
        return None;
    }
    Some((Rect::from_ltrb(l, t, r, b)?, rx, ry))
}

/// A point in single precision, as Skia keeps them.
pub(super) type Pt = (f32, f32);

/// A conic as `2^k` quadratics: `k` from Floater's error bound against [`CONIC_TOLERANCE`]
/// (`SkConic::computeQuadPOW2`), each halving at the conic's parametric midpoint.
fn conic_quads(p: [Pt; 3], w: f32) -> Vec<[Pt; 3]> {
    let a = w - 1.0;
    let k = a / (4.0 * (2.0 + a));
    let (ex, ey) = (k * (p[0].0 - 2.0 * p[1].0 + p[2].0), k * (p[0].1 - 2.0 * p[1].1 + p[2].1));
    let mut error = (ex * ex + ey * ey).sqrt();
    let mut pow2 = 0;
    while pow2 < MAX_CONIC_POW2 && error > CONIC_TOLERANCE {
        error *= 0.25;
        pow2 += 1;
    }
    let mut out = Vec::with_capacity(1 << pow2);
    subdivide(p, w, pow2, &mut out);
    out
}

/// `subdivide` of `SkConic::chopIntoQuadsPOW2`: halves down to `level`, keeping each half's
/// y order where the conic is y-monotonic (Skia moves a control point that the halving left a
/// hair outside its ends onto the nearer end, which flattens the quadratic at an extremum).
fn subdivide(p: [Pt; 3], w: f32, level: u32, out: &mut Vec<[Pt; 3]>) {
    if level == 0 {
        out.push(p);
        return;
    }
    let [(mut a, aw), (mut b, bw)] = halve(p, w);
    let between = |a: f32, b: f32, c: f32| (a - b) * (c - b) <= 0.0;
    let (start_y, end_y) = (p[0].1, p[2].1);
    if between(start_y, p[1].1, end_y) {
        let mid_y = a[2].1;
        if !between(start_y, mid_y, end_y) {
            let closer = if (mid_y - start_y).abs() < (mid_y - end_y).abs() { start_y } else { end_y };
            a[2].1 = closer;
            b[0].1 = closer;
        }
        if !between(start_y, a[1].1, a[2].1) {
            a[1].1 = start_y;
        }
        if !between(b[0].1, b[1].1, end_y) {
            b[1].1 = end_y;
        }
    }
    subdivide(a, aw, level - 1, out);
    subdivide(b, bw, level - 1, out);
}

/// Splits a conic at t = ½ into two conics of weight `√((1 + w) / 2)`.
fn halve(p: [Pt; 3], w: f32) -> [([Pt; 3], f32); 2] {
    let scale = 1.0 / (1.0 + w);
    let (wx, wy) = (w * p[1].0, w * p[1].1);
    let m = ((p[0].0 + 2.0 * wx + p[2].0) * scale * 0.5, (p[0].1 + 2.0 * wy + p[2].1) * scale * 0.5);
    let c0 = ((p[0].0 + wx) * scale, (p[0].1 + wy) * scale);
    let c1 = ((wx + p[2].0) * scale, (wy + p[2].1) * scale);
    let nw = (0.5 + w * 0.5).sqrt();
    [([p[0], c0, m], nw), ([m, c1, p[2]], nw)]
}

fn map(ts: Transform, x: f32, y: f32) -> Point {
    let mut p = [Point::from_xy(x, y)];
    ts.map_points(&mut p);
    p[0]
}

/// The bounds of the ellipse `path` traces in usvg's form (`ellipse_to_path`): a move to its
/// rightmost point, cubic arcs clockwise (in y-down space) through its lowest, leftmost and
/// topmost points back to the start, and a close; every end point on the ellipse.
fn ellipse_bounds(path: &Path) -> Option<Rect> {
    let mut segs = path.segments();
    let PathSegment::MoveTo(start) = segs.next()? else { return None };
    let mut ends = Vec::new();
    let mut closed = false;
    for s in segs {
        match s {
            PathSegment::CubicTo(_, _, p) if !closed => ends.push(p),
            PathSegment::Close if !closed => closed = true,
            _ => return None,
        }
    }
    if !closed || ends.len() < 4 || ends.last() != Some(&start) {
        return None;
    }
    let lowest = ends.iter().copied().max_by(|a, b| a.y.total_cmp(&b.y))?;
    let (cx, cy) = (lowest.x, start.y);
    let (rx, ry) = (start.x - cx, lowest.y - cy);
    if !(rx > 0.0 && ry > 0.0) {
        return None;
    }
    let on_curve = |p: &Point| {
        let (u, v) = ((p.x - cx) / rx, (p.y - cy) / ry);
        (u * u + v * v - 1.0).abs() <= ON_CURVE * 4.0
    };
    let near = |p: &Point, x: f32, y: f32| (p.x - x).abs() <= ON_CURVE * rx && (p.y - y).abs() <= ON_CURVE * ry;
    // The quarter points, in usvg's order: bottom, left, top, then the start again.
    let mut quarter = [(cx, cy + ry), (cx - rx, cy), (cx, cy - ry), (cx + rx, cy)].into_iter().peekable();
    let mut angle = 0.0f32;
    for p in &ends {
        if !on_curve(p) {
            return None;
        }
        // Clockwise on screen is increasing angle in y-down space; every arc goes forward.
        let a = ((p.y - cy) / ry).atan2((p.x - cx) / rx).rem_euclid(std::f32::consts::TAU);
        let a = if a <= angle - 1e-3 { a + std::f32::consts::TAU } else { a };
        if a <= angle {
            return None;
        }
        angle = a;
        if let Some(&(x, y)) = quarter.peek()
            && near(p, x, y)
        {
            quarter.next();
        }
    }
    if quarter.next().is_some() {
        return None;
    }
    Rect::from_ltrb(cx - rx, cy - ry, cx + rx, cy + ry)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usvg_path(svg: &str) -> Path {
        let tree = resvg::usvg::Tree::from_str(svg, &resvg::usvg::Options::default()).unwrap();
        match &tree.root().children()[0] {
            resvg::usvg::Node::Path(p) => p.data().clone(),
            _ => panic!("not a path"),
        }
    }

    fn quads(p: &Path) -> usize {
        p.segments().filter(|s| matches!(s, PathSegment::QuadTo(..))).count()
    }

    #[test]
    fn circles_and_ellipses_become_skias_quadratic_ovals() {
        let svg =
            |shape: &str| format!(r#"<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100">{shape}</svg>"#);
        let circle = usvg_path(&svg(r#"<circle cx="40" cy="50" r="30"/>"#));
        let oval = device_outline(&circle, Transform::from_scale(2.0, 2.0)).unwrap().0;
        let b = oval.bounds();
        for (got, want) in [(b.left(), 20.0), (b.top(), 40.0), (b.right(), 140.0), (b.bottom(), 160.0)] {
            // The quadratics' points come from float midpoint arithmetic, as in Skia.
            assert!((got - want).abs() < 1e-4, "{got} vs {want}");
        }
        // A radius of 60 device pixels needs 2^2 quadratics per quarter within 0.25 px.
        assert_eq!(quads(&oval), 16);
        // A small one is one quadratic per quarter, through the bounding box's corners.
        let ellipse = usvg_path(&svg(r#"<ellipse cx="50" cy="50" rx="3" ry="2"/>"#));
        let small = device_outline(&ellipse, Transform::identity()).unwrap().0;
        assert_eq!(quads(&small), 4);
        assert!(
            small.segments().any(|s| s == PathSegment::QuadTo(Point::from_xy(53.0, 52.0), Point::from_xy(50.0, 52.0)))
        );
        // Rotated, the conics are mapped to the device and cut there: the same circle, its
        // quadratics' end points on it.
        let turned = device_outline(&circle, Transform::from_rotate(30.0)).unwrap().0;
        let (s, c) = 30f32.to_radians().sin_cos();
        let (cx, cy) = (40.0 * c - 50.0 * s, 40.0 * s + 50.0 * c);
        for seg in turned.segments() {
            if let PathSegment::MoveTo(p) | PathSegment::QuadTo(_, p) = seg {
                let r = ((p.x - cx).powi(2) + (p.y - cy).powi(2)).sqrt();
                assert!((r - 30.0).abs() < 1e-3, "{r}");
            }
        }
        assert_eq!(quads(&turned), 16);
    }

    #[test]
    fn rounded_rectangles_get_conic_corners_joined_by_lines() {
        let svg =
            |shape: &str| format!(r#"<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100">{shape}</svg>"#);
        let rect = usvg_path(&svg(r#"<rect x="10" y="20" width="60" height="30" rx="5"/>"#));
        let out = device_outline(&rect, Transform::from_scale(2.0, 2.0)).unwrap().0;
        let lines = out.segments().filter(|s| matches!(s, PathSegment::LineTo(..))).count();
        // Radius 10 device pixels: 2^1 quadratics per corner within 0.25 px.
        assert_eq!((lines, quads(&out)), (4, 8));
        // The sides are exact; the corners' quadratics come from float midpoints, as in Skia.
        for (x, y) in [(130.0, 40.0), (140.0, 90.0), (30.0, 100.0), (20.0, 50.0)] {
            assert!(out.segments().any(|s| s == PathSegment::LineTo(Point::from_xy(x, y))), "({x}, {y})");
        }
        // Radii of half the box make Skia's oval; a plain rectangle is left alone.
        let pill = usvg_path(&svg(r#"<rect x="10" y="20" width="60" height="30" rx="30" ry="15"/>"#));
        let pill = device_outline(&pill, Transform::identity()).unwrap().0;
        assert!(!pill.segments().any(|s| matches!(s, PathSegment::LineTo(..))));
        let plain = usvg_path(&svg(r#"<rect x="10" y="20" width="60" height="30"/>"#));
        assert!(device_outline(&plain, Transform::identity()).is_none());
    }

    #[test]
    fn other_paths_are_left_alone() {
        let svg = |d: &str| {
            format!(r#"<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><path d="{d}"/></svg>"#)
        };
        // A circle drawn counter-clockwise, one starting at its left, an open arc, a square.
        for d in [
            "M 70 50 A 20 20 0 0 0 50 30 A 20 20 0 0 0 30 50 A 20 20 0 0 0 50 70 A 20 20 0 0 0 70 50 Z",
            "M 30 50 A 20 20 0 0 1 50 30 A 20 20 0 0 1 70 50 A 20 20 0 0 1 50 70 A 20 20 0 0 1 30 50 Z",
            "M 70 50 A 20 20 0 0 1 50 70 A 20 20 0 0 1 30 50 A 20 20 0 0 1 50 30",
            "M 10 10 H 60 V 60 H 10 Z",
        ] {
            assert!(device_outline(&usvg_path(&svg(d)), Transform::identity()).is_none(), "{d}");
        }
        // The same clockwise arcs from the rightmost point are an ellipse in usvg's form.
        let d = "M 70 50 A 20 20 0 0 1 50 70 A 20 20 0 0 1 30 50 A 20 20 0 0 1 50 30 A 20 20 0 0 1 70 50 Z";
        assert!(device_outline(&usvg_path(&svg(d)), Transform::identity()).is_some());
    }
}
