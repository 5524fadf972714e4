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
#[derive(Clone, Default)]
pub(crate) struct SceneIndex {
    cells: Vec<Vec<u32>>,
    groups: Vec<Group>,
    entries: Vec<Option<Entry>>,
    nonfinite: usize,
    colour_effects: usize,
    stamps: Vec<u32>,
    clock: u32,
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
        cells + self.entries.len() as u64 * 6 + self.groups.len() as u64 * 8 + self.stamps.len() as u64 / 2
    }

    /// Takes drawable `pos` out of the index (if it is in).
    pub(crate) fn remove(&mut self, pos: usize) {
        let Some(e) = self.entries.get_mut(pos).and_then(Option::take) else { return };
        if let Some([x0, x1, y0, y1]) = e.cells {
            for y in y0..=y1 {
                for x in x0..=x1 {
                    let c = &mut self.cells[y * CX + x];
                    if let Some(i) = c.iter().position(|&p| p as usize == pos) {
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

    /// Enters visible drawable `pos` (after taking out what was there).
    pub(crate) fn insert(&mut self, pos: usize, v: Visible<'_>) {
        let cells = cells_of(v.snapped);
        // Same cells (a drawable that changed without moving, such as the pen layer): keep
        // them, take out the rest.
        let kept = self.entries.get_mut(pos).and_then(|e| e.as_mut()).filter(|e| e.cells == cells).is_some();
        if kept && let Some(e) = self.entries.get_mut(pos).and_then(|e| e.as_mut()) {
            e.cells = None;
        }
        self.remove(pos);
        if self.cells.is_empty() {
            self.cells = vec![Vec::new(); CX * CY];
        }
        if let (false, Some([x0, x1, y0, y1])) = (kept, cells) {
            for y in y0..=y1 {
                for x in x0..=x1 {
                    self.cells[y * CX + x].push(pos as u32);
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
        if pos >= self.entries.len() {
            self.entries.resize(pos + 1, None);
        }
        self.entries[pos] =
            Some(Entry { cells, skin: key, level: v.level, nonfinite: v.nonfinite, colour_effects: v.colour_effects });
    }

    /// Renumbers the drawables after the scene was rearranged: the drawable at old position
    /// `o` is now at `to[o]`; drawables without a new position must have been removed. `len`
    /// is the new scene's length. Nothing else changes (same boxes, skins and levels).
    pub(crate) fn permute(&mut self, to: &[Option<usize>], len: usize) {
        for cell in &mut self.cells {
            for p in cell.iter_mut() {
                if let Some(&Some(n)) = to.get(*p as usize) {
                    *p = n as u32;
                }
            }
        }
        let mut entries = vec![None; len.max(self.entries.len())];
        for (o, e) in self.entries.iter_mut().enumerate() {
            if let (Some(&Some(n)), Some(e)) = (to.get(o), e.take())
                && let Some(slot) = entries.get_mut(n)
            {
                *slot = Some(e);
            }
        }
        entries.truncate(len);
        self.entries = entries;
    }

    /// Visible drawables whose box may meet `r` (each once, in no particular order; the
    /// caller tests the boxes). Off-stage parts of `r` find nothing: every query box is on
    /// the stage.
    pub(crate) fn near(&mut self, r: &Rect, out: &mut Vec<usize>) {
        out.clear();
        let Some([x0, x1, y0, y1]) = cells_of(r) else { return };
        self.clock = self.clock.wrapping_add(1);
        if self.clock == 0 {
            self.stamps.iter_mut().for_each(|s| *s = 0);
            self.clock = 1;
        }
        for y in y0..=y1 {
            for x in x0..=x1 {
                for &p in &self.cells[y * CX + x] {
                    let p = p as usize;
                    if p >= self.stamps.len() {
                        self.stamps.resize(p + 1, 0);
                    }
                    if self.stamps[p] != self.clock {
                        self.stamps[p] = self.clock;
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
        self.entries.get(pos).and_then(Option::as_ref)
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
