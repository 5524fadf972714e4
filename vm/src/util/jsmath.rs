//! JavaScript's `Math` functions, bit for bit as V8 computes them.
//!
//! V8 (Node 20) implements `Math.sin`, `cos`, `log` and `pow` with the
//! classic fdlibm 5.3 algorithms; other libms (glibc, musl) differ from it in
//! the last bit now and then, which is enough to make a sprite's position
//! differ after `move`. This module is an implementation of those fdlibm
//! algorithms in Rust, with V8's one change to `pow` (its final division, see
//! there: fdlibm's own `pow` differs from V8's in about 4 % of arguments). `atan2`, `atan`, `tan`, `asin`, `acos`, `exp` and `log2` of the
//! `libm` crate already agree with V8 and are used as they are. The interpreter's blocks and
//! the geometry (scratch-render computes its transforms with the same `Math`) call these,
//! never the platform's or `libm`'s own `sin`/`cos`/`log`/`pow`.
//!
//! The algorithms are those of fdlibm:
//! ====================================================
//! Copyright (C) 1993, 2004 by Sun Microsystems, Inc. All rights reserved.
//!
//! Developed at SunSoft, a Sun Microsystems, Inc. business.
//! Permission to use, copy, modify, and distribute this
//! software is freely granted, provided that this notice
//! is preserved.
//! ====================================================

// The constants are fdlibm's, written out to the digits fdlibm gives (they are the
// exact bit patterns); `x - x` produces NaN the way fdlibm does.
#![allow(clippy::excessive_precision, clippy::approx_constant, clippy::eq_op)]

#[inline]
fn hi(x: f64) -> i32 {
    (x.to_bits() >> 32) as i32
}

#[inline]
fn lo(x: f64) -> u32 {
    x.to_bits() as u32
}

#[inline]
fn from_words(h: u32, l: u32) -> f64 {
    f64::from_bits((u64::from(h) << 32) | u64::from(l))
}

#[inline]
fn with_hi(x: f64, h: u32) -> f64 {
    from_words(h, lo(x))
}

#[inline]
fn with_lo(x: f64, l: u32) -> f64 {
    from_words(hi(x) as u32, l)
}

/// Sine on [-pi/4, pi/4]; `y` is the tail of `x`, `iy` = 0 when there is none.
fn k_sin(x: f64, y: f64, iy: i32) -> f64 {
    const S1: f64 = -1.666_666_666_666_663_243_48e-01;
    const S2: f64 = 8.333_333_333_322_489_461_24e-03;
    const S3: f64 = -1.984_126_982_985_794_931_34e-04;
    const S4: f64 = 2.755_731_370_707_006_767_89e-06;
    const S5: f64 = -2.505_076_025_340_686_341_95e-08;
    const S6: f64 = 1.589_690_995_211_550_102_21e-10;
    let ix = hi(x) & 0x7fff_ffff;
    if ix < 0x3e40_0000 && (x as i32) == 0 {
        return x;
    }
    let z = x * x;
    let v = z * x;
    let r = S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)));
    if iy == 0 { x + v * (S1 + z * r) } else { x - ((z * (0.5 * y - v * r) - y) - v * S1) }
}

/// Cosine on [-pi/4, pi/4] (fdlibm 5.3 kernel, with the `qx` correction above 0.3).
fn k_cos(x: f64, y: f64) -> f64 {
    const C1: f64 = 4.166_666_666_666_660_190_37e-02;
    const C2: f64 = -1.388_888_888_887_410_957_49e-03;
    const C3: f64 = 2.480_158_728_947_672_941_78e-05;
    const C4: f64 = -2.755_731_435_139_066_330_35e-07;
    const C5: f64 = 2.087_572_321_298_174_827_90e-09;
    const C6: f64 = -1.135_964_755_778_819_482_65e-11;
    let ix = hi(x) & 0x7fff_ffff;
    if ix < 0x3e40_0000 && (x as i32) == 0 {
        return 1.0;
    }
    let z = x * x;
    let r = z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6)))));
    if ix < 0x3fd3_3333 {
        1.0 - (0.5 * z - (z * r - x * y))
    } else {
        let qx = if ix > 0x3fe9_0000 { 0.28125 } else { from_words((ix - 0x0020_0000) as u32, 0) };
        let hz = 0.5 * z - qx;
        let a = 1.0 - qx;
        a - (hz - (z * r - x * y))
    }
}

/// `x mod pi/2` as `(n, y0, y1)`; `None` for arguments too large for the medium-size reduction.
fn rem_pio2(x: f64) -> Option<(i32, f64, f64)> {
    const INVPIO2: f64 = 6.366_197_723_675_813_824_33e-01;
    const PIO2_1: f64 = 1.570_796_326_734_125_614_17e+00;
    const PIO2_1T: f64 = 6.077_100_506_506_192_249_32e-11;
    const PIO2_2: f64 = 6.077_100_506_303_965_976_60e-11;
    const PIO2_2T: f64 = 2.022_266_248_795_950_631_54e-21;
    const PIO2_3: f64 = 2.022_266_248_711_166_455_80e-21;
    const PIO2_3T: f64 = 8.478_427_660_368_899_569_97e-32;
    const NPIO2_HW: [i32; 32] = [
        0x3FF921FB, 0x400921FB, 0x4012D97C, 0x401921FB, 0x401F6A7A, 0x4022D97C, 0x4025FDBB, 0x402921FB, 0x402C463A,
        0x402F6A7A, 0x4031475C, 0x4032D97C, 0x40346B9C, 0x4035FDBB, 0x40378FDB, 0x403921FB, 0x403AB41B, 0x403C463A,
        0x403DD85A, 0x403F6A7A, 0x40407E4C, 0x4041475C, 0x4042106C, 0x4042D97C, 0x4043A28C, 0x40446B9C, 0x404534AC,
        0x4045FDBB, 0x4046C6CB, 0x40478FDB, 0x404858EB, 0x404921FB,
    ];
    let hx = hi(x);
    let ix = hx & 0x7fff_ffff;
    if ix <= 0x3fe9_21fb {
        return Some((0, x, 0.0));
    }
    if ix < 0x4002_d97c {
        // |x| < 3pi/4: n = +-1
        return Some(if hx > 0 {
            let z = x - PIO2_1;
            if ix != 0x3ff9_21fb {
                let y0 = z - PIO2_1T;
                (1, y0, (z - y0) - PIO2_1T)
            } else {
                let z = z - PIO2_2;
                let y0 = z - PIO2_2T;
                (1, y0, (z - y0) - PIO2_2T)
            }
        } else {
            let z = x + PIO2_1;
            if ix != 0x3ff9_21fb {
                let y0 = z + PIO2_1T;
                (-1, y0, (z - y0) + PIO2_1T)
            } else {
                let z = z + PIO2_2;
                let y0 = z + PIO2_2T;
                (-1, y0, (z - y0) + PIO2_2T)
            }
        });
    }
    if ix <= 0x4139_21fb {
        // medium size
        let t = x.abs();
        let n = (t * INVPIO2 + 0.5) as i32;
        let fnn = f64::from(n);
        let mut r = t - fnn * PIO2_1;
        let mut w = fnn * PIO2_1T;
        let mut y0;
        if n < 32 && ix != NPIO2_HW[(n - 1).clamp(0, 31) as usize] {
            y0 = r - w;
        } else {
            let j = ix >> 20;
            y0 = r - w;
            let mut i = j - ((hi(y0) >> 20) & 0x7ff);
            if i > 16 {
                let t = r;
                w = fnn * PIO2_2;
                r = t - w;
                w = fnn * PIO2_2T - ((t - r) - w);
                y0 = r - w;
                i = j - ((hi(y0) >> 20) & 0x7ff);
                if i > 49 {
                    let t = r;
                    w = fnn * PIO2_3;
                    r = t - w;
                    w = fnn * PIO2_3T - ((t - r) - w);
                    y0 = r - w;
                }
            }
        }
        let y1 = (r - y0) - w;
        return Some(if hx < 0 { (-n, -y0, -y1) } else { (n, y0, y1) });
    }
    None
}

/// `Math.sin`.
pub fn sin(x: f64) -> f64 {
    let ix = hi(x) & 0x7fff_ffff;
    if ix <= 0x3fe9_21fb {
        return k_sin(x, 0.0, 0);
    }
    if ix >= 0x7ff0_0000 {
        return x - x;
    }
    match rem_pio2(x) {
        Some((n, y0, y1)) => match n & 3 {
            0 => k_sin(y0, y1, 1),
            1 => k_cos(y0, y1),
            2 => -k_sin(y0, y1, 1),
            _ => -k_cos(y0, y1),
        },
        // Beyond 2^19*pi/2 the large reduction of the libm crate is the same algorithm.
        None => libm::sin(x),
    }
}

/// `Math.cos`.
pub fn cos(x: f64) -> f64 {
    let ix = hi(x) & 0x7fff_ffff;
    if ix <= 0x3fe9_21fb {
        return k_cos(x, 0.0);
    }
    if ix >= 0x7ff0_0000 {
        return x - x;
    }
    match rem_pio2(x) {
        Some((n, y0, y1)) => match n & 3 {
            0 => k_cos(y0, y1),
            1 => -k_sin(y0, y1, 1),
            2 => -k_cos(y0, y1),
            _ => k_sin(y0, y1, 1),
        },
        None => libm::cos(x),
    }
}

/// `(Math.sin(x), Math.cos(x))`, the same bits as [`sin`] and [`cos`], with one argument
/// reduction for both (`move (n) steps` needs both of the same angle).
pub fn sin_cos(x: f64) -> (f64, f64) {
    let ix = hi(x) & 0x7fff_ffff;
    if ix <= 0x3fe9_21fb {
        return (k_sin(x, 0.0, 0), k_cos(x, 0.0));
    }
    if ix >= 0x7ff0_0000 {
        return (x - x, x - x);
    }
    match rem_pio2(x) {
        Some((n, y0, y1)) => {
            let (s, c) = (k_sin(y0, y1, 1), k_cos(y0, y1));
            match n & 3 {
                0 => (s, c),
                1 => (c, -s),
                2 => (-s, -c),
                _ => (-c, s),
            }
        }
        None => (libm::sin(x), libm::cos(x)),
    }
}

/// `Math.log`.
pub fn log(x: f64) -> f64 {
    const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-01;
    const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
    const TWO54: f64 = 1.801_439_850_948_198_400_00e+16;
    const LG1: f64 = 6.666_666_666_666_735_130e-01;
    const LG2: f64 = 3.999_999_999_940_941_908e-01;
    const LG3: f64 = 2.857_142_874_366_239_149e-01;
    const LG4: f64 = 2.222_219_843_214_978_396e-01;
    const LG5: f64 = 1.818_357_216_161_805_012e-01;
    const LG6: f64 = 1.531_383_769_920_937_332e-01;
    const LG7: f64 = 1.479_819_860_511_658_591e-01;
    let mut x = x;
    let mut hx = hi(x);
    let lx = lo(x);
    let mut k: i32 = 0;
    if hx < 0x0010_0000 {
        if ((hx & 0x7fff_ffff) as u32 | lx) == 0 {
            return f64::NEG_INFINITY;
        }
        if hx < 0 {
            return f64::NAN;
        }
        k -= 54;
        x *= TWO54;
        hx = hi(x);
    }
    if hx >= 0x7ff0_0000 {
        return x + x;
    }
    k += (hx >> 20) - 1023;
    hx &= 0x000f_ffff;
    let i = (hx + 0x95f64) & 0x10_0000;
    x = with_hi(x, (hx | (i ^ 0x3ff0_0000)) as u32);
    k += i >> 20;
    let f = x - 1.0;
    if (0x000f_ffff & (2 + hx)) < 3 {
        if f == 0.0 {
            if k == 0 {
                return 0.0;
            }
            let dk = f64::from(k);
            return dk * LN2_HI + dk * LN2_LO;
        }
        let r = f * f * (0.5 - 0.333_333_333_333_333_33 * f);
        if k == 0 {
            return f - r;
        }
        let dk = f64::from(k);
        return dk * LN2_HI - ((r - dk * LN2_LO) - f);
    }
    let s = f / (2.0 + f);
    let dk = f64::from(k);
    let z = s * s;
    let mut i = hx - 0x6147a;
    let w = z * z;
    let j = 0x6b851 - hx;
    let t1 = w * (LG2 + w * (LG4 + w * LG6));
    let t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
    i |= j;
    let r = t2 + t1;
    if i > 0 {
        let hfsq = 0.5 * f * f;
        if k == 0 { f - (hfsq - s * (hfsq + r)) } else { dk * LN2_HI - ((hfsq - (s * (hfsq + r) + dk * LN2_LO)) - f) }
    } else if k == 0 {
        f - s * (f - r)
    } else {
        dk * LN2_HI - ((s * (f - r) - dk * LN2_LO) - f)
    }
}

/// `Math.pow` (with V8's special cases: `y` NaN or `|x| = 1` with infinite `y` is NaN,
/// `y = 2` is `x * x`, `y = 0.5` is `sqrt(x + 0)`).
pub fn pow(x: f64, y: f64) -> f64 {
    if y.is_nan() || (y.is_infinite() && (x == 1.0 || x == -1.0)) {
        return f64::NAN;
    }
    if y == 2.0 {
        return x * x;
    }
    if y == 0.5 {
        return if x.is_infinite() { f64::INFINITY } else { (x + 0.0).sqrt() };
    }
    fdlibm_pow(x, y)
}

#[allow(clippy::many_single_char_names)]
fn fdlibm_pow(x: f64, y: f64) -> f64 {
    const BP: [f64; 2] = [1.0, 1.5];
    const DP_H: [f64; 2] = [0.0, 5.849_624_872_207_641_601_56e-01];
    const DP_L: [f64; 2] = [0.0, 1.350_039_202_129_748_971_28e-08];
    const TWO53: f64 = 9_007_199_254_740_992.0;
    const HUGE: f64 = 1.0e300;
    const TINY: f64 = 1.0e-300;
    const L1: f64 = 5.999_999_999_999_946_487_25e-01;
    const L2: f64 = 4.285_714_285_785_501_842_52e-01;
    const L3: f64 = 3.333_333_298_183_774_329_18e-01;
    const L4: f64 = 2.727_281_238_085_340_064_89e-01;
    const L5: f64 = 2.306_607_457_755_617_540_67e-01;
    const L6: f64 = 2.069_750_178_003_384_177_84e-01;
    const P1: f64 = 1.666_666_666_666_660_190_37e-01;
    const P2: f64 = -2.777_777_777_701_559_338_42e-03;
    const P3: f64 = 6.613_756_321_437_934_361_17e-05;
    const P4: f64 = -1.653_390_220_546_525_153_90e-06;
    const P5: f64 = 4.138_136_797_057_238_460_39e-08;
    const LG2: f64 = 6.931_471_805_599_452_862_27e-01;
    const LG2_H: f64 = 6.931_471_824_645_996_093_75e-01;
    const LG2_L: f64 = -1.904_654_299_957_768_045_25e-09;
    const OVT: f64 = 8.008_566_259_537_294_437_2e-17;
    const CP: f64 = 9.617_966_939_259_755_543_29e-01;
    const CP_H: f64 = 9.617_967_009_544_372_558_59e-01;
    const CP_L: f64 = -7.028_461_650_952_758_265_16e-09;
    const IVLN2: f64 = 1.442_695_040_888_963_387_00e+00;
    const IVLN2_H: f64 = 1.442_695_021_629_333_496_09e+00;
    const IVLN2_L: f64 = 1.925_962_991_126_617_468_87e-08;

    let hx = hi(x);
    let lx = lo(x);
    let hy = hi(y);
    let ly = lo(y);
    let mut ix = hx & 0x7fff_ffff;
    let iy = hy & 0x7fff_ffff;

    if (iy as u32 | ly) == 0 {
        return 1.0;
    }
    if ix > 0x7ff0_0000 || (ix == 0x7ff0_0000 && lx != 0) || iy > 0x7ff0_0000 || (iy == 0x7ff0_0000 && ly != 0) {
        return x + y;
    }
    // yisint: 0 = not an integer, 1 = odd, 2 = even (only when x < 0)
    let mut yisint = 0;
    if hx < 0 {
        if iy >= 0x4340_0000 {
            yisint = 2;
        } else if iy >= 0x3ff0_0000 {
            let k = (iy >> 20) - 0x3ff;
            if k > 20 {
                let j = ly >> (52 - k);
                if (j << (52 - k)) == ly {
                    yisint = 2 - (j & 1) as i32;
                }
            } else if ly == 0 {
                let j = iy >> (20 - k);
                if (j << (20 - k)) == iy {
                    yisint = 2 - (j & 1);
                }
            }
        }
    }
    if ly == 0 {
        if iy == 0x7ff0_0000 {
            if ((ix - 0x3ff0_0000) as u32 | lx) == 0 {
                return y - y;
            } else if ix >= 0x3ff0_0000 {
                return if hy >= 0 { y } else { 0.0 };
            } else {
                return if hy < 0 { -y } else { 0.0 };
            }
        }
        if iy == 0x3ff0_0000 {
            return if hy < 0 { 1.0 / x } else { x };
        }
        if hy == 0x4000_0000 {
            return x * x;
        }
        if hy == 0x3fe0_0000 && hx >= 0 {
            return x.sqrt();
        }
    }
    let mut ax = x.abs();
    if lx == 0 && (ix == 0x7ff0_0000 || ix == 0 || ix == 0x3ff0_0000) {
        let mut z = ax;
        if hy < 0 {
            z = 1.0 / z;
        }
        if hx < 0 {
            if ((ix - 0x3ff0_0000) | yisint) == 0 {
                z = (z - z) / (z - z);
            } else if yisint == 1 {
                z = -z;
            }
        }
        return z;
    }
    if hx < 0 && yisint == 0 {
        return (x - x) / (x - x);
    }
    let s = if hx < 0 && yisint == 1 { -1.0 } else { 1.0 };
    let (t1, t2);
    if iy > 0x41e0_0000 {
        if iy > 0x43f0_0000 {
            if ix <= 0x3fef_ffff {
                return if hy < 0 { HUGE * HUGE } else { TINY * TINY };
            }
            if ix >= 0x3ff0_0000 {
                return if hy > 0 { HUGE * HUGE } else { TINY * TINY };
            }
        }
        if ix < 0x3fef_ffff {
            return if hy < 0 { s * HUGE * HUGE } else { s * TINY * TINY };
        }
        if ix > 0x3ff0_0000 {
            return if hy > 0 { s * HUGE * HUGE } else { s * TINY * TINY };
        }
        let t = ax - 1.0;
        let w = (t * t) * (0.5 - t * (0.333_333_333_333_333_333_33 - t * 0.25));
        let u = IVLN2_H * t;
        let v = t * IVLN2_L - w * IVLN2;
        let tt1 = with_lo(u + v, 0);
        t1 = tt1;
        t2 = v - (tt1 - u);
    } else {
        let mut n: i32 = 0;
        if ix < 0x0010_0000 {
            ax *= TWO53;
            n -= 53;
            ix = hi(ax);
        }
        n += (ix >> 20) - 0x3ff;
        let j = ix & 0x000f_ffff;
        ix = j | 0x3ff0_0000;
        let k: usize;
        if j <= 0x3988e {
            k = 0;
        } else if j < 0xbb67a {
            k = 1;
        } else {
            k = 0;
            n += 1;
            ix -= 0x0010_0000;
        }
        ax = with_hi(ax, ix as u32);
        let u = ax - BP[k];
        let v = 1.0 / (ax + BP[k]);
        let ss = u * v;
        let s_h = with_lo(ss, 0);
        let t_h = from_words((((ix >> 1) | 0x2000_0000) + 0x0008_0000 + ((k as i32) << 18)) as u32, 0);
        let t_l = ax - (t_h - BP[k]);
        let s_l = v * ((u - s_h * t_h) - s_h * t_l);
        let mut s2 = ss * ss;
        let mut r = s2 * s2 * (L1 + s2 * (L2 + s2 * (L3 + s2 * (L4 + s2 * (L5 + s2 * L6)))));
        r += s_l * (s_h + ss);
        s2 = s_h * s_h;
        let t_h = with_lo(3.0 + s2 + r, 0);
        let t_l = r - ((t_h - 3.0) - s2);
        let u = s_h * t_h;
        let v = s_l * t_h + t_l * ss;
        let p_h = with_lo(u + v, 0);
        let p_l = v - (p_h - u);
        let z_h = CP_H * p_h;
        let z_l = CP_L * p_h + p_l * CP + DP_L[k];
        let t = f64::from(n);
        let tt1 = with_lo(((z_h + z_l) + DP_H[k]) + t, 0);
        t1 = tt1;
        t2 = z_l - (((tt1 - t) - DP_H[k]) - z_h);
    }
    let y1 = with_lo(y, 0);
    let p_l = (y - y1) * t1 + y * t2;
    let mut p_h = y1 * t1;
    let mut z = p_l + p_h;
    let j = hi(z);
    let i = lo(z);
    if j >= 0x4090_0000 {
        if ((j - 0x4090_0000) as u32 | i) != 0 || p_l + OVT > z - p_h {
            return s * HUGE * HUGE;
        }
    } else if (j & 0x7fff_ffff) >= 0x4090_cc00 && (((j as u32).wrapping_sub(0xc090_cc00) | i) != 0 || p_l <= z - p_h) {
        return s * TINY * TINY;
    }
    let i = j & 0x7fff_ffff;
    let mut k = (i >> 20) - 0x3ff;
    let mut n: i32 = 0;
    if i > 0x3fe0_0000 {
        n = j.wrapping_add(0x0010_0000 >> (k + 1));
        k = ((n & 0x7fff_ffff) >> 20) - 0x3ff;
        let t = from_words((n & !(0x000f_ffff >> k)) as u32, 0);
        n = ((n & 0x000f_ffff) | 0x0010_0000) >> (20 - k);
        if j < 0 {
            n = -n;
        }
        p_h -= t;
    }
    let t = with_lo(p_l + p_h, 0);
    let u = t * LG2_H;
    let v = (p_l - (t - p_h)) * LG2 + t * LG2_L;
    z = u + v;
    let w = v - (z - u);
    let t = z * z;
    let t1 = z - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
    // V8's `pow` divides by the whole `(t1 - 2) - (w + z·w)`, where fdlibm subtracts
    // `w + z·w` after dividing by `t1 - 2`: the last bit differs for about 4 % of arguments.
    let r = (z * t1) / ((t1 - 2.0) - (w + z * w));
    z = 1.0 - (r - z);
    let mut j = hi(z);
    j = j.wrapping_add(n << 20);
    if (j >> 20) <= 0 {
        z = libm::scalbn(z, n);
    } else {
        z = with_hi(z, j as u32);
    }
    s * z
}

/// `Math.tan`.
#[inline]
pub fn tan(x: f64) -> f64 {
    libm::tan(x)
}

/// `Math.asin`.
#[inline]
pub fn asin(x: f64) -> f64 {
    libm::asin(x)
}

/// `Math.acos`.
#[inline]
pub fn acos(x: f64) -> f64 {
    libm::acos(x)
}

/// `Math.atan`.
#[inline]
pub fn atan(x: f64) -> f64 {
    libm::atan(x)
}

/// `Math.atan2`.
#[inline]
pub fn atan2(y: f64, x: f64) -> f64 {
    libm::atan2(y, x)
}

/// `Math.exp` (V8 returns `Math.E` exactly for 1, where fdlibm is one bit off).
#[inline]
pub fn exp(x: f64) -> f64 {
    if x == 1.0 { std::f64::consts::E } else { libm::exp(x) }
}

/// `Math.log2` (scratch-render's choice of MIP level). A positive normal power of two (every
/// sprite drawn at 100 % asks for `log2(1)`) is its exponent, exactly what `libm` returns,
/// without the call.
#[inline]
pub fn log2(x: f64) -> f64 {
    let bits = x.to_bits();
    let exponent = (bits >> 52) as i64; // the sign bit too: only positive numbers pass
    if bits & ((1 << 52) - 1) == 0 && (1..0x7ff).contains(&exponent) {
        return (exponent - 1023) as f64;
    }
    libm::log2(x)
}

/// `Math.sqrt` (correctly rounded everywhere).
#[inline]
pub fn sqrt(x: f64) -> f64 {
    x.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values printed by node 20 (V8 11.3) for the same arguments.
    #[test]
    fn matches_v8() {
        let r = (90.0f64 - 33.0) * std::f64::consts::PI / 180.0;
        assert_eq!(cos(r), 0.5446390350150272);
        assert_eq!(sin(r), 0.8386705679454239);
        assert_eq!(cos(std::f64::consts::FRAC_PI_2), 6.123233995736766e-17);
        assert_eq!(sin(-3.7), 0.5298361409084934);
        assert_eq!(cos(2.9), -0.9709581651495905);
        assert_eq!(log(0.37), -0.994252273343867);
        assert_eq!(sin(123.456), -0.8039373685728239);
        assert_eq!(pow(10.0, -4.0), 9.999999999999999e-5); // fdlibm: 1e-4
        assert_eq!(pow(10.0, 3.0), 1000.0);
        assert_eq!(pow(2.0, -2.0), 0.25);
        assert_eq!(log(10.0), std::f64::consts::LN_10);
        assert!(pow(1.0, f64::INFINITY).is_nan());
        assert_eq!(pow(-8.0, 3.0), -512.0);
        assert!(pow(-8.0, 0.5).is_nan());
    }

    /// `Math.pow` as node 20 (V8 11.3) computes it, bit for bit: `(x, y, x ** y)` as bit
    /// patterns, 48 drawn where fdlibm's `pow` gives another last bit (V8 divides by the
    /// whole `(t1 - 2) - (w + z·w)`) and 16 where both agree. Bases 10 (as `10 ^` uses it),
    /// 0–100, 0–2 and ±500; exponents fractional and whole, negative too.
    #[test]
    fn pow_is_v8s() {
        const CASES: [(u64, u64, u64); 64] = [
            (0x4024000000000000, 0xc01f3bd484ac151c, 0x3e50b0cb437985d9),
            (0x4024000000000000, 0x402008f3bef307cb, 0x4198d2417c64bfaa),
            (0x40507c172229da5b, 0xc00efd727954945a, 0x3e78186832f7ede6),
            (0x3ffd5534e65dab4d, 0xc02359f5377fd217, 0x3f673fe771357b54),
            (0x4024000000000000, 0x3fe7db2eb976ce44, 0x401643177120b3cf),
            (0x404a5b90e3fe8314, 0x4011cdeb001ba4ac, 0x418605cf4e94cacb),
            (0x3ff42fe81bff831a, 0xc033000000000000, 0x3f88ba635f568cfe),
            (0x404a7f2eb512c685, 0xbff1bf386069b734, 0x3f890d63fdda0cdb),
            (0x3ff026a4566540bc, 0x4022000000000000, 0x3ff16931bff4f8fc),
            (0xc060f38fefc44316, 0x4010000000000000, 0x41b428a4b38b2c29),
            (0xc072bedcadf04cbd, 0xc000000000000000, 0x3ee7500fd25ebbb6),
            (0x4041cbf52e606e88, 0x40063410792a63aa, 0x40d3be1f3c74585a),
            (0x4024000000000000, 0x3ff613ca0a3f6bfc, 0x4037faa0c612c584),
            (0xc06c846591850702, 0xc000000000000000, 0x3ef42597532a9b34),
            (0x3ffb1927f4facc10, 0xbfea341b12bb1f40, 0x3fe4c94a8c441478),
            (0x3ff28fc3cb3f48a6, 0xc018000000000000, 0x3fda413fcd9057b9),
            (0x40277fa7732ceec3, 0xbffdae05cfe7c552, 0x3f8534e3974166fc),
            (0x407d04c24110aeab, 0x4010000000000000, 0x4225a3d071293ca7),
            (0x3fe64b1f3cfad91a, 0xc0260379855e0236, 0x404ab6bcaecf514e),
            (0x404e34e7ae53fad0, 0xc007517a97109b07, 0x3edafae05b3b3be3),
            (0x4024000000000000, 0x401e3dfb07feac16, 0x4181557efb7b4c0f),
            (0x404899b6764263f5, 0x4007c85431a9f98a, 0x40fa27d8a730b30e),
            (0x40519080d533ccfa, 0x4010000000000000, 0x41773cab434730b7),
            (0x4024000000000000, 0xc009da1c93f6fca9, 0x3f433a8ca2d073ef),
            (0x4057fc74a89408db, 0xbfce3e72d3b58b58, 0x3fd5c5398de3e56a),
            (0x404f92084af4f9ff, 0xbfd1260a9c99586c, 0x3fd51382151ee8ca),
            (0x4024000000000000, 0xc0189618e0156ee3, 0x3ea7f14bc2023f58),
            (0x4044864c692b39fd, 0xc00677fb2d7f1ff8, 0x3efeddfffc95efba),
            (0x404489931c9fb8f7, 0xc013a0e106c64066, 0x3e49f02ec9f11a74),
            (0x3ffc54ec3e64a5bf, 0xc004396525771f82, 0x3fce30cf9a9e3d91),
            (0x4024000000000000, 0x40118453091d412a, 0x40d7625ccf33b26f),
            (0x404ad170eb57c97e, 0xbfffc726b0534743, 0x3f3813335c6218aa),
            (0xc07b050065aaa306, 0x4008000000000000, 0xc193437093d1e5cb),
            (0x4024000000000000, 0x3fbf6e4a30e52920, 0x3ff53a364d9efaa0),
            (0x4053f84d1916c381, 0x4010dc291b52bedc, 0x4198e519ce630373),
            (0x3fe6a1a609c0c570, 0x402e000000000000, 0x3f76b015e430618e),
            (0x4077321a5f74a965, 0xc014000000000000, 0x3d43fcf2c8f27c8e),
            (0xc0552cff1588f188, 0xc010000000000000, 0x3e54dc0644c79bbf),
            (0x3ff33bfb85eaa932, 0x4014b390306bd411, 0x4004be79f3c8adf6),
            (0x4057ed393e96770d, 0x401338d3b136d6a6, 0x41e8a3345de4c8cf),
            (0xc0727e280aa7ecb3, 0xc008000000000000, 0xbe64b9b0fa9882f4),
            (0x4051f60a933022a8, 0xc00e31747700c1c1, 0x3e7a74f59009c8a9),
            (0x40535a4681d0b68e, 0xbfb32219fe42fe80, 0x3fe71ea69f1db9a2),
            (0xc07d6c86fca404d8, 0xc014000000000000, 0xbd2857b19437c8c9),
            (0x4024000000000000, 0xc0207ab3d99461e6, 0x3e38bc149ea3d163),
            (0x402a043e1a80b88d, 0x3fe88740c29aeb0e, 0x401c957970d31d58),
            (0x4024000000000000, 0x4008a21bf017a1c6, 0x4092bfb550ed4211),
            (0xc079be396ac22ee8, 0xc000000000000000, 0x3ed8b91039ba4281),
            (0x4024000000000000, 0x4017b689d4342b0b, 0x4129deee2490d9d2),
            (0x404f10ba67e2ba9f, 0xc00368ee22d90f9c, 0x3f075dbb1c4d1418),
            (0x4055da62265a06b7, 0x3ff7ba6e94d8b790, 0x4087abfd9be50599),
            (0x4057715ca15c30a5, 0x40020599924ad0a1, 0x40db0e1c498c2649),
            (0x4024000000000000, 0x40239f3ec4fee474, 0x41f81bffc5fe445d),
            (0x4024000000000000, 0xc013c0893ac9dba2, 0x3ee83038586ab65f),
            (0x3fbf2aa008899cc0, 0xc024000000000000, 0x41d4d5169e60db9c),
            (0x4024000000000000, 0xbff521ed791b0204, 0x3fa87632c1a81592),
            (0x404439ccf75f57c1, 0x4013a3d4197e5446, 0x41928236add8881c),
            (0x3fe8b3b7865499ae, 0x402f48355e23453e, 0x3f91dd21f5f2764d),
            (0x401cb3c50d89a8c1, 0xbfc5cba8777397f8, 0x3fe6e0c09e746fee),
            (0x407e19313820c1c6, 0x4000000000000000, 0x410c4f501e70d2c9),
            (0x4024000000000000, 0xc02210aeb30bc33e, 0x3e0fe050d4691c02),
            (0x404d456a17494dec, 0x4002cdf0c4a20b6a, 0x40cbe0e0c0ba1a5f),
            (0x3ff14941aba3ea3f, 0x40178e0b937eac59, 0x3ff939f172bd7860),
            (0x405e5c579fb3a248, 0xc014000000000000, 0x3dc4cfd397c556d4),
        ];
        for (x, y, z) in CASES {
            let (x, y) = (f64::from_bits(x), f64::from_bits(y));
            assert_eq!(pow(x, y).to_bits(), z, "{x:?} ** {y:?}");
        }
    }

    /// `sin_cos` is `sin` and `cos` bit for bit: every quadrant, the small-argument branch,
    /// the large reduction, whole and fractional degrees as `move` uses them, non-finite.
    #[test]
    fn sin_cos_is_sin_and_cos() {
        let same = |x: f64| {
            let (s, c) = sin_cos(x);
            for (a, b) in [(s, sin(x)), (c, cos(x))] {
                assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()), "sin_cos({x:e}): {a} vs {b}");
            }
        };
        for d in -7200..=7200 {
            let d = d as f64 / 4.0;
            same((90.0 - d) * std::f64::consts::PI / 180.0);
        }
        let mut z = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            // SplitMix64 bits as doubles of every magnitude, and uniform values in ±10^4.
            z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut w = z;
            w = (w ^ (w >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            w = (w ^ (w >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            w ^= w >> 31;
            same(f64::from_bits(w));
            same(((w >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2e4);
        }
        for x in [0.0, -0.0, 5e-324, 0.785, 0.786, 1e6, 1e300, f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
            same(x);
        }
    }

    /// The shortcut for powers of two gives libm's bits at every normal power, and the
    /// numbers next to them, subnormals, zeros, negatives and non-finite ones still go to libm.
    #[test]
    fn log2_of_powers_of_two_is_libms() {
        let same = |x: f64| {
            let (a, b) = (log2(x), libm::log2(x));
            assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()), "log2({x:e}): {a} vs {b}");
        };
        for e in -1022..=1023 {
            let x = 2f64.powi(e);
            for y in [x, -x, f64::from_bits(x.to_bits() + 1), f64::from_bits(x.to_bits() - 1)] {
                same(y);
            }
        }
        for x in [0.0, -0.0, 5e-324, 2.2e-308, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1.5, 100.0, 0.35] {
            same(x);
        }
    }
}
