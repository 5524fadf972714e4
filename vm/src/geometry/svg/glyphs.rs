//! Text as Chromium draws it on Linux: each glyph's mask is made by Skia's Fontations scaler
//! context (`SkTypeface_fontations.cpp`) and blitted at its place.
//!
//! - The outline is skrifa's at the device size, light-hinted (Skia's `kSlight`, Blink's
//!   default on Linux): the automatic hinter for TrueType outlines, the font's own hints for
//!   CFF ones, as `make_hinting_instance` chooses. skrifa is the crate Chromium runs.
//! - Its origin: where Blink's layout puts it (`text_layout`), x rounded down to a quarter
//!   pixel after adding an eighth (subpixel positioning, on for horizontal text), y to the
//!   nearest whole pixel; the quarter is added to the outline, the whole pixels place the
//!   mask.
//! - Its mask: the outline filled by Skia's scan converter (our port, [`aaa`]) into a mask of
//!   the outline's bounds rounded out, then Skia's A8 gamma pre-blend
//!   (`SkTMaskGamma_build_correcting_lut`) with Chromium's text contrast 0.2 and gamma 1.2 as
//!   `SkScalerContextRec` stores them (51/255 and 76/64), for the text colour's luminance in
//!   three bits.
//!
//! Checked against Chromium's silhouettes of single glyphs in all six Scratch fonts at sizes
//! 12–48 and text scales 0.5–1: byte for byte (`scripts/svg-silhouettes.py --text-samples`).
//!
//! Stroked glyphs: the hinted outline stroked as `SkScalerContext` strokes it (in the canvas's
//! units before its scale), with tiny-skia's stroker standing in for Skia's (an approximation:
//! the two place curve joins differently).
//!
//! Where Skia does something else, [`glyph_masks`] declines and the caller draws outlines:
//! rotated, skewed or unevenly scaled text, glyphs over 256 device pixels per em (Skia draws
//! those as paths), colour glyphs.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use resvg::{tiny_skia, usvg};
use skrifa::instance::{LocationRef, Size};
use skrifa::outline::{
    DrawSettings, Engine, GlyphStyles, HintingInstance, HintingOptions, OutlineGlyphFormat, OutlinePen, SmoothMode,
    Target,
};
use skrifa::raw::TableProvider;
use skrifa::{GlyphId, MetadataProvider};

use super::text_layout::Placement;
use crate::geometry::aaa;

/// Chromium's text contrast (`SK_GAMMA_CONTRAST` 0.2) as `SkScalerContextRec` keeps it: in 1/255.
const CONTRAST: f32 = 51.0 / 255.0;
/// Chromium's text gamma (`SK_GAMMA_EXPONENT` 1.2) as `SkScalerContextRec` keeps it: floored to 1/64.
const GAMMA: f32 = 76.0 / 64.0;
/// Skia draws glyphs bigger than this (device pixels per em) as paths, not masks.
const MAX_MASK_PPEM: f32 = 256.0;
/// Hinting instances kept at most (one per font and size); the cache is emptied beyond.
const MAX_INSTANCES: usize = 64;

/// One glyph's coverage after the gamma pre-blend, `w × h` at `(x, y)` on the device.
pub(super) struct GlyphMask {
    pub x: i32,
    pub y: i32,
    pub w: u32,
    pub h: u32,
    pub coverage: Vec<u8>,
}

/// How a span's glyphs are painted: filled, or stroked with `stroke` (user units) on a canvas
/// drawn at `mip_scale`.
pub(super) enum GlyphPaint<'a> {
    Fill,
    Stroke { stroke: &'a tiny_skia::Stroke, mip_scale: f32 },
}

/// The masks of a span's glyphs under `ts` (user space to device), in drawing order, painted
/// with colour `rgb`; `None` when Skia would not draw them as hinted masks (see the module).
pub(super) fn glyph_masks(
    span: &usvg::layout::Span,
    placement: Option<&Placement>,
    ts: tiny_skia::Transform,
    fontdb: &usvg::fontdb::Database,
    rgb: [u8; 3],
    paint: GlyphPaint<'_>,
) -> Option<Vec<GlyphMask>> {
    let lut = &pre_blend_tables()[luminance_index(rgb)];
    let mut masks = Vec::new();
    for (j, g) in span.positioned_glyphs.iter().enumerate() {
        // Font units to the device: must be an even scale with no rotation or skew.
        let d = ts.pre_concat(g.transform());
        // Skia hints at the vertical scale and applies the rest after (`PreMatrixScale::
        // kVertical`); a horizontal scale a hair off it (the layout container's stretch,
        // `container`) is left out.
        let uneven = (d.sx / d.sy - 1.0).abs();
        if d.kx != 0.0 || d.ky != 0.0 || d.sx.is_nan() || d.sx <= 0.0 || uneven.is_nan() || uneven > 1e-3 {
            return None;
        }
        // Device pixels per em: the font size times the text's scale, as Skia's text size
        // times the canvas matrix.
        let mut ppem = g.font_size() * (d.sy * f32::from(upem(fontdb, g.font)?) / g.font_size());
        // Where Blink's layout puts the glyph, and the size it draws it at (`text_layout`).
        let mut origin_x = d.tx;
        if let Some(p) = placement {
            ppem *= p.size_ratio;
            origin_x = p.xs.get(j).copied().unwrap_or(d.tx);
        }
        if ppem.is_nan() || ppem <= 0.0 || ppem > MAX_MASK_PPEM {
            return None;
        }
        // Skia's glyph position rounding: a quarter pixel in x, whole pixels in y.
        let x = origin_x + 0.125;
        let ix = x.floor();
        let sub = ((x - ix) * 4.0).floor() / 4.0;
        // Whole pixels in y; under a scaled layout (`text_layout`) a baseline exactly on a
        // half pixel goes to the pixel above, and the container's vertical map is left out.
        let iy = match placement {
            Some(p) => ((d.ty - p.y_offset) / p.y_scale - 0.5).ceil(),
            None => (d.ty + 0.5).floor(),
        };
        if !ix.is_finite() || !iy.is_finite() || ix.abs() > 1e6 || iy.abs() > 1e6 {
            return None;
        }
        let path = hinted_outline(fontdb, g.font, g.id, ppem, sub)?;
        let Some(path) = path else { continue };
        let path = match paint {
            GlyphPaint::Fill => path,
            // `SkScalerContext::internalGetPath` with a frame width: the device outline taken
            // back through the canvas matrix, stroked there (Blink's stroke width is in the
            // scaled font's units: the user width times the text's own scale), and mapped back.
            GlyphPaint::Stroke { stroke, mip_scale } => {
                let text_scale = ppem / g.font_size() / mip_scale;
                let local_stroke = tiny_skia::Stroke { width: stroke.width * text_scale, ..stroke.clone() };
                let local = path.transform(tiny_skia::Transform::from_scale(1.0 / mip_scale, 1.0 / mip_scale))?;
                local.stroke(&local_stroke, 1.0)?.transform(tiny_skia::Transform::from_scale(mip_scale, mip_scale))?
            }
        };
        let b = path.bounds();
        let (l, t) = (b.left().floor(), b.top().floor());
        let (w, h) = ((b.right().ceil() - l) as u32, (b.bottom().ceil() - t) as u32);
        if w == 0 || h == 0 || w > 4 * MAX_MASK_PPEM as u32 || h > 4 * MAX_MASK_PPEM as u32 {
            continue;
        }
        let local = path.transform(tiny_skia::Transform::from_translate(-l, -t))?;
        let mut coverage = vec![0u8; (w * h) as usize];
        aaa::fill(&local, false, None, &mut coverage, w, h)?;
        for c in &mut coverage {
            *c = lut[*c as usize];
        }
        masks.push(GlyphMask { x: ix as i32 + l as i32, y: iy as i32 + t as i32, w, h, coverage });
    }
    Some(masks)
}

/// The font's units per em.
pub(super) fn upem(fontdb: &usvg::fontdb::Database, font: usvg::fontdb::ID) -> Option<u16> {
    fontdb.with_face_data(font, |data, index| {
        let f = skrifa::FontRef::from_index(data, index).ok()?;
        Some(f.head().ok()?.units_per_em())
    })?
}

/// What a font's hinting needs, kept between glyphs and rasterisations: the automatic hinter's
/// script styles per font, and a hinting instance per font and size.
#[derive(Default)]
struct HintCache {
    styles: BTreeMap<FontKey, GlyphStyles>,
    instances: BTreeMap<(FontKey, u32), HintingInstance>,
}

/// A font face by its data's address and length and its index in the file: the data lives in
/// the font database, which is built once per process and never dropped.
type FontKey = (usize, usize, u32);

fn hint_cache() -> &'static Mutex<HintCache> {
    static CACHE: OnceLock<Mutex<HintCache>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HintCache::default()))
}

/// The glyph's light-hinted outline at `ppem`, y down, moved right by `sub` pixels; `Some(None)`
/// for a glyph with no outline (a space), `None` when the font or glyph cannot be read.
fn hinted_outline(
    fontdb: &usvg::fontdb::Database,
    font: usvg::fontdb::ID,
    glyph: usvg::GlyphId,
    ppem: f32,
    sub: f32,
) -> Option<Option<tiny_skia::Path>> {
    fontdb.with_face_data(font, |data, index| {
        let f = skrifa::FontRef::from_index(data, index).ok()?;
        let outlines = f.outline_glyphs();
        let g = outlines.get(GlyphId::new(glyph.0))?;
        let key: FontKey = (data.as_ptr() as usize, data.len(), index);
        let mut cache = hint_cache().lock().ok()?;
        if cache.instances.len() >= MAX_INSTANCES {
            cache.instances.clear();
        }
        let cache = &mut *cache;
        let instance = match cache.instances.entry((key, ppem.to_bits())) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                // `make_hinting_instance` for kSlight: the automatic hinter forced for TrueType
                // outlines, the font's own hinting (or the automatic hinter's fallback) else.
                let engine = if outlines.format() == Some(OutlineGlyphFormat::Glyf) {
                    let styles = cache.styles.entry(key).or_insert_with(|| GlyphStyles::new(&outlines));
                    Engine::Auto(Some(styles.clone()))
                } else {
                    Engine::AutoFallback
                };
                let target = Target::Smooth {
                    mode: SmoothMode::Light,
                    symmetric_rendering: true,
                    preserve_linear_metrics: false,
                };
                let options = HintingOptions { engine, target };
                e.insert(HintingInstance::new(&outlines, Size::new(ppem), LocationRef::default(), options).ok()?)
            }
        };
        let mut pen = Pen { path: tiny_skia::PathBuilder::new(), started: false, current: (0.0, 0.0), dx: sub };
        g.draw(DrawSettings::hinted(instance, false), &mut pen).ok()?;
        Some(pen.path.finish())
    })?
}

/// Skia's `VerbsPointsPen`: y flipped, degenerate segments dropped, a contour started only by
/// its first drawing segment; each point moved right by `dx`.
struct Pen {
    path: tiny_skia::PathBuilder,
    started: bool,
    current: (f32, f32),
    dx: f32,
}

impl Pen {
    fn going_to(&mut self, p: (f32, f32)) {
        if !self.started {
            self.started = true;
            self.path.move_to(self.current.0 + self.dx, self.current.1);
        }
        self.current = p;
    }
}

impl OutlinePen for Pen {
    fn move_to(&mut self, x: f32, y: f32) {
        if self.started {
            self.close();
            self.started = false;
        }
        self.current = (x, -y);
    }

    fn line_to(&mut self, x: f32, y: f32) {
        let p = (x, -y);
        if self.current != p {
            self.going_to(p);
            self.path.line_to(p.0 + self.dx, p.1);
        }
    }

    fn quad_to(&mut self, cx: f32, cy: f32, x: f32, y: f32) {
        let (c, p) = ((cx, -cy), (x, -y));
        if self.current != c || self.current != p {
            self.going_to(p);
            self.path.quad_to(c.0 + self.dx, c.1, p.0 + self.dx, p.1);
        }
    }

    fn curve_to(&mut self, ax: f32, ay: f32, bx: f32, by: f32, x: f32, y: f32) {
        let (a, b, p) = ((ax, -ay), (bx, -by), (x, -y));
        if self.current != a || self.current != b || self.current != p {
            self.going_to(p);
            self.path.cubic_to(a.0 + self.dx, a.1, b.0 + self.dx, b.1, p.0 + self.dx, p.1);
        }
    }

    fn close(&mut self) {
        // `PathBuilder::close` only closes a contour that has drawing segments.
        self.path.close();
    }
}

/// Skia's A8 pre-blend tables, one per luminance in three bits.
fn pre_blend_tables() -> &'static [[u8; 256]; 8] {
    static TABLES: OnceLock<[[u8; 256]; 8]> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut t = [[0u8; 256]; 8];
        for (i, table) in t.iter_mut().enumerate() {
            // `sk_t_scale255<3>`: three bits spread over eight.
            let lum = (i << 5) | (i << 2) | (i >> 1);
            correcting_lut(table, lum as f32 / 255.0);
        }
        t
    })
}

/// `SkTMaskGamma_build_correcting_lut` with the same power-law gamma for paint and device.
fn correcting_lut(table: &mut [u8; 256], src: f32) {
    let to_luma = |v: f32| core_math::powf(v, GAMMA);
    let from_luma = |v: f32| core_math::powf(v, 1.0 / GAMMA);
    let lin_src = to_luma(src);
    let dst = 1.0 - src;
    let lin_dst = to_luma(dst);
    let contrast = CONTRAST * lin_dst;
    let mut ii = 0.0f32;
    for e in table.iter_mut() {
        let raw = ii / 255.0;
        let srca = raw + (1.0 - raw) * contrast * raw;
        *e = if (src - dst).abs() < 1.0 / 256.0 {
            round_to_u8(255.0 * srca)
        } else {
            let out = from_luma(lin_src * srca + (1.0 - srca) * lin_dst);
            round_to_u8(255.0 * ((out - dst) / (src - dst)))
        };
        ii += 1.0;
    }
}

/// `sk_float_round2int` into a byte.
fn round_to_u8(v: f32) -> u8 {
    (v + 0.5).floor().clamp(0.0, 255.0) as u8
}

/// The table for a text colour: `SkComputeLuminance`, then its top three bits.
fn luminance_index(rgb: [u8; 3]) -> usize {
    let [r, g, b] = rgb.map(u32::from);
    (((r * 54 + g * 183 + b * 19) >> 8) >> 5) as usize
}

#[cfg(test)]
mod tests {
    use crate::geometry::svg::SvgImage;

    /// Chromium's silhouette of `svg` at scale 1 (`scripts/svg-silhouettes.py` with the render
    /// oracle, Chromium 156): zero outside `[x0, y0, x1, y1)`, `hex` inside, rows top first.
    fn assert_chromium(svg: &str, [x0, y0, x1, y1]: [usize; 4], hex: &str) {
        let img = SvgImage::load(svg.as_bytes()).expect("a valid SVG");
        let sil = img.rasterize(1.0).expect("a canvas");
        let w = sil.width() as usize;
        let rgba = sil.into_rgba();
        let alpha: Vec<u8> = rgba.chunks(4).map(|p| p[3]).collect();
        let want: Vec<u8> =
            (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
        for (i, &a) in alpha.iter().enumerate() {
            let (x, y) = (i % w, i / w);
            let expected =
                if (x0..x1).contains(&x) && (y0..y1).contains(&y) { want[(y - y0) * (x1 - x0) + x - x0] } else { 0 };
            assert_eq!(a, expected, "pixel ({x}, {y})");
        }
    }

    /// Sans Serif (Noto Sans Medium) `O` at 16 px, at a fractional position.
    #[test]
    fn noto_sans_o_16px() {
        let svg = "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"34\" height=\"35\" viewBox=\"0,0,34,35\"><g fill=\"#000000\" stroke=\"none\" font-family=\"Sans Serif\" font-size=\"16\" text-anchor=\"start\"><text transform=\"translate(2.679,18.814)\" xml:space=\"preserve\" font-family=\"Sans Serif\" font-size=\"16\">O</text></g></svg>";
        assert_chromium(
            svg,
            [3, 7, 15, 19],
            concat!(
                "00000464bae6eebb6b0500000005afffca938ec3ffb606000083ffa30400000195ff890001ebf512000000000af1f003",
                "2affb1000000000000a5ff3241ff9200000000000085ff4b41ff9200000000000085ff4b2affb1000000000000a5ff32",
                "01ebf512000000000af1f103008dffa30400000195ff93000011cfffca928ec3ffd3140000000768bbe7ecbb67080000",
            ),
        );
    }

    /// `Serif`, the browser's default serif font (Liberation Serif), `g` at 24 px.
    #[test]
    fn serif_keyword_g_24px() {
        let svg = "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"41\" height=\"48\" viewBox=\"0,0,41,48\"><g fill=\"#000000\" stroke=\"none\" font-family=\"Serif\" font-size=\"24\" text-anchor=\"start\"><text transform=\"translate(3.644,26.82)\" xml:space=\"preserve\" font-family=\"Serif\" font-size=\"24\">g</text></g></svg>";
        assert_chromium(
            svg,
            [4, 15, 16, 32],
            concat!(
                "0000000000000000198d880000002ba6d4f7e2bcf9c80e00002fecba120008a3ff5d000000a8ff480000002dffc20000",
                "00c3ff370000001cffe300000095ff5700000037ffba00000042f5c411000aadf940000000003be9f1fbdaa62c000000",
                "0000b76f00000000000000000073ff28000000000000000000b6ffe9bbbbbbbb9f670a000021beffffffffffffffbb00",
                "002ed9280000000024c7ff2e09e98e0000000000008dff3b31ff74000000000001c9e60608e3dd3900000038c2ec4700",
                "001b7fcaffffffdc91180000",
            ),
        );
    }

    /// Handwriting (Handlee) `Hello` under `scale(0.5)`: five glyphs placed by shaping.
    #[test]
    fn handlee_hello_at_half_scale() {
        let svg = "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"92\" height=\"35\" viewBox=\"0,0,92,35\"><g fill=\"#000000\" stroke=\"none\" font-family=\"Handwriting\" font-size=\"32\" text-anchor=\"start\"><text transform=\"translate(7.808,19.652) scale(0.5,0.5)\" xml:space=\"preserve\" font-family=\"Handwriting\" font-size=\"32\">Hello</text></g></svg>";
        assert_chromium(
            svg,
            [8, 8, 42, 20],
            concat!(
                "000000000000000000000000000000000000000bd6010040a200000000000000000000837100000000002bce00000000",
                "000000000000d411001acb00000000000000000000a66f000000000031e300000000000000000000c41c000ad6000000",
                "00000000000000b66100000000002ce900000000000000000000cd150013cf00000000000000000000c54f0000000000",
                "30ec000000188789ac320000e5060029c00000007bc9c7a0090000d3a7a7c7f1eed7cbea000007c73a006aac0003f100",
                "0041b1000057b8010087a40000e05d291704000032e6000079ac0000817d001bde00005aa00000bc50000007eb2d00f0",
                "2800000000003ae00000d8440048ca0b002bd2000069940000ee20000000b05c00fd1e000000000040d9000dffa59894",
                "1300002fd400006d960007ff08000000a36503ff17000000000046d30011ff040000000d1023f5010062b40001f51d00",
                "0000d23b04ff14000000000049cc0000be5f00002dd23002ea19002dd40000b862000065bb0000f60c00000000003bc5",
                "00001faab29a8d1e000063c45800a3a33928ce878e961000",
            ),
        );
    }
}
