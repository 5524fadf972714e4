//! Composited colour sampling: the renderer's blend ([`Blend`]), a sampler of the composite of
//! a fixed set of drawables ([`ColorSampler`]) with the boxes and areas where it can show a
//! colour, and the scene's entry points that prepare one.

use super::ctx::Ctx;
use super::matching::{KEY_CELLS_MIN_AREA, match_box};
use super::{BACKGROUND, Scene};
use crate::geometry::Rect;
use crate::geometry::distance::MatchArea;
use crate::geometry::drawable::Xform;
use crate::geometry::effects::Effects;
use crate::geometry::silhouette::{Silhouette, color_key, colors_match};
use crate::util::math::u8_clamp;

/// `sampleColor3b`'s blend, topmost texel first: each premultiplied colour added under the
/// alpha the texels above left, white behind them all.
pub(crate) struct Blend {
    dst: [u8; 3],
    alpha: f64,
}

impl Blend {
    pub(crate) fn new() -> Self {
        Blend { dst: [0; 3], alpha: 1.0 }
    }

    /// Whether nothing further below can show.
    pub(crate) fn done(&self) -> bool {
        self.alpha == 0.0
    }

    /// The composite when `c` is opaque and nothing is above it: exactly what adding it and
    /// finishing would give, without the arithmetic.
    #[inline]
    pub(crate) fn over_nothing(&self, c: [u8; 4]) -> Option<[u8; 3]> {
        (c[3] == 255 && self.alpha == 1.0).then_some([c[0], c[1], c[2]])
    }

    /// Adds texel `c` (premultiplied RGBA) below those added so far.
    #[inline]
    pub(crate) fn add(&mut self, c: [u8; 4]) {
        for (d, &v) in self.dst.iter_mut().zip(&c) {
            *d = u8_clamp(*d as f64 + v as f64 * self.alpha);
        }
        self.alpha *= 1.0 - c[3] as f64 / 255.0;
    }

    /// The composite: what is left of the alpha shows white.
    pub(crate) fn finish(self) -> [u8; 3] {
        self.dst.map(|v| u8_clamp(v as f64 + self.alpha * 255.0))
    }
}

/// Samples composited colours of a fixed set of drawables (transforms computed once).
pub struct ColorSampler<'a> {
    ctx: Ctx<'a>,
    ids: Vec<usize>,
    /// Per drawable of `ids`, what sampling it reads, fetched once: colour searches sample
    /// hundreds of points per query, and fetching (and copying) a transform per point and
    /// drawable was most of a sample's cost.
    layers: Vec<SampleLayer<'a>>,
}

/// One drawable as [`ColorSampler::sample`] reads it.
struct SampleLayer<'a> {
    xf: Xform,
    sil: &'a Silhouette,
    effects: &'a Effects,
    size: [f64; 2],
    sbox: Rect,
}

impl<'a> ColorSampler<'a> {
    /// A sampler of `ids` (topmost first) whose transforms and levels `ctx` has settled.
    fn new(mut ctx: Ctx<'a>, ids: Vec<usize>) -> Self {
        let layers = ids
            .iter()
            .map(|&i| {
                let d = ctx.d(i);
                let sil = &ctx.mip_of(i).silhouette;
                let sbox = ctx.sample_box(i);
                SampleLayer { xf: ctx.xf(i), sil, effects: &d.effects, size: d.skin.size(), sbox }
            })
            .collect();
        ColorSampler { ctx, ids, layers }
    }

    /// `sampleColor3b` at a stage point: [`Ctx::sample_color3b`] over the prepared layers.
    pub fn sample(&mut self, x: f64, y: f64) -> [u8; 3] {
        let mut blend = Blend::new();
        for l in &self.layers {
            if blend.done() {
                break;
            }
            let b = &l.sbox;
            if x < b.left || x > b.right || y < b.bottom || y > b.top {
                continue;
            }
            let e = l.effects;
            let [u, v] = if e.enabled != 0 { l.xf.local_with_effects(x, y, e, l.size) } else { l.xf.local(x, y) };
            if u < 0.0 || v < 0.0 || u > 1.0 || v > 1.0 {
                continue;
            }
            let c = l.sil.color_at_nearest(u, v);
            let c = if e.enabled == 0 { c } else { e.transform_color(c, !0) };
            // A transparent texel adds nothing (the blend would give the same).
            if c == [0; 4] {
                continue;
            }
            if let Some(done) = blend.over_nothing(c) {
                return done;
            }
            blend.add(c);
        }
        blend.finish()
    }

    /// `sampleColor3b` as [`Ctx::sample_color3b`] computes it, fetching per point and drawable:
    /// the reference for [`ColorSampler::sample`].
    #[cfg(test)]
    pub(crate) fn sample_reference(&mut self, x: f64, y: f64) -> [u8; 3] {
        let boxes: Vec<Rect> = self.layers.iter().map(|l| l.sbox).collect();
        self.ctx.sample_color3b(x, y, &self.ids, &boxes)
    }

    /// The same sampler without the per-drawable boxes (every drawable transformed at every point).
    #[cfg(test)]
    pub(crate) fn without_boxes(mut self) -> Self {
        self.layers.iter_mut().for_each(|l| l.sbox = Rect::UNBOUNDED);
        self
    }

    /// False when no point can sample a colour matching `color` (then a search for it is futile).
    pub fn may_show(&mut self, color: [u8; 3]) -> bool {
        self.ctx.may_composite(&self.ids, color)
    }

    /// Stage boxes outside which no point samples a colour matching `color`; `None` when any
    /// point may (the colour matches the white background). One box per drawable that can
    /// show the colour somewhere: for a drawable without effects whose texels are known
    /// ([`Mip::texel_boxes`]), around its texels that are opaque in the colour or blend; for
    /// the others, their whole [`Ctx::sample_box`].
    ///
    /// Exact: at a point outside every box, each drawable is transparent (adds nothing) or
    /// opaque in another colour (hides everything below), so the composite is the colour of
    /// the topmost opaque texel there, or white: no match.
    ///
    /// [`Mip::texel_boxes`]: crate::geometry::skin::Mip::texel_boxes
    pub fn match_boxes(&mut self, color: [u8; 3]) -> Option<Vec<Rect>> {
        Some(self.areas(color, false)?.into_iter().map(|a| a.rect).collect())
    }

    /// [`ColorSampler::match_boxes`], each box with the cells inside it where its drawable can
    /// show `color` when they are known (large drawables without effects that stay put, such
    /// as backdrops: see [`Mip::key_cells`]), or else, for drawables without effects, the
    /// transform and texture to look up the texel a point samples. Exact as the boxes are:
    /// outside every box, or inside boxes only where their drawables cannot show the colour
    /// (cell or texel), no point samples a colour matching `color`.
    ///
    /// [`Mip::key_cells`]: crate::geometry::skin::Mip::key_cells
    pub fn match_areas(&mut self, color: [u8; 3]) -> Option<Vec<MatchArea<'a>>> {
        self.areas(color, true)
    }

    /// The match boxes, with cells or texel probes when `detail` is set.
    fn areas(&mut self, color: [u8; 3], detail: bool) -> Option<Vec<MatchArea<'a>>> {
        if colors_match(color, BACKGROUND) {
            return None;
        }
        let key = color_key(color);
        let mut out = Vec::new();
        for (&i, l) in self.ids.iter().zip(&self.layers) {
            let mip = self.ctx.mip(i);
            if l.effects.invisible() {
                continue;
            }
            if let Some(rect) = match_box(l.effects.enabled, &l.xf, mip, l.sbox, key) {
                let wanted = detail && l.effects.enabled == 0 && rect.width() * rect.height() >= KEY_CELLS_MIN_AREA;
                let cells = if wanted { mip.key_cells(&l.xf, key) } else { None };
                // Without cells, a drawable without effects is looked up at the one texel a
                // point samples (a moving fruit: most points of its box are transparent).
                let probe = (detail && cells.is_none() && l.effects.enabled == 0).then_some((l.xf, l.sil));
                out.push(MatchArea { rect, cells, probe });
            }
        }
        Some(out)
    }
}

impl Scene {
    /// The colour the renderer composites at a stage point from every visible drawable except
    /// `exclude` (Whisker's colour search samples like this).
    pub fn sample_color(&self, x: f64, y: f64, exclude: Option<usize>) -> [u8; 3] {
        self.color_sampler(exclude).sample(x, y)
    }

    /// A sampler of composited colours (every visible drawable but `exclude`, over white).
    pub fn color_sampler(&self, exclude: Option<usize>) -> ColorSampler<'_> {
        let mut ctx = Ctx::new(self);
        let ids: Vec<usize> =
            (0..self.drawables.len()).rev().filter(|&i| Some(i) != exclude && self.drawables[i].visible).collect();
        for &i in &ids {
            ctx.update_cpu(i);
        }
        ColorSampler::new(ctx, ids)
    }

    /// A sampler of drawable `me`'s own colours alone (over white, as Whisker samples a sprite).
    pub fn own_color_sampler(&self, me: usize) -> ColorSampler<'_> {
        let mut ctx = Ctx::new(self);
        ctx.update_cpu(me);
        ColorSampler::new(ctx, vec![me])
    }
}
