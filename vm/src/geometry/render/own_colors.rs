//! A drawable's own colours ([`OwnColors`]: what a stamp draws), with the memo of their
//! colours under its effects ([`ColorMemo`]) that stamps and composites keep.

use std::borrow::Cow;

use super::Scene;
use super::ctx::Ctx;
use crate::geometry::drawable::Xform;
use crate::geometry::effects::Effects;
use crate::geometry::silhouette::Silhouette;

/// A drawable's own colours (see [`Scene::own_colors`]).
pub struct OwnColors<'a> {
    /// The drawable's transform, silhouette, effects and skin size, fetched once: a stamp
    /// reads them at every pixel, and the scene does not change during it.
    xf: Xform,
    sil: &'a Silhouette,
    effects: &'a Effects,
    size: [f64; 2],
    /// Texel colour → its colour under the drawable's effects (see [`ColorMemo`]).
    memo: ColorMemo,
}

/// Texel colour → its colour under one set of effects, direct-mapped: a stamp reads every
/// pixel of one costume under one effect, and costumes have few colours, so the colour
/// transform (RGB → HSV → RGB per pixel) is done once per colour instead. Kept between stamps
/// (see [`Scene::own_colors_with`]): a sprite stamping its costume again and again under the
/// same effect (a flower's petals) transforms each colour once. Each layer of a colour
/// query's composite keeps one too: a recoloured backdrop put every composited pixel through
/// the transform, a sixth of a colour-sensing game's CPU (`402104589`).
#[derive(Debug, Clone, Default)]
pub struct ColorMemo {
    /// The effects the entries were computed under.
    effects: Option<Effects>,
    slots: Vec<Option<([u8; 4], [u8; 4])>>,
}

/// Entries of a [`ColorMemo`].
const MEMO: usize = 256;

impl ColorMemo {
    /// An empty memo for colours under `effects`.
    pub(crate) fn for_effects(effects: &Effects) -> ColorMemo {
        let mut m = ColorMemo::default();
        m.keep_for(effects);
        m
    }

    /// Forgets every entry unless they were computed under `effects`.
    fn keep_for(&mut self, effects: &Effects) {
        if self.effects != Some(*effects) || self.slots.len() != MEMO {
            self.slots.clear();
            self.slots.resize(MEMO, None);
            self.effects = Some(*effects);
        }
    }

    /// `effects.transform_color(c, !0)`, remembered; `effects` must be those the memo is kept
    /// for ([`ColorMemo::for_effects`], [`Scene::own_colors_with`]).
    #[inline]
    pub(crate) fn transform(&mut self, effects: &Effects, c: [u8; 4]) -> [u8; 4] {
        if c[3] == 0 {
            return c;
        }
        let slot = (usize::from(c[0]) * 7 + usize::from(c[1]) * 13 + usize::from(c[2]) * 31 + usize::from(c[3])) % MEMO;
        match self.slots.get(slot) {
            Some(Some((k, out))) if *k == c => *out,
            _ => {
                let out = effects.transform_color(c, !0);
                if let Some(s) = self.slots.get_mut(slot) {
                    *s = Some((c, out));
                }
                out
            }
        }
    }
}

impl OwnColors<'_> {
    /// See [`Xform::inside_span`]: outside it, [`OwnColors::at`] is transparent.
    pub fn inside_span(&self, y: f64) -> Option<(f64, f64)> {
        self.xf.inside_span(y)
    }

    /// `sampleColor4b` of the drawable at a stage point, premultiplied.
    pub fn at(&mut self, x: f64, y: f64) -> [u8; 4] {
        let e = self.effects;
        let [u, v] = if e.enabled != 0 { self.xf.local_with_effects(x, y, e, self.size) } else { self.xf.local(x, y) };
        if u < 0.0 || v < 0.0 || u > 1.0 || v > 1.0 {
            return [0; 4];
        }
        let c = self.sil.color_at_nearest(u, v);
        if e.enabled == 0 {
            return c;
        }
        self.memo.transform(e, c)
    }

    /// The memo, to be given to the next [`Scene::own_colors_with`].
    pub fn into_memo(self) -> ColorMemo {
        self.memo
    }
}

impl Scene {
    /// The colour of drawable `me` alone at a stage point, premultiplied (`sampleColor4b`).
    pub fn sample_own_color(&self, me: usize, x: f64, y: f64) -> [u8; 4] {
        self.own_colors(me).at(x, y)
    }

    /// [`Scene::sample_own_color`] at many points (the renderer's state prepared once). The
    /// MIP is the one for the drawable's scale whatever the floors: a stamp draws the texture
    /// `getTexture(scale)` returns, not the silhouette.
    pub fn own_colors(&self, me: usize) -> OwnColors<'_> {
        self.own_colors_with(me, ColorMemo::default())
    }

    /// [`Scene::own_colors`] with the colour memo of an earlier one (its entries are kept when
    /// the effects are the same).
    pub fn own_colors_with(&self, me: usize, mut memo: ColorMemo) -> OwnColors<'_> {
        let mut ctx = Ctx::new(self);
        ctx.levels = Cow::Borrowed(&[]);
        ctx.update_cpu(me);
        // Level 0 (no levels requested): the mip is settled, so its borrow lasts the scene's.
        let (xf, d) = (ctx.xf(me), ctx.d(me));
        memo.keep_for(&d.effects);
        OwnColors { xf, sil: &ctx.mip_of(me).silhouette, effects: &d.effects, size: d.skin.size(), memo }
    }
}
