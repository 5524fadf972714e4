//! Distance values for branch distances of sensing blocks (Whisker paper §5.2.4, as
//! Whisker's scratch-vm fork computes them in `execute.js`, branch `emse22`):
//! centre distances for sprites and the mouse pointer, the distance of the centre to the
//! nearest stage edge, and a breadth-first colour search on a sample grid for colours.

use super::Rect;
use super::drawable::Xform;
use super::key_cells::KeyCells;
use super::render::{STAGE_HEIGHT, STAGE_WIDTH, Scene};
use super::silhouette::{Silhouette, color_key, colors_match};
use crate::util::math::hypot;
use std::sync::{Arc, OnceLock};

/// Whisker's `touching edge` distance: the smallest distance of the sprite's centre to a stage edge.
pub fn edge_distance(x: f64, y: f64) -> f64 {
    let (w, h) = (STAGE_WIDTH / 2.0, STAGE_HEIGHT / 2.0);
    (w + x).min(h + y).min(w - x).min(h - y)
}

/// `sensing_distanceto`: the Euclidean distance between two centres.
pub fn centre_distance(x0: f64, y0: f64, x1: f64, y1: f64) -> f64 {
    let (dx, dy) = (x0 - x1, y0 - y1);
    (dx * dx + dy * dy).sqrt()
}

/// The stage as a search area.
pub fn stage_bounds() -> Rect {
    Rect::new(-STAGE_WIDTH / 2.0, STAGE_WIDTH / 2.0, -STAGE_HEIGHT / 2.0, STAGE_HEIGHT / 2.0)
}

/// Whisker's `PointQueueSet`: points as numbers `(x − left)·width + (y − bottom)` in insertion
/// order (a JavaScript `Set`). Different points can share a number; that is reproduced.
struct PointSet {
    offset_x: i64,
    offset_y: i64,
    width: i64,
    order: Vec<i64>,
    /// Membership of the numbers of points inside the search area (one bit each): the search
    /// asks up to nine times per sampled point, so this must be cheap.
    dense: Vec<u64>,
    /// Numbers outside the dense range (a start point off the area).
    sparse: std::collections::BTreeSet<i64>,
}

impl PointSet {
    fn new(b: &Rect) -> Self {
        let left = b.left.trunc() as i64;
        let right = b.right.trunc() as i64;
        // A zero width would divide by zero when reading points back; one keeps the grid usable.
        let width = (right - left).max(1);
        let offset_y = b.bottom.trunc() as i64;
        // Every point inside `b` has a number below this (x − left ≤ width + 1, y − bottom ≤ height + 1).
        let height = (b.top.trunc() as i64 - offset_y).clamp(0, 1 << 20);
        let span = ((width + 2).min(1 << 20) * width.min(1 << 20) + height + 2) as usize;
        PointSet {
            offset_x: left,
            offset_y,
            width,
            order: Vec::new(),
            dense: vec![0; span.div_ceil(64).min(1 << 16)],
            sparse: std::collections::BTreeSet::new(),
        }
    }

    fn key(&self, p: (i64, i64)) -> i64 {
        (p.0 - self.offset_x) * self.width + (p.1 - self.offset_y)
    }

    fn point(&self, n: i64) -> (i64, i64) {
        (n / self.width + self.offset_x, n % self.width + self.offset_y)
    }

    /// Inserts `p`'s number; false if it was there already.
    fn insert(&mut self, p: (i64, i64)) -> bool {
        let k = self.key(p);
        match usize::try_from(k).ok().filter(|&k| k / 64 < self.dense.len()) {
            Some(k) => {
                let (w, bit) = (k / 64, 1u64 << (k % 64));
                let fresh = self.dense[w] & bit == 0;
                self.dense[w] |= bit;
                fresh
            }
            None => self.sparse.insert(k),
        }
    }
}

/// The result of a colour search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColorSearch {
    /// Distance from the start to the first match, divided by the search area's diagonal;
    /// 1 when the colour was not found.
    pub distance: f64,
    /// Where the colour was found.
    pub found: Option<(i64, i64)>,
}

/// Whisker's `fuzzyFindColor`: walks a grid over `bounds` outwards from `start` (neighbours
/// first, spacing chosen so that about 48 × 36 points are sampled) and returns the distance to
/// the first point where `sample` gives a colour matching `color` (5/5/4 bits, as scratch-render).
pub fn fuzzy_find_color(
    start: (f64, f64),
    bounds: &Rect,
    color: [u8; 3],
    mut sample: impl FnMut(f64, f64) -> [u8; 3],
) -> ColorSearch {
    let mut walk = Walk::new(start, bounds);
    while let Some((x, y)) = walk.next_point() {
        if colors_match(color, sample(x as f64, y as f64)) {
            return walk.found(x, y);
        }
    }
    ColorSearch { distance: 1.0, found: None }
}

/// Whisker's `findColorWithinRadius` (Neatest's colour features): rings of radius 1,
/// 1 + `resolution`, … below `max_radius` around `start`, 36 points per ring at 0°, 10°, …, 350°
/// (mathematical angles, as `ScratchPosition.goInDirection`); the first point on the stage
/// (|x| < 240, |y| < 180) whose sampled colour matches `color` (5/5/4 bits). Returns the point
/// and how many points were sampled (the work).
pub fn radial_find_color(
    start: (f64, f64),
    resolution: f64,
    max_radius: f64,
    color: [u8; 3],
    sample: impl FnMut(f64, f64) -> [u8; 3],
) -> (Option<(f64, f64)>, u64) {
    radial_find_color_in(start, resolution, max_radius, color, None, sample)
}

/// [`radial_find_color`] knowing that `sample` can match `color` only inside `boxes` (all of
/// the stage with `None`; see [`ColorSampler::match_boxes`](super::render::ColorSampler::match_boxes)):
/// points outside every box are not sampled, and rings that meet no box are skipped whole.
/// The same answer as sampling everywhere; the work counts the points sampled.
pub fn radial_find_color_in(
    start: (f64, f64),
    resolution: f64,
    max_radius: f64,
    color: [u8; 3],
    boxes: Option<&[Rect]>,
    sample: impl FnMut(f64, f64) -> [u8; 3],
) -> (Option<(f64, f64)>, u64) {
    let areas: Option<Vec<MatchArea>> =
        boxes.map(|b| b.iter().map(|&rect| MatchArea { rect, cells: None, probe: None }).collect());
    radial_find_color_among(start, resolution, max_radius, color, areas.as_deref(), sample)
}

/// A stage box outside which one drawable cannot make a composite show a searched colour,
/// and, when known, the cells inside it where it can (see
/// [`ColorSampler::match_areas`](super::render::ColorSampler::match_areas)).
#[derive(Debug, Clone)]
pub struct MatchArea<'a> {
    /// The box.
    pub rect: Rect,
    /// Where in the box the drawable can show the colour (`None`: anywhere in it).
    pub cells: Option<Arc<KeyCells>>,
    /// Without cells: the transform and texture the sampler reads the drawable with (no
    /// effects), to look up the one texel a point samples (`None`: may show anywhere).
    pub probe: Option<(Xform, &'a Silhouette)>,
}

impl MatchArea<'_> {
    /// False when the drawable cannot make a composite show colour key `key` at stage point
    /// (x, y) (a point on the stage, inside the box).
    #[inline]
    fn may_show(&self, x: f64, y: f64, key: usize) -> bool {
        if let Some(c) = &self.cells {
            return c.may_show(x, y);
        }
        let Some((xf, sil)) = &self.probe else { return true };
        // The texel `ColorSampler::sample` reads there (`Silhouette::color_at_nearest`), or
        // none (transparent) outside the texture.
        let [u, v] = xf.local(x, y);
        if u < 0.0 || v < 0.0 || u > 1.0 || v > 1.0 || !sil.has_data() {
            return false;
        }
        let (tx, ty) = sil.nearest_texel(u, v);
        sil.may_show_key(tx, ty, key)
    }
}

/// [`radial_find_color_in`] with the drawables' [`MatchArea`]s: a point inside boxes only at
/// cells where their drawables cannot show the colour is not sampled, but counted in the work
/// as [`radial_find_color_in`] counts it (the points inside some box), so that the work of a
/// search does not depend on which cells are known.
pub fn radial_find_color_among(
    start: (f64, f64),
    resolution: f64,
    max_radius: f64,
    color: [u8; 3],
    boxes: Option<&[MatchArea]>,
    mut sample: impl FnMut(f64, f64) -> [u8; 3],
) -> (Option<(f64, f64)>, u64) {
    let mut sampled = 0u64;
    let key = color_key(color);
    if resolution.is_nan() || resolution <= 0.0 || !start.0.is_finite() || !start.1.is_finite() {
        return (None, 0);
    }
    // Each box clipped to the stage (only points on it are accepted), with the range of
    // distances from `start` of its points and its area; empty ones dropped.
    type Area<'c, 'd> = (Rect, f64, f64, &'c MatchArea<'d>);
    let areas: Option<Vec<Area>> = boxes.map(|boxes| {
        boxes
            .iter()
            .map(|a| (a.rect.intersect(&Rect::new(-240.0, 240.0, -180.0, 180.0)), a))
            .filter(|(b, _)| b.left <= b.right && b.bottom <= b.top)
            .map(|(b, area)| {
                let dx = (b.left - start.0).max(start.0 - b.right).max(0.0);
                let dy = (b.bottom - start.1).max(start.1 - b.top).max(0.0);
                let fx = (start.0 - b.left).abs().max((start.0 - b.right).abs());
                let fy = (start.1 - b.bottom).abs().max((start.1 - b.top).abs());
                (b, dx.hypot(dy), fx.hypot(fy), area)
            })
            .collect()
    });
    if areas.as_ref().is_some_and(|a| a.is_empty()) {
        return (None, 0);
    }
    let dirs: [(f64, f64); 36] = std::array::from_fn(|k| {
        let rad = (k as f64 * 10.0) * (std::f64::consts::PI / 180.0);
        (rad.cos(), rad.sin())
    });
    // Beyond the farthest stage corner every point is off the stage: nothing can be found.
    let reach = (start.0.abs() + 240.0).hypot(start.1.abs() + 180.0);
    let mut active: Vec<(Rect, &MatchArea)> = Vec::new();
    let mut radius = 1.0;
    while radius < max_radius && radius <= reach {
        if let Some(areas) = &areas {
            // A ring point's distance from `start` differs from `radius` by rounding only
            // (relative 1e-15): the slack is far wider.
            let slack = 1e-9 * (1.0 + radius + start.0.abs() + start.1.abs());
            active.clear();
            active.extend(areas.iter().filter(|a| a.1 - slack <= radius && radius <= a.2 + slack).map(|a| (a.0, a.3)));
            if active.is_empty() {
                radius += resolution;
                continue;
            }
        }
        for &(c, s) in &dirs {
            let (x, y) = (start.0 + radius * c, start.1 + radius * s);
            // Whisker samples every point but only accepts one on the stage: sampling the
            // others cannot change the answer.
            if x.abs() >= 240.0 || y.abs() >= 180.0 {
                continue;
            }
            // Counted when inside some box; sampled when some drawable whose box holds the
            // point may show the colour there.
            let (counted, may_match) = if areas.is_none() {
                (true, true)
            } else {
                let mut counted = false;
                let mut may_match = false;
                for (b, area) in &active {
                    if x >= b.left && x <= b.right && y >= b.bottom && y <= b.top {
                        counted = true;
                        if area.may_show(x, y, key) {
                            may_match = true;
                            break;
                        }
                    }
                }
                (counted, may_match)
            };
            if counted {
                sampled += 1;
                if may_match && colors_match(color, sample(x, y)) {
                    return (Some((x, y)), sampled);
                }
            }
        }
        radius += resolution;
    }
    (None, sampled)
}

/// Every point [`fuzzy_find_color`] visits from `start` over `bounds`, in its order.
#[cfg(test)]
pub(crate) fn walk_order(start: (f64, f64), bounds: &Rect) -> Vec<(i64, i64)> {
    let mut walk = Walk::new(start, bounds);
    std::iter::from_fn(|| walk.next_point()).collect()
}

/// Grid spacing of [`fuzzy_find_color`] over the whole stage (about 48 × 36 points).
pub(crate) const STAGE_SPACING: i64 = 10;

/// How many grid steps fit on each side of `start` on the stage — `[left, right, down, up]` —
/// when its truncation is on the stage (else `None`).
pub(crate) fn stage_reach(start: (f64, f64)) -> Option<[i64; 4]> {
    let (x, y) = (start.0.trunc(), start.1.trunc());
    let b = stage_bounds();
    if !(b.left <= x && x <= b.right && b.bottom <= y && y <= b.top) {
        return None;
    }
    let (x, y, s) = (x as i64, y as i64, STAGE_SPACING);
    let (l, r, d, u) = (b.left as i64, b.right as i64, b.bottom as i64, b.top as i64);
    Some([(x - l).div_euclid(s), (r - x).div_euclid(s), (y - d).div_euclid(s), (u - y).div_euclid(s)])
}

/// The place of grid step `(a, b)` in Whisker's colour walk over the stage from a start whose
/// [`stage_reach`] has `left` and `down` steps to its left and below, as a key: the walk visits
/// a start's steps in ascending key order.
///
/// Why a key exists: the walk is breadth first over the eight neighbours, queued x-major
/// (−1, 0, +1, each with y −1, 0, +1), over a rectangle of steps, so it visits ring by ring
/// (`k`, the Chebyshev distance), and within a ring in the order of each step's least shortest
/// path from the start (paths compared move by move; each step is first queued by its least
/// neighbour on the ring before). On that path each coordinate independently stays as low as
/// the rectangle and the remaining moves allow (`x_i = max(−i, −left, a − k + i)`), so two
/// steps' paths first part where one of them rises above that floor, and the one that rises
/// first (x before y at the same move), or higher, comes later. The key packs the ring, then
/// both coordinates' rising moves, earliest first, each with the coordinate. Orders depend on
/// `left` and `down`: a walk near the stage's left or bottom edge is not the open walk clipped.
pub(crate) fn walk_key(a: i32, b: i32, left: i32, down: i32) -> u64 {
    // The first move of a k-move path to `v` (floor `−lim`) that is above the floor, k + 1 if
    // none: moves up to `lim` can rise once the rest cannot come down to `v` ((k − v) / 2
    // moves down and back), later ones once `v` is more than the remaining moves above `−lim`.
    fn rise(v: i32, k: i32, lim: i32) -> i32 {
        let early = (k - v) / 2 + 1;
        if early <= lim { early } else { (k - v - lim + 1).max(lim + 1).min(k + 1) }
    }
    // Coordinates and rings up to 1 000 (far beyond the stage's 48): moves up to 2 002 < 2 048,
    // so every field fits its 11 bits.
    const MOVES: i64 = 2047;
    const SHIFT: i64 = 1024;
    let (a, b) = (a.clamp(-1000, 1000), b.clamp(-1000, 1000));
    let k = a.abs().max(b.abs());
    // x rises at odd places of the interleaved path (x1, y1, x2, …), y at even ones.
    let ex = 2 * rise(a, k, left) - 1;
    let ey = 2 * rise(b, k, down);
    let ((e1, v1), (e2, v2)) = if ex < ey { ((ex, a), (ey, b)) } else { ((ey, b), (ex, a)) };
    let field = |v: i64| v as u64 & 0x7ff;
    (k as u64) << 44
        | field(MOVES - i64::from(e1)) << 33
        | field(i64::from(v1) + SHIFT) << 22
        | field(MOVES - i64::from(e2)) << 11
        | field(i64::from(v2) + SHIFT)
}

/// Columns and rows of grid steps a walk from a start on the stage can reach: 480 / 10 + 1
/// and 360 / 10 + 1 (a start `left` steps from the left edge reaches `left` + `right` ≤ 48).
const GRID_COLS: usize = 49;
const GRID_ROWS: usize = 37;
const GRID_CELLS: usize = GRID_COLS * GRID_ROWS;

/// The walk's order from a start `left` and `down` steps from the stage's left and bottom
/// edges, over the largest grid it can have (`right` = 48 − `left`, `up` = 36 − `down`); a
/// start with fewer steps to the right or up walks the same order without the steps beyond.
/// Grid cells are numbered `(a + left) · GRID_ROWS + (b + down)`.
struct StageOrder {
    /// The grid steps `(a, b)` in the walk's order.
    steps: Vec<(i8, i8)>,
    /// The place of each cell in `steps`: a search that knows where the colour can be visits
    /// only those cells, in order, without a sort.
    rank: Vec<u16>,
}

/// [`StageOrder`]s of the process, computed on first use: they depend on `left` and `down`
/// only (49 × 37 of them, 7 KB each), so every search of every run shares them.
static STAGE_ORDERS: [OnceLock<StageOrder>; GRID_CELLS] = [const { OnceLock::new() }; GRID_CELLS];

fn stage_order(left: i32, down: i32) -> &'static StageOrder {
    let (l, d) = (left.clamp(0, GRID_COLS as i32 - 1), down.clamp(0, GRID_ROWS as i32 - 1));
    // In range: `l` and `d` are clamped to the grid.
    STAGE_ORDERS[l as usize * GRID_ROWS + d as usize].get_or_init(|| {
        let (r, u) = (GRID_COLS as i32 - 1 - l, GRID_ROWS as i32 - 1 - d);
        // Steps fit: |a| ≤ 48, |b| ≤ 36.
        let mut keyed: Vec<(u64, i8, i8)> =
            (-l..=r).flat_map(|a| (-d..=u).map(move |b| (walk_key(a, b, l, d), a as i8, b as i8))).collect();
        keyed.sort_unstable();
        let mut rank = vec![0u16; GRID_CELLS];
        for (place, &(_, a, b)) in keyed.iter().enumerate() {
            let cell = (i32::from(a) + l) as usize * GRID_ROWS + (i32::from(b) + d) as usize;
            if let Some(r) = rank.get_mut(cell) {
                *r = place as u16;
            }
        }
        StageOrder { steps: keyed.into_iter().map(|(_, a, b)| (a, b)).collect(), rank }
    })
}

/// Scratch space of [`stage_walk_in`], kept by its callers between searches.
#[derive(Debug, Clone, Default)]
pub(crate) struct WalkScratch {
    /// One bit per place in the walk's order: the step there lies in a box.
    places: Vec<u64>,
}

/// What [`stage_walk_in`] found and did.
pub(crate) struct StageWalk {
    /// The first point where the colour was found.
    pub found: Option<(i32, i32)>,
    /// Points sampled.
    pub visited: u64,
    /// Grid steps marked as inside a box, plus a word per 64 steps of the reach (the marks).
    pub marked: u64,
}

/// The rings of a stage walk (Chebyshev distance in grid steps, [`walk_key`]) whose points
/// may lie less than `below` from the start in [`found_distance`]'s measure: every point of
/// ring `k` is more than `k · spacing − 1` from the start (the start is less than 1 from its
/// truncation in each coordinate), so rings from the first `k` with `(k · spacing − 2) /
/// diameter ≥ below` can only give distances at or above `below` (1 of slack for rounding).
/// `None`: every ring (an infinite or NaN `below`, or one beyond the stage).
pub(crate) fn rings_below(below: f64) -> Option<i32> {
    let b = stage_bounds();
    let diameter = hypot(b.top - b.bottom, b.right - b.left);
    let k = ((below * diameter + 2.0) / STAGE_SPACING as f64).ceil();
    // Rings beyond the grid's widest reach bound nothing (and NaN compares false).
    (k >= 0.0 && k <= GRID_COLS as f64).then_some(k as i32)
}

/// Whisker's colour walk over the stage ([`fuzzy_find_color`]) from a start on it, whose
/// truncation is `origin` and `reach` its [`stage_reach`]: the first point where `hit(x, y)`
/// holds, sampling only the grid steps that may lie in one of `boxes` (every step with
/// `None`) and in the first `rings` rings (every ring with `None`), in the walk's order
/// ([`walk_key`]). The same answer as sampling every point when `hit` can hold only inside
/// the boxes and the walk finds the point in those rings; `None` where it would find it later.
pub(crate) fn stage_walk_in(
    reach: [i64; 4],
    origin: (i32, i32),
    boxes: Option<&[Rect]>,
    rings: Option<i32>,
    scratch: &mut WalkScratch,
    mut hit: impl FnMut(i32, i32) -> bool,
) -> StageWalk {
    let step = STAGE_SPACING as i32;
    // A reach from `stage_reach` fits the grid; clamping keeps any other inside it.
    let (cols, rows) = (GRID_COLS as i64 - 1, GRID_ROWS as i64 - 1);
    let (l, d) = (reach[0].clamp(0, cols), reach[2].clamp(0, rows));
    let [l, r, d, u] = [l, reach[1].clamp(0, cols - l), d, reach[3].clamp(0, rows - d)].map(|v| v as i32);
    // The walk's order depends on the whole reach; the rings only narrow what is sampled.
    let order = stage_order(l, d);
    // The steps sampled: the reach, within the rings wanted (`last` the outermost).
    let last = rings.map_or(i32::MAX, |k| k - 1);
    if last < 0 {
        return StageWalk { found: None, visited: 0, marked: 0 };
    }
    let [wl, wr, wd, wu] = [l, r, d, u].map(|v| v.min(last));
    let point = |(a, b): (i8, i8)| (origin.0 + step * i32::from(a), origin.1 + step * i32::from(b));
    let mut visited = 0u64;
    let mut probe = |p: (i32, i32)| {
        visited += 1;
        hit(p.0, p.1)
    };
    let Some(boxes) = boxes else {
        // Ring by ring: the steps of the rings wanted come first.
        let found = order
            .steps
            .iter()
            .take_while(|&&(a, b)| i32::from(a).abs().max(i32::from(b).abs()) <= last)
            .filter(|&&(a, b)| i32::from(a) <= wr && i32::from(b) <= wu)
            .map(|&s| point(s))
            .find(|&p| probe(p));
        return StageWalk { found, visited, marked: 0 };
    };
    // The places in the walk of the steps inside the boxes, as bits: read in ascending order
    // they are the walk's order. Charged as marks over the start's own reach.
    let places = &mut scratch.places;
    places.clear();
    places.resize(GRID_CELLS.div_ceil(64), 0);
    for g in boxes.iter().filter_map(|b| GridBox::of(b, origin, step)) {
        let (b0, b1) = (g.b.0.max(-wd), g.b.1.min(wu));
        for a in g.a.0.max(-wl)..=g.a.1.min(wr) {
            let col = (a + l) as usize * GRID_ROWS;
            for b in b0..=b1 {
                let Some(&k) = order.rank.get(col + (b + d) as usize) else { continue };
                if let Some(w) = places.get_mut(usize::from(k) / 64) {
                    *w |= 1u64 << (k % 64);
                }
            }
        }
    }
    // The steps marked, counted once at the end: testing each bit before setting it made
    // every mark wait for the word the previous one wrote.
    let marked = ((wl + wr + 1) as u64 * (wd + wu + 1) as u64).div_ceil(64)
        + places.iter().map(|w| u64::from(w.count_ones())).sum::<u64>();
    let mut found = None;
    'words: for (wi, &word) in places.iter().enumerate() {
        let mut w = word;
        while w != 0 {
            let k = wi * 64 + w.trailing_zeros() as usize;
            w &= w - 1;
            if let Some(&s) = order.steps.get(k)
                && probe(point(s))
            {
                found = Some(point(s));
                break 'words;
            }
        }
    }
    StageWalk { found, visited, marked }
}

/// A stage box in a colour walk's grid steps: the steps `(a, b)` whose points
/// `start + spacing · (a, b)` may lie in it (one step wider on each side than the box, so
/// that rounding can only add points, never drop one).
struct GridBox {
    a: (i32, i32),
    b: (i32, i32),
}

impl GridBox {
    /// `None` when no grid point can lie in `r` (empty, or not finite).
    fn of(r: &Rect, (x0, y0): (i32, i32), step: i32) -> Option<GridBox> {
        let (s, x0, y0) = (f64::from(step), f64::from(x0), f64::from(y0));
        // Clamped far beyond the stage's 97 × 73 steps: a wider range means the same.
        let lo = |v: f64| (v.ceil() - 1.0).clamp(-1000.0, 1000.0) as i32;
        let hi = |v: f64| (v.floor() + 1.0).clamp(-1000.0, 1000.0) as i32;
        if !(r.left <= r.right && r.bottom <= r.top) {
            return None;
        }
        let g = GridBox {
            a: (lo((r.left - x0) / s), hi((r.right - x0) / s)),
            b: (lo((r.bottom - y0) / s), hi((r.top - y0) / s)),
        };
        (g.a.0 <= g.a.1 && g.b.0 <= g.b.1).then_some(g)
    }
}

/// The distance [`fuzzy_find_color`] reports for a match at (x, y).
pub(crate) fn found_distance(start: (f64, f64), bounds: &Rect, x: i64, y: i64) -> f64 {
    let diameter = hypot(bounds.top - bounds.bottom, bounds.right - bounds.left);
    hypot(start.0 - x as f64, start.1 - y as f64) / diameter
}

/// The order in which [`fuzzy_find_color`] visits points: breadth first over a grid from the
/// start, which depends on the start and the area only (not on the colour).
struct Walk {
    start: (f64, f64),
    bounds: Rect,
    space: i64,
    points: PointSet,
    next: usize,
}

impl Walk {
    fn new(start: (f64, f64), bounds: &Rect) -> Self {
        let width = (bounds.right - bounds.left).ceil();
        let height = (bounds.top - bounds.bottom).ceil();
        let area = width * height;
        let max_samples = 48.0 * 36.0;
        let space = ((area / max_samples).sqrt().trunc() as i64).max(1);
        // Whisker keeps a visited and a pending set with the same numbers; points enter both
        // together, so one set and the pending order are the same thing.
        let mut points = PointSet::new(bounds);
        let first = (start.0.trunc() as i64, start.1.trunc() as i64);
        points.insert(first);
        points.order.push(points.key(first));
        Walk { start, bounds: *bounds, space, points, next: 0 }
    }

    /// The next point to sample (its unvisited grid neighbours queued), `None` when all are
    /// visited. Bounded: every pending point is a distinct key of a finite grid (plus the start).
    fn next_point(&mut self) -> Option<(i64, i64)> {
        let n = *self.points.order.get(self.next)?;
        self.next += 1;
        let (x, y) = self.points.point(n);
        let b = self.bounds;
        let space = self.space;
        for nx in [x - space, x, x + space] {
            if !(b.left <= nx as f64 && nx as f64 <= b.right) {
                continue;
            }
            for ny in [y - space, y, y + space] {
                if b.bottom <= ny as f64 && ny as f64 <= b.top && self.points.insert((nx, ny)) {
                    let k = self.points.key((nx, ny));
                    self.points.order.push(k);
                }
            }
        }
        Some((x, y))
    }

    fn found(&self, x: i64, y: i64) -> ColorSearch {
        ColorSearch { distance: found_distance(self.start, &self.bounds, x, y), found: Some((x, y)) }
    }
}

/// Whisker's branch distance of a false `touching color`: how far from drawable `me`'s centre
/// the colour is drawn by the other visible drawables (normalised by the stage diagonal; 1 when
/// nowhere on the stage).
pub fn touching_color_distance(scene: &Scene, me: usize, color: [u8; 3]) -> f64 {
    touching_color_distance_counted(scene, me, color).0
}

/// [`touching_color_distance`] and the number of points it sampled (for the work count).
pub fn touching_color_distance_counted(scene: &Scene, me: usize, color: [u8; 3]) -> (f64, u64) {
    let p = scene.drawables[me].placement;
    let mut samples = scene.color_sampler(Some(me));
    if !samples.may_show(color) {
        // What the search below returns when it finds nothing, without its ~1 700 samples.
        return (1.0, 0);
    }
    let mut visited = 0u64;
    let d = fuzzy_find_color((p.x, p.y), &stage_bounds(), color, |x, y| {
        visited += 1;
        samples.sample(x, y)
    })
    .distance;
    (d, visited)
}

/// Whisker's branch distance of a false `color (c) is touching (target)`: 1 when the sprite
/// itself does not show colour `c`, else the distance from where it shows it to `target`.
pub fn color_touching_color_distance(scene: &Scene, me: usize, mine: [u8; 3], target: [u8; 3]) -> f64 {
    let p = scene.drawables[me].placement;
    let bounds = scene.bounds(me);
    let mut own = scene.own_color_sampler(me);
    if !own.may_show(mine) {
        return 1.0;
    }
    let found = fuzzy_find_color((p.x, p.y), &bounds, mine, |x, y| own.sample(x, y));
    let Some((fx, fy)) = found.found else {
        return 1.0;
    };
    let mut samples = scene.color_sampler(Some(me));
    if !samples.may_show(target) {
        return 1.0;
    }
    fuzzy_find_color((fx as f64, fy as f64), &stage_bounds(), target, |x, y| samples.sample(x, y)).distance
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    #[test]
    fn edge_distance_is_the_nearest_edge() {
        assert_eq!(edge_distance(0.0, 0.0), 180.0);
        assert_eq!(edge_distance(230.0, 0.0), 10.0);
        assert_eq!(edge_distance(0.0, -175.0), 5.0);
    }

    /// The walk restricted to boxes finds what the whole walk finds when the colour shows only
    /// inside them: random starts, boxes (some on grid lines, some off the stage) and matching
    /// points.
    #[test]
    fn walks_in_boxes_find_what_the_whole_walk_finds() {
        let mut rng = SplitMix64::new(5);
        let mut scratch = WalkScratch::default();
        let coord = |rng: &mut SplitMix64, half: u64| rng.below(2 * half + 40) as f64 - (half + 20) as f64;
        let (mut found, mut pruned) = (0, 0u64);
        for round in 0..400 {
            let start = (coord(&mut rng, 240) * 0.97, coord(&mut rng, 180) * 0.97);
            let Some(reach) = stage_reach(start) else { continue };
            let origin = (start.0.trunc() as i32, start.1.trunc() as i32);
            let boxes: Vec<Rect> = (0..rng.below(4))
                .map(|_| {
                    let (x, y) = (coord(&mut rng, 240).trunc(), coord(&mut rng, 180).trunc());
                    let (w, h) = (rng.below(60) as f64, rng.below(60) as f64);
                    // Every third box exactly on integers (grid points on its edges).
                    let f = if round % 3 == 0 { 0.0 } else { 0.37 };
                    Rect::new(x + f, x + w + f, y - f, y + h - f)
                })
                .collect();
            // The colour shows at a random subset of the points inside the boxes.
            let keep = rng.next_u64();
            let shows = |x: i32, y: i32| {
                let (fx, fy) = (f64::from(x), f64::from(y));
                boxes.iter().any(|b| fx >= b.left && fx <= b.right && fy >= b.bottom && fy <= b.top)
                    && (x.wrapping_mul(31) ^ y.wrapping_mul(17)) as u64 % 5 == keep % 5
            };
            let whole = fuzzy_find_color(start, &stage_bounds(), [0, 0, 0], |x, y| {
                if shows(x as i32, y as i32) { [0, 0, 0] } else { [255, 255, 255] }
            });
            let walk = stage_walk_in(reach, origin, Some(&boxes), None, &mut scratch, shows);
            assert_eq!(
                walk.found.map(|(x, y)| (i64::from(x), i64::from(y))),
                whole.found,
                "start {start:?} boxes {boxes:?}"
            );
            let all = stage_walk_in(reach, origin, None, None, &mut scratch, shows);
            assert_eq!(all.found, walk.found);
            // Walks within the rings of a bound find the same point when it is nearer than
            // the bound, and nothing else: bounds at, just below and above its distance, and
            // anywhere on the stage's scale.
            let dist = whole.found.map_or(1.0, |(x, y)| found_distance(start, &stage_bounds(), x, y));
            for below in [dist, dist * 0.99, dist * 1.01, dist + 0.02, rng.below(1000) as f64 / 1000.0, 0.001] {
                let rings = rings_below(below);
                for within in [Some(boxes.as_slice()), None] {
                    let cut = stage_walk_in(reach, origin, within, rings, &mut scratch, shows);
                    let want = if dist < below { walk.found } else { cut.found.and(walk.found) };
                    assert_eq!(cut.found, want, "start {start:?} boxes {boxes:?} below {below} ({dist})");
                    assert!(cut.visited <= all.visited);
                }
            }
            found += usize::from(walk.found.is_some());
            pruned += all.visited - walk.visited.min(all.visited);
        }
        assert!(found > 50 && pruned > 10_000, "the test must find colours and skip points: {found}, {pruned}");
    }

    /// Steps sorted by [`walk_key`], and the whole walk of [`stage_walk_in`] (the kept
    /// orders), visit the stage exactly as Whisker's walk does: from every number of steps to
    /// the left and bottom edges (each kept order), with as many or one fewer to the right and
    /// top, and from random starts.
    #[test]
    fn walk_keys_order_the_stage_as_the_walk_does() {
        let mut rng = SplitMix64::new(3);
        let mut starts =
            vec![(0.0, 0.0), (-240.0, -180.0), (240.0, 180.0), (-239.9, 179.99), (-0.5, 0.7), (239.0, -1.0)];
        for l in 0..49 {
            for d in 0..37 {
                // Whole coordinates reach the far edges' last step, fractional ones stop short.
                let fx = if (l + d) % 2 == 0 { 0.0 } else { 0.5 };
                let fy = if l % 3 == 0 { 0.0 } else { 0.5 };
                starts.push((-240.0 + 10.0 * f64::from(l) + fx, -180.0 + 10.0 * f64::from(d) + fy));
            }
        }
        for _ in 0..100 {
            starts.push((rng.below(4800) as f64 / 10.0 - 240.0, rng.below(3600) as f64 / 10.0 - 180.0));
        }
        let mut scratch = WalkScratch::default();
        for start in starts {
            let reach = stage_reach(start).expect("on stage");
            let [l, r, d, u] = reach.map(|v| v as i32);
            let (x0, y0) = (start.0.trunc() as i32, start.1.trunc() as i32);
            let mut keyed: Vec<(u64, i32, i32)> =
                (-l..=r).flat_map(|a| (-d..=u).map(move |b| (walk_key(a, b, l, d), a, b))).collect();
            keyed.sort_unstable();
            let by_key: Vec<(i64, i64)> =
                keyed.iter().map(|&(_, a, b)| (i64::from(x0 + 10 * a), i64::from(y0 + 10 * b))).collect();
            let whisker = walk_order(start, &stage_bounds());
            assert_eq!(by_key, whisker, "start {start:?}");
            let mut walked = Vec::new();
            let walk = stage_walk_in(reach, (x0, y0), None, None, &mut scratch, |x, y| {
                walked.push((i64::from(x), i64::from(y)));
                false
            });
            assert_eq!((walked, walk.visited as usize, walk.found), (whisker, by_key.len(), None), "start {start:?}");
        }
        assert_eq!(stage_reach((240.5, 0.0)), Some([48, 0, 18, 18]));
        assert_eq!(stage_reach((241.0, 0.0)), None);
        assert_eq!(stage_reach((f64::NAN, 0.0)), None);
    }

    #[test]
    fn colour_search_walks_outwards() {
        // A red half-plane x ≥ 100 on the stage, searched from the origin.
        let r = fuzzy_find_color((0.0, 0.0), &stage_bounds(), [255, 0, 0], |x, _| {
            if x >= 100.0 { [255, 0, 0] } else { [255, 255, 255] }
        });
        let (x, _) = r.found.expect("found");
        // The grid spacing on the stage is 10: the first red column reached is x = 100.
        assert_eq!(x, 100);
        assert!(r.distance > 0.15 && r.distance < 0.25, "{}", r.distance);
        let none = fuzzy_find_color((0.0, 0.0), &stage_bounds(), [0, 0, 255], |_, _| [255, 255, 255]);
        assert_eq!(none, ColorSearch { distance: 1.0, found: None });
    }

    /// Random scenes of boxes: solid ones (fully opaque, so their palette is known) in a few
    /// colours, some with soft (half-transparent) edges, some with colour, ghost or shape effects.
    fn random_scene(rng: &mut SplitMix64) -> (Scene, Vec<[u8; 3]>) {
        use crate::geometry::drawable::Placement;
        use crate::geometry::effects::Effects;
        use crate::geometry::render::Drawable;
        use crate::geometry::skin::Skin;
        use std::sync::Arc;
        let colours = [[255, 0, 0], [0, 160, 255], [20, 200, 40], [128, 128, 128], [250, 250, 250]];
        let stage = {
            let c = colours[rng.below(5) as usize];
            let rgba = [c[0], c[1], c[2], 255].repeat(64 * 48);
            Drawable {
                skin: Arc::new(Skin::from_rgba_res2(64, 48, rgba, None)),
                placement: Placement { x: 0.0, y: 0.0, direction: 90.0, scale: [750.0, 750.0] },
                visible: rng.below(3) == 0,
                effects: Effects::default(),
            }
        };
        let mut drawables = vec![stage];
        for _ in 0..1 + rng.below(5) {
            let (w, h) = (2 + 2 * rng.below(40) as u32, 2 + 2 * rng.below(40) as u32);
            let c = colours[rng.below(5) as usize];
            let soft = rng.below(4) == 0;
            let mut rgba = Vec::with_capacity((w * h * 4) as usize);
            for y in 0..h {
                for x in 0..w {
                    let edge = x == 0 || y == 0 || x + 1 == w || y + 1 == h;
                    let a = if soft && edge {
                        128
                    } else if (x + y) % 7 == 0 {
                        0
                    } else {
                        255
                    };
                    rgba.extend_from_slice(&[c[0], c[1], c[2], a]);
                }
            }
            let mut fx = [0.0; 7];
            match rng.below(8) {
                0 => fx[0] = 25.0,
                1 => fx[6] = 50.0,
                2 => fx[1] = 30.0,
                _ => {}
            }
            let xy = |r: &mut SplitMix64, half: u64| r.below(2 * half) as f64 - half as f64;
            drawables.push(Drawable {
                skin: Arc::new(Skin::from_rgba_res2(w, h, rgba, None)),
                placement: Placement::from_target(
                    xy(rng, 250),
                    xy(rng, 190),
                    rng.below(360) as f64,
                    50.0 + rng.below(200) as f64,
                    crate::geometry::drawable::RotationStyle::AllAround,
                ),
                visible: rng.below(6) != 0,
                effects: Effects::from_values(fx),
            });
        }
        let mut probe: Vec<[u8; 3]> = colours.to_vec();
        probe.extend([[255, 255, 255], [0, 0, 0], [131, 60, 200]]);
        (Scene::new(drawables), probe)
    }

    /// The boxes a search is restricted to hold every point whose composite shows the colour:
    /// random scenes with soft (half-transparent) edges stacked over each other and over
    /// opaque drawables, sampled at whole and fractional points, every colour drawn asked for.
    #[test]
    fn match_boxes_hold_every_point_showing_the_colour() {
        let mut rng = SplitMix64::new(11);
        let (mut checked, mut pruned) = (0u64, 0u64);
        for _ in 0..80 {
            let (scene, _) = random_scene(&mut rng);
            let mut samples = scene.color_sampler(None);
            for _ in 0..1500 {
                let f = if rng.below(2) == 0 { 0.0 } else { 0.25 + rng.below(50) as f64 / 100.0 };
                let (x, y) = (rng.below(480) as f64 - 240.0 + f, rng.below(360) as f64 - 180.0 + f);
                let c = samples.sample(x, y);
                let Some(boxes) = samples.match_boxes(c) else { continue };
                let inside = |b: &Rect| x >= b.left && x <= b.right && y >= b.bottom && y <= b.top;
                assert!(boxes.iter().any(inside), "{c:?} shows at ({x}, {y}) outside {boxes:?}");
                checked += 1;
                let area: f64 = boxes.iter().map(|b| (b.right - b.left).max(0.0) * (b.top - b.bottom).max(0.0)).sum();
                pruned += u64::from(area < 480.0 * 360.0 / 2.0);
            }
        }
        assert!(checked > 3_000 && pruned > 1_000, "the test must sample colours and prune: {checked}, {pruned}");
    }

    /// The shortcut (`may_show` false ⇒ no point can match) is sound: wherever it rules a colour
    /// out, no stage pixel composites to it; and the distances equal a full search's.
    #[test]
    fn colour_search_shortcut_matches_the_full_search() {
        let mut rng = SplitMix64::new(7);
        let (mut ruled_out, mut searched) = (0, 0);
        for _ in 0..60 {
            let (scene, probe) = random_scene(&mut rng);
            let me = scene.drawables.len() - 1;
            // Colours actually drawn (effects and blends included) must never be ruled out.
            let mut probe = probe;
            let mut drawn = scene.color_sampler(Some(me));
            for _ in 0..12 {
                probe.push(drawn.sample(rng.below(480) as f64 - 240.0, rng.below(360) as f64 - 180.0));
            }
            for &c in &probe {
                let mut samples = scene.color_sampler(Some(me));
                let p = scene.drawables[me].placement;
                let full = fuzzy_find_color((p.x, p.y), &stage_bounds(), c, |x, y| samples.sample(x, y)).distance;
                assert_eq!(touching_color_distance(&scene, me, c).to_bits(), full.to_bits(), "colour {c:?}");
                if samples.may_show(c) {
                    searched += 1;
                    continue;
                }
                ruled_out += 1;
                for y in (-180..180).step_by(3) {
                    for x in (-240..240).step_by(3) {
                        let got = samples.sample(x as f64 + 0.5, y as f64 + 0.5);
                        assert!(!colors_match(c, got), "{c:?} ruled out but drawn at ({x}, {y}): {got:?}");
                    }
                }
            }
            // Skipping drawables by their boxes changes no sampled colour (points on and off the grid).
            let mut boxed = scene.color_sampler(Some(me));
            let mut plain = scene.color_sampler(Some(me)).without_boxes();
            for y in -182..182 {
                for x in (-243..243).step_by(2) {
                    let (fx, fy) = (x as f64 + (y & 3) as f64 * 0.25, y as f64 + 0.37);
                    assert_eq!(boxed.sample(fx, fy), plain.sample(fx, fy), "at ({fx}, {fy})");
                }
            }
        }
        // Both paths were exercised.
        assert!(ruled_out > 20 && searched > 20, "ruled out {ruled_out}, searched {searched}");
    }
}
