//! The colour the renderer composites at each stage pixel from every visible drawable but one
//! (`sampleColor3b` over white), kept between queries: colour sensing asks for thousands of
//! these per frame (a `touching color` over a sprite's box, Whisker's colour search over the
//! stage), while between two frames only the pixels under drawables that changed differ. Each
//! pixel is computed on first use and forgotten when a drawable covering it changes; for the
//! colours sensing asks about, per-row bit sets say which pixels match, so a query over a box
//! is a word-wise AND.

use super::super::cost;
use super::super::effects::Effects;
use super::super::render::{Blend, ColorMemo};
use super::super::silhouette::color_key;
use super::rows::{self, COLS, EMPTY, ROWS, Row, WORDS, X0, X1, Y0, Y1};
use super::sampler::Sampler;
use crate::geometry::Rect;

/// Colour keys whose match rows are kept at once.
const TRACKED: usize = 8;
/// Boxes noted for forgetting before they are applied.
const PENDING: usize = 32;

/// A box of stage pixels, edges included.
#[derive(Clone, Copy)]
struct Box4 {
    x0: i32,
    x1: i32,
    y0: i32,
    y1: i32,
}

impl Box4 {
    fn contains(&self, o: &Box4) -> bool {
        // Without short-circuits: a scan over the noted boxes compiles to vector compares.
        (self.x0 <= o.x0) & (o.x1 <= self.x1) & (self.y0 <= o.y0) & (o.y1 <= self.y1)
    }
}

/// One drawable of a composite: where it can show anything, and how to sample it.
pub(crate) struct Layer<'a> {
    /// Its sample box (transparent outside).
    pub sbox: Rect,
    /// Its colours at the query's MIP level.
    pub sampler: Sampler<'a>,
    /// Its effects (applied to sampled colours when any is on).
    pub effects: &'a Effects,
    /// Its colours at every stage pixel, for a backdrop (see [`crate::geometry::skin::Backdrop`]).
    pub plane: Option<&'a [[u8; 4]]>,
    /// The texel it shows at every stage pixel, for the pen layer (see `Sampler::texel_map`).
    pub texels: Option<&'a [u32]>,
    /// Colours already put through `effects`, when any is on (see [`ColorMemo`]).
    pub memo: Option<ColorMemo>,
}

/// Layers built only when a pixel must be composited (most queries find every pixel cached).
pub(crate) struct Lazy<'a, F: FnOnce() -> Vec<Layer<'a>>> {
    build: Option<F>,
    layers: Vec<Layer<'a>>,
}

impl<'a, F: FnOnce() -> Vec<Layer<'a>>> Lazy<'a, F> {
    /// Layers that `build` makes (topmost first) when first needed.
    pub(crate) fn new(build: F) -> Self {
        Lazy { build: Some(build), layers: Vec::new() }
    }

    fn get(&mut self) -> &mut [Layer<'a>] {
        if let Some(f) = self.build.take() {
            self.layers = f();
        }
        &mut self.layers
    }
}

/// `sampleColor3b` at (x, y) over `layers` (topmost first), as `render` computes it.
pub(crate) fn composite(layers: &mut [Layer<'_>], x: i32, y: i32) -> [u8; 3] {
    let (fx, fy) = (x as f64, y as f64);
    let mut blend = Blend::new();
    for l in layers {
        if blend.done() {
            break;
        }
        let b = &l.sbox;
        if fx < b.left || fx > b.right || fy < b.bottom || fy > b.top {
            continue;
        }
        let on = rows::on_stage(x, y);
        let mut c = match (l.plane, l.texels) {
            (Some(p), _) if on => p[rows::row_index(y) * COLS + (x - X0) as usize],
            (_, Some(t)) if on => l.sampler.color_of_texel(t[rows::row_index(y) * COLS + (x - X0) as usize]),
            _ => l.sampler.color(x, y),
        };
        if l.effects.enabled != 0 {
            c = match &mut l.memo {
                Some(m) => m.transform(l.effects, c),
                None => l.effects.transform_color(c, !0),
            };
        }
        if let Some(done) = blend.over_nothing(c) {
            return done;
        }
        blend.add(c);
    }
    blend.finish()
}

#[derive(Clone)]
struct Tracked {
    key: usize,
    /// Per row: pixels whose cached colour has this key (meaningful where valid).
    rows: Vec<Row>,
    used: u64,
}

/// Cached composite colours of one VM's scene, without the drawable at position `exclude`.
#[derive(Clone, Default)]
pub(crate) struct Composite {
    exclude: Option<usize>,
    valid: Vec<Row>,
    /// Boxes to forget before `valid` is next read (see [`Composite::invalidate`]).
    pending: Vec<Box4>,
    colors: Vec<[u8; 3]>,
    tracked: Vec<Tracked>,
    /// Per SVG skin: the MIP level its drawables' colours were sampled at.
    levels: Vec<(usize, i32)>,
    clock: u64,
    /// Work of the pixels composited since creation (see [`cost`]).
    pub(crate) filled: u64,
}

impl Composite {
    /// Roughly the 8-byte words this cache keeps, rows being `row` words each.
    pub(crate) fn heap_words(&self, row: u64) -> u64 {
        let tracked: u64 = self.tracked.iter().map(|t| t.rows.len() as u64 * row).sum();
        self.valid.len() as u64 * row + (self.colors.len() as u64 * 3).div_ceil(8) + tracked
    }

    /// Allocates the cache on first use and applies the noted boxes: every read of `valid`
    /// comes after this.
    fn ensure_alloc(&mut self) {
        if self.valid.is_empty() {
            self.valid = vec![EMPTY; ROWS];
            self.colors = vec![[0; 3]; ROWS * COLS];
        }
        if !self.pending.is_empty() {
            self.forget_pending();
        }
    }

    /// The drawable the cached colours leave out.
    pub(crate) fn exclude(&self) -> Option<usize> {
        self.exclude
    }

    /// Forgets the pixels inside `r` (a sample box; NaN or infinite edges forget everything
    /// they might cover). The box is noted and applied before the next read: between two
    /// queries drawables often change many times over the same pixels (a layer change
    /// re-places every drawable above it without moving one), and a box inside one already
    /// noted costs nothing.
    pub(crate) fn invalidate(&mut self, r: &Rect) {
        if self.valid.is_empty() {
            return;
        }
        let lo = |v: f64, min: i32| if v.is_nan() { min } else { v.floor().max(min as f64) as i32 };
        let hi = |v: f64, max: i32| if v.is_nan() { max } else { v.ceil().min(max as f64) as i32 };
        let b = Box4 { x0: lo(r.left, X0), x1: hi(r.right, X1), y0: lo(r.bottom, Y0), y1: hi(r.top, Y1) };
        if b.x0 > b.x1 || b.y0 > b.y1 || self.pending.iter().fold(false, |inside, p| inside | p.contains(&b)) {
            return;
        }
        self.pending.retain(|p| !b.contains(p));
        self.pending.push(b);
        if self.pending.len() >= PENDING {
            self.forget_pending();
        }
    }

    /// Clears the valid bits under every noted box.
    fn forget_pending(&mut self) {
        for b in std::mem::take(&mut self.pending) {
            let cols = rows::range(b.x0, b.x1);
            for y in b.y0..=b.y1 {
                let v = &mut self.valid[rows::row_index(y)];
                for w in 0..WORDS {
                    v[w] &= !cols[w];
                }
            }
            self.filled += cost::FORGET_ROW * (b.y1 - b.y0 + 1) as u64;
        }
    }

    /// Leaves out drawable `exclude` from now on; the pixels of the old and new excluded
    /// drawables' boxes (`old_box`, `new_box`) change meaning.
    pub(crate) fn set_exclude(&mut self, exclude: Option<usize>, old_box: Option<Rect>, new_box: Option<Rect>) {
        if self.exclude == exclude {
            return;
        }
        self.exclude = exclude;
        for b in [old_box, new_box].into_iter().flatten() {
            self.invalidate(&b);
        }
    }

    /// The drawable left out moved to position `pos` (the scene was rearranged; the cached
    /// colours still leave it out).
    pub(crate) fn follow(&mut self, pos: usize) {
        self.exclude = Some(pos);
    }

    /// Forgets every cached colour and leaves nothing out (the drawable left out is gone).
    pub(crate) fn forget_all(&mut self) {
        self.exclude = None;
        self.pending.clear();
        self.valid.iter_mut().for_each(|r| *r = EMPTY);
        self.filled += cost::FORGET_ROW * self.valid.len() as u64;
    }

    /// Records that the drawables of `skin` are sampled at MIP `level` from now on; when that
    /// changes, the pixels under them (`boxes()`) are forgotten.
    pub(crate) fn require_skin_level(&mut self, skin: usize, level: i32, boxes: impl FnOnce() -> Vec<Rect>) {
        match self.levels.iter_mut().find(|(k, _)| *k == skin) {
            Some((_, l)) if *l == level => {}
            Some((_, l)) => {
                *l = level;
                boxes().iter().for_each(|b| self.invalidate(b));
            }
            None => {
                self.levels.push((skin, level));
                boxes().iter().for_each(|b| self.invalidate(b));
            }
        }
    }

    fn fill<'a, F: FnOnce() -> Vec<Layer<'a>>>(&mut self, x: i32, y: i32, layers: &mut Lazy<'a, F>) -> [u8; 3] {
        let c = composite(layers.get(), x, y);
        let r = rows::row_index(y);
        self.colors[r * COLS + (x - X0) as usize] = c;
        rows::set(&mut self.valid[r], x);
        let k = color_key(c);
        for t in &mut self.tracked {
            if t.key == k {
                rows::set(&mut t.rows[r], x);
            } else {
                rows::clear(&mut t.rows[r], x);
            }
        }
        self.filled += cost::FILL + cost::LAYER * layers.get().len() as u64;
        c
    }

    /// The composite colour at stage pixel (x, y), computed if not cached.
    pub(crate) fn get<'a, F: FnOnce() -> Vec<Layer<'a>>>(
        &mut self,
        x: i32,
        y: i32,
        layers: &mut Lazy<'a, F>,
    ) -> [u8; 3] {
        if !rows::on_stage(x, y) {
            self.filled += cost::FILL + cost::LAYER * layers.get().len() as u64;
            return composite(layers.get(), x, y);
        }
        self.ensure_alloc();
        let r = rows::row_index(y);
        if rows::get(&self.valid[r], x) {
            return self.colors[r * COLS + (x - X0) as usize];
        }
        self.fill(x, y, layers)
    }

    /// Whether some pixel of row `y` among `cols` composites to a colour with key `key`.
    pub(crate) fn any_match<'a, F: FnOnce() -> Vec<Layer<'a>>>(
        &mut self,
        y: i32,
        cols: &Row,
        key: usize,
        layers: &mut Lazy<'a, F>,
    ) -> bool {
        if !(Y0..=Y1).contains(&y) {
            return false;
        }
        self.ensure_alloc();
        let t = self.track(key);
        let r = rows::row_index(y);
        let need: Row = std::array::from_fn(|w| cols[w] & !self.valid[r][w]);
        for x in rows::columns(&need) {
            self.fill(x, y, layers);
        }
        rows::meet(cols, &self.tracked[t].rows[r])
    }

    /// The index of the match rows of `key`, tracking it if needed (evicting the least
    /// recently used key beyond [`TRACKED`]).
    fn track(&mut self, key: usize) -> usize {
        self.clock += 1;
        if let Some(i) = self.tracked.iter().position(|t| t.key == key) {
            self.tracked[i].used = self.clock;
            return i;
        }
        let mut rows_of_key = vec![EMPTY; ROWS];
        for (r, v) in self.valid.iter().enumerate() {
            for x in rows::columns(v) {
                if color_key(self.colors[r * COLS + (x - X0) as usize]) == key {
                    rows::set(&mut rows_of_key[r], x);
                }
            }
        }
        let t = Tracked { key, rows: rows_of_key, used: self.clock };
        if self.tracked.len() < TRACKED {
            self.tracked.push(t);
            return self.tracked.len() - 1;
        }
        let i = self.tracked.iter().enumerate().min_by_key(|(_, t)| t.used).map_or(0, |(i, _)| i);
        self.tracked[i] = t;
        i
    }
}
