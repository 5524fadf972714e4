//! Solid colours painted through a coverage mask with the browser's 8-bit arithmetic.
//!
//! Chromium's canvas truncates where tiny-skia's blending rounds up: a #060000 fill at 70 %
//! coverage is stored as premultiplied red 4 there (6 × 0.7 = 4.2) and 5 in tiny-skia, and a
//! hairline drawn over it scales it down, truncated again. Colour sensing compares
//! unpremultiplied colours with a tolerance of 2, so such edge pixels of dark fills decide
//! answers (Snake's `color #060000 is touching`). Measured on costumes read back from the
//! real scratch-render (the render oracle): the premultiplied values at partly covered
//! pixels are `floor(c × a / 255)`, and source-over keeps `floor(d × (255 − a) / 255)` of
//! what is below.

use super::aaa;
use super::svg_raster::PixelBox;

/// `floor(x / 255)` for the products of two bytes.
#[inline]
fn div255_floor(x: u32) -> u32 {
    x / 255
}

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

/// One premultiplied pixel `px` under `rgb` at `alpha`, weighted by coverage `m`.
#[inline]
fn blend(px: &mut [u8], m: u8, rgb: [u8; 3], alpha: u8) {
    if m == 0 {
        return;
    }
    let sa = div255_floor(alpha as u32 * m as u32);
    if sa == 0 {
        return;
    }
    let keep = 255 - sa;
    for (c, d) in rgb.iter().zip(px.iter_mut()) {
        let s = div255_floor(*c as u32 * sa);
        *d = (s + div255_floor(*d as u32 * keep)).min(255) as u8;
    }
    if let Some(a) = px.get_mut(3) {
        *a = (sa + div255_floor(*a as u32 * keep)).min(255) as u8;
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
