//! A skin's pixels as scratch-render's `Silhouette` holds them: RGBA8 rows,
//! top row first, sampled with texture coordinates in [0, 1].

use std::sync::LazyLock;

use crate::util::math::{floor_i64, u8_clamp};

/// Pixels of one costume rendition (one bitmap, one SVG MIP level or the pen layer).
#[derive(Debug, Clone, Default)]
pub struct Silhouette {
    width: u32,
    height: u32,
    /// RGBA8, row-major, top row first. Empty when the skin has no pixels
    /// (scratch-render's "uninitialised" silhouette: never touches).
    rgba: Vec<u8>,
    /// Pen layer pixels come from `readPixels` and are already premultiplied.
    premultiplied: bool,
}

impl Silhouette {
    /// A silhouette from straight-alpha RGBA8 pixels (`rgba.len() == 4 * w * h`).
    pub fn from_rgba(width: u32, height: u32, rgba: Vec<u8>) -> Self {
        debug_assert_eq!(rgba.len(), width as usize * height as usize * 4);
        if rgba.len() != width as usize * height as usize * 4 {
            return Self::default();
        }
        Self { width, height, rgba, premultiplied: false }
    }

    /// A silhouette from premultiplied RGBA8 pixels (the pen layer).
    pub fn from_premultiplied(width: u32, height: u32, rgba: Vec<u8>) -> Self {
        let mut s = Self::from_rgba(width, height, rgba);
        s.premultiplied = true;
        s
    }

    /// The pixels back (for a buffer to be reused).
    pub fn into_rgba(self) -> Vec<u8> {
        self.rgba
    }

    /// A 1×1 transparent silhouette (`setEmptyImageData`).
    pub fn empty_pixel() -> Self {
        Self::from_rgba(1, 1, vec![0; 4])
    }

    /// A fully opaque grey block, the shape used for approximate (asset-less) costumes.
    pub fn opaque_block(width: u32, height: u32) -> Self {
        // `repeat` copies in doubling blocks: a pixel-by-pixel push cost asset-less projects
        // with large rotation centres most of a short run (up to 2048 × 2048 per costume).
        let rgba = [128u8, 128, 128, 255].repeat(width as usize * height as usize);
        Self::from_rgba(width, height, rgba)
    }

    /// Whether the pixels are premultiplied (the pen layer).
    pub fn premultiplied(&self) -> bool {
        self.premultiplied
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Whether there is pixel data at all.
    pub fn has_data(&self) -> bool {
        !self.rgba.is_empty()
    }

    /// The raw RGBA8 bytes.
    pub fn rgba(&self) -> &[u8] {
        &self.rgba
    }

    /// Alpha at integer pixel coordinates, 0 outside.
    #[inline]
    pub fn alpha(&self, x: i64, y: i64) -> u8 {
        if x < 0 || y < 0 || x >= self.width as i64 || y >= self.height as i64 {
            return 0;
        }
        self.rgba[((y as usize * self.width as usize) + x as usize) * 4 + 3]
    }

    /// `Silhouette.isTouchingNearest`: is the nearest pixel not transparent?
    #[inline]
    pub fn is_touching_nearest(&self, u: f64, v: f64) -> bool {
        if self.rgba.is_empty() {
            return false;
        }
        let x = floor_i64(u * (self.width as f64 - 1.0));
        let y = floor_i64(v * (self.height as f64 - 1.0));
        self.alpha(x, y) > 0
    }

    /// `Silhouette.isTouchingLinear`: is any of the four pixels a bilinear sample reads not transparent?
    #[inline]
    pub fn is_touching_linear(&self, u: f64, v: f64) -> bool {
        if self.rgba.is_empty() {
            return false;
        }
        let x = floor_i64(u * (self.width as f64 - 1.0));
        let y = floor_i64(v * (self.height as f64 - 1.0));
        let (x1, y1) = (x.saturating_add(1), y.saturating_add(1));
        self.alpha(x, y) > 0 || self.alpha(x1, y) > 0 || self.alpha(x, y1) > 0 || self.alpha(x1, y1) > 0
    }

    /// `Silhouette.colorAtNearest`: premultiplied RGBA of the nearest pixel (edge-clamped).
    #[inline]
    pub fn color_at_nearest(&self, u: f64, v: f64) -> [u8; 4] {
        if self.rgba.is_empty() {
            return [0; 4];
        }
        let (x, y) = self.nearest_texel(u, v);
        self.color_at(x as usize, y as usize)
    }

    /// The texel [`Silhouette::color_at_nearest`] reads at (u, v) (the texture must have data).
    #[inline]
    pub fn nearest_texel(&self, u: f64, v: f64) -> (u32, u32) {
        // GL_CLAMP_TO_EDGE, as the renderer does (a NaN coordinate floors to texel 0).
        let x = floor_i64(u * (self.width as f64 - 1.0)).clamp(0, self.width as i64 - 1);
        let y = floor_i64(v * (self.height as f64 - 1.0)).clamp(0, self.height as i64 - 1);
        (x as u32, y as u32)
    }

    /// Premultiplied RGBA of texel (x, y), which must be inside the texture.
    #[inline]
    pub fn color_at(&self, x: usize, y: usize) -> [u8; 4] {
        self.color_at_index(y * self.width as usize + x)
    }

    /// Premultiplied RGBA of the texel at row-major index `i` (inside the texture).
    #[inline]
    pub fn color_at_index(&self, i: usize) -> [u8; 4] {
        let o = i * 4;
        let p = &self.rgba[o..o + 4];
        if self.premultiplied {
            return [p[0], p[1], p[2], p[3]];
        }
        match p[3] {
            // The common cases, exactly what the general formula gives (×1 and ×0).
            255 => [p[0], p[1], p[2], 255],
            0 => [0; 4],
            alpha => {
                let row = &PREMULTIPLY[usize::from(alpha)];
                [row[usize::from(p[0])], row[usize::from(p[1])], row[usize::from(p[2])], alpha]
            }
        }
    }
}

/// `PREMULTIPLY[a][c]`: channel `c` of a straight-alpha texel with alpha `a`, premultiplied
/// (`c · a / 255`, clamped and rounded as a `Uint8ClampedArray` store). Tabulated (64 KB, built
/// once) because stamps and colour searches premultiply the soft edges of a costume at every
/// pixel they read, and the same few values over and over.
static PREMULTIPLY: LazyLock<Box<[[u8; 256]; 256]>> = LazyLock::new(|| {
    let mut t = Box::new([[0u8; 256]; 256]);
    for (alpha, row) in t.iter_mut().enumerate() {
        let a = alpha as f64 / 255.0;
        for (c, out) in row.iter_mut().enumerate() {
            *out = u8_clamp(c as f64 * a);
        }
    }
    t
});

/// The key of a colour at the precision colour queries compare at (5/5/4 bits of red,
/// green, blue, as scratch-render's `colorMatches` and Whisker's colour search).
#[inline]
pub fn color_key(c: [u8; 3]) -> usize {
    ((c[0] >> 3) as usize) << 9 | ((c[1] >> 3) as usize) << 4 | (c[2] >> 4) as usize
}

/// scratch-render's `colorMatches`: equal at 5/5/4 bits.
#[inline]
pub fn colors_match(a: [u8; 3], b: [u8; 3]) -> bool {
    color_key(a) == color_key(b)
}

/// Which colour keys ([`color_key`]) a silhouette's pixels can show, known only when every
/// pixel is fully opaque or fully transparent: then a composite of such silhouettes over white
/// is, at every point, either white or exactly one pixel of one of them, so a colour in none of
/// the palettes can be ruled out without sampling (the approximate grey boxes of asset-less
/// projects, most bitmaps without anti-aliasing).
#[derive(Debug, Clone)]
pub struct Palette {
    /// One bit per colour key; `None` when some pixel is partly transparent (blends can give any colour).
    keys: Option<Box<[u64; 256]>>,
}

impl Palette {
    /// A palette that knows nothing (every colour may show).
    pub fn unknown() -> Palette {
        Palette { keys: None }
    }

    /// Whether a pixel of this silhouette may show a colour with key `key` (true when unknown).
    #[inline]
    pub fn may_show(&self, key: usize) -> bool {
        self.keys.as_ref().is_none_or(|k| k.get(key / 64).is_some_and(|w| w & (1u64 << (key % 64)) != 0))
    }
}

impl Silhouette {
    /// The palette of this silhouette as [`Silhouette::color_at_nearest`] returns its pixels.
    pub fn palette(&self) -> Palette {
        let mut keys = Box::new([0u64; 256]);
        for p in self.rgba.chunks_exact(4) {
            match p[3] {
                255 => {
                    let k = color_key([p[0], p[1], p[2]]);
                    keys[k / 64] |= 1 << (k % 64);
                }
                // Transparent adds nothing to a composite, unless premultiplied data carries
                // colour in a transparent pixel (it would still be added).
                0 if !self.premultiplied || p[..3] == [0, 0, 0] => {}
                _ => return Palette { keys: None },
            }
        }
        Palette { keys: Some(keys) }
    }
}

/// An inclusive rectangle of texels: columns `x0..=x1`, rows `y0..=y1` (row 0 on top).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TexelBox {
    /// First column.
    pub x0: u32,
    /// First row.
    pub y0: u32,
    /// Last column.
    pub x1: u32,
    /// Last row.
    pub y1: u32,
}

impl TexelBox {
    fn add(&mut self, x: u32, y: u32) {
        self.x0 = self.x0.min(x);
        self.x1 = self.x1.max(x);
        self.y0 = self.y0.min(y);
        self.y1 = self.y1.max(y);
    }

    fn union(a: Option<TexelBox>, b: Option<TexelBox>) -> Option<TexelBox> {
        match (a, b) {
            (Some(mut a), Some(b)) => {
                a.add(b.x0, b.y0);
                a.add(b.x1, b.y1);
                Some(a)
            }
            (a, b) => a.or(b),
        }
    }
}

/// Where a silhouette's texels can make a composite show a colour key: a texel that
/// [`Silhouette::color_at_nearest`] returns fully transparent and colourless adds nothing to a
/// composite, and a fully opaque one replaces everything below it by its own colour. Every
/// other texel (partly transparent, or premultiplied colour without alpha) blends what is below
/// into its premultiplied colour, which only adds to each channel: a composite whose topmost
/// non-transparent texel is that one has every channel at least the texel's (`sampleColor3b`
/// adds non-negative amounts and rounds to nearest). So a blending texel can make a composite
/// show key `k` only if its own premultiplied colour's key is at most `k` in each channel. Per
/// key present in an opaque texel, the box of those texels; per key of a blending texel's
/// premultiplied colour, the box of those.
#[derive(Debug, Clone, Default)]
pub struct TexelBoxes {
    /// Per key of a blending texel's premultiplied colour (ascending keys), the box of those texels.
    blending: Vec<(u16, TexelBox)>,
    /// Per key present in an opaque texel (ascending keys), the box of those texels.
    keys: Vec<(u16, TexelBox)>,
}

/// What one texel adds to a composite (see [`TexelBoxes`]).
enum TexelKey {
    /// Nothing (transparent and colourless).
    Nothing,
    /// Its colour, with this key, hiding everything below.
    Opaque(usize),
    /// Its premultiplied colour, with this key, over what is below.
    Blending(usize),
}

/// The channels of a [`color_key`] (5, 5 and 4 bits).
fn key_channels(key: usize) -> [usize; 3] {
    [key >> 9 & 31, key >> 4 & 31, key & 15]
}

impl TexelBoxes {
    /// The box of the texels that can make a composite show colour key `key` (`None`: none can).
    pub fn for_key(&self, key: usize) -> Option<TexelBox> {
        let own = u16::try_from(key)
            .ok()
            .and_then(|k| self.keys.binary_search_by_key(&k, |e| e.0).ok())
            .map(|i| self.keys[i].1);
        let want = key_channels(key);
        self.blending
            .iter()
            .filter(|(k, _)| key_channels(usize::from(*k)).iter().zip(&want).all(|(have, want)| have <= want))
            .fold(own, |acc, &(_, b)| TexelBox::union(acc, Some(b)))
    }
}

impl Silhouette {
    /// What texel (x, y) (inside the texture) adds to a composite, as [`TexelBoxes`] classes it.
    #[inline]
    fn texel_key(&self, x: u32, y: u32) -> TexelKey {
        let i = y as usize * self.width as usize + x as usize;
        let Some(p) = self.rgba.get(i * 4..i * 4 + 4) else { return TexelKey::Nothing };
        match p[3] {
            255 => TexelKey::Opaque(color_key([p[0], p[1], p[2]])),
            0 if !self.premultiplied || p[..3] == [0, 0, 0] => TexelKey::Nothing,
            _ => {
                let c = self.color_at_index(i);
                TexelKey::Blending(color_key([c[0], c[1], c[2]]))
            }
        }
    }

    /// Whether texel (x, y) can make a composite show colour key `key` (see [`TexelBoxes`]).
    pub fn may_show_key(&self, x: u32, y: u32, key: usize) -> bool {
        match self.texel_key(x, y) {
            TexelKey::Opaque(k) => k == key,
            TexelKey::Blending(k) => key_channels(k).iter().zip(&key_channels(key)).all(|(have, want)| have <= want),
            TexelKey::Nothing => false,
        }
    }

    /// The [`TexelBoxes`] of this silhouette (one pass over its pixels).
    pub fn texel_boxes(&self) -> TexelBoxes {
        // Per key, the box of its opaque texels and of its blending ones (x0 > x1: none yet).
        let empty = TexelBox { x0: u32::MAX, y0: u32::MAX, x1: 0, y1: 0 };
        let mut per_key = vec![empty; 1 << 15];
        let mut blending = vec![empty; 1 << 15];
        for y in 0..self.height {
            for x in 0..self.width {
                match self.texel_key(x, y) {
                    TexelKey::Opaque(k) => per_key[k].add(x, y),
                    TexelKey::Blending(k) => blending[k].add(x, y),
                    TexelKey::Nothing => {}
                }
            }
        }
        let present = |boxes: Vec<TexelBox>| -> Vec<(u16, TexelBox)> {
            boxes.into_iter().enumerate().filter(|(_, b)| b.x0 <= b.x1).map(|(k, b)| (k as u16, b)).collect()
        };
        TexelBoxes { blending: present(blending), keys: present(per_key) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sil(w: u32, h: u32, opaque: &[(u32, u32)]) -> Silhouette {
        let mut rgba = vec![0u8; (w * h * 4) as usize];
        for &(x, y) in opaque {
            let o = ((y * w + x) * 4) as usize;
            rgba[o..o + 4].copy_from_slice(&[255, 0, 0, 255]);
        }
        Silhouette::from_rgba(w, h, rgba)
    }

    /// Straight-alpha texels read premultiplied as `c · a / 255` rounded half to even, for
    /// every channel value and alpha (the table is indexed alpha first).
    #[test]
    fn texels_premultiply_every_channel_and_alpha() {
        for a in 0..=255u8 {
            let rgba: Vec<u8> = (0..=255u8).flat_map(|c| [c, 255 - c, c / 3, a]).collect();
            let s = Silhouette::from_rgba(256, 1, rgba);
            for c in 0..=255u8 {
                let f = |v: u8| if a == 0 { 0 } else { (v as f64 * a as f64 / 255.0).round_ties_even() as u8 };
                assert_eq!(s.color_at(c as usize, 0), [f(c), f(255 - c), f(c / 3), a], "c {c} a {a}");
            }
        }
    }

    #[test]
    fn nearest_and_linear_sampling() {
        let s = sil(4, 4, &[(2, 2)]);
        // u * (w - 1) = 2.0 → pixel 2.
        assert!(s.is_touching_nearest(2.0 / 3.0, 2.0 / 3.0));
        assert!(!s.is_touching_nearest(0.66, 2.0 / 3.0));
        // Linear sampling also reads the right/lower neighbours: pixel 1 reaches pixel 2.
        assert!(!s.is_touching_nearest(1.0 / 3.0, 1.0 / 3.0));
        assert!(s.is_touching_linear(1.0 / 3.0, 1.0 / 3.0));
        assert!(!s.is_touching_linear(0.0, 0.0));
        assert!(!s.is_touching_linear(1.0, 1.0));
        assert!(!Silhouette::default().is_touching_nearest(0.5, 0.5));
    }

    #[test]
    fn colors_are_premultiplied() {
        let s = Silhouette::from_rgba(1, 1, vec![200, 100, 0, 128]);
        let c = s.color_at_nearest(0.0, 0.0);
        assert_eq!(c, [u8_clamp(200.0 * 128.0 / 255.0), u8_clamp(100.0 * 128.0 / 255.0), 0, 128]);
    }

    #[test]
    fn texel_boxes_hold_matching_and_blending_texels() {
        // Red at (1, 1) and (2, 3); a half-transparent texel at (3, 0).
        let mut s = sil(4, 4, &[(1, 1), (2, 3)]);
        s.rgba[3 * 4..3 * 4 + 4].copy_from_slice(&[0, 0, 255, 128]);
        let b = s.texel_boxes();
        let blend = TexelBox { x0: 3, y0: 0, x1: 3, y1: 0 };
        // Premultiplied (0, 0, 128): blended over anything, blue stays at least 128.
        assert_eq!(b.for_key(color_key([255, 0, 0])), Some(TexelBox { x0: 1, y0: 1, x1: 2, y1: 3 }));
        assert_eq!(b.for_key(color_key([0, 255, 0])), None);
        assert_eq!(b.for_key(color_key([0, 0, 128])), Some(blend));
        assert_eq!(b.for_key(color_key([90, 200, 255])), Some(blend));
        assert_eq!(b.for_key(color_key([0, 0, 127])), None);
        let binary = sil(4, 4, &[(1, 1), (2, 3)]).texel_boxes();
        assert_eq!(binary.for_key(color_key([250, 7, 15])), Some(TexelBox { x0: 1, y0: 1, x1: 2, y1: 3 }));
        assert_eq!(binary.for_key(color_key([0, 0, 0])), None);
        // Premultiplied colour in a transparent texel blends (adding at least its own colour).
        let ghost = Silhouette::from_premultiplied(1, 1, vec![9, 9, 9, 0]).texel_boxes();
        assert!(ghost.for_key(color_key([200, 9, 30])).is_some());
        assert_eq!(ghost.for_key(color_key([1, 2, 3])), None);
        assert_eq!(Silhouette::default().texel_boxes().for_key(0), None);
    }

    #[test]
    fn palettes_know_binary_silhouettes_only() {
        let s = sil(4, 4, &[(1, 1), (2, 3)]);
        let p = s.palette();
        assert!(p.may_show(color_key([255, 0, 0])));
        // Same key at 5/5/4 bits: the low bits do not matter.
        assert!(p.may_show(color_key([250, 7, 15])));
        assert!(!p.may_show(color_key([0, 0, 0])));
        assert!(!p.may_show(color_key([255, 255, 255])));
        // One half-transparent pixel: anything may be blended.
        let half = Silhouette::from_rgba(2, 1, vec![255, 0, 0, 255, 0, 0, 255, 128]);
        assert!(half.palette().may_show(color_key([0, 200, 0])));
        // Premultiplied colour in a transparent pixel is added by compositing.
        let ghost = Silhouette::from_premultiplied(1, 1, vec![9, 9, 9, 0]);
        assert!(ghost.palette().may_show(color_key([1, 2, 3])));
        assert!(!Silhouette::default().palette().may_show(color_key([1, 2, 3])));
    }
}
