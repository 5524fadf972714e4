//! The browser's anti-aliased coverage of SVG shapes, for silhouettes.
//!
//! Collision silhouettes only ask whether a pixel's alpha is non-zero, so the faint edge
//! pixels decide bounds, convex hulls and touching. Chromium rasterises a costume's shapes on
//! the CPU with Skia: paths with its analytic anti-aliasing, `<rect>` elements that stay
//! axis-aligned with its rectangle filler. Both are ported rule for rule in
//! [`crate::geometry::aaa`] and checked against Skia itself (`scripts/coverage-vs-skia.py`:
//! byte-identical coverage on thousands of seeded random lines, quadratics, cubics, clipped
//! or not, and rectangles). Solid colours are painted through this coverage with the
//! browser's blending (`svg_blend`), gradients by tiny-skia.

use super::aaa;
use resvg::tiny_skia::{Path, Rect};

/// A canvas-sized coverage writer for every shape of one rasterisation.
pub struct Coverage {
    width: u32,
    height: u32,
}

/// The pixel box a shape covers, clamped to the canvas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PixelBox {
    /// Left column.
    pub x0: u32,
    /// Top row.
    pub y0: u32,
    /// Right column (exclusive).
    pub x1: u32,
    /// Bottom row (exclusive).
    pub y1: u32,
}

impl PixelBox {
    /// The box as a tiny-skia rectangle.
    pub fn rect(&self) -> Option<Rect> {
        Rect::from_ltrb(self.x0 as f32, self.y0 as f32, self.x1 as f32, self.y1 as f32)
    }

    fn of([x0, y0, x1, y1]: [u32; 4]) -> Option<PixelBox> {
        (x0 < x1 && y0 < y1).then_some(PixelBox { x0, y0, x1, y1 })
    }
}

impl Coverage {
    /// A writer for a `width × height` canvas.
    pub fn new(width: u32, height: u32) -> Self {
        Coverage { width, height }
    }

    /// Rasterises `path` (device pixels) and writes 8-bit coverage into `mask` (canvas-sized,
    /// zero outside the returned box, which the caller clears after use). `None`: nothing
    /// covered. `conics`: what Skia knows of a path drawn as conics (`aaa::Conics`). `clip`:
    /// the clip Skia scans the path under, if any. `marks`: where to mark the pixels Skia
    /// writes with `blitAntiH2` (`aaa::H2_ONLY`; cleared with the mask).
    pub fn fill(
        &mut self,
        path: &Path,
        even_odd: bool,
        conics: Option<aaa::Conics>,
        clip: Option<ScanClip>,
        mask: &mut [u8],
        marks: Option<&mut [u8]>,
    ) -> Option<PixelBox> {
        let (clip, force_runs) = self.under(clip);
        let scan = aaa::Scan { force_runs, clip };
        PixelBox::of(aaa::fill_with(path, even_odd, conics, scan, mask, marks, self.width, self.height)?)
    }

    /// Fills the axis-aligned rectangle `rect` (left, top, right, bottom in device pixels) as
    /// Chromium fills a `<rect>` element, into `mask` as [`Coverage::fill`] does.
    pub fn fill_rect(&mut self, rect: [f32; 4], clip: Option<ScanClip>, mask: &mut [u8]) -> Option<PixelBox> {
        let (bounds, _) = self.under(clip);
        PixelBox::of(aaa::fill_rect(rect, bounds, mask, self.width, self.height)?)
    }

    /// The bounds Skia cuts a shape to, and whether it scans with run-length rows.
    fn under(&self, clip: Option<ScanClip>) -> ([u32; 4], bool) {
        match clip {
            Some(c) => (c.bounds, c.anti_aliased),
            None => ([0, 0, self.width, self.height], false),
        }
    }
}

/// The clip a shape is scanned under: Skia cuts the shape's edges at the clip's bounds, and
/// under an anti-aliased clip scans with run-length rows (its `forceRLE`).
#[derive(Clone, Copy, Debug)]
pub struct ScanClip {
    /// Left, top, right, bottom in device pixels.
    pub bounds: [u32; 4],
    /// Whether the clip is anti-aliased rather than hard.
    pub anti_aliased: bool,
}

/// The rectangle `path` traces, if it is one (left, top, right, bottom).
pub fn axis_rect(path: &Path) -> Option<[f32; 4]> {
    aaa::as_rect(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use resvg::tiny_skia::PathBuilder;

    #[test]
    fn overlapping_contours_do_not_exceed_full_coverage_and_even_odd_cuts_holes() {
        let mut b = PathBuilder::new();
        b.push_rect(Rect::from_xywh(0.0, 0.0, 4.0, 4.0).unwrap());
        b.push_rect(Rect::from_xywh(1.0, 1.0, 2.0, 2.0).unwrap());
        let p = b.finish().unwrap();
        let mut c = Coverage::new(4, 4);
        let mut nz = vec![0u8; 16];
        c.fill(&p, false, None, None, &mut nz, None);
        assert!(nz.iter().all(|&a| a == 255));
        let mut eo = vec![0u8; 16];
        c.fill(&p, true, None, None, &mut eo, None);
        assert_eq!(eo[5], 0);
        assert_eq!(eo[0], 255);
    }

    #[test]
    fn a_rect_element_covers_its_area_in_256ths() {
        let mut c = Coverage::new(6, 4);
        let mut m = vec![0u8; 24];
        let b = c.fill_rect([1.25, 1.0, 3.75, 3.0], None, &mut m).unwrap();
        assert_eq!(b, PixelBox { x0: 1, y0: 1, x1: 4, y1: 3 });
        assert_eq!(&m[6..12], &[0, 192, 255, 192, 0, 0]);
        assert_eq!(&m[12..18], &[0, 192, 255, 192, 0, 0]);
        assert_eq!(&m[0..6], &[0; 6]);
        assert_eq!(&m[18..24], &[0; 6]);
    }
}
