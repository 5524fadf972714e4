//! One row of a trapezoid between two edges, as alphas (`blit_trapezoid_row` and its helpers
//! in Skia's `SkScan_AAAPath`): the row's full alpha less the two triangles or trapezoids the
//! left and right edges cut away, each in Skia's fixed-point steps.

use super::blit::{Blitter, Mode};
use super::fixed::{self as fx, Fixed, ONE};

fn trapezoid_to_alpha(l1: Fixed, l2: Fixed) -> u8 {
    (((l1 + l2) / 2) >> 8) as u8
}

fn partial_triangle_to_alpha(a: Fixed, b: Fixed) -> u8 {
    let area = (a >> 11).wrapping_mul(a >> 11).wrapping_mul(b >> 11);
    ((area >> 8) & 0xFF) as u8
}

/// `get_partial_alpha(alpha, partialHeight)`.
pub fn partial_alpha_h(alpha: u8, h: Fixed) -> u8 {
    fx::round_to_int((alpha as i32).wrapping_mul(h)) as u8
}

/// `get_partial_alpha(alpha, fullAlpha)`.
fn partial_alpha(alpha: u8, full: u8) -> u8 {
    ((alpha as u32 * full as u32) >> 8) as u8
}

/// `fixed_to_alpha`.
pub fn fixed_to_alpha(f: Fixed) -> u8 {
    partial_alpha_h(0xFF, f)
}

fn approximate_intersection(mut l1: Fixed, mut r1: Fixed, mut l2: Fixed, mut r2: Fixed) -> Fixed {
    if l1 > r1 {
        std::mem::swap(&mut l1, &mut r1);
    }
    if l2 > r2 {
        std::mem::swap(&mut l2, &mut r2);
    }
    (l1.max(l2) + r1.min(r2)) / 2
}

fn alpha_above_line(alphas: &mut [u8], l: Fixed, r: Fixed, dy: Fixed, full: u8) {
    let big_r = fx::ceil_to_int(r);
    // Skia's arguments keep the row inside the buffer; a row that would not fit is skipped.
    if big_r <= 0 || big_r as usize > alphas.len() {
        return;
    }
    if big_r == 1 {
        alphas[0] = partial_alpha((((big_r << 17) - l - r) >> 9) as u8, full);
        return;
    }
    let first = ONE - l;
    let last = r - ((big_r - 1) << 16);
    let first_h = fx::mul(first, dy);
    alphas[0] = (fx::mul(first, first_h) >> 9) as u8;
    let mut alpha16 = fx::sat_add(first_h, dy >> 1);
    for a in alphas.iter_mut().take(big_r as usize - 1).skip(1) {
        *a = (alpha16 >> 8) as u8;
        alpha16 = fx::sat_add(alpha16, dy);
    }
    alphas[big_r as usize - 1] = full.wrapping_sub(partial_triangle_to_alpha(last, dy));
}

fn alpha_below_line(alphas: &mut [u8], l: Fixed, r: Fixed, dy: Fixed, full: u8) {
    let big_r = fx::ceil_to_int(r);
    if big_r <= 0 || big_r as usize > alphas.len() {
        return;
    }
    if big_r == 1 {
        alphas[0] = partial_alpha(trapezoid_to_alpha(l, r), full);
        return;
    }
    let first = ONE - l;
    let last = r - ((big_r - 1) << 16);
    let last_h = fx::mul(last, dy);
    alphas[big_r as usize - 1] = (fx::mul(last, last_h) >> 9) as u8;
    let mut alpha16 = fx::sat_add(last_h, dy >> 1);
    let mut i = big_r as usize - 2;
    while i > 0 {
        alphas[i] = ((alpha16 >> 8) & 0xFF) as u8;
        alpha16 = fx::sat_add(alpha16, dy);
        i -= 1;
    }
    alphas[0] = full.wrapping_sub(partial_triangle_to_alpha(first, dy));
}

fn blit_single(b: &mut Blitter, y: i32, x: i32, alpha: u8, full: u8, no_real: bool) {
    if b.mode == Mode::Mask {
        if full == 0xFF && !no_real {
            b.mask_set(x, y, alpha);
        } else {
            b.mask_add(x, y, partial_alpha(alpha, full));
        }
    } else if full == 0xFF && !no_real {
        b.real_v(x, y, 1, alpha);
    } else {
        b.anti_h1(x, y, partial_alpha(alpha, full));
    }
}

fn blit_two(b: &mut Blitter, y: i32, x: i32, a1: u8, a2: u8, full: u8, no_real: bool) {
    if b.mode == Mode::Mask {
        b.mask_add(x, y, a1);
        b.mask_add(x + 1, y, a2);
    } else if full == 0xFF && !no_real {
        b.real_anti_h2(x, y, a1, a2);
    } else {
        b.anti_h1(x, y, a1);
        b.anti_h1(x + 1, y, a2);
    }
}

fn blit_full(b: &mut Blitter, y: i32, x: i32, len: i32, full: u8, no_real: bool) {
    if b.mode == Mode::Mask {
        for i in 0..len {
            b.mask_add(x + i, y, full);
        }
    } else if full == 0xFF && !no_real {
        b.real_h(x, y, len);
    } else {
        b.anti_hw(x, y, len, full);
    }
}

#[allow(clippy::too_many_arguments)]
fn aaa_trapezoid_row(
    b: &mut Blitter,
    y: i32,
    ul: Fixed,
    ur: Fixed,
    ll: Fixed,
    lr: Fixed,
    l_dy: Fixed,
    r_dy: Fixed,
    full: u8,
    no_real: bool,
) {
    let big_l = fx::floor_to_int(ul);
    let big_r = fx::ceil_to_int(lr);
    let len = big_r - big_l;
    if len == 1 {
        let alpha = trapezoid_to_alpha(ur - ul, lr - ll);
        blit_single(b, y, big_l, alpha, full, no_real);
        return;
    }
    if len <= 0 {
        return;
    }
    let n = len as usize;
    if n < 2 {
        return;
    }
    let mut alphas = vec![full; n];
    let mut temp = vec![0u8; n + 2];
    let u_l = fx::floor_to_int(ul);
    let l_l = fx::ceil_to_int(ll);
    if u_l + 2 == l_l {
        let first = fx::from_int(u_l) + ONE - ul;
        let second = ll - ul - first;
        let a1 = full.wrapping_sub(partial_triangle_to_alpha(first, l_dy));
        let a2 = partial_triangle_to_alpha(second, l_dy);
        alphas[0] = alphas[0].saturating_sub(a1);
        alphas[1] = alphas[1].saturating_sub(a2);
    } else {
        let off = (u_l - big_l) as usize;
        if let Some(t) = temp.get_mut(off..) {
            alpha_below_line(t, ul - fx::from_int(u_l), ll - fx::from_int(u_l), l_dy, full);
        }
        for i in u_l..l_l {
            let k = (i - big_l) as usize;
            if let (Some(a), Some(&t)) = (alphas.get_mut(k), temp.get(k)) {
                *a = a.saturating_sub(t);
            }
        }
    }
    let u_r = fx::floor_to_int(ur);
    let l_r = fx::ceil_to_int(lr);
    if u_r + 2 == l_r {
        let first = fx::from_int(u_r) + ONE - ur;
        let second = lr - ur - first;
        let a1 = partial_triangle_to_alpha(first, r_dy);
        let a2 = full.wrapping_sub(partial_triangle_to_alpha(second, r_dy));
        alphas[n - 2] = alphas[n - 2].saturating_sub(a1);
        alphas[n - 1] = alphas[n - 1].saturating_sub(a2);
    } else {
        let off = (u_r - big_l) as usize;
        if let Some(t) = temp.get_mut(off..) {
            alpha_above_line(t, ur - fx::from_int(u_r), lr - fx::from_int(u_r), r_dy, full);
        }
        for i in u_r..l_r {
            let k = (i - big_l) as usize;
            if let (Some(a), Some(&t)) = (alphas.get_mut(k), temp.get(k)) {
                *a = a.saturating_sub(t);
            }
        }
    }
    if b.mode == Mode::Mask {
        for (i, &a) in alphas.iter().enumerate() {
            b.mask_add(big_l + i as i32, y, a);
        }
    } else if full == 0xFF && !no_real {
        b.real_anti_h(big_l, y, &alphas);
    } else {
        b.anti_h_arr(big_l, y, &alphas);
    }
}

/// `blit_trapezoid_row`: the row `y` between the left edge from `ul` to `ll` and the right
/// edge from `ur` to `lr`, each edge's |dy/dx| given, the row `full` alpha high.
#[allow(clippy::too_many_arguments)]
pub fn trapezoid_row(
    b: &mut Blitter,
    y: i32,
    mut ul: Fixed,
    mut ur: Fixed,
    mut ll: Fixed,
    mut lr: Fixed,
    l_dy: Fixed,
    r_dy: Fixed,
    full: u8,
    no_real: bool,
) {
    if ul > ur {
        return;
    }
    if ll > lr {
        let v = approximate_intersection(ul, ll, ur, lr);
        ll = v;
        lr = v;
    }
    if ul == ur && ll == lr {
        return;
    }
    if ul > ll {
        std::mem::swap(&mut ul, &mut ll);
    }
    if ur > lr {
        std::mem::swap(&mut ur, &mut lr);
    }
    let join_left = fx::ceil_to_fixed(ll);
    let join_rite = fx::floor_to_fixed(ur);
    if join_left <= join_rite {
        if ul < join_left {
            let len = fx::ceil_to_int(join_left - ul);
            if len == 1 {
                let alpha = trapezoid_to_alpha(join_left - ul, join_left - ll);
                blit_single(b, y, ul >> 16, alpha, full, no_real);
            } else if len == 2 {
                let first = join_left - ONE - ul;
                let second = ll - ul - first;
                let a1 = partial_triangle_to_alpha(first, l_dy);
                let a2 = full.wrapping_sub(partial_triangle_to_alpha(second, l_dy));
                blit_two(b, y, ul >> 16, a1, a2, full, no_real);
            } else {
                aaa_trapezoid_row(b, y, ul, join_left, ll, join_left, l_dy, fx::MAX, full, no_real);
            }
        }
        if join_left < join_rite {
            blit_full(b, y, fx::floor_to_int(join_left), fx::floor_to_int(join_rite - join_left), full, no_real);
        }
        if lr > join_rite {
            let len = fx::ceil_to_int(lr - join_rite);
            if len == 1 {
                let alpha = trapezoid_to_alpha(ur - join_rite, lr - join_rite);
                blit_single(b, y, join_rite >> 16, alpha, full, no_real);
            } else if len == 2 {
                let first = join_rite + ONE - ur;
                let second = lr - ur - first;
                let a1 = full.wrapping_sub(partial_triangle_to_alpha(first, r_dy));
                let a2 = partial_triangle_to_alpha(second, r_dy);
                blit_two(b, y, join_rite >> 16, a1, a2, full, no_real);
            } else {
                aaa_trapezoid_row(b, y, join_rite, ur, join_rite, lr, fx::MAX, r_dy, full, no_real);
            }
        }
    } else {
        aaa_trapezoid_row(b, y, ul, ur, ll, lr, l_dy, r_dy, full, no_real);
    }
}
