//! Skia's 16.16 fixed-point and 26.6 ("FDot6") arithmetic, as its scan converter does it.
//!
//! Every rounding here decides which faint pixel stays at zero, so each helper follows the
//! C macro of the same name bit for bit (truncating divisions, arithmetic shifts, the 32-bit
//! wrap of the few sums that can overflow).

/// 16.16 fixed point.
pub type Fixed = i32;
/// 26.6 fixed point.
pub type FDot6 = i32;

/// 1.0 in 16.16.
pub const ONE: Fixed = 1 << 16;
/// The sentinel Skia uses for "no slope" and for the list's tail.
pub const MAX: Fixed = i32::MAX;
/// The list head's sentinel.
pub const MIN: Fixed = i32::MIN;

/// Entries of the inverse table on each side of zero.
pub const INVERSE_TABLE_SIZE: i32 = 1024;

pub fn mul(a: Fixed, b: Fixed) -> Fixed {
    ((a as i64 * b as i64) >> 16) as i32
}

pub fn floor_to_int(x: Fixed) -> i32 {
    x >> 16
}

pub fn ceil_to_int(x: Fixed) -> i32 {
    x.wrapping_add(ONE - 1) >> 16
}

pub fn round_to_int(x: Fixed) -> i32 {
    x.wrapping_add(ONE / 2) >> 16
}

pub fn floor_to_fixed(x: Fixed) -> Fixed {
    x & !0xFFFF
}

pub fn ceil_to_fixed(x: Fixed) -> Fixed {
    x.wrapping_add(ONE - 1) & !0xFFFF
}

pub fn round_to_fixed(x: Fixed) -> Fixed {
    x.wrapping_add(ONE / 2) & !0xFFFF
}

pub fn from_int(i: i32) -> Fixed {
    i.wrapping_shl(16)
}

pub fn fdot6_to_fixed(x: FDot6) -> Fixed {
    x.wrapping_shl(10)
}

pub fn to_fdot6(x: Fixed) -> FDot6 {
    x >> 10
}

pub fn fdot6_round(x: FDot6) -> i32 {
    (x + 32) >> 6
}

/// `SkFDot6Div`: a / b in 16.16, truncated, pinned to 32 bits.
pub fn fdot6_div(a: FDot6, b: FDot6) -> Fixed {
    if b == 0 {
        return if a >= 0 { MAX } else { MIN };
    }
    (((a as i64) << 16) / b as i64).clamp(i32::MIN as i64, i32::MAX as i64) as i32
}

/// `quick_inverse`: Skia's table of 2^22 / x (truncated) for |x| <= 1024.
pub fn quick_inverse(x: FDot6) -> Fixed {
    if x == 0 { 0 } else { (1 << 22) / x }
}

/// `quick_div`: the table's quotient where it is exact enough, else a true division.
pub fn quick_div(a: FDot6, b: FDot6) -> Fixed {
    const MIN_BITS: i32 = 3;
    const MAX_ABS_A: i32 = 1 << (31 - (22 - MIN_BITS));
    let (abs_a, abs_b) = (a.wrapping_abs(), b.wrapping_abs());
    if ((1 << MIN_BITS)..INVERSE_TABLE_SIZE).contains(&abs_b) && abs_a < MAX_ABS_A {
        return a.wrapping_mul(quick_inverse(b)) >> 6;
    }
    fdot6_div(a, b)
}

/// `SkAnalyticEdge::SnapY`: to the nearest quarter pixel.
pub fn snap_y(y: Fixed) -> Fixed {
    ((y as u32).wrapping_add((ONE >> 3) as u32) >> 14 << 14) as i32
}

pub fn sat_add(a: i32, b: i32) -> i32 {
    a.saturating_add(b)
}

pub fn sat_sub(a: i32, b: i32) -> i32 {
    a.saturating_sub(b)
}

/// `(int)(v)` of a float: truncation toward zero, saturating where C would be undefined.
pub fn trunc(v: f32) -> i32 {
    v as i32
}

/// `SkScalarToFDot6(v)`.
pub fn scalar_to_fdot6(v: f32) -> FDot6 {
    trunc(v * 64.0)
}
