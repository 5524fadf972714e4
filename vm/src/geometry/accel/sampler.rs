//! Exact per-pixel answers for one drawable, cheaply: the same arithmetic as
//! [`render`](super::super::render)'s `isTouching` and `sampleColor4b` (single-precision
//! inverse transform, texel flooring, nearest or bilinear footprint), with everything that
//! does not depend on the pixel computed once, texels read from bit planes, and the range of
//! stage columns a row can touch found by search instead of by visiting every column.

use super::super::drawable::Xform;
use super::super::effects::Effects;
use super::super::render::Drawable;
use super::super::silhouette::Silhouette;
use super::super::skin::Mip;
use crate::util::math::floor_i64;

/// One drawable at one MIP level, ready to be sampled at integer stage points.
pub(crate) struct Sampler<'a> {
    xf: Xform,
    /// Shape effects and the skin size they need (they move sample points inside the texture).
    shape: Option<(&'a Effects, [f64; 2])>,
    /// Its bit planes, built on first use by [`Mip::planes`] (colour-only samplers of a fresh
    /// pen layer never need them).
    mip: &'a Mip,
    silhouette: &'a Silhouette,
    /// `isTouchingNearest` (else `isTouchingLinear`).
    nearest: bool,
    wm1: f64,
    hm1: f64,
    /// Texel indices that can be opaque at all: x in `dom[0]..=dom[1]`, y in `dom[2]..=dom[3]`.
    dom: [i64; 4],
}

impl<'a> Sampler<'a> {
    /// A sampler of drawable `d` with transform `xf` (finite), reading `mip`.
    pub(crate) fn new(d: &'a Drawable, xf: Xform, mip: &'a Mip, nearest: bool) -> Self {
        let sil = &mip.silhouette;
        let (w, h) = if sil.has_data() { (sil.width() as i64, sil.height() as i64) } else { (0, 0) };
        let shape = d.effects.changes_shape().then(|| (&d.effects, d.skin.size()));
        let lo = if nearest { 0 } else { -1 };
        Sampler {
            xf,
            shape,
            mip,
            silhouette: sil,
            nearest,
            wm1: w as f64 - 1.0,
            hm1: h as f64 - 1.0,
            dom: [lo, w - 1, lo, h - 1],
        }
    }

    /// Whether every point of a row's [`Sampler::span`] touches (no per-pixel test needed):
    /// a fully opaque silhouette without shape effects.
    pub(crate) fn full(&self) -> bool {
        self.shape.is_none() && self.mip.planes().full()
    }

    /// `getLocalPosition` with the shape effects, as the reference computes it.
    #[inline]
    fn local(&self, x: f64, y: f64) -> [f64; 2] {
        match self.shape {
            Some((e, size)) => self.xf.local_with_effects(x, y, e, size),
            None => self.xf.local(x, y),
        }
    }

    /// `drawable.isTouching([x, y])`.
    #[inline]
    pub(crate) fn touch(&self, x: i32, y: i32) -> bool {
        let [u, v] = self.local(x as f64, y as f64);
        let (tx, ty) = (floor_i64(u * self.wm1), floor_i64(v * self.hm1));
        let planes = self.mip.planes();
        if self.nearest { planes.opaque(tx, ty) } else { planes.linear(tx, ty) }
    }

    /// `drawable.sampleColor4b([x, y])` before effects on colour: premultiplied RGBA, transparent
    /// outside the texture.
    #[inline]
    pub(crate) fn color(&self, x: i32, y: i32) -> [u8; 4] {
        let [u, v] = self.local(x as f64, y as f64);
        if u < 0.0 || v < 0.0 || u > 1.0 || v > 1.0 {
            return [0; 4];
        }
        self.silhouette.color_at_nearest(u, v)
    }

    /// The texel `color` reads at every stage pixel (row-major from stage row −180, columns
    /// −240..=240; `u32::MAX` where it samples transparent), for a drawable that never moves
    /// and has no shape effects (the pen layer): its colours then cost a table lookup.
    pub(crate) fn texel_map(&self) -> Vec<u32> {
        let (w, h) = (self.wm1 as i64 + 1, self.hm1 as i64 + 1);
        let mut out = Vec::with_capacity(super::rows::ROWS * super::rows::COLS);
        for y in super::rows::Y0..=super::rows::Y1 {
            for x in super::rows::X0..=super::rows::X1 {
                let [u, v] = self.xf.local(x as f64, y as f64);
                if w <= 0 || h <= 0 || u < 0.0 || v < 0.0 || u > 1.0 || v > 1.0 {
                    out.push(u32::MAX);
                } else {
                    // As `Silhouette::color_at_nearest` (edge-clamped).
                    let tx = floor_i64(u * self.wm1).clamp(0, w - 1);
                    let ty = floor_i64(v * self.hm1).clamp(0, h - 1);
                    out.push((ty * w + tx) as u32);
                }
            }
        }
        out
    }

    /// The colour at texel index `i` of a [`Sampler::texel_map`] (transparent for `u32::MAX`).
    #[inline]
    pub(crate) fn color_of_texel(&self, i: u32) -> [u8; 4] {
        if i == u32::MAX || !self.silhouette.has_data() { [0; 4] } else { self.silhouette.color_at_index(i as usize) }
    }

    /// Texel column and row of stage point (x, y) without shape effects (monotone in x along a row).
    #[inline]
    fn texel(&self, x: i32, y: f64) -> (i64, i64) {
        let [u, v] = self.xf.local(x as f64, y);
        (floor_i64(u * self.wm1), floor_i64(v * self.hm1))
    }

    /// The stage columns of row `y` within `lo..=hi` whose texel index lies in the texture's
    /// domain: every column where this drawable touches is in it (shape effects only move
    /// points that are inside the texture), and for a [`Sampler::full`] drawable every column
    /// in it touches. Found by search: both indices are monotone along a row, so the set is
    /// one interval.
    pub(crate) fn span(&self, y: i32, lo: i32, hi: i32) -> Option<(i32, i32)> {
        if lo > hi || self.dom[1] < self.dom[0] || self.dom[3] < self.dom[2] {
            return None;
        }
        let yf = y as f64;
        let i = &self.xf.inv;
        // Where u (and v) would cross a texel boundary in exact arithmetic: only a starting
        // guess for the exact search, so rounding here does not matter.
        let guess = |k: usize, t: f64| -> f64 {
            let (slope, base, scale) = if k == 0 {
                (-i[0], 0.5 - (yf * i[2] + i[4]), self.wm1)
            } else {
                (i[1], yf * i[3] + i[5] + 0.5, self.hm1)
            };
            (t / scale - base) / slope
        };
        let (a, b) = window(lo, hi, self.dom[0], self.dom[1], |x| self.texel(x, yf).0, |t| guess(0, t))?;
        window(a, b, self.dom[2], self.dom[3], |x| self.texel(x, yf).1, |t| guess(1, t))
    }
}

/// `{x in lo..=hi : a <= f(x) <= b}` for `f` monotone (either way) on `lo..=hi`, as an interval.
/// `guess(t)` estimates where `f` crosses the value `t`.
fn window(lo: i32, hi: i32, a: i64, b: i64, f: impl Fn(i32) -> i64, guess: impl Fn(f64) -> f64) -> Option<(i32, i32)> {
    let (fl, fh) = (f(lo), f(hi));
    let (first, last) = if fl <= fh {
        if fh < a || fl > b {
            return None;
        }
        let first = if fl >= a { lo } else { first_true(lo, hi, guess(a as f64), |x| f(x) >= a) };
        let last = if fh <= b { hi } else { first_true(lo, hi, guess((b + 1) as f64), |x| f(x) > b) - 1 };
        (first, last)
    } else {
        if fl < a || fh > b {
            return None;
        }
        let first = if fl <= b { lo } else { first_true(lo, hi, guess((b + 1) as f64), |x| f(x) <= b) };
        let last = if fh >= a { hi } else { first_true(lo, hi, guess(a as f64), |x| f(x) < a) - 1 };
        (first, last)
    };
    (first <= last).then_some((first, last))
}

/// The smallest x in `lo+1..=hi` with `pred(x)`, given `pred(lo)` false, `pred(hi)` true and
/// `pred` monotone; probes around `guess` first (galloping), then bisects.
fn first_true(lo: i32, hi: i32, guess: f64, pred: impl Fn(i32) -> bool) -> i32 {
    let (mut l, mut h) = (lo, hi);
    let g = if guess.is_finite() { (guess.round().clamp(lo as f64, hi as f64)) as i32 } else { lo + (hi - lo) / 2 };
    let g = g.clamp(lo + 1, hi);
    let mut step = 1i32;
    if pred(g) {
        h = g;
        loop {
            let t = h.saturating_sub(step);
            if t <= l {
                break;
            }
            if pred(t) {
                h = t;
                step = step.saturating_mul(2);
            } else {
                l = t;
                break;
            }
        }
    } else {
        l = g;
        loop {
            let t = l.saturating_add(step);
            if t >= h {
                break;
            }
            if pred(t) {
                h = t;
                break;
            }
            l = t;
            step = step.saturating_mul(2);
        }
    }
    while h - l > 1 {
        let m = l + (h - l) / 2;
        if pred(m) {
            h = m;
        } else {
            l = m;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_finds_monotone_ranges() {
        for (lo, hi) in [(-240, 240), (0, 0), (5, 6), (-3, 100)] {
            for slope in [-3i64, -1, 0, 1, 2] {
                for off in [-500i64, -7, 0, 3, 250] {
                    let f = |x: i32| (x as i64 * slope + off).div_euclid(2);
                    for (a, b) in [(0, 10), (-5, -1), (-1000, 1000), (7, 7), (3, 2)] {
                        let brute: Vec<i32> = (lo..=hi).filter(|&x| (a..=b).contains(&f(x))).collect();
                        let want = brute.first().map(|&s| (s, *brute.last().unwrap_or(&s)));
                        for g in [f64::NAN, 0.0, 1e9, -37.0] {
                            assert_eq!(
                                window(lo, hi, a, b, f, |_| g),
                                want,
                                "{lo}..{hi} slope {slope} off {off} [{a},{b}]"
                            );
                        }
                    }
                }
            }
        }
    }
}
