//! Where Chromium puts an SVG image's drawing on the canvas: Blink lays the document out in a
//! container of the image's size held in `LayoutUnit`s (1/64 px, truncated), maps the view box
//! into that container (`preserveAspectRatio`), and `drawImage` then stretches the container to
//! the image's size in floats.
//!
//! For a costume whose height is not a multiple of 1/64 (Scratch writes sizes like
//! `151.0106964111328`), the view box meets a container a little smaller than itself: the
//! drawing is scaled down by up to 1/64 px over the image and centred, and the stretch restores
//! the short side only. Measured on seeded rectangles of height 49.9893–50.7 against Chromium:
//! the left and right edges move in (alpha 125–127 where an edge on a half pixel gives 128)
//! and the top and bottom stay, which a plain view box mapping cannot give.

use resvg::tiny_skia::Transform;

/// How the root maps its view box (`preserveAspectRatio`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Aspect {
    /// Absent: `xMidYMid meet`.
    MidMeet,
    /// `none`: each axis scaled on its own.
    Stretch,
    /// Any other value (not modelled: the drawing is placed as usvg places it).
    Other,
}

impl Aspect {
    /// The root's `preserveAspectRatio` attribute value, if any.
    pub(super) fn parse(value: Option<&str>) -> Aspect {
        match value.map(str::trim) {
            None | Some("xMidYMid") | Some("xMidYMid meet") => Aspect::MidMeet,
            Some("none") => Aspect::Stretch,
            Some(_) => Aspect::Other,
        }
    }
}

/// The view box `[x, y, w, h]` mapped into a box of `size`, as the SVG spec's view box
/// transform (scale, then translate), in double precision.
fn view_box_transform(view: [f64; 4], size: [f64; 2], aspect: Aspect) -> [f64; 4] {
    let (sx, sy) = (size[0] / view[2], size[1] / view[3]);
    let (sx, sy) = match aspect {
        Aspect::Stretch => (sx, sy),
        Aspect::MidMeet | Aspect::Other => {
            let s = sx.min(sy);
            (s, s)
        }
    };
    let tx = -view[0] * sx + (size[0] - view[2] * sx) / 2.0;
    let ty = -view[1] * sy + (size[1] - view[3] * sy) / 2.0;
    [sx, sy, tx, ty]
}

/// A length as a `LayoutUnit` holds it: single precision times 64, truncated.
fn layout_unit(v: f64) -> f64 {
    ((v as f32 * 64.0) as i64) as f64 / 64.0
}

/// The transform to put before usvg's drawing (which maps the view box into the image's
/// `size` itself) so that it lands where Chromium draws it; `None` when it changes nothing or
/// is not modelled.
pub(super) fn correction(view: [f64; 4], size: [f64; 2], aspect: Aspect) -> Option<Transform> {
    if aspect == Aspect::Other || !view.iter().chain(&size).all(|v| v.is_finite()) {
        return None;
    }
    if view[2] <= 0.0 || view[3] <= 0.0 || size[0] <= 0.0 || size[1] <= 0.0 {
        return None;
    }
    let container = [layout_unit(size[0]), layout_unit(size[1])];
    if container == size || container[0] <= 0.0 || container[1] <= 0.0 {
        return None;
    }
    // Chromium: stretch(size / container) ∘ viewBox→container; usvg: viewBox→size.
    let [cx, cy, ctx, cty] = view_box_transform(view, container, aspect);
    let [ux, uy, utx, uty] = view_box_transform(view, size, aspect);
    let (kx, ky) = (size[0] / container[0], size[1] / container[1]);
    // p = (q − t_u) / u (undo usvg's), then Chromium's: k × (c × p + t_c).
    let (sx, sy) = (kx * cx / ux, ky * cy / uy);
    let (tx, ty) = (kx * (ctx - cx * utx / ux), ky * (cty - cy * uty / uy));
    let t = Transform::from_row(sx as f32, 0.0, 0.0, sy as f32, tx as f32, ty as f32);
    (t.is_finite() && !t.is_identity()).then_some(t)
}

/// How much `drawImage` stretches the container's height to the image's: the image's height
/// over its `LayoutUnit` height (1 on the grid). Blink's text layout sees the container, not
/// the stretch.
pub(super) fn vertical_stretch(size: [f64; 2]) -> f64 {
    let c = layout_unit(size[1]);
    if c > 0.0 && size[1].is_finite() { size[1] / c } else { 1.0 }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{alpha, fnv};
    use super::*;

    /// Chromium's silhouettes (render oracle, FNV-1a of the alpha and the non-zero pixels) of
    /// seeded costumes off the layout grid: rectangles narrowed across or down, and text
    /// drawn at 17.99 px with its baseline on a half pixel going up, a hair past it down.
    #[test]
    fn costumes_off_the_layout_grid_as_chromium_draws_them() {
        let rect = |w: &str, h: &str, rw: u32| {
            format!(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\
                 <rect x=\"0.5\" y=\"0.5\" width=\"{rw}\" height=\"40\" fill=\"#000000\"/></svg>"
            )
        };
        let text = |y: &str| {
            format!(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"200.3\" height=\"150\" \
                 viewBox=\"0 0 200.3 150\"><text x=\"3.5\" y=\"{y}\" font-family=\"Sans Serif\" \
                 font-size=\"18\">m m m m Hx</text></svg>"
            )
        };
        let cases = [
            (rect("100", "50.3", 99), 0x558e_bf82_c233_e2e5, 4100),
            (rect("100.7", "50", 90), 0xfc1d_5f62_f475_2299, 3731),
            (text("80.5"), 0xf728_c137_b407_276e, 558),
            (text("80.51"), 0x3d11_8dfa_ba51_ed8e, 558),
        ];
        for (svg, hash, nonzero) in cases {
            let (a, _) = alpha(&svg, 1.0);
            assert_eq!((fnv(&a), a.iter().filter(|&&v| v != 0).count()), (hash, nonzero), "{svg}");
        }
    }

    #[test]
    fn a_height_off_the_layout_grid_narrows_the_drawing() {
        // 100 × 50.3: the container is 100 × 50.296875, so the drawing is scaled by
        // 50.296875 / 50.3 and centred across, and stretched back to 50.3 down.
        let Some(t) = correction([0.0, 0.0, 100.0, 50.3], [100.0, 50.3], Aspect::MidMeet) else {
            panic!("a correction")
        };
        let s = 50.296_875 / 50.3;
        assert!((f64::from(t.sx) - s).abs() < 1e-6 && (f64::from(t.sy) - 1.0).abs() < 1e-6);
        assert!((f64::from(t.tx) - 50.0 * (1.0 - s)).abs() < 1e-5 && f64::from(t.ty).abs() < 1e-5);
        // Sizes on the grid change nothing; other alignments are not modelled.
        assert!(correction([0.0, 0.0, 100.0, 50.5], [100.0, 50.5], Aspect::MidMeet).is_none());
        assert!(correction([0.0, 0.0, 100.0, 50.3], [100.0, 50.3], Aspect::Other).is_none());
        assert_eq!(Aspect::parse(Some("none")), Aspect::Stretch);
        assert_eq!(Aspect::parse(None), Aspect::MidMeet);
    }
}
