//! Circles and ellipses as the browser draws them.
//!
//! usvg turns `<circle>` and `<ellipse>` into four elliptical arcs made of cubic Béziers.
//! Chromium instead draws them with Skia's `drawOval`: an oval path of four conics (weight
//! √½) that Skia's edge builder cuts, in device space, into `2^k` quadratics within 0.25 px
//! (`SkAutoConicToQuads`; a small circle is a single quadratic per quarter, whose control point
//! is the bounding box's corner). The two outlines differ by a fraction of a pixel, enough to
//! move an edge pixel across the zero line, so an ellipse's fill is redrawn as that quadratic
//! outline. (tiny-skia's `from_oval` cuts every conic at least once, unlike Skia.)
//!
//! Which paths are ellipses is told by id (`normalise` records the ids of `<circle>` and
//! `<ellipse>` elements): a path that traces an ellipse, as the paint editor writes them, is
//! drawn by Chromium as written, with cubics.

use resvg::tiny_skia::{Path, PathBuilder, PathSegment, Point, Rect, Transform};

/// How far (relative to the radius) a point may sit from the ellipse and still count as on it:
/// usvg's arc end points pass through single precision.
const ON_CURVE: f32 = 1e-4;

/// The device-space outline Chromium fills for `path` under `ts`, when `path` is an ellipse as
/// usvg builds one and `ts` keeps axes axis-aligned (no rotation or skew); `None` otherwise,
/// and the path is drawn as it is.
pub(super) fn device_oval(path: &Path, ts: Transform) -> Option<Path> {
    if ts.kx != 0.0 || ts.ky != 0.0 || ts.sx == 0.0 || ts.sy == 0.0 {
        return None;
    }
    let r = ellipse_bounds(path)?;
    let (a, b) = (map(ts, r.left(), r.top()), map(ts, r.right(), r.bottom()));
    oval(a.x.min(b.x), a.y.min(b.y), a.x.max(b.x), a.y.max(b.y))
}

/// Conic tolerance of Skia's edge builder, in device pixels.
const CONIC_TOLERANCE: f32 = 0.25;
/// Most halvings of one conic (`kMaxConicToQuadPOW2`).
const MAX_CONIC_POW2: u32 = 5;

/// Skia's oval (`SkPath::addOval`, clockwise from the rightmost point) with each conic cut into
/// quadratics as its edge builder does.
fn oval(l: f32, t: f32, r: f32, b: f32) -> Option<Path> {
    if !(l < r && t < b) {
        return None;
    }
    let (cx, cy) = (l * 0.5 + r * 0.5, t * 0.5 + b * 0.5);
    let on = [(r, cy), (cx, b), (l, cy), (cx, t), (r, cy)];
    let corners = [(r, b), (l, b), (l, t), (r, t)];
    let mut pb = PathBuilder::new();
    pb.move_to(r, cy);
    for (i, &c) in corners.iter().enumerate() {
        let (p0, p2) = (on[i], on[i + 1]);
        for [_, q1, q2] in conic_quads([p0, c, p2], std::f32::consts::FRAC_1_SQRT_2) {
            pb.quad_to(q1.0, q1.1, q2.0, q2.1);
        }
    }
    pb.close();
    pb.finish()
}

type Pt = (f32, f32);

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
    let mut conics = vec![(p, w)];
    for _ in 0..pow2 {
        conics = conics.into_iter().flat_map(|(c, w)| halve(c, w)).collect();
    }
    conics.into_iter().map(|(c, _)| c).collect()
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
        let oval = device_oval(&circle, Transform::from_scale(2.0, 2.0)).unwrap();
        let b = oval.bounds();
        for (got, want) in [(b.left(), 20.0), (b.top(), 40.0), (b.right(), 140.0), (b.bottom(), 160.0)] {
            // The quadratics' points come from float midpoint arithmetic, as in Skia.
            assert!((got - want).abs() < 1e-4, "{got} vs {want}");
        }
        // A radius of 60 device pixels needs 2^2 quadratics per quarter within 0.25 px.
        assert_eq!(quads(&oval), 16);
        // A small one is one quadratic per quarter, through the bounding box's corners.
        let ellipse = usvg_path(&svg(r#"<ellipse cx="50" cy="50" rx="3" ry="2"/>"#));
        let small = device_oval(&ellipse, Transform::identity()).unwrap();
        assert_eq!(quads(&small), 4);
        assert!(
            small.segments().any(|s| s == PathSegment::QuadTo(Point::from_xy(53.0, 52.0), Point::from_xy(50.0, 52.0)))
        );
        // Rotated or skewed device transforms keep usvg's outline.
        assert!(device_oval(&circle, Transform::from_rotate(30.0)).is_none());
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
            assert!(device_oval(&usvg_path(&svg(d)), Transform::identity()).is_none(), "{d}");
        }
        // The same clockwise arcs from the rightmost point are an ellipse in usvg's form.
        let d = "M 70 50 A 20 20 0 0 1 50 70 A 20 20 0 0 1 30 50 A 20 20 0 0 1 50 30 A 20 20 0 0 1 70 50 Z";
        assert!(device_oval(&usvg_path(&svg(d)), Transform::identity()).is_some());
    }
}
