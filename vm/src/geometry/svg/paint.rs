//! Drawing a parsed SVG with the browser's edge coverage: groups and paths are painted
//! through `svg_raster`'s coverage (Skia's scan converters), solid colours blended with
//! `svg_blend`'s arithmetic, gradients as Skia's pipeline paints them (`gradient`; focal
//! radial ones and hairlines by tiny-skia), text as Chromium's glyph masks
//! (`glyphs`), embedded PNG images as Skia samples them (`bitmap`); anything else is left to
//! resvg.

use resvg::{tiny_skia, usvg};

use super::bitmap::Bitmap;
use super::clip::{self, ClipMask};
use super::conic_stroke::device_stroke;
use super::conics::device_outline;
use super::glyphs::{GlyphPaint, glyph_masks};
use super::gradient::Gradient;
use super::text_layout;
use crate::geometry::{aaa, svg_blend, svg_raster};

/// Whether every node under `g` can be drawn through the modelled coverage: plain groups,
/// anti-aliased paths with colour or gradient paint, and text (its glyph outlines).
pub(super) fn modelled_only(g: &usvg::Group) -> bool {
    g.children().iter().all(|n| match n {
        usvg::Node::Group(c) => group_modelled(c),
        usvg::Node::Text(t) => group_modelled(t.flattened()),
        usvg::Node::Path(p) => {
            let plain = |paint: &usvg::Paint| !matches!(paint, usvg::Paint::Pattern(_));
            p.rendering_mode().use_shape_antialiasing()
                && p.fill().is_none_or(|f| plain(f.paint()))
                && p.stroke().is_none_or(|s| plain(s.paint()))
        }
        // Embedded images are drawn in their place (`bitmap`; formats other than PNG by
        // resvg); the shapes around them keep the browser's coverage.
        usvg::Node::Image(_) => true,
    })
}

/// A child group: one isolated for its opacity is drawn as a layer, a clip of one shape is
/// modelled (`clip`); masks, filters, blend modes and other clips are resvg's.
fn group_modelled(c: &usvg::Group) -> bool {
    let plain = c.clip_path().is_none_or(clip::modelled)
        && c.mask().is_none()
        && c.filters().is_empty()
        && c.blend_mode() == usvg::BlendMode::Normal;
    plain && modelled_only(c)
}

/// Draws the paths under `g` in document order with `svg_raster`'s coverage; `false` when a
/// path could not be drawn (the caller starts over with resvg).
/// `conics` are the ids of the paths usvg made from `<circle>`, `<ellipse>` and `<rect>` (sorted).
pub(super) fn render_modelled(
    g: &usvg::Group,
    base: tiny_skia::Transform,
    frame: text_layout::Frame,
    conics: &[String],
    fontdb: &usvg::fontdb::Database,
    pixmap: &mut tiny_skia::Pixmap,
) -> bool {
    // `base` is the canvas's scale alone (`SvgImage::draw`).
    let Some(mut painter) = ShapePainter::new(pixmap.width(), pixmap.height(), conics, fontdb, base.sy) else {
        return false;
    };
    painter.frame = frame;
    render_group(g, base, pixmap, &mut painter).is_some()
}

/// Paints shapes through their modelled coverage: the coverage buffer and a canvas-sized mask,
/// both reused for every shape of one rasterisation.
struct ShapePainter<'a> {
    cov: svg_raster::Coverage,
    mask: tiny_skia::Mask,
    /// Which pixels of the mask Skia writes with `blitAntiH2` (`aaa::H2_ONLY`), canvas-sized.
    marks: Vec<u8>,
    /// Where a hairline is drawn alone, to take its coverage (made on first use).
    layer: Option<tiny_skia::Pixmap>,
    /// Ids of the paths the browser may build from conics (sorted).
    conics: &'a [String],
    /// The fonts text is drawn in.
    fontdb: &'a usvg::fontdb::Database,
    /// The canvas's scale (the MIP scale): glyph strokes are made before it.
    mip_scale: f32,
    /// What the canvas does to Blink's text layout (`text_layout`).
    frame: text_layout::Frame,
    /// The clip of the groups being drawn, if any.
    clip: Option<ClipMask>,
    /// Whether Skia draws an opaque colour here with its opaque-colour blitter (whose
    /// `blitAntiH2` interpolates: `svg_blend::src_over_solid_marked`); not in a layer.
    opaque_blitter: bool,
    /// The opacity of enclosing groups folded into the paint's alpha instead of a layer
    /// ([`folds_into_paint`]); 1 elsewhere.
    fold: f32,
}

/// What the browser rasterises for one fill or stroke.
enum Outline<'p> {
    /// A device-space path, with its fill rule and what Skia knows of it as conics.
    Path { path: &'p tiny_skia::Path, even_odd: bool, conics: Option<aaa::Conics> },
    /// A `<rect>` element that stays axis-aligned on the device (left, top, right, bottom).
    Rect([f32; 4]),
}

impl<'a> ShapePainter<'a> {
    fn coverage(&mut self, o: &Outline) -> Option<svg_raster::PixelBox> {
        let clip = self.clip.as_ref().map(ClipMask::scan);
        match *o {
            Outline::Path { path, even_odd, conics } => {
                // Under an anti-aliased clip `blitAntiH2` reaches the device as `blitAntiH`.
                let plain = self.opaque_blitter && !clip.is_some_and(|c| c.anti_aliased);
                let marks = if plain { Some(&mut self.marks[..]) } else { None };
                self.cov.fill(path, even_odd, conics, clip, self.mask.data_mut(), marks)
            }
            Outline::Rect(r) => self.cov.fill_rect(r, clip, self.mask.data_mut()),
        }
    }

    fn new(w: u32, h: u32, conics: &'a [String], fontdb: &'a usvg::fontdb::Database, mip_scale: f32) -> Option<Self> {
        let mask = tiny_skia::Mask::new(w, h)?;
        Some(ShapePainter {
            cov: svg_raster::Coverage::new(w, h),
            mask,
            marks: vec![0; w as usize * h as usize],
            layer: None,
            conics,
            fontdb,
            mip_scale,
            frame: text_layout::Frame::plain(mip_scale),
            clip: None,
            opaque_blitter: true,
            fold: 1.0,
        })
    }

    /// A paint's alpha: its opacity in 8 bits (as Blink sets a paint's colour) times the
    /// opacity folded into it (the compositor multiplies the layer's alpha in floats).
    fn alpha_f(&self, opacity: usvg::Opacity) -> f32 {
        f32::from(opacity.to_u8()) / 255.0 * self.fold
    }

    /// A solid paint's alpha ([`Self::alpha_f`]), rounded as Skia converts a float alpha to
    /// 8 bits.
    fn alpha(&self, opacity: usvg::Opacity) -> u8 {
        (self.alpha_f(opacity) * 255.0 + 0.5).clamp(0.0, 255.0) as u8
    }

    /// The coverage just written in `b` of the mask, through the clip: the part of `b` left to
    /// draw (the caller still clears all of `b`).
    fn clipped(&mut self, b: svg_raster::PixelBox, w: usize) -> Option<svg_raster::PixelBox> {
        match &self.clip {
            Some(c) => c.apply(self.mask.data_mut(), w, b),
            None => Some(b),
        }
    }

    /// Only a shape's box of the mask (and marks) was written: clears just that for the next
    /// shape.
    fn clear_mask(&mut self, b: svg_raster::PixelBox, w: usize) {
        for y in b.y0 as usize..b.y1 as usize {
            let row = y * w + b.x0 as usize..y * w + b.x1 as usize;
            if let Some(m) = self.mask.data_mut().get_mut(row.clone()) {
                m.fill(0);
            }
            if let Some(m) = self.marks.get_mut(row) {
                m.fill(0);
            }
        }
    }

    /// Paints a solid colour through the coverage of `outline` with the browser's truncating
    /// arithmetic (`svg_blend`).
    fn paint_solid(&mut self, outline: &Outline, rgb: [u8; 3], alpha: u8, pixmap: &mut tiny_skia::Pixmap) {
        let w = pixmap.width() as usize;
        if let Some(b) = self.coverage(outline) {
            if let Some(s) = self.clipped(b, w) {
                let (mask, marks) = (self.mask.data(), &self.marks);
                svg_blend::src_over_solid_marked(pixmap.data_mut(), w, s, mask, marks, rgb, alpha);
            }
            self.clear_mask(b, w);
        }
    }

    /// A thin stroke in a solid colour: Skia's modulated hairline (tiny-skia's port, drawn
    /// alone to read its coverage), blended with the browser's arithmetic.
    fn hairline_solid(
        &mut self,
        path: &tiny_skia::Path,
        stroke: &tiny_skia::Stroke,
        ts: tiny_skia::Transform,
        rgb: [u8; 3],
        alpha: u8,
        pixmap: &mut tiny_skia::Pixmap,
    ) -> Option<()> {
        let (w, h) = (pixmap.width(), pixmap.height());
        let layer = match &mut self.layer {
            Some(l) => l,
            None => self.layer.insert(tiny_skia::Pixmap::new(w, h)?),
        };
        let mut paint = tiny_skia::Paint { anti_alias: true, ..Default::default() };
        paint.set_color_rgba8(0, 0, 0, alpha);
        layer.stroke_path(path, &paint, stroke, ts, None);
        // The hairline stays within a pixel (plus its caps) of the transformed outline.
        let bounds = path.clone().transform(ts)?.bounds();
        let pad = 2.0 + stroke.width as f64;
        let clamp = |v: f64, hi: u32| v.max(0.0).min(hi as f64) as u32;
        let b = svg_raster::PixelBox {
            x0: clamp((bounds.left() as f64 - pad).floor(), w),
            y0: clamp((bounds.top() as f64 - pad).floor(), h),
            x1: clamp((bounds.right() as f64 + pad).ceil(), w),
            y1: clamp((bounds.bottom() as f64 + pad).ceil(), h),
        };
        let wu = w as usize;
        let (mask, data) = (self.mask.data_mut(), layer.data_mut());
        for y in b.y0 as usize..b.y1 as usize {
            for x in b.x0 as usize..b.x1 as usize {
                let i = y * wu + x;
                mask[i] = data[i * 4 + 3];
                data[i * 4..i * 4 + 4].fill(0);
            }
        }
        if let Some(s) = self.clipped(b, wu) {
            svg_blend::src_over_solid(pixmap.data_mut(), wu, s, self.mask.data(), rgb, 255);
        }
        self.clear_mask(b, wu);
        Some(())
    }

    /// Paints an embedded image (`ts`: its pixels → device) through the coverage of its
    /// device outline, as Skia draws an image rectangle (`bitmap`).
    fn paint_bitmap(
        &mut self,
        bitmap: &Bitmap,
        ts: tiny_skia::Transform,
        pixmap: &mut tiny_skia::Pixmap,
    ) -> Option<()> {
        let (iw, ih) = bitmap.size();
        let rect = tiny_skia::Rect::from_xywh(0.0, 0.0, iw as f32, ih as f32)?;
        let path = tiny_skia::PathBuilder::from_rect(rect).transform(ts)?;
        let outline = match (bitmap.axis_aligned(), path.bounds()) {
            (true, r) => Outline::Rect([r.left(), r.top(), r.right(), r.bottom()]),
            (false, _) => Outline::Path { path: &path, even_odd: false, conics: None },
        };
        // An image is drawn by Skia's shader blitter: no `blitAntiH2` marks.
        let opaque = std::mem::replace(&mut self.opaque_blitter, false);
        let w = pixmap.width() as usize;
        if let Some(b) = self.coverage(&outline) {
            if let Some(s) = self.clipped(b, w) {
                bitmap.src_over(pixmap.data_mut(), w, s, self.mask.data());
            }
            self.clear_mask(b, w);
        }
        self.opaque_blitter = opaque;
        Some(())
    }

    /// Paints a gradient through the coverage of `outline` as Skia's pipeline does (`gradient`).
    fn paint_gradient(&mut self, outline: &Outline, gradient: &Gradient, pixmap: &mut tiny_skia::Pixmap) {
        let w = pixmap.width() as usize;
        if let Some(b) = self.coverage(outline) {
            if let Some(s) = self.clipped(b, w) {
                gradient.paint(pixmap.data_mut(), w, s, self.mask.data());
            }
            self.clear_mask(b, w);
        }
    }

    /// Paints `paint` through the coverage of `outline`.
    fn paint(&mut self, outline: &Outline, paint: &tiny_skia::Paint<'_>, pixmap: &mut tiny_skia::Pixmap) {
        let w = pixmap.width() as usize;
        if let Some(b) = self.coverage(outline) {
            if let Some(r) = self.clipped(b, w).and_then(|s| s.rect()) {
                pixmap.fill_rect(r, paint, tiny_skia::Transform::identity(), Some(&self.mask));
            }
            self.clear_mask(b, w);
        }
    }
}

/// Draws a group's children; a translucent group goes through a layer, as the browser does.
fn render_group(
    g: &usvg::Group,
    ts: tiny_skia::Transform,
    pixmap: &mut tiny_skia::Pixmap,
    painter: &mut ShapePainter<'_>,
) -> Option<()> {
    for n in g.children() {
        match n {
            usvg::Node::Group(c) => render_child(c, ts, pixmap, painter)?,
            // Text as Chromium's glyph masks where Skia makes them, else from its outlines.
            usvg::Node::Text(t) => {
                if draw_glyph_masks(t, ts, pixmap, painter).is_none() {
                    render_child(t.flattened(), ts, pixmap, painter)?
                }
            }
            usvg::Node::Path(p) => draw_path(p, ts, pixmap, painter)?,
            usvg::Node::Image(i) if !i.is_visible() => {}
            usvg::Node::Image(i) => match Bitmap::new(i, ts) {
                Some(bitmap) => painter.paint_bitmap(&bitmap, ts, pixmap)?,
                // Other formats are resvg's; not through a clip.
                None if painter.clip.is_some() => return None,
                None => draw_image(n, ts, pixmap)?,
            },
        }
    }
    Some(())
}

/// Draws text as Chromium's glyph masks (`glyphs`), span by span (fill and stroke in paint
/// order) and glyph by glyph; `None`, with nothing drawn, when some span is not drawn that way
/// (decorations, dashes, gradients, rotated or huge glyphs).
fn draw_glyph_masks(
    t: &usvg::Text,
    ts: tiny_skia::Transform,
    pixmap: &mut tiny_skia::Pixmap,
    painter: &mut ShapePainter<'_>,
) -> Option<()> {
    // `text-rendering: optimizeSpeed` asks for aliased glyphs, which are not modelled.
    if t.rendering_mode() == usvg::TextRendering::OptimizeSpeed {
        return None;
    }
    let placed = text_layout::placements(t, ts, painter.frame, painter.fontdb);
    let mut spans = Vec::new();
    for (span, placement) in t.layouted().iter().zip(&placed) {
        let placement = placement.as_ref();
        if span.underline.is_some() || span.overline.is_some() || span.line_through.is_some() {
            return None;
        }
        if !span.visible {
            continue;
        }
        let fill = |spans: &mut Vec<_>| {
            let Some(fill) = span.fill.as_ref() else { return Some(()) };
            let usvg::Paint::Color(c) = fill.paint() else { return None };
            let rgb = [c.red, c.green, c.blue];
            spans.push((
                glyph_masks(span, placement, ts, painter.fontdb, rgb, GlyphPaint::Fill)?,
                rgb,
                fill.opacity().to_u8(),
            ));
            Some(())
        };
        let stroke = |spans: &mut Vec<_>| {
            let Some(s) = span.stroke.as_ref() else { return Some(()) };
            let usvg::Paint::Color(c) = s.paint() else { return None };
            let st = s.to_tiny_skia();
            if st.dash.is_some() || st.width <= 0.0 {
                return None;
            }
            let rgb = [c.red, c.green, c.blue];
            let paint = GlyphPaint::Stroke { stroke: &st, mip_scale: painter.mip_scale };
            spans.push((glyph_masks(span, placement, ts, painter.fontdb, rgb, paint)?, rgb, s.opacity().to_u8()));
            Some(())
        };
        if span.paint_order == usvg::PaintOrder::FillAndStroke {
            fill(&mut spans)?;
            stroke(&mut spans)?;
        } else {
            stroke(&mut spans)?;
            fill(&mut spans)?;
        }
    }
    let (w, h) = (pixmap.width(), pixmap.height());
    for (masks, rgb, alpha) in spans {
        for m in masks {
            // The mask's part on the canvas, blended as a path's coverage is.
            let clamp = |v: i64, hi: u32| v.clamp(0, i64::from(hi)) as u32;
            let b = svg_raster::PixelBox {
                x0: clamp(i64::from(m.x), w),
                y0: clamp(i64::from(m.y), h),
                x1: clamp(i64::from(m.x) + i64::from(m.w), w),
                y1: clamp(i64::from(m.y) + i64::from(m.h), h),
            };
            if b.x0 >= b.x1 || b.y0 >= b.y1 {
                continue;
            }
            let data = painter.mask.data_mut();
            for y in b.y0..b.y1 {
                // The box lies inside the mask, so these offsets are not negative.
                let src_row = (i64::from(y) - i64::from(m.y)) * i64::from(m.w);
                let row = (y * w) as usize;
                for x in b.x0..b.x1 {
                    let src = usize::try_from(src_row + i64::from(x) - i64::from(m.x)).ok();
                    data[row + x as usize] = src.and_then(|i| m.coverage.get(i)).copied().unwrap_or(0);
                }
            }
            if let Some(s) = painter.clipped(b, w as usize) {
                svg_blend::src_over_solid(pixmap.data_mut(), w as usize, s, painter.mask.data(), rgb, alpha);
            }
            painter.clear_mask(b, w as usize);
        }
    }
    Some(())
}

/// An embedded image other than PNG, as resvg draws it, under `ts`.
fn draw_image(n: &usvg::Node, ts: tiny_skia::Transform, pixmap: &mut tiny_skia::Pixmap) -> Option<()> {
    // `render_node` draws a node at its own bounding box's corner: undo that offset.
    let Some(b) = n.abs_layer_bounding_box() else { return Some(()) };
    resvg::render_node(n, ts.pre_translate(b.x(), b.y()), &mut pixmap.as_mut())?;
    Some(())
}

/// A child group under its transform and clip; a translucent one through a layer.
fn render_child(
    c: &usvg::Group,
    ts: tiny_skia::Transform,
    pixmap: &mut tiny_skia::Pixmap,
    painter: &mut ShapePainter<'_>,
) -> Option<()> {
    let ts = ts.pre_concat(c.transform());
    let Some(cp) = c.clip_path() else { return render_layer(c, ts, pixmap, painter) };
    let size = (pixmap.width(), pixmap.height());
    let inner = ClipMask::new(cp, ts, size, painter.conics, painter.clip.as_ref())?;
    let outer = std::mem::replace(&mut painter.clip, inner);
    let drawn = render_layer(c, ts, pixmap, painter);
    painter.clip = outer;
    drawn
}

/// A group's children, through a layer when it is translucent or isolated. A clip applies to
/// what the layer holds (the layer itself is composited unclipped, which differs from the
/// browser only at an anti-aliased clip's edge).
fn render_layer(
    c: &usvg::Group,
    ts: tiny_skia::Transform,
    pixmap: &mut tiny_skia::Pixmap,
    painter: &mut ShapePainter<'_>,
) -> Option<()> {
    if c.opacity() != usvg::Opacity::ONE && !c.isolate() && folds_into_paint(c) {
        let outer = painter.fold;
        painter.fold = outer * c.opacity().get();
        let drawn = render_group(c, ts, pixmap, painter);
        painter.fold = outer;
        return drawn;
    }
    if c.isolate() || c.opacity() != usvg::Opacity::ONE {
        let mut layer = tiny_skia::Pixmap::new(pixmap.width(), pixmap.height())?;
        // The opaque blitter's `blitAntiH2` interpolation is left out inside a layer: turning it
        // on there was better on balance against Chromium's silhouettes (54 costumes better at
        // scale 2) but made 6 worse, so the rule is not settled.
        let outer = std::mem::replace(&mut painter.opaque_blitter, false);
        let drawn = render_group(c, ts, &mut layer, painter);
        painter.opaque_blitter = outer;
        drawn?;
        let alpha = (c.opacity().get() * 255.0 + 0.5) as u8;
        svg_blend::layer_over(pixmap.data_mut(), layer.data(), alpha);
        Some(())
    } else {
        render_group(c, ts, pixmap, painter)
    }
}

/// Whether Chromium draws a translucent group without a layer: its compositor folds a layer
/// that holds a single draw into that draw's alpha (`SaveLayerAlpha`, one draw, `Restore`),
/// multiplied in floats. A group of one path with only a fill or only a stroke in a colour or
/// a gradient is one draw; a path with both, a pattern, text or several children keep the
/// layer.
fn folds_into_paint(c: &usvg::Group) -> bool {
    let plain = c.mask().is_none() && c.filters().is_empty() && c.blend_mode() == usvg::BlendMode::Normal;
    let solid = |p: &usvg::Paint| !matches!(p, usvg::Paint::Pattern(_));
    plain
        && matches!(c.children(), [usvg::Node::Path(p)] if p.is_visible()
        && match (p.fill(), p.stroke()) {
            (Some(f), None) => solid(f.paint()),
            (None, Some(s)) => solid(s.paint()),
            _ => false,
        })
}

/// One path as resvg draws it (paint order, fill rule, hairline strokes), with modelled coverage.
fn draw_path(
    p: &usvg::Path,
    ts: tiny_skia::Transform,
    pixmap: &mut tiny_skia::Pixmap,
    painter: &mut ShapePainter<'_>,
) -> Option<()> {
    if !p.is_visible() {
        return Some(());
    }
    // An ellipse or rounded rectangle fills with the browser's conic outline, and its stroke
    // is Skia's offset of those conics (`conic_stroke`; offsetting the fill's quadratics
    // instead came out further from Chromium's silhouettes: 12 → 60 differing pixels on a
    // stroked target at scale 2).
    let conic = !p.id().is_empty() && painter.conics.binary_search_by(|id| id.as_str().cmp(p.id())).is_ok();
    let outline = if conic { device_outline(p.data(), ts) } else { None };
    let fill = |pixmap: &mut tiny_skia::Pixmap, painter: &mut ShapePainter<'_>| {
        let Some(f) = p.fill() else { return Some(()) };
        let b = p.data().bounds();
        if b.width() == 0.0 || b.height() == 0.0 {
            return Some(());
        }
        let device = match &outline {
            Some((o, _)) => o.clone(),
            None => p.data().clone().transform(ts)?,
        };
        let even_odd = f.rule() == usvg::FillRule::EvenOdd;
        let conics = outline.as_ref().map(|&(_, bounds)| aaa::Conics { bounds });
        // A plain `<rect>` that stays a rectangle on the device is filled by Chromium's
        // rectangle filler, not as a path.
        let rect = if conic && outline.is_none() { svg_raster::axis_rect(&device) } else { None };
        let shape = match rect {
            Some(r) => Outline::Rect(r),
            None => Outline::Path { path: &device, even_odd, conics },
        };
        if let usvg::Paint::Color(c) = f.paint() {
            let alpha = painter.alpha(f.opacity());
            painter.paint_solid(&shape, [c.red, c.green, c.blue], alpha, pixmap);
            return Some(());
        }
        if let Some(g) = Gradient::new(f.paint(), painter.alpha_f(f.opacity()), ts) {
            painter.paint_gradient(&shape, &g, pixmap);
            return Some(());
        }
        let paint = device_paint(f.paint(), usvg::Opacity::new_clamped(f.opacity().get() * painter.fold), ts)?;
        painter.paint(&shape, &paint, pixmap);
        Some(())
    };
    let stroke = |pixmap: &mut tiny_skia::Pixmap, painter: &mut ShapePainter<'_>| {
        let Some(s) = p.stroke() else { return Some(()) };
        let stroke = s.to_tiny_skia();
        if is_hairline(&stroke, ts) {
            if let usvg::Paint::Color(c) = s.paint() {
                let alpha = painter.alpha(s.opacity());
                return painter.hairline_solid(p.data(), &stroke, ts, [c.red, c.green, c.blue], alpha, pixmap);
            }
            // Thin strokes are modulated hairlines in Skia too; tiny-skia ports that path
            // (its stroke_path maps the user-space shader itself, hence the identity). It
            // draws straight onto the canvas, so not under a clip.
            if painter.clip.is_some() {
                return None;
            }
            let paint = device_paint(
                s.paint(),
                usvg::Opacity::new_clamped(s.opacity().get() * painter.fold),
                tiny_skia::Transform::identity(),
            )?;
            pixmap.stroke_path(p.data(), &paint, &stroke, ts, None);
            return Some(());
        }
        let res = tiny_skia::PathStroker::compute_resolution_scale(&ts);
        let dashed;
        let source = match &stroke.dash {
            Some(d) => {
                dashed = p.data().dash(d, res)?;
                &dashed
            }
            None => p.data(),
        };
        let offset = if conic && stroke.dash.is_none() { device_stroke(p.data(), stroke.width, ts) } else { None };
        let outline = match offset {
            Some(o) => o,
            None => source.stroke(&stroke, res)?.transform(ts)?,
        };
        let shape = Outline::Path { path: &outline, even_odd: false, conics: None };
        if let usvg::Paint::Color(c) = s.paint() {
            let alpha = painter.alpha(s.opacity());
            painter.paint_solid(&shape, [c.red, c.green, c.blue], alpha, pixmap);
            return Some(());
        }
        if let Some(g) = Gradient::new(s.paint(), painter.alpha_f(s.opacity()), ts) {
            painter.paint_gradient(&shape, &g, pixmap);
            return Some(());
        }
        let paint = device_paint(s.paint(), usvg::Opacity::new_clamped(s.opacity().get() * painter.fold), ts)?;
        painter.paint(&shape, &paint, pixmap);
        Some(())
    };
    if p.paint_order() == usvg::PaintOrder::FillAndStroke {
        fill(pixmap, painter)?;
        stroke(pixmap, painter)
    } else {
        stroke(pixmap, painter)?;
        fill(pixmap, painter)
    }
}

/// tiny-skia's (and Skia's) rule: a stroke at most one device pixel wide is drawn as a hairline.
fn is_hairline(stroke: &tiny_skia::Stroke, mut ts: tiny_skia::Transform) -> bool {
    if stroke.width == 0.0 {
        return true;
    }
    ts.tx = 0.0;
    ts.ty = 0.0;
    let mut pts = [tiny_skia::Point::from_xy(stroke.width, 0.0), tiny_skia::Point::from_xy(0.0, stroke.width)];
    ts.map_points(&mut pts);
    let fast_len = |p: tiny_skia::Point| {
        let (a, b) = (p.x.abs(), p.y.abs());
        a.max(b) + a.min(b) / 2.0
    };
    fast_len(pts[0]) <= 1.0 && fast_len(pts[1]) <= 1.0
}

/// A paint whose shader maps device pixels (user space through `ts`), as resvg converts it.
fn device_paint(
    paint: &usvg::Paint,
    opacity: usvg::Opacity,
    ts: tiny_skia::Transform,
) -> Option<tiny_skia::Paint<'static>> {
    let mut out = tiny_skia::Paint { anti_alias: true, ..Default::default() };
    let stops = |g: &usvg::BaseGradient| {
        g.stops()
            .iter()
            .map(|s| {
                let c = s.color();
                let a = (s.opacity() * opacity).to_u8();
                tiny_skia::GradientStop::new(s.offset().get(), tiny_skia::Color::from_rgba8(c.red, c.green, c.blue, a))
            })
            .collect::<Vec<_>>()
    };
    let spread = |g: &usvg::BaseGradient| match g.spread_method() {
        usvg::SpreadMethod::Pad => tiny_skia::SpreadMode::Pad,
        usvg::SpreadMethod::Reflect => tiny_skia::SpreadMode::Reflect,
        usvg::SpreadMethod::Repeat => tiny_skia::SpreadMode::Repeat,
    };
    match paint {
        usvg::Paint::Color(c) => out.set_color_rgba8(c.red, c.green, c.blue, opacity.to_u8()),
        usvg::Paint::LinearGradient(g) => {
            out.shader = tiny_skia::LinearGradient::new(
                (g.x1(), g.y1()).into(),
                (g.x2(), g.y2()).into(),
                stops(g),
                spread(g),
                ts.pre_concat(g.transform()),
            )?;
        }
        usvg::Paint::RadialGradient(g) => {
            out.shader = tiny_skia::RadialGradient::new(
                (g.fx(), g.fy()).into(),
                g.fr().get(),
                (g.cx(), g.cy()).into(),
                g.r().get(),
                stops(g),
                spread(g),
                ts.pre_concat(g.transform()),
            )?;
        }
        usvg::Paint::Pattern(_) => return None,
    }
    Some(out)
}
