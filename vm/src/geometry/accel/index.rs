//! What the accelerated queries need to know about the whole scene, kept up to date one
//! drawable change at a time, so that a query costs what the drawables near it cost rather
//! than what the whole scene costs (hundreds of clones each asking every frame would
//! otherwise make a frame quadratic):
//! - a uniform grid over the stage of the visible drawables' boxes (candidates near a box);
//! - the visible drawables per skin with the MIP levels they ask for (a query's level for a
//!   skin is the largest any visible drawable of it asks for, as scratch-render's
//!   `updateCPURenderAttributes` leaves it);
//! - counts of visible drawables with non-finite transforms and with colour effects.

use std::sync::Arc;

use super::super::skin::Skin;
use crate::geometry::Rect;

/// Grid cell side in stage units.
const CELL: i32 = 32;
/// Cells across and down the stage (−240..=240 × −180..=180).
const CX: usize = (480 / CELL + 1) as usize;
const CY: usize = (360 / CELL + 1) as usize;

/// Cell range `[x0, x1] × [y0, y1]` of a box clamped to the stage; `None` when the box misses
/// the stage (or is not finite): such a drawable is never near a box on the stage.
fn cells_of(r: &Rect) -> Option<[usize; 4]> {
    let ok = [r.left, r.right, r.bottom, r.top].iter().all(|v| !v.is_nan());
    if !ok || r.right < -240.0 || r.left > 240.0 || r.top < -180.0 || r.bottom > 180.0 {
        return None;
    }
    let cx = |v: f64| (((v.clamp(-240.0, 240.0) as i32) + 240) / CELL) as usize;
    let cy = |v: f64| (((v.clamp(-180.0, 180.0) as i32) + 180) / CELL) as usize;
    Some([cx(r.left), cx(r.right), cy(r.bottom), cy(r.top)])
}

/// The visible drawables of one skin.
#[derive(Clone)]
struct Group {
    skin: Arc<Skin>,
    /// `(level, how many ask for it)`, ascending by level.
    levels: Vec<(i32, u32)>,
}

impl Group {
    fn add(&mut self, level: i32) {
        match self.levels.binary_search_by_key(&level, |&(l, _)| l) {
            Ok(i) => self.levels[i].1 += 1,
            Err(i) => self.levels.insert(i, (level, 1)),
        }
    }

    fn remove(&mut self, level: i32) {
        if let Ok(i) = self.levels.binary_search_by_key(&level, |&(l, _)| l) {
            self.levels[i].1 -= 1;
            if self.levels[i].1 == 0 {
                self.levels.remove(i);
            }
        }
    }

    /// The largest level asked for, leaving out one request at `without` if given.
    fn max(&self, without: Option<i32>) -> Option<i32> {
        let mut it = self.levels.iter().rev();
        let &(top, n) = it.next()?;
        if without == Some(top) && n == 1 { it.next().map(|&(l, _)| l) } else { Some(top) }
    }
}

/// How one drawable is entered in the index (to take it out again exactly).
#[derive(Clone)]
pub(crate) struct Entry {
    cells: Option<[usize; 4]>,
    /// Its skin (the key of its group).
    skin: *const Skin,
    level: i32,
    nonfinite: bool,
    colour_effects: bool,
}

/// The scene index; see the module documentation.
///
/// The grid names each visible drawable by a handle that stays while the drawable does, not
/// by its position: a layer change or a new clone shifts the positions of every drawable
/// above it, and renumbering a short handle table is far cheaper than every grid cell.
#[derive(Clone, Default)]
pub(crate) struct SceneIndex {
    /// Per grid cell, the handles of the visible drawables whose box meets it.
    cells: Vec<Vec<u32>>,
    groups: Vec<Group>,
    /// Per handle, its entry (`None`: a free handle).
    entries: Vec<Option<Entry>>,
    /// Per handle, the position of its drawable.
    pos_of: Vec<u32>,
    /// Per position, the handle of its drawable, if it is visible.
    handle_at: Vec<Option<u32>>,
    /// Handles no drawable uses.
    free: Vec<u32>,
    nonfinite: usize,
    colour_effects: usize,
    /// Per handle, the last query that listed it.
    stamps: Vec<u32>,
    clock: u32,
    /// The lengths a position-numbered index would have (entries up to the last position
    /// entered or the scene's length, stamps up to the last position listed): what
    /// [`SceneIndex::heap_words`] counts, so that a clone's charged work is as before.
    entry_span: usize,
    stamp_span: usize,
    /// Scratch list of [`SceneIndex::permute`] (not copied with the index).
    moved: Scratch,
}

/// Scratch space: a copy starts empty.
#[derive(Default)]
struct Scratch(Vec<Option<u32>>);

impl Clone for Scratch {
    fn clone(&self) -> Self {
        Scratch::default()
    }
}

/// What the index needs of a visible drawable.
pub(crate) struct Visible<'a> {
    /// Its candidate box (rough box snapped out to integers).
    pub snapped: &'a Rect,
    /// Its skin.
    pub skin: &'a Arc<Skin>,
    /// The MIP level it asks for.
    pub level: i32,
    /// Its transform is not finite.
    pub nonfinite: bool,
    /// Colour, brightness or ghost effect on.
    pub colour_effects: bool,
}

impl SceneIndex {
    /// Roughly the 8-byte words this index keeps (what a clone copies).
    pub(crate) fn heap_words(&self) -> u64 {
        let cells: u64 = self.cells.iter().map(|c| 3 + c.len() as u64 / 2).sum();
        cells + self.entry_span as u64 * 6 + self.groups.len() as u64 * 8 + self.stamp_span as u64 / 2
    }

    /// The handle of drawable `pos`, if it is entered.
    fn handle(&self, pos: usize) -> Option<u32> {
        self.handle_at.get(pos).copied().flatten()
    }

    /// Takes entry `h` out of its groups and counts, and out of the grid `with_cells`.
    fn forget(&mut self, h: u32, e: &Entry, with_cells: bool) {
        if let (true, Some([x0, x1, y0, y1])) = (with_cells, e.cells) {
            for y in y0..=y1 {
                for x in x0..=x1 {
                    let c = &mut self.cells[y * CX + x];
                    if let Some(i) = c.iter().position(|&p| p == h) {
                        c.swap_remove(i);
                    }
                }
            }
        }
        if let Some(i) = self.groups.iter().position(|g| Arc::as_ptr(&g.skin) == e.skin) {
            self.groups[i].remove(e.level);
            if self.groups[i].levels.is_empty() {
                // Drop the skin: the pen layer gets a new one at every change.
                self.groups.swap_remove(i);
            }
        }
        self.nonfinite -= usize::from(e.nonfinite);
        self.colour_effects -= usize::from(e.colour_effects);
    }

    /// Takes drawable `pos` out (it is invisible, or gone).
    pub(crate) fn remove(&mut self, pos: usize) {
        let Some(h) = self.handle_at.get_mut(pos).and_then(Option::take) else { return };
        if let Some(e) = self.entries.get_mut(h as usize).and_then(Option::take) {
            self.forget(h, &e, true);
        }
        self.free.push(h);
    }

    /// Enters visible drawable `pos` (after taking out what was there).
    pub(crate) fn insert(&mut self, pos: usize, v: Visible<'_>) {
        let cells = cells_of(v.snapped);
        if self.cells.is_empty() {
            self.cells = vec![Vec::new(); CX * CY];
        }
        let h = match self.handle(pos) {
            Some(h) => h,
            None => {
                let h = self.free.pop().unwrap_or(self.entries.len() as u32);
                if h as usize >= self.entries.len() {
                    self.entries.resize(h as usize + 1, None);
                    self.pos_of.resize(h as usize + 1, 0);
                }
                if pos >= self.handle_at.len() {
                    self.handle_at.resize(pos + 1, None);
                }
                self.handle_at[pos] = Some(h);
                self.pos_of[h as usize] = pos as u32;
                h
            }
        };
        // Same cells (a drawable that changed without moving, such as the pen layer): keep
        // them, take out the rest.
        let old = self.entries.get_mut(h as usize).and_then(Option::take);
        let kept = old.as_ref().is_some_and(|e| e.cells == cells);
        if let Some(e) = old {
            self.forget(h, &e, !kept);
        }
        if let (false, Some([x0, x1, y0, y1])) = (kept, cells) {
            for y in y0..=y1 {
                for x in x0..=x1 {
                    self.cells[y * CX + x].push(h);
                }
            }
        }
        let key = Arc::as_ptr(v.skin);
        match self.groups.iter_mut().find(|g| Arc::as_ptr(&g.skin) == key) {
            Some(g) => g.add(v.level),
            None => self.groups.push(Group { skin: v.skin.clone(), levels: vec![(v.level, 1)] }),
        }
        self.nonfinite += usize::from(v.nonfinite);
        self.colour_effects += usize::from(v.colour_effects);
        self.entry_span = self.entry_span.max(pos + 1);
        self.entries[h as usize] =
            Some(Entry { cells, skin: key, level: v.level, nonfinite: v.nonfinite, colour_effects: v.colour_effects });
    }

    /// Renumbers the drawables after the scene was rearranged: the drawable at old position
    /// `lo + i` is now at `to[i]`; those before `lo` kept their places, as did those after
    /// the range `to` covers when the scene kept its length `len`. Drawables without a new
    /// position must have been removed (one that was not is taken out now). Nothing else
    /// changes (same boxes, skins and levels), so only the handle table moves.
    pub(crate) fn permute(&mut self, lo: usize, to: &[Option<usize>], len: usize) {
        let hi = lo + to.len();
        if self.handle_at.len() < hi {
            self.handle_at.resize(hi, None);
        }
        let mut old = std::mem::take(&mut self.moved.0);
        old.clear();
        old.extend(self.handle_at[lo..hi].iter_mut().map(Option::take));
        self.handle_at.resize(len.max(hi), None);
        self.place(&old, to, lo..len);
        self.handle_at.truncate(len);
        self.moved.0 = old;
        self.entry_span = len;
    }

    /// Puts handle `old[i]` at place `to[i]` (within `places`, now free); a handle without a
    /// place there leaves the index.
    fn place(&mut self, old: &[Option<u32>], to: &[Option<usize>], places: std::ops::Range<usize>) {
        for (i, h) in old.iter().enumerate() {
            let Some(h) = *h else { continue };
            match to.get(i).copied().flatten().filter(|n| places.contains(n)) {
                Some(n) => {
                    self.handle_at[n] = Some(h);
                    self.pos_of[h as usize] = n as u32;
                }
                None => {
                    if let Some(e) = self.entries.get_mut(h as usize).and_then(Option::take) {
                        self.forget(h, &e, true);
                    }
                    self.free.push(h);
                }
            }
        }
    }

    /// Visible drawables whose box may meet `r` (each once, in no particular order; the
    /// caller tests the boxes). Off-stage parts of `r` find nothing: every query box is on
    /// the stage.
    pub(crate) fn near(&mut self, r: &Rect, out: &mut Vec<usize>) {
        out.clear();
        let Some([x0, x1, y0, y1]) = cells_of(r) else { return };
        if self.cells.is_empty() {
            // Nothing was ever entered (no drawable visible yet): nothing is near.
            return;
        }
        self.clock = self.clock.wrapping_add(1);
        if self.clock == 0 {
            self.stamps.iter_mut().for_each(|s| *s = 0);
            self.clock = 1;
        }
        if self.stamps.len() < self.entries.len() {
            self.stamps.resize(self.entries.len(), 0);
        }
        for y in y0..=y1 {
            for x in x0..=x1 {
                for &h in &self.cells[y * CX + x] {
                    let h = h as usize;
                    if self.stamps[h] != self.clock {
                        self.stamps[h] = self.clock;
                        let p = self.pos_of[h] as usize;
                        self.stamp_span = self.stamp_span.max(p + 1);
                        out.push(p);
                    }
                }
            }
        }
    }

    /// The level a query uses for `skin`: the largest any visible drawable of it asks for,
    /// leaving out the request of visible drawable `without` (its own level) if given.
    /// `None` when no other visible drawable has this skin.
    pub(crate) fn level(&self, skin: &Arc<Skin>, without: Option<i32>) -> Option<i32> {
        let key = Arc::as_ptr(skin);
        self.groups.iter().find(|g| Arc::as_ptr(&g.skin) == key).and_then(|g| g.max(without))
    }

    /// Visible drawables with a non-finite transform.
    pub(crate) fn nonfinite(&self) -> usize {
        self.nonfinite
    }

    /// Visible drawables with a colour, brightness or ghost effect.
    pub(crate) fn colour_effects(&self) -> usize {
        self.colour_effects
    }

    /// The entry of drawable `pos`, if it is visible.
    pub(crate) fn entry(&self, pos: usize) -> Option<&Entry> {
        self.entries.get(self.handle(pos)? as usize).and_then(Option::as_ref)
    }

    /// Skins with visible drawables, each with the largest level asked for.
    pub(crate) fn skins(&self) -> impl Iterator<Item = (&Arc<Skin>, Option<i32>)> {
        self.groups.iter().map(|g| (&g.skin, g.max(None)))
    }
}

impl Entry {
    /// Whether this drawable has a non-finite transform.
    pub(crate) fn nonfinite(&self) -> bool {
        self.nonfinite
    }

    /// Whether this drawable has a colour, brightness or ghost effect.
    pub(crate) fn colour_effects(&self) -> bool {
        self.colour_effects
    }
}
