//! JavaScript's and the browser's arithmetic, bit for bit: `Math.round`, `Math.min`/`max`
//! (NaN and −0 as JS treats them), scratch-vm's `MathUtil.clamp`/`wrapClamp`, `ToInt32`, the
//! index rule of `Array.prototype.splice`, and the stores of typed arrays scratch-render keeps
//! its matrices and colours in (`Float32Array` rounds to single precision, `Uint8ClampedArray`
//! rounds half to even). The interpreter and the geometry use the same functions.
//!
//! `floor`/`ceil` are written out (bit-identical to `f64::floor`/`ceil`) because the baseline
//! x86-64 target calls libm for them, and per-pixel loops call them millions of times.

/// JS `Math.round`: half-way cases round towards +∞, and a negative argument above −0.5
/// gives −0 (as does −0 itself).
#[inline]
pub fn js_round(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let f = floor_f64(x);
    let r = select(x - f >= 0.5, f + 1.0, f);
    if r == 0.0 && x < 0.0 { -0.0 } else { r }
}

/// `if c { a } else { b }` without a branch: rounding random values (random positions, `pick
/// random`, clone swarms gliding about) mispredicts a branch on the fraction half the time,
/// which made `go to random position` a third of some projects' time (issue 36).
#[inline(always)]
fn select(c: bool, a: f64, b: f64) -> f64 {
    let m = u64::from(c).wrapping_neg();
    f64::from_bits((a.to_bits() & m) | (b.to_bits() & !m))
}

/// JS `Math.max(a, b)` (NaN propagates; +0 beats -0).
pub fn js_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == 0.0 && b == 0.0 {
        return if a.is_sign_negative() && b.is_sign_negative() { -0.0 } else { 0.0 };
    }
    if a > b { a } else { b }
}

/// JS `Math.min(a, b)` (NaN propagates; -0 beats +0).
pub fn js_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == 0.0 && b == 0.0 {
        return if a.is_sign_negative() || b.is_sign_negative() { -0.0 } else { 0.0 };
    }
    if a < b { a } else { b }
}

/// scratch-vm `MathUtil.clamp`.
pub fn clamp(n: f64, min: f64, max: f64) -> f64 {
    js_min(js_max(n, min), max)
}

/// scratch-vm `MathUtil.wrapClamp`.
pub fn wrap_clamp(n: f64, min: f64, max: f64) -> f64 {
    let range = (max - min) + 1.0;
    // Inside the range (most costume switches and turns) the quotient is in (0, 1): its floor
    // is +0 and `n - 0` is `n` (−0 included), without the division's latency.
    if n > min && n <= max && range < INTEGRAL {
        return n;
    }
    n - floor_f64((n - min) / range) * range
}

/// JS `ToInt32` (used by bitwise operators).
pub fn to_int32(x: f64) -> i32 {
    if !x.is_finite() {
        return 0;
    }
    let t = x.trunc();
    let m = t.rem_euclid(4294967296.0);
    (m as u64 as u32) as i32
}

/// JS `ToIntegerOrInfinity` then clamp into `[0, len]`, as `Array.prototype.splice` does for its start.
pub fn splice_index(x: f64, len: usize) -> usize {
    if x.is_nan() {
        return 0;
    }
    let t = x.trunc();
    if t < 0.0 {
        let r = len as f64 + t;
        if r < 0.0 { 0 } else { r as usize }
    } else if t > len as f64 {
        len
    } else {
        t as usize
    }
}

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
    t.saturating_sub(i64::from((t as f64) > x))
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
    select(t > x, t - 1.0, t)
}

/// `x.ceil()`, bit for bit (a negative fraction gives −0), without libm's call.
#[inline]
pub fn ceil_f64(x: f64) -> f64 {
    if x == 0.0 || x.is_nan() || x.abs() >= INTEGRAL {
        return x;
    }
    let t = x as i64 as f64;
    let c = select(t < x, t + 1.0, t);
    if c == 0.0 && x < 0.0 { -0.0 } else { c }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn math_round_matches_js() {
        assert_eq!(js_round(0.49999999999999994), 0.0);
        assert_eq!(js_round(2.5), 3.0);
        assert_eq!(js_round(-2.5), -2.0);
        assert!(js_round(-0.4).is_sign_negative());
        assert_eq!(js_round(-0.6), -1.0);
    }

    #[test]
    fn int32() {
        assert_eq!(to_int32(4294967295.0), -1);
        assert_eq!(to_int32(-1.5), -1);
        assert_eq!(to_int32(f64::NAN), 0);
        assert_eq!(to_int32(16777215.0), 16777215);
    }

    /// The branch-free rounding equals the rule written with branches, on values where the
    /// fraction is random (and on ties, −0 and values near it).
    #[test]
    fn js_round_equals_the_branching_rule() {
        fn reference(x: f64) -> f64 {
            if !x.is_finite() {
                return x;
            }
            let f = x.floor();
            let r = if x - f >= 0.5 { f + 1.0 } else { f };
            if r == 0.0 && x < 0.0 { -0.0 } else { r }
        }
        let mut cases = vec![0.0, -0.0, 0.5, -0.5, -0.4, 0.49999999999999994, -0.49999999999999994, 2.5, -2.5];
        cases.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 4503599627370495.5, -4503599627370495.5, 1e300]);
        let mut rng = crate::rng::SplitMix64::new(7);
        for _ in 0..200_000 {
            let r = rng.next_f64();
            cases.push(480.0 * (r - 0.5));
            cases.push((r - 0.5) * 1e-3);
            cases.push(f64::from_bits(rng.next_u64()));
        }
        for x in cases {
            assert_eq!(js_round(x).to_bits(), reference(x).to_bits(), "{x:e}");
        }
    }

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
        // The shortcut inside the range gives the formula's bits.
        let formula = |n: f64, min: f64, max: f64| n - floor_f64((n - min) / ((max - min) + 1.0)) * ((max - min) + 1.0);
        let mut rng = crate::rng::SplitMix64::new(11);
        let mut cases =
            vec![(-0.0, -179.0, 180.0), (-0.0, 0.0, 3.0), (0.0, 0.0, 3.0), (3.0, 0.0, 3.0), (f64::NAN, 0.0, 3.0)];
        cases.extend([(-179.0, -179.0, 180.0), (180.0, -179.0, 180.0), (1e300, -179.0, 180.0), (0.5, 0.0, 0.0)]);
        for _ in 0..100_000 {
            let (r, k) = (rng.next_f64(), rng.next_u64() % 40);
            cases.push((r * 400.0 - 200.0, -179.0, 180.0));
            cases.push(((r * 60.0 - 10.0).round(), 0.0, k as f64));
            cases.push((r * 60.0 - 10.0, 0.0, k as f64));
        }
        for (n, min, max) in cases {
            assert_eq!(wrap_clamp(n, min, max).to_bits(), formula(n, min, max).to_bits(), "{n} in {min}..={max}");
        }
    }

    #[test]
    fn min_max_treat_zeros_and_nan_as_js() {
        assert!(js_max(-0.0, 0.0).is_sign_positive());
        assert!(js_max(0.0, -0.0).is_sign_positive());
        assert!(js_max(-0.0, -0.0).is_sign_negative());
        assert!(js_min(0.0, -0.0).is_sign_negative());
        assert!(js_min(-0.0, 0.0).is_sign_negative());
        assert!(js_max(f64::NAN, 1.0).is_nan() && js_min(1.0, f64::NAN).is_nan());
        assert!(clamp(f64::NAN, 0.0, 1.0).is_nan());
        assert_eq!(clamp(-3.0, 0.0, 1.0), 0.0);
    }
}
