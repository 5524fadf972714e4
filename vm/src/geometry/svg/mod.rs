//! SVG costumes: the normalisation scratch-svg-renderer applies before the
//! browser draws an SVG (`fixupSvgString`, `loadSvgString` without the Scratch 2
//! quirks), then rasterisation with resvg at a MIP scale, as `SVGSkin.createMIP`
//! draws the image onto a canvas.
//!
//! What is reproduced: the string fix-ups, the view box / width / height rules
//! (a missing view box is measured from the drawing's bounding box plus half the
//! largest stroke width), pixelated embedded images, and the canvas size
//! `floor(viewBox size × scale)`, and text in Scratch's own fonts where
//! scratch-svg-renderer inlines them and in the browser's fallback fonts elsewhere
//! (`vm/fonts/`, embedded: no system font is read, so silhouettes never depend on the
//! machine). Glyphs are shaped and placed by usvg and drawn as Chromium's glyph masks
//! (`glyphs`); a glyph's position can still fall in another quarter pixel than the
//! browser's text engine puts it. What is not: the stroke-width normalisation of paths
//! under non-uniform transforms (the browser draws those with a stroke width averaged
//! over both axes), and glyphs DejaVu lacks too. Clip paths and masks are evaluated
//! where the browser evaluates them after `transformStrokeWidths` pushed the containers'
//! transforms down (`pushdown`). Edge pixels come from a port of Skia's scan converters
//! (`svg_raster`, `aaa`), through single-shape clip paths as Skia clips (`clip`); SVGs with
//! other clip paths, masks, filters, blend modes or patterns are drawn by resvg with
//! tiny-skia's supersampled edges.
//! Either way a pixel that is only partly covered can still differ from the browser's.
//!
//! The work is split by concern: `fixup` repairs the source text, `normalise`
//! rebuilds the document with its width, height and view box (measuring a missing
//! view box in `measure`), `fonts` holds the usvg options with the embedded fonts,
//! `paint` draws the shapes with the browser's edge coverage, `gradient` their gradients as
//! Skia's dithered pipeline does, `container` places the drawing as Blink's layout
//! container does, `text_layout` places glyphs as Blink's scaled text layout does, `bitmap` embedded images as Skia samples them, `clip` makes their clips,
//! `pushdown` models scratch-svg-renderer's transform push-down, `glyphs` makes glyph masks, and `conics` gives circles,
//! ellipses and rounded rectangles the browser's outline. This module is
//! the public face: [`SvgImage`] and the items callers use.

use std::sync::Arc;

use resvg::{tiny_skia, usvg};

use super::silhouette::Silhouette;
use crate::util::math::f32r;

mod bitmap;
mod clip;
mod conic_stroke;
mod conics;
mod container;
mod fixup;
mod fonts;
mod glyphs;
mod gradient;
mod measure;
mod normalise;
mod paint;
mod pushdown;
mod text_layout;

pub use fixup::fixup_svg_string;
use fonts::options;
use normalise::normalise;
use paint::{modelled_only, render_modelled};

/// Largest SVG source accepted, in bytes.
pub const MAX_SVG_BYTES: usize = 8 << 20;
/// Most XML nodes accepted in one SVG.
pub const MAX_SVG_NODES: u32 = 200_000;
/// Largest canvas side rasterised (scratch-render's `MAX_TEXTURE_DIMENSION` keeps MIPs below this).
pub const MAX_CANVAS_SIDE: u32 = 4096;

const SVG_NS: &str = "http://www.w3.org/2000/svg";
const XLINK_NS: &str = "http://www.w3.org/1999/xlink";
const XML_NS: &str = "http://www.w3.org/XML/1998/namespace";

/// A parsed, normalised SVG costume.
pub struct SvgImage {
    /// `None` for an empty view box (nothing to draw).
    tree: Option<usvg::Tree>,
    /// `viewBox` width and height as the browser stores them (single precision).
    pub view_size: [f64; 2],
    /// `viewBox` x and y (single precision), subtracted from the rotation centre.
    pub view_origin: [f64; 2],
    /// Whether the document contains text.
    pub has_text: bool,
    /// What Chromium's layout container and `drawImage` do to the drawing beyond usvg's view
    /// box mapping (`container`); `None` when nothing.
    container: Option<tiny_skia::Transform>,
    /// The container's vertical stretch ([`container::vertical_stretch`]; 1 without one).
    stretch: f32,
    /// Ids of the `<circle>`, `<ellipse>` and `<rect>` elements (sorted), whose ellipses and
    /// rounded corners are drawn with the browser's conics.
    conic_ids: Vec<String>,
}

impl std::fmt::Debug for SvgImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SvgImage").field("view_size", &self.view_size).field("view_origin", &self.view_origin).finish()
    }
}

impl SvgImage {
    /// Parses and normalises an SVG costume. Errors are reasons for an approximate costume.
    pub fn load(bytes: &[u8]) -> Result<SvgImage, String> {
        if bytes.len() > MAX_SVG_BYTES {
            return Err(format!("SVG is {} bytes, over the limit of {MAX_SVG_BYTES}", bytes.len()));
        }
        let text = String::from_utf8_lossy(bytes);
        let fixed = fixup_svg_string(&text);
        let normalised = normalise(&fixed)?;
        let tree = if normalised.view_size[0] > 0.0 && normalised.view_size[1] > 0.0 {
            let doc = parse_xml(&normalised.text)?;
            Some(usvg::Tree::from_xmltree(&doc, &options()).map_err(|e| format!("SVG not renderable: {e}"))?)
        } else {
            None
        };
        let view =
            [normalised.view_origin[0], normalised.view_origin[1], normalised.view_size[0], normalised.view_size[1]];
        let container = tree.as_ref().and_then(|t| {
            let size = [f64::from(t.size().width()), f64::from(t.size().height())];
            container::correction(view, size, normalised.aspect)
        });
        let stretch = match (&tree, container) {
            (Some(t), Some(_)) => {
                container::vertical_stretch([f64::from(t.size().width()), f64::from(t.size().height())]) as f32
            }
            _ => 1.0,
        };
        Ok(SvgImage {
            tree,
            container,
            stretch,
            view_size: normalised.view_size,
            view_origin: normalised.view_origin,
            has_text: normalised.has_text,
            conic_ids: normalised.conic_ids,
        })
    }

    /// Draws the SVG at `scale` onto a `floor(w × scale) × floor(h × scale)` canvas,
    /// as `SVGSkin.createMIP` does; `None` for an empty canvas (no silhouette).
    pub fn rasterize(&self, scale: f64) -> Option<Silhouette> {
        self.draw(scale, true)
    }

    /// Like [`SvgImage::rasterize`] but with tiny-skia's own 4 × 4 supersampled edges
    /// throughout (the rasteriser before the browser's coverage; for comparisons).
    pub fn rasterize_reference(&self, scale: f64) -> Option<Silhouette> {
        self.draw(scale, false)
    }

    /// Whether [`SvgImage::rasterize`] draws every shape with the browser's coverage
    /// (false: masks, filters, blend modes, patterns and clip paths of more than one shape,
    /// which resvg draws with its own anti-aliasing).
    pub fn coverage_modelled(&self) -> bool {
        self.tree.as_ref().is_some_and(|t| modelled_only(t.root()))
    }

    /// What the canvas at `scale` and the layout container do to Blink's text layout.
    fn frame(&self, scale: f32) -> text_layout::Frame {
        match self.container {
            Some(c) => text_layout::Frame { layout_scale: scale * self.stretch, y_scale: c.sy, y_offset: scale * c.ty },
            None => text_layout::Frame::plain(scale),
        }
    }

    fn draw(&self, scale: f64, modelled: bool) -> Option<Silhouette> {
        let tree = self.tree.as_ref()?;
        let w = canvas_side(self.view_size[0] * scale)?;
        let h = canvas_side(self.view_size[1] * scale)?;
        let mut pixmap = tiny_skia::Pixmap::new(w, h)?;
        let mut ts = tiny_skia::Transform::from_scale(scale as f32, scale as f32);
        if let Some(c) = self.container {
            ts = ts.pre_concat(c);
        }
        // Shapes get the browser's edge coverage (svg_raster); what that does not cover
        // is drawn by resvg as a whole.
        if !(modelled
            && modelled_only(tree.root())
            && render_modelled(tree.root(), ts, self.frame(scale as f32), &self.conic_ids, tree.fontdb(), &mut pixmap))
        {
            pixmap.fill(tiny_skia::Color::TRANSPARENT);
            resvg::render(tree, ts, &mut pixmap.as_mut());
        }
        Some(Silhouette::from_rgba(w, h, unpremultiply(pixmap.take())))
    }
}

/// `canvas.width = x`: truncation; zero or absurd sizes give no canvas.
fn canvas_side(x: f64) -> Option<u32> {
    if !x.is_finite() || x < 1.0 {
        return None;
    }
    let v = x.trunc();
    if v > MAX_CANVAS_SIDE as f64 {
        return None;
    }
    Some(v as u32)
}

/// `getImageData` returns straight alpha: undo the canvas's premultiplication (rounding as Skia does).
fn unpremultiply(mut data: Vec<u8>) -> Vec<u8> {
    for px in data.chunks_exact_mut(4) {
        let a = px[3] as u32;
        if a == 0 {
            px[0] = 0;
            px[1] = 0;
            px[2] = 0;
        } else if a < 255 {
            for c in &mut px[..3] {
                *c = ((*c as u32 * 255 + a / 2) / a).min(255) as u8;
            }
        }
    }
    data
}

fn parse_xml(text: &str) -> Result<roxmltree::Document<'_>, String> {
    let opt = roxmltree::ParsingOptions { allow_dtd: true, nodes_limit: MAX_SVG_NODES, ..Default::default() };
    roxmltree::Document::parse_with_options(text, opt).map_err(|e| format!("SVG is not well-formed XML: {e}"))
}

/// The rotation centre of an SVG skin: the costume's centre minus the view box origin,
/// stored in single precision (scratch-render's `SVGSkin.setSVG`).
pub fn svg_rotation_center(img: &SvgImage, center: Option<[f64; 2]>) -> [f64; 2] {
    let c = center.unwrap_or([img.view_size[0] / 2.0, img.view_size[1] / 2.0]);
    [f32r(c[0] - img.view_origin[0]), f32r(c[1] - img.view_origin[1])]
}

/// Shared handle to a loaded SVG.
pub type SharedSvg = Arc<SvgImage>;

/// What the tests that compare rasterisations with Chromium's silhouettes share.
#[cfg(test)]
pub(crate) mod test_support {
    use super::SvgImage;

    /// The alpha channel of `svg` at `scale`, and whether the ported coverage drew it (not
    /// resvg).
    pub(crate) fn alpha(svg: &str, scale: f64) -> (Vec<u8>, bool) {
        let Ok(img) = SvgImage::load(svg.as_bytes()) else { panic!("a valid SVG: {svg}") };
        let Some(sil) = img.rasterize(scale) else { panic!("a canvas: {svg}") };
        (sil.into_rgba().chunks(4).filter_map(|p| p.get(3).copied()).collect(), img.coverage_modelled())
    }

    /// The straight-alpha RGBA of `svg` at scale 1 and its width.
    pub(crate) fn rgba(svg: &str) -> (Vec<u8>, usize) {
        let Ok(img) = SvgImage::load(svg.as_bytes()) else { panic!("a valid SVG: {svg}") };
        let Some(sil) = img.rasterize(1.0) else { panic!("a canvas: {svg}") };
        let w = sil.width() as usize;
        (sil.into_rgba(), w)
    }

    /// The bytes of rows `y0..y1`, columns `x0..x1` of a `width`-pixel RGBA image.
    pub(crate) fn region(rgba: &[u8], width: usize, [x0, y0, x1, y1]: [usize; 4]) -> Vec<u8> {
        (y0..y1).flat_map(|y| rgba.get((y * width + x0) * 4..(y * width + x1) * 4).unwrap_or(&[]).to_vec()).collect()
    }

    /// FNV-1a of the alpha bytes, to compare with a Chromium silhouette without storing it.
    pub(crate) fn fnv(bytes: &[u8]) -> u64 {
        bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long thin ray of BoatRace's: in a colour other than black, Skia's opaque blitter
    /// writes the two-pixel steps along its edges (`blitAntiH2`) one 256th short, so coverage 1
    /// there is alpha 0. Chromium's silhouette (render oracle): FNV-1a of the alpha bytes and
    /// the non-zero pixels; drawn in black, 26 more pixels would be non-zero.
    #[test]
    fn opaque_colours_interpolate_two_pixel_steps() {
        let ray = |fill: &str| {
            format!(
                "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"480\" height=\"360\" \
                 viewBox=\"0,0,480,360\"><path d=\"M237.11801,174.872l-126.367,-312.361l8.139,-2.963z\" \
                 fill=\"{fill}\" fill-rule=\"evenodd\" stroke-width=\"1\"/></svg>"
            )
        };
        let alpha = |svg: String| test_support::alpha(&svg, 1.0).0;
        let fnv = test_support::fnv;
        let coloured = alpha(ray("#cbc39d"));
        assert_eq!((fnv(&coloured), coloured.iter().filter(|&&a| a != 0).count()), (0x94d3_52d4_44e5_e309, 664));
        let black = alpha(ray("#000000"));
        assert_eq!(black.iter().filter(|&&a| a != 0).count(), 690);
    }

    #[test]
    fn rect_rasterises_with_exact_coverage() {
        let svg = br##"<svg xmlns="http://www.w3.org/2000/svg" width="10.5" height="10.5" viewBox="0 0 10.5 10.5"><rect x="1.25" y="1.25" width="8" height="8" fill="#ff0000"/></svg>"##;
        let img = SvgImage::load(svg).expect("valid svg");
        assert_eq!(img.view_size, [10.5, 10.5]);
        let sil = img.rasterize(1.0).expect("non-empty");
        assert_eq!((sil.width(), sil.height()), (10, 10));
        assert_eq!(sil.alpha(0, 5), 0);
        assert!(sil.alpha(1, 5) > 150 && sil.alpha(1, 5) < 220, "partly covered edge");
        assert_eq!(sil.alpha(5, 5), 255);
        let sil2 = img.rasterize(2.0).expect("non-empty");
        assert_eq!((sil2.width(), sil2.height()), (21, 21));
    }

    /// A #060000 rectangle with a 0.5 px black stroke (drawn as a modulated hairline): the
    /// straight reds the real scratch-render stores (`Silhouette._colorData`, render oracle)
    /// where the hairline lies over the fill's edge (2), beside it inside the fill (5) and in
    /// the plain fill (6). tiny-skia's blending gave 4, 6 and 6.
    #[test]
    fn thin_strokes_over_dark_fills_blend_as_the_browser_does() {
        let svg = br##"<svg xmlns="http://www.w3.org/2000/svg" width="12" height="10" viewBox="0,0,12,10"><path d="M1.3,1.3h7.4v5h-7.4z" fill="#060000" stroke="#000000" stroke-width="0.5"/></svg>"##;
        let sil = SvgImage::load(svg).expect("valid svg").rasterize(1.0).expect("non-empty");
        let px = |x: usize, y: usize| {
            let i = (y * sil.width() as usize + x) * 4;
            (sil.rgba()[i], sil.rgba()[i + 3])
        };
        for y in 2..5 {
            assert_eq!(px(1, y).0, 2, "left edge, row {y}");
            assert_eq!(px(8, y).0, 2, "right edge, row {y}");
            assert_eq!(px(4, y), (6, 255), "plain fill, row {y}");
            assert!(px(1, y).1.abs_diff(209) <= 2, "edge alpha {} (the browser: 209)", px(1, y).1);
        }
        assert_eq!(px(4, 5).0, 5, "inside, beside the bottom hairline");
    }

    /// A `<circle>` is the browser's oval (here, radius 3: one quadratic per quarter through the
    /// box's corners); a path of arcs tracing the same circle stays usvg's cubics, as the
    /// browser draws a path as written; so do ellipses drawn as paths (e.g. the paint editor's).
    #[test]
    fn circles_draw_as_the_browsers_oval_paths_as_written() {
        let alpha = |shape: &str| {
            let svg = format!(
                r##"<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20" viewBox="0,0,20,20">{shape}</svg>"##
            );
            let sil = SvgImage::load(svg.as_bytes()).expect("valid svg").rasterize(1.0).expect("non-empty");
            sil.rgba().iter().skip(3).step_by(4).copied().collect::<Vec<u8>>()
        };
        let circle = alpha(r#"<circle cx="10.3" cy="10.2" r="3" id="ball"/>"#);
        assert_eq!(circle, alpha(r#"<circle cx="10.3" cy="10.2" r="3"/>"#), "an id of its own or a generated one");
        let quads = "M13.3,10.2 Q13.3,13.2 10.3,13.2 Q7.3,13.2 7.3,10.2 Q7.3,7.2 10.3,7.2 Q13.3,7.2 13.3,10.2 Z";
        assert_eq!(circle, alpha(&format!(r#"<path d="{quads}"/>"#)));
        let arcs = "M13.3,10.2 A3,3 0 0 1 10.3,13.2 A3,3 0 0 1 7.3,10.2 A3,3 0 0 1 10.3,7.2 A3,3 0 0 1 13.3,10.2 Z";
        assert_ne!(circle, alpha(&format!(r#"<path d="{arcs}"/>"#)));
    }

    #[test]
    fn missing_view_box_is_measured() {
        let svg = br##"<svg xmlns="http://www.w3.org/2000/svg"><rect x="10" y="20" width="30" height="40" stroke="#000" stroke-width="4"/></svg>"##;
        let img = SvgImage::load(svg).expect("valid svg");
        assert_eq!(img.view_origin, [8.0, 18.0]);
        assert_eq!(img.view_size, [34.0, 44.0]);
    }

    #[test]
    fn broken_svgs_are_errors_not_panics() {
        assert!(SvgImage::load(b"<svg").is_err());
        assert!(SvgImage::load(b"<html></html>").is_err());
        assert!(SvgImage::load(b"\xff\xfe garbage").is_err());
        let empty =
            SvgImage::load(br##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 0 0"></svg>"##).expect("parses");
        assert!(empty.rasterize(1.0).is_none());
    }

    /// The alpha of "Hagrid 42" set in `family` (attribute value as written in the file).
    fn text_alpha(family: &str, also: &str) -> Vec<u8> {
        let svg = format!(
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="60" viewBox="0,0,200,60"><text x="5" y="40" font-family="{family}" font-size="30" fill="#000000">Hagrid 42</text>{also}</svg>"##
        );
        let sil = SvgImage::load(svg.as_bytes()).expect("valid svg").rasterize(1.0).expect("non-empty");
        let (w, h) = (i64::from(sil.width()), i64::from(sil.height()));
        (0..h).flat_map(|y| (0..w).map(move |x| (x, y))).map(|(x, y)| sil.alpha(x, y)).collect()
    }

    /// Families as Chromium draws them, read from the render oracle's silhouettes of this
    /// text: Arial, Helvetica and `sans-serif` are one font (Liberation Sans); an unknown
    /// family, `serif`, `cursive`, Times New Roman and a list ending in a Scratch font that
    /// no element names alone are another (the default font, Liberation Serif); a Scratch
    /// font is Scratch's only where some element's whole `font-family` is its name.
    #[test]
    fn text_falls_back_to_the_fonts_the_browser_uses() {
        let arial = text_alpha("Arial", "");
        assert_eq!(arial, text_alpha("Liberation Sans", ""));
        assert_eq!(arial, text_alpha("Helvetica", ""));
        assert_eq!(arial, text_alpha("sans-serif", ""));
        let default = text_alpha("Zzzfont", "");
        for f in ["serif", "cursive", "Times New Roman", "Liberation Serif", "&quot;Roboto-Regular&quot;, Sans Serif"] {
            assert_eq!(default, text_alpha(f, ""), "{f}");
        }
        let scratch = text_alpha("Sans Serif", "");
        assert_ne!(scratch, arial);
        assert_ne!(scratch, default);
        // Another element naming the Scratch font alone makes it available to the list too.
        let inlined = r#"<text font-family="Sans Serif" x="0" y="-50">x</text>"#;
        assert_eq!(text_alpha("Zzzfont, Sans Serif", inlined), text_alpha("Sans Serif", inlined));
    }
}
