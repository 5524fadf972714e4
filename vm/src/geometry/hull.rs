//! Convex hull of a skin's opaque pixels, as `RenderWebGL._getConvexHullPointsForDrawable`
//! computes it: one row per nominal skin pixel, scanning inwards from both sides with
//! bilinear-footprint sampling, then hull.js with infinite concavity (a strict convex
//! hull: duplicate and collinear points removed) when there are four points or more.

use super::effects::Effects;
use super::silhouette::Silhouette;
use crate::util::math::f32r;

/// Hull points `[x, y]` on the skin's nominal pixel grid (y down). The left scan visits
/// x = 0, 1, 2, …; the right scan starts at `width − 1`, so its x values carry the width's
/// fraction. `effects` are the shape-changing effects of the drawable (they move the sample points).
pub fn hull_points(sil: &Silhouette, size: [f64; 2], effects: Option<(&Effects, [f64; 2])>) -> Vec<[f64; 2]> {
    let (width, height) = (size[0], size[1]);
    if !(width > 0.0 && height > 0.0) {
        return Vec::new();
    }
    let touching = |x: f64, y: f64| {
        // `_pixelPos` is a Float32Array.
        let mut p = [f32r(x / width), f32r(y / height)];
        if let Some((e, skin_size)) = effects {
            p = e.transform_point(p, skin_size);
        }
        sil.is_touching_linear(p[0], p[1])
    };
    let mut left: Vec<[f64; 2]> = Vec::new();
    let mut right: Vec<[f64; 2]> = Vec::new();
    let cols = width.ceil() as i64;
    let rows = height.ceil() as i64;
    for y in 0..rows {
        let y = y as f64;
        let Some(lx) = (0..cols).map(|x| x as f64).find(|&x| touching(x, y)) else {
            continue;
        };
        let current = [lx, y];
        while left.len() > 1 {
            let n = left.len();
            if determinant(left[n - 1], left[n - 2], current) > 0.0 {
                break;
            }
            left.pop();
        }
        left.push(current);
        // `for (x = width - 1; x >= 0; x--)`; a row with an opaque pixel always has a rightmost one.
        let mut rx = None;
        let mut x = width - 1.0;
        while x >= 0.0 {
            if touching(x, y) {
                rx = Some(x);
                break;
            }
            x -= 1.0;
        }
        let rx = rx.unwrap_or(lx);
        let current = [rx, y];
        while right.len() > 1 {
            let n = right.len();
            if determinant(right[n - 1], right[n - 2], current) < 0.0 {
                break;
            }
            right.pop();
        }
        right.push(current);
    }
    let mut points = left;
    points.extend(right.into_iter().rev());
    convex_hull(points)
}

fn determinant(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

/// hull.js `hull(points, Infinity)`: fewer than four points are returned as they are;
/// otherwise the monotone-chain convex hull without collinear points.
pub fn convex_hull(points: Vec<[f64; 2]>) -> Vec<[f64; 2]> {
    if points.len() < 4 {
        return points;
    }
    let mut pts = points;
    pts.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    pts.dedup();
    let cross = |o: [f64; 2], a: [f64; 2], b: [f64; 2]| (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
    let chain = |iter: &mut dyn Iterator<Item = [f64; 2]>| {
        let mut out: Vec<[f64; 2]> = Vec::new();
        for p in iter {
            while out.len() >= 2 && cross(out[out.len() - 2], out[out.len() - 1], p) <= 0.0 {
                out.pop();
            }
            out.push(p);
        }
        out.pop();
        out
    };
    let mut lower = chain(&mut pts.iter().copied());
    let upper = chain(&mut pts.iter().rev().copied());
    lower.extend(upper);
    if lower.is_empty() {
        // All points identical after deduplication.
        lower.push(pts[0]);
    }
    lower
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hull_drops_collinear_points() {
        let h = convex_hull(vec![[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0], [1.0, 1.0]]);
        let mut s = h.clone();
        s.sort_by(|a, b| a.partial_cmp(b).expect("finite"));
        assert_eq!(s, vec![[0.0, 0.0], [0.0, 2.0], [2.0, 0.0], [2.0, 2.0]]);
    }

    #[test]
    fn hull_of_a_square_silhouette() {
        // 4×4 texture, opaque 2×2 block in the middle, nominal size 4×4 (resolution 1 grid).
        let mut rgba = vec![0u8; 64];
        for (x, y) in [(1, 1), (2, 1), (1, 2), (2, 2)] {
            rgba[(y * 4 + x) * 4 + 3] = 255;
        }
        let sil = Silhouette::from_rgba(4, 4, rgba);
        let mut h = hull_points(&sil, [4.0, 4.0], None);
        h.sort_by(|a, b| a.partial_cmp(b).expect("finite"));
        // The 4×4 grid samples pixels floor(x·3/4) and, bilinearly, their right/lower
        // neighbours: every grid row and column reaches the block.
        assert_eq!(h, vec![[0.0, 0.0], [0.0, 3.0], [3.0, 0.0], [3.0, 3.0]]);
        // A fractional width: the right scan starts at width − 1.
        let mut h = hull_points(&sil, [3.5, 4.0], None);
        h.sort_by(|a, b| a.partial_cmp(b).expect("finite"));
        assert_eq!(h.last(), Some(&[2.5, 3.0]));
    }
}
