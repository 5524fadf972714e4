//! The CPU renderer's queries at interpreter speed, with the answers of
//! [`render`](super::render) bit for bit (that module stays the reference; test builds check
//! every answer against it).
//!
//! What makes them cheap:
//! - **Rows instead of pixels.** A drawable's touching pixels in a stage row are found by
//!   searching for the columns where its texel index enters and leaves the texture (both
//!   indices are monotone along a row), then testing only those columns against bit planes
//!   of the silhouette; for a fully opaque silhouette (the boxes of asset-less projects) no
//!   column is tested at all. Rows are kept per drawable as bit sets while it is unchanged,
//!   so sprite-against-sprite touching is a word-wise AND of cached rows.
//! - **Kept composites.** The colour composited at each stage pixel from all drawables but the
//!   asking one is kept until a drawable covering that pixel changes, with per-colour match
//!   rows ([`composite`]); colour sensing and Whisker's colour search read it.
//! - **Walks in order, pruned.** Whisker's colour search visits only the grid steps where the
//!   colour may show, in its order (one per distance from the stage's left and bottom edges,
//!   shared by the process; see [`distance::walk_key`]).
//! - Per-drawable boxes, levels and transforms computed once per change of the drawable, and
//!   a scene index ([`index`]) kept up to date one change at a time: candidates come from a
//!   grid over the stage, MIP levels from per-skin counts, so a query costs what the
//!   drawables near it cost, not what the whole scene costs.
//!
//! Answers that would need a non-finite transform fall back to the reference (rare: zero-size
//! drawables), as do the single-point questions (`pick`, `touching point`).

// The kept data's types live here (their private fields are shared by the children); the
// `impl Accel` is split by concern: keeping the data in step with rebuilt drawables
// (`refresh`) and rearranged ones (`moves`), and the queries (`touching`, `color`).
mod color;
pub(crate) mod composite;
pub(crate) mod index;
mod mask;
mod moves;
mod refresh;
pub(crate) mod rows;
pub(crate) mod sampler;
mod touching;

use std::rc::Rc;
use std::sync::Arc;

use super::Rect;
use super::distance;
use super::drawable::{Placement, Xform};
use super::render::{Drawable, Scene, sample_box_of, skin_key, touching_bounds_of, uses_nearest};
use super::skin::Skin;
use composite::Composite;
use index::SceneIndex;
use moves::Moves;
use rows::Row;
use touching::KeptRows;

/// Where the stage (and so its backdrop) is drawn.
const STAGE: Placement = Placement { x: 0.0, y: 0.0, direction: 90.0, scale: [100.0, 100.0] };

/// Composites kept (one per asking drawable: two fruits asking about one colour in turn keep
/// each other's composite instead of recomputing it every frame; with four, ten clones asking
/// every frame recomputed their boxes at every query, `400003367`). A composite's colours are
/// allocated zeroed, so the pages its queries never touch take no memory.
const COMPOSITES: usize = 16;

/// What the accelerated queries keep about one drawable while it is unchanged.
#[derive(Clone)]
struct Info {
    /// Unique per (re)build of the drawable at this position.
    ver: u64,
    xf: Xform,
    finite: bool,
    visible: bool,
    /// Rough box snapped out to integers (`_candidatesTouching`'s candidate box).
    snapped: Rect,
    /// `_touchingBounds` (`None`: empty or not finite; then nothing touches).
    tbounds: Option<Rect>,
    /// Outside this box the drawable samples transparent.
    sbox: Rect,
    /// MIP level for its own scale, and for `getTexture([100, 100])`.
    own: i32,
    l100: i32,
    nearest: bool,
    pen: bool,
    /// The stage's backdrop (fixed transform, no shape effects): its colours come from a
    /// per-project plane.
    backdrop: bool,
    /// The sprite it is an instance of (for `touching (sprite)` candidates), if any.
    sprite: Option<u32>,
    /// Cached touching rows, allocated on first use, shared with the VM's clones until one
    /// of them writes a row.
    touch: KeptRows,
    /// `getBounds`, once asked, with the floor of the skin's silhouette it was computed at.
    bounds: Option<(Option<i32>, Rect)>,
    /// The skin it was built for, held so that the same address means the same skin (see
    /// [`Info::same_shape`]; its address is also in test builds' staleness check).
    held: Arc<Skin>,
    /// Whether shape effects (fisheye, whirl, pixelate, mosaic) apply.
    shaped: bool,
    /// Kept `color is touching color` rows (keyed by `ver` and the rest of what they depend
    /// on, so kept across rebuilds as the touching rows are).
    mask: mask::MaskRows,
}

impl Info {
    fn new(d: &Drawable, xf: Xform, ver: u64, pen: bool, backdrop: bool, sprite: Option<u32>) -> Info {
        let finite = xf.m.iter().chain(&xf.inv).all(|v| v.is_finite());
        let mut snapped = xf.aabb();
        snapped.snap_to_int();
        let tbounds =
            touching_bounds_of(&xf).filter(|b| [b.left, b.right, b.bottom, b.top].iter().all(|v| v.is_finite()));
        Info {
            ver,
            xf,
            finite,
            visible: d.visible,
            snapped,
            tbounds,
            sbox: sample_box_of(&xf),
            own: d.skin.mip_level(d.placement.render_scale()),
            l100: d.skin.mip_level([100.0, 100.0]),
            nearest: uses_nearest(d),
            pen,
            backdrop: backdrop && !d.effects.changes_shape() && !pen,
            sprite,
            touch: KeptRows::default(),
            bounds: None,
            held: d.skin.clone(),
            shaped: d.effects.changes_shape(),
            mask: mask::MaskRows::default(),
        }
    }

    /// Whether `other` has the same touching rows: a row is a function of the skin, the
    /// transform and the sampling alone, so a rebuild that kept them (shown again, a ghost or
    /// colour effect, a new layer) keeps its rows. Drawables with shape effects (rare) and the
    /// pen layer (redrawn in place) always get new ones.
    fn same_shape(&self, other: &Info) -> bool {
        let bits = |xf: &Xform| {
            let mut b = [0u64; 12];
            for (o, v) in b.iter_mut().zip(xf.m.iter().chain(&xf.inv)) {
                *o = v.to_bits();
            }
            b
        };
        !self.shaped
            && !other.shaped
            && !self.pen
            && !other.pen
            && self.nearest == other.nearest
            && Arc::ptr_eq(&self.held, &other.held)
            && bits(&self.xf) == bits(&other.xf)
    }

    /// What this data says about its drawable, as exact bits (the staleness check of
    /// [`Accel::check`]; row caches and bounds follow from these).
    fn signature(&self) -> Vec<u64> {
        let rect = |r: &Rect| [r.left, r.right, r.bottom, r.top].map(f64::to_bits);
        let mut v: Vec<u64> =
            self.xf.m.iter().chain(&self.xf.inv).chain(&self.xf.position).map(|x| x.to_bits()).collect();
        v.extend(rect(&self.snapped));
        v.extend(rect(&self.sbox));
        v.extend(self.tbounds.as_ref().map_or([0; 4], rect));
        v.extend([
            u64::from(self.finite),
            u64::from(self.visible),
            u64::from(self.nearest),
            self.own as u64,
            self.l100 as u64,
            self.sprite.map_or(u64::MAX, u64::from),
            skin_key(&self.held) as u64,
        ]);
        v
    }
}

/// The MIP levels of one query's silhouettes: per SVG skin (by [`skin_key`]) the largest of
/// its floor and the levels the query requests (bitmaps have one level).
#[derive(Clone, Default)]
pub(crate) struct Levels(Vec<(usize, i32)>);

impl Levels {
    /// The floors of `scene` (the MIPs created before the query).
    fn seeded(scene: &Scene) -> Levels {
        Levels(scene.floors.entries().to_vec())
    }

    fn request(&mut self, skin: &Arc<Skin>, level: i32) {
        if !skin.is_svg() {
            return;
        }
        let key = skin_key(skin);
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some((_, l)) => *l = (*l).max(level),
            None => self.0.push((key, level)),
        }
    }

    fn of(&self, skin: &Arc<Skin>) -> i32 {
        let key = skin_key(skin);
        self.0.iter().find(|(k, _)| *k == key).map_or(0, |(_, l)| *l)
    }

    /// (skin key, level) of every SVG skin with a silhouette in this query.
    pub(crate) fn entries(&self) -> &[(usize, i32)] {
        &self.0
    }

    /// The levels of a composite of every visible drawable but `me` (from the index: per SVG
    /// skin the largest level its visible drawables ask for, without `me`'s own request),
    /// over the scene's floors.
    fn of_scene(scene: &Scene, index: &SceneIndex, me_skin: &Arc<Skin>, me_own: Option<i32>) -> Levels {
        let mut levels = Levels::seeded(scene);
        for (skin, max) in index.skins() {
            let l = if Arc::ptr_eq(skin, me_skin) { index.level(skin, me_own) } else { max };
            if let Some(l) = l {
                levels.request(skin, l);
            }
        }
        levels
    }
}

/// Which drawables a `touching (sprite)` query tests against.
pub(crate) enum Candidates {
    /// These positions (invisible ones and the asking drawable are skipped), as the reference
    /// takes them (the render oracle's questions name one sprite each).
    List(Vec<usize>),
    /// Every instance of this sprite (found through the index's grid).
    Sprite(u32),
}

/// Accelerated queries over one kept [`Scene`]; see the module documentation.
#[derive(Clone, Default)]
pub(crate) struct Accel {
    /// Per position of the scene. Boxed: a layer change moves many of them, and a box moves
    /// as a pointer.
    #[allow(clippy::vec_box)] // deliberate: see above
    infos: Vec<Box<Info>>,
    index: SceneIndex,
    /// Scratch list of positions from the index.
    near: Vec<usize>,
    /// Composites by excluded drawable, most recently used last.
    comps: Vec<Composite>,
    next_ver: u64,
    /// Scratch list of candidates (no allocation per query).
    list: Vec<(usize, Rect)>,
    /// Scratch rows of the asking drawable.
    touched: Vec<Row>,
    /// Scratch space of the colour walk, and the boxes where its colour may show.
    walk: distance::WalkScratch,
    match_boxes: Vec<Rect>,
    /// Scratch: per match box of a `touching color` query, its rows and its columns there.
    match_rows: Vec<(i32, i32, Row)>,
    /// The pen layer's texel at every stage pixel, with the transform it was computed for.
    pen_texels: Option<(Xform, Rc<Vec<u32>>)>,
    /// Geometry work done so far (rows searched, pixels tested or composited, walk points).
    work: u64,
    /// The levels of the last `touching` or `touching color` query.
    asked: Levels,
    /// Scratch lists of [`Accel::rearrange`] (a clone swarm can rearrange at every ordered query).
    moves: Moves,
}

/// A change to the pen layer since the last refresh: the affected stage box, if known.
pub(crate) struct PenChange {
    /// Position of the pen layer drawable.
    pub pos: usize,
    /// Stage boxes of the pixels drawn since the last refresh (`None`: unknown).
    pub dirty: Option<Vec<Rect>>,
}

impl Accel {
    /// Roughly the 8-byte words this cache keeps (what a clone copies).
    pub(crate) fn heap_words(&self) -> u64 {
        let row = std::mem::size_of::<rows::Row>() as u64 / 8;
        let comps: u64 = self.comps.iter().map(|c| c.heap_words(row)).sum();
        // Touching rows are shared with the copy, not copied (a write copies them then, and is
        // charged there: `touching::row_of`).
        let masks: u64 = self.infos.iter().map(|i| i.mask.heap_words()).sum();
        self.infos.len() as u64 * 16 + self.index.heap_words() + comps + masks
    }

    /// Test builds' check that the kept data describes `scene` as it is: per position, the
    /// transform, visibility and sprite of the drawable there (a rearrangement that moved
    /// data to the wrong place, or kept data of a drawable rebuilt since, fails here).
    pub(crate) fn check(&self, scene: &Scene, sprite_of: &dyn Fn(usize) -> Option<u32>) {
        assert_eq!(self.infos.len(), scene.drawables.len(), "kept data for another number of drawables");
        for (p, info) in self.infos.iter().enumerate() {
            let (Some(d), Some(xf)) = (scene.drawables.get(p), scene.xform(p)) else { continue };
            let fresh = Info::new(d, xf, 0, info.pen, info.backdrop, sprite_of(p));
            assert_eq!(info.signature(), fresh.signature(), "kept data of drawable {p} is stale");
        }
    }

    /// How many drawables the kept data describes (the scene's length at the last refresh).
    pub(crate) fn len(&self) -> usize {
        self.infos.len()
    }

    /// Work done so far, in the units of the run's work count.
    pub(crate) fn work(&self) -> u64 {
        self.work + self.comps.iter().map(|c| c.filled).sum::<u64>()
    }

    /// The index of the composite leaving out `me` (made most recently used), taking over the
    /// least recently used one when there are [`COMPOSITES`] already.
    fn comp_for(&mut self, me: usize) -> usize {
        if let Some(i) = self.comps.iter().position(|c| c.exclude() == Some(me)) {
            let c = self.comps.remove(i);
            self.comps.push(c);
        } else {
            let mut c = if self.comps.len() >= COMPOSITES { self.comps.remove(0) } else { Composite::default() };
            let old = c.exclude().and_then(|e| self.infos.get(e)).map(|i| i.sbox);
            c.set_exclude(Some(me), old, self.infos.get(me).map(|i| i.sbox));
            self.comps.push(c);
        }
        self.comps.len() - 1
    }

    /// `getBounds` of drawable `me`, as [`Scene::bounds`] (kept while it and the floor of its
    /// skin are unchanged).
    pub(crate) fn bounds(&mut self, scene: &Scene, me: usize) -> Rect {
        let floor = scene.drawables.get(me).and_then(|d| scene.floors.level(&d.skin));
        if let Some((f, b)) = self.infos.get(me).and_then(|i| i.bounds)
            && f == floor
        {
            return b;
        }
        let b = scene.bounds(me);
        if let Some(info) = self.infos.get_mut(me) {
            info.bounds = Some((floor, b));
        }
        b
    }

    /// The levels the last `touching` or `touching color` query gave its silhouettes: the
    /// MIPs it created (see [`Scene::floors`]).
    pub(crate) fn asked(&self) -> &Levels {
        &self.asked
    }
}

#[cfg(test)]
pub(crate) mod tests;
