//! Skia's analytic anti-aliasing of filled paths (`SkScan_AAAPath`), ported rule for rule.
//!
//! Chromium rasterises an SVG costume's shapes on the CPU with this scan converter (every
//! path, since Skia dropped its supersampler), and collision silhouettes only ask which
//! pixels it leaves non-zero. The faint pixels at a shape's edge are decided by its details:
//! points truncated to 1/256 px, y snapped to quarter pixels, curves stepped into
//! `2^shift` lines by forward differences in 16.16 fixed point, the alphas of each row's
//! trapezoids in 8 bits, an 8-bit mask for small shapes and run-length rows that snap alphas
//! below 8 to zero for larger ones. `scripts/coverage-vs-skia.py` compares the result with
//! skia-python's raster, which reproduces Chromium's, shape by shape.
//!
//! Paths that reach outside the canvas (Skia then clips their edges first) are left to the
//! caller.

mod blit;
mod build;
mod clip;
mod edge;
mod fixed;
mod rows;
mod walk;

pub(crate) use build::unit_quad_roots;

/// A mark of [`fill_with`]'s: the pixel's only write was the real blitter's `blitAntiH2`.
/// Skia's blitter for an opaque colour other than black writes those two pixels with
/// `SkFastFourByteInterp`, whose weight `a + (a >> 7)` falls one 256th short below 128
/// (`svg_blend::src_over_solid` applies it); its black blitter and every other write keep
/// the coverage as it is.
pub const H2_ONLY: u8 = 1;
/// A mark of [`fill_with`]'s: a pixel written by `blitAntiH2` and again after (drawn as
/// the composited coverage, an approximation for a colour other than black).
pub const H2_MIXED: u8 = 2;

use blit::{Blitter, Device, IRect, Mode};
use edge::Edge;
use resvg::tiny_skia::{Path, PathSegment};

/// What Skia knows of a path that was drawn as conics and reaches the scan converter here as
/// their quadratics: an oval's or rounded rectangle's path is convex from the start (its
/// quadratics, a float rounding apart, may not be), and its bounds are the conics' points.
#[derive(Clone, Copy, Debug)]
pub struct Conics {
    /// Left, top, right, bottom of the conic path's points in device pixels.
    pub bounds: [f32; 4],
}

/// Rasterises `path` (device pixels, lines, quadratics and cubics) into the canvas-sized
/// coverage `out` (`width × height`, added over what is there). Returns the rounded-out
/// bounds written within the canvas (empty when nothing is), `None` when `out` is too small
/// or a side is over 8 191 px.
pub fn fill(
    path: &Path,
    even_odd: bool,
    conics: Option<Conics>,
    out: &mut [u8],
    width: u32,
    height: u32,
) -> Option<[u32; 4]> {
    fill_with(path, even_odd, conics, Scan { force_runs: false, clip: [0, 0, width, height] }, out, None, width, height)
}

/// How Skia scans a path: its clip's bounds and whether the rows go through an anti-aliased
/// clip.
#[derive(Clone, Copy, Debug)]
pub struct Scan {
    /// Run-length rows even for a small path: Skia's `forceRLE`, which it sets where the rows
    /// go through an anti-aliased clip (building one, or drawing under one).
    pub force_runs: bool,
    /// Left, top, right, bottom (within the canvas), where Skia cuts the path's edges.
    pub clip: [u32; 4],
}

/// [`fill`] as `scan` says, marking in `marks` (canvas-sized, zero outside the returned box
/// after use, like `out`) the pixels written by `blitAntiH2` ([`H2_ONLY`], [`H2_MIXED`]).
#[allow(clippy::too_many_arguments)]
pub fn fill_with(
    path: &Path,
    even_odd: bool,
    conics: Option<Conics>,
    scan: Scan,
    out: &mut [u8],
    marks: Option<&mut [u8]>,
    width: u32,
    height: u32,
) -> Option<[u32; 4]> {
    let Scan { force_runs, clip } = scan;
    let b = path.bounds();
    let [l, t, r, bo] = conics.map_or([b.left(), b.top(), b.right(), b.bottom()], |c| c.bounds);
    let ir = IRect { left: l.floor() as i32, top: t.floor() as i32, right: r.ceil() as i32, bottom: bo.ceil() as i32 };
    const NOTHING: Option<[u32; 4]> = Some([0, 0, 0, 0]);
    if ir.width() <= 0 || ir.height() <= 0 {
        return NOTHING;
    }
    let side = |v: u32, hi: u32| v.min(hi) as i32;
    let clip_rect = IRect {
        left: side(clip[0], width),
        top: side(clip[1], height),
        right: side(clip[2], width),
        bottom: side(clip[3], height),
    };
    let contained = ir.left >= clip_rect.left
        && ir.top >= clip_rect.top
        && ir.right <= clip_rect.right
        && ir.bottom <= clip_rect.bottom;
    let sect = IRect {
        left: ir.left.max(clip_rect.left),
        top: ir.top.max(clip_rect.top),
        right: ir.right.min(clip_rect.right),
        bottom: ir.bottom.min(clip_rect.bottom),
    };
    if sect.width() <= 0 || sect.height() <= 0 {
        return NOTHING;
    }
    // Skia's fixed point holds 8 191 px at four times; scratch-render's canvases stay far below.
    if out.len() < width as usize * height as usize || width > 8191 || height > 8191 {
        return None;
    }
    let convex = conics.is_some() || is_convex(path);
    let mode = if !force_runs && blit::mask_fits(ir) {
        Mode::Mask
    } else if convex {
        Mode::Runs
    } else {
        Mode::SafeRuns
    };
    if mode == Mode::Mask {
        if let Some(r) = as_rect(path) {
            // `try_blit_fat_anti_rect`: a small rectangle at least 3 px wide is blitted whole.
            let c = [clip_rect.left as f32, clip_rect.top as f32, clip_rect.right as f32, clip_rect.bottom as f32];
            let r = [r[0].max(c[0]), r[1].max(c[1]), r[2].min(c[2]), r[3].min(c[3])];
            if !(r[0] < r[2] && r[1] < r[3]) {
                return Some([sect.left as u32, sect.top as u32, sect.right as u32, sect.bottom as u32]);
            }
            let rb = IRect {
                left: r[0].floor() as i32,
                top: r[1].floor() as i32,
                right: r[2].ceil() as i32,
                bottom: r[3].ceil() as i32,
            };
            if rb.width() >= 3 {
                let mut dev = Device { out, marks: None, width: width as i32, height: height as i32 };
                fat_anti_rect(&mut dev, r, rb);
                return Some([sect.left as u32, sect.top as u32, sect.right as u32, sect.bottom as u32]);
            }
        }
    }
    let mut edges = vec![Edge::sentinel(fixed::MIN, fixed::MIN), Edge::sentinel(fixed::MAX, fixed::MAX)];
    let clip = (!contained).then_some(clip::Clip {
        left: clip_rect.left as f32,
        top: clip_rect.top as f32,
        right: clip_rect.right as f32,
        bottom: clip_rect.bottom as f32,
        cull_right: !convex,
    });
    let built = build::edges(path, clip.as_ref());
    let count = built.len();
    let done = Some([sect.left as u32, sect.top as u32, sect.right as u32, sect.bottom as u32]);
    if count == 0 {
        return done;
    }
    let mut order = built;
    sort_edges(&mut order);
    edges.extend(order);
    for i in 2..edges.len() {
        edges[i].prev = if i == 2 { walk::HEAD } else { i - 1 };
        edges[i].next = if i + 1 == edges.len() { walk::TAIL } else { i + 1 };
    }
    edges[walk::HEAD].next = 2;
    edges[walk::TAIL].prev = edges.len() - 1;
    // A path cut at the clip's left or right goes through Skia's `SkRectClipBlitter`, which
    // hands `blitAntiH2` on as plain `blitAntiH` (`SkScanClipper`: "only need a wrapper
    // blitter if we're horizontally clipped").
    let wrapped = ir.left < clip_rect.left || ir.right > clip_rect.right;
    let marks = marks.filter(|m| !wrapped && m.len() >= width as usize * height as usize);
    let dev = Device { out, marks, width: width as i32, height: height as i32 };
    let mut blitter = Blitter::new(mode, dev, ir, sect);
    let (mut left_bound, mut right_bound) = (fixed::from_int(clip_rect.left), fixed::from_int(clip_rect.right));
    if mode == Mode::Mask {
        left_bound = left_bound.max(fixed::from_int(ir.left));
        right_bound = right_bound.min(fixed::from_int(ir.right));
    }
    let (start_y, stop_y) = (sect.top, sect.bottom);
    if convex && count >= 2 {
        walk::walk_convex(&mut edges, &mut blitter, stop_y, left_bound, right_bound);
    } else {
        let skip_intersect = path.points().len() as i64 > (stop_y - start_y) as i64 * 2;
        walk::walk_general(
            &mut edges,
            &mut blitter,
            even_odd,
            start_y,
            stop_y,
            left_bound,
            right_bound,
            skip_intersect,
        );
    }
    blitter.finish();
    done
}

/// `SkPathRaw::isRect` for the rectangles SVG makes: one contour of axis-aligned lines
/// around four corners (left, top, right, bottom).
pub fn as_rect(path: &Path) -> Option<[f32; 4]> {
    let mut pts: Vec<(f32, f32)> = Vec::new();
    for (i, seg) in path.segments().enumerate() {
        match seg {
            PathSegment::MoveTo(p) if i == 0 => pts.push((p.x, p.y)),
            PathSegment::LineTo(p) => {
                if pts.last() != Some(&(p.x, p.y)) {
                    pts.push((p.x, p.y));
                }
            }
            PathSegment::Close => {}
            _ => return None,
        }
    }
    if pts.len() == 5 && pts[4] == pts[0] {
        pts.pop();
    }
    if pts.len() != 4 {
        return None;
    }
    let mut horizontal = None;
    for i in 0..4 {
        let (a, b) = (pts[i], pts[(i + 1) % 4]);
        let h = if a.1 == b.1 && a.0 != b.0 {
            true
        } else if a.0 == b.0 && a.1 != b.1 {
            false
        } else {
            return None;
        };
        if horizontal == Some(h) {
            return None;
        }
        horizontal = Some(h);
    }
    let xs = [pts[0].0, pts[1].0, pts[2].0, pts[3].0];
    let ys = [pts[0].1, pts[1].1, pts[2].1, pts[3].1];
    let min = |v: [f32; 4]| v.iter().copied().fold(f32::INFINITY, f32::min);
    let max = |v: [f32; 4]| v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    Some([min(xs), min(ys), max(xs), max(ys)])
}

/// `SkBlitter::blitFatAntiRect`: a rectangle's edge rows and columns at their covered share,
/// snapped as its run blitter snaps.
fn fat_anti_rect(dev: &mut Device, r: [f32; 4], b: IRect) {
    if b.height() == 0 {
        return;
    }
    let to_alpha = |a: f32| {
        let v = (a * 255.0) as i32 as u8;
        if v > 247 {
            255
        } else if v < 8 {
            0
        } else {
            v
        }
    };
    let partial_l = (b.left + 1) as f32 - r[0];
    let partial_r = r[2] - (b.right - 1) as f32;
    let mut partial_t = (b.top + 1) as f32 - r[1];
    let partial_b = r[3] - (b.bottom - 1) as f32;
    if b.height() == 1 {
        partial_t = r[3] - r[1];
    }
    let row = |dev: &mut Device, y: i32, p: f32| {
        dev.put(b.left, y, to_alpha(partial_l * p));
        for x in b.left + 1..b.right - 1 {
            dev.put(x, y, to_alpha(p));
        }
        dev.put(b.right - 1, y, to_alpha(partial_r * p));
    };
    row(dev, b.top, partial_t);
    if b.height() > 2 {
        for y in b.top + 1..b.bottom - 1 {
            dev.put(b.left, y, to_alpha(partial_l));
            for x in b.left + 1..b.right - 1 {
                dev.put(x, y, 255);
            }
            dev.put(b.right - 1, y, to_alpha(partial_r));
        }
    }
    if b.height() > 1 {
        row(dev, b.bottom - 1, partial_b);
    }
}

/// Skia's edge order: by top, then x, then slope (`SkTQSort`: insertion sort up to 32
/// edges, quicksort partitions above).
fn sort_edges(v: &mut [Edge]) {
    let less = |a: &Edge, b: &Edge| {
        if a.upper_y != b.upper_y {
            a.upper_y < b.upper_y
        } else if a.x != b.x {
            a.x < b.x
        } else {
            a.dx < b.dx
        }
    };
    let n = v.len();
    if n <= 1 {
        return;
    }
    let depth = 2 * (usize::BITS - (n - 1).saturating_sub(1).leading_zeros()) as i32;
    intro_sort(v, depth, &less);
}

fn intro_sort(v: &mut [Edge], depth: i32, less: &impl Fn(&Edge, &Edge) -> bool) {
    let n = v.len();
    if n <= 32 {
        for next in 1..n {
            if !less(&v[next], &v[next - 1]) {
                continue;
            }
            let insert = v[next];
            let mut hole = next;
            while hole > 0 && less(&insert, &v[hole - 1]) {
                v[hole] = v[hole - 1];
                hole -= 1;
            }
            v[hole] = insert;
        }
        return;
    }
    if depth == 0 {
        // Skia heap-sorts here; any order of equal edges is as good (this is unreachable for
        // the edge counts of real shapes).
        v.sort_by(|a, b| {
            if less(a, b) {
                std::cmp::Ordering::Less
            } else if less(b, a) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        });
        return;
    }
    let middle = (n - 1) >> 1;
    let right = n - 1;
    let pivot = v[middle];
    v.swap(middle, right);
    let mut new_pivot = 0;
    for i in 0..right {
        if less(&v[i], &pivot) {
            v.swap(i, new_pivot);
            new_pivot += 1;
        }
    }
    v.swap(new_pivot, right);
    let (lo, hi) = v.split_at_mut(new_pivot);
    intro_sort(lo, depth - 1, less);
    intro_sort(&mut hi[1..], depth - 1, less);
}

/// `SkPath::computeConvexity` of a device path: one contour that turns one way only.
pub fn is_convex(path: &Path) -> bool {
    let pts: Vec<(f32, f32)> = path.points().iter().map(|p| (p.x, p.y)).collect();
    if !by_sign(&pts) {
        return false;
    }
    let mut st = Convexicator::default();
    let mut contours = 0;
    let mut needs_close = false;
    for seg in path.segments() {
        if contours == 0 {
            match seg {
                PathSegment::MoveTo(p) => {
                    st.set_move((p.x, p.y));
                    continue;
                }
                _ => {
                    contours = 1;
                    needs_close = true;
                }
            }
        }
        if contours == 1 {
            let pts: Vec<(f32, f32)> = match seg {
                PathSegment::MoveTo(_) | PathSegment::Close => {
                    if !st.close() {
                        return false;
                    }
                    needs_close = false;
                    contours = 2;
                    continue;
                }
                PathSegment::LineTo(a) => vec![(a.x, a.y)],
                PathSegment::QuadTo(a, b) => vec![(a.x, a.y), (b.x, b.y)],
                PathSegment::CubicTo(a, b, c) => vec![(a.x, a.y), (b.x, b.y), (c.x, c.y)],
            };
            for p in pts {
                if !st.add_pt(p) {
                    return false;
                }
            }
        } else if !matches!(seg, PathSegment::MoveTo(_)) {
            return false;
        }
    }
    if needs_close && !st.close() {
        return false;
    }
    st.expected != 0 || st.reversals < 3
}

/// `Convexicator::BySign`: more than three sign changes of dx or dy is concave.
fn by_sign(pts: &[(f32, f32)]) -> bool {
    if pts.len() <= 3 {
        return true;
    }
    let sign = |v: f32| (v < 0.0) as i32;
    let (mut dxes, mut dyes) = (0, 0);
    let (mut last_sx, mut last_sy) = (2, 2);
    let mut curr = pts[0];
    let seq = pts[1..].iter().chain(std::iter::once(&pts[0]));
    for &p in seq {
        let v = (p.0 - curr.0, p.1 - curr.1);
        if v != (0.0, 0.0) {
            if !(v.0.is_finite() && v.1.is_finite()) {
                return false;
            }
            let (sx, sy) = (sign(v.0), sign(v.1));
            dxes += (sx != last_sx) as i32;
            dyes += (sy != last_sy) as i32;
            if dxes > 3 || dyes > 3 {
                return false;
            }
            last_sx = sx;
            last_sy = sy;
        }
        curr = p;
    }
    true
}

#[derive(Default)]
struct Convexicator {
    first_pt: (f32, f32),
    first_vec: (f32, f32),
    last_pt: (f32, f32),
    last_vec: (f32, f32),
    /// 0 unset, 1 right, -1 left.
    expected: i32,
    reversals: i32,
}

impl Convexicator {
    fn set_move(&mut self, p: (f32, f32)) {
        self.first_pt = p;
        self.last_pt = p;
        self.expected = 0;
    }

    fn add_pt(&mut self, p: (f32, f32)) -> bool {
        if self.last_pt == p {
            return true;
        }
        let v = (p.0 - self.last_pt.0, p.1 - self.last_pt.1);
        if self.first_pt == self.last_pt && self.expected == 0 && self.last_vec == (0.0, 0.0) {
            self.last_vec = v;
            self.first_vec = v;
        } else if !self.add_vec(v) {
            return false;
        }
        self.last_pt = p;
        true
    }

    fn add_vec(&mut self, v: (f32, f32)) -> bool {
        let cross = self.last_vec.0 * v.1 - self.last_vec.1 * v.0;
        if !cross.is_finite() {
            return false;
        }
        if cross == 0.0 {
            if self.last_vec.0 * v.0 + self.last_vec.1 * v.1 < 0.0 {
                self.last_vec = v;
                self.reversals += 1;
                return self.reversals < 3;
            }
            return true;
        }
        let dir = if cross > 0.0 { 1 } else { -1 };
        if self.expected == 0 {
            self.expected = dir;
        } else if dir != self.expected {
            return false;
        }
        self.last_vec = v;
        true
    }

    fn close(&mut self) -> bool {
        let first = self.first_pt;
        let fv = self.first_vec;
        self.add_pt(first) && self.add_vec(fv)
    }
}

/// `SkScan::AntiFillRect`, how Chromium fills an SVG `<rect>` whose device shape is still an
/// axis-aligned rectangle: the covered share of each edge pixel in 1/256 px steps, no
/// snapping. Writes into `out` as [`fill`] does; `rect` is left, top, right, bottom.
pub fn fill_rect(rect: [f32; 4], clip: [u32; 4], out: &mut [u8], width: u32, height: u32) -> Option<[u32; 4]> {
    if out.len() < width as usize * height as usize || width > 8191 || height > 8191 {
        return None;
    }
    // Skia first cuts the rectangle to the clip's bounds (the canvas, without a clip).
    let c =
        [clip[0].min(width) as f32, clip[1].min(height) as f32, clip[2].min(width) as f32, clip[3].min(height) as f32];
    let rect = [rect[0].max(c[0]), rect[1].max(c[1]), rect[2].min(c[2]), rect[3].min(c[3])];
    if !(rect[0] < rect[2] && rect[1] < rect[3]) {
        return Some([0, 0, 0, 0]);
    }
    let mut dev = Device { out, marks: None, width: width as i32, height: height as i32 };
    // SkScalarToFixed, then SkFixedToFDot8 (round to 1/256).
    let dot8 = |v: f32| {
        let f = (v * 65536.0) as i32;
        f.wrapping_add(0x80) >> 8
    };
    let (l, t, r, b) = (dot8(rect[0]), dot8(rect[1]), dot8(rect[2]), dot8(rect[3]));
    anti_fill_dot8(&mut dev, l, t, r, b);
    let clamp = |v: i32, hi: u32| v.clamp(0, hi as i32) as u32;
    Some([clamp(l >> 8, width), clamp(t >> 8, height), clamp((r + 255) >> 8, width), clamp((b + 255) >> 8, height)])
}

fn alpha_mul(value: i32, alpha256: i32) -> u8 {
    ((value * alpha256) >> 8) as u8
}

fn v_line(dev: &mut Device, x: i32, y: i32, height: i32, a: u8) {
    for j in 0..height {
        dev.put(x, y + j, a);
    }
}

fn dot8_scanline(dev: &mut Device, l: i32, top: i32, r: i32, alpha: i32) {
    if (l >> 8) == ((r - 1) >> 8) {
        dev.put(l >> 8, top, alpha_mul(alpha, r - l));
        return;
    }
    let mut left = l >> 8;
    if l & 0xFF != 0 {
        dev.put(left, top, alpha_mul(alpha, 256 - (l & 0xFF)));
        left += 1;
    }
    let rite = r >> 8;
    for x in left..rite {
        dev.put(x, top, alpha as u8);
    }
    if r & 0xFF != 0 {
        dev.put(rite, top, alpha_mul(alpha, r & 0xFF));
    }
}

/// `antifilldot8`.
fn anti_fill_dot8(dev: &mut Device, l: i32, t: i32, r: i32, b: i32) {
    if l >= r || t >= b {
        return;
    }
    let mut top = t >> 8;
    if top == ((b - 1) >> 8) {
        dot8_scanline(dev, l, top, r, b - t - 1);
        return;
    }
    if t & 0xFF != 0 {
        dot8_scanline(dev, l, top, r, 256 - (t & 0xFF));
        top += 1;
    }
    let bot = b >> 8;
    let height = bot - top;
    if height > 0 {
        let mut left = l >> 8;
        if left == ((r - 1) >> 8) {
            v_line(dev, left, top, height, (r - l - 1) as u8);
        } else {
            if l & 0xFF != 0 {
                v_line(dev, left, top, height, (256 - (l & 0xFF)) as u8);
                left += 1;
            }
            let rite = r >> 8;
            for y in top..bot {
                for x in left..rite {
                    dev.put(x, y, 255);
                }
            }
            if r & 0xFF != 0 {
                v_line(dev, rite, top, height, (r & 0xFF) as u8);
            }
        }
    }
    if b & 0xFF != 0 {
        dot8_scanline(dev, l, bot, r, b & 0xFF);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use resvg::tiny_skia::PathBuilder;

    fn cover(p: &Path, even_odd: bool, w: u32, h: u32) -> String {
        let mut out = vec![0u8; (w * h) as usize];
        fill(p, even_odd, None, &mut out, w, h).unwrap();
        out.iter().map(|b| format!("{b:02x}")).collect()
    }

    // Expected coverage from skia-python 144 (`canvas.drawPath`, anti-aliased, opaque).

    #[test]
    fn a_small_shape_in_the_mask_blitter_matches_skia() {
        let mut b = PathBuilder::new();
        b.move_to(2.3, 1.7);
        b.quad_to(11.2, 0.4, 9.6, 5.1);
        b.quad_to(8.1, 9.7, 1.2, 8.4);
        b.close();
        assert_eq!(
            cover(&b.finish().unwrap(), false, 12, 10),
            "000000000000000000000000000031586b7b6847050000000000d3ffffffffffe03300000003f9ffffffffffffb8\
             00000027ffffffffffffffab00000051ffffffffffffff550000007bffffffffffffbf00000000a4ffffffffffba0c\
             000000006eb9c09a5a150000000000000000000000000000000000"
        );
    }

    #[test]
    fn a_wide_self_crossing_cubic_shape_in_saturating_runs_matches_skia() {
        let mut b = PathBuilder::new();
        b.move_to(1.5, 1.25);
        b.cubic_to(40.2, -3.0, 5.0, 11.0, 42.7, 6.6);
        b.line_to(3.3, 6.9);
        b.cubic_to(20.0, -2.0, 30.0, 9.0, 40.1, 1.1);
        b.close();
        let p = b.finish().unwrap();
        assert!(!is_convex(&p));
        let expected = [
            "0000000000001c30425b72808080808073531c00000000000000000000000000000000000000000000000000",
            "000014283b47494b4c4e4f5153545658595b5d2e65e0e3e5e7e8eaecedeff1f2f4f6f7ffffffef6200000000",
            "00000000000000000000000000000000000000000061ffffffffffffffffffffffffffffff9e180000000000",
            "00000000000000000000000f375a7c93a6b9b5a2907cd9d6c3d3e7ffffffffffffeeb5761500000000000000",
            "0000000000000000277fd1ffffffffffffffffffffff8a000000000011263a2c110000000000000000000000",
            "00000000000a6ad1fffffffffffffffffffffffffffff3160000000000000000000000000000000000000000",
            "0000001c85eaf6f3f0ece9e6e3dfdcd9d6d2cfccc9c5c09624494c4f5256595c5f6366696c70736744270000",
            "000000000000000000000000000000000000000000000000001943677f80806e52404040331f0b0000000000",
        ];
        assert_eq!(cover(&p, false, 44, 8), expected.concat());
    }

    #[test]
    fn a_polygon_reaching_outside_is_clipped_as_skia_clips_it() {
        let mut b = PathBuilder::new();
        b.move_to(-4.2, 3.3);
        b.line_to(13.7, -2.9);
        b.line_to(19.1, 7.4);
        b.line_to(2.2, 11.8);
        b.line_to(8.4, 0.6);
        b.close();
        assert_eq!(
            cover(&b.finish().unwrap(), true, 16, 9),
            "00001469bbfcf1b7e1ffffffffffff7968bfe7ad6d310226feffffffffffffef64280000000000b1ffffffffffffff\
             ff0000000000003dffffffffffffffffff000000000000cdffffffffffffffffff000000000057ffffffffffffffff\
             ffff0000000005dfffffffffffffffffffff000000006fffffffffffffffffffffff0000000eebffffffffffffffff\
             de9a5c"
        );
    }

    #[test]
    fn an_oval_known_as_conics_is_filled_as_skia_fills_its_conics() {
        // Skia's own quadratics of the oval (0.5, 0.75)–(10.25, 9.5): a control point a float
        // rounding left of 0.5 makes them concave to Skia's test, the conics are convex.
        let mut b = PathBuilder::new();
        b.move_to(5.375, 0.75);
        b.quad_to(7.394291, 0.75, 8.822145, 2.0314078);
        b.quad_to(10.25, 3.3128154, 10.25, 5.125);
        b.quad_to(10.25, 6.937184, 8.822145, 8.218592);
        b.quad_to(7.394291, 9.5, 5.375, 9.5);
        b.quad_to(3.3557088, 9.5, 1.9278544, 8.218592);
        b.quad_to(0.49999997, 6.937184, 0.5, 5.125);
        b.quad_to(0.49999997, 3.3128154, 1.9278543, 2.0314076);
        b.quad_to(3.3557088, 0.75, 5.375, 0.75);
        b.close();
        let p = b.finish().unwrap();
        assert!(!is_convex(&p));
        let mut out = vec![0u8; 12 * 11];
        let conics = Conics { bounds: [0.5, 0.75, 10.25, 9.5] };
        fill(&p, false, Some(conics), &mut out, 12, 11).unwrap();
        let hex: String = out.iter().map(|b| format!("{b:02x}")).collect();
        let expected = [
            "0000000423381a010000000000005debffffffd2340000000070fffffffffffff92d00001afaffffffffffff",
            "ffd0000058ffffffffffffffffff180090ffffffffffffffffff480048fffffffffffffffff6090002baffff",
            "ffffffffff700000000ed1ffffffffff980000000000003062785a1d00000000000000000000000000000000",
        ];
        assert_eq!(hex, expected.concat(), "skia-python's drawOval");
    }

    #[test]
    fn rect_elements_cover_256ths_and_are_cut_to_the_canvas() {
        let mut out = vec![0u8; 8];
        let b = fill_rect([-1.0, 0.5, 2.5, 5.0], [0, 0, 4, 2], &mut out, 4, 2).unwrap();
        assert_eq!(b, [0, 0, 3, 2]);
        assert_eq!(out, vec![128, 128, 64, 0, 255, 255, 128, 0], "skia-python's drawRect");
    }
}
