//! Skia's clipping of a path's edges to the canvas before they are built (`SkEdgeClipper`,
//! `SkLineClipper`): each piece is cut at the canvas's top and bottom, and what lies left (or,
//! unless the shape is convex, right) of it becomes a vertical line on its side.
//!
//! Cubics crossing a canvas side are cut where Skia's double-precision intercept solver cuts
//! them; here that root is found by bisection in double precision (the same root to well
//! below a float's resolution, not Skia's solver step by step).

use super::build::{Pt, chop_cubic_at, chop_cubic_at_extrema, chop_quad_at, chop_quad_at_extrema, unit_quad_roots};

/// One clipped piece, in the direction of the original.
#[derive(Clone, Copy, Debug)]
pub enum Piece {
    Line(Pt, Pt),
    Quad([Pt; 3]),
    Cubic([Pt; 4]),
}

/// The canvas, as `SkRect::Make` of its integer bounds.
#[derive(Clone, Copy, Debug)]
pub struct Clip {
    pub left: f32,
    pub top: f32,
    pub right: f32,
    pub bottom: f32,
    /// Pieces wholly right of the canvas may be dropped (not for a convex shape, whose
    /// walker needs both edges).
    pub cull_right: bool,
}

fn pin_unsorted(v: f64, a: f64, b: f64) -> f64 {
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    v.clamp(lo, hi)
}

fn sect_with_horizontal(src: [Pt; 2], y: f32) -> f32 {
    let dy = src[1].1 - src[0].1;
    if dy.abs() <= 1.0 / 4096.0 {
        return (src[0].0 + src[1].0) * 0.5;
    }
    let (x0, y0, x1, y1) = (src[0].0 as f64, src[0].1 as f64, src[1].0 as f64, src[1].1 as f64);
    let r = x0 + (y as f64 - y0) * (x1 - x0) / (y1 - y0);
    pin_unsorted(r, x0, x1) as f32
}

fn sect_clamp_with_vertical(src: [Pt; 2], x: f32) -> f32 {
    let dx = src[1].0 - src[0].0;
    let y = if dx.abs() <= 1.0 / 4096.0 {
        (src[0].1 + src[1].1) * 0.5
    } else {
        let (x0, y0, x1, y1) = (src[0].0 as f64, src[0].1 as f64, src[1].0 as f64, src[1].1 as f64);
        (y0 + (x as f64 - x0) * (y1 - y0) / (x1 - x0)) as f32
    };
    pin_unsorted(y as f64, src[0].1 as f64, src[1].1 as f64) as f32
}

/// `SkLineClipper::ClipLine`.
pub fn clip_line(pts: [Pt; 2], c: &Clip, out: &mut Vec<Piece>) {
    let (i0, i1) = if pts[0].1 < pts[1].1 { (0, 1) } else { (1, 0) };
    if pts[i1].1 <= c.top || pts[i0].1 >= c.bottom {
        return;
    }
    let mut tmp = pts;
    if pts[i0].1 < c.top {
        tmp[i0] = (sect_with_horizontal(pts, c.top), c.top);
    }
    if tmp[i1].1 > c.bottom {
        tmp[i1] = (sect_with_horizontal(pts, c.bottom), c.bottom);
    }
    let (i0, i1, mut reverse) = if pts[0].0 < pts[1].0 { (0, 1, false) } else { (1, 0, true) };
    let result: Vec<Pt> = if tmp[i1].0 <= c.left {
        reverse = false;
        vec![(c.left, tmp[0].1), (c.left, tmp[1].1)]
    } else if tmp[i0].0 >= c.right {
        if c.cull_right {
            return;
        }
        reverse = false;
        vec![(c.right, tmp[0].1), (c.right, tmp[1].1)]
    } else {
        let mut r = Vec::with_capacity(4);
        if tmp[i0].0 < c.left {
            r.push((c.left, tmp[i0].1));
            r.push((c.left, sect_clamp_with_vertical(tmp, c.left)));
        } else {
            r.push(tmp[i0]);
        }
        if tmp[i1].0 > c.right {
            r.push((c.right, sect_clamp_with_vertical(tmp, c.right)));
            r.push((c.right, tmp[i1].1));
        } else {
            r.push(tmp[i1]);
        }
        r
    };
    let mut pts = result;
    if reverse {
        pts.reverse();
    }
    for w in pts.windows(2) {
        out.push(Piece::Line(w[0], w[1]));
    }
}

fn v_line(x: f32, y0: f32, y1: f32, reverse: bool, out: &mut Vec<Piece>) {
    let (a, b) = if reverse { (y1, y0) } else { (y0, y1) };
    out.push(Piece::Line((x, a), (x, b)));
}

fn push_quad(p: [Pt; 3], reverse: bool, out: &mut Vec<Piece>) {
    out.push(Piece::Quad(if reverse { [p[2], p[1], p[0]] } else { p }));
}

fn push_cubic(p: [Pt; 4], reverse: bool, out: &mut Vec<Piece>) {
    out.push(Piece::Cubic(if reverse { [p[3], p[2], p[1], p[0]] } else { p }));
}

/// `chopMonoQuadAt`: the first root of a monotonic quadratic's coordinate reaching `target`.
fn mono_quad_t(c0: f32, c1: f32, c2: f32, target: f32) -> Option<f32> {
    unit_quad_roots(c0 - c1 - c1 + c2, 2.0 * (c1 - c0), c0 - target).first().copied()
}

fn chop_quad_in_y(pts: &mut [Pt; 3], c: &Clip) {
    if pts[0].1 < c.top {
        if let Some(t) = mono_quad_t(pts[0].1, pts[1].1, pts[2].1, c.top) {
            let mut tmp = chop_quad_at(*pts, t);
            tmp[2].1 = c.top;
            tmp[3].1 = tmp[3].1.max(c.top);
            pts[0] = tmp[2];
            pts[1] = tmp[3];
        } else {
            for p in pts.iter_mut() {
                p.1 = p.1.max(c.top);
            }
        }
    }
    if pts[2].1 > c.bottom {
        if let Some(t) = mono_quad_t(pts[0].1, pts[1].1, pts[2].1, c.bottom) {
            let mut tmp = chop_quad_at(*pts, t);
            tmp[1].1 = tmp[1].1.min(c.bottom);
            tmp[2].1 = c.bottom;
            pts[1] = tmp[1];
            pts[2] = tmp[2];
        } else {
            for p in pts.iter_mut() {
                p.1 = p.1.min(c.bottom);
            }
        }
    }
}

fn clip_mono_quad(src: [Pt; 3], c: &Clip, out: &mut Vec<Piece>) {
    let mut reverse = src[0].1 > src[2].1;
    let mut pts = if reverse { [src[2], src[1], src[0]] } else { src };
    if pts[2].1 <= c.top || pts[0].1 >= c.bottom {
        return;
    }
    chop_quad_in_y(&mut pts, c);
    if pts[0].0 > pts[2].0 {
        pts.swap(0, 2);
        reverse = !reverse;
    }
    if pts[2].0 <= c.left {
        v_line(c.left, pts[0].1, pts[2].1, reverse, out);
        return;
    }
    if pts[0].0 >= c.right {
        if !c.cull_right {
            v_line(c.right, pts[0].1, pts[2].1, reverse, out);
        }
        return;
    }
    if pts[0].0 < c.left {
        if let Some(t) = mono_quad_t(pts[0].0, pts[1].0, pts[2].0, c.left) {
            let mut tmp = chop_quad_at(pts, t);
            v_line(c.left, tmp[0].1, tmp[2].1, reverse, out);
            tmp[2].0 = c.left;
            tmp[3].0 = tmp[3].0.max(c.left);
            pts[0] = tmp[2];
            pts[1] = tmp[3];
        } else {
            v_line(c.left, pts[0].1, pts[2].1, reverse, out);
            return;
        }
    }
    if pts[2].0 > c.right {
        if let Some(t) = mono_quad_t(pts[0].0, pts[1].0, pts[2].0, c.right) {
            let mut tmp = chop_quad_at(pts, t);
            tmp[1].0 = tmp[1].0.min(c.right);
            tmp[2].0 = c.right;
            push_quad([tmp[0], tmp[1], tmp[2]], reverse, out);
            v_line(c.right, tmp[2].1, tmp[4].1, reverse, out);
        } else {
            pts[1].0 = pts[1].0.min(c.right);
            pts[2].0 = pts[2].0.min(c.right);
            push_quad(pts, reverse, out);
        }
    } else {
        push_quad(pts, reverse, out);
    }
}

/// `SkEdgeClipper::clipQuad`.
pub fn clip_quad(src: [Pt; 3], c: &Clip, out: &mut Vec<Piece>) {
    let (t, b) = (
        src.iter().map(|p| p.1).fold(f32::INFINITY, f32::min),
        src.iter().map(|p| p.1).fold(f32::NEG_INFINITY, f32::max),
    );
    if t >= c.bottom || b <= c.top {
        return;
    }
    for y in chop_quad_at_extrema(src, true) {
        for x in chop_quad_at_extrema(y, false) {
            clip_mono_quad(x, c, out);
        }
    }
}

/// `mono_cubic_closestT`: Skia's fallback search when the intercept solver finds no root.
fn mono_cubic_closest_t(src: [f32; 4], x: f32) -> f32 {
    let mut t = 0.5f32;
    let mut best_t = 0.5f32;
    let mut step = 0.25f32;
    let d = src[0];
    let a = src[3] + 3.0 * (src[1] - src[2]) - d;
    let b = 3.0 * (src[2] - src[1] - src[1] + d);
    let cc = 3.0 * (src[1] - d);
    let x = x - d;
    let mut closest = f32::MAX;
    loop {
        let loc = ((a * t + b) * t + cc) * t;
        let dist = (loc - x).abs();
        if closest > dist {
            closest = dist;
            best_t = t;
        }
        let last_t = t;
        t += if loc < x { step } else { -step };
        step *= 0.5;
        if !(closest > 0.25 && last_t != t) {
            break;
        }
    }
    best_t
}

/// `SkChopMonoCubicAtY`/`AtX`: the cut where the coordinate reaches `v`, computed and cut in
/// double precision, then rounded to floats; Skia's closest-t search when there is no root.
fn chop_mono_cubic_at(src: [Pt; 4], v: f32, y_axis: bool) -> [Pt; 7] {
    let coord = |p: Pt| if y_axis { p.1 } else { p.0 };
    let c: [f64; 4] = [coord(src[0]) as f64, coord(src[1]) as f64, coord(src[2]) as f64, coord(src[3]) as f64];
    let eval = |t: f64| {
        let u = 1.0 - t;
        u * u * u * c[0] + 3.0 * u * u * t * c[1] + 3.0 * u * t * t * c[2] + t * t * t * c[3]
    };
    let target = v as f64;
    let (f0, f1) = (eval(0.0) - target, eval(1.0) - target);
    if f0 * f1 <= 0.0 && (f0 != 0.0 || f1 != 0.0) {
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        let rising = f1 > f0;
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            let f = eval(mid) - target;
            if (f < 0.0) == rising {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let t = 0.5 * (lo + hi);
        let d: Vec<(f64, f64)> = src.iter().map(|p| (p.0 as f64, p.1 as f64)).collect();
        let lerp = |a: (f64, f64), b: (f64, f64)| (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
        let ab = lerp(d[0], d[1]);
        let bc = lerp(d[1], d[2]);
        let cd = lerp(d[2], d[3]);
        let abc = lerp(ab, bc);
        let bcd = lerp(bc, cd);
        let abcd = lerp(abc, bcd);
        let f = |p: (f64, f64)| (p.0 as f32, p.1 as f32);
        return [src[0], f(ab), f(abc), f(abcd), f(bcd), f(cd), src[3]];
    }
    let cs = [coord(src[0]), coord(src[1]), coord(src[2]), coord(src[3])];
    chop_cubic_at(src, mono_cubic_closest_t(cs, v))
}

fn chop_cubic_in_y(pts: &mut [Pt; 4], c: &Clip) {
    if pts[0].1 < c.top {
        let mut tmp = chop_mono_cubic_at(*pts, c.top, true);
        if tmp[3].1 < c.top && tmp[4].1 < c.top && tmp[5].1 < c.top {
            tmp = chop_mono_cubic_at([tmp[3], tmp[4], tmp[5], tmp[6]], c.top, true);
        }
        tmp[3].1 = c.top;
        tmp[4].1 = tmp[4].1.max(c.top);
        pts[0] = tmp[3];
        pts[1] = tmp[4];
        pts[2] = tmp[5];
    }
    if pts[3].1 > c.bottom {
        let mut tmp = chop_mono_cubic_at(*pts, c.bottom, true);
        tmp[3].1 = c.bottom;
        tmp[2].1 = tmp[2].1.min(c.bottom);
        pts[1] = tmp[1];
        pts[2] = tmp[2];
        pts[3] = tmp[3];
    }
}

fn clip_mono_cubic(src: [Pt; 4], c: &Clip, out: &mut Vec<Piece>) {
    let mut reverse = src[0].1 > src[3].1;
    let mut pts = if reverse { [src[3], src[2], src[1], src[0]] } else { src };
    if pts[3].1 <= c.top || pts[0].1 >= c.bottom {
        return;
    }
    chop_cubic_in_y(&mut pts, c);
    if pts[0].0 > pts[3].0 {
        pts = [pts[3], pts[2], pts[1], pts[0]];
        reverse = !reverse;
    }
    if pts[3].0 <= c.left {
        v_line(c.left, pts[0].1, pts[3].1, reverse, out);
        return;
    }
    if pts[0].0 >= c.right {
        if !c.cull_right {
            v_line(c.right, pts[0].1, pts[3].1, reverse, out);
        }
        return;
    }
    if pts[0].0 < c.left {
        let mut tmp = chop_mono_cubic_at(pts, c.left, false);
        v_line(c.left, tmp[0].1, tmp[3].1, reverse, out);
        tmp[3].0 = c.left;
        tmp[4].0 = tmp[4].0.max(c.left);
        pts[0] = tmp[3];
        pts[1] = tmp[4];
        pts[2] = tmp[5];
    }
    if pts[3].0 > c.right {
        let mut tmp = chop_mono_cubic_at(pts, c.right, false);
        tmp[3].0 = c.right;
        tmp[2].0 = tmp[2].0.min(c.right);
        push_cubic([tmp[0], tmp[1], tmp[2], tmp[3]], reverse, out);
        v_line(c.right, tmp[3].1, tmp[6].1, reverse, out);
    } else {
        push_cubic(pts, reverse, out);
    }
}

/// `SkEdgeClipper::clipCubic`.
pub fn clip_cubic(src: [Pt; 4], c: &Clip, out: &mut Vec<Piece>) {
    let ys = src.iter().map(|p| p.1);
    let (t, b) = (ys.clone().fold(f32::INFINITY, f32::min), ys.fold(f32::NEG_INFINITY, f32::max));
    if !(b > c.top && t < c.bottom) {
        return;
    }
    let limit = (1 << 22) as f32;
    if src.iter().any(|p| p.0.abs() > limit || p.1.abs() > limit) {
        clip_line([src[0], src[3]], c, out);
        return;
    }
    for y in chop_cubic_at_extrema(src, true) {
        for x in chop_cubic_at_extrema(y, false) {
            clip_mono_cubic(x, c, out);
        }
    }
}
