//! `color (c1) is touching (c2)?`: the stage pixels of the asking drawable whose own colour
//! matches `c1`, row by row, kept between queries. A sprite that asks every frame while it
//! stands still (the common case: a `forever` loop of colour checks) would otherwise sample
//! every pixel of its box again each time. A kept row is charged the work it took to find,
//! so a query's work is the same whether its rows were kept or not.

use super::super::cost;
use super::super::effects::{Effects, bit};
use super::super::render::mask_matches;
use super::rows::{self, EMPTY, ROWS, Row};
use super::sampler::Sampler;

/// How many (mask, window, …) combinations a drawable keeps rows for: a script that checks
/// a few colour pairs in turn keeps all of them.
const KEPT: usize = 4;

/// Everything a mask row depends on besides the stage row. `ver` names the drawable's skin,
/// transform and sampling (its touching rows' key); effects are compared bit for bit (colour
/// effects change the colours without a new `ver`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Key {
    /// The drawable's version (its touching rows' key).
    pub(super) ver: u64,
    /// The MIP level it is sampled at.
    pub(super) level: i32,
    /// Nearest-neighbour sampling.
    pub(super) nearest: bool,
    /// Its effects (the colour effects apply to its colours).
    pub(super) effects: Effects,
    /// The colour its pixels must match.
    pub(super) mask: [u8; 3],
    /// The window of stage columns.
    pub(super) lo: i32,
    /// Its last column.
    pub(super) hi: i32,
}

impl Key {
    fn same(&self, o: &Key) -> bool {
        self.ver == o.ver
            && self.level == o.level
            && self.nearest == o.nearest
            && self.effects.same_bits(&o.effects)
            && self.mask == o.mask
            && (self.lo, self.hi) == (o.lo, o.hi)
    }
}

#[derive(Clone)]
struct Entry {
    key: Key,
    /// Per stage row: the row and the work it was charged, once found.
    rows: Vec<Option<(Row, u64)>>,
}

/// A drawable's kept mask rows (empty until it asks `color is touching color`).
#[derive(Clone, Default)]
pub(super) struct MaskRows {
    entries: Vec<Entry>,
    /// The entry to replace next when all [`KEPT`] are in use.
    next: usize,
}

impl MaskRows {
    /// Rows kept over all entries (tests).
    #[cfg(test)]
    pub(super) fn kept_rows(&self) -> usize {
        self.entries.iter().map(|e| e.rows.iter().flatten().count()).sum()
    }

    /// The entry for `key`, made (or taken over, oldest first) when there is none.
    fn entry(&mut self, key: Key) -> &mut Entry {
        if let Some(i) = self.entries.iter().position(|e| e.key.same(&key)) {
            return &mut self.entries[i];
        }
        let fresh = Entry { key, rows: vec![None; ROWS] };
        if self.entries.len() < KEPT {
            self.entries.push(fresh);
            let last = self.entries.len() - 1;
            return &mut self.entries[last];
        }
        let i = self.next % KEPT;
        self.next = (i + 1) % KEPT;
        self.entries[i] = fresh;
        &mut self.entries[i]
    }
}

/// A query's view of one drawable's kept mask rows.
pub(super) struct MaskQuery<'a> {
    entry: &'a mut Entry,
}

impl<'a> MaskQuery<'a> {
    /// The rows `key` names.
    pub(super) fn new(kept: &'a mut MaskRows, key: Key) -> Self {
        MaskQuery { entry: kept.entry(key) }
    }

    /// Stage row `y` (on the stage): the columns in the window where the drawable's colour,
    /// after its colour effects (not ghost), matches the mask; and the work it is charged.
    pub(super) fn row(&mut self, sampler: &Sampler<'_>, y: i32) -> (Row, u64) {
        let r = rows::row_index(y);
        if let Some(kept) = self.entry.rows.get(r).copied().flatten() {
            return kept;
        }
        let key = &self.entry.key;
        let mut row = EMPTY;
        let mut work = cost::ROW;
        if let Some((a, b)) = sampler.span(y, key.lo, key.hi) {
            for x in a..=b {
                let mut c = sampler.color(x, y);
                if key.effects.enabled != 0 {
                    c = key.effects.transform_color(c, !bit::GHOST);
                }
                if mask_matches(c, key.mask) {
                    rows::set(&mut row, x);
                }
            }
            work += cost::COLOR_PIXEL * (b - a + 1) as u64;
        }
        if let Some(slot) = self.entry.rows.get_mut(r) {
            *slot = Some((row, work));
        }
        (row, work)
    }
}
