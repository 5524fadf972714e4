//! The pen: scratch-vm's per-sprite pen state (`scratch3_pen`) and a CPU pen
//! layer that replays scratch-render's `PenSkin` line shader (anti-aliased lines
//! with round caps, premultiplied blending into an 8-bit 480×360 buffer), so
//! colour sensing sees what was drawn.
//!
//! Stamps are composited by sampling the stamped drawable's pixels at each
//! stage pixel centre with nearest-neighbour lookup (the GPU filters bilinearly
//! when the costume is rotated or scaled, which can differ at anti-aliased edges).
//!
//! Drawing is deferred ([`deferred`]): lines and stamps are recorded and rasterised only when
//! something reads the pixels; a clear drops what no one saw.

use std::sync::Arc;

use super::cost;
use super::render::{ColorMemo, OwnColors, Scene};
use super::skin::Skin;

mod changes;
mod deferred;

pub use changes::{PenChanges, PixelBox};
#[cfg(test)]
pub(crate) use deferred::MAX_PENDING;

use deferred::Pending;

/// Pen layer width in pixels.
pub const PEN_WIDTH: u32 = 480;
/// Pen layer height in pixels.
pub const PEN_HEIGHT: u32 = 360;
/// Bytes of the layer's RGBA pixels.
const PEN_BYTES: usize = (PEN_WIDTH * PEN_HEIGHT * 4) as usize;

/// The pen layer: premultiplied RGBA8, top row first (as `readPixels` returns it).
#[derive(Clone, Default)]
pub struct PenLayer {
    /// [`PEN_BYTES`] once anything is rasterised; empty (all transparent) until then, so that
    /// a VM that never draws neither zeroes nor copies 691 200 bytes at each start and snapshot.
    pixels: Vec<u8>,
    /// The skin built from the current pixels (rebuilt after drawing).
    skin: Option<Arc<Skin>>,
    /// The skin built last (current or not), and the one before it with the pixels changed
    /// between the two builds: that one's buffer, once the scene lets go of it, becomes the
    /// next skin's (see [`PenLayer::skin_pixels`]).
    newest: Option<Arc<Skin>>,
    older: Option<(Arc<Skin>, PenChanges)>,
    /// Pixels written or zeroed since the newest skin was built.
    unskinned: PenChanges,
    /// Whether anything was ever drawn (an untouched layer is fully transparent).
    dirty: bool,
    /// Pixels changed since [`PenLayer::take_changes`] last ran (see [`PenChanges`]).
    changes: PenChanges,
    /// Pixels drawn since the last clear (what a clear changes), recorded drawing included.
    ink: PenChanges,
    /// Pixels actually written since the last clear (what a clear must zero; every other
    /// pixel is transparent).
    written: PenChanges,
    /// Pixels visited by drawing so far (work done, for the run's work count).
    work: u64,
    /// The last stamp's colour memo (see [`ColorMemo`]).
    memo: ColorMemo,
    /// Drawing recorded but not yet rasterised, oldest first (see [`deferred`]).
    pending: Vec<Pending>,
}

impl std::fmt::Debug for PenLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PenLayer").field("dirty", &self.dirty).field("pending", &self.pending.len()).finish()
    }
}

impl PenLayer {
    /// Roughly the 8-byte words this layer's pixels and records take (what a clone copies; a
    /// recorded stamp's drawable, behind a pointer, is not counted). The pixels count whether
    /// or not they exist yet: the work counts stay those of engine `+sem57`, whose layers were
    /// always allocated (a clone of a layer that never drew is charged a copy it no longer
    /// makes; charging what exists changes work counts, so it waits for an engine change).
    pub fn heap_words(&self) -> u64 {
        (PEN_BYTES.div_ceil(8) + self.pending.len() * std::mem::size_of::<Pending>().div_ceil(8)) as u64
    }

    /// Allocates the (transparent) pixels before the first write or copy.
    fn ensure_pixels(&mut self) {
        if self.pixels.is_empty() {
            self.pixels = vec![0; PEN_BYTES];
        }
    }

    /// A transparent pen layer.
    pub fn new() -> Self {
        Self::default()
    }

    /// `penClear`.
    pub fn clear(&mut self) {
        // What no one saw is not drawn: only whether it would have inked anything, and where.
        self.settle_pending();
        if self.dirty {
            // Pixels outside what was written since the last clear are transparent already.
            let written = std::mem::take(&mut self.written);
            for b in written.boxes() {
                let w = PEN_WIDTH as i64;
                let (c0, c1) = (b.c0.clamp(0, w - 1) as usize, b.c1.clamp(0, w - 1) as usize);
                for row in b.r0.clamp(0, PEN_HEIGHT as i64 - 1)..=b.r1.clamp(0, PEN_HEIGHT as i64 - 1) {
                    let start = row as usize * PEN_WIDTH as usize;
                    if let Some(p) = self.pixels.get_mut((start + c0) * 4..(start + c1 + 1) * 4) {
                        p.fill(0);
                    }
                }
            }
            self.unskinned.merge(&written);
            // Only recorded drawing, dropped: nothing was zeroed.
            let zeroed = !written.is_empty();
            self.dirty = false;
            self.work += if zeroed { cost::PEN_CLEAR } else { cost::PEN_DEFER };
            // Only what was drawn since the last clear changes (a sprite that clears and
            // redraws a line every frame changes two lines' worth of pixels, not the stage).
            let ink = std::mem::take(&mut self.ink);
            self.changes.merge(&ink);
            self.skin = None;
        }
    }

    /// Pixels visited by drawing and clearing so far (in the units of the run's work count).
    pub fn work(&self) -> u64 {
        self.work
    }

    /// The pixels changed since the last call (and forgets them).
    pub fn take_changes(&mut self) -> PenChanges {
        self.flush();
        std::mem::take(&mut self.changes)
    }

    /// Premultiplied RGBA of the pen pixel at column `x`, row `y` (row 0 = stage top).
    pub fn pixel(&mut self, x: u32, y: u32) -> [u8; 4] {
        self.flush();
        if x >= PEN_WIDTH || y >= PEN_HEIGHT {
            return [0; 4];
        }
        let o = ((y * PEN_WIDTH + x) * 4) as usize;
        match self.pixels.get(o..o + 4) {
            Some(&[r, g, b, a]) => [r, g, b, a],
            _ => [0; 4],
        }
    }

    /// A skin for the pen drawable of a scene that queries which read no pen pixels will use
    /// (touching sprites, edges, bounds, fencing): the last skin built, else a transparent
    /// one, without drawing what is recorded. A query that reads the pixels replaces it
    /// ([`PenLayer::skin`]).
    pub fn placeholder_skin(&mut self) -> Arc<Skin> {
        if let Some(s) = &self.skin {
            return s.clone();
        }
        // One per process: every VM's pen layer starts without a skin.
        static BLANK: std::sync::OnceLock<Arc<Skin>> = std::sync::OnceLock::new();
        BLANK
            .get_or_init(|| {
                let (w, h) = (PEN_WIDTH, PEN_HEIGHT);
                Arc::new(Skin::pen(w, h, vec![0; (w * h * 4) as usize], Vec::new()))
            })
            .clone()
    }

    /// The pen layer as a skin (for the pen drawable of a [`Scene`]).
    pub fn skin(&mut self) -> Arc<Skin> {
        self.flush();
        if let Some(s) = &self.skin {
            return s.clone();
        }
        self.work += cost::PEN_SKIN;
        let s = Arc::new(Skin::pen(PEN_WIDTH, PEN_HEIGHT, self.skin_pixels(), self.written.texel_boxes()));
        self.skin = Some(s.clone());
        self.newest = Some(s.clone());
        s
    }

    /// A copy of the pixels for a new skin. A layer redrawn every frame and read every frame
    /// copied its whole 480 × 360 pixels per frame (a tenth of `400003367`): the buffer of the
    /// skin before the newest one, when nothing holds it any more (the scene has moved on to
    /// the newest), is brought up to date where the pixels changed since it was built instead.
    fn skin_pixels(&mut self) -> Vec<u8> {
        self.ensure_pixels();
        let since_newest = std::mem::take(&mut self.unskinned);
        let reused = self.older.take().and_then(|(old, mut changed)| {
            let buf = Arc::try_unwrap(old).ok()?.into_pen_pixels()?;
            changed.merge(&since_newest);
            Some((buf, changed))
        });
        self.older = self.newest.take().map(|n| (n, since_newest));
        let Some((mut buf, changed)) = reused.filter(|(b, _)| b.len() == self.pixels.len()) else {
            return self.pixels.clone();
        };
        for b in changed.boxes() {
            let (c0, c1) = (b.c0.clamp(0, PEN_WIDTH as i64 - 1), b.c1.clamp(0, PEN_WIDTH as i64 - 1));
            for row in b.r0.clamp(0, PEN_HEIGHT as i64 - 1)..=b.r1.clamp(0, PEN_HEIGHT as i64 - 1) {
                let (o, e) = (pixel_offset(c0, row), pixel_offset(c1 + 1, row));
                if let (Some(d), Some(src)) = (buf.get_mut(o..e), self.pixels.get(o..e)) {
                    d.copy_from_slice(src);
                }
            }
        }
        if cfg!(debug_assertions) {
            assert!(buf == self.pixels, "a reused pen buffer missed a change");
        }
        buf
    }

    /// `penPoint`: a dot (a zero-length line).
    pub fn draw_point(&mut self, attrs: &PenAttributes, x: f64, y: f64) {
        self.draw_line(attrs, x, y, x, y);
    }

    /// `penLine` from (x0, y0) to (x1, y1) in Scratch coordinates (recorded; drawn when read).
    pub fn draw_line(&mut self, attrs: &PenAttributes, x0: f64, y0: f64, x1: f64, y1: f64) {
        if let Some(line) = Line::new(attrs, x0, y0, x1, y1) {
            self.defer(Pending::Line(line));
        }
    }

    /// Rasterises `l` into the pixels.
    fn raster_line(&mut self, l: &Line) {
        self.raster_line_with(l, true);
    }

    /// [`PenLayer::raster_line`]; with `fill`, the columns surely inside an opaque line's
    /// fully covered core are filled without computing their coverage (the same pixels: tests
    /// compare both ways).
    fn raster_line_with(&mut self, l: &Line, fill: bool) {
        self.ensure_pixels();
        let (premult, row0, row1) = (l.premult, l.row0, l.row1);
        let (mut visited, mut filled) = (0u64, 0u64);
        // An opaque colour at full coverage replaces the pixel: what `blend` computes then
        // (src + dst · 0), without its arithmetic (the inside of a wide line).
        let solid = (premult[3] == 1.0).then(|| premult.map(round_unit));
        // Drawing a transparent-edged line still counts as ink (as the renderer's would).
        self.dirty = true;
        self.skin = None;
        for row in row0..=row1 {
            let Some((c_lo, c_hi)) = l.columns(row) else { continue };
            // The core's columns (opaque lines only), clipped to the row's: filled; the
            // columns before and after it: coverage computed pixel by pixel.
            let core = solid.filter(|_| fill).and_then(|_| l.core(row)).map(|(a, b)| (a.max(c_lo), b.min(c_hi)));
            match (solid, core) {
                (Some(c), Some((a, b))) if a <= b => {
                    visited += self.raster_columns(l, row, c_lo, a - 1, solid);
                    let (o, e) = (pixel_offset(a, row), pixel_offset(b + 1, row));
                    if let Some(run) = self.pixels.get_mut(o..e) {
                        run.chunks_exact_mut(4).for_each(|p| p.copy_from_slice(&c));
                    }
                    filled += (b - a + 1) as u64;
                    visited += self.raster_columns(l, row, b + 1, c_hi, solid);
                }
                _ => visited += self.raster_columns(l, row, c_lo, c_hi, solid),
            }
            if c_lo <= c_hi {
                self.inked(c_lo, c_hi, row);
                self.wrote(c_lo, c_hi, row);
            }
        }
        self.work += cost::PEN_PIXEL * visited + cost::PEN_FILL * filled + cost::ROW_VISIT * (row1 - row0 + 1) as u64;
    }

    /// Columns `c0..=c1` of row `row` of line `l`, each pixel's coverage computed (an opaque
    /// line's fully covered pixels take `solid`, its colour, as they are); returns how many.
    fn raster_columns(&mut self, l: &Line, row: i64, c0: i64, c1: i64, solid: Option<[u8; 4]>) -> u64 {
        for col in c0..=c1 {
            let alpha = l.alpha(col, row);
            if alpha <= 0.0 {
                continue;
            }
            if let (Some(c), true) = (solid, alpha >= 1.0) {
                let o = pixel_offset(col, row);
                if let Some(p) = self.pixels.get_mut(o..o + 4) {
                    p.copy_from_slice(&c);
                }
                continue;
            }
            let p = l.premult;
            self.blend(col as u32, row as u32, [p[0] * alpha, p[1] * alpha, p[2] * alpha, p[3] * alpha]);
        }
        (c1 - c0 + 1).max(0) as u64
    }

    /// What drawing line `l` would ink, without drawing it.
    fn ink_line(&mut self, l: &Line) {
        self.dirty = true;
        self.skin = None;
        for row in l.row0..=l.row1 {
            if let Some((c_lo, c_hi)) = l.columns(row).filter(|(a, b)| a <= b) {
                self.inked(c_lo, c_hi, row);
            }
        }
        self.work += cost::ROW_VISIT * (l.row1 - l.row0 + 1) as u64;
    }

    /// Pixels in columns `c0..=c1` of row `r` were written: what a clear must zero, and what
    /// the next skin must copy.
    fn wrote(&mut self, c0: i64, c1: i64, r: i64) {
        self.written.add_row(c0, c1, r);
        self.unskinned.add_row(c0, c1, r);
    }

    /// Pixels in columns `c0..=c1` of row `r` got ink: what a clear must erase, and what
    /// queries must forget.
    fn inked(&mut self, c0: i64, c1: i64, r: i64) {
        self.dirty = true;
        self.skin = None;
        self.changes.add_row(c0, c1, r);
        self.ink.add_row(c0, c1, r);
    }

    /// [`PenLayer::draw_line`] visiting every pixel of the line's box and blending each (the
    /// reference its row ranges and opaque copies are checked against).
    #[cfg(test)]
    fn draw_line_full_box(&mut self, attrs: &PenAttributes, x0: f64, y0: f64, x1: f64, y1: f64) {
        self.ensure_pixels();
        let Some(l) = Line::new(attrs, x0, y0, x1, y1) else { return };
        for row in l.row0..=l.row1 {
            for col in l.col0..=l.col1 {
                let alpha = l.alpha(col, row);
                if alpha > 0.0 {
                    let src = l.premult.map(|v| v * alpha);
                    self.blend(col as u32, row as u32, src);
                    self.wrote(col, col, row);
                }
            }
        }
    }

    /// `gl.blendFunc(ONE, ONE_MINUS_SRC_ALPHA)` into the 8-bit framebuffer.
    fn blend(&mut self, col: u32, row: u32, src: [f64; 4]) {
        let o = ((row * PEN_WIDTH + col) * 4) as usize;
        // Every caller makes the pixels first ([`PenLayer::ensure_pixels`]).
        debug_assert!(!self.pixels.is_empty(), "blending into a pen layer with no pixels");
        let Some(px) = self.pixels.get_mut(o..o + 4) else { return };
        for (d, s) in px.iter_mut().zip(src) {
            *d = round_unit(s + f64::from(*d) / 255.0 * (1.0 - src[3]));
        }
    }

    /// `penStamp`: composites drawable `index` of `scene` (visible or not) onto the pen layer
    /// (recorded with the drawable as it is now; drawn when read).
    pub fn stamp(&mut self, scene: &Scene, index: usize) {
        let Some(d) = scene.drawables.get(index) else {
            return;
        };
        // The renderer ignores visibility for stamps; so do the box and the colours used here.
        let Some(b) = scene.stamp_bounds(index) else {
            return;
        };
        // The renderer's pixel centres are the box's integer corners plus a half: the box is
        // snapped to integers and clamped to the stage, so pixel (col, row) is at x = col − 239.5,
        // y = 179.5 − row exactly, and columns and rows are found without rounding each pixel.
        let half_w = PEN_WIDTH as f64 / 2.0;
        let half_h = PEN_HEIGHT as f64 / 2.0;
        // A box with NaN (a non-finite transform) covers no pixel centre.
        if [b.left, b.right, b.bottom, b.top].iter().any(|v| !v.is_finite() || v.fract() != 0.0) {
            return;
        }
        let (c0, c1) = ((b.left + half_w).max(0.0), (b.right + half_w).min(PEN_WIDTH as f64));
        let (r0, r1) = ((half_h - b.top).max(0.0), (half_h - b.bottom).min(PEN_HEIGHT as f64));
        if !(c0 < c1 && r0 < r1) {
            return;
        }
        // Pixel ranges of a box within the stage: exact small integers.
        let (cols, rows) = ((c0 as u32, c1 as u32), (r0 as u32, r1 as u32));
        self.defer(Pending::Stamp(Box::new(deferred::Stamp { drawable: d.clone(), cols, rows })));
    }

    /// Composites a recorded stamp into the pixels.
    fn raster_stamp(&mut self, st: &deferred::Stamp) {
        self.ensure_pixels();
        let scene = st.scene();
        self.work += cost::STAMP_PIXEL * u64::from((st.cols.1 - st.cols.0) * (st.rows.1 - st.rows.0));
        let half_w = PEN_WIDTH as f64 / 2.0;
        let mut own = scene.own_colors_with(0, std::mem::take(&mut self.memo));
        for row in st.rows.0..st.rows.1 {
            let y = row_y(row);
            let Some((first, last)) = stamp_columns(&own, y, st.cols) else {
                continue;
            };
            let (mut drawn0, mut drawn1) = (u32::MAX, 0);
            for col in first..=last {
                let x = col as f64 - (half_w - 0.5);
                let c = own.at(x, y);
                if c[3] == 0 {
                    continue;
                }
                let o = ((row * PEN_WIDTH + col) * 4) as usize;
                if c[3] == 255 {
                    // An opaque source replaces the pixel: what `blend` computes then (see
                    // the test `opaque_stamp_pixels_replace`), without its arithmetic.
                    if let Some(p) = self.pixels.get_mut(o..o + 4) {
                        p.copy_from_slice(&c);
                    }
                } else {
                    let src = [c[0] as f64 / 255.0, c[1] as f64 / 255.0, c[2] as f64 / 255.0, c[3] as f64 / 255.0];
                    self.blend(col, row, src);
                }
                drawn0 = drawn0.min(col);
                drawn1 = col;
            }
            if drawn0 <= drawn1 {
                let (d0, d1, r) = (i64::from(drawn0), i64::from(drawn1), i64::from(row));
                self.inked(d0, d1, r);
                self.wrote(d0, d1, r);
            }
        }
        self.memo = own.into_memo();
    }
}

#[cfg(test)]
impl PenLayer {
    /// [`PenLayer::stamp`] pixel by pixel over the whole box, as the renderer draws it: the
    /// reference the stamp's spans and row bookkeeping are checked against.
    pub(crate) fn stamp_reference(&mut self, scene: &Scene, index: usize) {
        self.ensure_pixels();
        let Some(b) = scene.stamp_bounds(index) else {
            return;
        };
        let mut own = scene.own_colors(index);
        let (half_w, half_h) = (PEN_WIDTH as f64 / 2.0, PEN_HEIGHT as f64 / 2.0);
        let mut y = b.top - 0.5;
        while y > b.bottom {
            let row = (half_h - y - 0.5).round() as i64;
            let mut x = b.left + 0.5;
            while x < b.right {
                let col = (x + half_w - 0.5).round() as i64;
                if (0..PEN_WIDTH as i64).contains(&col) && (0..PEN_HEIGHT as i64).contains(&row) {
                    let c = own.at(x, y);
                    if c[3] > 0 {
                        let src = [c[0] as f64 / 255.0, c[1] as f64 / 255.0, c[2] as f64 / 255.0, c[3] as f64 / 255.0];
                        self.blend(col as u32, row as u32, src);
                        self.changes.add_row(col, col, row);
                        self.wrote(col, col, row);
                    }
                }
                x += 1.0;
            }
            y -= 1.0;
        }
    }

    /// What a clear would find now: whether anything was inked since the last one, and where
    /// (settling the records first, as a clear does).
    pub(crate) fn settled_ink(&mut self) -> (bool, PenChanges) {
        self.settle_pending();
        (self.dirty, self.ink)
    }

    /// The layer's RGBA bytes (what was recorded drawn first).
    pub(crate) fn rgba(&mut self) -> &[u8] {
        self.flush();
        self.ensure_pixels();
        &self.pixels
    }
}

/// Stage y of the centres of pen row `row` (row 0 at the top).
fn row_y(row: u32) -> f64 {
    PEN_HEIGHT as f64 / 2.0 - 0.5 - f64::from(row)
}

/// The columns a stamp samples on the row at stage `y`: those of `cols` (half-open) where its
/// costume can be (most of a turned sprite's box is not sampled), `None` when there are none.
fn stamp_columns(own: &OwnColors<'_>, y: f64, cols: (u32, u32)) -> Option<(u32, u32)> {
    let half_w = PEN_WIDTH as f64 / 2.0;
    let (lo, hi) = own.inside_span(y)?;
    let first = (lo + half_w - 0.5).ceil().max(f64::from(cols.0));
    let last = (hi + half_w - 0.5).floor().min(f64::from(cols.1) - 1.0);
    (first <= last).then_some((first as u32, last as u32))
}

/// The byte offset of pen pixel (`col`, `row`) (both inside the layer).
fn pixel_offset(col: i64, row: i64) -> usize {
    ((row * PEN_WIDTH as i64 + col) * 4) as usize
}

/// `(v.clamp(0, 1) * 255).round() as u8`, bit for bit (NaN gives 0), without libm's `round`:
/// every pixel a line touches is blended through this.
#[inline]
fn round_unit(v: f64) -> u8 {
    let x = v.clamp(0.0, 1.0) * 255.0;
    // NaN (from a NaN colour) stores 0, as `round() as u8` does.
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    let t = x as u32;
    // Half away from zero, as `f64::round`; x is at most 255.
    (if x - t as f64 >= 0.5 { t + 1 } else { t }) as u8
}

/// The pen-space x-range of row `py` within distance `rho` of the segment that starts at `a`
/// and runs `seg` along unit vector `u` (a capsule, convex: one interval), `None` when the row
/// misses it. The union of the two end discs and the band along the segment.
fn capsule_row(py: f64, a: (f64, f64), u: (f64, f64), seg: f64, rho: f64) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (cx, cy) in [a, (a.0 + u.0 * seg, a.1 + u.1 * seg)] {
        let h = rho * rho - (py - cy) * (py - cy);
        if h >= 0.0 {
            let w = h.sqrt();
            lo = lo.min(cx - w);
            hi = hi.max(cx + w);
        }
    }
    // The band: 0 <= along <= seg and |perp| <= rho, with x' = x - a.x,
    // along = x'·ux + ry·uy and perp = −x'·uy + ry·ux: each bound is linear in x'.
    let ry = py - a.1;
    let (mut blo, mut bhi) = (f64::NEG_INFINITY, f64::INFINITY);
    let mut inside = true;
    for (c0, c1, l, h) in [(ry * u.1, u.0, 0.0, seg), (ry * u.0, -u.1, -rho, rho)] {
        if c1 == 0.0 {
            inside &= c0 >= l && c0 <= h;
        } else {
            let (t0, t1) = ((l - c0) / c1, (h - c0) / c1);
            blo = blo.max(t0.min(t1));
            bhi = bhi.min(t0.max(t1));
        }
    }
    if inside && blo <= bhi {
        lo = lo.min(a.0 + blo);
        hi = hi.max(a.0 + bhi);
    }
    (lo <= hi).then_some((lo, hi))
}

/// A line as the shader draws it, in pen space (+y down, origin at the stage centre), with the
/// box of pixels it can reach on the stage (never empty).
#[derive(Debug, Clone, Copy)]
struct Line {
    px0: f64,
    py0: f64,
    /// Unit direction (a zero-length line is a dot).
    ux: f64,
    uy: f64,
    /// Length (0 for a dot).
    seg: f64,
    /// Premultiplied colour.
    premult: [f64; 4],
    diameter: f64,
    col0: i64,
    col1: i64,
    row0: i64,
    row1: i64,
}

impl Line {
    /// `penLine` from (x0, y0) to (x1, y1) in Scratch coordinates; `None` when it draws nothing
    /// (not finite, transparent, or off the stage).
    fn new(attrs: &PenAttributes, x0: f64, y0: f64, x1: f64, y1: f64) -> Option<Line> {
        let diameter = if attrs.diameter == 0.0 || attrs.diameter.is_nan() { 1.0 } else { attrs.diameter };
        // Width-1 and width-3 lines are shifted half a pixel to sit on pixel centres (Scratch 2 compatibility).
        let offset = if diameter == 1.0 || diameter == 3.0 { 0.5 } else { 0.0 };
        let (x0, y0, x1, y1) = (x0 + offset, y0 + offset, x1 + offset, y1 + offset);
        if ![x0, y0, x1, y1].iter().all(|v| v.is_finite()) {
            return None;
        }
        // Pen space: +y down, origin at the stage centre (u_penPoints = [x0, -y0, dx, -dy]).
        let (px0, py0) = (x0, -y0);
        let (dx, dy) = (x1 - x0, -(y1 - y0));
        let len = (dx * dx + dy * dy).sqrt();
        let c = attrs.color4f;
        let premult = [c[0] * c[3], c[1] * c[3], c[2] * c[3], c[3]];
        if premult[3] <= 0.0 {
            return None;
        }
        let reach = diameter / 2.0 + 1.5;
        let (minx, maxx) = (px0.min(px0 + dx) - reach, px0.max(px0 + dx) + reach);
        let (miny, maxy) = (py0.min(py0 + dy) - reach, py0.max(py0 + dy) + reach);
        let half_w = PEN_WIDTH as f64 / 2.0;
        let half_h = PEN_HEIGHT as f64 / 2.0;
        let col0 = ((minx + half_w).floor().max(0.0)) as i64;
        let col1 = ((maxx + half_w).ceil().min(PEN_WIDTH as f64 - 1.0)) as i64;
        let row0 = ((miny + half_h).floor().max(0.0)) as i64;
        let row1 = ((maxy + half_h).ceil().min(PEN_HEIGHT as f64 - 1.0)) as i64;
        if col0 > col1 || row0 > row1 {
            return None;
        }
        let (ux, uy) = if len > 1e-3 { (dx / len, dy / len) } else { (1.0, 0.0) };
        let seg = if len > 1e-3 { len } else { 0.0 };
        Some(Line { px0, py0, ux, uy, seg, premult, diameter, col0, col1, row0, row1 })
    }

    /// The coverage of pixel (`col`, `row`): 1 within (diameter − 1) / 2 of the segment,
    /// falling to 0 over the next pixel (the shader's anti-aliased round-capped line).
    fn alpha(&self, col: i64, row: i64) -> f64 {
        let px = col as f64 + 0.5 - PEN_WIDTH as f64 / 2.0;
        let (rx, ry) = (px - self.px0, line_row_y(row) - self.py0);
        let along = rx * self.ux + ry * self.uy;
        let perp = -rx * self.uy + ry * self.ux;
        let beyond = along - along.clamp(0.0, self.seg);
        let dist = (beyond * beyond + perp * perp).sqrt();
        (1.0 - (dist - (self.diameter - 1.0) * 0.5)).clamp(0.0, 1.0)
    }

    /// Columns of pen row `row` whose coverage is surely 1: their centres lie within the
    /// core radius ((diameter − 1) / 2) less a millionth of a pixel, far more than the
    /// rounding of either computation where coordinates stay under 10⁵ (beyond, `None`: every
    /// pixel's coverage is computed). `None` also when the row misses the core.
    fn core(&self, row: i64) -> Option<(i64, i64)> {
        const MARGIN: f64 = 1e-6;
        let rho = (self.diameter - 1.0) * 0.5 - MARGIN;
        let moderate = [self.px0, self.py0, self.seg].iter().all(|v| v.abs() < 1e5);
        if !(rho > 0.0 && moderate) {
            return None;
        }
        let half_w = PEN_WIDTH as f64 / 2.0;
        let (xl, xh) = capsule_row(line_row_y(row), (self.px0, self.py0), (self.ux, self.uy), self.seg, rho)?;
        // Column `c`'s centre is at c + 0.5 − half_w.
        let (a, b) = ((xl + half_w - 0.5).ceil(), (xh + half_w - 0.5).floor());
        (a <= b).then_some((a as i64, b as i64))
    }

    /// The columns of pen row `row` that can get ink: alpha > 0 needs a distance under
    /// radius + 0.5, so a long diagonal line visits its own pixels, not its bounding box (one
    /// pixel of padding each way keeps every such column in). `None` when the row misses it.
    fn columns(&self, row: i64) -> Option<(i64, i64)> {
        let half_w = PEN_WIDTH as f64 / 2.0;
        let reach = self.diameter / 2.0 + 1.5;
        let (xl, xh) = capsule_row(line_row_y(row), (self.px0, self.py0), (self.ux, self.uy), self.seg, reach)?;
        let c_lo = self.col0.max((xl + half_w - 0.5).floor() as i64 - 1);
        let c_hi = self.col1.min((xh + half_w - 0.5).ceil() as i64 + 1);
        Some((c_lo, c_hi))
    }
}

/// Pen-space y of the centres of pen row `row`: GL writes lines with +y down into the
/// bottom-up framebuffer, so framebuffer row `row` holds pen-space y = row + 0.5 − 180 (stage
/// y = 180 − row − 0.5).
fn line_row_y(row: i64) -> f64 {
    row as f64 + 0.5 - PEN_HEIGHT as f64 / 2.0
}

/// `penAttributes`: colour as premultiplication-ready RGBA in [0, 1] and the diameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PenAttributes {
    /// `[r, g, b, a]`, each in [0, 1].
    pub color4f: [f64; 4],
    /// Line width in pixels.
    pub diameter: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opaque_stamp_pixels_replace() {
        let mut p = PenLayer::new();
        p.ensure_pixels();
        for dst in [[0u8, 0, 0, 0], [10, 200, 30, 255], [255, 255, 255, 255], [3, 1, 2, 7]] {
            for v in 0..=255u8 {
                p.pixels[..4].copy_from_slice(&dst);
                let c = [v, 255 - v, v / 2, 255];
                p.blend(0, 0, [c[0] as f64 / 255.0, c[1] as f64 / 255.0, c[2] as f64 / 255.0, 1.0]);
                assert_eq!(p.pixels[..4], c, "dst {dst:?}");
            }
        }
    }

    #[test]
    fn a_layer_holds_pixels_only_once_something_is_drawn() {
        let mut layer = PenLayer::new();
        let charged = layer.heap_words();
        layer.clear();
        assert!(layer.pixels.is_empty(), "no pixels before drawing");
        assert_eq!(layer.pixel(240, 180), [0; 4]);
        assert!(layer.clone().pixels.is_empty(), "a clone copies none");
        assert_eq!(layer.heap_words(), charged, "charged as a whole layer either way");
        let red = PenAttributes { color4f: [1.0, 0.0, 0.0, 1.0], diameter: 1.0 };
        layer.draw_line(&red, -10.0, 0.0, 10.0, 0.0);
        assert!(layer.pixels.is_empty(), "recorded, not yet drawn");
        assert_eq!(layer.pixel(240, 179), [255, 0, 0, 255]);
        assert_eq!(layer.pixels.len(), PEN_BYTES);
        assert_eq!(layer.heap_words(), charged);
        // A skin of a layer that never drew is a whole transparent stage.
        let mut blank = PenLayer::new();
        let skin = blank.skin();
        let placeholder = blank.placeholder_skin();
        assert!(Arc::ptr_eq(&skin, &placeholder), "the built skin is kept");
        assert_eq!(blank.rgba().len(), PEN_BYTES);
        assert!(blank.rgba().iter().all(|&b| b == 0));
    }

    #[test]
    fn round_unit_equals_clamp_scale_round() {
        for i in -1000..=300_000 {
            let v = i as f64 / 250_000.0;
            assert_eq!(round_unit(v), (v.clamp(0.0, 1.0) * 255.0).round() as u8, "{v}");
        }
        for k in 0..=255 {
            for d in [-1e-12, 0.0, 1e-12] {
                let v = (k as f64 + 0.5 + d) / 255.0;
                assert_eq!(round_unit(v), (v.clamp(0.0, 1.0) * 255.0).round() as u8, "{v}");
            }
        }
        assert_eq!(round_unit(f64::NAN), 0);
    }

    /// Drawing only near the segment gives exactly the pixels of visiting the whole box.
    #[test]
    fn lines_equal_a_full_box_scan() {
        let mut rng = crate::rng::SplitMix64::new(5);
        let mut next = || rng.next_f64();
        for _ in 0..300 {
            // Half of them opaque: their insides take the copy instead of the blend.
            let a = if next() < 0.5 { 1.0 } else { 0.3 + 0.7 * next() };
            let attrs = PenAttributes { color4f: [next(), next(), next(), a], diameter: 0.5 + next() * 30.0 };
            let (x0, y0) = (next() * 560.0 - 280.0, next() * 440.0 - 220.0);
            let (x1, y1) = if next() < 0.2 { (x0, y0) } else { (next() * 560.0 - 280.0, next() * 440.0 - 220.0) };
            // Over earlier ink, so that the copy must replace what the blend would.
            let (mut fast, mut full) = (PenLayer::new(), PenLayer::new());
            full.pixels.iter_mut().enumerate().for_each(|(i, p)| *p = (i % 251) as u8);
            fast.pixels.copy_from_slice(&full.pixels);
            fast.draw_line(&attrs, x0, y0, x1, y1);
            full.draw_line_full_box(&attrs, x0, y0, x1, y1);
            assert!(fast.rgba() == full.pixels, "line ({x0}, {y0}) → ({x1}, {y1}) width {}", attrs.diameter);
        }
    }

    /// Filling an opaque line's core without computing coverage gives the pixels of computing
    /// it everywhere: thin and very wide lines, dots, lines along an axis, lines reaching
    /// far off the stage (computed pixel by pixel there), over earlier ink.
    #[test]
    fn line_cores_are_the_fully_covered_pixels() {
        let mut rng = crate::rng::SplitMix64::new(17);
        let mut next = || rng.next_f64();
        let mut filled = 0u64;
        for n in 0..400 {
            let diameter = [1.0, 2.0, 3.0, 1.5 + next() * 20.0, next() * 300.0][n % 5];
            let attrs = PenAttributes { color4f: [next(), next(), next(), 1.0], diameter };
            let reach = [300.0, 300.0, 300.0, 2e5][n % 4];
            let (x0, y0) = ((next() * 2.0 - 1.0) * reach, (next() * 2.0 - 1.0) * 240.0);
            let (x1, y1) = match n % 6 {
                0 => (x0, y0),
                1 => (x0, next() * 480.0 - 240.0),
                2 => (next() * 640.0 - 320.0, y0),
                _ => (next() * 640.0 - 320.0, next() * 480.0 - 240.0),
            };
            let Some(l) = Line::new(&attrs, x0, y0, x1, y1) else { continue };
            filled += (l.row0..=l.row1).filter_map(|r| l.core(r)).map(|(a, b)| (b - a + 1).max(0) as u64).sum::<u64>();
            let (mut fast, mut slow) = (PenLayer::new(), PenLayer::new());
            slow.pixels.iter_mut().enumerate().for_each(|(i, p)| *p = (i % 253) as u8);
            fast.pixels.copy_from_slice(&slow.pixels);
            fast.raster_line_with(&l, true);
            slow.raster_line_with(&l, false);
            assert!(fast.pixels == slow.pixels, "{n}: ({x0}, {y0}) → ({x1}, {y1}) width {diameter}");
            // Filled pixels are charged less than computed ones.
            assert!(fast.work <= slow.work, "{n}: more work filling than computing");
        }
        assert!(filled > 1_000_000, "core pixels filled: {filled}");
    }

    /// Clearing only what was drawn since the last clear leaves every pixel transparent,
    /// also with lines reaching past the stage's edges.
    #[test]
    fn clearing_the_drawn_box_clears_everything() {
        let mut rng = crate::rng::SplitMix64::new(11);
        let mut next = || rng.next_f64();
        let mut layer = PenLayer::new();
        let mut drawn = 0;
        for round in 0..40 {
            for _ in 0..1 + round % 4 {
                let attrs = PenAttributes { color4f: [next(), next(), next(), 1.0], diameter: 0.5 + next() * 40.0 };
                let xy = |a: f64, b: f64| (a * 700.0 - 350.0, b * 560.0 - 280.0);
                let ((x0, y0), (x1, y1)) = (xy(next(), next()), xy(next(), next()));
                layer.draw_line(&attrs, x0, y0, x1, y1);
            }
            drawn += usize::from(layer.rgba().iter().any(|&p| p != 0));
            layer.clear();
            assert!(layer.pixels.iter().all(|&p| p == 0), "round {round}: pixels left after a clear");
        }
        assert!(drawn > 30, "rounds that drew on the stage: {drawn}");
    }

    #[test]
    fn horizontal_line_covers_its_pixels() {
        let mut layer = PenLayer::new();
        let red = PenAttributes { color4f: [1.0, 0.0, 0.0, 1.0], diameter: 1.0 };
        layer.draw_line(&red, -10.0, 0.0, 10.0, 0.0);
        // Width 1 is shifted by +0.5: the line lies on stage y = 0.5, the centre of row 179.
        assert_eq!(layer.pixel(240, 179), [255, 0, 0, 255]);
        assert_eq!(layer.pixel(240, 178), [0, 0, 0, 0]);
        assert_eq!(layer.pixel(240, 180), [0, 0, 0, 0]);
        // The end point (10.5 after the shift) is the centre of column 250; round caps end there + 0.5.
        assert_eq!(layer.pixel(250, 179)[3], 255);
        assert_eq!(layer.pixel(252, 179)[3], 0);
    }

    #[test]
    fn wide_dot_is_round() {
        let mut layer = PenLayer::new();
        let black = PenAttributes { color4f: [0.0, 0.0, 0.0, 1.0], diameter: 10.0 };
        layer.draw_point(&black, 0.0, 0.0);
        assert_eq!(layer.pixel(240, 180)[3], 255);
        assert_eq!(layer.pixel(243, 180)[3], 255);
        // The corner of the 10×10 box lies outside the circle.
        assert_eq!(layer.pixel(244, 184)[3], 0);
    }
}
