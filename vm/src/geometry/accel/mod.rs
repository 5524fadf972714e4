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

pub(crate) mod composite;
pub(crate) mod index;
pub(crate) mod rows;
pub(crate) mod sampler;

use std::rc::Rc;
use std::sync::Arc;

use super::Rect;
use super::cost;
use super::distance;
use super::drawable::{Placement, Xform};
use super::effects::bit;
use super::render::{
    BACKGROUND, ColorMemo, Drawable, Scene, mask_matches, match_rects, sample_box_of, skin_key, touching_bounds_of,
    uses_nearest,
};
use super::silhouette::{color_key, colors_match};
use super::skin::Skin;
use composite::{Composite, Layer, Lazy};
use index::{SceneIndex, Visible};
use rows::{EMPTY, ROWS, Row};
use sampler::{Columns, Sampler};

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
    /// Cached touching rows (allocated on first use) and the key each was computed under.
    rows: Vec<Row>,
    row_key: Vec<u64>,
    /// What its rows share (kept with the row buffers; keyed as they are).
    columns: Columns,
    /// `getBounds`, once asked, with the floor of the skin's silhouette it was computed at.
    bounds: Option<(Option<i32>, Rect)>,
    /// The skin it was built for, held so that the same address means the same skin (see
    /// [`Info::same_shape`]; its address is also in test builds' staleness check).
    held: Arc<Skin>,
    /// Whether shape effects (fisheye, whirl, pixelate, mosaic) apply.
    shaped: bool,
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
            rows: Vec::new(),
            row_key: Vec::new(),
            columns: Columns::default(),
            bounds: None,
            held: d.skin.clone(),
            shaped: d.effects.changes_shape(),
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

/// Scratch lists of [`Accel::rearrange`], kept so that a rearrangement allocates nothing.
#[derive(Default)]
struct Moves {
    /// Per old position, the new one.
    to: Vec<Option<usize>>,
    /// The old positions of the kept drawables in their new order.
    seq: Vec<usize>,
    /// The old data, taken one by one.
    #[allow(clippy::vec_box)] // the boxes of `Accel::infos`, moved, not reallocated
    old: Vec<Option<Box<Info>>>,
    /// The range's data in its new order.
    #[allow(clippy::vec_box)] // as above
    placed: Vec<Box<Info>>,
}

/// Scratch space: a copy starts empty.
impl Clone for Moves {
    fn clone(&self) -> Self {
        Moves::default()
    }
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
        self.infos.len() as u64 * 16 + self.index.heap_words() + comps
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

    /// Brings the kept data up to date after the drawables at `changed` were rebuilt (the
    /// scene may also have shrunk or grown). `pen` describes a pen-layer-only change.
    /// `sprite_of` tells which sprite the drawable at a position is an instance of.
    pub(crate) fn refresh(
        &mut self,
        scene: &Scene,
        changed: &[usize],
        pen: Option<PenChange>,
        sprite_of: &dyn Fn(usize) -> Option<u32>,
    ) {
        let n = scene.drawables.len();
        while self.infos.len() > n {
            if let Some(old) = self.infos.pop() {
                self.index.remove(self.infos.len());
                self.comps.iter_mut().for_each(|c| c.invalidate(&old.sbox));
            }
        }
        let mut fresh: Vec<usize> = changed.to_vec();
        fresh.extend(self.infos.len()..n);
        for pos in fresh {
            let old = self.infos.get(pos).map(|i| (i.sbox, i.pen));
            let Some(info) = self.rebuild(scene, pos, old, pen.as_ref(), sprite_of) else { continue };
            match self.infos.get_mut(pos) {
                Some(slot) => {
                    // Keep the row buffers; a new version makes their contents stale, the
                    // old one (same shape) keeps them.
                    let mut info = info;
                    if slot.same_shape(&info) {
                        info.ver = slot.ver;
                    }
                    let old = std::mem::replace(&mut **slot, info);
                    slot.rows = old.rows;
                    slot.row_key = old.row_key;
                    slot.columns = old.columns;
                }
                None => self.infos.push(Box::new(info)),
            }
        }
    }

    /// The data of the drawable now at `pos`, entered in the index, its pixels forgotten by
    /// the composites; `old` is the box and pen flag of the drawable it replaces there.
    fn rebuild(
        &mut self,
        scene: &Scene,
        pos: usize,
        old: Option<(Rect, bool)>,
        pen: Option<&PenChange>,
        sprite_of: &dyn Fn(usize) -> Option<u32>,
    ) -> Option<Info> {
        let d = scene.drawables.get(pos)?;
        let xf = scene.xform(pos)?;
        self.work += cost::REFRESH;
        self.next_ver += 1;
        let pen_only = pen.filter(|p| p.pos == pos).and_then(|p| p.dirty.as_deref());
        let was_pen = old.is_some_and(|(_, p)| p);
        let is_pen = pen.is_some_and(|p| p.pos == pos);
        let backdrop = pos == 0 && d.placement == STAGE;
        let info = Info::new(d, xf, self.next_ver, is_pen, backdrop, sprite_of(pos));
        enter(&mut self.index, pos, d, &info);
        for c in &mut self.comps {
            match (was_pen && is_pen, pen_only) {
                // Only pixels of the pen layer changed, and we know where.
                (true, Some(dirty)) => dirty.iter().for_each(|b| c.invalidate(b)),
                // A composite leaving this position out does not depend on it.
                _ if c.exclude() == Some(pos) => {}
                _ => {
                    if let Some((b, _)) = &old {
                        c.invalidate(b);
                    }
                    c.invalidate(&info.sbox);
                }
            }
        }
        Some(info)
    }

    /// Brings the kept data up to date after the scene was rearranged: the drawable now at
    /// position `p` is the unchanged one that was at `from[p]`, or (`None`) a new one. A
    /// layer change shifts every drawable above it by one place; moving their data (boxes,
    /// transforms, touching rows) is far cheaper than rebuilding it. Only the places from the
    /// first that changed on are visited (to the last that changed, when the scene kept its
    /// length): everything before and after keeps its place and data.
    pub(crate) fn rearrange(
        &mut self,
        scene: &Scene,
        from: &[Option<usize>],
        sprite_of: &dyn Fn(usize) -> Option<u32>,
    ) {
        let old_len = self.infos.len();
        let changed = |p: &usize| from.get(*p) != Some(&Some(*p));
        let lo = (0..old_len.min(from.len())).find(changed).unwrap_or(old_len.min(from.len()));
        // Old places `lo..old_end` become new places `lo..new_end`.
        let (old_end, new_end) = match from.len() == old_len {
            true => {
                let end = (lo..old_len).rev().find(changed).map_or(lo, |hi| hi + 1);
                (end, end)
            }
            false => (old_len, from.len()),
        };
        let Some(sub) = from.get(lo..new_end) else { return };
        let mut moves = std::mem::take(&mut self.moves);
        // Per old place in the range, the new one (the kept drawables of `sub` come from the
        // range: the places outside it are taken).
        let to = &mut moves.to;
        to.clear();
        to.resize(old_end - lo, None);
        for (k, f) in sub.iter().enumerate() {
            if let Some(t) = f.and_then(|o| o.checked_sub(lo)).and_then(|i| to.get_mut(i)) {
                *t = Some(lo + k);
            }
        }
        // Drawables that are gone (deleted, or rebuilt elsewhere) leave the index, and their
        // pixels are forgotten by every composite that shows them.
        for (i, t) in to.iter().enumerate() {
            if t.is_none() {
                self.index.remove(lo + i);
                self.forget_place(lo + i);
            }
        }
        // A pixel's colour depends on the order of the drawables over it. The kept drawables
        // in the longest run that kept its order still have it among themselves, so every pair
        // whose order flipped has one of the others in it: forgetting those boxes is enough.
        // The places around the range are before or after every drawable in it, so the
        // range's longest run is the scene's.
        for o in out_of_order(sub, &mut moves.seq) {
            self.forget_place(o);
        }
        // A composite follows the drawable it leaves out; one whose drawable is gone shows the
        // whole scene.
        for c in &mut self.comps {
            match c.exclude() {
                Some(e) if e >= old_len => c.forget_all(),
                Some(e) if (lo..old_end).contains(&e) => match to[e - lo] {
                    Some(p) => c.follow(p),
                    None => c.forget_all(),
                },
                _ => {}
            }
        }
        self.work += cost::MOVE * old_len as u64;
        self.index.permute(lo, to, from.len());
        let old = &mut moves.old;
        old.clear();
        old.extend(self.infos.drain(lo..old_end).map(Some));
        let mut placed = std::mem::take(&mut moves.placed);
        placed.clear();
        for (k, f) in sub.iter().enumerate() {
            let info = match f.and_then(|o| o.checked_sub(lo)).and_then(|i| old.get_mut(i).and_then(Option::take)) {
                Some(info) => Some(info),
                None => self.rebuild(scene, lo + k, None, None, sprite_of).map(Box::new),
            };
            // Every position of the scene has data (a drawable without a transform cannot
            // exist: `xform` fails only past the end).
            if let Some(info) = info {
                placed.push(info);
            }
        }
        self.infos.splice(lo..lo, placed.drain(..));
        // Data of deleted drawables goes now, not at the next rearrangement.
        old.clear();
        moves.placed = placed;
        self.moves = moves;
    }

    /// Every composite showing the drawable at `o` forgets its box (it left or moved past
    /// others), charged as one move.
    fn forget_place(&mut self, o: usize) {
        self.work += cost::MOVE;
        let b = self.infos[o].sbox;
        self.comps.iter_mut().filter(|c| c.exclude() != Some(o)).for_each(|c| c.invalidate(&b));
    }

    /// Touching row `y` of drawable `pos` at MIP `level`: cached while the drawable is unchanged.
    fn row(&mut self, scene: &Scene, pos: usize, level: i32, y: i32) -> Row {
        row_of(&mut self.infos, &mut self.work, scene, pos, level, y)
    }

    /// `isTouchingDrawables(me, candidates)`, as [`Scene::touching_drawables`] with the
    /// candidates listed or, for [`Candidates::Sprite`], every instance of the sprite.
    pub(crate) fn touching_drawables(&mut self, scene: &Scene, me: usize, candidates: Candidates) -> bool {
        self.work += cost::QUERY;
        self.asked.0.clear();
        let Some(mb) = self.infos.get(me).and_then(|i| i.tbounds) else { return false };
        let mut levels = Levels::seeded(scene);
        let me_skin = &scene.drawables[me].skin;
        levels.request(me_skin, self.infos[me].l100);
        let mut list = std::mem::take(&mut self.list);
        list.clear();
        let mut finite = self.infos[me].finite;
        match &candidates {
            Candidates::List(cands) => {
                for &c in cands.iter().rev() {
                    let Some(ci) = self.infos.get(c) else { continue };
                    if c == me || !ci.visible {
                        continue;
                    }
                    levels.request(&scene.drawables[c].skin, ci.own);
                    if mb.intersects(&ci.snapped) {
                        finite &= ci.finite;
                        list.push((c, mb.intersect(&ci.snapped)));
                    }
                }
                self.work += cost::CANDIDATE * cands.len() as u64;
            }
            &Candidates::Sprite(s) => {
                // Every visible drawable of a sprite's skin is an instance of that sprite, so
                // the index's per-skin level is what the candidates ask for.
                let mut near = std::mem::take(&mut self.near);
                self.index.near(&mb, &mut near);
                for &c in &near {
                    let ci = &self.infos[c];
                    if c == me || ci.sprite != Some(s) || !mb.intersects(&ci.snapped) {
                        continue;
                    }
                    let skin = &scene.drawables[c].skin;
                    levels.request(skin, self.index.level(skin, None).unwrap_or(ci.own));
                    finite &= ci.finite;
                    list.push((c, mb.intersect(&ci.snapped)));
                }
                if self.infos[me].sprite == Some(s)
                    && let Some(l) = self.index.level(me_skin, None)
                {
                    levels.request(me_skin, l);
                }
                self.work += cost::CANDIDATE * near.len() as u64;
                self.near = near;
            }
        }
        let answer = if list.is_empty() || !self.infos[me].visible {
            false
        } else if !finite {
            match candidates {
                Candidates::List(cands) => scene.touching_drawables(me, &cands),
                Candidates::Sprite(s) => {
                    let cands: Vec<usize> =
                        (0..self.infos.len()).filter(|&c| self.infos[c].sprite == Some(s)).collect();
                    scene.touching_drawables(me, &cands)
                }
            }
        } else {
            levels.request(me_skin, self.infos[me].own);
            self.rows_meet(scene, me, &levels, &list)
        };
        self.list = list;
        self.asked = levels;
        answer
    }

    /// Whether some pixel of the union of the candidates' boxes is touched by `me` and one of them.
    fn rows_meet(&mut self, scene: &Scene, me: usize, levels: &Levels, list: &[(usize, Rect)]) -> bool {
        let mut u = list[0].1;
        for (_, r) in &list[1..] {
            u = u.union(r);
        }
        let cols = rows::range(u.left as i32, u.right as i32);
        let me_level = levels.of(&scene.drawables[me].skin);
        for y in u.bottom as i32..=u.top as i32 {
            self.work += cost::ROW_VISIT * (1 + list.len() as u64);
            let m = rows::and(&self.row(scene, me, me_level, y), &cols);
            if rows::is_empty(&m) {
                continue;
            }
            for &(c, _) in list {
                let r = self.row(scene, c, levels.of(&scene.drawables[c].skin), y);
                if rows::meet(&m, &r) {
                    return true;
                }
            }
        }
        false
    }

    /// Whether every drawable a composite without `me` may sample has a finite transform (else
    /// the reference answers: a NaN transform samples a texel anywhere).
    fn all_finite(&self, me: usize) -> bool {
        let me_counted = self.index.entry(me).is_some_and(|e| e.nonfinite());
        self.index.nonfinite() == usize::from(me_counted)
    }

    /// The pen layer's texel map (see `Sampler::texel_map`), computed once per transform.
    fn pen_map(&mut self, scene: &Scene) -> Option<Rc<Vec<u32>>> {
        let pos = self.infos.iter().position(|i| i.pen && i.visible && i.finite)?;
        let info = &self.infos[pos];
        let d = &scene.drawables[pos];
        if d.effects.changes_shape() {
            return None;
        }
        if let Some((xf, map)) = &self.pen_texels
            && *xf == info.xf
        {
            return Some(map.clone());
        }
        let map = Rc::new(Sampler::new(d, info.xf, d.skin.mip_ref(0), info.nearest).texel_map());
        self.work += cost::MAP_PIXEL * map.len() as u64;
        self.pen_texels = Some((info.xf, map.clone()));
        Some(map)
    }

    /// The composite leaving out `me`, brought to the query's levels; returns its index.
    fn prepare_composite(&mut self, scene: &Scene, me: usize, levels: &Levels) -> usize {
        let k = self.comp_for(me);
        let infos = &self.infos;
        for &(skin, level) in &levels.0 {
            self.comps[k].require_skin_level(skin, level, || {
                // Rare (a skin's level changed): forget every visible drawable of it.
                infos
                    .iter()
                    .enumerate()
                    .filter(|&(i, info)| info.visible && i != me && skin_key(&scene.drawables[i].skin) == skin)
                    .map(|(_, info)| info.sbox)
                    .collect()
            });
        }
        k
    }

    /// `isTouchingColor(me, color, mask)`, as [`Scene::touching_color`].
    pub(crate) fn touching_color(&mut self, scene: &Scene, me: usize, color: [u8; 3], mask: Option<[u8; 3]>) -> bool {
        self.work += cost::QUERY;
        self.asked.0.clear();
        let Some(mb) = self.infos.get(me).and_then(|i| i.tbounds) else { return false };
        let mut list = std::mem::take(&mut self.list);
        list.clear();
        let mut near = std::mem::take(&mut self.near);
        self.index.near(&mb, &mut near);
        for &c in &near {
            let ci = &self.infos[c];
            if c != me && mb.intersects(&ci.snapped) {
                list.push((c, mb.intersect(&ci.snapped)));
            }
        }
        self.work += cost::CANDIDATE * near.len() as u64;
        self.near = near;
        let answer = self.touching_color_in(scene, me, color, mask, mb, &list);
        self.list = list;
        answer
    }

    fn touching_color_in(
        &mut self,
        scene: &Scene,
        me: usize,
        color: [u8; 3],
        mask: Option<[u8; 3]>,
        mb: Rect,
        list: &[(usize, Rect)],
    ) -> bool {
        let bounds = if colors_match(color, BACKGROUND) {
            mb
        } else if list.is_empty() {
            return false;
        } else {
            let mut b = list[0].1;
            for (_, r) in &list[1..] {
                b = b.union(r);
            }
            b
        };
        if !self.infos[me].finite || !self.all_finite(me) {
            return scene.touching_color(me, color, mask);
        }
        let me_skin = &scene.drawables[me].skin;
        let mut levels = Levels::of_scene(scene, &self.index, me_skin, None);
        levels.request(me_skin, self.infos[me].l100);
        levels.request(me_skin, self.infos[me].own);
        let key = color_key(color);
        let may_show = colors_match(color, BACKGROUND)
            || list.iter().any(|&(c, _)| {
                let d = &scene.drawables[c];
                d.effects.enabled & (bit::COLOR | bit::BRIGHTNESS | bit::GHOST) != 0
                    || d.skin.mip_ref(levels.of(&d.skin)).palette().may_show(key)
            });
        if !may_show {
            self.asked = levels;
            return false;
        }
        // Only drawables whose boxes meet the query's can show at its pixels; only inside
        // their match boxes can the composite be the colour (see [`match_rects`]).
        let mut near = std::mem::take(&mut self.near);
        self.index.near(&bounds, &mut near);
        let infos = &self.infos;
        near.retain(|&i| i != me && infos[i].sbox.intersects(&bounds));
        near.sort_unstable_by(|a, b| b.cmp(a));
        let mut areas = std::mem::take(&mut self.match_boxes);
        areas.clear();
        let pruned = !colors_match(color, BACKGROUND);
        if pruned {
            for &i in &near {
                let d = &scene.drawables[i];
                let mip = d.skin.mip_ref(levels.of(&d.skin));
                match_rects(&d.effects, &infos[i].xf, mip, infos[i].sbox, key, &mut areas);
            }
            areas.retain(|a| a.intersects(&bounds));
            self.work += cost::CANDIDATE * near.len() as u64;
        }
        let (x0, x1) = (bounds.left as i32, bounds.right as i32);
        let (mut y0, mut y1) = (bounds.bottom as i32, bounds.top as i32);
        let cols = rows::range(x0, x1);
        // Per match box, its rows and its columns among the query's; none when one box holds
        // every pixel looked at (a recoloured backdrop), then nothing is pruned.
        let mut boxes = std::mem::take(&mut self.match_rows);
        boxes.clear();
        let holds_all = |a: &Rect| {
            a.left <= f64::from(x0) && f64::from(x1) <= a.right && a.bottom <= f64::from(y0) && f64::from(y1) <= a.top
        };
        if pruned && !areas.iter().any(holds_all) {
            let int = |v: f64| v.clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32;
            boxes.extend(areas.iter().map(|a| {
                let m = rows::range(int(a.left.ceil()), int(a.right.floor()));
                (int(a.bottom.ceil()), int(a.top.floor()), std::array::from_fn(|w| m[w] & cols[w]))
            }));
            // Only the rows some box meets.
            y0 = y0.max(boxes.iter().map(|b| b.0).min().unwrap_or(i32::MAX));
            y1 = y1.min(boxes.iter().map(|b| b.1).max().unwrap_or(i32::MIN));
        }
        let pruned = !boxes.is_empty();
        if y0 > y1 {
            self.near = near;
            self.match_boxes = areas;
            self.match_rows = boxes;
            self.asked = levels;
            return false;
        }
        let ci = self.prepare_composite(scene, me, &levels);
        let me_level = levels.of(&scene.drawables[me].skin);
        // `me`'s touching rows first: they come from its row cache, which `layers` below must
        // not be borrowed across.
        let mut touched = std::mem::take(&mut self.touched);
        touched.clear();
        if mask.is_none() {
            for y in y0..=y1 {
                touched.push(self.row(scene, me, me_level, y));
            }
        }
        let pen = self.pen_map(scene);
        let me_d = &scene.drawables[me];
        let infos = &self.infos;
        let me_sampler = Sampler::new(me_d, infos[me].xf, me_d.skin.mip_ref(me_level), infos[me].nearest);
        // The columns of row `y` inside a match box (all of them when nothing was pruned).
        let may_match = |y: i32| -> Row {
            if !pruned {
                return cols;
            }
            let mut r = EMPTY;
            for (_, _, m) in boxes.iter().filter(|b| b.0 <= y && y <= b.1) {
                for w in 0..r.len() {
                    r[w] |= m[w];
                }
            }
            r
        };
        let mut layers =
            Lazy::new(|| layers_of(scene, infos, near.iter().copied(), &levels, pen.as_ref().map(|m| m.as_slice())));
        let mut work = 0u64;
        let mut hit = false;
        for (k, y) in (y0..=y1).enumerate() {
            work += cost::ROW_VISIT;
            let allowed = may_match(y);
            if rows::is_empty(&allowed) {
                continue;
            }
            let mine = match mask {
                None => rows::and(&touched[k], &allowed),
                Some(m) => {
                    let mut r = EMPTY;
                    if let Some((a, b)) = me_sampler.span(y, bounds.left as i32, bounds.right as i32) {
                        for x in a..=b {
                            let mut c = me_sampler.color(x, y);
                            if me_d.effects.enabled != 0 {
                                c = me_d.effects.transform_color(c, !bit::GHOST);
                            }
                            if mask_matches(c, m) && rows::get(&allowed, x) {
                                rows::set(&mut r, x);
                            }
                        }
                        work += cost::COLOR_PIXEL * (b - a + 1) as u64;
                    }
                    work += cost::ROW;
                    r
                }
            };
            if !rows::is_empty(&mine) && self.comps[ci].any_match(y, &mine, key, &mut layers) {
                hit = true;
                break;
            }
        }
        drop(layers);
        self.near = near;
        self.match_boxes = areas;
        self.match_rows = boxes;
        self.touched = touched;
        self.work += work;
        self.asked = levels;
        hit
    }

    /// Whisker's branch distance of a false `touching color`, as
    /// [`distance::touching_color_distance`], or `below` when that is less: the walk stops at
    /// the first ring whose points are all at least `below` away.
    pub(crate) fn color_distance(&mut self, scene: &Scene, me: usize, color: [u8; 3], below: f64) -> f64 {
        self.work += cost::QUERY;
        if below <= 0.0 {
            // `min(distance, below)` whatever the distance (distances are non-negative).
            return below;
        }
        if self.infos.get(me).is_none() || !self.all_finite(me) {
            return self.uncached_color_distance(scene, me, color).min(below);
        }
        let me_skin = &scene.drawables[me].skin;
        let me_own = self.infos[me].visible.then_some(self.infos[me].own);
        let levels = Levels::of_scene(scene, &self.index, me_skin, me_own);
        let key = color_key(color);
        let me_fx = self.index.entry(me).is_some_and(|e| e.colour_effects());
        let may_show = colors_match(color, BACKGROUND)
            || self.index.colour_effects() > usize::from(me_fx)
            || self.index.skins().any(|(skin, _)| {
                let alone = Arc::ptr_eq(skin, me_skin) && self.index.level(skin, me_own).is_none();
                !alone && skin.mip_ref(levels.of(skin)).palette().may_show(key)
            });
        if !may_show {
            return below.min(1.0);
        }
        let p = scene.drawables[me].placement;
        let start = (p.x, p.y);
        let Some(reach) = distance::stage_reach(start) else {
            // A start off the stage: Whisker's point numbers may collide; walk as it does.
            return self.uncached_color_distance(scene, me, color).min(below);
        };
        let (x0, y0) = (start.0.trunc() as i32, start.1.trunc() as i32);
        // Only walk points where some drawable can show the colour are sampled (the same
        // answer: elsewhere the composite is another colour or white).
        let infos = &self.infos;
        let others = || (0..infos.len()).filter(|&i| i != me && infos[i].visible);
        let mut boxes = std::mem::take(&mut self.match_boxes);
        boxes.clear();
        let pruned = !colors_match(color, BACKGROUND);
        if pruned {
            for i in others() {
                let d = &scene.drawables[i];
                let mip = d.skin.mip_ref(levels.of(&d.skin));
                match_rects(&d.effects, &infos[i].xf, mip, infos[i].sbox, key, &mut boxes);
            }
        }
        self.work += cost::CANDIDATE * others().count() as u64;
        if pruned && boxes.is_empty() {
            self.match_boxes = boxes;
            return below.min(1.0);
        }
        let k = self.prepare_composite(scene, me, &levels);
        let pen = self.pen_map(scene);
        let infos = &self.infos;
        let all = (0..infos.len()).rev().filter(|&i| i != me && infos[i].visible);
        let mut layers = Lazy::new(|| layers_of(scene, infos, all, &levels, pen.as_ref().map(|m| m.as_slice())));
        let comp = &mut self.comps[k];
        let within = pruned.then_some(boxes.as_slice());
        let rings = distance::rings_below(below);
        let walk = distance::stage_walk_in(reach, (x0, y0), within, rings, &mut self.walk, |x, y| {
            colors_match(color, comp.get(x, y, &mut layers))
        });
        drop(layers);
        self.match_boxes = boxes;
        self.work += cost::WALK * walk.visited + cost::MASK_CELL * walk.marked;
        // Not found within `rings`: the colour is nowhere (1) or at least `below` away.
        walk.found.map_or(below.min(1.0), |(x, y)| {
            distance::found_distance(start, &distance::stage_bounds(), x as i64, y as i64).min(below)
        })
    }

    /// [`distance::touching_color_distance`] without the kept composites, its samples counted.
    fn uncached_color_distance(&mut self, scene: &Scene, me: usize, color: [u8; 3]) -> f64 {
        let (d, visited) = distance::touching_color_distance_counted(scene, me, color);
        self.work += visited * cost::sample_walk(scene.drawables.len());
        d
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

/// A backdrop's colours at every stage pixel (before colour effects).
fn backdrop_colors(s: &Sampler<'_>) -> Vec<[u8; 4]> {
    let mut v = Vec::with_capacity(rows::ROWS * rows::COLS);
    for y in rows::Y0..=rows::Y1 {
        for x in rows::X0..=rows::X1 {
            v.push(s.color(x, y));
        }
    }
    v
}

/// The old positions of the kept drawables outside a longest run whose order is unchanged:
/// `from[p]` is where the drawable now at `p` was (`None`: new). A scene rearranged by one
/// layer change, clone or deletion (nearly every full sync) is answered in one pass; else
/// patience sorting, O(n log n), which gives the same answer where both apply.
/// `seq` is scratch space.
fn out_of_order(from: &[Option<usize>], seq: &mut Vec<usize>) -> Vec<usize> {
    seq.clear();
    seq.extend(from.iter().flatten());
    if let Some(moved) = one_out_of_order(seq) {
        debug_assert_eq!(moved, longest_run_leaves(seq), "one-pass answer of {seq:?}");
        return moved;
    }
    longest_run_leaves(seq)
}

/// [`out_of_order`] of `seq` when leaving out at most one element sorts it, else `None`. Of
/// an adjacent pair that swapped, the earlier (larger) one is left out, as patience sorting does.
fn one_out_of_order(seq: &[usize]) -> Option<Vec<usize>> {
    let Some(i) = seq.windows(2).position(|w| w[0] > w[1]) else { return Some(Vec::new()) };
    let sorted_without = |k: usize| {
        let mut last: Option<usize> = None;
        seq.iter().enumerate().filter(|&(j, _)| j != k).all(|(_, &v)| {
            let ok = last.is_none_or(|l| l < v);
            last = Some(v);
            ok
        })
    };
    [i, i + 1].into_iter().find(|&k| sorted_without(k)).map(|k| vec![seq[k]])
}

/// Patience sorting: the elements of `seq` outside the longest increasing run it finds.
fn longest_run_leaves(seq: &[usize]) -> Vec<usize> {
    // tails[k]: index into `seq` of the smallest tail of an increasing run of length k + 1;
    // prev[i]: the element before seq[i] in its run.
    let mut tails: Vec<usize> = Vec::new();
    let mut prev: Vec<Option<usize>> = vec![None; seq.len()];
    for (i, &v) in seq.iter().enumerate() {
        let k = tails.partition_point(|&t| seq[t] < v);
        prev[i] = k.checked_sub(1).map(|k| tails[k]);
        if k == tails.len() {
            tails.push(i);
        } else {
            tails[k] = i;
        }
    }
    let mut in_run = vec![false; seq.len()];
    let mut at = tails.last().copied();
    while let Some(i) = at {
        in_run[i] = true;
        at = prev[i];
    }
    seq.iter().zip(&in_run).filter(|(_, r)| !**r).map(|(&v, _)| v).collect()
}

/// Touching row `y` of drawable `pos` at MIP `level` (see [`Accel::row`]).
/// Enters drawable `d` at `pos` into the index if it is visible, else takes it out.
fn enter(index: &mut SceneIndex, pos: usize, d: &Drawable, info: &Info) {
    if info.visible {
        let colour_effects = d.effects.enabled & (bit::COLOR | bit::BRIGHTNESS | bit::GHOST) != 0;
        let v =
            Visible { snapped: &info.snapped, skin: &d.skin, level: info.own, nonfinite: !info.finite, colour_effects };
        index.insert(pos, v);
    } else {
        index.remove(pos);
    }
}

fn row_of(infos: &mut [Box<Info>], work: &mut u64, scene: &Scene, pos: usize, level: i32, y: i32) -> Row {
    let Some(info) = infos.get_mut(pos) else { return EMPTY };
    if info.rows.is_empty() {
        info.rows = vec![EMPTY; ROWS];
        info.row_key = vec![0; ROWS];
    }
    let key = (info.ver << 5 | level as u64 & 31) + 1;
    let r = rows::row_index(y);
    if info.row_key[r] == key {
        return info.rows[r];
    }
    let d = &scene.drawables[pos];
    let s = Sampler::new(d, info.xf, d.skin.mip_ref(level), info.nearest);
    let (out, tested) = s.row(y, &mut info.columns, key);
    *work += cost::ROW + cost::PIXEL * tested;
    info.rows[r] = out;
    info.row_key[r] = key;
    out
}

/// A composite's layers: the drawables at `positions` (visible, topmost first), at `levels`.
fn layers_of<'a>(
    scene: &'a Scene,
    infos: &[Box<Info>],
    positions: impl Iterator<Item = usize>,
    levels: &Levels,
    pen: Option<&'a [u32]>,
) -> Vec<Layer<'a>> {
    positions
        .map(|i| {
            let d = &scene.drawables[i];
            let info = &infos[i];
            let mip = d.skin.mip_ref(levels.of(&d.skin));
            let sampler = Sampler::new(d, info.xf, mip, info.nearest);
            let plane = info.backdrop.then(|| mip.backdrop(&info.xf, || backdrop_colors(&sampler))).flatten();
            let texels = if info.pen && info.finite && !d.effects.changes_shape() { pen } else { None };
            let memo = (d.effects.enabled != 0).then(|| ColorMemo::for_effects(&d.effects));
            Layer { sbox: info.sbox, sampler, effects: &d.effects, plane, texels, memo }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;
