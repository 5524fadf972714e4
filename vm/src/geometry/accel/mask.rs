//! `color (c1) is touching (c2)?`: the stage pixels of the asking drawable whose own colour
//! matches `c1`, row by row, kept between queries. A sprite that asks every frame while it
//! stands still (the common case: a `forever` loop of colour checks) would otherwise sample
//! every pixel of its box again each time. A kept row is charged as a cached row read
//! ([`cost::ROW_VISIT`]), as the touching rows are: the work meter follows what the query
//! costs (engine `+sem56`).

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
    /// The window of stage columns, first and last.
    pub(super) lo: i32,
    pub(super) hi: i32,
    /// The stage rows the query may look at, lowest and highest.
    pub(super) bottom: i32,
    pub(super) top: i32,
}

impl Key {
    fn same(&self, o: &Key) -> bool {
        self.ver == o.ver
            && self.level == o.level
            && self.nearest == o.nearest
            && self.effects.same_bits(&o.effects)
            && self.mask == o.mask
            && (self.lo, self.hi, self.bottom, self.top) == (o.lo, o.hi, o.bottom, o.top)
    }
}

#[derive(Clone)]
struct Entry {
    key: Key,
    /// Per row from `key.bottom` up: the row, once found.
    rows: Vec<Option<Row>>,
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

    /// Roughly the 8-byte words kept (what a clone of the VM copies).
    pub(super) fn heap_words(&self) -> u64 {
        let row = (std::mem::size_of::<Option<Row>>() as u64).div_ceil(8);
        self.entries.iter().map(|e| 8 + e.rows.len() as u64 * row).sum()
    }

    /// The entry for `key`, made (or taken over, oldest first) when there is none.
    fn entry(&mut self, key: Key) -> &mut Entry {
        if let Some(i) = self.entries.iter().position(|e| e.key.same(&key)) {
            return &mut self.entries[i];
        }
        // The rows of the query's box, at most the stage's.
        let n = usize::try_from(i64::from(key.top) - i64::from(key.bottom) + 1).unwrap_or(0).min(ROWS);
        let fresh = Entry { key, rows: vec![None; n] };
        let i = if self.entries.len() < KEPT {
            self.entries.push(fresh);
            self.entries.len() - 1
        } else {
            let i = self.next % KEPT;
            self.next = (i + 1) % KEPT;
            self.entries[i] = fresh;
            i
        };
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

    /// Stage row `y`: the columns in the window where the drawable's colour, after its colour
    /// effects (not ghost), matches the mask; and the work it is charged.
    pub(super) fn row(&mut self, sampler: &Sampler<'_>, y: i32) -> (Row, u64) {
        let slot = usize::try_from(i64::from(y) - i64::from(self.entry.key.bottom)).ok();
        if let Some(kept) = slot.and_then(|s| self.entry.rows.get(s).copied().flatten()) {
            return (kept, cost::ROW_VISIT);
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
        if let Some(s) = slot.and_then(|s| self.entry.rows.get_mut(s)) {
            *s = Some(row);
        }
        (row, work)
    }
}
