//! Numeric helpers that reproduce the browser's arithmetic bit for bit.
//!
//! scratch-render keeps matrices, positions, scales and texture coordinates in
//! `Float32Array`s (twgl), so every store rounds a double to single precision;
//! colours live in `Uint8ClampedArray`s, whose stores round half to even.
//! Reproducing those roundings is what makes "touching at exactly one pixel"
//! agree with the real renderer. Trigonometry and logarithms come from the
//! `libm` crate (a port of the same FreeBSD/fdlibm code V8 uses), never from
//! the platform, so results do not depend on the machine.

/// Rounds a double to single precision and widens it back (a `Float32Array` store).
#[inline]
pub fn f32r(x: f64) -> f64 {
    x as f32 as f64
}

/// `x.floor() as i64`, bit for bit (NaN gives 0, out-of-range values saturate), without the
/// call to libm's `floor` that the baseline x86-64 target makes (no SSE4.1): per-pixel loops
/// call this millions of times.
#[inline]
pub fn floor_i64(x: f64) -> i64 {
    let t = x as i64;
    if (t as f64) > x { t.saturating_sub(1) } else { t }
}

/// 2^52: from here on every double is an integer.
const INTEGRAL: f64 = 4_503_599_627_370_496.0;

/// `x.floor()`, bit for bit (−0 stays −0, NaN and infinities pass through), without libm's call.
#[inline]
pub fn floor_f64(x: f64) -> f64 {
    if x == 0.0 || x.is_nan() || x.abs() >= INTEGRAL {
        return x;
    }
    let t = x as i64 as f64;
    if t > x { t - 1.0 } else { t }
}

/// `x.ceil()`, bit for bit (a negative fraction gives −0), without libm's call.
#[inline]
pub fn ceil_f64(x: f64) -> f64 {
    if x == 0.0 || x.is_nan() || x.abs() >= INTEGRAL {
        return x;
    }
    let t = x as i64 as f64;
    let c = if t < x { t + 1.0 } else { t };
    if c == 0.0 && x < 0.0 { -0.0 } else { c }
}

/// JavaScript `Math.round`: rounds half towards +∞.
#[inline]
pub fn js_round(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let f = floor_f64(x);
    if x - f >= 0.5 { f + 1.0 } else { f }
}

/// A `Uint8ClampedArray` store (`ToUint8Clamp`): clamps to 0..=255 and rounds half to even.
#[inline]
pub fn u8_clamp(x: f64) -> u8 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    if x >= 255.0 {
        return 255;
    }
    // 0 < x < 255: truncation is the floor (no libm call in colour loops).
    let f = x as u8;
    let diff = x - f as f64;
    // Round half to even.
    let up = diff > 0.5 || (diff == 0.5 && f & 1 != 0);
    if up { f + 1 } else { f }
}

/// A `Uint8Array` store (`ToUint8`): truncates towards zero, modulo 256.
#[inline]
pub fn u8_wrap(x: f64) -> u8 {
    if !x.is_finite() {
        return 0;
    }
    (x.trunc().rem_euclid(256.0)) as u8
}

/// Deterministic cosine (fdlibm).
#[inline]
pub fn cos(x: f64) -> f64 {
    libm::cos(x)
}

/// Deterministic sine (fdlibm).
#[inline]
pub fn sin(x: f64) -> f64 {
    libm::sin(x)
}

/// Deterministic base-2 logarithm (fdlibm).
#[inline]
pub fn log2(x: f64) -> f64 {
    libm::log2(x)
}

/// Deterministic `atan2` (fdlibm).
#[inline]
pub fn atan2(y: f64, x: f64) -> f64 {
    libm::atan2(y, x)
}

/// Deterministic `pow` (fdlibm).
#[inline]
pub fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

/// `Math.hypot` for two arguments, as V8 computes it (scaled sum of squares).
pub fn hypot(a: f64, b: f64) -> f64 {
    let (a, b) = (a.abs(), b.abs());
    if a.is_infinite() || b.is_infinite() {
        return f64::INFINITY;
    }
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    let max = a.max(b);
    if max == 0.0 {
        return 0.0;
    }
    // V8: Kahan-compensated sum of (x / max)² then sqrt × max.
    let (x, y) = (a / max, b / max);
    let mut sum = 0.0f64;
    let mut compensation = 0.0f64;
    for v in [x, y] {
        let summand = v * v - compensation;
        let preliminary = sum + summand;
        compensation = (preliminary - sum) - summand;
        sum = preliminary;
    }
    sum.sqrt() * max
}

/// scratch-vm's `MathUtil.wrapClamp`.
pub fn wrap_clamp(n: f64, min: f64, max: f64) -> f64 {
    let range = (max - min) + 1.0;
    n - ((n - min) / range).floor() * range
}

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

/// `Math.max` of two numbers (NaN-propagating).
#[inline]
pub fn js_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) }
}

/// `Math.min` of two numbers (NaN-propagating).
#[inline]
pub fn js_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() { f64::NAN } else { a.min(b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_round_rounds_half_up() {
        assert_eq!(js_round(2.5), 3.0);
        assert_eq!(js_round(-2.5), -2.0);
        assert_eq!(js_round(-2.6), -3.0);
        assert_eq!(js_round(0.49999999999999994), 0.0);
    }

    #[test]
    fn floor_and_ceil_equal_libm_bit_for_bit() {
        let mut cases = vec![0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1e-300, -1e-300, 2.5, -2.5, f64::NAN, f64::INFINITY];
        cases.extend([f64::NEG_INFINITY, 4503599627370495.5, -4503599627370495.5, 9e15, -9e15, 1e300, -1e300]);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push(f64::from_bits(x));
            cases.push((x % 4_000_000) as f64 / 997.0 - 2000.0);
            cases.push(-((x % 1000) as f64) / 1001.0);
        }
        for v in cases {
            assert_eq!(floor_f64(v).to_bits(), v.floor().to_bits(), "floor {v:e}");
            assert_eq!(ceil_f64(v).to_bits(), v.ceil().to_bits(), "ceil {v:e}");
        }
    }

    #[test]
    fn floor_i64_equals_floor_then_cast() {
        let mut cases = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            2.999999,
            -2.000001,
            1e-300,
            -1e-300,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            9.3e18,
            -9.3e18,
            9.223_372_036_854_776e18,
            -9.223_372_036_854_776e18,
            -9.223372036854777e18,
            4503599627370495.5,
            -4503599627370495.5,
        ];
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push(f64::from_bits(x));
            cases.push((x % 20_000) as f64 / 7.0 - 1400.0);
        }
        for v in cases {
            assert_eq!(floor_i64(v), v.floor() as i64, "{v:e}");
        }
    }

    #[test]
    fn u8_clamp_rounds_half_to_even() {
        assert_eq!(u8_clamp(0.5), 0);
        assert_eq!(u8_clamp(1.5), 2);
        assert_eq!(u8_clamp(2.5), 2);
        assert_eq!(u8_clamp(2.51), 3);
        assert_eq!(u8_clamp(-3.0), 0);
        assert_eq!(u8_clamp(300.0), 255);
        assert_eq!(u8_clamp(f64::NAN), 0);
        assert_eq!(u8_clamp(254.5), 254);
        assert_eq!(u8_clamp(254.50001), 255);
        assert_eq!(u8_clamp(1e-300), 0);
        // Against the definition (floor, then half to even) on a fine grid.
        for i in 0..=2_600_000u32 {
            let x = i as f64 / 10_000.0 - 2.0;
            let want = if x <= 0.0 {
                0
            } else if x >= 255.0 {
                255
            } else {
                let f = x.floor();
                let d = x - f;
                (if d > 0.5 || (d == 0.5 && f % 2.0 == 1.0) { f + 1.0 } else { f }) as u8
            };
            assert_eq!(u8_clamp(x), want, "{x}");
        }
    }

    #[test]
    fn wrap_clamp_matches_scratch() {
        assert_eq!(wrap_clamp(181.0, -179.0, 180.0), -179.0);
        assert_eq!(wrap_clamp(-180.0, -179.0, 180.0), 180.0);
        assert_eq!(wrap_clamp(90.0, -179.0, 180.0), 90.0);
    }

    #[test]
    fn clamp_keeps_offstage_boxes_degenerate() {
        let mut r = Rect::new(300.0, 350.0, 0.0, 10.0);
        r.clamp(-240.0, 240.0, -180.0, 180.0);
        assert_eq!((r.left, r.right), (240.0, 240.0));
        assert_eq!(r.width(), 0.0);
    }
}
