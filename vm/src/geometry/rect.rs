//! scratch-render's `Rectangle`: the axis-aligned boxes of bounds, fencing and queries.

use crate::util::math::{ceil_f64, floor_f64, js_max, js_min};

/// An axis-aligned rectangle in Scratch coordinates (+y up), as scratch-render's `Rectangle`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    /// Left edge.
    pub left: f64,
    /// Right edge.
    pub right: f64,
    /// Bottom edge.
    pub bottom: f64,
    /// Top edge.
    pub top: f64,
}

impl Rect {
    /// The whole plane (a box that excludes nothing).
    pub const UNBOUNDED: Rect =
        Rect { left: f64::NEG_INFINITY, right: f64::INFINITY, bottom: f64::NEG_INFINITY, top: f64::INFINITY };

    /// A rectangle from its four edges.
    pub fn new(left: f64, right: f64, bottom: f64, top: f64) -> Self {
        Self { left, right, bottom, top }
    }

    /// `Rectangle.width` (absolute difference).
    pub fn width(&self) -> f64 {
        (self.left - self.right).abs()
    }

    /// `Rectangle.height` (absolute difference).
    pub fn height(&self) -> f64 {
        (self.top - self.bottom).abs()
    }

    /// `Rectangle.intersects`.
    pub fn intersects(&self, o: &Rect) -> bool {
        self.left <= o.right && o.left <= self.right && self.top >= o.bottom && o.top >= self.bottom
    }

    /// `Rectangle.intersect`.
    pub fn intersect(&self, o: &Rect) -> Rect {
        Rect {
            left: self.left.max(o.left),
            right: self.right.min(o.right),
            top: self.top.min(o.top),
            bottom: self.bottom.max(o.bottom),
        }
    }

    /// `Rectangle.union`.
    pub fn union(&self, o: &Rect) -> Rect {
        Rect {
            left: self.left.min(o.left),
            right: self.right.max(o.right),
            top: self.top.max(o.top),
            bottom: self.bottom.min(o.bottom),
        }
    }

    /// `Rectangle.clamp` (note the second pass that keeps an off-stage box degenerate).
    pub fn clamp(&mut self, left: f64, right: f64, bottom: f64, top: f64) {
        self.left = js_max(self.left, left);
        self.right = js_min(self.right, right);
        self.bottom = js_max(self.bottom, bottom);
        self.top = js_min(self.top, top);
        self.left = js_min(self.left, right);
        self.right = js_max(self.right, left);
        self.bottom = js_min(self.bottom, top);
        self.top = js_max(self.top, bottom);
    }

    /// `Rectangle.snapToInt`.
    pub fn snap_to_int(&mut self) {
        self.left = floor_f64(self.left);
        self.right = ceil_f64(self.right);
        self.bottom = floor_f64(self.bottom);
        self.top = ceil_f64(self.top);
    }

    /// `Rectangle.initFromPointsAABB`; `None` for no points.
    pub fn from_points(points: impl IntoIterator<Item = [f64; 2]>) -> Option<Rect> {
        let mut r =
            Rect { left: f64::INFINITY, right: f64::NEG_INFINITY, top: f64::NEG_INFINITY, bottom: f64::INFINITY };
        let mut any = false;
        for [x, y] in points {
            any = true;
            if x < r.left {
                r.left = x;
            }
            if x > r.right {
                r.right = x;
            }
            if y > r.top {
                r.top = y;
            }
            if y < r.bottom {
                r.bottom = y;
            }
        }
        any.then_some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamp_keeps_offstage_boxes_degenerate() {
        let mut r = Rect::new(300.0, 350.0, 0.0, 10.0);
        r.clamp(-240.0, 240.0, -180.0, 180.0);
        assert_eq!((r.left, r.right), (240.0, 240.0));
        assert_eq!(r.width(), 0.0);
    }
}
