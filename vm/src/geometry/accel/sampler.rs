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
use super::rows::{self, EMPTY, Row, X0, X1, Y1};
use crate::util::math::{f32r, floor_i64};

/// What the touching rows of one drawable share (see [`Sampler::row`]), kept by the caller
/// between rows: the texel column of every stage column, when it is the same in every row.
#[derive(Debug, Clone, Default)]
pub(crate) struct Columns {
    /// What they were computed for (the caller's key of transform and level; 0: nothing).
    key: u64,
    /// Whether the rest has been computed (on the second row asked for under `key`).
    filled: bool,
    /// Whether the shortcut holds for this transform (else every row is sampled per pixel).
    usable: bool,
    /// Stage columns `first..=last` have a texel column in the texture's domain (none when
    /// `first > last`), in every row.
    first: i32,
    last: i32,
    /// The texel column of each of them ([`UNSTABLE`]: sampled per pixel).
    tx: Vec<i64>,
    /// `first..=last` cut into runs of columns whose texel columns step by exactly one (one
    /// texel per stage pixel: a sprite at its costume's size) or two (at half its size, as
    /// touching reads it: at the texture of size 100), copied from the texel row a word at a
    /// time, and the columns between them, tested one by one.
    runs: Vec<Run>,
    /// What the rest was computed from (set when `filled`): under another key with the same
    /// inputs the columns are the same (a sprite that only moves up or down keeps them).
    inputs: Option<ColumnInputs>,
}

/// Everything [`Sampler::fill_columns`] reads: the transform's column part (`u` depends on
/// `inv[0]`, `inv[2]` and `inv[4]` alone; `inv[1]` decides whether rows can share), whether
/// the transform is finite, shape effects, and the texture's size and sampling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ColumnInputs {
    inv: [u64; 4],
    finite: bool,
    shaped: bool,
    wm1: u64,
    dom: [i64; 4],
}

/// Stage columns `x0..=x1` of a [`Columns`]: texel columns `tx0`, `tx0 + step`, … when `step`
/// is 1 or 2, else (0) each column's own `tx`.
#[derive(Debug, Clone, Copy)]
struct Run {
    x0: i32,
    x1: i32,
    tx0: i64,
    step: i64,
}

impl Columns {
    /// Roughly the 8-byte words kept (what a copy of them copies: see `touching::TouchRows`).
    pub(super) fn heap_words(&self) -> u64 {
        let run = (std::mem::size_of::<Run>() as u64).div_ceil(8);
        self.tx.len() as u64 + self.runs.len() as u64 * run
    }
}

/// Stepped runs shorter than this are tested column by column (a word copy costs about as
/// much as a few bit tests).
const MIN_UNIT_RUN: usize = 8;

/// Bits 0, 2, 4, …, 62 of `x` as bits 0..32 (the texel columns a run of step 2 reads from one
/// word of its texel row).
#[inline]
fn even_bits(x: u64) -> u64 {
    let mut x = x & 0x5555_5555_5555_5555;
    x = (x | x >> 1) & 0x3333_3333_3333_3333;
    x = (x | x >> 2) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | x >> 4) & 0x00FF_00FF_00FF_00FF;
    x = (x | x >> 8) & 0x0000_FFFF_0000_FFFF;
    (x | x >> 16) & 0x0000_0000_FFFF_FFFF
}

/// [`Run`]s of the columns `first..` with texel columns `tx`.
fn runs_of(first: i32, tx: &[i64]) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
    let mut i = 0;
    while i < tx.len() {
        let mut j = i + 1;
        let step = match tx.get(i + 1) {
            Some(&next) if tx[i] != UNSTABLE && next != UNSTABLE && (1..=2).contains(&(next - tx[i])) => next - tx[i],
            _ => 0,
        };
        if step > 0 {
            while j < tx.len() && tx[j] != UNSTABLE && tx[j] == tx[j - 1] + step {
                j += 1;
            }
        }
        let (x0, x1) = (first + i as i32, first + j as i32 - 1);
        if j - i >= MIN_UNIT_RUN {
            out.push(Run { x0, x1, tx0: tx[i], step });
        } else if let Some(last) = out.last_mut().filter(|r| r.step == 0) {
            last.x1 = x1;
        } else {
            out.push(Run { x0, x1, tx0: 0, step: 0 });
        }
        i = j;
    }
    out
}

/// Cross terms of the inverse transform below this are the rounding of an unrotated sprite's
/// `sin(0)`-like entries (about 1e-17): only then are texel columns worth sharing between rows.
const TINY_CROSS: f64 = 1e-12;

/// A column whose texel column may differ between rows (its value before rounding to single
/// precision lies on a rounding boundary, which happens often: the inverse transform's entries
/// are single-precision numbers and stage columns integers). Such columns are sampled per pixel.
const UNSTABLE: i64 = i64::MIN;

/// `getLocalPosition`'s last steps for a coordinate whose value before rounding to single
/// precision is within `slack` of `t`: the texel index (`floor(c · scale)`, `c` rounded and
/// snapped) if every such value gives the same one. Each step is monotone, so the two ends
/// decide.
fn stable_texel(t: f64, slack: f64, scale: f64) -> Option<i64> {
    // `local` snaps coordinates within 1e-6 of zero to zero.
    let texel = |t: f64| {
        let c = f32r(t);
        floor_i64(if c.abs() < 1e-6 { 0.0 } else { c } * scale)
    };
    let lo = texel(t - slack);
    (lo == texel(t + slack)).then_some(lo)
}

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

    /// Touching row `y` (the stage columns where [`Sampler::touch`] holds) and how many
    /// columns were tested one by one (as [`Sampler::span`] and a test per column in it would).
    /// `memo` keeps what the rows of this drawable share under `key` (non-zero; another
    /// transform or level must have another key).
    ///
    /// Why rows can share: an unrotated drawable's inverse transform has cross terms of about
    /// 1e-17, so a column's `u` (before rounding to single precision) moves with the row by
    /// less than 1e-14, and a row's `v` with the column likewise. Where that movement, plus
    /// the sums' own rounding, cannot change the single-precision value, the texel column of a
    /// stage column is the same in every row and the texel row the same along a row: proved
    /// per column and per row by [`stable_texel`]; the columns and rows where it cannot be
    /// proved are sampled per pixel as before.
    pub(crate) fn row(&self, y: i32, memo: &mut Columns, key: u64) -> (Row, u64) {
        // The first row of a transform is sampled per pixel: a drawable that moves every frame
        // is often asked for one row only, and the columns cost about two rows.
        if memo.key != key {
            if memo.filled && memo.inputs == Some(self.column_inputs()) {
                // Another transform with the same columns: kept (no row per pixel first).
                memo.key = key;
            } else {
                (memo.key, memo.usable, memo.filled) = (key, false, false);
                return self.row_by_pixels(y);
            }
        }
        if !memo.filled {
            self.fill_columns(memo);
        }
        let i = &self.xf.inv;
        let ty = memo.usable.then(|| {
            let yi = f64::from(y) * i[3];
            // `local`'s v with the column's term x·i[1] left out, and slack for that term and
            // the sums' rounding.
            let t = (yi + i[5]) + 0.5;
            let slack = 2.0 * f64::from(X1) * i[1].abs() + 16.0 * f64::EPSILON * (yi.abs() + i[5].abs() + 1.0);
            stable_texel(t, slack, self.hm1)
        });
        let Some(ty) = ty.flatten() else { return self.row_by_pixels(y) };
        if memo.first > memo.last || ty < self.dom[2] || ty > self.dom[3] {
            return (EMPTY, 0);
        }
        let (a, b) = (memo.first, memo.last);
        if self.full() {
            return (rows::range(a, b), 0);
        }
        let mut out = EMPTY;
        // A texel row outside the texture answers false everywhere, as `touch` would.
        if let Some(bits) = self.mip.planes().row_bits(ty, !self.nearest) {
            for run in &memo.runs {
                match run.step {
                    1 => {
                        rows::or_bits(&mut out, run.x0, run.x1, |k| bits.word_at(run.tx0 + k));
                        continue;
                    }
                    2 => {
                        rows::or_bits(&mut out, run.x0, run.x1, |k| {
                            let t = run.tx0 + 2 * k;
                            even_bits(bits.word_at(t)) | even_bits(bits.word_at(t + 64)) << 32
                        });
                        continue;
                    }
                    _ => {}
                }
                let txs = &memo.tx[(run.x0 - a) as usize..=(run.x1 - a) as usize];
                for (x, &tx) in (run.x0..=run.x1).zip(txs) {
                    if if tx == UNSTABLE { self.touch(x, y) } else { bits.get(tx) } {
                        rows::set(&mut out, x);
                    }
                }
            }
        }
        (out, (b - a + 1) as u64)
    }

    /// [`Sampler::row`] the reference's way: its span, then every column in it.
    fn row_by_pixels(&self, y: i32) -> (Row, u64) {
        let Some((a, b)) = self.span(y, X0, X1) else { return (EMPTY, 0) };
        if self.full() {
            return (rows::range(a, b), 0);
        }
        let mut out = EMPTY;
        for x in a..=b {
            if self.touch(x, y) {
                rows::set(&mut out, x);
            }
        }
        (out, (b - a + 1) as u64)
    }

    /// Fills `memo`: whether rows can share their columns' texel columns, and if so the columns
    /// of `span`'s first window (then the same in every row) and the texel column of each
    /// ([`UNSTABLE`] where it may differ between rows).
    fn fill_columns(&self, memo: &mut Columns) {
        memo.filled = true;
        memo.inputs = Some(self.column_inputs());
        memo.usable = false;
        memo.tx.clear();
        memo.runs.clear();
        (memo.first, memo.last) = (1, 0);
        let i = &self.xf.inv;
        if self.shape.is_some()
            || !i.iter().all(|v| v.is_finite())
            || i[1].abs() > TINY_CROSS
            || i[2].abs() > TINY_CROSS
        {
            return;
        }
        // Column x's texel column in every row, if provably the same: `local`'s u with the
        // row's term y·i[2] left out, and slack for that term and the sums' rounding.
        let stable = |x: i32| {
            let xi = f64::from(x) * i[0];
            let t = 0.5 - (xi + i[4]);
            let slack = 2.0 * f64::from(Y1) * i[2].abs() + 16.0 * f64::EPSILON * (xi.abs() + i[4].abs() + 1.0);
            stable_texel(t, slack, self.wm1)
        };
        let (lo, hi) = (self.dom[0], self.dom[1]);
        if self.dom[3] < self.dom[2] || hi < lo {
            // No texel in the domain: no row has a span.
            memo.usable = true;
            return;
        }
        // Only a starting guess for the exact search, as in `span`.
        let guess = |t: f64| (t / self.wm1 - (0.5 - i[4])) / -i[0];
        let Some((a, b)) = window(X0, X1, lo, hi, |x| self.texel(x, 0.0).0, guess) else {
            // No column in the domain in row 0; in every row if both ends are stable and on
            // the same side of it (the texel column is monotone along a row).
            let out = |t: Option<i64>| {
                t.map(|t| {
                    if t < lo {
                        -1
                    } else if t > hi {
                        1
                    } else {
                        0
                    }
                })
            };
            let (l, h) = (out(stable(X0)), out(stable(X1)));
            memo.usable = l.is_some() && l == h && l != Some(0);
            return;
        };
        // The window is the same in every row when its ends and the columns just outside are
        // stable: by monotonicity every column before, in and after it stays where it is.
        if [a - 1, a, b, b + 1].into_iter().any(|x| (X0..=X1).contains(&x) && stable(x).is_none()) {
            return;
        }
        memo.tx.extend((a..=b).map(|x| stable(x).unwrap_or(UNSTABLE)));
        memo.runs = runs_of(a, &memo.tx);
        (memo.first, memo.last) = (a, b);
        memo.usable = true;
    }

    /// What [`Sampler::fill_columns`] computes its columns from.
    fn column_inputs(&self) -> ColumnInputs {
        let i = &self.xf.inv;
        ColumnInputs {
            inv: [i[0].to_bits(), i[1].to_bits(), i[2].to_bits(), i[4].to_bits()],
            finite: i.iter().all(|v| v.is_finite()),
            shaped: self.shape.is_some(),
            wm1: self.wm1.to_bits(),
            dom: self.dom,
        }
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
    #[inline(always)]
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
    use crate::geometry::drawable::{Placement, RotationStyle};
    use crate::geometry::render::{Scene, uses_nearest};
    use crate::geometry::skin::Skin;
    use crate::rng::SplitMix64;
    use std::sync::Arc;

    /// Every row of drawables at arbitrary fractional positions (the transform's single-precision
    /// entries put many columns exactly on a rounding boundary), unrotated, mirrored and rotated,
    /// scaled, nearest and bilinear: the shared columns give the rows and the work of sampling
    /// every pixel, and most rows of unrotated drawables take the shortcut.
    #[test]
    fn shared_columns_give_the_rows_of_sampling_every_pixel() {
        let mut rng = SplitMix64::new(36);
        let (mut shared, mut unrotated_rows, mut copied) = (0u64, 0u64, 0u64);
        for case in 0..400 {
            // Some wider than a few words, for runs copied across word boundaries.
            let (w, h) = (1 + rng.below(if case % 4 == 1 { 400 } else { 70 }) as u32, 1 + rng.below(70) as u32);
            let rgba: Vec<u8> = (0..w * h)
                .flat_map(|i| [200, 30, 30, if (i * 7 + i / 5) % 11 == 0 && case % 3 != 0 { 0 } else { 255 }])
                .collect();
            let skin = if case % 5 == 4 {
                crate::geometry::accel::tests::ellipse_svg(&mut rng, &[[1, 2, 3]; 5])
            } else {
                Arc::new(Skin::from_rgba_res2(w, h, rgba, None))
            };
            let frac = |r: &mut SplitMix64| r.below(2_000_001) as f64 / 10_000.0 - 100.0;
            let direction = [90.0, -90.0, 90.0, 37.0, 180.0][case % 5];
            let style = [RotationStyle::AllAround, RotationStyle::LeftRight, RotationStyle::DontRotate][case % 3];
            let size = [100.0, 50.0, 137.5, 250.0][rng.below(4) as usize];
            let placement = Placement::from_target(frac(&mut rng), frac(&mut rng), direction, size, style);
            let d = Drawable { skin, placement, visible: true, effects: Effects::default() };
            let scene = Scene::new(vec![d]);
            let (d, Some(xf)) = (&scene.drawables[0], scene.xform(0)) else { panic!("no transform") };
            let level = d.skin.mip_level(d.placement.render_scale());
            let s = Sampler::new(d, xf, d.skin.mip_ref(level), uses_nearest(d));
            let mut memo = Columns::default();
            let unrotated = xf.inv[1].abs() < TINY_CROSS && xf.inv[2].abs() < TINY_CROSS;
            for y in rows::Y0..=rows::Y1 {
                let got = s.row(y, &mut memo, 7);
                assert_eq!(got, s.row_by_pixels(y), "case {case}, row {y}, transform {:?}", xf.inv);
                if unrotated && got.1 > 0 {
                    unrotated_rows += 1;
                    shared += u64::from(memo.usable && memo.filled);
                    if memo.usable && memo.filled {
                        copied +=
                            memo.runs.iter().filter(|r| r.step > 0).map(|r| (r.x1 - r.x0 + 1) as u64).sum::<u64>();
                    }
                }
            }
        }
        assert!(shared * 10 > unrotated_rows * 9, "{shared} of {unrotated_rows} rows shared their columns");
        assert!(copied > 5_000, "only {copied} columns were copied a word at a time");
    }

    /// A drawable that moves only up or down (by whole and fractional steps, between costumes
    /// of one size) keeps its columns from one transform to the next, and one that moves
    /// sideways or changes to a costume of another size does not: every row as sampling every
    /// pixel gives it, and most transforms after the first start from kept columns.
    #[test]
    fn columns_kept_across_vertical_moves_give_the_rows_of_sampling_every_pixel() {
        let mut rng = SplitMix64::new(44);
        let (mut kept, mut moves) = (0u64, 0u64);
        for case in 0..120 {
            let (w, h) = (1 + rng.below(if case % 4 == 1 { 300 } else { 60 }) as u32, 1 + rng.below(60) as u32);
            let costume = |r: &mut SplitMix64| {
                let rgba: Vec<u8> = (0..w * h).flat_map(|_| [9, 9, 9, if r.below(4) == 0 { 0 } else { 255 }]).collect();
                Arc::new(Skin::from_rgba_res2(w, h, rgba, None))
            };
            // Two of one size; a third one texel wider, and moves sideways, change the columns.
            let costumes = [costume(&mut rng), costume(&mut rng)];
            let wider = {
                let rgba: Vec<u8> =
                    (0..(w + 1) * h).flat_map(|i| [9, 9, 9, if i % 3 == 0 { 0 } else { 255 }]).collect();
                Arc::new(Skin::from_rgba_res2(w + 1, h, rgba, None))
            };
            let frac = |r: &mut SplitMix64| r.below(2_000_001) as f64 / 10_000.0 - 100.0;
            let (mut x, mut y) = (frac(&mut rng), frac(&mut rng));
            let direction = [90.0, -90.0, 90.0, 37.0][case % 4];
            let size = [100.0, 50.0, 137.5][rng.below(3) as usize];
            let mut memo = Columns::default();
            for step in 0..12u64 {
                let placement = Placement::from_target(x, y, direction, size, RotationStyle::AllAround);
                let skin = if step % 7 == 6 { wider.clone() } else { costumes[(step % 3 == 2) as usize].clone() };
                let scene = Scene::new(vec![Drawable { skin, placement, visible: true, effects: Effects::default() }]);
                let (d, Some(xf)) = (&scene.drawables[0], scene.xform(0)) else { panic!("no transform") };
                let level = d.skin.mip_level(d.placement.render_scale());
                let s = Sampler::new(d, xf, d.skin.mip_ref(level), uses_nearest(d));
                let was_filled = memo.filled;
                for (k, row) in (rows::Y0..=rows::Y1).enumerate() {
                    let got = s.row(row, &mut memo, step + 1);
                    assert_eq!(got, s.row_by_pixels(row), "case {case}, step {step}, row {row}");
                    if k == 0 && step > 0 {
                        moves += 1;
                        kept += u64::from(was_filled && memo.filled && memo.key == step + 1);
                    }
                }
                y += [-5.0, 3.0, -0.75, 0.1][rng.below(4) as usize];
                if step % 5 == 4 {
                    x += 0.3;
                }
            }
        }
        assert!(kept * 2 > moves, "columns kept for {kept} of {moves} moves");
    }

    #[test]
    fn runs_cover_the_columns_once_and_stepped_runs_step_by_their_step() {
        let mut rng = SplitMix64::new(5);
        for _ in 0..2_000 {
            let n = rng.below(200) as usize;
            let mut t = rng.below(50) as i64 - 25;
            let tx: Vec<i64> = (0..n)
                .map(|_| {
                    t += if rng.coin(2) { 2 } else { [1, 1, 1, 0, 2][rng.below(5) as usize] };
                    if rng.below(40) == 0 { UNSTABLE } else { t }
                })
                .collect();
            let first = rng.below(300) as i32 - 240;
            let runs = runs_of(first, &tx);
            let mut x = first;
            for r in &runs {
                assert_eq!(r.x0, x, "{runs:?}");
                assert!(r.x1 >= r.x0);
                if r.step > 0 {
                    assert!((r.x1 - r.x0 + 1) as usize >= MIN_UNIT_RUN);
                    for c in r.x0..=r.x1 {
                        assert_eq!(tx[(c - first) as usize], r.tx0 + r.step * i64::from(c - r.x0));
                    }
                }
                x = r.x1 + 1;
            }
            assert_eq!(x, first + n as i32);
        }
    }

    #[test]
    fn copied_words_hold_each_columns_answer() {
        let mut rng = SplitMix64::new(11);
        for case in 0..300 {
            let (w, h) = (1 + rng.below(300) as u32, 1 + rng.below(4) as u32);
            let rgba: Vec<u8> = (0..w * h).flat_map(|_| [9, 9, 9, if rng.below(3) == 0 { 0 } else { 255 }]).collect();
            let skin = Skin::from_rgba_res2(w, h, rgba, None);
            let mip = skin.mip_ref(0);
            for linear in [false, true] {
                for y in -1..=h as i64 {
                    let Some(bits) = mip.planes().row_bits(y, linear) else { continue };
                    for _ in 0..20 {
                        let (a, b) = (rng.below(481) as i32 + X0, rng.below(481) as i32 + X0);
                        let (a, b) = (a.min(b), a.max(b));
                        let tx0 = rng.below(w as u64 + 140) as i64 - 70;
                        let mut got = EMPTY;
                        rows::or_bits(&mut got, a, b, |k| bits.word_at(tx0 + k));
                        let mut want = EMPTY;
                        for x in a..=b {
                            if bits.get(tx0 + i64::from(x - a)) {
                                rows::set(&mut want, x);
                            }
                        }
                        assert_eq!(
                            got, want,
                            "case {case}, linear {linear}, row {y}, columns {a}..={b} from texel {tx0}"
                        );
                        // Every other texel, as a run of step 2 reads them.
                        let mut got = EMPTY;
                        rows::or_bits(&mut got, a, b, |k| {
                            even_bits(bits.word_at(tx0 + 2 * k)) | even_bits(bits.word_at(tx0 + 2 * k + 64)) << 32
                        });
                        let mut want = EMPTY;
                        for x in a..=b {
                            if bits.get(tx0 + 2 * i64::from(x - a)) {
                                rows::set(&mut want, x);
                            }
                        }
                        assert_eq!(got, want, "case {case}, step 2, row {y}, columns {a}..={b} from texel {tx0}");
                    }
                }
            }
        }
    }

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
