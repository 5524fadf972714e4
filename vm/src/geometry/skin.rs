//! Costume skins: every costume of a project decoded (lazily, once) into what
//! scratch-render keeps per skin — nominal size, rotation centre, silhouette(s)
//! and the convex hull used by `getBounds`.
//!
//! Bitmaps follow scratch-vm's `load-costume.js`: stored at resolution 2 (the
//! skin's nominal size is half the texture), resolution-1 bitmaps are first
//! doubled with nearest-neighbour scaling. SVGs are rasterised per MIP level
//! (`SVGSkin.getTexture`: scale `2^ceil(log2(size))`, capped by the texture
//! limit) on first use. A costume whose asset is missing or undecodable gets an
//! *approximate* skin: an opaque box sized from its rotation centre (see
//! [`Skin::approximate`]), and the project's geometry is flagged approximate.

use std::sync::{Arc, Mutex, OnceLock, Weak};

use super::drawable::Xform;
use super::hull;
use super::key_cells::KeyCells;
use super::render::Sampling;
use super::silhouette::{Palette, Silhouette, TexelBox, TexelBoxes};
use super::svg::{SvgImage, svg_rotation_center};
use crate::project::{Costume, Project};
use crate::util::jsmath::log2;
use crate::util::math::f32r;

/// Largest bitmap side decoded (Scratch itself stores at most 960×720 at resolution 2).
pub const MAX_BITMAP_SIDE: u32 = 4096;
/// Largest bitmap asset accepted, in bytes.
pub const MAX_BITMAP_BYTES: usize = 32 << 20;
/// Nominal size of an approximate costume when the rotation centre gives no hint.
pub const APPROX_DEFAULT_SIZE: f64 = 48.0;
/// Number of SVG MIP levels (`INDEX_OFFSET` 8 = scale 1; level 20 = scale 4096).
const MIP_LEVELS: usize = 21;
const INDEX_OFFSET: i32 = 8;

/// One rendition of a skin: its pixels and (lazily) the hull of its opaque pixels.
#[derive(Debug, Default)]
pub struct Mip {
    /// The pixels.
    pub silhouette: Silhouette,
    hull: OnceLock<Vec<[f64; 2]>>,
    palette: OnceLock<Palette>,
    texel_boxes: OnceLock<Option<TexelBoxes>>,
    planes: OnceLock<Planes>,
    backdrop: OnceLock<Backdrop>,
    key_cells: Mutex<KeyCellsCache>,
    /// Boxes outside which every texel is transparent and colourless, when known (the pen
    /// layer knows where it drew; see [`Mip::ink_boxes`]).
    ink: Option<Vec<TexelBox>>,
}

/// [`Mip::key_cells`]' memory: the cells built per transform and key, and how many requests in
/// a row came with the same transform.
#[derive(Debug, Default)]
struct KeyCellsCache {
    last: Option<[u64; 12]>,
    streak: u32,
    built: Vec<([u64; 12], usize, Option<Arc<KeyCells>>)>,
    /// [`TexelBoxes::for_key`] of the keys asked for last (a union over the blending keys).
    boxes: Vec<(usize, Option<TexelBox>)>,
}

/// Requests with one transform before its cells are built: a backdrop's transform stays, a
/// moving sprite's changes before a build (a pass over its texels) could pay off.
const KEY_CELLS_STREAK: u32 = 4;
/// Transform-and-key pairs whose cells a rendition keeps.
const KEY_CELLS_KEPT: usize = 8;

/// A rendition's colours at every stage pixel (`sampleColor4b` before colour effects) when it
/// is drawn with one fixed transform: a backdrop never moves, so colour sensing reads its
/// pixels from here instead of transforming every sample point.
#[derive(Debug)]
pub struct Backdrop {
    /// The transform's bits (model and inverse matrices) the colours were sampled with.
    key: [u64; 12],
    /// Row-major from stage row −180, columns −240..=240.
    pub colors: Vec<[u8; 4]>,
}

impl Mip {
    fn new(silhouette: Silhouette) -> Self {
        Self {
            silhouette,
            hull: OnceLock::new(),
            palette: OnceLock::new(),
            texel_boxes: OnceLock::new(),
            planes: OnceLock::new(),
            backdrop: OnceLock::new(),
            key_cells: Mutex::default(),
            ink: None,
        }
    }

    /// Boxes of texels outside which every texel adds nothing to a composite (transparent and
    /// colourless); `None` when not known. The pen layer's renditions know them from where it
    /// drew since its last clear: a colour query then looks at its pixels only there, where a
    /// pass over its texels for [`Mip::texel_boxes`] at every change would cost more than it saves.
    pub fn ink_boxes(&self) -> Option<&[TexelBox]> {
        self.ink.as_deref()
    }

    /// [`TexelBoxes::for_key`] of this rendition's [`Mip::texel_boxes`], remembered for the
    /// last few keys (colour searches ask for the same ones at every step); `None` when the
    /// texel boxes are not kept (the pen layer).
    pub fn texel_box_for_key(&self, key: usize) -> Option<Option<TexelBox>> {
        let texels = self.texel_boxes()?;
        let mut c = self.key_cells.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&(_, b)) = c.boxes.iter().find(|e| e.0 == key) {
            return Some(b);
        }
        let b = texels.for_key(key);
        if c.boxes.len() >= KEY_CELLS_KEPT {
            c.boxes.remove(0);
        }
        c.boxes.push((key, b));
        Some(b)
    }

    /// Where this rendition drawn with transform `xf` can show colour key `key`, to the cell
    /// (see [`KeyCells`]); `None` when not known: for the pen layer (new pixels at every
    /// change), for a transform not yet asked for [`KEY_CELLS_STREAK`] times in a row, and when
    /// the colour is too common for cells to help. Kept per transform and key.
    pub fn key_cells(&self, xf: &Xform, key: usize) -> Option<Arc<KeyCells>> {
        if self.silhouette.premultiplied() {
            return None;
        }
        let t = backdrop_key(xf);
        // The cache holds no invariant a panic elsewhere could break: a poisoned lock is used.
        let mut c = self.key_cells.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = c.built.iter().find(|e| e.0 == t && e.1 == key) {
            return e.2.clone();
        }
        c.streak = if c.last == Some(t) { c.streak.saturating_add(1) } else { 1 };
        c.last = Some(t);
        if c.streak < KEY_CELLS_STREAK {
            return None;
        }
        let cells = KeyCells::build(xf, &self.silhouette, key).map(Arc::new);
        if c.built.len() >= KEY_CELLS_KEPT {
            c.built.remove(0);
        }
        c.built.push((t, key, cells.clone()));
        cells
    }

    /// This rendition's colours at every stage pixel when drawn with transform `xf`, built by
    /// `build` on first use; `None` when it was first built for another transform (a costume
    /// drawn elsewhere: the caller samples it directly).
    pub fn backdrop(&self, xf: &Xform, build: impl FnOnce() -> Vec<[u8; 4]>) -> Option<&[[u8; 4]]> {
        let key = backdrop_key(xf);
        let b = self.backdrop.get_or_init(|| Backdrop { key, colors: build() });
        (b.key == key).then_some(b.colors.as_slice())
    }

    /// The texels' opacity as bit planes (see [`Planes`]), computed once.
    pub fn planes(&self) -> &Planes {
        self.planes.get_or_init(|| Planes::new(&self.silhouette))
    }

    /// Convex hull points (skin pixel grid) of this rendition, computed once.
    pub fn hull(&self, size: [f64; 2]) -> &[[f64; 2]] {
        self.hull.get_or_init(|| hull::hull_points(&self.silhouette, size, None))
    }

    /// The colours this rendition can show (see [`Palette`]), computed once. Unknown for the
    /// pen layer (it gets a new rendition at every change, and its lines are anti-aliased).
    pub fn palette(&self) -> &Palette {
        self.palette.get_or_init(|| {
            if self.silhouette.premultiplied() { Palette::unknown() } else { self.silhouette.palette() }
        })
    }
}

impl Mip {
    /// Where this rendition's texels can make a composite show a colour (see [`TexelBoxes`]),
    /// computed once (a pass over the pixels for all colours). `None` for the pen layer: it gets
    /// a new rendition at every change, too often to pay a pass over it each time.
    pub fn texel_boxes(&self) -> Option<&TexelBoxes> {
        self.texel_boxes
            .get_or_init(|| (!self.silhouette.premultiplied()).then(|| self.silhouette.texel_boxes()))
            .as_ref()
    }
}

/// A silhouette's opacity packed one bit per texel, in the two forms scratch-render's
/// `isTouchingNearest` and `isTouchingLinear` read: per-pixel collision loops then cost a
/// shift and a mask instead of bounds checks and a byte load per texel, and rows of them
/// can be tested word by word.
#[derive(Debug, Clone, Default)]
pub struct Planes {
    w: i64,
    h: i64,
    /// Bit (x, y): texel (x, y) has alpha > 0. `w.div_ceil(64)` words per row.
    opaque: Vec<u64>,
    /// Bit (x + 1, y + 1): some texel of the 2 × 2 footprint at (x, y) has alpha > 0, for
    /// x in −1..w and y in −1..h. `(w + 1).div_ceil(64)` words per row.
    linear: Vec<u64>,
    /// Every texel is fully opaque (then touching is a question of index ranges alone).
    full: bool,
}

impl Planes {
    /// Built a word at a time (a pass over the alpha bytes, then shifts and ORs): texel by
    /// texel, large asset-less costumes (opaque blocks up to 2048 × 2048) cost most of a run.
    fn new(s: &Silhouette) -> Self {
        if !s.has_data() {
            return Planes::default();
        }
        let (w, h) = (s.width() as usize, s.height() as usize);
        let (ow, lw) = (w.div_ceil(64), (w + 1).div_ceil(64));
        let mut opaque = vec![0u64; ow * h];
        let mut full = true;
        for (row, out) in s.rgba().chunks_exact(4 * w).zip(opaque.chunks_exact_mut(ow)) {
            for (pixels, word) in row.chunks(4 * 64).zip(out.iter_mut()) {
                for (b, px) in pixels.chunks_exact(4).enumerate() {
                    full &= px[3] == 255;
                    *word |= u64::from(px[3] != 0) << b;
                }
            }
        }
        // Footprint (fx, fy) holds texels fx − 1 … fx of rows fy − 1 … fy (stored one up).
        let row = |y: usize, i: usize| if y < h && i < ow { opaque[y * ow + i] } else { 0 };
        let both = |fy: usize, i: usize| row(fy, i) | fy.checked_sub(1).map_or(0, |p| row(p, i));
        let mut linear = vec![0u64; lw * (h + 1)];
        for (fy, out) in linear.chunks_exact_mut(lw).enumerate() {
            for (i, word) in out.iter_mut().enumerate() {
                let r = both(fy, i);
                let carry = i.checked_sub(1).map_or(0, |p| both(fy, p) >> 63);
                *word = r | r << 1 | carry;
            }
        }
        Planes { w: w as i64, h: h as i64, opaque, linear, full }
    }

    /// [`Planes::new`] texel by texel (the definition; tests compare the two).
    #[cfg(test)]
    fn by_texel(s: &Silhouette) -> Self {
        if !s.has_data() {
            return Planes::default();
        }
        let (w, h) = (s.width() as i64, s.height() as i64);
        let (ow, lw) = ((w as usize).div_ceil(64), (w as usize + 1).div_ceil(64));
        let mut opaque = vec![0u64; ow * h as usize];
        let mut linear = vec![0u64; lw * (h as usize + 1)];
        let mut full = true;
        for (y, row) in s.rgba().chunks_exact(4 * w as usize).enumerate() {
            for (x, px) in row.chunks_exact(4).enumerate() {
                full &= px[3] == 255;
                if px[3] == 0 {
                    continue;
                }
                opaque[y * ow + x / 64] |= 1 << (x % 64);
                for (fx, fy) in [(x, y), (x + 1, y), (x, y + 1), (x + 1, y + 1)] {
                    linear[fy * lw + fx / 64] |= 1 << (fx % 64);
                }
            }
        }
        Planes { w, h, opaque, linear, full }
    }

    /// Texture width in texels (0 without pixel data).
    pub fn width(&self) -> i64 {
        self.w
    }

    /// Texture height in texels (0 without pixel data).
    pub fn height(&self) -> i64 {
        self.h
    }

    /// Whether every texel is fully opaque (false without pixel data).
    pub fn full(&self) -> bool {
        self.full && self.w > 0
    }

    /// `getPoint(x, y) > 0`: texel (x, y) is opaque (false outside the texture).
    #[inline]
    pub fn opaque(&self, x: i64, y: i64) -> bool {
        if x < 0 || y < 0 || x >= self.w || y >= self.h {
            return false;
        }
        let ow = (self.w as usize).div_ceil(64);
        self.opaque[y as usize * ow + x as usize / 64] >> (x % 64) & 1 != 0
    }

    /// The bits [`Planes::opaque`] (or, with `linear`, [`Planes::linear`]) reads in texel row
    /// `y`: texel x's answer is bit `x + shift` of the words when `0 <= x + shift < count`, and
    /// false otherwise. `None` when the row is outside the texture (every answer false).
    pub(crate) fn row_bits(&self, y: i64, linear: bool) -> Option<TexelRow<'_>> {
        let (words, per_row, shift, rows) = if linear {
            (&self.linear, (self.w as usize + 1).div_ceil(64), 1, self.h + 1)
        } else {
            (&self.opaque, (self.w as usize).div_ceil(64), 0, self.h)
        };
        let r = usize::try_from(y.checked_add(shift)?).ok().filter(|&r| (r as i64) < rows)?;
        let words = words.get(r * per_row..(r + 1) * per_row)?;
        Some(TexelRow { words, shift, count: (self.w + shift).max(0) as u64 })
    }

    /// `isTouchingLinear` at floored texel coordinates: some texel of the footprint at (x, y) is opaque.
    #[inline]
    pub fn linear(&self, x: i64, y: i64) -> bool {
        if x < -1 || y < -1 || x >= self.w || y >= self.h {
            return false;
        }
        let lw = (self.w as usize + 1).div_ceil(64);
        let (x, y) = ((x + 1) as usize, (y + 1) as usize);
        self.linear[y * lw + x / 64] >> (x % 64) & 1 != 0
    }
}

/// One texel row of a [`Planes`] bit plane (see [`Planes::row_bits`]).
pub(crate) struct TexelRow<'a> {
    words: &'a [u64],
    shift: i64,
    count: u64,
}

impl TexelRow<'_> {
    /// The answer for texel column `x` of this row.
    #[inline(always)]
    pub(crate) fn get(&self, x: i64) -> bool {
        let k = x.wrapping_add(self.shift) as u64;
        k < self.count && self.words.get((k / 64) as usize).is_some_and(|w| w >> (k % 64) & 1 != 0)
    }

    /// The answers for texel columns `x..x + 64`, column `x + i` in bit `i` ([`TexelRow::get`]
    /// of each).
    #[inline]
    pub(crate) fn word_at(&self, x: i64) -> u64 {
        let k = x.saturating_add(self.shift);
        let count = self.count as i64;
        if k >= count || k <= -64 {
            return 0;
        }
        // Bits 0..64 from k on, read from words k/64 and the next; below 0 nothing.
        let from = k.max(0);
        let (w, o) = ((from / 64) as usize, (from % 64) as u32);
        let word = |i: usize| self.words.get(i).copied().unwrap_or(0);
        let mut v = if o == 0 { word(w) } else { word(w) >> o | word(w + 1) << (64 - o) };
        // Columns at or past `count` answer false.
        let valid = count - from;
        if valid < 64 {
            v &= (1u64 << valid) - 1;
        }
        // Columns before 0 answer false: shift the bits read from 0 up to their place.
        if k < 0 { v << (-k) } else { v }
    }
}

enum Kind {
    Bitmap(Arc<Mip>),
    Svg {
        /// The parsed SVG. Its font database holds font data behind a trait object the
        /// compiler cannot prove unwind-safe; it is immutable, so a panic cannot leave it
        /// half-changed.
        image: std::panic::AssertUnwindSafe<Box<SvgImage>>,
        max_texture_scale: f64,
        mips: Vec<OnceLock<Arc<Mip>>>,
    },
    /// `setEmptyImageData`: a transparent pixel, rotation centre (0, 0).
    Empty(Arc<Mip>),
    /// The pen layer (premultiplied pixels).
    Pen(Arc<Mip>),
}

/// A decoded costume.
pub struct Skin {
    size: [f64; 2],
    rotation_center: [f64; 2],
    kind: Kind,
    approximate: Option<String>,
}

impl std::fmt::Debug for Skin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skin")
            .field("size", &self.size)
            .field("rotation_center", &self.rotation_center)
            .field("svg", &self.is_svg())
            .field("approximate", &self.approximate)
            .finish()
    }
}

impl Skin {
    /// Decodes a costume from the project's assets; never fails (broken assets give an
    /// approximate skin whose [`Skin::approximate`] says why).
    pub fn decode(costume: &Costume, asset: Option<&[u8]>) -> Skin {
        // load-costume.js passes a rotation centre only when the project gives one.
        let center = match (costume.rotation_center_x, costume.rotation_center_y) {
            (x, y) if costume.has_rotation_center && x.is_finite() && y.is_finite() => Some([x, y]),
            _ => None,
        };
        let Some(bytes) = asset else {
            return Skin::approx(costume, format!("asset {} missing", costume.md5ext));
        };
        let format = costume.data_format.to_ascii_lowercase();
        let result = if format == "svg" {
            Skin::from_svg(bytes, center)
        } else {
            Skin::from_bitmap(bytes, costume.bitmap_resolution, center)
        };
        match result {
            Ok(skin) => skin,
            Err(e) => Skin::approx(costume, format!("costume {:?}: {e}", costume.name)),
        }
    }

    /// An SVG skin (`createSVGSkin(svg, rotationCenter)`).
    pub fn from_svg(bytes: &[u8], center: Option<[f64; 2]>) -> Result<Skin, String> {
        let image = SvgImage::load(bytes)?;
        let size = image.view_size;
        let note: Option<String> = None;
        if size[0] == 0.0 || size[1] == 0.0 {
            return Ok(Skin { size, rotation_center: [0.0, 0.0], kind: Kind::Empty(empty_mip()), approximate: note });
        }
        let rotation_center = svg_rotation_center(&image, center);
        // SVGSkin: the largest power-of-two scale that keeps the texture within 2048 px.
        let max_dim = size[0].max(size[1]).ceil();
        let mut max_texture_scale = 1.0;
        let mut test = 2.0;
        while max_dim * test <= 2048.0 {
            max_texture_scale = test;
            test *= 2.0;
        }
        let mips = (0..MIP_LEVELS).map(|_| OnceLock::new()).collect();
        Ok(Skin {
            size,
            rotation_center,
            kind: Kind::Svg { image: std::panic::AssertUnwindSafe(Box::new(image)), max_texture_scale, mips },
            approximate: note,
        })
    }

    /// A bitmap skin, as scratch-vm loads bitmap costumes (see [`decode_bitmap`] for the formats).
    pub fn from_bitmap(bytes: &[u8], resolution: f64, center: Option<[f64; 2]>) -> Result<Skin, String> {
        if bytes.len() > MAX_BITMAP_BYTES {
            return Err(format!("bitmap is {} bytes, over the limit of {MAX_BITMAP_BYTES}", bytes.len()));
        }
        let (w, h, rgba) = decode_bitmap(bytes)?;
        // load-costume.js: resolution-1 bitmaps are doubled (BitmapAdapter.resize, nearest neighbour)
        // and their rotation centre with them; every skin is then created at resolution 2.
        let doubled = resolution == 1.0;
        let (w, h, rgba) = if doubled { double_nearest(w, h, &rgba) } else { (w, h, rgba) };
        let factor = if doubled { 2.0 } else { 1.0 };
        Ok(Skin::from_rgba_res2(w, h, rgba, center.map(|c| [c[0] * factor / 2.0, c[1] * factor / 2.0])))
    }

    /// A bitmap skin from straight-alpha RGBA at resolution 2 (`createBitmapSkin(canvas, 2, center)`).
    pub fn from_rgba_res2(w: u32, h: u32, rgba: Vec<u8>, center: Option<[f64; 2]>) -> Skin {
        if w == 0 || h == 0 {
            return Skin {
                size: [0.0, 0.0],
                rotation_center: [0.0, 0.0],
                kind: Kind::Empty(empty_mip()),
                approximate: None,
            };
        }
        let size = [w as f64 / 2.0, h as f64 / 2.0];
        let c = center.unwrap_or([size[0] / 2.0, size[1] / 2.0]);
        Skin {
            size,
            rotation_center: [f32r(c[0]), f32r(c[1])],
            kind: Kind::Bitmap(Arc::new(Mip::new(Silhouette::from_rgba(w, h, rgba)))),
            approximate: None,
        }
    }

    /// The fallback for a costume without usable pixels: an opaque box centred on the
    /// rotation centre. Its size is twice the rotation centre (Scratch centres most
    /// costumes), in stage units (bitmap centres are halved for resolution 2), or
    /// [`APPROX_DEFAULT_SIZE`] when the centre is not positive.
    pub fn approx(costume: &Costume, why: String) -> Skin {
        let res =
            if costume.data_format.eq_ignore_ascii_case("svg") || costume.bitmap_resolution == 1.0 { 1.0 } else { 2.0 };
        let side = |c: f64| {
            let v = 2.0 * c / res;
            if v.is_finite() && v >= 1.0 { v.min(1024.0) } else { APPROX_DEFAULT_SIZE }
        };
        let size = [side(costume.rotation_center_x).round(), side(costume.rotation_center_y).round()];
        Skin {
            size,
            rotation_center: [size[0] / 2.0, size[1] / 2.0],
            kind: Kind::Bitmap(Arc::new(Mip::new(Silhouette::opaque_block(size[0] as u32 * 2, size[1] as u32 * 2)))),
            approximate: Some(why),
        }
    }

    /// The pen layer's skin: premultiplied RGBA, centred on the stage; every texel outside the
    /// boxes `ink` is transparent.
    pub fn pen(w: u32, h: u32, premultiplied: Vec<u8>, ink: Vec<TexelBox>) -> Skin {
        let size = [w as f64, h as f64];
        let mip = Mip { ink: Some(ink), ..Mip::new(Silhouette::from_premultiplied(w, h, premultiplied)) };
        Skin {
            size,
            rotation_center: [f32r(size[0] / 2.0), f32r(size[1] / 2.0)],
            kind: Kind::Pen(Arc::new(mip)),
            approximate: None,
        }
    }

    /// The pixels of a pen skin that no one else holds (`None` for another skin, or one still
    /// shared): the pen layer reuses the buffer for its next skin.
    pub fn into_pen_pixels(self) -> Option<Vec<u8>> {
        match self.kind {
            Kind::Pen(m) => Arc::try_unwrap(m).ok().map(|m| m.silhouette.into_rgba()),
            _ => None,
        }
    }

    /// How collisions sample this skin.
    pub fn sampling(&self) -> Sampling {
        match self.kind {
            Kind::Svg { .. } => Sampling::Svg,
            Kind::Pen(_) => Sampling::Pen,
            Kind::Bitmap(_) | Kind::Empty(_) => Sampling::Nearest,
        }
    }

    /// The skin's nominal size in stage units (`skin.size`).
    pub fn size(&self) -> [f64; 2] {
        self.size
    }

    /// The rotation centre in skin units (single precision, as the renderer stores it).
    pub fn rotation_center(&self) -> [f64; 2] {
        self.rotation_center
    }

    /// Whether this is an SVG skin (nearest-neighbour sampling only near 100 % and right angles).
    pub fn is_svg(&self) -> bool {
        matches!(self.kind, Kind::Svg { .. })
    }

    /// Why this costume's geometry is approximate, if it is.
    pub fn approximate(&self) -> Option<&str> {
        self.approximate.as_deref()
    }

    /// Whether the skin's shape is a stand-in (missing or broken asset), not the costume's pixels.
    pub fn is_stand_in(&self) -> bool {
        self.approximate.as_deref().is_some_and(|w| !w.starts_with("SVG text"))
    }

    /// The MIP level `getTexture(scale)` selects for a drawable scale (percent); 0 for bitmaps.
    pub fn mip_level(&self, scale: [f64; 2]) -> i32 {
        match &self.kind {
            Kind::Svg { max_texture_scale, .. } => {
                let scale_max = scale[0].abs().max(scale[1].abs());
                let requested = (scale_max / 100.0).min(*max_texture_scale);
                (log2(requested).ceil() as i32 + INDEX_OFFSET).max(0)
            }
            _ => 0,
        }
    }

    /// The rendition at a MIP level (rasterised on first use; bitmaps have one).
    pub fn mip(&self, level: i32) -> Arc<Mip> {
        self.mip_arc(level).clone()
    }

    /// [`Skin::mip`] borrowed from the skin: per-query code keeps no reference counts.
    pub fn mip_ref(&self, level: i32) -> &Mip {
        self.mip_arc(level)
    }

    fn mip_arc(&self, level: i32) -> &Arc<Mip> {
        match &self.kind {
            Kind::Bitmap(m) | Kind::Empty(m) | Kind::Pen(m) => m,
            Kind::Svg { image, mips, .. } => {
                let idx = (level.max(0) as usize).min(MIP_LEVELS - 1);
                mips[idx].get_or_init(|| {
                    let scale = 2f64.powi(idx as i32 - INDEX_OFFSET);
                    // A zero-sized canvas leaves the silhouette uninitialised: it never touches.
                    Arc::new(Mip::new(image.rasterize(scale).unwrap_or_default()))
                })
            }
        }
    }
}

fn backdrop_key(xf: &Xform) -> [u64; 12] {
    let mut k = [0u64; 12];
    for (o, v) in k.iter_mut().zip(xf.m.iter().chain(&xf.inv)) {
        *o = v.to_bits();
    }
    k
}

fn empty_mip() -> Arc<Mip> {
    Arc::new(Mip::new(Silhouette::empty_pixel()))
}

/// Decodes a bitmap costume to straight-alpha RGBA8 within [`MAX_BITMAP_SIDE`].
///
/// The format comes from the bytes, not the declared `dataFormat`: the browser decodes whatever
/// an `<img>` can show, and editors save WebP (or GIF, BMP) files under a `.png` name. PNG, JPEG,
/// WebP, GIF (first frame) and BMP are read; lossy WebP goes through the `image-webp` decoder, whose
/// colours may differ from libwebp's by a unit or so; alpha, which decides silhouettes, decodes the same.
fn decode_bitmap(bytes: &[u8]) -> Result<(u32, u32, Vec<u8>), String> {
    let mut reader = image::ImageReader::new(std::io::Cursor::new(bytes));
    reader = reader.with_guessed_format().map_err(|e| format!("unreadable bitmap: {e}"))?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_BITMAP_SIDE);
    limits.max_image_height = Some(MAX_BITMAP_SIDE);
    limits.max_alloc = Some(256 << 20);
    reader.limits(limits);
    let img = reader.decode().map_err(|e| format!("undecodable bitmap: {e}"))?;
    let rgba = img.to_rgba8();
    let (w, h) = rgba.dimensions();
    let mut data = rgba.into_raw();
    // The browser stores canvases premultiplied; reading them back loses precision at low alpha.
    for px in data.chunks_exact_mut(4) {
        let a = px[3] as u32;
        if a == 0 {
            px[0] = 0;
            px[1] = 0;
            px[2] = 0;
        } else if a < 255 {
            for c in &mut px[..3] {
                let p = (*c as u32 * a + 127) / 255;
                *c = ((p * 255 + a / 2) / a).min(255) as u8;
            }
        }
    }
    Ok((w, h, data))
}

fn double_nearest(w: u32, h: u32, rgba: &[u8]) -> (u32, u32, Vec<u8>) {
    let (w2, h2) = (w * 2, h * 2);
    let mut out = vec![0u8; (w2 * h2 * 4) as usize];
    for y in 0..h2 {
        for x in 0..w2 {
            let s = (((y / 2) * w + x / 2) * 4) as usize;
            let d = ((y * w2 + x) * 4) as usize;
            out[d..d + 4].copy_from_slice(&rgba[s..s + 4]);
        }
    }
    (w2, h2, out)
}

/// Every costume of a project, decoded on first use and shared by all VMs (and clones) that run it.
///
/// It refers to its project weakly, so the project may keep its costume set in a cache slot
/// without a reference cycle; costumes decoded before the project went away stay usable.
pub struct CostumeSet {
    project: Weak<Project>,
    skins: Vec<Vec<OnceLock<Arc<Skin>>>>,
    /// Some costume's asset is not in the project (a bare `project.json`, a lost file).
    missing: bool,
}

impl std::fmt::Debug for CostumeSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CostumeSet").field("targets", &self.skins.len()).finish()
    }
}

impl CostumeSet {
    /// A costume set for `project` (nothing is decoded yet).
    pub fn new(project: Arc<Project>) -> Arc<CostumeSet> {
        let skins = project.targets.iter().map(|t| t.costumes.iter().map(|_| OnceLock::new()).collect()).collect();
        let missing = project.targets.iter().flat_map(|t| &t.costumes).any(|c| !project.assets.contains_key(&c.md5ext));
        Arc::new(CostumeSet { project: Arc::downgrade(&project), skins, missing })
    }

    /// Whether some costume's asset is missing from the project (known without decoding
    /// anything): its geometry is approximate whatever a run shows.
    pub fn assets_missing(&self) -> bool {
        self.missing
    }

    /// The project these costumes belong to, while it exists.
    pub fn project(&self) -> Option<Arc<Project>> {
        self.project.upgrade()
    }

    /// The skin of costume `costume` of target definition `def` (decoded on first use).
    pub fn skin(&self, def: usize, costume: usize) -> Option<Arc<Skin>> {
        self.skin_ref(def, costume).cloned()
    }

    /// [`CostumeSet::skin`] borrowed from the set (no reference count per call: frames look
    /// up every changed target's skin).
    pub fn skin_ref(&self, def: usize, costume: usize) -> Option<&Arc<Skin>> {
        let cell = self.skins.get(def)?.get(costume)?;
        if let Some(s) = cell.get() {
            return Some(s);
        }
        let project = self.project.upgrade()?;
        let c = project.targets.get(def)?.costumes.get(costume)?;
        Some(cell.get_or_init(|| Arc::new(Skin::decode(c, project.assets.get(&c.md5ext).map(|v| v.as_slice())))))
    }

    /// Whether the project's geometry is approximate: no assets at all (bare `project.json`)
    /// or some costume could not be decoded. Decodes every costume.
    pub fn approximate(&self) -> bool {
        self.approximations().next().is_some()
    }

    /// `(target name, costume name, reason)` for every approximate costume. Decodes every costume.
    pub fn approximations(&self) -> impl Iterator<Item = (String, String, String)> + '_ {
        let project = self.project.upgrade();
        self.skins.iter().enumerate().flat_map(move |(d, cs)| {
            let project = project.clone();
            (0..cs.len()).filter_map(move |c| {
                let skin = self.skin(d, c)?;
                let why = skin.approximate()?.to_string();
                let t = project.as_ref()?.targets.get(d)?;
                Some((t.name.clone(), t.costumes.get(c)?.name.clone(), why))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Word-at-a-time planes equal the texel-by-texel definition: sizes around word
    /// boundaries, random alpha (transparent, opaque, partial), and opaque blocks.
    #[test]
    fn planes_built_by_words_equal_the_texel_definition() {
        let mut rng = crate::rng::SplitMix64::new(9);
        for (w, h) in [(1, 1), (63, 2), (64, 3), (65, 1), (127, 4), (128, 2), (129, 3), (200, 5)] {
            for density in [0u64, 1, 5, 10] {
                let rgba: Vec<u8> = (0..w * h)
                    .flat_map(|_| {
                        let a = match rng.below(10) {
                            r if r < density => 255,
                            r if r == density => rng.below(255) as u8,
                            _ => 0,
                        };
                        [1, 2, 3, a]
                    })
                    .collect();
                let s = Silhouette::from_rgba(w, h, rgba);
                let (fast, slow) = (Planes::new(&s), Planes::by_texel(&s));
                assert_eq!((fast.opaque, fast.linear, fast.full), (slow.opaque, slow.linear, slow.full), "{w}×{h}");
            }
            let block = Silhouette::opaque_block(w, h);
            let (fast, slow) = (Planes::new(&block), Planes::by_texel(&block));
            assert!(fast.full);
            assert_eq!((fast.opaque, fast.linear), (slow.opaque, slow.linear), "block {w}×{h}");
        }
    }

    fn costume(format: &str, res: f64, cx: f64, cy: f64) -> Costume {
        Costume {
            name: "c".into(),
            asset_id: "x".into(),
            has_rotation_center: true,
            md5ext: "x".into(),
            data_format: format.into(),
            rotation_center_x: cx,
            rotation_center_y: cy,
            bitmap_resolution: res,
        }
    }

    /// A bitmap whose column 0 is transparent and the rest opaque, encoded as `format`.
    fn bitmap(w: u32, h: u32, format: image::ImageFormat) -> Vec<u8> {
        let img = image::RgbaImage::from_fn(w, h, |x, _| {
            if x == 0 { image::Rgba([0, 0, 0, 0]) } else { image::Rgba([10, 20, 30, 255]) }
        });
        let mut out = Vec::new();
        img.write_to(&mut std::io::Cursor::new(&mut out), format).expect("encode");
        out
    }

    fn png(w: u32, h: u32) -> Vec<u8> {
        bitmap(w, h, image::ImageFormat::Png)
    }

    /// Editors save WebP and GIF files under a `png` name; the browser decodes them by their bytes,
    /// so their transparent pixels stay transparent (a stand-in box would touch everywhere).
    #[test]
    fn webp_and_gif_bytes_under_a_png_name_decode_with_their_alpha() {
        for format in [image::ImageFormat::WebP, image::ImageFormat::Gif] {
            let skin = Skin::decode(&costume("png", 2.0, 10.0, 6.0), Some(&bitmap(20, 12, format)));
            assert!(skin.approximate().is_none(), "{format:?}: {:?}", skin.approximate());
            let m = skin.mip(8);
            assert_eq!((m.silhouette.width(), m.silhouette.height()), (20, 12), "{format:?}");
            assert_eq!(m.silhouette.alpha(0, 3), 0, "{format:?}");
            assert_eq!(m.silhouette.alpha(1, 3), 255, "{format:?}");
        }
    }

    #[test]
    fn resolution_two_bitmaps_are_half_size() {
        let skin = Skin::decode(&costume("png", 2.0, 10.0, 6.0), Some(&png(20, 12)));
        assert_eq!(skin.size(), [10.0, 6.0]);
        assert_eq!(skin.rotation_center(), [5.0, 3.0]);
        assert!(skin.approximate().is_none());
        assert_eq!(skin.mip(8).silhouette.width(), 20);
    }

    #[test]
    fn resolution_one_bitmaps_are_doubled_nearest() {
        let skin = Skin::decode(&costume("png", 1.0, 10.0, 6.0), Some(&png(20, 12)));
        assert_eq!(skin.size(), [20.0, 12.0]);
        assert_eq!(skin.rotation_center(), [10.0, 6.0]);
        let m = skin.mip(0);
        assert_eq!((m.silhouette.width(), m.silhouette.height()), (40, 24));
        // Column 0 was transparent: now columns 0 and 1 are.
        assert_eq!(m.silhouette.alpha(1, 3), 0);
        assert_eq!(m.silhouette.alpha(2, 3), 255);
    }

    #[test]
    fn broken_and_missing_assets_are_approximate() {
        let skin = Skin::decode(&costume("png", 2.0, 30.0, 20.0), Some(b"not a png"));
        assert!(skin.approximate().is_some());
        assert_eq!(skin.size(), [30.0, 20.0]);
        let skin = Skin::decode(&costume("svg", 1.0, 0.0, 0.0), None);
        assert_eq!(skin.size(), [APPROX_DEFAULT_SIZE, APPROX_DEFAULT_SIZE]);
        assert!(skin.is_stand_in());
    }

    /// The bit planes answer exactly what the silhouette's own sampling answers.
    #[test]
    fn planes_equal_silhouette_sampling() {
        let (w, h) = (70u32, 5u32);
        let mut rgba = vec![0u8; (w * h * 4) as usize];
        for y in 0..h {
            for x in 0..w {
                let a = match (x * 7 + y * 3) % 5 {
                    0 => 0,
                    1 => 1,
                    2 => 255,
                    _ => 128,
                };
                rgba[((y * w + x) * 4 + 3) as usize] = a;
            }
        }
        let s = Silhouette::from_rgba(w, h, rgba);
        let p = Planes::new(&s);
        assert!(!p.full());
        for y in -3..h as i64 + 3 {
            for x in -3..w as i64 + 3 {
                assert_eq!(p.opaque(x, y), s.alpha(x, y) > 0, "({x}, {y})");
                let lin =
                    s.alpha(x, y) > 0 || s.alpha(x + 1, y) > 0 || s.alpha(x, y + 1) > 0 || s.alpha(x + 1, y + 1) > 0;
                assert_eq!(p.linear(x, y), lin, "({x}, {y})");
            }
        }
        assert!(Planes::new(&Silhouette::opaque_block(3, 2)).full());
        assert!(!Planes::new(&Silhouette::default()).full());
        assert!(!Planes::new(&Silhouette::default()).opaque(0, 0));
    }

    /// Costume text is drawn in Scratch's fonts (each a different shape), and is not an
    /// approximation.
    #[test]
    fn svg_text_is_drawn_in_scratch_fonts() {
        let text = |family: &str| {
            let svg = format!(
                r##"<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40" viewBox="0 0 120 40"><text x="4" y="30" font-family="{family}" font-size="28" fill="#000">Score</text></svg>"##
            );
            let skin = Skin::from_svg(svg.as_bytes(), None).expect("svg");
            assert!(skin.approximate().is_none(), "{family}");
            let m = skin.mip(8);
            let opaque = m.silhouette.rgba().chunks_exact(4).filter(|p| p[3] > 0).count();
            assert!(opaque > 100, "{family}: {opaque} opaque pixels");
            blake3::hash(m.silhouette.rgba())
        };
        let all: Vec<blake3::Hash> = ["Sans Serif", "Serif", "Handwriting", "Marker", "Curly", "Pixel", "Scratch"]
            .iter()
            .map(|f| text(f))
            .collect();
        for (i, a) in all.iter().enumerate() {
            assert!(!all[i + 1..].contains(a), "two fonts drew the same pixels");
        }
        // An unknown family still draws (in one of the fonts: never a system font).
        text("No Such Font");
    }

    #[test]
    fn svg_mip_levels_follow_get_texture() {
        let svg = br##"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" viewBox="0 0 40 20"><rect width="40" height="20"/></svg>"##;
        let skin = Skin::from_svg(svg, Some([20.0, 10.0])).expect("svg");
        assert_eq!(skin.mip_level([100.0, 100.0]), 8);
        assert_eq!(skin.mip_level([100.1, 100.0]), 9);
        assert_eq!(skin.mip_level([50.0, -50.0]), 7);
        assert_eq!(skin.mip_level([0.0, 0.0]), 0);
        // max texture scale for 40 px: 32 → level 13 at most.
        assert_eq!(skin.mip_level([100000.0, 1.0]), 13);
        assert_eq!(skin.mip(9).silhouette.width(), 80);
    }
}
