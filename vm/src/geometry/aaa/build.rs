//! From a device path to Skia's sorted analytic edges (`SkEdgeBuilder`, unclipped): curves
//! cut at their y extrema in single precision as `SkGeometry` cuts them, vertical lines that
//! continue or cancel each other combined.

use super::clip::{Clip, Piece, clip_cubic, clip_line, clip_quad};
use super::edge::Edge;
use resvg::tiny_skia::{Path, PathSegment};

/// A point in single precision.
pub type Pt = (f32, f32);

/// Combining a new vertical line with the previous edge (`SkEdgeBuilder::Combine`).
enum Combine {
    No,
    Partial,
    Total,
}

/// One segment of a path as Skia's edge iterator gives it (closing lines included).
#[derive(Clone, Copy, Debug)]
enum Seg {
    Line([Pt; 2]),
    Quad([Pt; 3]),
    Cubic([Pt; 4]),
}

/// The path's segments, every contour closed by a line back to its start.
fn segments(path: &Path) -> Vec<Seg> {
    let mut out = Vec::new();
    let mut start: Pt = (0.0, 0.0);
    let mut last: Pt = (0.0, 0.0);
    let mut open = false;
    let close = |out: &mut Vec<Seg>, last: Pt, start: Pt, open: &mut bool| {
        if *open {
            out.push(Seg::Line([last, start]));
        }
        *open = false;
    };
    for seg in path.segments() {
        match seg {
            PathSegment::MoveTo(p) => {
                close(&mut out, last, start, &mut open);
                start = (p.x, p.y);
                last = start;
            }
            PathSegment::LineTo(p) => {
                out.push(Seg::Line([last, (p.x, p.y)]));
                last = (p.x, p.y);
                open = true;
            }
            PathSegment::QuadTo(b, c) => {
                out.push(Seg::Quad([last, (b.x, b.y), (c.x, c.y)]));
                last = (c.x, c.y);
                open = true;
            }
            PathSegment::CubicTo(b, c, d) => {
                out.push(Seg::Cubic([last, (b.x, b.y), (c.x, c.y), (d.x, d.y)]));
                last = (d.x, d.y);
                open = true;
            }
            PathSegment::Close => close(&mut out, last, start, &mut open),
        }
    }
    close(&mut out, last, start, &mut open);
    out
}

/// The path's edges in path order (not yet sorted), clipped to `clip` when the path is not
/// inside it (`SkEdgeBuilder::build`).
pub fn edges(path: &Path, clip: Option<&Clip>) -> Vec<Edge> {
    let mut out: Vec<Edge> = Vec::new();
    let mut pieces = Vec::new();
    for seg in segments(path) {
        match clip {
            Some(c) => {
                pieces.clear();
                match seg {
                    Seg::Line(l) => clip_line(l, c, &mut pieces),
                    Seg::Quad(q) => clip_quad(q, c, &mut pieces),
                    Seg::Cubic(k) => clip_cubic(k, c, &mut pieces),
                }
                for p in &pieces {
                    match *p {
                        Piece::Line(a, b) => add_line(&mut out, a, b),
                        Piece::Quad(q) => out.extend(Edge::quad(q)),
                        Piece::Cubic(k) => out.extend(Edge::cubic(k)),
                    }
                }
            }
            None => match seg {
                Seg::Line([a, b]) => add_line(&mut out, a, b),
                Seg::Quad(q) => {
                    for q in chop_quad_at_extrema(q, true) {
                        out.extend(Edge::quad(q));
                    }
                }
                Seg::Cubic(k) => {
                    for k in chop_cubic_at_extrema(k, true) {
                        out.extend(Edge::cubic(k));
                    }
                }
            },
        }
    }
    out
}

fn add_line(out: &mut Vec<Edge>, a: Pt, b: Pt) {
    let Some(e) = Edge::line(a, b) else { return };
    let vertical = e.dx == 0 && e.curve_count == 0;
    let combine = match out.last_mut() {
        Some(last) if vertical => combine_vertical(&e, last),
        _ => Combine::No,
    };
    match combine {
        Combine::Total => {
            out.pop();
        }
        Combine::Partial => {}
        Combine::No => out.push(e),
    }
}

/// `SkAnalyticEdgeBuilder::combineVertical`.
fn combine_vertical(edge: &Edge, last: &mut Edge) -> Combine {
    let approx = |a: i32, b: i32| a.wrapping_sub(b).wrapping_abs() < 0x100;
    if last.curve_count != 0 || last.dx != 0 || edge.x != last.x {
        return Combine::No;
    }
    if edge.winding == last.winding {
        if edge.lower_y == last.upper_y {
            last.upper_y = edge.upper_y;
            last.y = last.upper_y;
            return Combine::Partial;
        }
        if approx(edge.upper_y, last.lower_y) {
            last.lower_y = edge.lower_y;
            return Combine::Partial;
        }
        return Combine::No;
    }
    if approx(edge.upper_y, last.upper_y) {
        if approx(edge.lower_y, last.lower_y) {
            return Combine::Total;
        }
        if edge.lower_y < last.lower_y {
            last.upper_y = edge.lower_y;
            last.y = last.upper_y;
            return Combine::Partial;
        }
        last.upper_y = last.lower_y;
        last.y = last.upper_y;
        last.lower_y = edge.lower_y;
        last.winding = edge.winding;
        return Combine::Partial;
    }
    if approx(edge.lower_y, last.lower_y) {
        if edge.upper_y > last.upper_y {
            last.lower_y = edge.upper_y;
            return Combine::Partial;
        }
        last.lower_y = last.upper_y;
        last.upper_y = edge.upper_y;
        last.y = last.upper_y;
        last.winding = edge.winding;
        return Combine::Partial;
    }
    Combine::No
}

/// `valid_unit_divide`: numer / denom when it lies strictly inside (0, 1).
pub fn valid_unit_divide(mut numer: f32, mut denom: f32) -> Option<f32> {
    if numer < 0.0 {
        numer = -numer;
        denom = -denom;
    }
    if denom == 0.0 || numer == 0.0 || numer >= denom {
        return None;
    }
    let r = numer / denom;
    if r.is_nan() || r == 0.0 {
        return None;
    }
    Some(r)
}

fn is_not_monotonic(a: f32, b: f32, c: f32) -> bool {
    let ab = a - b;
    let mut bc = b - c;
    if ab < 0.0 {
        bc = -bc;
    }
    ab == 0.0 || bc < 0.0
}

/// `SkChopQuadAtYExtrema` (`y`) or `SkChopQuadAtXExtrema`: the pieces, each monotonic in that
/// coordinate, the extremum made flat.
pub fn chop_quad_at_extrema(src: [Pt; 3], y: bool) -> Vec<[Pt; 3]> {
    let get = |p: Pt| if y { p.1 } else { p.0 };
    let set = |p: &mut Pt, v: f32| if y { p.1 = v } else { p.0 = v };
    let (a, mut b, c) = (get(src[0]), get(src[1]), get(src[2]));
    if is_not_monotonic(a, b, c) {
        if let Some(t) = valid_unit_divide(a - b, a - b - b + c) {
            let mut d = chop_quad_at(src, t);
            let m = get(d[2]);
            set(&mut d[1], m);
            set(&mut d[3], m);
            return vec![[d[0], d[1], d[2]], [d[2], d[3], d[4]]];
        }
        b = if (a - b).abs() < (b - c).abs() { a } else { c };
    }
    let mut mid = src[1];
    set(&mut mid, b);
    vec![[src[0], mid, src[2]]]
}

/// `SkChopQuadAt`.
pub fn chop_quad_at(src: [Pt; 3], t: f32) -> [Pt; 5] {
    let lerp = |p: Pt, q: Pt| (p.0 + (q.0 - p.0) * t, p.1 + (q.1 - p.1) * t);
    let p01 = lerp(src[0], src[1]);
    let p12 = lerp(src[1], src[2]);
    [src[0], p01, lerp(p01, p12), p12, src[2]]
}

/// `unchecked_mix`: Skia's builds here have no fused multiply-add, so it rounds twice
/// (checked against skia-python: fused products change cubic edges by a few alpha).
fn mix(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

fn mix_pt(a: Pt, b: Pt, t: f32) -> Pt {
    (mix(a.0, b.0, t), mix(a.1, b.1, t))
}

/// `SkFindUnitQuadRoots`: the roots of `a t² + b t + c` in (0, 1), ascending, a double root once.
pub fn unit_quad_roots(a: f32, b: f32, c: f32) -> Vec<f32> {
    if a == 0.0 {
        return valid_unit_divide(-c, b).into_iter().collect();
    }
    let dr = b as f64 * b as f64 - 4.0 * a as f64 * c as f64;
    if dr < 0.0 {
        return Vec::new();
    }
    let r = dr.sqrt() as f32;
    if !r.is_finite() {
        return Vec::new();
    }
    let q = if b < 0.0 { -(b - r) / 2.0 } else { -(b + r) / 2.0 };
    let mut roots: Vec<f32> = Vec::with_capacity(2);
    roots.extend(valid_unit_divide(q, a));
    roots.extend(valid_unit_divide(c, q));
    if roots.len() == 2 {
        if roots[0] > roots[1] {
            roots.swap(0, 1);
        } else if roots[0] == roots[1] {
            roots.pop();
        }
    }
    roots
}

/// `SkChopCubicAtYExtrema` (`y`) or `SkChopCubicAtXExtrema`.
pub fn chop_cubic_at_extrema(src: [Pt; 4], y: bool) -> Vec<[Pt; 4]> {
    let get = |p: Pt| if y { p.1 } else { p.0 };
    let (a, b, c, d) = (get(src[0]), get(src[1]), get(src[2]), get(src[3]));
    let ts = unit_quad_roots(d - a + 3.0 * (b - c), 2.0 * (a - b - b + c), b - a);
    let flat = |dst: &mut [Pt], k: usize| {
        let v = get(dst[k]);
        for j in [k - 1, k + 1] {
            if y { dst[j].1 = v } else { dst[j].0 = v }
        }
    };
    match ts.as_slice() {
        [t] => {
            let mut dst = chop_cubic_at(src, *t);
            flat(&mut dst, 3);
            vec![[dst[0], dst[1], dst[2], dst[3]], [dst[3], dst[4], dst[5], dst[6]]]
        }
        [t0, t1] => {
            let mut dst = chop_cubic_at2(src, *t0, *t1);
            flat(&mut dst, 3);
            flat(&mut dst, 6);
            vec![[dst[0], dst[1], dst[2], dst[3]], [dst[3], dst[4], dst[5], dst[6]], [dst[6], dst[7], dst[8], dst[9]]]
        }
        _ => vec![src],
    }
}

/// `SkChopCubicAt` at one `t`.
pub fn chop_cubic_at(src: [Pt; 4], t: f32) -> [Pt; 7] {
    if t == 1.0 {
        return [src[0], src[1], src[2], src[3], src[3], src[3], src[3]];
    }
    let ab = mix_pt(src[0], src[1], t);
    let bc = mix_pt(src[1], src[2], t);
    let cd = mix_pt(src[2], src[3], t);
    let abc = mix_pt(ab, bc, t);
    let bcd = mix_pt(bc, cd, t);
    let abcd = mix_pt(abc, bcd, t);
    [src[0], ab, abc, abcd, bcd, cd, src[3]]
}

/// The two-cut chop, both cuts computed from the whole curve as Skia's SIMD lanes do.
fn chop_cubic_at2(src: [Pt; 4], t0: f32, t1: f32) -> [Pt; 10] {
    if t1 == 1.0 {
        let d = chop_cubic_at(src, t0);
        return [d[0], d[1], d[2], d[3], d[4], d[5], d[6], src[3], src[3], src[3]];
    }
    let at = |t: f32| {
        let ab = mix_pt(src[0], src[1], t);
        let bc = mix_pt(src[1], src[2], t);
        let cd = mix_pt(src[2], src[3], t);
        let abc = mix_pt(ab, bc, t);
        let bcd = mix_pt(bc, cd, t);
        (ab, bc, cd, abc, bcd, mix_pt(abc, bcd, t))
    };
    let (ab0, _, _, abc0, bcd0, abcd0) = at(t0);
    let (_, _, cd1, abc1, bcd1, abcd1) = at(t1);
    let mid0 = mix_pt(abc0, bcd0, t1);
    let mid1 = mix_pt(abc1, bcd1, t0);
    [src[0], ab0, abc0, abcd0, mid0, mid1, abcd1, bcd1, cd1, src[3]]
}
