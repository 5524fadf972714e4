//! Where Blink puts an SVG text's glyphs along its line.
//!
//! Blink lays SVG text out in a font scaled to the screen: the font size times the text's
//! scaling factor `S` (the scale of its transform inside the document, view box mapping into
//! the layout container included; `LayoutSVGInlineText::ComputeNewScaledFontForStyle`),
//! floored to 1/100 px as the font cache keys sizes (`FontDescription::EffectiveFontSize`).
//! It shapes there, holds each advance in HarfBuzz's 16.16 (truncated), divides the
//! positions by `S`, and draws the glyphs at the floored size. When `S` is 1 and the size a
//! whole number of hundredths nothing changes. A costume whose width or height is off the
//! 1/64 px grid has `S` just under 1 (`container`): 18 px text is then drawn at 17.99 px, and
//! on a 240 px line the last glyphs sit about 0.1 px further left, often in the other quarter
//! pixel. A baseline exactly on a half pixel then goes to the pixel above (measured at 40.5,
//! 80.5 and 120.5; at 40.505 it goes below), as if Blink's float round trip through `S` left
//! it a hair short.
//!
//! usvg lays out at the unscaled size, so each glyph's advance is replaced by Blink's and the
//! line placed again about its chunk's anchor (start, middle or end); kerning and spacing
//! (the rest of each gap) are scaled by `floored / (size × S)`.

use resvg::usvg;
use skrifa::MetadataProvider;
use skrifa::instance::{LocationRef, Size};

use super::glyphs::upem;

/// A layouted span's glyphs placed as Blink places them: each glyph's device x, the ratio of
/// the size Blink draws them at to usvg's, and the container's vertical map to undo for the
/// baseline.
pub(super) struct Placement {
    pub xs: Vec<f32>,
    pub size_ratio: f32,
    /// Device y of the glyph origins without the container's vertical map (`Frame`).
    pub y_scale: f32,
    pub y_offset: f32,
}

/// What the canvas does to Blink's layout: `layout_scale` device pixels per layout pixel (the
/// MIP scale times the container's vertical stretch), and the container's vertical map on
/// the device (`y_device = y × y_scale + y_offset`, identity without a container).
#[derive(Clone, Copy)]
pub(super) struct Frame {
    pub layout_scale: f32,
    pub y_scale: f32,
    pub y_offset: f32,
}

impl Frame {
    /// A canvas at `scale` with no container correction.
    pub(super) fn plain(scale: f32) -> Frame {
        Frame { layout_scale: scale, y_scale: 1.0, y_offset: 0.0 }
    }
}

/// Blink's font size for `size × scale`: the product in single precision, floored to 1/100.
/// A product within a thousandth of a hundredth of the one above is taken as that one: Blink
/// computes an exact scale of 1 where the transforms are the identity, and the float chain
/// here may land a hair below.
fn effective_size(size: f32, scale: f32) -> f32 {
    let v = size * scale * 100.0;
    let r = v.round();
    (if (v - r).abs() < 1e-3 { r } else { v.floor() }) / 100.0
}

/// The placements of `t`'s layouted spans (in `t.layouted()` order) under `ts` (user space to
/// device), where `layout_scale` is the device pixels per pixel of Blink's layout (the canvas's
/// MIP scale times the container's vertical stretch); `None` for a span left as usvg placed it
/// (nothing to change, or a layout not modelled: rotated, right-to-left, vertical).
pub(super) fn placements(
    t: &usvg::Text,
    ts: resvg::tiny_skia::Transform,
    frame: Frame,
    fontdb: &usvg::fontdb::Database,
) -> Vec<Option<Placement>> {
    let layout_scale = frame.layout_scale;
    let spans = t.layouted();
    let mut out: Vec<Option<Placement>> = spans.iter().map(|_| None).collect();
    if t.writing_mode() != usvg::WritingMode::LeftToRight || layout_scale.is_nan() || layout_scale <= 0.0 {
        return out;
    }
    // usvg lays out each chunk that has text, one span after another.
    let mut next = 0;
    let mut groups = Vec::new();
    for chunk in t.chunks() {
        if chunk.text().is_empty() {
            continue;
        }
        if !matches!(chunk.text_flow(), usvg::TextFlow::Linear) {
            return out;
        }
        let n = chunk.spans().len();
        groups.push((chunk.anchor(), next..next + n));
        next += n;
    }
    if next != spans.len() {
        return out;
    }
    for (anchor, range) in groups {
        let Some(group) = spans.get(range.clone()) else { continue };
        if let Some(placed) = place_chunk(group, anchor, ts, frame, fontdb) {
            for (slot, p) in out.get_mut(range).into_iter().flatten().zip(placed) {
                *slot = Some(p);
            }
        }
    }
    out
}

/// One chunk's spans placed again (see the module); `None` when nothing changes.
fn place_chunk(
    spans: &[usvg::layout::Span],
    anchor: usvg::TextAnchor,
    ts: resvg::tiny_skia::Transform,
    frame: Frame,
    fontdb: &usvg::fontdb::Database,
) -> Option<Vec<Placement>> {
    let layout_scale = frame.layout_scale;
    // Per glyph: device x, its span's size ratio, its own advance on the device and Blink's;
    // and the last glyph's advance.
    let mut xs = Vec::new();
    let mut ratios = Vec::new();
    let mut last_advance = 0.0f32;
    for span in spans {
        let mut ratio = 1.0f32;
        for g in &span.positioned_glyphs {
            let d = ts.pre_concat(g.transform());
            if d.kx != 0.0 || d.ky != 0.0 || d.sy.is_nan() || d.sy <= 0.0 || !d.tx.is_finite() {
                return None;
            }
            let (upem, advance) = (upem(fontdb, g.font)?, advance(fontdb, g.font, g.id)?);
            let size = g.font_size();
            // The text's scale in Blink's layout: device pixels per user unit over the canvas's.
            let scale = d.sy * f32::from(upem) / size / layout_scale;
            let f = effective_size(size, scale);
            ratio = f / (size * scale);
            if !ratio.is_finite() || ratio <= 0.0 {
                return None;
            }
            // The glyph's own advance on the device, and as Blink's layout gives it (at the
            // floored size, in layout pixels, then back through the text's scale).
            let own = f32::from(advance) * d.sx;
            let layout_adv = f32::from(advance) * f / f32::from(upem);
            // HarfBuzz holds it in 16.16, truncated (`SkiaScalarToHarfBuzzPosition`).
            let held = (layout_adv * 65536.0).floor() / 65536.0;
            let blink_adv = held / scale * (d.sx * f32::from(upem) / size);
            xs.push((d.tx, ratio, own, blink_adv));
            last_advance = own;
        }
        ratios.push(ratio);
    }
    if ratios.iter().all(|&r| r == 1.0) {
        return None;
    }
    // Gaps between glyph origins (the last glyph's own advance closes the line), usvg's and
    // Blink's: the glyph's advance as Blink holds it plus the rest of the gap (kerning,
    // spacing) scaled by the span's ratio.
    let gaps: Vec<(f32, f32)> = (0..xs.len())
        .map(|i| {
            let gap = xs.get(i + 1).map_or(last_advance, |n| n.0 - xs[i].0);
            // Kerning and spacing (the gap beyond the glyph's own advance) scale with the size.
            (gap, xs[i].3 + (gap - xs[i].2) * xs[i].1)
        })
        .collect();
    if gaps.iter().any(|g| g.0 < -1e-3) {
        return None; // glyphs not left to right
    }
    let (width, scaled): (f32, f32) = gaps.iter().fold((0.0, 0.0), |a, g| (a.0 + g.0, a.1 + g.1));
    let first = xs.first()?.0;
    let (offset, new_offset) = match anchor {
        usvg::TextAnchor::Start => (0.0, 0.0),
        usvg::TextAnchor::Middle => (-width / 2.0, -scaled / 2.0),
        usvg::TextAnchor::End => (-width, -scaled),
    };
    let mut x = first - offset + new_offset;
    let mut placed_xs = Vec::with_capacity(xs.len());
    for g in &gaps {
        placed_xs.push(x);
        x += g.1;
    }
    let mut placed_xs = placed_xs.into_iter();
    Some(
        spans
            .iter()
            .zip(ratios)
            .map(|(span, size_ratio)| Placement {
                xs: placed_xs.by_ref().take(span.positioned_glyphs.len()).collect(),
                size_ratio,
                y_scale: frame.y_scale,
                y_offset: frame.y_offset,
            })
            .collect(),
    )
}

/// The glyph's advance in font units.
fn advance(fontdb: &usvg::fontdb::Database, font: usvg::fontdb::ID, glyph: usvg::GlyphId) -> Option<u16> {
    fontdb.with_face_data(font, |data, index| {
        let f = skrifa::FontRef::from_index(data, index).ok()?;
        let advance =
            f.glyph_metrics(Size::unscaled(), LocationRef::default()).advance_width(skrifa::GlyphId::new(glyph.0))?;
        Some(advance.max(0.0).min(f32::from(u16::MAX)) as u16)
    })?
}
