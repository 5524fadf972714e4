//! Solid colours painted through a coverage mask with the browser's 8-bit arithmetic.
//!
//! Chromium's canvas writes a solid colour as Skia's legacy 32-bit blitters do, where
//! tiny-skia's pipeline rounds differently: a #060000 fill at 70 % coverage is stored as
//! premultiplied red 4 there (6 × 180 / 256) and 5 in tiny-skia, and a hairline drawn over it
//! keeps `d × (256 − a) / 256` of it, truncated. Colour sensing compares unpremultiplied
//! colours with a tolerance of 2, so such edge pixels of dark fills decide answers (Snake's
//! `color #060000 is touching`). Checked on costumes read back from the real scratch-render
//! (the render oracle, `scripts/svg-silhouettes.py --colour`): the premultiplied colour is
//! scaled by `coverage + 1` in 256ths and put over what is below by `SkBlitRow::Color32`.

use super::aaa;
use super::svg_raster::PixelBox;

/// Paints the straight colour `rgb` with alpha `alpha` source-over onto premultiplied RGBA8
/// `data` (rows of `width` pixels) inside `b`, each pixel weighted by its byte of `coverage`
/// (same layout as `data`, one byte per pixel).
pub fn src_over_solid(data: &mut [u8], width: usize, b: PixelBox, coverage: &[u8], rgb: [u8; 3], alpha: u8) {
    // No marks: every pixel blends as `blitAntiH` writes it.
    src_over_solid_marked(data, width, b, coverage, &[], rgb, alpha);
}

/// [`src_over_solid`] for a path's coverage with the scan converter's `marks`: where Skia's
/// blitter for an opaque colour other than black wrote a pixel with `blitAntiH2`
/// ([`aaa::H2_ONLY`]), it interpolates with weight `m + (m >> 7)` in 256ths
/// (`SkFastFourByteInterp`), one 256th short of the coverage below 128.
pub fn src_over_solid_marked(
    data: &mut [u8],
    width: usize,
    b: PixelBox,
    coverage: &[u8],
    marks: &[u8],
    rgb: [u8; 3],
    alpha: u8,
) {
    let interp = alpha == 255 && rgb != [0, 0, 0];
    for y in b.y0 as usize..b.y1 as usize {
        for x in b.x0 as usize..b.x1 as usize {
            let i = y * width + x;
            let (Some(&m), Some(px)) = (coverage.get(i), data.get_mut(i * 4..i * 4 + 4)) else { continue };
            if interp && marks.get(i) == Some(&aaa::H2_ONLY) {
                let s = u32::from(m) + u32::from(m >> 7);
                for (c, d) in rgb.iter().chain(std::iter::once(&255)).zip(px.iter_mut()) {
                    *d = ((u32::from(*c) * s + u32::from(*d) * (256 - s)) >> 8) as u8;
                }
            } else {
                blend(px, m, rgb, alpha);
            }
        }
    }
}

/// One premultiplied pixel `px` under `rgb` at `alpha`, weighted by coverage `m`, as Skia's
/// colour blitters write a run (`SkARGB32_Blitter::blitAntiH`, and `blitV` alike): the
/// premultiplied colour (rounded) scaled by `m + 1` in 256ths, then `SkBlitRow::Color32`
/// over what is below.
#[inline]
fn blend(px: &mut [u8], m: u8, rgb: [u8; 3], alpha: u8) {
    if m == 0 || alpha == 0 {
        return;
    }
    // `SkPreMultiplyColor`: rounded.
    let pm = |c: u8| u32::from(mul_div_255_round(c, alpha));
    let scale = if m == 255 { 256 } else { u32::from(m) + 1 };
    let sc = [pm(rgb[0]), pm(rgb[1]), pm(rgb[2]), u32::from(alpha)].map(|c| (c * scale) >> 8);
    color32(px, sc);
}

/// `SkMulDiv255Round`: `a × b / 255`, rounded.
#[inline]
pub fn mul_div_255_round(a: u8, b: u8) -> u8 {
    let prod = u32::from(a) * u32::from(b) + 128;
    ((prod + (prod >> 8)) >> 8) as u8
}

/// `SkBlitRow::Color32`: the premultiplied colour `sc` over `px`, what is below kept with
/// weight `256 − a` in 256ths, truncated (`SkPMSrcOver`). Read back from Chromium: #6e2626 at
/// alpha 140 over a gradient's 66 keeps 29, where the rounded `255 − a` form kept 30.
#[inline]
fn color32(px: &mut [u8], sc: [u32; 4]) {
    let sa = sc[3];
    if sa == 0 {
        return;
    }
    for (d, s) in px.iter_mut().zip(sc) {
        *d = (s + ((u32::from(*d) * (256 - sa)) >> 8)).min(255) as u8;
    }
}

/// Composites a layer (premultiplied RGBA8, the canvas's size) onto `data` at `alpha`, as Skia
/// restores a layer: `S32A_Blend_BlitRow32` (`SkBlendARGB32`: source by `alpha + 1`,
/// destination by `SkAlphaMulInv256(source alpha, alpha + 1)`), or plain source-over
/// (`S32A_Opaque_BlitRow32`) for an opaque layer.
pub fn layer_over(data: &mut [u8], layer: &[u8], alpha: u8) {
    let src_scale = u32::from(alpha) + 1;
    for (d, s) in data.chunks_exact_mut(4).zip(layer.chunks_exact(4)) {
        let sa = u32::from(s[3]);
        if sa == 0 && s[..3] == [0, 0, 0] {
            continue;
        }
        if alpha == 255 {
            for (d, &s) in d.iter_mut().zip(s) {
                *d = (u32::from(s) + ((u32::from(*d) * (256 - sa)) >> 8)).min(255) as u8;
            }
        } else {
            let prod = 0xFFFF - sa * src_scale;
            let dst_scale = (prod + (prod >> 8)) >> 8;
            for (d, &s) in d.iter_mut().zip(s) {
                *d = ((u32::from(s) * src_scale + u32::from(*d) * dst_scale) >> 8).min(255) as u8;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(w: u32, h: u32) -> PixelBox {
        PixelBox { x0: 0, y0: 0, x1: w, y1: h }
    }

    #[test]
    fn partial_coverage_truncates_as_chromium_does() {
        // The render oracle's values for a #060000 rectangle: 70 % coverage stores red 4,
        // 75 % stores 4, 25 % stores 1 (tiny-skia: 5, 5, 2).
        for (m, red) in [(179u8, 4u8), (191, 4), (64, 1)] {
            let mut px = vec![0u8; 4];
            src_over_solid(&mut px, 1, whole(1, 1), &[m], [6, 0, 0], 255);
            assert_eq!(px, vec![red, 0, 0, m], "coverage {m}");
        }
    }

    #[test]
    fn a_hairline_over_a_fill_keeps_the_truncated_rest() {
        // Fill at 70 % (red 4, alpha 179), then a black hairline of alpha 101 over it:
        // the oracle reads red 2 and alpha 209 (straight 2 after unpremultiplying).
        let mut px = vec![0u8; 4];
        src_over_solid(&mut px, 1, whole(1, 1), &[179], [6, 0, 0], 255);
        src_over_solid(&mut px, 1, whole(1, 1), &[101], [0, 0, 0], 255);
        assert_eq!(px, vec![2, 0, 0, 209]);
    }

    #[test]
    fn full_coverage_replaces_and_the_box_limits_the_paint() {
        let mut px = vec![9u8; 8];
        src_over_solid(&mut px, 2, PixelBox { x0: 1, y0: 0, x1: 2, y1: 1 }, &[255, 255], [1, 2, 3], 255);
        assert_eq!(px, vec![9, 9, 9, 9, 1, 2, 3, 255]);
    }

    /// Chromium's read-back colours (`scripts/svg-silhouettes.py --colour`): an opaque
    /// #cbc39d edge pixel at alpha 45 reads (204, 198, 159) straight; white at paint alpha 204
    /// (`opacity="0.8"` folded into the paint) at coverage 191 has alpha 153; a layer of
    /// #12203a at `opacity="0.96"` reads (18, 31, 57) at alpha 245.
    #[test]
    fn colours_as_skias_blitters_write_them() {
        let one = PixelBox { x0: 0, y0: 0, x1: 1, y1: 1 };
        let straight = |px: [u8; 4]| px.map(|c| ((u32::from(c) * 255 + u32::from(px[3]) / 2) / u32::from(px[3])) as u8);
        let mut px = [0u8; 4];
        src_over_solid(&mut px, 1, one, &[45], [203, 195, 157], 255);
        assert_eq!(straight(px), [204, 198, 159, 255]);
        let mut px = [0u8; 4];
        src_over_solid(&mut px, 1, one, &[191], [255, 255, 255], 204);
        assert_eq!(px[3], 153);
        let mut px = [0u8; 4];
        layer_over(&mut px, &[18, 32, 58, 255], 245);
        assert_eq!(px[3], 245);
        assert_eq!(straight(px), [18, 31, 57, 255]);
        // #6e2626 at `opacity="0.55"` (alpha 140) over a gradient's (133, 66, 62): Chromium
        // reads (120, 50, 49); the rounded `255 − a` weight gave green 51.
        let mut px = [133u8, 66, 62, 255];
        src_over_solid(&mut px, 1, one, &[255], [0x6e, 0x26, 0x26], 140);
        assert_eq!(px, [120, 50, 49, 255]);
        // Over an empty pixel a transparent layer changes nothing, and an opaque one is copied.
        let mut px = [1u8, 2, 3, 4];
        layer_over(&mut px, &[0, 0, 0, 0], 128);
        assert_eq!(px, [1, 2, 3, 4]);
        layer_over(&mut px, &[9, 8, 7, 255], 255);
        assert_eq!(px, [9, 8, 7, 255]);
    }

    /// `blitAntiH2` of an opaque colour other than black: weight `m + (m >> 7)` in 256ths.
    #[test]
    fn marked_pixels_interpolate_as_skias_opaque_blitter() {
        let one = PixelBox { x0: 0, y0: 0, x1: 1, y1: 1 };
        let paint = |m: u8, mark: u8, rgb: [u8; 3]| {
            let mut px = [0u8; 4];
            src_over_solid_marked(&mut px, 1, one, &[m], &[mark], rgb, 255);
            px
        };
        assert_eq!(paint(1, aaa::H2_ONLY, [203, 195, 157]), [0, 0, 0, 0]);
        assert_eq!(paint(100, aaa::H2_ONLY, [203, 195, 157])[3], 99);
        assert_eq!(paint(200, aaa::H2_ONLY, [203, 195, 157])[3], 200);
        // Black has its own blitter, and unmarked pixels blend as always.
        assert_eq!(paint(1, aaa::H2_ONLY, [0, 0, 0])[3], 1);
        assert_eq!(paint(1, 0, [203, 195, 157])[3], 1);
    }
}
