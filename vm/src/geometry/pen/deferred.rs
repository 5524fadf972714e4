//! Deferred pen drawing: lines and stamps are recorded, and rasterised only when something
//! reads the pixels (a colour query's scene, [`PenLayer::take_changes`]). A clear drops what
//! was recorded since nothing read it: most pen projects never ask a colour question, and
//! one that stamps a stage-sized sprite every frame and clears every few seconds spent nearly
//! all its time compositing pixels no one saw (`400224037`).
//!
//! Everything observable stays as eager drawing leaves it: the pixels a read sees (the
//! records are replayed in order), and what a clear changes (whether anything was inked, and
//! the boxes of it, which the composites of colour queries forget). For a dropped stamp only
//! the part of its ink box that reaches past what is already inked is searched for, pixel by
//! pixel from the box's edges inwards. The work count charges what is done: recording,
//! replaying, and that search.

use super::{Line, PenLayer, cost, row_y, stamp_columns};
use crate::geometry::render::{Drawable, OwnColors, Scene};

/// Records kept at most; the next one replays them all (bounds a layer's memory and what a
/// clone of it copies when nothing reads or clears it).
pub(crate) const MAX_PENDING: usize = 2048;

/// A drawing operation recorded and not yet rasterised.
#[derive(Clone)]
pub(super) enum Pending {
    /// `penLine` / `penPoint`.
    Line(Line),
    /// `penStamp`.
    Stamp(Box<Stamp>),
}

/// A stamp: the drawable as it was when stamped, and the pixels its box covers (half-open
/// ranges inside the stage, never empty).
#[derive(Clone)]
pub(super) struct Stamp {
    pub(super) drawable: Drawable,
    pub(super) cols: (u32, u32),
    pub(super) rows: (u32, u32),
}

impl Stamp {
    /// A scene of the stamped drawable alone: its colours depend on nothing else.
    pub(super) fn scene(&self) -> Scene {
        Scene::new(vec![self.drawable.clone()])
    }
}

impl PenLayer {
    /// Records `op` (replaying everything once too many are waiting).
    pub(super) fn defer(&mut self, op: Pending) {
        self.work += cost::PEN_DEFER;
        self.pending.push(op);
        if self.pending.len() >= MAX_PENDING {
            self.flush();
        }
    }

    /// Rasterises what was recorded, oldest first.
    pub(super) fn flush(&mut self) {
        self.drain_pending(|me, op| match op {
            Pending::Line(l) => me.raster_line(l),
            Pending::Stamp(s) => me.raster_stamp(s),
        });
    }

    /// Before a clear: drops the records, leaving `dirty` and the ink boxes as drawing them
    /// would have (the pixels they would have drawn are erased anyway).
    pub(super) fn settle_pending(&mut self) {
        self.drain_pending(|me, op| match op {
            Pending::Line(l) => me.ink_line(l),
            Pending::Stamp(s) => me.settle_stamp(s),
        });
    }

    /// Hands every record, oldest first, to `each`, and forgets them (keeping the list's
    /// memory for the next ones).
    fn drain_pending(&mut self, mut each: impl FnMut(&mut Self, &Pending)) {
        if self.pending.is_empty() {
            return;
        }
        let mut ops = std::mem::take(&mut self.pending);
        for op in &ops {
            each(self, op);
        }
        ops.clear();
        self.pending = ops;
    }

    /// Grows the ink boxes by the pixels stamp `st` would ink outside them, looking only there.
    fn settle_stamp(&mut self, st: &Stamp) {
        // Inside the inked boxes already (a shrinking or repeated stamp): nothing to look for.
        let (c0, c1, r0, r1) =
            (i64::from(st.cols.0), i64::from(st.cols.1) - 1, i64::from(st.rows.0), i64::from(st.rows.1) - 1);
        if self.ink.contains(c0, c1, r0, r1) {
            return;
        }
        let scene = st.scene();
        let mut own = scene.own_colors_with(0, std::mem::take(&mut self.memo));
        let mut visited = 0u64;
        for row in st.rows.0..st.rows.1 {
            let y = row_y(row);
            // The columns the raster would sample.
            let Some((first, last)) = stamp_columns(&own, y, st.cols) else {
                continue;
            };
            let r = i64::from(row);
            let inked = self.ink.row_span(r);
            match inked {
                // A row outside the box: its leftmost and rightmost ink, if any.
                None => {
                    let Some(l) = first_inked(&mut own, y, first..=last, &mut visited) else { continue };
                    let right = first_inked(&mut own, y, (l..=last).rev(), &mut visited).unwrap_or(l);
                    self.inked(i64::from(l), i64::from(right), r);
                }
                // A row inside it: only ink left or right of it can grow it.
                Some((b0, b1)) => {
                    let left_end = (b0 - 1).min(i64::from(last));
                    if i64::from(first) <= left_end {
                        let cols = first..=left_end as u32;
                        if let Some(l) = first_inked(&mut own, y, cols, &mut visited) {
                            self.inked(i64::from(l), i64::from(l), r);
                        }
                    }
                    let right_end = (b1 + 1).max(i64::from(first));
                    if right_end <= i64::from(last) {
                        let cols = (right_end as u32..=last).rev();
                        if let Some(h) = first_inked(&mut own, y, cols, &mut visited) {
                            self.inked(i64::from(h), i64::from(h), r);
                        }
                    }
                }
            }
        }
        self.memo = own.into_memo();
        self.work += cost::STAMP_PIXEL * visited + cost::ROW_VISIT * u64::from(st.rows.1 - st.rows.0);
    }
}

/// The first of `cols` (on the row at stage `y`) where the stamp has ink, counting the pixels
/// looked at.
fn first_inked(own: &mut OwnColors<'_>, y: f64, cols: impl Iterator<Item = u32>, visited: &mut u64) -> Option<u32> {
    let half_w = super::PEN_WIDTH as f64 / 2.0;
    for col in cols {
        *visited += 1;
        if own.at(col as f64 - (half_w - 0.5), y)[3] != 0 {
            return Some(col);
        }
    }
    None
}
