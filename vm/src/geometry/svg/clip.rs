//! Clip paths as Chromium applies them to a costume's shapes. Blink clips with the clip
//! path's shape itself when it is a single shape, and Skia turns that clip into per-pixel
//! coverage. A rectangle whose device edges lie within 1/8 px of whole pixels becomes a hard
//! clip to the rounded rectangle (`SkRasterClip`'s `nearly_integral`). Any other shape
//! becomes an anti-aliased clip (`SkAAClip`): the shape filled by the analytic scan converter
//! with run-length rows. What is drawn under an anti-aliased clip is scanned with run-length
//! rows too, and its coverage is multiplied by the clip's (`SkMulDiv255Round`, as
//! `SkAAClipBlitter` merges them). Nested clips multiply the same way.
//!
//! Not modelled (the costume goes to resvg as a whole): clip paths with more than one shape,
//! with text, with a clip path of their own, or in bounding-box units.

use resvg::{tiny_skia, usvg};

use super::conics::device_outline;
use crate::geometry::aaa;
use crate::geometry::svg_blend::mul_div_255_round;
use crate::geometry::svg_raster::{PixelBox, ScanClip, axis_rect};

/// The coverage a clip leaves to what is drawn under it.
pub(super) struct ClipMask {
    /// Its box on the canvas: nothing outside is drawn.
    b: PixelBox,
    /// Coverage per pixel of the box, rows top first.
    cov: Vec<u8>,
    /// Anti-aliased, rather than a hard clip to whole pixels.
    pub(super) aa: bool,
}

/// Whether `clip` is one [`ClipMask::new`] models: a single path, possibly under plain groups.
pub(super) fn modelled(clip: &usvg::ClipPath) -> bool {
    clip.clip_path().is_none() && single_path(clip.root(), tiny_skia::Transform::identity()).is_some()
}

/// The one path under `g` (with its transform relative to `g`), if there is exactly one and
/// nothing else.
fn single_path(g: &usvg::Group, ts: tiny_skia::Transform) -> Option<(&usvg::Path, tiny_skia::Transform)> {
    let mut found = None;
    for n in g.children() {
        let here = match n {
            usvg::Node::Path(p) => (p.as_ref(), ts),
            usvg::Node::Group(c) if c.clip_path().is_none() && c.mask().is_none() && c.filters().is_empty() => {
                single_path(c, ts.pre_concat(c.transform()))?
            }
            _ => return None,
        };
        if found.replace(here).is_some() {
            return None;
        }
    }
    found
}

/// `SkScalarRoundToInt` of an edge within 1/8 px of a whole pixel, else `None`.
fn nearly_integral(v: f32) -> Option<i64> {
    let shifted = v + 0.125;
    (shifted - shifted.floor() < 0.25).then(|| (v + 0.5).floor() as i64)
}

impl ClipMask {
    /// The clip `clip` makes for a group drawn under `ts` on a `w × h` canvas, within `outer`
    /// (the clips of the groups around it). `None`: not modelled. `Some(None)`: a hard clip
    /// that leaves the whole canvas.
    pub(super) fn new(
        clip: &usvg::ClipPath,
        ts: tiny_skia::Transform,
        (w, h): (u32, u32),
        conic_ids: &[String],
        outer: Option<&ClipMask>,
    ) -> Option<Option<ClipMask>> {
        if clip.clip_path().is_some() {
            return None;
        }
        let (p, local) = single_path(clip.root(), tiny_skia::Transform::identity())?;
        let ts = ts.pre_concat(clip.transform()).pre_concat(local);
        let even_odd = p.fill().is_some_and(|f| f.rule() == usvg::FillRule::EvenOdd);
        let conic = !p.id().is_empty() && conic_ids.binary_search_by(|id| id.as_str().cmp(p.id())).is_ok();
        let outline = if conic { device_outline(p.data(), ts) } else { None };
        let (device, conics) = match outline {
            Some((o, bounds)) => (o, Some(aaa::Conics { bounds })),
            None => (p.data().clone().transform(ts)?, None),
        };
        let hard = axis_rect(&device).and_then(|r| {
            Some([nearly_integral(r[0])?, nearly_integral(r[1])?, nearly_integral(r[2])?, nearly_integral(r[3])?])
        });
        let canvas = |v: i64, hi: u32| v.clamp(0, i64::from(hi)) as u32;
        let mine = match hard {
            Some([l, t, r, b]) => {
                let b = PixelBox { x0: canvas(l, w), y0: canvas(t, h), x1: canvas(r, w), y1: canvas(b, h) };
                let whole = b == PixelBox { x0: 0, y0: 0, x1: w, y1: h };
                if whole {
                    // A hard clip that leaves the canvas changes nothing.
                    return Some(outer.map(ClipMask::copy));
                }
                let n = (b.x1.saturating_sub(b.x0) as usize) * (b.y1.saturating_sub(b.y0) as usize);
                ClipMask { b, cov: vec![255; n], aa: false }
            }
            None => {
                let mut full = vec![0u8; w as usize * h as usize];
                let scan = aaa::Scan { force_runs: true, clip: [0, 0, w, h] };
                let [x0, y0, x1, y1] = aaa::fill_with(&device, even_odd, conics, scan, &mut full, None, w, h)?;
                let b = PixelBox { x0, y0, x1, y1 };
                ClipMask { b, cov: Vec::new(), aa: true }
                    .filled(|x, y| full.get(y as usize * w as usize + x as usize).copied().unwrap_or(0))
            }
        };
        Some(Some(match outer {
            Some(o) => mine.within(o),
            None => mine,
        }))
    }

    /// The clip's coverage `at` each pixel of box `self.b`, the box then trimmed to the pixels
    /// it leaves (`SkAAClip` keeps its bounds trimmed; Skia cuts shapes at them).
    fn filled(self, at: impl Fn(u32, u32) -> u8) -> ClipMask {
        let b = self.b;
        let (mut lo, mut hi) = ([u32::MAX; 2], [0u32; 2]);
        for y in b.y0..b.y1 {
            for x in b.x0..b.x1 {
                if at(x, y) != 0 {
                    lo = [lo[0].min(x), lo[1].min(y)];
                    hi = [hi[0].max(x + 1), hi[1].max(y + 1)];
                }
            }
        }
        if lo[0] >= hi[0] {
            return ClipMask { b: PixelBox { x0: b.x0, y0: b.y0, x1: b.x0, y1: b.y0 }, cov: Vec::new(), aa: self.aa };
        }
        let t = PixelBox { x0: lo[0], y0: lo[1], x1: hi[0], y1: hi[1] };
        let mut cov = Vec::with_capacity(((t.x1 - t.x0) * (t.y1 - t.y0)) as usize);
        for y in t.y0..t.y1 {
            for x in t.x0..t.x1 {
                cov.push(at(x, y));
            }
        }
        ClipMask { b: t, cov, aa: self.aa }
    }

    /// What Skia scans a shape under this clip with.
    pub(super) fn scan(&self) -> ScanClip {
        ScanClip { bounds: [self.b.x0, self.b.y0, self.b.x1, self.b.y1], anti_aliased: self.aa }
    }

    fn copy(&self) -> ClipMask {
        ClipMask { b: self.b, cov: self.cov.clone(), aa: self.aa }
    }

    fn at(&self, x: u32, y: u32) -> u8 {
        let b = self.b;
        if x < b.x0 || x >= b.x1 || y < b.y0 || y >= b.y1 {
            return 0;
        }
        let i = (y - b.y0) as usize * (b.x1 - b.x0) as usize + (x - b.x0) as usize;
        self.cov.get(i).copied().unwrap_or(0)
    }

    /// This clip inside `outer` (`SkAAClip`'s intersection: coverages multiplied).
    fn within(&self, outer: &ClipMask) -> ClipMask {
        let b = PixelBox {
            x0: self.b.x0.max(outer.b.x0),
            y0: self.b.y0.max(outer.b.y0),
            x1: self.b.x1.min(outer.b.x1).max(self.b.x0.max(outer.b.x0)),
            y1: self.b.y1.min(outer.b.y1).max(self.b.y0.max(outer.b.y0)),
        };
        ClipMask { b, cov: Vec::new(), aa: self.aa || outer.aa }
            .filled(|x, y| mul_div_255_round(self.at(x, y), outer.at(x, y)))
    }

    /// Multiplies the coverage in `b` of the canvas-sized `mask` (`w` wide) by the clip's;
    /// the part of `b` the clip leaves, `None` when it leaves nothing.
    pub(super) fn apply(&self, mask: &mut [u8], w: usize, b: PixelBox) -> Option<PixelBox> {
        let s = PixelBox {
            x0: b.x0.max(self.b.x0),
            y0: b.y0.max(self.b.y0),
            x1: b.x1.min(self.b.x1),
            y1: b.y1.min(self.b.y1),
        };
        if s.x0 >= s.x1 || s.y0 >= s.y1 {
            return None;
        }
        if self.aa {
            for y in s.y0..s.y1 {
                for x in s.x0..s.x1 {
                    if let Some(m) = mask.get_mut(y as usize * w + x as usize) {
                        *m = mul_div_255_round(*m, self.at(x, y));
                    }
                }
            }
        }
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::svg::test_support::{alpha, fnv};

    /// A 200 × 160 costume: `clip` as the clip path `c`, `body` the drawing.
    fn costume(clip: &str, body: &str) -> String {
        format!(
            "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" height=\"160\" \
             viewBox=\"0,0,200,160\"><defs><clipPath id=\"c\">{clip}</clipPath></defs>{body}</svg>"
        )
    }

    /// Chromium's silhouettes (render oracle, Chromium 148) of four seeded clip costumes, as
    /// (FNV-1a of the alpha bytes, non-zero pixels).
    #[test]
    fn clips_as_chromium_draws_them() {
        let red = "<rect x=\"-30\" y=\"-30\" width=\"300\" height=\"300\" fill=\"#f00\"/>";
        let cases = [
            // A rectangle clip on a group under a translation: the browser clips in the root's
            // user space (transformStrokeWidths moved the translation to the leaves).
            (
                costume(
                    "<rect x=\"10\" y=\"20\" width=\"100\" height=\"50\"/>",
                    &format!("<g transform=\"translate(20,10)\"><g clip-path=\"url(#c)\">{red}</g></g>"),
                ),
                0xe83f_2b9a_4010_c39d,
                5000,
            ),
            // A rectangle off the pixel grid: an anti-aliased clip.
            (
                costume(
                    "<rect x=\"10.3\" y=\"20.6\" width=\"100.4\" height=\"50.2\"/>",
                    &format!("<g clip-path=\"url(#c)\">{red}</g>"),
                ),
                0x5bae_c1bb_affc_02ef,
                5151,
            ),
            // A circle under it: scanned in run-length rows, cut at the clip's bounds.
            (
                costume(
                    "<rect x=\"10.3\" y=\"20.6\" width=\"100.4\" height=\"50.2\"/>",
                    "<g clip-path=\"url(#c)\"><circle cx=\"60\" cy=\"50\" r=\"45\" fill=\"#f00\"/></g>",
                ),
                0x0c8b_5df4_7a9c_ba2a,
                4356,
            ),
            // A circle as the clip.
            (
                costume(
                    "<circle cx=\"60\" cy=\"50\" r=\"40.3\"/>",
                    "<g clip-path=\"url(#c)\"><rect x=\"10.5\" y=\"10.5\" width=\"150\" height=\"100\" fill=\"#f00\"/></g>",
                ),
                0x05eb_7198_9830_077a,
                5212,
            ),
        ];
        for (svg, hash, nonzero) in cases {
            let (a, modelled) = alpha(&svg, 1.0);
            assert!(modelled, "drawn with the ported coverage: {svg}");
            assert_eq!((fnv(&a), a.iter().filter(|&&v| v != 0).count()), (hash, nonzero), "{svg}");
        }
    }

    #[test]
    fn skia_rounding() {
        assert_eq!(mul_div_255_round(255, 200), 200);
        assert_eq!(mul_div_255_round(128, 128), 64);
        assert_eq!(mul_div_255_round(0, 255), 0);
        // Within 1/8 px of a whole pixel is hard; 10.3 is not.
        assert_eq!(nearly_integral(-0.11999), Some(0));
        assert_eq!(nearly_integral(479.94), Some(480));
        assert_eq!(nearly_integral(10.3), None);
    }
}
