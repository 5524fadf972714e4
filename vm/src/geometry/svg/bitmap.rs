//! Embedded PNG images as Chromium draws them in a costume.
//!
//! scratch-svg-renderer marks every `<image>` pixelated (`normalise`), so the browser samples
//! it nearest-neighbour, and Skia fills the image's device rectangle with anti-aliased edges
//! like any rectangle. tiny-skia's nearest sampling picks the other source pixel wherever a
//! device pixel's centre maps exactly onto a source pixel boundary (every pixel of a bitmap
//! drawn at half size), and resvg's edges are supersampled: at scale 1 the 37 image costumes
//! of the corpora differed from Chromium's silhouettes in about 2 700 pixels whose alpha is
//! zero on one side only. Measured against the render oracle with skia-python as the guide,
//! what Skia does is:
//!
//! - **Sampling** (`SkBitmapProcState`, nearest): the device pixel's centre is mapped through
//!   the inverse matrix in single precision and converted to 32.32 fixed point, less one
//!   1/65536 step (so that a centre exactly on a source boundary takes the pixel before it),
//!   then floored and clamped to the bitmap; along a row the position is stepped in fixed
//!   point from the row's first pixel.
//! - **Edges**: the device rectangle's coverage from `SkScan::AntiFillRect` when the matrix
//!   keeps rectangles axis-aligned, else the analytic path filler.
//! - **Blending** (`S32A_Blend`): source scaled by `coverage + 1` in 256ths, destination by
//!   `256 - (source alpha × (coverage + 1) >> 8)`; at full coverage plain source-over with
//!   the destination scaled by `256 - source alpha`.
//!
//! On those costumes no pixel is zero on one side only; some rows along a horizontal edge
//! still come out one alpha step above Chromium's (not modelled: the rule that would explain
//! them was not found). Other image formats (none in the corpora) are left to resvg.

use resvg::{tiny_skia, usvg};

use crate::geometry::svg_raster::PixelBox;

/// Most pixels a decoded embedded image may have (a 4096 × 4096 canvas's worth).
const MAX_IMAGE_PIXELS: u64 = 4096 * 4096;

/// A decoded embedded image and how its pixels map to the canvas.
pub(super) struct Bitmap {
    pixmap: tiny_skia::Pixmap,
    /// Device → image pixels, as Skia inverts the matrix (single precision).
    inverse: [f32; 6],
    /// Whether the matrix keeps rectangles axis-aligned (only scale and translation).
    axis_aligned: bool,
}

impl Bitmap {
    /// The PNG image `img` drawn under `ts` (image pixels → device); `None` for another
    /// format, an image too large, or a matrix without an inverse.
    pub(super) fn new(img: &usvg::Image, ts: tiny_skia::Transform) -> Option<Bitmap> {
        let usvg::ImageKind::PNG(data) = img.kind() else { return None };
        let size = img.size();
        if (size.width() as u64).saturating_mul(size.height() as u64) > MAX_IMAGE_PIXELS {
            return None;
        }
        let pixmap = tiny_skia::Pixmap::decode_png(data).ok()?;
        let axis_aligned = ts.kx == 0.0 && ts.ky == 0.0;
        let inverse = if axis_aligned {
            // `SkMatrix::invert` for scale and translation: reciprocal scales in floats.
            let (ix, iy) = (1.0 / ts.sx, 1.0 / ts.sy);
            if !(ix.is_finite() && iy.is_finite()) {
                return None;
            }
            [ix, 0.0, -ts.tx * ix, 0.0, iy, -ts.ty * iy]
        } else {
            let inv = ts.invert()?;
            [inv.sx, inv.kx, inv.tx, inv.ky, inv.sy, inv.ty]
        };
        Some(Bitmap { pixmap, inverse, axis_aligned })
    }

    /// The image's size in its own pixels.
    pub(super) fn size(&self) -> (u32, u32) {
        (self.pixmap.width(), self.pixmap.height())
    }

    /// Whether the device outline is an axis-aligned rectangle (`SkScan::AntiFillRect`).
    pub(super) fn axis_aligned(&self) -> bool {
        self.axis_aligned
    }

    /// The source row, for every column of `b` in row `y`, sampled by Skia's nearest
    /// mapper: the first pixel's centre mapped in floats, then stepped in 32.32 fixed point
    /// along the row (`nofilter_scale`); under rotation or skew each centre is mapped.
    fn sample_row(&self, b: PixelBox, y: u32, out: &mut Vec<usize>) {
        let [a, bb, c, d, e, f] = self.inverse;
        let (w, h) = (i64::from(self.pixmap.width()), i64::from(self.pixmap.height()));
        let fixed = |s: f32| (f64::from(s) * 4_294_967_296.0) as i64;
        // Less one 1/65536 step, so that an exact pixel boundary rounds down.
        let index = |fx: i64, n: i64| (fx.saturating_sub(1 << 16) >> 32).clamp(0, n - 1) as usize;
        let py = y as f32 + 0.5;
        out.clear();
        if self.axis_aligned {
            let row = index(fixed(e * py + f), h) * w as usize;
            let step = fixed(a);
            let mut fx = fixed(a * (b.x0 as f32 + 0.5) + c);
            for _ in b.x0..b.x1 {
                out.push(row + index(fx, w));
                fx = fx.saturating_add(step);
            }
        } else {
            for x in b.x0..b.x1 {
                let px = x as f32 + 0.5;
                let (u, v) = (a * px + bb * py + c, d * px + e * py + f);
                out.push(index(fixed(v), h) * w as usize + index(fixed(u), w));
            }
        }
    }

    /// Draws the image source-over onto premultiplied RGBA8 `data` (rows of `width`) inside
    /// `b`, each pixel weighted by its byte of `coverage` (the image's device outline).
    pub(super) fn src_over(&self, data: &mut [u8], width: usize, b: PixelBox, coverage: &[u8]) {
        let mut row = Vec::with_capacity((b.x1 - b.x0) as usize);
        let src = self.pixmap.data();
        for y in b.y0..b.y1 {
            self.sample_row(b, y, &mut row);
            for (x, &s) in (b.x0..b.x1).zip(&row) {
                let i = y as usize * width + x as usize;
                let Some(&m) = coverage.get(i) else { continue };
                if m == 0 {
                    continue;
                }
                let (Some(src), Some(px)) = (src.get(s * 4..s * 4 + 4), data.get_mut(i * 4..i * 4 + 4)) else {
                    continue;
                };
                blend(px, src, m);
            }
        }
    }
}

/// One premultiplied pixel `px` under the premultiplied source `src` at coverage `m`
/// (`S32A_Blend_BlitRow32`, `S32A_Opaque_BlitRow32`).
fn blend(px: &mut [u8], src: &[u8], m: u8) {
    let sa = u32::from(src.get(3).copied().unwrap_or(0));
    let (src_scale, dst_scale) = if m == 255 {
        (256, 256 - sa)
    } else {
        let s = u32::from(m) + 1;
        (s, 256 - ((sa * s) >> 8))
    };
    for (d, &s) in px.iter_mut().zip(src) {
        *d = (((u32::from(s) * src_scale) >> 8) + ((u32::from(*d) * dst_scale) >> 8)).min(255) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::svg::test_support::{alpha, fnv};

    /// A 6 × 5 PNG of seeded colours, alphas 0, 40, 128 and 255.
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAYAAAAFCAYAAABmWJ3mAAAAiElEQVR4nAF9AIL/AE3KGP8wux0AbRMsKNYje4DZHj8AH8sZ/wEXRJT/MvgJgRP4w6jV7L7XON68KYXq39cCaBjoAFDBEoA38dxYpTSRKZHZOteyxvoBAf7pIyiMCf7YFPJwABMnW4ClMBB/GVhGAQLN39vXy/OsAPBiSyjdycuoIBIugd7jNf8FSjtz50Ll3gAAAABJRU5ErkJggg==";

    /// A 10 × 10 costume drawing the PNG with the `<image>` attributes `attrs`.
    fn costume(attrs: &str) -> String {
        format!(
            "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" \
             xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"10\" height=\"10\" \
             viewBox=\"0,0,10,10\"><image {attrs} xlink:href=\"data:image/png;base64,{PNG}\"/></svg>"
        )
    }

    /// Chromium's silhouettes (render oracle, Chromium 148) of seeded image costumes: FNV-1a
    /// of the alpha bytes and the non-zero pixels. Half size puts every device pixel's centre
    /// on a source boundary; the others have fractional edges, a mirror, and a rotation
    /// (whose edge alphas differ by 1 in 6 pixels: its non-zero mask is compared).
    #[test]
    fn images_as_chromium_draws_them() {
        let exact = [
            ("x=\"3\" y=\"2\" width=\"6\" height=\"5\" transform=\"scale(0.5)\"", 0x0131_9a9f_0d2f_0f31, 8),
            ("width=\"6\" height=\"5\" transform=\"matrix(1.25,0,0,1.25,0.5,0.3)\"", 0x1fb4_a1ec_cee6_69fc, 45),
            ("width=\"6\" height=\"5\" transform=\"matrix(-1.5,0,0,1.5,9.25,0.5)\"", 0xf192_e7ea_dbea_3481, 58),
        ];
        for (attrs, hash, nonzero) in exact {
            let (a, modelled) = alpha(&costume(attrs), 1.0);
            assert!(modelled, "{attrs}");
            assert_eq!((fnv(&a), a.iter().filter(|&&v| v != 0).count()), (hash, nonzero), "{attrs}");
        }
        let (a, _) = alpha(&costume("width=\"6\" height=\"5\" transform=\"translate(5,1) rotate(30)\""), 1.0);
        let mask: Vec<u8> = a.iter().map(|&v| u8::from(v != 0)).collect();
        assert_eq!((fnv(&mask), mask.iter().filter(|&&v| v != 0).count()), (0xd0a0_cf00_98e2_5431, 34));
    }

    #[test]
    fn blend_scales_by_coverage_plus_one() {
        let mut px = [0u8, 0, 0, 0];
        blend(&mut px, &[255, 255, 255, 255], 128);
        assert_eq!(px, [128, 128, 128, 128]);
        let mut px = [100u8, 0, 0, 255];
        blend(&mut px, &[0, 0, 128, 128], 255);
        assert_eq!(px, [50, 0, 128, 255]);
    }
}
