//! Skia's analytic edges (`SkAnalyticEdge` and its quadratic and cubic kinds): a line, or a
//! curve stepped by forward differences into lines, with y snapped to quarter pixels.

use super::fixed::{self as fx, FDot6, Fixed, MAX, ONE};

/// Fractional bits of y that edges keep (quarter pixels).
pub const ACCURACY: i32 = 2;

/// Most curve subdivisions, `2^6` lines.
const MAX_COEFF_SHIFT: i32 = 6;

#[derive(Clone, Copy, Debug, Default)]
pub struct Quad {
    pub qx: Fixed,
    pub qy: Fixed,
    pub qdx: Fixed,
    pub qdy: Fixed,
    pub qddx: Fixed,
    pub qddy: Fixed,
    pub last_x: Fixed,
    pub last_y: Fixed,
    pub snapped_x: Fixed,
    pub snapped_y: Fixed,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Cubic {
    pub cx: Fixed,
    pub cy: Fixed,
    pub cdx: Fixed,
    pub cdy: Fixed,
    pub cddx: Fixed,
    pub cddy: Fixed,
    pub cdddx: Fixed,
    pub cdddy: Fixed,
    pub last_x: Fixed,
    pub last_y: Fixed,
    pub snapped_y: Fixed,
    pub dshift: i32,
}

#[derive(Clone, Copy, Debug)]
pub enum Curve {
    Line,
    Quad(Quad),
    Cubic(Cubic),
}

/// One edge of the active list; `next`/`prev` index the walker's arena.
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    pub next: usize,
    pub prev: usize,
    pub x: Fixed,
    pub dx: Fixed,
    pub upper_x: Fixed,
    pub y: Fixed,
    pub upper_y: Fixed,
    pub lower_y: Fixed,
    pub dy: Fixed,
    /// Lines left of a curve: positive for quadratics, negative for cubics, 0 for a line.
    pub curve_count: i32,
    pub curve_shift: i32,
    pub winding: i32,
    pub curve: Curve,
}

impl Edge {
    /// A sentinel at the head or tail of the list.
    pub fn sentinel(y: Fixed, x: Fixed) -> Edge {
        Edge {
            next: 0,
            prev: 0,
            x,
            dx: 0,
            upper_x: x,
            y,
            upper_y: y,
            lower_y: y,
            dy: MAX,
            curve_count: 0,
            curve_shift: 0,
            winding: 1,
            curve: Curve::Line,
        }
    }

    fn blank(curve: Curve) -> Edge {
        Edge { curve, ..Edge::sentinel(0, 0) }
    }

    /// `SkAnalyticEdge::setLine`; `None` for a line of no height.
    pub fn line(p0: (f32, f32), p1: (f32, f32)) -> Option<Edge> {
        let m = (1 << ACCURACY) as f32;
        let conv = |v: f32| fx::fdot6_to_fixed(fx::scalar_to_fdot6(v * m)) >> ACCURACY;
        let (mut x0, mut y0) = (conv(p0.0), fx::snap_y(conv(p0.1)));
        let (mut x1, mut y1) = (conv(p1.0), fx::snap_y(conv(p1.1)));
        let mut winding = 1;
        if y0 > y1 {
            std::mem::swap(&mut x0, &mut x1);
            std::mem::swap(&mut y0, &mut y1);
            winding = -1;
        }
        let dy = fx::to_fdot6(y1.wrapping_sub(y0));
        if dy == 0 {
            return None;
        }
        let dx = fx::to_fdot6(x1.wrapping_sub(x0));
        let slope = fx::quick_div(dx, dy);
        let mut e = Edge::blank(Curve::Line);
        // Skia compares the 16.16 slope with the 26.6 table's size here, as written.
        e.set(x0, y0, y1, slope, slope.wrapping_abs(), dx, dy);
        e.winding = winding;
        Some(e)
    }

    /// `SkAnalyticEdge::updateLine`: the next line of a curve, with its slope given.
    fn update_line(&mut self, mut x0: Fixed, mut y0: Fixed, mut x1: Fixed, mut y1: Fixed, slope: Fixed) -> bool {
        if y0 > y1 {
            std::mem::swap(&mut x0, &mut x1);
            std::mem::swap(&mut y0, &mut y1);
            self.winding = -self.winding;
        }
        let dx = fx::to_fdot6(x1.wrapping_sub(x0));
        let dy = fx::to_fdot6(y1.wrapping_sub(y0));
        if dy == 0 {
            return false;
        }
        self.set(x0, y0, y1, slope, fx::to_fdot6(slope).wrapping_abs(), dx, dy);
        true
    }

    /// The line from `(x0, y0)` down to `y1` of `slope`; its `dy` (|dy/dx|) from the inverse
    /// table when `table_slope` is small enough for it.
    #[allow(clippy::too_many_arguments)]
    fn set(&mut self, x0: Fixed, y0: Fixed, y1: Fixed, slope: Fixed, table_slope: i32, dx: FDot6, dy: FDot6) {
        self.x = x0;
        self.dx = slope;
        self.upper_x = x0;
        self.y = y0;
        self.upper_y = y0;
        self.lower_y = y1;
        self.dy = if dx == 0 || slope == 0 {
            MAX
        } else if table_slope < fx::INVERSE_TABLE_SIZE {
            fx::quick_inverse(table_slope)
        } else {
            fx::quick_div(dy, dx).wrapping_abs()
        };
    }

    /// `SkAnalyticQuadraticEdge::setQuadratic` of a y-monotonic quadratic.
    pub fn quad(pts: [(f32, f32); 3]) -> Option<Edge> {
        let scale = (1 << (ACCURACY + 6)) as f32;
        let c = |v: f32| fx::trunc(v * scale);
        let (mut x0, mut y0) = (c(pts[0].0), c(pts[0].1));
        let (x1, y1) = (c(pts[1].0), c(pts[1].1));
        let (mut x2, mut y2) = (c(pts[2].0), c(pts[2].1));
        let mut winding = 1;
        if y0 > y2 {
            std::mem::swap(&mut x0, &mut x2);
            std::mem::swap(&mut y0, &mut y2);
            winding = -1;
        }
        if fx::fdot6_round(y0) == fx::fdot6_round(y2) {
            return None;
        }
        let dx = (x1.wrapping_shl(1) - x0 - x2) >> 2;
        let dy = (y1.wrapping_shl(1) - y0 - y2) >> 2;
        let shift = diff_to_shift(dx, dy, ACCURACY).clamp(1, MAX_COEFF_SHIFT);
        let div2 = |v: FDot6| v.wrapping_shl(16 - 6 - 1);
        let a = div2(x0 - x1 - x1 + x2);
        let b = fx::fdot6_to_fixed(x1 - x0);
        let mut q = Quad {
            qx: fx::fdot6_to_fixed(x0),
            qdx: b.wrapping_add(a >> shift),
            qddx: a >> (shift - 1),
            ..Quad::default()
        };
        let a = div2(y0 - y1 - y1 + y2);
        let b = fx::fdot6_to_fixed(y1 - y0);
        q.qy = fx::fdot6_to_fixed(y0);
        q.qdy = b.wrapping_add(a >> shift);
        q.qddy = a >> (shift - 1);
        q.last_x = fx::fdot6_to_fixed(x2);
        q.last_y = fx::fdot6_to_fixed(y2);
        for v in [&mut q.qx, &mut q.qy, &mut q.qdx, &mut q.qdy, &mut q.qddx, &mut q.qddy, &mut q.last_x, &mut q.last_y]
        {
            *v >>= ACCURACY;
        }
        q.qy = fx::snap_y(q.qy);
        q.last_y = fx::snap_y(q.last_y);
        q.snapped_x = q.qx;
        q.snapped_y = q.qy;
        let mut e = Edge::blank(Curve::Quad(q));
        e.winding = winding;
        e.curve_count = 1 << shift;
        e.curve_shift = shift - 1;
        e.update_quadratic().then_some(e)
    }

    /// `SkAnalyticQuadraticEdge::updateQuadratic`: on to the next line of non-zero height.
    pub fn update_quadratic(&mut self) -> bool {
        let Curve::Quad(mut q) = self.curve else { return false };
        let mut success = false;
        let mut count = self.curve_count;
        let (mut oldx, mut oldy) = (q.qx, q.qy);
        let (mut dx, mut dy) = (q.qdx, q.qdy);
        let shift = self.curve_shift;
        let (mut newx, mut newy, mut nsx, mut nsy);
        loop {
            let slope;
            count -= 1;
            if count > 0 {
                newx = oldx.wrapping_add(dx >> shift);
                newy = oldy.wrapping_add(dy >> shift);
                if (dy >> shift).wrapping_abs() >= ONE * 2
                    && ((dy.wrapping_abs() as i64) << 6) > dx.wrapping_abs() as i64
                {
                    let diff_y = fx::to_fdot6(newy.wrapping_sub(q.snapped_y));
                    slope = if diff_y != 0 {
                        fx::quick_div(fx::to_fdot6(newx.wrapping_sub(q.snapped_x)), diff_y)
                    } else {
                        MAX
                    };
                    nsy = q.last_y.min(fx::round_to_fixed(newy));
                    nsx = newx.wrapping_sub(fx::mul(slope, newy.wrapping_sub(nsy)));
                } else {
                    nsy = q.last_y.min(fx::snap_y(newy));
                    nsx = newx;
                    let diff_y = fx::to_fdot6(nsy.wrapping_sub(q.snapped_y));
                    slope = if diff_y != 0 {
                        fx::quick_div(fx::to_fdot6(newx.wrapping_sub(q.snapped_x)), diff_y)
                    } else {
                        MAX
                    };
                }
                dx = dx.wrapping_add(q.qddx);
                dy = dy.wrapping_add(q.qddy);
            } else {
                newx = q.last_x;
                newy = q.last_y;
                nsy = newy;
                nsx = newx;
                let diff_y = fx::to_fdot6(newy.wrapping_sub(q.snapped_y));
                slope =
                    if diff_y != 0 { fx::quick_div(fx::to_fdot6(newx.wrapping_sub(q.snapped_x)), diff_y) } else { MAX };
            }
            if slope < MAX {
                success = self.update_line(q.snapped_x, q.snapped_y, nsx, nsy, slope);
            }
            oldx = newx;
            oldy = newy;
            if count <= 0 || success {
                break;
            }
        }
        q.qx = newx;
        q.qy = newy;
        q.qdx = dx;
        q.qdy = dy;
        q.snapped_x = nsx;
        q.snapped_y = nsy;
        self.curve = Curve::Quad(q);
        self.curve_count = count;
        success
    }

    /// `SkAnalyticCubicEdge::setCubic` of a y-monotonic cubic.
    pub fn cubic(pts: [(f32, f32); 4]) -> Option<Edge> {
        let scale = (1 << (ACCURACY + 6)) as f32;
        let c = |v: f32| fx::trunc(v * scale);
        let mut p: Vec<(i32, i32)> = pts.iter().map(|&(x, y)| (c(x), c(y))).collect();
        let mut winding = 1;
        if p[0].1 > p[3].1 {
            p.reverse();
            winding = -1;
        }
        let [(x0, y0), (x1, y1), (x2, y2), (x3, y3)] = [p[0], p[1], p[2], p[3]];
        if fx::fdot6_round(y0) == fx::fdot6_round(y3) {
            return None;
        }
        let ddx = cubic_delta_from_line(x0, x1, x2, x3);
        let ddy = cubic_delta_from_line(y0, y1, y2, y3);
        let shift = (diff_to_shift(ddx, ddy, 2) + 1).min(MAX_COEFF_SHIFT);
        let mut up = 6;
        let mut down = shift + up - 10;
        if down < 0 {
            down = 0;
            up = 10 - shift;
        }
        let coeffs = |a: i32, b: i32, c: i32, d: i32| {
            let bb = (3 * (b - a)).wrapping_shl(up as u32);
            let cc = (3 * (a - b - b + c)).wrapping_shl(up as u32);
            let dd = (d + 3 * (b - c) - a).wrapping_shl(up as u32);
            (
                bb.wrapping_add(cc >> shift).wrapping_add(dd >> (2 * shift)),
                (2i32.wrapping_mul(cc)).wrapping_add(3i32.wrapping_mul(dd) >> (shift - 1)),
                3i32.wrapping_mul(dd) >> (shift - 1),
            )
        };
        let (cdx, cddx, cdddx) = coeffs(x0, x1, x2, x3);
        let (cdy, cddy, cdddy) = coeffs(y0, y1, y2, y3);
        let mut k = Cubic {
            cx: fx::fdot6_to_fixed(x0),
            cy: fx::fdot6_to_fixed(y0),
            cdx,
            cdy,
            cddx,
            cddy,
            cdddx,
            cdddy,
            last_x: fx::fdot6_to_fixed(x3),
            last_y: fx::fdot6_to_fixed(y3),
            snapped_y: 0,
            dshift: down,
        };
        for v in [
            &mut k.cx,
            &mut k.cy,
            &mut k.cdx,
            &mut k.cdy,
            &mut k.cddx,
            &mut k.cddy,
            &mut k.cdddx,
            &mut k.cdddy,
            &mut k.last_x,
            &mut k.last_y,
        ] {
            *v >>= ACCURACY;
        }
        k.cy = fx::snap_y(k.cy);
        k.snapped_y = k.cy;
        k.last_y = fx::snap_y(k.last_y);
        let mut e = Edge::blank(Curve::Cubic(k));
        e.winding = winding;
        e.curve_count = -(1 << shift);
        e.curve_shift = shift;
        e.update_cubic().then_some(e)
    }

    /// `SkAnalyticCubicEdge::updateCubic`.
    pub fn update_cubic(&mut self) -> bool {
        let Curve::Cubic(mut k) = self.curve else { return false };
        let mut count = self.curve_count;
        let (mut oldx, mut oldy) = (k.cx, k.cy);
        let (ddshift, dshift) = (self.curve_shift, k.dshift);
        let (mut newx, mut newy);
        let mut success;
        loop {
            count += 1;
            if count < 0 {
                newx = oldx.wrapping_add(k.cdx >> dshift);
                k.cdx = k.cdx.wrapping_add(k.cddx >> ddshift);
                k.cddx = k.cddx.wrapping_add(k.cdddx);
                newy = oldy.wrapping_add(k.cdy >> dshift);
                k.cdy = k.cdy.wrapping_add(k.cddy >> ddshift);
                k.cddy = k.cddy.wrapping_add(k.cdddy);
            } else {
                newx = k.last_x;
                newy = k.last_y;
            }
            if newy < oldy {
                newy = oldy;
            }
            let mut nsy = fx::snap_y(newy);
            if k.last_y < nsy {
                nsy = k.last_y;
                count = 0;
            }
            let slope = if fx::to_fdot6(nsy.wrapping_sub(k.snapped_y)) == 0 {
                MAX
            } else {
                fx::fdot6_div(fx::to_fdot6(newx.wrapping_sub(oldx)), fx::to_fdot6(nsy.wrapping_sub(k.snapped_y)))
            };
            success = self.update_line(oldx, k.snapped_y, newx, nsy, slope);
            oldx = newx;
            oldy = newy;
            k.snapped_y = nsy;
            if count >= 0 || success {
                break;
            }
        }
        k.cx = newx;
        k.cy = newy;
        self.curve = Curve::Cubic(k);
        self.curve_count = count;
        success
    }

    /// `SkAnalyticEdge::update`: the next line of a curve; `false` for a line or at its end.
    pub fn update(&mut self) -> bool {
        match self.curve {
            Curve::Line => false,
            Curve::Quad(_) => self.curve_count > 0 && self.update_quadratic(),
            Curve::Cubic(_) => self.curve_count < 0 && self.update_cubic(),
        }
    }

    /// `keepContinuous` and then `update`, as the general walker steps curves.
    pub fn continue_curve(&mut self) -> bool {
        let (x, y, count) = (self.x, self.y, self.curve_count);
        match &mut self.curve {
            Curve::Quad(q) if count > 0 => {
                q.snapped_x = x;
                q.snapped_y = y;
                self.update_quadratic()
            }
            Curve::Cubic(k) if count < 0 => {
                k.cx = x;
                k.snapped_y = y;
                self.update_cubic()
            }
            _ => false,
        }
    }

    /// `goY(y)`: x at `y` on this line.
    pub fn go_y(&mut self, y: Fixed) {
        if y == self.y.wrapping_add(ONE) {
            self.x = self.x.wrapping_add(self.dx);
            self.y = y;
        } else if y != self.y {
            self.x = self.upper_x.wrapping_add(fx::mul(self.dx, y.wrapping_sub(self.upper_y)));
            self.y = y;
        }
    }

    /// `goY(y, yShift)`: one step of a quarter, half or whole pixel.
    pub fn go_y_shift(&mut self, y: Fixed, shift: i32) {
        self.y = y;
        self.x = self.x.wrapping_add(self.dx >> shift);
    }
}

fn cheap_distance(dx: FDot6, dy: FDot6) -> FDot6 {
    let (dx, dy) = (dx.wrapping_abs(), dy.wrapping_abs());
    if dx > dy { dx + (dy >> 1) } else { dy + (dx >> 1) }
}

fn diff_to_shift(dx: FDot6, dy: FDot6, shift_aa: i32) -> i32 {
    let dist = cheap_distance(dx, dy);
    let dist = (dist + (1 << (2 + shift_aa))) >> (3 + shift_aa);
    (32 - (dist as u32).leading_zeros() as i32) >> 1
}

fn cubic_delta_from_line(a: FDot6, b: FDot6, c: FDot6, d: FDot6) -> FDot6 {
    let one = (a * 8 - b * 15 + 6 * c + d).wrapping_mul(19) >> 9;
    let two = (a + 6 * b - c * 15 + d * 8).wrapping_mul(19) >> 9;
    one.wrapping_abs().max(two.wrapping_abs())
}
