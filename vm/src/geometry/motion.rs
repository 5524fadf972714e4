//! Motion that needs the renderer: scratch-vm's `if on edge, bounce`
//! (`Scratch3MotionBlocks.ifOnEdgeBounce`) and `RenderedTarget.keepInFence`,
//! computed on a [`Scene`] with the CPU renderer.

use super::drawable::{Placement, RotationStyle};
use super::math::{Rect, atan2, cos, sin, wrap_clamp};
use super::render::{STAGE_HEIGHT, STAGE_WIDTH, Scene};

/// The part of a sprite's state that bouncing reads and changes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpriteMotion {
    /// Position x.
    pub x: f64,
    /// Position y.
    pub y: f64,
    /// Direction in degrees (-179..180).
    pub direction: f64,
    /// Size in percent.
    pub size: f64,
    /// Rotation style.
    pub style: RotationStyle,
}

/// What `if on edge, bounce` does to a sprite that touches an edge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounce {
    /// The new direction (already wrapped as `setDirection` does).
    pub direction: f64,
    /// The position `keepInFence` asks for; `setXY` then fences it as usual.
    pub x: f64,
    /// See `x`.
    pub y: f64,
}

/// `keepInFence(x, y)` with the stage as fence: moves bounds `b` (taken at the sprite's
/// current position `(cx, cy)`) to `(x, y)` and pushes them back inside the stage.
pub fn keep_in_fence(b: Rect, cx: f64, cy: f64, x: f64, y: f64) -> (f64, f64) {
    let (l, r, t, bo) = (b.left + (x - cx), b.right + (x - cx), b.top + (y - cy), b.bottom + (y - cy));
    let (half_w, half_h) = (STAGE_WIDTH / 2.0, STAGE_HEIGHT / 2.0);
    let mut dx = 0.0;
    let mut dy = 0.0;
    if l < -half_w {
        dx += -half_w - l;
    }
    if r > half_w {
        dx += half_w - r;
    }
    if t > half_h {
        dy += half_h - t;
    }
    if bo < -half_h {
        dy += -half_h - bo;
    }
    (x + dx, y + dy)
}

/// `if on edge, bounce` for drawable `me` of `scene` whose target state is `s`: `None` when
/// the sprite touches no edge (nothing changes).
pub fn if_on_edge_bounce(scene: &Scene, me: usize, s: &SpriteMotion) -> Option<Bounce> {
    let bounds = scene.bounds(me);
    let (half_w, half_h) = (STAGE_WIDTH / 2.0, STAGE_HEIGHT / 2.0);
    let dist_left = (half_w + bounds.left).max(0.0);
    let dist_top = (half_h - bounds.top).max(0.0);
    let dist_right = (half_w - bounds.right).max(0.0);
    let dist_bottom = (half_h + bounds.bottom).max(0.0);
    let mut nearest = 0;
    let mut min = f64::INFINITY;
    for (i, d) in [dist_left, dist_top, dist_right, dist_bottom].into_iter().enumerate() {
        if d < min {
            min = d;
            nearest = i;
        }
    }
    if min > 0.0 {
        return None;
    }
    let radians = (90.0 - s.direction) * std::f64::consts::PI / 180.0;
    let mut dx = cos(radians);
    let mut dy = -sin(radians);
    match nearest {
        0 => dx = dx.abs().max(0.2),
        1 => dy = dy.abs().max(0.2),
        2 => dx = -dx.abs().max(0.2),
        _ => dy = -dy.abs().max(0.2),
    }
    let new_direction = atan2(dy, dx) * 180.0 / std::f64::consts::PI + 90.0;
    // setDirection: finite directions are wrapped into (-180, 180].
    let direction = if new_direction.is_finite() { wrap_clamp(new_direction, -179.0, 180.0) } else { s.direction };
    // keepInFence reads the bounds with the new direction.
    let mut turned = scene.clone();
    turned.drawables[me].placement = Placement::from_target(s.x, s.y, direction, s.size, s.style);
    let b = turned.bounds(me);
    let (x, y) = keep_in_fence(b, s.x, s.y, s.x, s.y);
    Some(Bounce { direction, x, y })
}
