//! Distance values for branch distances of sensing blocks (Whisker paper §5.2.4, as
//! Whisker's scratch-vm fork computes them in `execute.js`, branch `emse22`):
//! centre distances for sprites and the mouse pointer, the distance of the centre to the
//! nearest stage edge, and a breadth-first colour search on a sample grid for colours.

use super::math::{Rect, hypot};
use super::render::{STAGE_HEIGHT, STAGE_WIDTH, Scene};

/// Whisker's `touching edge` distance: the smallest distance of the sprite's centre to a stage edge.
pub fn edge_distance(x: f64, y: f64) -> f64 {
    let (w, h) = (STAGE_WIDTH / 2.0, STAGE_HEIGHT / 2.0);
    (w + x).min(h + y).min(w - x).min(h - y)
}

/// `sensing_distanceto`: the Euclidean distance between two centres.
pub fn centre_distance(x0: f64, y0: f64, x1: f64, y1: f64) -> f64 {
    let (dx, dy) = (x0 - x1, y0 - y1);
    (dx * dx + dy * dy).sqrt()
}

/// The stage as a search area.
pub fn stage_bounds() -> Rect {
    Rect::new(-STAGE_WIDTH / 2.0, STAGE_WIDTH / 2.0, -STAGE_HEIGHT / 2.0, STAGE_HEIGHT / 2.0)
}

/// Whisker's `PointQueueSet`: points as numbers `(x − left)·width + (y − bottom)` in insertion
/// order (a JavaScript `Set`). Different points can share a number; that is reproduced.
struct PointSet {
    offset_x: i64,
    offset_y: i64,
    width: i64,
    order: Vec<i64>,
    seen: std::collections::BTreeSet<i64>,
}

impl PointSet {
    fn new(b: &Rect) -> Self {
        let left = b.left.trunc() as i64;
        let right = b.right.trunc() as i64;
        PointSet {
            offset_x: left,
            offset_y: b.bottom.trunc() as i64,
            // A zero width would divide by zero when reading points back; one keeps the grid usable.
            width: (right - left).max(1),
            order: Vec::new(),
            seen: std::collections::BTreeSet::new(),
        }
    }

    fn key(&self, p: (i64, i64)) -> i64 {
        (p.0 - self.offset_x) * self.width + (p.1 - self.offset_y)
    }

    fn point(&self, n: i64) -> (i64, i64) {
        (n / self.width + self.offset_x, n % self.width + self.offset_y)
    }

    fn has(&self, p: (i64, i64)) -> bool {
        self.seen.contains(&self.key(p))
    }

    fn push(&mut self, p: (i64, i64)) {
        let k = self.key(p);
        if self.seen.insert(k) {
            self.order.push(k);
        }
    }
}

/// The result of a colour search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColorSearch {
    /// Distance from the start to the first match, divided by the search area's diagonal;
    /// 1 when the colour was not found.
    pub distance: f64,
    /// Where the colour was found.
    pub found: Option<(i64, i64)>,
}

/// Whisker's `fuzzyFindColor`: walks a grid over `bounds` outwards from `start` (neighbours
/// first, spacing chosen so that about 48 × 36 points are sampled) and returns the distance to
/// the first point where `sample` gives a colour matching `color` (5/5/4 bits, as scratch-render).
pub fn fuzzy_find_color(
    start: (f64, f64),
    bounds: &Rect,
    color: [u8; 3],
    mut sample: impl FnMut(f64, f64) -> [u8; 3],
) -> ColorSearch {
    let diameter = hypot(bounds.top - bounds.bottom, bounds.right - bounds.left);
    let width = (bounds.right - bounds.left).ceil();
    let height = (bounds.top - bounds.bottom).ceil();
    let area = width * height;
    let max_samples = 48.0 * 36.0;
    let space = ((area / max_samples).sqrt().trunc() as i64).max(1);
    let in_x = |x: i64| bounds.left <= x as f64 && x as f64 <= bounds.right;
    let in_y = |y: i64| bounds.bottom <= y as f64 && y as f64 <= bounds.top;
    let mut visited = PointSet::new(bounds);
    let mut pending = PointSet::new(bounds);
    let first = (start.0.trunc() as i64, start.1.trunc() as i64);
    pending.push(first);
    visited.push(first);
    let mut i = 0;
    // Bounded: every pending point is a distinct key of a finite grid (plus the start point).
    while i < pending.order.len() {
        let (x, y) = pending.point(pending.order[i]);
        i += 1;
        for nx in [x - space, x, x + space] {
            if !in_x(nx) {
                continue;
            }
            for ny in [y - space, y, y + space] {
                if in_y(ny) && !visited.has((nx, ny)) {
                    visited.push((nx, ny));
                    pending.push((nx, ny));
                }
            }
        }
        let c = sample(x as f64, y as f64);
        if matches(color, c) {
            let d = hypot(start.0 - x as f64, start.1 - y as f64);
            return ColorSearch { distance: d / diameter, found: Some((x, y)) };
        }
    }
    ColorSearch { distance: 1.0, found: None }
}

fn matches(a: [u8; 3], b: [u8; 3]) -> bool {
    (a[0] & 0xf8) == (b[0] & 0xf8) && (a[1] & 0xf8) == (b[1] & 0xf8) && (a[2] & 0xf0) == (b[2] & 0xf0)
}

/// Whisker's branch distance of a false `touching color`: how far from drawable `me`'s centre
/// the colour is drawn by the other visible drawables (normalised by the stage diagonal; 1 when
/// nowhere on the stage).
pub fn touching_color_distance(scene: &Scene, me: usize, color: [u8; 3]) -> f64 {
    let p = scene.drawables[me].placement;
    let mut samples = scene.color_sampler(Some(me));
    fuzzy_find_color((p.x, p.y), &stage_bounds(), color, |x, y| samples.sample(x, y)).distance
}

/// Whisker's branch distance of a false `color (c) is touching (target)`: 1 when the sprite
/// itself does not show colour `c`, else the distance from where it shows it to `target`.
pub fn color_touching_color_distance(scene: &Scene, me: usize, mine: [u8; 3], target: [u8; 3]) -> f64 {
    let p = scene.drawables[me].placement;
    let bounds = scene.bounds(me);
    let mut own = scene.own_color_sampler(me);
    let found = fuzzy_find_color((p.x, p.y), &bounds, mine, |x, y| own.sample(x, y));
    let Some((fx, fy)) = found.found else {
        return 1.0;
    };
    let mut samples = scene.color_sampler(Some(me));
    fuzzy_find_color((fx as f64, fy as f64), &stage_bounds(), target, |x, y| samples.sample(x, y)).distance
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_distance_is_the_nearest_edge() {
        assert_eq!(edge_distance(0.0, 0.0), 180.0);
        assert_eq!(edge_distance(230.0, 0.0), 10.0);
        assert_eq!(edge_distance(0.0, -175.0), 5.0);
    }

    #[test]
    fn colour_search_walks_outwards() {
        // A red half-plane x ≥ 100 on the stage, searched from the origin.
        let r = fuzzy_find_color((0.0, 0.0), &stage_bounds(), [255, 0, 0], |x, _| {
            if x >= 100.0 { [255, 0, 0] } else { [255, 255, 255] }
        });
        let (x, _) = r.found.expect("found");
        // The grid spacing on the stage is 10: the first red column reached is x = 100.
        assert_eq!(x, 100);
        assert!(r.distance > 0.15 && r.distance < 0.25, "{}", r.distance);
        let none = fuzzy_find_color((0.0, 0.0), &stage_bounds(), [0, 0, 255], |_, _| [255, 255, 255]);
        assert_eq!(none, ColorSearch { distance: 1.0, found: None });
    }
}
